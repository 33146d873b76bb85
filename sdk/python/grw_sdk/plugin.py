"""Turning plugin classes into the component's exports."""

from __future__ import annotations

import inspect
import os
import traceback
from typing import Any, Callable

from . import log
from .cache import Cache, CacheError, Direction, Relationship
from .config import Config
from .http import GiveUp, Http, HttpRequest, HttpResponse, Retry, SendError
from .model import Event, EventType, Gvk, Interest, ObjectView, Origin
from .selector import LabelSelector

__all__ = ["export_analyzer", "export_filter", "export_notifier", "instantiate"]


def instantiate(
    plugin: Any,
    config: str | dict | Config | None = None,
    *,
    interest: Interest | None = None,
) -> tuple[Any, Interest]:
    """Creates a plugin the way GRW's ``init`` does, for unit tests: calls
    ``plugin`` with a :class:`Config` of ``config`` (JSON text, a dict, or
    nothing for ``{}``), rejects keys it did not read, and returns the
    instance and its interest. Raises :class:`ConfigError` (or whatever the
    constructor raised).

    The interest is the instance's ``interest`` attribute (an
    :class:`Interest`, or a method returning one), else ``interest``, else
    everything. A plain function (the ``decide``/``deliver``/``analyze``
    logic of a plugin without configuration) is returned as it is.
    """
    config = config if isinstance(config, Config) else Config(config)
    if inspect.isclass(plugin):
        instance = plugin(config)
        found = getattr(instance, "interest", None)
        if callable(found):
            found = found()
    else:
        instance, found = plugin, None
    config.done()
    found = found if found is not None else interest if interest is not None else Interest.all()
    if not isinstance(found, Interest):
        raise TypeError(f"a plugin's `interest` must be a grw_sdk.Interest, not {found!r}")
    return instance, found


def export_filter(plugin: Any, *, interest: Interest | None = None) -> type:
    """The component's ``grw:plugin/filter`` export for ``plugin``: bind it
    to ``Filter`` in the app module::

        Filter = grw_sdk.export_filter(RestartFilter)

    ``plugin`` is a class that GRW's ``init`` calls with the
    :class:`Config` and whose ``decide(event) -> bool`` judges each
    :class:`Event` (see :func:`instantiate` for the interest), or a plain
    ``decide(event)`` function for a filter without configuration.

    A raised :class:`ValueError` (such as :class:`ConfigError`) in the
    constructor rejects the configuration with its message. An exception
    escaping ``decide`` is logged with its traceback and traps, so the
    manifest's ``failMode`` applies. Before a successful ``init`` nothing
    passes.
    """
    state = _State(plugin, "decide", interest)

    class Filter:
        """``grw:plugin/filter``, exported for the plugin."""

        def init(self, config: str) -> Any:
            return state.init(config)

        def decide(self, event: Any, object: Any, old_object: Any) -> bool:
            call = state.instance_call or state.call()
            if call is None:
                return False
            try:
                return bool(call(_event(event, object, old_object)))
            except BaseException:
                _crash("decide")
                raise

    return Filter


def export_notifier(plugin: Any, *, interest: Interest | None = None) -> type:
    """The component's ``grw:plugin/notifier`` export for ``plugin``: bind
    it to ``Notifier`` in the app module::

        Notifier = grw_sdk.export_notifier(ChatNotifier)

    ``plugin`` is a class as for :func:`export_filter` whose
    ``deliver(event, http)`` delivers an :class:`Event` with the
    :class:`Http` client, or a plain ``deliver(event, http)`` function.

    ``deliver`` raises :class:`Retry` for failures that may pass later and
    :class:`GiveUp` for ones that never will (:meth:`Http.deliver` and
    :meth:`Http.post_json` raise them for you); a :class:`SendError` it
    lets through counts as :class:`Retry`. Any other exception is logged
    and traps, which GRW retries like a receiver that is down. Before a
    successful ``init`` every delivery is given up.
    """
    state = _State(plugin, "deliver", interest)

    class Notifier:
        """``grw:plugin/notifier``, exported for the plugin."""

        def init(self, config: str) -> Any:
            return state.init(config)

        def deliver(self, event: Any, object: Any, old_object: Any) -> None:
            from componentize_py_types import Err
            from wit_world.exports import notifier

            call = state.call()
            if call is None:
                raise Err(notifier.DeliveryError_GiveUp("plugin is not initialised"))
            try:
                call(_event(event, object, old_object), HOST_HTTP)
                return
            except Retry as e:
                error: Any = notifier.DeliveryError_Retry(e.message)
            except SendError as e:
                error = notifier.DeliveryError_Retry(str(e))
            except GiveUp as e:
                error = notifier.DeliveryError_GiveUp(e.message)
            except BaseException:
                _crash("deliver")
                raise
            raise Err(error)

    return Notifier


def export_analyzer(plugin: Any, *, interest: Interest | None = None) -> type:
    """The component's ``grw:plugin/analyzer`` export for ``plugin``: bind
    it to ``Analyzer`` in the app module::

        Analyzer = grw_sdk.export_analyzer(Ownership)

    ``plugin`` is a class as for :func:`export_filter` whose
    ``analyze(object, cache)`` returns the :class:`Relationship` list of an
    :class:`ObjectView`, looking up others in the :class:`Cache`, or a plain
    ``analyze(object, cache)`` function. The interest's kinds are the kinds
    analyzed. An exception escaping ``analyze`` is logged and traps. Before
    a successful ``init`` nothing is related.
    """
    state = _State(plugin, "analyze", interest)

    class Analyzer:
        """``grw:plugin/analyzer``, exported for the plugin."""

        def init(self, config: str) -> Any:
            return state.init(config)

        def analyze(self, object: Any) -> list[Any]:
            call = state.call()
            if call is None:
                return []
            try:
                return [_relationship(r) for r in call(ObjectView(object), HOST_CACHE)]
            except BaseException:
                _crash("analyze")
                raise

    return Analyzer


