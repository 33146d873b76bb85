"""Events, objects read on request, field paths, kinds and interests."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from enum import StrEnum
from types import MappingProxyType
from typing import Any, Iterable, Mapping, Sequence


class _Missing:
    """The type of :data:`MISSING`."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


#: What :func:`walk` finds where nothing is (``None`` would be a JSON null).
MISSING: Any = _Missing()


class EventType(StrEnum):
    """What happened to an object; compares equal to ``"ADDED"`` etc."""

    ADDED = "ADDED"
    MODIFIED = "MODIFIED"
    DELETED = "DELETED"


class Origin(StrEnum):
    """Where a change came from; compares equal to ``"watch"`` etc."""

    #: The first list of a watch: the object existed before GRW looked.
    INITIAL = "initial"
    #: A watch event from the API server (or a replayed recording).
    WATCH = "watch"
    #: The difference between a new list and GRW's cache, after a watch
    #: could not resume.
    RELIST = "relist"


@dataclass(frozen=True, order=True)
class Gvk:
    """A Kubernetes group/version/kind; ``group`` is empty for the core group."""

    group: str = ""
    version: str = ""
    kind: str = ""

    @classmethod
    def from_api_version(cls, api_version: str, kind: str) -> Gvk:
        """Splits ``apiVersion`` (``apps/v1``, or ``v1`` for the core group)."""
        group, slash, version = api_version.partition("/")
        return cls(group, version, kind) if slash else cls("", api_version, kind)

    @property
    def api_version(self) -> str:
        """``group/version``, or just ``version`` for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.api_version}, Kind={self.kind}"


@dataclass(frozen=True, order=True)
class ObjectRef:
    """Names one object; ``namespace`` is empty for cluster-scoped objects."""

    gvk: Gvk
    namespace: str
    name: str


class FieldPath:
    """A checked path to a field of an object.

    Two spellings are accepted, as in the Rust SDK:

    - dotted: ``spec.replicas``, ``spec.containers.0.image``; a segment that
      is a decimal number indexes an array;
    - a JSON pointer, starting with ``/``:
      ``/metadata/labels/app.kubernetes.io~1name`` (``~1`` is ``/``, ``~0``
      is ``~``).

    A malformed path raises :class:`ValueError` with a message naming it.
    """

    __slots__ = ("_text", "segments", "_wire")

    def __init__(self, text: str):
        if not text:
            raise ValueError("field path is empty")
        if text.startswith("/"):
            try:
                segments = tuple(_unescape_pointer_token(t) for t in text[1:].split("/"))
            except ValueError:
                raise ValueError(
                    f"field path `{text}`: `~` must be followed by `0` or `1` in a JSON pointer"
                ) from None
        else:
            segments = tuple(text.split("."))
            if "" in segments:
                raise ValueError(
                    f"field path `{text}` has an empty segment; "
                    "write `a.b.c`, or a JSON pointer like `/a/b`"
                )
        self._text: str | None = text
        self.segments: tuple[str, ...] = segments
        self._wire = list(segments)  # as the host's `get` takes it

    @classmethod
    def of(cls, path: str | Sequence[str | int] | FieldPath) -> FieldPath:
        """A path from its text, or from its segments as they are (keys, and
        array indexes as numbers or decimal strings).

        Paths given as text or as a tuple are remembered (up to
        :data:`_REMEMBERED` of them), so a plugin that writes
        ``event.field("status.phase")`` in ``decide`` parses it once, not
        once per event."""
        if isinstance(path, FieldPath):
            return path
        try:
            return _PATHS[path]  # type: ignore[index]
        except (KeyError, TypeError):  # TypeError: a list, which cannot be a key
            pass
        if isinstance(path, str):
            made = cls(path)
        else:
            made = cls.__new__(cls)
            made._text = None
            made.segments = tuple(str(s) for s in path)
            made._wire = list(made.segments)
        remember = isinstance(path, str) or (
            isinstance(path, tuple) and all(type(s) is str for s in path)
        )
        if remember and len(_PATHS) < _REMEMBERED:
            _PATHS[path] = made
        return made

    @property
    def text(self) -> str:
        """The path as written, or as a JSON pointer when made from segments."""
        if self._text is None:
            self._text = "".join("/" + s.replace("~", "~0").replace("/", "~1") for s in self.segments)
        return self._text

    def get(self, value: Any, default: Any = None) -> Any:
        """The value at this path inside ``value`` (parsed JSON), or ``default``."""
        found = walk(value, self.segments)
        return default if found is MISSING else found

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FieldPath) and other.segments == self.segments

    def __hash__(self) -> int:
        return hash(self.segments)

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"FieldPath({self.text!r})"


#: How many paths :meth:`FieldPath.of` remembers; more are parsed each time.
_REMEMBERED = 1024
_PATHS: dict[Any, FieldPath] = {}


def _unescape_pointer_token(token: str) -> str:
    out = []
    chars = iter(token)
    for c in chars:
        if c == "~":
            escaped = next(chars, "")
            if escaped == "0":
                out.append("~")
            elif escaped == "1":
                out.append("/")
            else:
                raise ValueError(token)
        else:
            out.append(c)
    return "".join(out)


_INDEX = re.compile(r"\+?[0-9]+")


def walk(value: Any, segments: Iterable[str]) -> Any:
    """The value at ``segments`` (object keys, array indexes in decimal)
    inside parsed JSON, or :data:`MISSING`."""
    for segment in segments:
        if isinstance(value, dict):
            if segment not in value:
                return MISSING
            value = value[segment]
        elif isinstance(value, list):
            if not _INDEX.fullmatch(segment):
                return MISSING
            index = int(segment)
            if index >= len(value):
                return MISSING
            value = value[index]
        else:
            return MISSING
    return value


def to_json(value: Any) -> str:
    """Compact JSON text with sorted keys, as GRW hands objects over."""
    return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _string_map(entries: Any) -> dict[str, str]:
    """The string values of a JSON object, sorted by key."""
    if not isinstance(entries, dict):
        return {}
    return {k: v for k, v in sorted(entries.items()) if isinstance(v, str)}


class ObjectView:
    """One Kubernetes object, read only as far as the plugin asks.

    Inside GRW the object stays in the host: :attr:`name`, :meth:`label`,
    :meth:`field` and the like fetch just that part, and :attr:`object`
    fetches the whole JSON and parses it (once). What was fetched is kept
    for later calls, and once the whole object is parsed everything is
    answered from it.

    ``source`` is anything with the methods of the WIT ``object`` resource
    (``json()``, ``get(path)``, ``label(key)``, ``labels()``,
    ``annotation(key)``, ``annotations()``, ``gvk()``, ``namespace()``,
    ``name()``, ``uid()``, ``resource_version()``), such as
    :class:`grw_sdk.testing.FakeObject`. :meth:`from_dict` makes a view of
    an object already at hand.

    Inside GRW a view of an event's object can only be read during the call
    it was passed to.
    """

    __slots__ = ("_source", "_parsed", "_json", "_labels", "_annotations", "_known")

    def __init__(self, source: Any):
        self._source = source
        self._parsed: Any = MISSING
        self._json: str | None = None
        self._labels: Mapping[str, str] | None = None
        self._annotations: Mapping[str, str] | None = None
        self._known: dict[str, Any] = {}

    @classmethod
    def from_dict(cls, value: dict) -> ObjectView:
        """A view of a parsed object."""
        view = cls(None)
        view._parsed = value
        return view

    @classmethod
    def from_json(cls, text: str) -> ObjectView:
        """A view of an object given as JSON text, parsed on first use."""
        view = cls(None)
        view._json = text
        return view

    @property
    def source(self) -> Any:
        """What this view reads from: GRW's ``object`` resource, a stand-in
        such as :class:`grw_sdk.testing.FakeObject`, or ``None``."""
        return self._source

    # The whole object.

    @property
    def json(self) -> str:
        """The object as JSON text, fetched on first use."""
        if self._json is None:
            self._json = self._source.json() if self._source is not None else to_json(self._parsed)
        return self._json

    @property
    def object(self) -> dict:
        """The whole object, fetched and parsed on first use (once)."""
        if self._parsed is MISSING:
            self._parsed = json.loads(self.json)
        return self._parsed

    # Identity.

    @property
    def _local(self) -> bool:
        """Whether to answer from the parsed object rather than ask the source."""
        return self._parsed is not MISSING or self._source is None

    def _string(self, *path: str) -> str:
        found = walk(self.object, path)
        return found if isinstance(found, str) else ""

    def _identity(self, key: str, method: str) -> str:
        if key not in self._known:
            local = self._local
            self._known[key] = self._string("metadata", key) if local else getattr(self._source, method)()
        return self._known[key]

    @property
    def name(self) -> str:
        """``metadata.name``."""
        return self._identity("name", "name")

    @property
    def namespace(self) -> str:
        """``metadata.namespace``; empty for cluster-scoped objects."""
        return self._identity("namespace", "namespace")

    @property
    def uid(self) -> str:
        """``metadata.uid``."""
        return self._identity("uid", "uid")

    @property
    def resource_version(self) -> str:
        """``metadata.resourceVersion``."""
        return self._identity("resourceVersion", "resource_version")

    @property
    def gvk(self) -> Gvk:
        """The object's group, version and kind."""
        gvk = self._known.get("gvk")
        if gvk is None:
            if self._local:
                gvk = Gvk.from_api_version(self._string("apiVersion"), self._string("kind"))
            else:
                raw = self._source.gvk()
                gvk = Gvk(raw.group, raw.version, raw.kind)
            self._known["gvk"] = gvk
        return gvk

    @property
    def kind(self) -> str:
        """The object's kind, e.g. ``Deployment``."""
        return self.gvk.kind

    @property
    def is_cluster_scoped(self) -> bool:
        """Whether the object has no namespace."""
        return not self.namespace

    def to_ref(self) -> ObjectRef:
        """A reference to this object."""
        return ObjectRef(self.gvk, self.namespace, self.name)

    # Labels and annotations.

    def label(self, key: str) -> str | None:
        """One label's value. Asks for that label alone, unless all labels or
        the whole object were fetched already."""
        if self._labels is None and not self._local:
            return self._source.label(key)
        return self.labels.get(key)

    @property
    def labels(self) -> Mapping[str, str]:
        """All labels (read-only), sorted by key."""
        if self._labels is None:
            if self._local:
                labels = _string_map(walk(self.object, ("metadata", "labels")))
            else:
                labels = dict(self._source.labels())
            self._labels = MappingProxyType(labels)
        return self._labels

    def annotation(self, key: str) -> str | None:
        """One annotation's value, if it is a string. Asks for that one alone,
        unless all annotations or the whole object were fetched already."""
        if self._annotations is None and not self._local:
            return self._source.annotation(key)
        return self.annotations.get(key)

    @property
    def annotations(self) -> Mapping[str, str]:
        """The annotations whose values are strings (read-only), sorted by key."""
        if self._annotations is None:
            if self._local:
                annotations = _string_map(walk(self.object, ("metadata", "annotations")))
            else:
                annotations = dict(self._source.annotations())
            self._annotations = MappingProxyType(annotations)
        return self._annotations

    # Fields.

    def field(self, path: str | Sequence[str | int] | FieldPath, default: Any = None) -> Any:
        """The value at ``path``, parsed: ``field("status.phase")``,
        ``field("/metadata/labels/app.kubernetes.io~1name")`` or
        ``field(["spec", "containers", 0, "image"])``. ``default`` when
        nothing is there (a JSON ``null`` that is there is ``None``). Fetches
        just that value, unless the whole object was fetched already.

        A malformed path string raises :class:`ValueError`; parse paths
        that come from configuration once, with :class:`FieldPath`.
        """
        # FieldPath.of(path), inlined for the paths it remembers: this runs
        # for every field of every event.
        if path.__class__ is FieldPath:
            parsed = path
        else:
            try:
                parsed = _PATHS[path]  # type: ignore[index]
            except (KeyError, TypeError):
                parsed = FieldPath.of(path)
        if self._parsed is not MISSING or self._source is None:  # self._local, inlined
            found = walk(self.object, parsed.segments)
            return default if found is MISSING else found
        text = self._source.get(parsed._wire)
        return default if text is None else json.loads(text)

    def __repr__(self) -> str:
        return f"<ObjectView {self.kind} {self.namespace}/{self.name}>"


