"""Native tests of py-restart-filter: pytest, no WebAssembly runtime."""

import pytest

from app import RestartFilter, restarts
from grw_sdk import ConfigError, Gvk, instantiate, testing


def pod(counts=(), init_counts=(), event_type="MODIFIED"):
    def statuses(values):
        return [{"name": f"c{i}", "restartCount": n, "image": "x"} for i, n in enumerate(values)]

    return testing.event(
        event_type,
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p", "namespace": "shop"},
            "spec": {"containers": [{"name": "c0"}]},
            "status": {
                "phase": "Running",
                "containerStatuses": statuses(counts),
                "initContainerStatuses": statuses(init_counts),
            },
        },
    )


def test_restarts_of_every_container_add_up():
    plugin, interest = instantiate(RestartFilter, {"minRestarts": 3})
    assert not plugin.decide(pod([1, 1]))
    assert plugin.decide(pod([1, 1], [1]))
    assert plugin.decide(pod([5]))
    assert restarts(pod([2, 3], [4])) == 9
    assert interest.matches(Gvk("", "v1", "Pod"), "ADDED")
    assert not interest.matches(Gvk("apps", "v1", "Deployment"), "ADDED")


def test_a_pod_without_statuses_has_no_restarts():
    plugin, _ = instantiate(RestartFilter)
    pending = testing.event("ADDED", {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})
    assert not plugin.decide(pending)
    assert plugin.decide(pod([1]))
    assert instantiate(RestartFilter, {"minRestarts": 0})[0].decide(pending)


def test_odd_counts_are_skipped():
    assert restarts(pod([2, "3", None, 1.0, True, -4])) == 2
    odd = testing.event("MODIFIED", {"kind": "Pod", "status": {"containerStatuses": {"a": 1}, "initContainerStatuses": [5, {"restartCount": 1}]}})
    assert restarts(odd) == 1


def test_only_the_status_lists_are_fetched():
    plugin, _ = instantiate(RestartFilter)
    event = pod([0, 2])
    assert plugin.decide(event)
    assert event.view.source.calls == [
        ("get", ("status", "containerStatuses")),
        ("get", ("status", "initContainerStatuses")),
    ]


@pytest.mark.parametrize(
    "config,message",
    [
        ({"minRestarts": -1}, "config key `minRestarts`: must be at least 0"),
        ({"minRestarts": "2"}, 'config key `minRestarts`: invalid type: string "2", expected an integer'),
        ({"min": 1}, "unknown config key `min`; accepted: minRestarts"),
    ],
)
def test_config_errors_name_the_key(config, message):
    with pytest.raises(ConfigError) as caught:
        instantiate(RestartFilter, config)
    assert str(caught.value) == message
