"""Field paths, object views and events: what is read, and how."""

import json

import pytest

from grw_sdk import (
    MISSING,
    Event,
    EventType,
    FieldPath,
    Gvk,
    Interest,
    KindPattern,
    ObjectRef,
    ObjectView,
    Origin,
    testing,
)
from grw_sdk import model


def pod():
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-0",
            "namespace": "shop",
            "uid": "pod-uid",
            "resourceVersion": "7",
            "labels": {"app": "web", "app.kubernetes.io/name": "shop-web", "n": 3},
            "annotations": {"note": "hi", "count": 3},
        },
        "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}], "nodeName": None},
        "status": {"phase": "Running"},
    }


# Field paths, spelt as the Rust SDK spells them.


def test_dotted_paths_and_pointers_reach_the_same_segments():
    assert FieldPath("spec.containers.0").segments == ("spec", "containers", "0")
    assert FieldPath("/spec/containers/0").segments == ("spec", "containers", "0")
    assert FieldPath("spec.containers.0") == FieldPath("/spec/containers/0")
    assert FieldPath("/metadata/annotations/a~1b~0c").segments == ("metadata", "annotations", "a/b~c")
    assert FieldPath("/").segments == ("",)
    assert str(FieldPath("/a~0b/c")) == "/a~0b/c"
    assert FieldPath("/a~0b/c").get({"a~b": {"c": 1}}) == 1


@pytest.mark.parametrize(
    "text,message",
    [
        ("", "field path is empty"),
        (".spec", "field path `.spec` has an empty segment; write `a.b.c`, or a JSON pointer like `/a/b`"),
        ("spec.", "field path `spec.` has an empty segment; write `a.b.c`, or a JSON pointer like `/a/b`"),
        ("a..b", "field path `a..b` has an empty segment; write `a.b.c`, or a JSON pointer like `/a/b`"),
        ("/a/~2", "field path `/a/~2`: `~` must be followed by `0` or `1` in a JSON pointer"),
        ("/a~", "field path `/a~`: `~` must be followed by `0` or `1` in a JSON pointer"),
    ],
)
def test_malformed_paths_are_rejected(text, message):
    with pytest.raises(ValueError) as caught:
        FieldPath(text)
    assert str(caught.value) == message


def test_paths_reach_keys_and_array_indexes():
    value = pod()
    assert FieldPath("status.phase").get(value) == "Running"
    assert FieldPath("spec.containers.0.image").get(value) == "nginx:1.27"
    assert FieldPath("/metadata/labels/app.kubernetes.io~1name").get(value) == "shop-web"
    assert FieldPath("spec.containers.1.image").get(value) is None
    assert FieldPath("spec.containers.x").get(value, "none") == "none"
    assert FieldPath("spec.containers.-1").get(value, "none") == "none"
    assert FieldPath("spec.containers.+0.name").get(value) == "main"
    assert FieldPath("spec.containers.00.name").get(value) == "main"
    assert FieldPath("status.phase.deeper").get(value, MISSING) is MISSING
    assert FieldPath("spec.nodeName").get(value, MISSING) is None


def test_paths_from_segments():
    path = FieldPath.of(["spec", "containers", 0, "image"])
    assert path.segments == ("spec", "containers", "0", "image")
    assert path == FieldPath("spec.containers.0.image")
    assert str(FieldPath.of(["metadata", "labels", "a/b"])) == "/metadata/labels/a~1b"
    assert FieldPath.of(path) is path


def test_paths_written_in_decide_are_parsed_once():
    assert FieldPath.of("status.phase") is FieldPath.of("status.phase")
    assert FieldPath.of(("status", "phase")) is FieldPath.of(("status", "phase"))
    # Lists cannot be remembered (they may change); they still work.
    assert FieldPath.of(["status", "phase"]) == FieldPath("status.phase")
    # A malformed path is refused every time, never remembered.
    for _ in range(2):
        with pytest.raises(ValueError, match="empty segment"):
            FieldPath.of("status..phase")


def test_remembered_paths_are_bounded():
    for i in range(model._REMEMBERED + 10):
        assert FieldPath.of(f"data.key{i}").segments == ("data", f"key{i}")
    assert len(model._PATHS) <= model._REMEMBERED


# Views: what is fetched.


def test_a_view_answers_from_the_host_one_question_at_a_time():
    view = testing.view(pod())
    source = view.source
    assert view.name == "web-0"
    assert view.name == "web-0"
    assert view.namespace == "shop"
    assert view.uid == "pod-uid"
    assert view.resource_version == "7"
    assert view.gvk == Gvk("", "v1", "Pod")
    assert view.kind == "Pod"
    assert view.field("status.phase") == "Running"
    assert view.field(["spec", "containers", "0", "image"]) == "nginx:1.27"
    assert view.field("spec.missing") is None
    assert view.field("spec.missing", default=0) == 0
    assert view.label("app") == "web"
    assert view.label("n") is None
    assert view.annotation("note") == "hi"
    assert view.annotation("count") is None
    assert source.calls == [
        ("name",),
        ("namespace",),
        ("uid",),
        ("resource_version",),
        ("gvk",),
        ("get", ("status", "phase")),
        ("get", ("spec", "containers", "0", "image")),
        ("get", ("spec", "missing")),
        ("get", ("spec", "missing")),
        ("label", "app"),
        ("label", "n"),
        ("annotation", "note"),
        ("annotation", "count"),
    ]


