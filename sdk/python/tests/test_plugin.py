"""instantiate() and the export adapters, against stand-ins for the
bindings componentize-py generates (``wit_world``, ``componentize_py_types``)."""

import sys
import types as pytypes
from dataclasses import dataclass
from enum import Enum

import pytest

import grw_sdk
from grw_sdk import (
    Config,
    ConfigError,
    GiveUp,
    Gvk,
    HttpRequest,
    Interest,
    KindPattern,
    ObjectRef,
    Relationship,
    SendError,
)
from grw_sdk.plugin import HOST_CACHE, HOST_HTTP
from grw_sdk.testing import FakeObject


class RestartFilter:
    interest = Interest(kinds=["Pod"], event_types=["MODIFIED"])

    def __init__(self, config: Config):
        self.min = config.int("min", default=1, minimum=0)

    def decide(self, event):
        return event.field("status.restarts", 0) >= self.min


def test_instantiate_reads_the_config_and_the_interest():
    plugin, interest = grw_sdk.instantiate(RestartFilter, {"min": 2})
    assert plugin.min == 2
    assert interest == Interest(kinds=[KindPattern(kind="Pod")], event_types=["MODIFIED"])
    plugin, _ = grw_sdk.instantiate(RestartFilter, '{"min": 3}')
    assert plugin.min == 3
    assert grw_sdk.instantiate(RestartFilter)[0].min == 1
    with pytest.raises(ConfigError, match=r"^unknown config key `mn`; accepted: min$"):
        grw_sdk.instantiate(RestartFilter, {"mn": 2})


def test_instantiate_takes_the_interest_from_an_attribute_a_method_or_the_default():
    class Everything:
        def __init__(self, config):
            pass

    class Method:
        def __init__(self, config):
            self.kind = config.str("kind", "Pod")

        def interest(self):
            return Interest(kinds=[self.kind])

    class Wrong:
        interest = ["Pod"]

        def __init__(self, config):
            pass

    assert grw_sdk.instantiate(Everything)[1] == Interest.all()
    assert grw_sdk.instantiate(Everything, interest=Interest(kinds="Job"))[1] == Interest(kinds="Job")
    assert grw_sdk.instantiate(Method, {"kind": "Job"})[1] == Interest(kinds="Job")
    with pytest.raises(TypeError, match="must be a grw_sdk.Interest"):
        grw_sdk.instantiate(Wrong)
    function, interest = grw_sdk.instantiate(len)
    assert function is len and interest == Interest.all()
    with pytest.raises(ConfigError, match="the plugin takes no keys"):
        grw_sdk.instantiate(len, {"x": 1})


# Stand-ins for the generated bindings, as far as the adapters use them.


class Err(Exception):
    def __init__(self, value):
        super().__init__(value)
        self.value = value


class EventType(Enum):
    ADDED = 0
    MODIFIED = 1
    DELETED = 2


class Origin(Enum):
    INITIAL = 0
    WATCH = 1
    RELIST = 2


class Direction(Enum):
    OUTGOING = 0
    INCOMING = 1


@dataclass
class WitGvk:
    group: str
    version: str
    kind: str


@dataclass
class WitKindPattern:
    group: object
    version: object
    kind: object


@dataclass
class WitInterest:
    kinds: list
    event_types: list


@dataclass
class WitEvent:
    event_type: EventType
    origin: Origin


@dataclass
class WitObjectRef:
    gvk: WitGvk
    namespace: str
    name: str


@dataclass
class WitRelationship:
    relation: str
    direction: Direction
    target: WitObjectRef
    attributes: list


@dataclass
class DeliveryError_Retry:
    value: str


@dataclass
class DeliveryError_GiveUp:
    value: str


@dataclass
class Request:
    method: str
    url: str
    headers: list
    body: bytes


@dataclass
class Response:
    status: int
    headers: list
    body: bytes


def module(name, **attributes):
    found = pytypes.ModuleType(name)
    found.__dict__.update(attributes)
    return found


