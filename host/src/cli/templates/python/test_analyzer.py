"""Unit tests of the analyzer, run natively: python3 -m pytest"""

from app import Plugin
from grw_sdk import instantiate, testing


def test_a_pod_uses_the_config_maps_its_volumes_name():
    plugin, _ = instantiate(Plugin)
    pod = testing.view(
        {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"volumes": [{"name": "c", "configMap": {"name": "settings"}}, {"name": "e", "emptyDir": {}}]},
        }
    )
    found = plugin.analyze(pod, testing.MemoryCache())
    assert [(r.relation, r.target.name) for r in found] == [("uses", "settings")]
