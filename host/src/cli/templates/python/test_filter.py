"""Unit tests of the filter, run natively: python3 -m pytest"""

import pytest

from app import Plugin
from grw_sdk import ConfigError, instantiate, testing


def pod(labels):
    return testing.event(
        "ADDED",
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "shop", "labels": labels}},
    )


def test_passes_objects_with_the_label():
    plugin, _ = instantiate(Plugin, {"label": "team"})
    assert plugin.decide(pod({"team": "web"}))
    assert not plugin.decide(pod({"app": "web"}))


def test_a_config_without_the_label_is_refused():
    with pytest.raises(ConfigError, match="label"):
        instantiate(Plugin, {})
