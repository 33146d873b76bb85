"""py-ownership: each entry of an object's ``metadata.ownerReferences`` is
an edge ``owner owns object``, with attribute ``controller`` = ``true`` for
the owner that manages the object and ``false`` for the others.

Configuration: ``{"kinds": [{"group": "apps", "kind": "ReplicaSet"}, {"kind": "Pod"}]}``
(the kinds whose owner references are read, each pattern naming any of
``group``, ``version`` and ``kind``; default: every kind).

It reads only the owner references and looks nothing up: an owner that is
not (yet) cached is an edge to a missing object.
"""

from __future__ import annotations

from typing import Any

import grw_sdk
from grw_sdk import Cache, Config, Gvk, Interest, KindPattern, ObjectRef, ObjectView, Relationship, log

OWNER_REFERENCES = ("metadata", "ownerReferences")


class Ownership:
    """Owner references as incoming ``owns`` edges."""

    def __init__(self, config: Config):
        self.interest = Interest(
            kinds=[
                KindPattern(p.str("group"), p.str("version"), p.str("kind"))
                for p in config.list_of_sections("kinds")
            ]
        )

    def analyze(self, object: ObjectView, cache: Cache) -> list[Relationship]:
        references = object.field(OWNER_REFERENCES)
        if references is None:
            return []
        problem = unreadable(references)
        if problem is not None:
            log.warn(
                f"{object.kind} {object.namespace}/{object.name}: "
                f"unreadable ownerReferences ({problem}); no ownership edges"
            )
            return []
        # Owners live in the object's namespace, or are cluster-scoped; a
        # namespaced object's owner is taken to be in its namespace.
        return [
            Relationship.incoming(
                "owns",
                ObjectRef(
                    Gvk.from_api_version(owner["apiVersion"], owner["kind"]),
                    object.namespace,
                    owner["name"],
                ),
                controller=owner.get("controller") is True,
            )
            for owner in references
        ]


def unreadable(references: Any) -> str | None:
    """What is wrong with ``ownerReferences``, or ``None``."""
    if not isinstance(references, list):
        return "expected a list"
    for i, owner in enumerate(references):
        if not isinstance(owner, dict):
            return f"[{i}]: expected an object"
        for key in ("apiVersion", "kind", "name"):
            if not isinstance(owner.get(key), str):
                return f"[{i}].{key}: expected a string"
        if owner.get("controller") not in (None, True, False):
            return f"[{i}].controller: expected a boolean"
    return None


Analyzer = grw_sdk.export_analyzer(Ownership)
