"""Write GRW plugins in Python: filters, notifiers and analyzers that GRW
runs as sandboxed WebAssembly components (contract ``grw:plugin@0.2``,
``wit/plugin.wit``), built with componentize-py.

A plugin is a module ``app`` with a class holding the plugin's logic and one
line that exports it under the name componentize-py looks for::

    import grw_sdk
    from grw_sdk import Config, Event, Interest

    class LabelFilter:
        interest = Interest.all()

        def __init__(self, config: Config):
            self.selector = config.selector("selector", required=True)

        def decide(self, event: Event) -> bool:
            return self.selector.matches(event)

    Filter = grw_sdk.export_filter(LabelFilter)

The logic is plain Python, so pytest runs it natively: create the plugin
with :func:`instantiate` and feed it events from :mod:`grw_sdk.testing`.

What a plugin sees:

- :class:`Event`: the event type and origin, and the object, which stays in
  GRW until the plugin asks for part of it (:attr:`Event.name`,
  :meth:`Event.label`, :meth:`Event.field`); :attr:`Event.object` fetches
  and parses the whole of it.
- :class:`Config`: the configuration, read key by key, with errors that
  name the key.
- :class:`Http` (notifiers): requests to allowed hosts; raise
  :class:`Retry` or :class:`GiveUp` when a delivery fails.
- :class:`Cache` (analyzers): lookups of other objects; return
  :class:`Relationship` edges.
- :mod:`grw_sdk.log`: lines in GRW's log.
"""

from . import log
from .cache import Cache, CacheError, Direction, Relationship
from .config import Config, ConfigError
from .http import DeliveryError, GiveUp, Http, HttpRequest, HttpResponse, Retry, SendError
from .model import (
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
)
from .plugin import export_analyzer, export_filter, export_notifier, instantiate
from .selector import LabelSelector, Operator, Requirement, SelectorError

__all__ = [
    "MISSING",
    "Cache",
    "CacheError",
    "Config",
    "ConfigError",
    "DeliveryError",
    "Direction",
    "Event",
    "EventType",
    "FieldPath",
    "GiveUp",
    "Gvk",
    "Http",
    "HttpRequest",
    "HttpResponse",
    "Interest",
    "KindPattern",
    "LabelSelector",
    "ObjectRef",
    "ObjectView",
    "Operator",
    "Origin",
    "Relationship",
    "Requirement",
    "Retry",
    "SelectorError",
    "SendError",
    "export_analyzer",
    "export_filter",
    "export_notifier",
    "instantiate",
    "log",
]
