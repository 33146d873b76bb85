"""Hooks of the schemathesis run in tests/tests/openapi.rs."""

import schemathesis

# What `watch` takes as yes (the API's flags: `true`, `1`, or empty).
YES = {True, "true", "1", ""}

# Kinds, namespaces and names of the bundled recording: a made-up kind is
# answered 404 before any parameter is read, so about half the requests
# name what the replay holds instead, and reach the query code behind.
REAL = {
    "kind": ["pods", "Deployment", "deployments.apps", "apps/v1/ReplicaSet", "nodes",
             "configmaps", "svc", "Gateway.networking.istio.io", "relations"],
    "namespace": ["shop", "default", "kube-system", "monitoring"],
    "name": ["frontend", "node-a", "shop-config", "cart", "istio-gateway"],
}


def _realistic(parameter, value):
    """`value`, or for about half of the valid values one of the recording's.

    Chosen from the value itself, so that a case is the same each time it
    is run (schemathesis shrinks and replays cases). Only a non-empty
    string is replaced: anything else is an invalid case, kept invalid.
    """
    choices = REAL.get(parameter)
    if not choices or not isinstance(value, str) or not value:
        return value
    code = sum(map(ord, value))
    if code % 2:
        return value
    return choices[(code // 2) % len(choices)]


@schemathesis.hook
def before_call(context, case, kwargs):
    """Asks for lists, not event streams, and often for what the replay holds.

    With `watch=true` a list route answers an event stream: JSON lines for
    as long as the stream lasts (`watchStreamMaxSeconds`, 30 to 60 minutes
    by default), which is not one JSON document a schema check can read.
    The streams have tests of their own (tests/tests/watch.rs).
    """
    watch = (case.query or {}).get("watch")
    if not isinstance(watch, (list, dict)) and watch in YES:
        del case.query["watch"]
    if case.path_parameters and not case.operation.path.startswith("/api/v1/subscriptions"):
        for parameter, value in list(case.path_parameters.items()):
            case.path_parameters[parameter] = _realistic(parameter, value)
