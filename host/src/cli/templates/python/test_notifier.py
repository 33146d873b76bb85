"""Unit tests of the notifier, run natively: python3 -m pytest"""

import json

import pytest

from app import Plugin
from grw_sdk import Retry, instantiate, testing

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a", "namespace": "shop"}}


def test_posts_the_event():
    plugin, _ = instantiate(Plugin, {"url": "https://example.com/hook"})
    http = testing.RecordingHttp().respond(204)
    plugin.deliver(testing.event("ADDED", POD), http)
    assert http.requests[0].url == "https://example.com/hook"
    assert json.loads(http.requests[0].body) == {"type": "ADDED", "kind": "Pod", "namespace": "shop", "name": "a"}


def test_server_errors_are_retried():
    plugin, _ = instantiate(Plugin, {"url": "https://example.com/hook"})
    with pytest.raises(Retry):
        plugin.deliver(testing.event("ADDED", POD), testing.RecordingHttp().respond(503))