class _State:
    """One exported plugin: what to create at ``init``, and what it created.

    Module-level rather than per export object, as the component may create
    a new export object for each call.
    """

    def __init__(self, plugin: Any, method: str, interest: Interest | None):
        if inspect.isclass(plugin):
            if not callable(getattr(plugin, method, None)):
                raise TypeError(f"{plugin.__name__} has no `{method}` method")
        elif not callable(plugin):
            raise TypeError(f"expected a plugin class or a `{method}` function, not {plugin!r}")
        self.plugin = plugin
        self.method = method
        self.interest = interest
        self.instance_call: Callable[..., Any] | None = None

    def init(self, config: str) -> Any:
        """Creates the plugin; a failure clears any earlier instance, so later
        calls do not run with a configuration the operator replaced."""
        from componentize_py_types import Err

        self.instance_call = None
        try:
            instance, interest = instantiate(self.plugin, config, interest=self.interest)
        except ValueError as e:
            raise Err(str(e)) from None
        except Exception as e:
            log.error(f"`init` failed:\n{traceback.format_exc().rstrip()}")
            raise Err(f"{type(e).__name__}: {e}") from None
        self.instance_call = getattr(instance, self.method) if inspect.isclass(self.plugin) else instance
        return _interest(interest)

    def call(self) -> Callable[..., Any] | None:
        """The plugin's method, or None (and an error logged) before a
        successful `init`."""
        if self.instance_call is None:
            log.error(f"`{self.method}` called before a successful `init`; ignoring the event")
        return self.instance_call


def _crash(function: str) -> None:
    """Inside a component: writes the exception in flight, with its
    traceback, to GRW's log (not to stderr) and traps, as a Rust plugin's
    panic does. Natively it returns, and the caller re-raises."""
    if not log.IN_COMPONENT:
        return
    try:
        log.error(f"`{function}` failed:\n{traceback.format_exc().rstrip()}")
    except BaseException:
        pass
    os.abort()


#: The WIT enums' cases (by the identity of their generated objects, which
#: is cheaper than their hash) as the SDK's enums, filled as they are first
#: seen.
_EVENT_TYPES: dict[int, EventType] = {}
_ORIGINS: dict[int, Origin] = {}


def _event(event: Any, object: Any, old_object: Any) -> Event:
    """The SDK's event for one call: the cheapest way there, as it is made
    for every event."""
    wit_type, wit_origin = event.event_type, event.origin
    type = _EVENT_TYPES.get(id(wit_type))
    if type is None:
        type = _EVENT_TYPES[id(wit_type)] = EventType[wit_type.name]
    origin = _ORIGINS.get(id(wit_origin))
    if origin is None:
        origin = _ORIGINS[id(wit_origin)] = Origin[wit_origin.name]
    return Event._of(
        type,
        ObjectView(object),
        None if old_object is None else ObjectView(old_object),
        origin,
    )


def _wit_gvk(gvk: Gvk) -> Any:
    from wit_world.imports import types

    return types.Gvk(gvk.group, gvk.version, gvk.kind)


def _interest(interest: Interest) -> Any:
    from wit_world.imports import types

    return types.Interest(
        kinds=[types.KindPattern(k.group, k.version, k.kind) for k in interest.kinds],
        event_types=[types.EventType[t.name] for t in interest.event_types],
    )


def _relationship(relationship: Relationship) -> Any:
    from wit_world.exports import analyzer
    from wit_world.imports import types

    if not isinstance(relationship, Relationship):
        raise TypeError(f"`analyze` must return grw_sdk.Relationship objects, not {relationship!r}")
    target = relationship.target
    return analyzer.Relationship(
        relation=relationship.relation,
        direction=analyzer.Direction[Direction(relationship.direction).name],
        target=types.ObjectRef(_wit_gvk(target.gvk), target.namespace, target.name),
        attributes=list(relationship.attributes),
    )


class _HostHttp(Http):
    """Outbound HTTP through the host's ``outbound-http`` import."""

    def send(self, request: HttpRequest) -> HttpResponse:
        from componentize_py_types import Err
        from wit_world.imports import outbound_http

        try:
            response = outbound_http.send(
                outbound_http.Request(
                    request.method, request.url, list(request.headers), bytes(request.body)
                )
            )
        except Err as e:
            raise SendError(e.value) from None
        return HttpResponse(response.status, list(response.headers), bytes(response.body))


class _HostCache(Cache):
    """Lookups through the host's ``cache`` import."""

    def get(self, gvk: Gvk, namespace: str, name: str) -> ObjectView | None:
        from wit_world.imports import cache

        found = cache.get(_wit_gvk(gvk), namespace, name)
        return None if found is None else ObjectView(found)

    def list(
        self, gvk: Gvk, namespace: str = "", selector: LabelSelector | str = ""
    ) -> list[ObjectView]:
        from componentize_py_types import Err
        from wit_world.imports import cache

        try:
            found = cache.list(_wit_gvk(gvk), namespace, str(selector))
        except Err as e:
            raise CacheError(e.value) from None
        return [ObjectView(o) for o in found]

    def owned_by(self, gvk: Gvk, owner_uid: str) -> list[ObjectView]:
        from wit_world.imports import cache

        return [ObjectView(o) for o in cache.owned_by(_wit_gvk(gvk), owner_uid)]


HOST_HTTP: Http = _HostHttp()
HOST_CACHE: Cache = _HostCache()