@pytest.fixture
def host(monkeypatch):
    """Installs the stand-in bindings; returns what the host was asked."""
    asked = pytypes.SimpleNamespace(sent=[], answers=[], lookups=[], objects={})

    def send(request):
        asked.sent.append(request)
        answer = asked.answers.pop(0)
        if isinstance(answer, str):
            raise Err(answer)
        return answer

    def cache_get(gvk, namespace, name):
        asked.lookups.append(("get", gvk, namespace, name))
        value = asked.objects.get(name)
        return None if value is None else FakeObject(value)

    def cache_list(gvk, namespace, selector):
        asked.lookups.append(("list", gvk, namespace, selector))
        if selector == "bad":
            raise Err("invalid label selector `bad`")
        return [FakeObject(v) for v in asked.objects.values()]

    def owned_by(gvk, uid):
        asked.lookups.append(("owned_by", gvk, uid))
        return []

    wit_types = module(
        "wit_world.imports.types",
        EventType=EventType,
        Origin=Origin,
        Gvk=WitGvk,
        KindPattern=WitKindPattern,
        Interest=WitInterest,
        ObjectRef=WitObjectRef,
    )
    modules = {
        "componentize_py_types": module("componentize_py_types", Err=Err),
        "wit_world.imports.types": wit_types,
        "wit_world.imports.outbound_http": module(
            "wit_world.imports.outbound_http", Request=Request, Response=Response, send=send
        ),
        "wit_world.imports.cache": module(
            "wit_world.imports.cache", get=cache_get, list=cache_list, owned_by=owned_by
        ),
        "wit_world.exports.notifier": module(
            "wit_world.exports.notifier",
            DeliveryError_Retry=DeliveryError_Retry,
            DeliveryError_GiveUp=DeliveryError_GiveUp,
        ),
        "wit_world.exports.analyzer": module(
            "wit_world.exports.analyzer", Direction=Direction, Relationship=WitRelationship
        ),
    }
    modules["wit_world.imports"] = module(
        "wit_world.imports",
        types=wit_types,
        outbound_http=modules["wit_world.imports.outbound_http"],
        cache=modules["wit_world.imports.cache"],
    )
    modules["wit_world.exports"] = module(
        "wit_world.exports",
        notifier=modules["wit_world.exports.notifier"],
        analyzer=modules["wit_world.exports.analyzer"],
    )
    modules["wit_world"] = module(
        "wit_world", imports=modules["wit_world.imports"], exports=modules["wit_world.exports"]
    )
    for name, value in modules.items():
        monkeypatch.setitem(sys.modules, name, value)
    return asked


def pod(restarts):
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web-0", "namespace": "shop"},
        "status": {"restarts": restarts},
    }


def test_filter_export(host):
    Filter = grw_sdk.export_filter(RestartFilter)
    event = WitEvent(EventType.MODIFIED, Origin.RELIST)
    # Nothing passes before a successful init.
    assert Filter().decide(event, FakeObject(pod(5)), None) is False
    interest = Filter().init('{"min": 2}')
    assert interest == WitInterest([WitKindPattern(None, None, "Pod")], [EventType.MODIFIED])
    # A new export object for each call, as componentize-py may make.
    assert Filter().decide(event, FakeObject(pod(2)), FakeObject(pod(1))) is True
    assert Filter().decide(event, FakeObject(pod(1)), None) is False
    # A rejected configuration clears the instance.
    with pytest.raises(Err) as caught:
        Filter().init('{"min": -1}')
    assert caught.value.value == "config key `min`: must be at least 0"
    assert Filter().decide(event, FakeObject(pod(5)), None) is False


def test_filter_export_sees_the_event_as_sent(host):
    seen = []

    def decide(event):
        seen.append((event.type, event.origin, event.name, event.has_old_object, event.old_field("status.restarts")))
        return 1

    Filter = grw_sdk.export_filter(decide, interest=Interest(kinds="Pod"))
    Filter().init("")
    assert Filter().decide(WitEvent(EventType.DELETED, Origin.INITIAL), FakeObject(pod(0)), FakeObject(pod(4))) is True
    assert seen == [("DELETED", "initial", "web-0", True, 4)]
    with pytest.raises(Err, match="takes no keys"):
        Filter().init('{"x": 1}')


def test_init_errors_that_are_not_about_configuration(host):
    class Broken:
        def __init__(self, config):
            raise KeyError("oops")

        def decide(self, event):
            return True

    with pytest.raises(Err) as caught:
        grw_sdk.export_filter(Broken)().init("{}")
    assert caught.value.value == "KeyError: 'oops'"


def test_exceptions_in_calls_propagate_natively(host):
    def decide(event):
        raise RuntimeError("boom")

    Filter = grw_sdk.export_filter(decide)
    Filter().init("{}")
    with pytest.raises(RuntimeError, match="boom"):
        Filter().decide(WitEvent(EventType.ADDED, Origin.WATCH), FakeObject(pod(0)), None)


def test_exports_check_the_plugin():
    with pytest.raises(TypeError, match="RestartFilter has no `deliver` method"):
        grw_sdk.export_notifier(RestartFilter)
    with pytest.raises(TypeError, match="expected a plugin class or a `analyze` function"):
        grw_sdk.export_analyzer(3)


