"""py-misbehave: a filter that misbehaves on purpose, so GRW's tests can
check that the limits hold for Python plugins too.

Configuration ``{"do": ...}``:

- ``"pass"`` (the default): ``decide`` passes every event;
- ``"loop"``: ``decide`` never returns;
- ``"hog"``: ``decide`` allocates 1 MiB blocks, filled and all kept, until
  the memory limit stops it.
"""

import grw_sdk
from grw_sdk import Config, Event

#: Every block allocated, so nothing is freed between allocations or calls.
HOARD: list = []


class Misbehave:
    """Does what its configuration says."""

    def __init__(self, config: Config):
        self.action = config.str("do", "pass", choices=("pass", "loop", "hog"))

    def decide(self, event: Event) -> bool:
        if self.action == "loop":
            spins = 0
            while True:
                spins += 1
        if self.action == "hog":
            while True:
                # Filled rather than zeroed, so every page is really written.
                HOARD.append(b"\xa5" * (1 << 20))
        return True


Filter = grw_sdk.export_filter(Misbehave)
