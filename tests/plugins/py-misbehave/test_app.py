"""Native tests of py-misbehave's configuration (the misbehaviour itself is
for GRW's limits to stop, in the daemon's tests)."""

import pytest

from app import Misbehave
from grw_sdk import ConfigError, instantiate, testing


def test_pass_is_the_default_and_passes_everything():
    plugin, _ = instantiate(Misbehave)
    assert plugin.action == "pass"
    assert plugin.decide(testing.event("ADDED", {"kind": "Pod"}))


@pytest.mark.parametrize("action", ["pass", "loop", "hog"])
def test_the_actions(action):
    assert instantiate(Misbehave, {"do": action})[0].action == action


def test_unknown_actions_are_rejected():
    with pytest.raises(ConfigError) as caught:
        instantiate(Misbehave, {"do": "crash"})
    assert str(caught.value) == "config key `do`: unknown value `crash`, expected one of `pass`, `loop`, `hog`"
