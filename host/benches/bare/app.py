"""The restart filter on componentize-py's bare bindings (see README.md)."""

import json

from wit_world.imports import types

STATUS_LISTS = (["status", "containerStatuses"], ["status", "initContainerStatuses"])
read = False


class Filter:
    def init(self, config: str):
        global read
        read = json.loads(config).get("read", False)
        return types.Interest(kinds=[types.KindPattern(None, None, "Pod")], event_types=[])

    def decide(self, event, object, old_object) -> bool:
        if not read:
            return True
        total = 0
        for path in STATUS_LISTS:
            text = object.get(path)
            if text is None:
                continue
            for status in json.loads(text):
                total += status.get("restartCount", 0)
        return total >= 1
