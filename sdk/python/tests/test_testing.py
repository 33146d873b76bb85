"""The stand-ins for GRW's host."""

import pytest

from grw_sdk import CacheError, Gvk, HttpRequest, HttpResponse, LabelSelector, SendError, testing
from grw_sdk.testing import FakeObject, MemoryCache, RecordingHttp

POD = Gvk("", "v1", "Pod")


def pod(namespace, name, app, owner):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {"app": app},
            "ownerReferences": [{"uid": owner}],
        },
    }


def cache():
    return MemoryCache(
        [
            pod("shop", "web-0", "web", "rs-1"),
            pod("shop", "web-1", "web", "rs-1"),
            pod("shop", "api-0", "api", "rs-2"),
            pod("other", "web-0", "web", "rs-3"),
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}},
        ]
    )


def test_get_by_kind_namespace_and_name():
    objects = cache()
    assert len(objects) == 5
    found = objects.get(POD, "other", "web-0")
    assert found.namespace == "other" and found.label("app") == "web"
    assert objects.get(POD, "shop", "missing") is None
    assert objects.get(Gvk("apps", "v1", "Pod"), "shop", "web-0") is None
    assert objects.get(Gvk("", "v1", "Namespace"), "", "shop") is not None
    assert objects.lookups[0] == ("get", POD, "other", "web-0")


def test_insert_replaces_the_same_object():
    objects = cache().insert(pod("shop", "web-0", "changed", "rs-1"))
    assert len(objects) == 5
    assert objects.get(POD, "shop", "web-0").label("app") == "changed"


def test_list_filters_by_namespace_and_selector():
    objects = cache()
    assert len(objects.list(POD)) == 4
    assert len(objects.list(POD, "shop")) == 3
    assert [v.name for v in objects.list(POD, "shop", "app=web")] == ["web-0", "web-1"]
    assert len(objects.list(POD, "", "app in (web,api),app!=api")) == 3
    assert len(objects.list(POD, "", LabelSelector.parse("app=api"))) == 1
    with pytest.raises(CacheError, match="invalid label selector `app in web`"):
        objects.list(POD, "", "app in web")
    assert objects.lookups[-1] == ("list", POD, "", "app in web")


def test_owned_by_follows_owner_references():
    objects = cache()
    assert [v.name for v in objects.owned_by(POD, "rs-1")] == ["web-0", "web-1"]
    assert objects.owned_by(POD, "nobody") == []


def test_recording_http_scripts_answers():
    http = RecordingHttp().fail("host not allowed").respond(201).respond(HttpResponse(500), body="x")
    request = HttpRequest.post("http://a")
    with pytest.raises(SendError, match="host not allowed"):
        http.send(request)
    assert http.send(request).status == 201
    assert http.send(request).status == 500
    assert http.send(request).status == 200
    assert http.requests == [request] * 4
    assert RecordingHttp().respond(400, "bad", [("a", "b")]).send(request) == HttpResponse(400, [("a", "b")], b"bad")


def test_fake_objects_answer_like_the_host():
    fake = FakeObject(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"b": "2", "a": "1", "n": 1}, "annotations": {"x": "y"}},
            "spec": {"replicas": 3, "template": {"b": 1, "a": "é"}},
        }
    )
    assert fake.gvk() == Gvk("apps", "v1", "Deployment")
    assert (fake.name(), fake.namespace(), fake.uid(), fake.resource_version()) == ("web", "", "", "")
    assert fake.get(["spec", "replicas"]) == "3"
    assert fake.get(["spec", "template"]) == '{"a":"é","b":1}'
    assert fake.get(["spec", "nothing"]) is None
    assert fake.get([]).startswith('{"apiVersion":"apps/v1"')
    assert fake.labels() == [("a", "1"), ("b", "2")]
    assert fake.label("n") is None
    assert fake.annotations() == [("x", "y")]
    assert fake.annotation("x") == "y"
    assert fake.json() == fake.get([])
    assert fake.calls[:3] == [("gvk",), ("name",), ("namespace",)]


def test_events_are_read_through_fake_objects():
    event = testing.event("ADDED", pod("shop", "web-0", "web", "rs-1"), origin="initial")
    assert event.origin == "initial"
    assert isinstance(event.view.source, FakeObject)
    assert event.old_view is None