class Webhook:
    def __init__(self, config):
        self.url = config.str("url", required=True)

    def deliver(self, event, http):
        if event.name == "send-directly":
            http.send(HttpRequest.post(self.url))
        elif event.name == "give-up":
            raise GiveUp("not for us")
        else:
            http.post_json(self.url, {"name": event.name})


def test_notifier_export_sorts_outcomes_into_the_wit_variants(host):
    Notifier = grw_sdk.export_notifier(Webhook)
    event = WitEvent(EventType.ADDED, Origin.WATCH)

    def deliver(name):
        value = {"metadata": {"name": name}}
        try:
            return Notifier().deliver(event, FakeObject(value), None)
        except Err as e:
            return e.value

    assert deliver("x") == DeliveryError_GiveUp("plugin is not initialised")
    assert Notifier().init('{"url": "https://hook"}') == WitInterest([], [])
    host.answers += [
        Response(204, [], b""),
        Response(503, [], b"down"),
        "connection refused",
        Response(404, [], b""),
        "host not allowed",
    ]
    assert deliver("web") is None
    assert host.sent[0] == Request(
        "POST", "https://hook", [("content-type", "application/json")], b'{"name":"web"}'
    )
    assert deliver("web") == DeliveryError_Retry("receiver answered 503: down")
    assert deliver("web") == DeliveryError_Retry("connection refused")
    assert deliver("web") == DeliveryError_GiveUp("receiver answered 404")
    assert deliver("send-directly") == DeliveryError_Retry("host not allowed")
    assert deliver("give-up") == DeliveryError_GiveUp("not for us")


def test_host_http_converts_requests_and_answers(host):
    host.answers += [Response(200, [("a", "b")], b"ok"), "refused"]
    response = HOST_HTTP.send(HttpRequest.get("http://x").header("h", "v"))
    assert (response.status, response.headers, response.text) == (200, [("a", "b")], "ok")
    assert host.sent[0] == Request("GET", "http://x", [("h", "v")], b"")
    with pytest.raises(SendError, match="refused"):
        HOST_HTTP.send(HttpRequest.get("http://x"))


class Ownerish:
    interest = Interest(kinds=[KindPattern(group="", kind="Pod")])

    def __init__(self, config):
        pass

    def analyze(self, object, cache):
        node = cache.get(Gvk("", "v1", "Node"), "", object.field("spec.nodeName"))
        edges = [Relationship.outgoing("runs-on", node.to_ref(), ready=True)]
        for other in cache.list(Gvk("", "v1", "Pod"), object.namespace, "app=web"):
            edges.append(Relationship.outgoing("peer", other.to_ref()).with_attribute("a/b", 1))
        return edges


def test_analyzer_export_converts_relationships_and_lookups(host):
    Analyzer = grw_sdk.export_analyzer(Ownerish)
    assert Analyzer().analyze(FakeObject({})) == []
    assert Analyzer().init("{}") == WitInterest([WitKindPattern("", None, "Pod")], [])
    host.objects["node-a"] = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-a"}}
    analyzed = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"}, "spec": {"nodeName": "node-a"}}
    edges = Analyzer().analyze(FakeObject(analyzed))
    node = WitObjectRef(WitGvk("", "v1", "Node"), "", "node-a")
    assert edges == [
        WitRelationship("runs-on", Direction.OUTGOING, node, [("ready", "true")]),
        WitRelationship("peer", Direction.OUTGOING, node, [("a/b", "1")]),
    ]
    assert host.lookups == [
        ("get", WitGvk("", "v1", "Node"), "", "node-a"),
        ("list", WitGvk("", "v1", "Pod"), "shop", "app=web"),
    ]


def test_host_cache_lookups(host):
    from grw_sdk import CacheError

    assert HOST_CACHE.get(Gvk("", "v1", "Node"), "", "none") is None
    assert HOST_CACHE.owned_by(Gvk("apps", "v1", "ReplicaSet"), "u1") == []
    with pytest.raises(CacheError, match="invalid label selector `bad`"):
        HOST_CACHE.list(Gvk("", "v1", "Pod"), "", "bad")
    assert host.lookups[1] == ("owned_by", WitGvk("apps", "v1", "ReplicaSet"), "u1")


def test_relationships():
    owner = ObjectRef(Gvk("apps", "v1", "ReplicaSet"), "shop", "web-7d9f")
    edge = Relationship.incoming("owns", owner, controller=True)
    assert edge.direction == "incoming"
    assert edge.attributes == (("controller", "true"),)
    assert edge.with_attribute("x", False).attributes == (("controller", "true"), ("x", "false"))
    assert Relationship.outgoing("selects", owner).attributes == ()
