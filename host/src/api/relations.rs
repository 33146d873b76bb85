//! The relationship index, beside the object routes:
//!
//! | route | answer |
//! |---|---|
//! | `GET /api/v1/relations` | every edge (`?relation=`, `?analyzer=`, `?namespace=` narrow it) |
//! | `GET /api/v1/relations/{kind}/{name}` | a cluster-scoped object's edges and neighbours |
//! | `GET /api/v1/namespaces/{ns}/relations/{kind}/{name}` | a namespaced object's |
//!
//! An object's route follows edges `direction=out|in|both` (default both)
//! up to `depth` steps (1 to 10, default 1), only those whose relation is
//! one of `relation` (comma-separated; default any), at most `limit`
//! edges (default 10,000; `truncated` says when it stopped). It answers
//! the nodes reached, each with whether it `exists` in GRW's caches
//! (`null` when its kind is not watched, so nobody knows), and the edges,
//! each with the analyzer that found it and whether it is `stale` (its
//! analyzer failed on the object since; these are its last good edges).
//! The object itself need not exist: what still refers to a deleted
//! ConfigMap is a question worth asking.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::{Path, RawQuery, State};
use axum::routing::get;
use serde_json::{Map, Value, json};

use super::native::resource;
use super::{AppState, Params, Problem};
use crate::relations::{Direction, Edge, Graph, NodeKey};

/// Most steps a query may follow.
const MAX_DEPTH: u64 = 10;
/// Edges answered unless `limit` says otherwise.
const DEFAULT_LIMIT: u64 = 10_000;
/// Most edges a query may ask for.
const MAX_LIMIT: u64 = 1_000_000;

pub(super) fn routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/api/v1/relations", get(all))
        .route("/api/v1/relations/{kind}/{name}", get(cluster_scoped))
        .route(
            "/api/v1/namespaces/{namespace}/relations/{kind}/{name}",
            get(namespaced),
        )
}

async fn all(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, Problem> {
    let params = Params::parse(raw.as_deref(), &["relation", "analyzer", "namespace"])?;
    let relations = list(params.non_empty("relation"));
    let analyzers = list(params.non_empty("analyzer"));
    let namespace = params.get("namespace");
    let graph = state.relations.graph();
    let mut edges: Vec<&Arc<Edge>> = graph
        .edges()
        .filter(|e| relations.is_empty() || relations.iter().any(|r| **r == *e.relation))
        .filter(|e| analyzers.is_empty() || analyzers.iter().any(|a| **a == *e.analyzer))
        .filter(|e| namespace.is_none_or(|ns| *e.from.namespace == *ns || *e.to.namespace == *ns))
        .collect();
    edges.sort_by(|a, b| order(a).cmp(&order(b)));
    let items: Vec<Value> = edges.iter().map(|e| edge(&graph, e)).collect();
    Ok(Json(json!({
        "kind": "RelationList",
        "pending": state.relations.pending(),
        "settled": state.relations.settled(),
        "items": items,
    })))
}

async fn cluster_scoped(
    State(state): State<Arc<AppState>>,
    Path((kind, name)): Path<(String, String)>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, Problem> {
    around(&state, None, &kind, &name, raw.as_deref()).await
}

async fn namespaced(
    State(state): State<Arc<AppState>>,
    Path((namespace, kind, name)): Path<(String, String, String)>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, Problem> {
    around(&state, Some(namespace), &kind, &name, raw.as_deref()).await
}

async fn around(
    state: &AppState,
    namespace: Option<String>,
    kind: &str,
    name: &str,
    raw: Option<&str>,
) -> Result<Json<Value>, Problem> {
    let params = Params::parse(raw, &["direction", "depth", "relation", "limit"])?;
    let direction = match params.get("direction") {
        None | Some("both") => Direction::Both,
        Some("out") => Direction::Out,
        Some("in") => Direction::In,
        Some(other) => {
            return Err(Problem::bad_request(
                "InvalidParameter",
                format!("query parameter `direction` must be `out`, `in` or `both`, got `{other}`"),
            ));
        }
    };
    let depth = params.number("depth", MAX_DEPTH)?.unwrap_or(1) as u32;
    let limit = params.number("limit", MAX_LIMIT)?.unwrap_or(DEFAULT_LIMIT) as usize;
    let relations = list(params.non_empty("relation"));
    let resource = resource(state, kind, namespace.as_deref()).await?;
    if namespace.is_none() && resource.namespaced {
        return Err(Problem::bad_request(
            "Namespaced",
            format!(
                "kind `{}` is namespaced: use /api/v1/namespaces/{{namespace}}/relations/{}/{name}",
                resource.gvk, resource.plural
            ),
        ));
    }
    let root = NodeKey {
        group: resource.gvk.group.as_str().into(),
        kind: resource.gvk.kind.as_str().into(),
        namespace: namespace.as_deref().unwrap_or("").into(),
        name: name.into(),
    };
    let (nodes, edges, truncated) = {
        let graph = state.relations.graph();
        let (nodes, mut found, truncated) =
            graph.around(&root, direction, depth, &relations, limit);
        found.sort_by(|a, b| order(a).cmp(&order(b)));
        let edges: Vec<Value> = found.iter().map(|e| edge(&graph, e)).collect();
        (nodes, edges, truncated)
    };
    // Existence is read from the caches, after the index is let go.
    let nodes: Vec<Value> = nodes.iter().map(|n| node(state, n)).collect();
    Ok(Json(json!({
        "kind": "Relations",
        "root": root.to_string(),
        "direction": match direction {
            Direction::Out => "out",
            Direction::In => "in",
            Direction::Both => "both",
        },
        "depth": depth,
        "truncated": truncated,
        "pending": state.relations.pending(),
        "nodes": nodes,
        "edges": edges,
    })))
}

/// A comma-separated list parameter.
fn list(value: Option<&str>) -> Vec<String> {
    value
        .map(|v| {
            v.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

fn order(edge: &Edge) -> (&NodeKey, &str, &NodeKey, &str) {
    (&edge.from, &edge.relation, &edge.to, &edge.analyzer)
}

/// One edge as the API shows it.
pub(super) fn edge(graph: &Graph, edge: &Edge) -> Value {
    let attributes: Map<String, Value> = edge
        .attributes
        .iter()
        .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
        .collect();
    let mut body = json!({
        "from": edge.from.to_string(),
        "relation": &*edge.relation,
        "to": edge.to.to_string(),
        "analyzer": &*edge.analyzer,
        "attributes": attributes,
        "stale": false,
    });
    if let Some(reason) = graph.stale(&edge.analyzer, edge.subject()) {
        body["stale"] = Value::Bool(true);
        body["staleReason"] = Value::String(reason.to_string());
    }
    body
}

/// One node as the API shows it.
fn node(state: &AppState, node: &NodeKey) -> Value {
    let mut body = json!({
        "id": node.to_string(),
        "group": &*node.group,
        "kind": &*node.kind,
        "name": &*node.name,
        "exists": state.relations.exists(node),
    });
    if !node.namespace.is_empty() {
        body["namespace"] = Value::String(node.namespace.to_string());
    }
    if let Some(resource) = state.relations.resource(&node.group, &node.kind) {
        body["apiVersion"] = Value::String(resource.gvk.api_version());
    }
    body
}