class Event:
    """One change of one object.

    ``type`` (:class:`EventType`) and ``origin`` (:class:`Origin`) are
    plain attributes; everything about the object is read on request through
    :attr:`view` (its new state, or its last state for ``DELETED``) and
    :attr:`old_view` (the previous state, for ``MODIFIED``). The accessors
    below read the object, ``old_*`` ones the previous state.

    Build events for unit tests with :func:`grw_sdk.testing.event`.
    """

    __slots__ = ("type", "origin", "view", "old_view")

    def __init__(
        self,
        type: EventType | str,
        view: ObjectView,
        old_view: ObjectView | None = None,
        origin: Origin | str = Origin.WATCH,
    ):
        self.type = EventType(type)
        self.origin = Origin(origin)
        self.view = view
        self.old_view = old_view

    @classmethod
    def _of(
        cls, type: EventType, view: ObjectView, old_view: ObjectView | None, origin: Origin
    ) -> Event:
        """An event from parts already checked (GRW's, for each call)."""
        event = cls.__new__(cls)
        event.type, event.view, event.old_view, event.origin = type, view, old_view, origin
        return event

    @property
    def name(self) -> str:
        """The object's ``metadata.name``."""
        return self.view.name

    @property
    def namespace(self) -> str:
        """The object's namespace; empty for cluster-scoped objects."""
        return self.view.namespace

    @property
    def uid(self) -> str:
        """The object's UID."""
        return self.view.uid

    @property
    def resource_version(self) -> str:
        """The object's resource version."""
        return self.view.resource_version

    @property
    def gvk(self) -> Gvk:
        """The object's group, version and kind."""
        return self.view.gvk

    @property
    def kind(self) -> str:
        """The object's kind."""
        return self.view.gvk.kind

    @property
    def is_cluster_scoped(self) -> bool:
        """Whether the object has no namespace."""
        return self.view.is_cluster_scoped

    def label(self, key: str) -> str | None:
        """One label's value (see :meth:`ObjectView.label`)."""
        return self.view.label(key)

    @property
    def labels(self) -> Mapping[str, str]:
        """All labels, sorted by key."""
        return self.view.labels

    def annotation(self, key: str) -> str | None:
        """One annotation's value, if it is a string."""
        return self.view.annotation(key)

    @property
    def annotations(self) -> Mapping[str, str]:
        """The annotations whose values are strings, sorted by key."""
        return self.view.annotations

    def field(self, path: str | Sequence[str | int] | FieldPath, default: Any = None) -> Any:
        """The value at ``path`` in the object (see :meth:`ObjectView.field`)."""
        return self.view.field(path, default)

    def old_field(self, path: str | Sequence[str | int] | FieldPath, default: Any = None) -> Any:
        """The value at ``path`` in the previous state; ``default`` when the
        event carries none or nothing is there."""
        if self.old_view is None:
            FieldPath.of(path)
            return default
        return self.old_view.field(path, default)

    @property
    def has_old_object(self) -> bool:
        """Whether the event carries the previous state (``MODIFIED`` does)."""
        return self.old_view is not None

    @property
    def object(self) -> dict:
        """The whole object, fetched and parsed on first use."""
        return self.view.object

    @property
    def old_object(self) -> dict | None:
        """The whole previous state, for ``MODIFIED`` events; else ``None``."""
        return None if self.old_view is None else self.old_view.object

    @property
    def json(self) -> str:
        """The object as JSON text."""
        return self.view.json

    def __repr__(self) -> str:
        return f"<Event {self.type} {self.kind} {self.namespace}/{self.name} ({self.origin})>"


