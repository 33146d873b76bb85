"""Stand-ins for GRW's host, to unit-test plugin logic natively with pytest.

::

    from grw_sdk import testing, instantiate

    def test_passes_restarted_pods():
        plugin, interest = instantiate(RestartFilter, {"minRestarts": 2})
        event = testing.event("MODIFIED", pod(restarts=3), old=pod(restarts=1))
        assert interest.matches_event(event)
        assert plugin.decide(event)
        assert ("json",) not in event.view.source.calls
"""

from __future__ import annotations

from collections import deque
from typing import Any, Iterable

from .cache import Cache, CacheError
from .http import Http, HttpRequest, HttpResponse, SendError
from .model import MISSING, Event, EventType, Gvk, ObjectView, Origin, to_json, walk
from .selector import LabelSelector, SelectorError

__all__ = ["FakeObject", "MemoryCache", "RecordingHttp", "event", "view"]


class FakeObject:
    """Answers like GRW's ``object`` resource, from a dict, and records each
    call in :attr:`calls` as ``(method, argument...)`` tuples, so a test can
    check what a plugin fetched (``("get", ("status", "phase"))``, ``("json",)``)."""

    def __init__(self, value: dict):
        #: The object.
        self.value = value
        #: The calls made so far, in order.
        self.calls: list[tuple[Any, ...]] = []

    def _metadata(self, key: str) -> Any:
        found = walk(self.value, ("metadata", key))
        return None if found is MISSING else found

    def _string(self, key: str) -> str:
        found = self._metadata(key)
        return found if isinstance(found, str) else ""

    def _strings(self, key: str) -> list[tuple[str, str]]:
        found = self._metadata(key)
        if not isinstance(found, dict):
            return []
        return sorted((k, v) for k, v in found.items() if isinstance(v, str))

    def gvk(self) -> Gvk:
        self.calls.append(("gvk",))
        api_version, kind = self.value.get("apiVersion"), self.value.get("kind")
        return Gvk.from_api_version(
            api_version if isinstance(api_version, str) else "",
            kind if isinstance(kind, str) else "",
        )

    def namespace(self) -> str:
        self.calls.append(("namespace",))
        return self._string("namespace")

    def name(self) -> str:
        self.calls.append(("name",))
        return self._string("name")

    def uid(self) -> str:
        self.calls.append(("uid",))
        return self._string("uid")

    def resource_version(self) -> str:
        self.calls.append(("resource_version",))
        return self._string("resourceVersion")

    def json(self) -> str:
        self.calls.append(("json",))
        return to_json(self.value)

    def get(self, path: list[str]) -> str | None:
        self.calls.append(("get", tuple(path)))
        found = walk(self.value, path)
        return None if found is MISSING else to_json(found)

    def label(self, key: str) -> str | None:
        self.calls.append(("label", key))
        return dict(self._strings("labels")).get(key)

    def labels(self) -> list[tuple[str, str]]:
        self.calls.append(("labels",))
        return self._strings("labels")

    def annotation(self, key: str) -> str | None:
        self.calls.append(("annotation", key))
        return dict(self._strings("annotations")).get(key)

    def annotations(self) -> list[tuple[str, str]]:
        self.calls.append(("annotations",))
        return self._strings("annotations")


def view(value: dict) -> ObjectView:
    """A view of ``value`` that reads through a :class:`FakeObject`, as a
    plugin reads GRW's objects; ``view.source`` is the fake."""
    return ObjectView(FakeObject(value))


def event(
    type: EventType | str,
    object: dict,
    old: dict | None = None,
    *,
    origin: Origin | str = Origin.WATCH,
) -> Event:
    """An event for ``object`` (and its previous state ``old``, as
    ``MODIFIED`` events carry), read through :class:`FakeObject` like a
    real one: ``event.view.source.calls`` shows what the plugin fetched."""
    return Event(type, view(object), None if old is None else view(old), origin)


