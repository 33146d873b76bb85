//! `/openapi/v2` and `/openapi/v3`: small documents of the API server's
//! shape (Pods and Deployments only), enough for `kubectl explain`. v3's
//! index names each group version's document with a hash of it, as the
//! API server does.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

fn meta() -> Value {
    json!({
        "description": "ObjectMeta is metadata that all persisted resources must have.",
        "type": "object",
        "properties": {
            "name": {"description": "Name must be unique within a namespace.", "type": "string"},
            "namespace": {"description": "Namespace defines the space within which each name must be unique.", "type": "string"},
            "labels": {"description": "Map of string keys and values.", "type": "object", "additionalProperties": {"type": "string", "default": ""}},
        },
    })
}

/// A kind's schema with its group, version and kind.
fn kind(group: &str, version: &str, kind: &str, description: &str, spec: Value) -> Value {
    json!({
        "description": description,
        "type": "object",
        "properties": {
            "apiVersion": {"description": "APIVersion defines the versioned schema of this representation of an object.", "type": "string"},
            "kind": {"description": "Kind is a string value representing the REST resource this object represents.", "type": "string"},
            "metadata": {"description": "Standard object's metadata.", "allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}], "default": {}},
            "spec": spec,
        },
        "x-kubernetes-group-version-kind": [{"group": group, "kind": kind, "version": version}],
    })
}

fn pod() -> Value {
    kind(
        "",
        "v1",
        "Pod",
        "Pod is a collection of containers that can run on a host.",
        json!({"description": "Specification of the desired behavior of the pod.", "type": "object",
            "properties": {"nodeName": {"description": "NodeName indicates in which node this pod is scheduled.", "type": "string"}}}),
    )
}

fn deployment() -> Value {
    kind(
        "apps",
        "v1",
        "Deployment",
        "Deployment enables declarative updates for Pods and ReplicaSets.",
        json!({"description": "Specification of the desired behavior of the Deployment.", "type": "object",
            "properties": {"replicas": {"description": "Number of desired pods.", "type": "integer", "format": "int32"}}}),
    )
}

/// A group version's document: `schema` named `name`, and the list of
/// its objects at `path` (clients find a resource's kind by its path's
/// `x-kubernetes-group-version-kind`).
fn v3_document(name: &str, schema: Value, path: &str) -> Value {
    let gvk = schema["x-kubernetes-group-version-kind"][0].clone();
    json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": "v1.32.13"},
        "paths": {path: {"get": {
            "description": "list or watch objects of the kind",
            "operationId": format!("list{}", gvk["kind"].as_str().unwrap_or_default()),
            "responses": {"200": {"description": "OK"}},
            "x-kubernetes-action": "list",
            "x-kubernetes-group-version-kind": gvk,
        }}},
        "components": {"schemas": {
            name: schema,
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": meta(),
        }},
    })
}

/// v3's document of `group_version` (`api/v1`, `apis/apps/v1`).
pub(crate) fn v3(group_version: &str) -> Option<Value> {
    match group_version {
        "api/v1" => Some(v3_document(
            "io.k8s.api.core.v1.Pod",
            pod(),
            "/api/v1/namespaces/{namespace}/pods",
        )),
        "apis/apps/v1" => Some(v3_document(
            "io.k8s.api.apps.v1.Deployment",
            deployment(),
            "/apis/apps/v1/namespaces/{namespace}/deployments",
        )),
        _ => None,
    }
}

/// The hash v3's index names a document with.
pub(crate) fn hash(document: &Value) -> String {
    let digest = Sha256::digest(document.to_string().as_bytes());
    digest.iter().take(32).map(|b| format!("{b:02X}")).collect()
}

/// `/openapi/v3`.
pub(crate) fn v3_index() -> Value {
    let mut paths = serde_json::Map::new();
    for group_version in ["api/v1", "apis/apps/v1"] {
        let document = v3(group_version).expect("a document of the index");
        paths.insert(
            group_version.to_string(),
            json!({"serverRelativeURL": format!("/openapi/v3/{group_version}?hash={}", hash(&document))}),
        );
    }
    json!({"paths": paths})
}

/// `/openapi/v2`, as JSON.
pub(crate) fn v2() -> Value {
    let fix = |mut schema: Value| {
        // v2 refers to definitions, not components.
        let text = schema
            .to_string()
            .replace("#/components/schemas/", "#/definitions/");
        schema = serde_json::from_str(&text).expect("JSON");
        schema
    };
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": "v1.32.13"},
        "paths": {},
        "definitions": {
            "io.k8s.api.core.v1.Pod": fix(pod()),
            "io.k8s.api.apps.v1.Deployment": fix(deployment()),
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": meta(),
        },
    })
}
