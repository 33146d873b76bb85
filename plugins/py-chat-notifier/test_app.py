"""Native tests of py-chat-notifier: the cases of the Rust chat-notifier."""

import copy
import json

import pytest

from app import ChatNotifier
from grw_sdk import ConfigError, GiveUp, HttpResponse, Retry, instantiate, testing
from grw_sdk.testing import RecordingHttp


def notifier(config):
    return instantiate(ChatNotifier, config)[0]


def plain():
    return notifier({"url": "https://hooks.slack.com/services/T0"})


def deployment(replicas, labels, rv):
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "resourceVersion": rv, "generation": 4, "labels": labels},
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "web", "image": "shop/web:1.4"}]}}},
        "status": {"readyReplicas": replicas},
    }


def modified(old, new):
    return testing.event("MODIFIED", new, old=old)


def body(request):
    return json.loads(request.body)


def test_posts_a_summary_of_the_changed_fields():
    n = notifier(
        {"url": "https://hooks.slack.com/services/T0", "channel": "#ops", "username": "grw", "iconEmoji": ":eyes:"}
    )
    event = modified(
        deployment(2, {"app": "web"}, "10"),
        deployment(3, {"app": "web", "tier": "front"}, "11"),
    )
    http = RecordingHttp()
    n.deliver(event, http)
    assert len(http.requests) == 1
    request = http.requests[0]
    assert request.method == "POST"
    assert request.url == "https://hooks.slack.com/services/T0"
    assert request.headers == [("content-type", "application/json")]
    assert body(request) == {
        "text": "*Deployment* `shop/web` modified: spec.replicas 2 → 3; metadata.labels.tier added",
        "channel": "#ops",
        "username": "grw",
        "icon_emoji": ":eyes:",
    }


def test_added_deleted_and_cluster_scoped_objects():
    n = plain()
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "namespace": "default"}}
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "a"}}
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}
    assert n.summary(testing.event("ADDED", pod)) == "*Pod* `default/x` added"
    assert n.summary(testing.event("DELETED", cm)) == "*ConfigMap* `a/b` deleted"
    assert n.summary(testing.event("ADDED", ns)) == "*Namespace* `shop` added"
    # No optional fields: only the text.
    http = RecordingHttp()
    n.deliver(testing.event("ADDED", pod), http)
    assert body(http.requests[0]) == {"text": "*Pod* `default/x` added"}


def test_additions_and_deletions_read_no_more_than_the_name():
    event = testing.event("ADDED", deployment(1, {}, "1"))
    plain().summary(event)
    assert {call[0] for call in event.view.source.calls} <= {"gvk", "namespace", "name"}


def test_removed_fields_list_items_and_long_values():
    n = plain()
    old = deployment(1, {"app": "web", "tier": "front"}, "1")
    new = deployment(1, {"app": "web"}, "2")
    old["spec"]["template"]["spec"]["containers"][0]["image"] = "shop/web:1.4"
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "shop/web:1.5"
    new["spec"]["template"]["spec"]["containers"].append({"name": "sidecar"})
    new["spec"]["note"] = "x" * 60
    assert n.summary(modified(old, new)) == (
        "*Deployment* `shop/web` modified: spec.note added; "
        "spec.template.spec.containers.0.image shop/web:1.4 → shop/web:1.5; "
        "spec.template.spec.containers.1 added; metadata.labels.tier removed"
    )
    old = deployment(1, {}, "1")
    new = copy.deepcopy(old)
    old["spec"]["strategy"] = "a"
    new["spec"]["strategy"] = "y" * 60
    text = n.summary(modified(old, new))
    assert text.endswith("spec.strategy a → " + "y" * 39 + "…"), text


def test_ignored_fields_only_send_nothing():
    old = deployment(2, {"app": "web"}, "10")
    new = deployment(2, {"app": "web"}, "11")
    new["status"]["readyReplicas"] = 0
    new["metadata"]["generation"] = 5
    new["metadata"]["managedFields"] = [{"manager": "kubectl"}]
    http = RecordingHttp()
    plain().deliver(modified(old, new), http)
    assert http.requests == []


