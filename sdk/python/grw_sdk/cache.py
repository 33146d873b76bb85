"""Cache lookups and relationships, for analyzers."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from .model import Gvk, ObjectRef, ObjectView
from .selector import LabelSelector

__all__ = ["Cache", "CacheError", "Direction", "Relationship"]


class CacheError(Exception):
    """A lookup GRW refused: a malformed selector, or a kind it cannot list."""


class Cache:
    """Read-only lookups into GRW's caches.

    Answers are :class:`~grw_sdk.ObjectView` objects, read on request like
    an event's object. GRW records each lookup an analyzer makes and
    analyzes the object again when a change would answer it differently. A
    kind GRW does not watch yet is watched from the first lookup on; until
    it is synced, its objects are not found.

    Inside GRW this is backed by the host; in unit tests use
    :class:`grw_sdk.testing.MemoryCache`.
    """

    def get(self, gvk: Gvk, namespace: str, name: str) -> ObjectView | None:
        """One object; ``namespace`` is empty for cluster-scoped objects."""
        raise NotImplementedError

    def list(
        self, gvk: Gvk, namespace: str = "", selector: LabelSelector | str = ""
    ) -> list[ObjectView]:
        """Objects of a kind, within one namespace (empty for all), that
        match a label selector (empty for all). Raises :class:`CacheError`."""
        raise NotImplementedError

    def owned_by(self, gvk: Gvk, owner_uid: str) -> list[ObjectView]:
        """Objects of a kind with an owner reference to ``owner_uid``."""
        raise NotImplementedError


class Direction(StrEnum):
    """Which way a :class:`Relationship` points, seen from the analyzed object."""

    #: From the analyzed object to the other: this Service `selects` that Pod.
    OUTGOING = "outgoing"
    #: From the other object to the analyzed one: that ReplicaSet `owns` this Pod.
    INCOMING = "incoming"


def _attribute_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True)
class Relationship:
    """One relationship between the analyzed object and another::

        Relationship.incoming("owns", owner_ref, controller=True)

    ``relation`` is lowercase words joined by ``-`` (``owns``, ``selects``,
    ``runs-on``). ``target`` need not exist; an empty version in its kind
    means whichever version GRW serves. Attribute values are text; ``True``
    and ``False`` become ``"true"`` and ``"false"``.
    """

    relation: str
    direction: Direction
    target: ObjectRef
    attributes: tuple[tuple[str, str], ...] = ()

    @classmethod
    def outgoing(cls, relation: str, target: ObjectRef, **attributes: object) -> Relationship:
        """The analyzed object `relation` ``target``."""
        return cls(relation, Direction.OUTGOING, target, _attributes(attributes))

    @classmethod
    def incoming(cls, relation: str, source: ObjectRef, **attributes: object) -> Relationship:
        """``source`` `relation` the analyzed object."""
        return cls(relation, Direction.INCOMING, source, _attributes(attributes))

    def with_attribute(self, key: str, value: object) -> Relationship:
        """The same relationship with one more attribute (for keys that are
        not Python names, such as ``app.kubernetes.io/part-of``)."""
        attributes = self.attributes + ((key, _attribute_value(value)),)
        return Relationship(self.relation, self.direction, self.target, attributes)


def _attributes(attributes: dict[str, object]) -> tuple[tuple[str, str], ...]:
    return tuple((key, _attribute_value(value)) for key, value in attributes.items())
