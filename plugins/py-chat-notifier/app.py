"""py-chat-notifier: posts a short, readable line about each change to a
Slack or Mattermost incoming webhook::

    *Deployment* `shop/web` modified: spec.replicas 2 → 3; metadata.labels.tier added
    *Pod* `default/x` added
    *ConfigMap* `a/b` deleted

Configuration::

    {"url": "https://hooks.slack.com/services/T000/B000/XXXX", "channel": "#ops",
     "username": "grw", "iconEmoji": ":eyes:", "ignore": ["status"], "maxFields": 5}

- ``url`` (required): the webhook's ``http://`` or ``https://`` URL; its host
  must be in the manifest's ``allowedHosts`` and GRW's ``pluginAllowedHosts``.
- ``channel``, ``username``, ``iconEmoji``: sent as ``channel``,
  ``username`` and ``icon_emoji``.
- ``ignore``: field paths whose changes are not listed, dotted or JSON
  pointers; a path covers everything under it. The list replaces the
  default: ``metadata.resourceVersion``, ``metadata.managedFields``,
  ``metadata.generation``, ``status`` and the
  ``kubectl.kubernetes.io/last-applied-configuration`` annotation.
- ``maxFields`` (>= 1, default 5): changed fields listed per message; the
  rest are counted ("and 3 more").

A modification lists the changed leaf fields between the old and the new
object, the object's own fields before its metadata; one that touches
ignored fields only sends nothing. Values longer than 40 characters are
cut. 2xx is delivered; 408, 429, 5xx and failures to connect are retried;
other answers are given up.
"""

from __future__ import annotations

import json
from typing import Any

import grw_sdk
from grw_sdk import MISSING, Config, Event, Http

DEFAULT_IGNORE = (
    "metadata.resourceVersion",
    "metadata.managedFields",
    "metadata.generation",
    "status",
    "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration",
)

#: Longest value shown, in characters.
MAX_VALUE_CHARS = 40


class ChatNotifier:
    """Posts a one-line summary of each event to a chat webhook."""

    def __init__(self, config: Config):
        self.url = config.str("url", required=True)
        self.channel = config.str("channel")
        self.username = config.str("username")
        self.icon_emoji = config.str("iconEmoji")
        self.ignore = [p.segments for p in config.list_of_field_paths("ignore", DEFAULT_IGNORE)]
        self.max_fields = config.int("maxFields", 5)
        if not self.url.startswith(("https://", "http://")):
            raise config.error(
                "url",
                "expected the webhook's http:// or https:// URL, "
                f"got {json.dumps(self.url, ensure_ascii=False)}",
            )
        if self.max_fields < 1:
            raise config.error("maxFields", "must be at least 1")

    def deliver(self, event: Event, http: Http) -> None:
        text = self.summary(event)
        if text is None:
            return
        message = {"text": text}
        for key, value in (
            ("channel", self.channel),
            ("username", self.username),
            ("icon_emoji", self.icon_emoji),
        ):
            if value is not None:
                message[key] = value
        http.post_json(self.url, message)

    def summary(self, event: Event) -> str | None:
        """The message text for ``event``; ``None`` when it modifies ignored
        fields only. ``&``, ``<`` and ``>`` are escaped as Slack requires."""
        name = f"{event.namespace}/{event.name}" if event.namespace else event.name
        subject = f"*{event.kind}* `{name}`"
        if event.type == "ADDED":
            text = f"{subject} added"
        elif event.type == "DELETED":
            text = f"{subject} deleted"
        elif not event.has_old_object:
            # Without both states there is nothing to compare.
            text = f"{subject} modified"
        else:
            changes = self.changes(event.old_object, event.object)
            if not changes:
                return None
            text = f"{subject} modified: " + "; ".join(changes[: self.max_fields])
            if len(changes) > self.max_fields:
                text += f"; and {len(changes) - self.max_fields} more"
        return escape(text)

    def changes(self, old: Any, new: Any) -> list[str]:
        """The leaf fields that differ, outside the ignored paths."""
        found: list[str] = []
        self._diff([], old, new, found)
        return found

    def _diff(self, path: list[str], old: Any, new: Any, out: list[str]) -> None:
        if any(tuple(path[: len(ignored)]) == ignored for ignored in self.ignore):
            return
        if isinstance(old, dict) and isinstance(new, dict):
            keys = sorted(old.keys() | new.keys())
            if not path:
                # What the object is about first, its metadata after.
                keys.sort(key=lambda k: k == "metadata")
            for key in keys:
                self._diff(path + [key], old.get(key, MISSING), new.get(key, MISSING), out)
        elif isinstance(old, list) and isinstance(new, list):
            for i in range(max(len(old), len(new))):
                self._diff(
                    path + [str(i)],
                    old[i] if i < len(old) else MISSING,
                    new[i] if i < len(new) else MISSING,
                    out,
                )
        elif not same(old, new):
            where = ".".join(path)
            if old is MISSING:
                out.append(f"{where} added")
            elif new is MISSING:
                out.append(f"{where} removed")
            else:
                out.append(f"{where} {short(old)} → {short(new)}")


def same(a: Any, b: Any) -> bool:
    """JSON equality: ``1``, ``1.0`` and ``true`` all differ."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def short(value: Any) -> str:
    """A value as a person reads it: strings bare, the rest as compact JSON,
    cut at MAX_VALUE_CHARS characters."""
    if isinstance(value, str) and value:
        text = value
    else:
        text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    if len(text) > MAX_VALUE_CHARS:
        return text[: MAX_VALUE_CHARS - 1] + "…"
    return text


def escape(text: str) -> str:
    """Slack's control characters in message text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


Notifier = grw_sdk.export_notifier(ChatNotifier)