def test_ignore_and_max_fields_are_configurable():
    n = notifier(
        {
            "url": "http://chat.internal/hooks/x",
            "ignore": ["spec.replicas", "/metadata/labels/app.kubernetes.io~1version"],
            "maxFields": 2,
        }
    )
    old = deployment(1, {"app.kubernetes.io/version": "1"}, "1")
    new = deployment(2, {"app.kubernetes.io/version": "2", "a": "1", "b": "2", "c": "3"}, "2")
    new["status"]["readyReplicas"] = 7
    # The list replaces the defaults: status and resourceVersion count now,
    # replicas and the version label do not.
    assert n.summary(modified(old, new)) == (
        "*Deployment* `shop/web` modified: status.readyReplicas 1 → 7; metadata.labels.a added; and 3 more"
    )


def test_a_modification_without_its_old_state_is_still_announced():
    event = testing.event("MODIFIED", deployment(1, {}, "1"))
    assert plain().summary(event) == "*Deployment* `shop/web` modified"


def test_text_is_escaped_for_slack():
    old = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c", "namespace": "n"}, "data": {"k": "a<b"}}
    new = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c", "namespace": "n"}, "data": {"k": "a&b>"}}
    assert plain().summary(modified(old, new)) == "*ConfigMap* `n/c` modified: data.k a&lt;b → a&amp;b&gt;"


def test_values_compare_as_json():
    old = {"kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": 1, "b": True, "c": None, "d": "", "e": [1]}}
    new = {"kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": 1.0, "b": 1, "c": None, "d": {}, "e": [1]}}
    assert plain().summary(modified(old, new)) == (
        '*ConfigMap* `c` modified: data.a 1 → 1.0; data.b true → 1; data.d "" → {}'
    )


def test_receiver_answers_decide_retry_or_give_up():
    n = plain()
    event = testing.event("ADDED", deployment(1, {}, "1"))
    http = (
        RecordingHttp()
        .respond(HttpResponse(500, body=b"oops"))
        .respond(HttpResponse(429))
        .fail("cannot connect: connection refused")
        .respond(HttpResponse(400, body=b"invalid_payload"))
        .respond(HttpResponse(404, body=b"no_service"))
    )

    def outcome():
        try:
            n.deliver(event, http)
        except (Retry, GiveUp) as e:
            return e

    assert [outcome() for _ in range(5)] == [
        Retry("receiver answered 500: oops"),
        Retry("receiver answered 429"),
        Retry("cannot connect: connection refused"),
        GiveUp("receiver answered 400: invalid_payload"),
        GiveUp("receiver answered 404: no_service"),
    ]
    assert outcome() is None


@pytest.mark.parametrize(
    "config,message",
    [
        ({}, "config is not valid: missing field `url`"),
        (
            {"url": "hooks.slack.com/services/T0"},
            'config key `url`: expected the webhook\'s http:// or https:// URL, got "hooks.slack.com/services/T0"',
        ),
        ({"url": "https://x", "maxFields": 0}, "config key `maxFields`: must be at least 1"),
        (
            {"url": "https://x", "icon": ":x:"},
            "unknown config key `icon`; accepted: url, channel, username, iconEmoji, ignore, maxFields",
        ),
        (
            {"url": "https://x", "ignore": ["a..b"]},
            "config key `ignore[0]`: field path `a..b` has an empty segment; write `a.b.c`, or a JSON pointer like `/a/b`",
        ),
        ({"url": "https://x", "channel": 5}, "config key `channel`: invalid type: integer `5`, expected a string"),
    ],
)
def test_bad_configuration_is_rejected_with_the_key(config, message):
    with pytest.raises(ConfigError) as caught:
        instantiate(ChatNotifier, config)
    assert str(caught.value) == message


def test_the_manifest_config_is_accepted():
    with open(__file__.replace("test_app.py", "py-chat-notifier.json")) as manifest:
        n = notifier(json.load(manifest)["config"])
    assert (n.channel, n.username, n.icon_emoji, n.max_fields) == ("#cluster-changes", "grw", ":eyes:", 5)