class MemoryCache(Cache):
    """A :class:`~grw_sdk.Cache` over objects held in memory.

    An object's kind comes from its ``apiVersion`` and ``kind``. ``list``
    takes the full selector syntax and, like GRW, rejects a malformed one
    with :class:`~grw_sdk.CacheError`. Every lookup is recorded in
    :attr:`lookups`, e.g. ``("list", gvk, "shop", "app=web")``.
    """

    def __init__(self, objects: Iterable[dict] = ()):
        self._objects: list[dict] = []
        #: The lookups made so far, in order.
        self.lookups: list[tuple[Any, ...]] = []
        for value in objects:
            self.insert(value)

    def insert(self, value: dict) -> MemoryCache:
        """Adds ``value``, replacing any object of the same kind, namespace
        and name; returns the cache."""
        key = _key(value)
        self._objects = [o for o in self._objects if _key(o) != key]
        self._objects.append(value)
        return self

    def __len__(self) -> int:
        return len(self._objects)

    def _of_kind(self, gvk: Gvk) -> list[dict]:
        return [o for o in self._objects if _key(o)[0] == gvk]

    def get(self, gvk: Gvk, namespace: str, name: str) -> ObjectView | None:
        self.lookups.append(("get", gvk, namespace, name))
        for value in self._of_kind(gvk):
            if _key(value)[1:] == (namespace, name):
                return view(value)
        return None

    def list(
        self, gvk: Gvk, namespace: str = "", selector: LabelSelector | str = ""
    ) -> list[ObjectView]:
        self.lookups.append(("list", gvk, namespace, str(selector)))
        try:
            parsed = selector if isinstance(selector, LabelSelector) else LabelSelector.parse(selector)
        except SelectorError as e:
            raise CacheError(str(e)) from None
        views = [view(o) for o in self._of_kind(gvk) if not namespace or _key(o)[1] == namespace]
        return [v for v in views if parsed.matches(v.labels)]

    def owned_by(self, gvk: Gvk, owner_uid: str) -> list[ObjectView]:
        self.lookups.append(("owned_by", gvk, owner_uid))
        return [view(o) for o in self._of_kind(gvk) if owner_uid in _owner_uids(o)]


def _key(value: dict) -> tuple[Gvk, str, str]:
    source = FakeObject(value)
    return source.gvk(), source.namespace(), source.name()


def _owner_uids(value: dict) -> list[str]:
    references = walk(value, ("metadata", "ownerReferences"))
    if not isinstance(references, list):
        return []
    return [r["uid"] for r in references if isinstance(r, dict) and isinstance(r.get("uid"), str)]


class RecordingHttp(Http):
    """An :class:`~grw_sdk.Http` that records every request in
    :attr:`requests` and answers from a script.

    Answers queued with :meth:`respond` and :meth:`fail` are used in order;
    once they run out, every request gets ``200`` with an empty body.
    """

    def __init__(self) -> None:
        #: The requests sent so far, in order.
        self.requests: list[HttpRequest] = []
        self._answers: deque[HttpResponse | SendError] = deque()

    def respond(
        self,
        response: HttpResponse | int,
        body: bytes | str = b"",
        headers: Iterable[tuple[str, str]] = (),
    ) -> RecordingHttp:
        """Queues a response, or one made of a status, body and headers."""
        if isinstance(response, int):
            data = body.encode() if isinstance(body, str) else bytes(body)
            response = HttpResponse(response, list(headers), data)
        self._answers.append(response)
        return self

    def fail(self, reason: str) -> RecordingHttp:
        """Queues a failure to send (host not allowed, connection refused)."""
        self._answers.append(SendError(reason))
        return self

    def send(self, request: HttpRequest) -> HttpResponse:
        self.requests.append(request)
        answer = self._answers.popleft() if self._answers else HttpResponse(200)
        if isinstance(answer, SendError):
            raise answer
        return answer
