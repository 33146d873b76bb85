"""Reads through GRW with the official Kubernetes Python client, as an
application would: a list with a label selector, a get, a typed 404, a
refused write, paging, a custom resource, and a watch from the list's
resourceVersion that must see the Pod the test creates once this prints
"watching". Each step prints one JSON line: the test checks them against
the API server's objects.

Usage: python reads.py KUBECONFIG NAMESPACE
"""

import json
import sys

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException


def say(step, **fields):
    print(json.dumps({"step": step, **fields}), flush=True)


def main(kubeconfig, namespace):
    config.load_kube_config(kubeconfig)
    core = client.CoreV1Api()

    pods = core.list_namespaced_pod(namespace, label_selector="app.kubernetes.io/name=frontend")
    say("list", names=sorted(p.metadata.name for p in pods.items),
        resourceVersion=pods.metadata.resource_version)

    first = core.read_namespaced_pod(pods.items[0].metadata.name, namespace)
    say("get", name=first.metadata.name, phase=first.status.phase)

    try:
        core.read_namespaced_pod("no-such-pod", namespace)
        say("missing", status=200)
    except ApiException as error:
        say("missing", status=error.status, reason=json.loads(error.body)["reason"])

    try:
        core.delete_namespaced_pod(first.metadata.name, namespace)
        say("delete", status=200)
    except ApiException as error:
        say("delete", status=error.status)

    names, token = [], None
    while True:
        page = core.list_pod_for_all_namespaces(limit=10, _continue=token)
        names += [f"{p.metadata.namespace}/{p.metadata.name}" for p in page.items]
        token = page.metadata._continue
        if not token:
            break
    say("pages", names=sorted(names))

    gateways = client.CustomObjectsApi().list_cluster_custom_object(
        "networking.istio.io", "v1beta1", "gateways")
    say("custom", names=sorted(g["metadata"]["name"] for g in gateways["items"]))

    stream = watch.Watch()
    say("watching")
    for event in stream.stream(core.list_namespaced_pod, namespace,
                               resource_version=pods.metadata.resource_version,
                               timeout_seconds=60):
        if event["type"] == "ADDED" and event["object"].metadata.name == "late":
            say("watched", type=event["type"], name="late")
            stream.stop()
            return
    say("watched", type="timeout")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
