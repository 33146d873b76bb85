"""Native tests of py-ownership: the cases of the Rust ownership analyzer."""

import pytest

from app import Ownership
from grw_sdk import ConfigError, Direction, Gvk, Interest, KindPattern, ObjectRef, instantiate, testing
from grw_sdk.testing import MemoryCache


def analyze(value):
    ownership, _ = instantiate(Ownership)
    cache = MemoryCache()
    edges = ownership.analyze(testing.view(value), cache)
    assert cache.lookups == []
    return edges


def test_every_owner_reference_is_an_incoming_owns_edge():
    edges = analyze(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "namespace": "shop",
                "name": "web-7d9f-x2k4p",
                "ownerReferences": [
                    {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9f", "uid": "u1", "controller": True},
                    {"apiVersion": "example.com/v1", "kind": "Audit", "name": "nightly", "uid": "u2"},
                ],
            },
        }
    )
    assert len(edges) == 2
    assert edges[0].relation == "owns"
    assert edges[0].direction is Direction.INCOMING
    assert edges[0].target == ObjectRef(Gvk("apps", "v1", "ReplicaSet"), "shop", "web-7d9f")
    assert edges[0].attributes == (("controller", "true"),)
    assert edges[1].target.gvk == Gvk("example.com", "v1", "Audit")
    assert edges[1].attributes == (("controller", "false"),)


def test_cluster_scoped_objects_and_core_owners():
    (edge,) = analyze(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolume",
            "metadata": {"name": "pv-1", "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": "n1", "controller": None}]},
        }
    )
    assert edge.target == ObjectRef(Gvk("", "v1", "Node"), "", "n1")
    assert edge.attributes == (("controller", "false"),)


def test_only_the_owner_references_are_read():
    ownership, _ = instantiate(Ownership)
    view = testing.view({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "n"}})
    assert ownership.analyze(view, MemoryCache()) == []
    assert view.source.calls == [("get", ("metadata", "ownerReferences"))]


@pytest.mark.parametrize(
    "references",
    [
        "nonsense",
        [{"apiVersion": "v1", "kind": "Node"}],
        [{"apiVersion": "v1", "kind": "Node", "name": "n", "controller": "yes"}],
        [3],
    ],
)
def test_no_or_unreadable_owner_references_give_no_edges(references, capsys):
    assert analyze({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}}) == []
    assert analyze({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "ownerReferences": references}}) == []
    assert "Pod /a: unreadable ownerReferences" in capsys.readouterr().err


def test_configuration_narrows_the_kinds_and_names_bad_keys():
    _, interest = instantiate(Ownership, {"kinds": [{"group": "", "kind": "Pod"}]})
    assert interest.kinds == (KindPattern(group="", version=None, kind="Pod"),)
    assert instantiate(Ownership)[1] == Interest.all()
    with pytest.raises(ConfigError) as caught:
        instantiate(Ownership, {"kind": "Pod"})
    assert str(caught.value) == "unknown config key `kind`; accepted: kinds"
    with pytest.raises(ConfigError) as caught:
        instantiate(Ownership, {"kinds": [{"kind": "Pod", "name": "x"}]})
    assert str(caught.value) == "unknown config key `kinds[0].name`; accepted: group, version, kind"
