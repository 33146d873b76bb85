"""py-restart-filter: passes Pod events whose containers restarted at least
``minRestarts`` times in total (``status.containerStatuses`` and
``status.initContainerStatuses``).

Configuration: ``{"minRestarts": 3}`` (an integer >= 0; default 1).

It asks GRW for the two status lists only, never for the whole Pod.
"""

import grw_sdk
from grw_sdk import Config, Event, Interest

STATUS_LISTS = (("status", "containerStatuses"), ("status", "initContainerStatuses"))


class RestartFilter:
    """Passes Pods whose containers restarted ``minRestarts`` times or more."""

    interest = Interest(kinds=["Pod"])

    def __init__(self, config: Config):
        self.min_restarts = config.int("minRestarts", default=1, minimum=0)

    def decide(self, event: Event) -> bool:
        return restarts(event) >= self.min_restarts


def restarts(event: Event) -> int:
    """The restarts of all the Pod's containers, init containers included."""
    total = 0
    for path in STATUS_LISTS:
        statuses = event.field(path)
        if not isinstance(statuses, list):
            continue
        for status in statuses:
            count = status.get("restartCount") if isinstance(status, dict) else None
            if isinstance(count, int) and not isinstance(count, bool) and count >= 0:
                total += count
    return total


Filter = grw_sdk.export_filter(RestartFilter)
