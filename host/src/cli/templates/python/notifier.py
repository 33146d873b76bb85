"""{{name}}: a GRW notifier. It posts ``{"type", "kind", "namespace",
"name"}`` for each event to the URL in its configuration,
``{"url": "https://example.com/hook"}``. The URL's host must be in the
manifest's ``allowedHosts`` and in GRW's ``pluginAllowedHosts``.
"""

import grw_sdk
from grw_sdk import Config, Event, Http, Interest


class Plugin:
    """Posts a small JSON document per event."""

    interest = Interest.all()

    def __init__(self, config: Config):
        self.url = config.str("url", required=True)
        if not self.url.startswith(("http://", "https://")):
            raise grw_sdk.ConfigError(f"config key `url`: expected an http:// or https:// URL, got {self.url!r}")

    def deliver(self, event: Event, http: Http) -> None:
        # 2xx is delivered; 408, 429, 5xx and failures to connect raise
        # Retry; any other answer raises GiveUp.
        http.post_json(
            self.url,
            {"type": str(event.type), "kind": event.kind, "namespace": event.namespace, "name": event.name},
        )


Notifier = grw_sdk.export_notifier(Plugin)
