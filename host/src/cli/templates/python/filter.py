"""{{name}}: a GRW filter. It passes events of objects that carry the label
named in its configuration, ``{"label": "team"}``. Change ``decide`` to
decide otherwise.
"""

import grw_sdk
from grw_sdk import Config, Event, Interest


class Plugin:
    """Passes objects that carry the configured label."""

    interest = Interest.all()

    def __init__(self, config: Config):
        self.label = config.str("label", required=True)

    def decide(self, event: Event) -> bool:
        return event.label(self.label) is not None


Filter = grw_sdk.export_filter(Plugin)