def test_all_labels_are_fetched_once_and_answer_single_lookups():
    view = testing.view(pod())
    assert dict(view.labels) == {"app": "web", "app.kubernetes.io/name": "shop-web"}
    assert list(view.labels) == ["app", "app.kubernetes.io/name"]
    assert view.label("app") == "web"
    assert dict(view.annotations) == {"note": "hi"}
    assert view.annotation("note") == "hi"
    assert view.source.calls == [("labels",), ("annotations",)]
    with pytest.raises(TypeError):
        view.labels["x"] = "y"


def test_the_whole_object_is_fetched_once_and_then_answers_everything():
    view = testing.view(pod())
    assert view.object["status"]["phase"] == "Running"
    assert view.object is view.object
    assert view.field("spec.containers.0.name") == "main"
    assert view.name == "web-0"
    assert view.label("app") == "web"
    assert view.gvk == Gvk("", "v1", "Pod")
    assert json.loads(view.json) == pod()
    assert view.source.calls == [("json",)]


def test_views_of_dicts_and_json_text():
    for view in (ObjectView.from_dict(pod()), ObjectView.from_json(json.dumps(pod()))):
        assert view.source is None
        assert view.to_ref() == ObjectRef(Gvk("", "v1", "Pod"), "shop", "web-0")
        assert view.field("/metadata/labels/app") == "web"
        assert view.annotation("count") is None
        assert not view.is_cluster_scoped
    empty = ObjectView.from_dict({"metadata": {"name": 5, "labels": "x"}})
    assert (empty.name, empty.namespace, empty.gvk, dict(empty.labels)) == ("", "", Gvk(), {})
    assert empty.is_cluster_scoped


def test_malformed_path_strings_raise():
    with pytest.raises(ValueError, match="empty segment"):
        testing.view(pod()).field("a..b")


# Events.


def test_events_read_the_object_and_its_previous_state():
    old = pod()
    old["status"]["phase"] = "Pending"
    event = testing.event("MODIFIED", pod(), old=old, origin="relist")
    assert event.type is EventType.MODIFIED and event.type == "MODIFIED"
    assert event.origin is Origin.RELIST and event.origin == "relist"
    assert (event.name, event.namespace, event.kind, event.uid) == ("web-0", "shop", "Pod", "pod-uid")
    assert event.gvk.api_version == "v1"
    assert event.field("status.phase") == "Running"
    assert event.old_field("status.phase") == "Pending"
    assert event.label("app") == "web"
    assert event.annotation("note") == "hi"
    assert event.has_old_object
    assert event.old_view.source.calls == [("get", ("status", "phase"))]
    assert event.old_object["status"]["phase"] == "Pending"
    assert event.object["status"]["phase"] == "Running"
    assert json.loads(event.json)["metadata"]["name"] == "web-0"


def test_events_without_a_previous_state():
    event = testing.event(EventType.DELETED, pod())
    assert event.origin is Origin.WATCH
    assert not event.has_old_object
    assert event.old_object is None
    assert event.old_field("status.phase", default="none") == "none"
    assert repr(event) == "<Event DELETED Pod shop/web-0 (watch)>"
    with pytest.raises(ValueError):
        Event("CHANGED", ObjectView.from_dict(pod()))


def test_gvk_and_api_version():
    apps = Gvk.from_api_version("apps/v1", "Deployment")
    assert apps == Gvk("apps", "v1", "Deployment")
    assert apps.api_version == "apps/v1"
    assert str(apps) == "apps/v1, Kind=Deployment"
    core = Gvk.from_api_version("v1", "Pod")
    assert (core.group, core.api_version) == ("", "v1")


# Interests.


def test_interest_matches_kinds_and_event_types():
    everything = Interest.all()
    assert everything.kinds == () and everything.event_types == ()
    assert everything.matches(Gvk("x", "v9", "Thing"), "DELETED")

    interest = Interest(
        kinds=["Pod", KindPattern(group="apps", version="v1", kind="Deployment")],
        event_types=["MODIFIED", EventType.MODIFIED, "ADDED"],
    )
    assert interest.kinds == (KindPattern(kind="Pod"), KindPattern("apps", "v1", "Deployment"))
    assert interest.event_types == (EventType.MODIFIED, EventType.ADDED)
    pod_gvk = Gvk("", "v1", "Pod")
    assert interest.matches(pod_gvk, "MODIFIED")
    assert not interest.matches(pod_gvk, "DELETED")
    assert interest.matches(Gvk("apps", "v1", "Deployment"), "ADDED")
    assert not interest.matches(Gvk("apps", "v1beta1", "Deployment"), "ADDED")
    assert Interest(kinds="Pod").matches_event(testing.event("ADDED", pod()))
    assert not Interest(event_types="DELETED").matches_event(testing.event("ADDED", pod()))


def test_kind_patterns():
    deployment = Gvk("apps", "v1", "Deployment")
    assert KindPattern().matches(deployment)
    assert KindPattern(group="apps").matches(deployment)
    assert not KindPattern(group="").matches(deployment)
    assert KindPattern.of(deployment).matches(deployment)
    assert not KindPattern("", "v1", "Deployment").matches(deployment)
    with pytest.raises(TypeError):
        KindPattern.of(3)