@dataclass(frozen=True)
class KindPattern:
    """A set of kinds; a part that is ``None`` matches anything.
    ``group=""`` is the core group."""

    group: str | None = None
    version: str | None = None
    kind: str | None = None

    @classmethod
    def of(cls, value: KindPattern | Gvk | str) -> KindPattern:
        """A pattern from a pattern, an exact :class:`Gvk`, or a kind name
        (any group and version)."""
        if isinstance(value, KindPattern):
            return value
        if isinstance(value, Gvk):
            return cls(value.group, value.version, value.kind)
        if isinstance(value, str):
            return cls(kind=value)
        raise TypeError(f"not a kind pattern: {value!r}")

    def matches(self, gvk: Gvk) -> bool:
        """Whether ``gvk`` is in this set."""
        return all(
            wanted is None or wanted == actual
            for wanted, actual in (
                (self.group, gvk.group),
                (self.version, gvk.version),
                (self.kind, gvk.kind),
            )
        )


@dataclass(frozen=True)
class Interest:
    """What a plugin wants to see; GRW never calls it for other events.
    Empty lists mean everything.

    ``Interest(kinds=["Pod", KindPattern(group="apps")], event_types=["MODIFIED"])``
    """

    kinds: tuple[KindPattern, ...] = ()
    event_types: tuple[EventType, ...] = ()

    def __post_init__(self) -> None:
        kinds = tuple(KindPattern.of(k) for k in _as_iterable(self.kinds))
        event_types = tuple(dict.fromkeys(EventType(t) for t in _as_iterable(self.event_types)))
        object.__setattr__(self, "kinds", kinds)
        object.__setattr__(self, "event_types", event_types)

    @classmethod
    def all(cls) -> Interest:
        """Every event of every kind."""
        return cls()

    def matches(self, gvk: Gvk, event_type: EventType | str) -> bool:
        """Whether an event of this kind and type would be delivered."""
        return (not self.kinds or any(k.matches(gvk) for k in self.kinds)) and (
            not self.event_types or EventType(event_type) in self.event_types
        )

    def matches_event(self, event: Event) -> bool:
        """Whether ``event`` would be delivered; handy in unit tests."""
        return self.matches(event.gvk, event.type)


def _as_iterable(value: Any) -> Iterable[Any]:
    return (value,) if isinstance(value, (str, KindPattern, Gvk)) else value
