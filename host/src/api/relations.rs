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
//!
//! Under `delegated` access, a caller let in for one namespace sees an edge
//! to an object elsewhere (another namespace, or a cluster-scoped object)
//! only if it may list relations there too ([`Sight`]); the others are
//! left out, with what lies only beyond them, as the API server leaves out
//! of a list what the caller may not read.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::routing::get;
use serde_json::{Map, Value, json};

use super::access::Permissions;
use super::access::Rule;
use super::native::resource;
use super::table::Routes;
use super::{AppState, Params, Problem};
use crate::relations::{Direction, Edge, Graph, NodeKey};

/// Most steps a query may follow.
const MAX_DEPTH: u64 = 10;
/// Edges answered unless `limit` says otherwise.
const DEFAULT_LIMIT: u64 = 10_000;
/// Most edges a query may ask for.
const MAX_LIMIT: u64 = 1_000_000;

/// The query parameters of every edge's route.
pub(super) const EDGES_PARAMS: [&str; 3] = ["relation", "analyzer", "namespace"];
/// The query parameters of an object's edges.
pub(super) const AROUND_PARAMS: [&str; 4] = ["direction", "depth", "relation", "limit"];

pub(super) fn routes() -> Routes {
    Routes::new()
        .route("/api/v1/relations", Rule::AllRelations, get(all))
        .route(
            "/api/v1/relations/{kind}/{name}",
            Rule::Relations,
            get(cluster_scoped),
        )
        .route(
            "/api/v1/namespaces/{namespace}/relations/{kind}/{name}",
            Rule::Relations,
            get(namespaced),
        )
}

async fn all(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, Problem> {
    let params = Params::parse(raw.as_deref(), &EDGES_PARAMS)?;
    let relations = list(params.non_empty("relation"));
    let analyzers = list(params.non_empty("analyzer"));
    let namespace = params.get("namespace");
    let mut sight = Sight::new(Permissions::current(), namespace);
    // Every edge may be millions: taken (with whether each is stale) under
    // a short hold of the index's lock, and filtered, sorted and written
    // on a query thread, as a list of objects is.
    let gather = state.clone();
    let wanted = namespace.map(str::to_string);
    let found = state
        .queries
        .run(move |budget| {
            let graph = gather.relations.graph();
            let mut found = Vec::new();
            for e in graph.edges() {
                budget.charge()?;
                if (relations.is_empty() || relations.iter().any(|r| **r == *e.relation))
                    && (analyzers.is_empty() || analyzers.iter().any(|a| **a == *e.analyzer))
                    && wanted
                        .as_deref()
                        .is_none_or(|ns| *e.from.namespace == *ns || *e.to.namespace == *ns)
                {
                    found.push((e.clone(), graph.stale(&e.analyzer, e.subject())));
                }
            }
            Ok(found)
        })
        .await?;
    // Asked after the index is let go: a review may take a while.
    let undecided = sight.undecided(found.iter().flat_map(|(e, _)| [&*e.from, &*e.to]));
    sight.decide(undecided).await?;
    let items = state
        .queries
        .run(move |budget| {
            let mut edges: Vec<&(Arc<Edge>, Option<Arc<str>>)> = found
                .iter()
                .filter(|(e, _)| sight.shows(&e.from) && sight.shows(&e.to))
                .collect();
            edges.sort_by(|(a, _), (b, _)| order(a).cmp(&order(b)));
            let mut items = Vec::with_capacity(edges.len());
            for (e, stale) in edges {
                budget.charge()?;
                items.push(edge_with(e, stale.as_deref()));
            }
            Ok(items)
        })
        .await?;
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
    // The caller may list relations at the cluster scope: it sees them all.
    let sight = Sight::new(None, None);
    around(&state, sight, None, &kind, &name, raw.as_deref()).await
}

async fn namespaced(
    State(state): State<Arc<AppState>>,
    Path((namespace, kind, name)): Path<(String, String, String)>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, Problem> {
    let sight = Sight::new(Permissions::current(), Some(&namespace));
    around(&state, sight, Some(namespace), &kind, &name, raw.as_deref()).await
}

async fn around(
    state: &AppState,
    mut sight: Sight,
    namespace: Option<String>,
    kind: &str,
    name: &str,
    raw: Option<&str>,
) -> Result<Json<Value>, Problem> {
    let params = Params::parse(raw, &AROUND_PARAMS)?;
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
    // Walks through what the caller may see, namespaces not asked about
    // yet counting as seen; then asks about those the walk reached, and
    // walks again until it reaches no namespace not asked about. Each walk
    // but the last asks about one namespace at least, so it ends; the
    // second usually reaches only what the first did (a third is needed
    // when hiding a node lets `limit` reach further).
    let (nodes, edges, truncated) = loop {
        let undecided = {
            let graph = state.relations.graph();
            let visible = |node: &NodeKey| sight.shows(node);
            let (nodes, mut found, truncated) =
                graph.around_visible(&root, direction, depth, &relations, limit, &visible);
            let undecided = sight.undecided(nodes.iter());
            if undecided.is_empty() {
                found.sort_by(|a, b| order(a).cmp(&order(b)));
                let edges: Vec<Value> = found.iter().map(|e| edge(&graph, e)).collect();
                break (nodes, edges, truncated);
            }
            undecided
        };
        sight.decide(undecided).await?;
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

/// Which objects an answer may show: all of them when the caller was let
/// in at the cluster scope or without a `delegated` check; else those in
/// the namespace it was let in for (`home`) and in the namespaces where it
/// may list relations too (`""`, cluster-scoped objects, needs the cluster
/// scope), asked of the API server as they turn up, one question per
/// namespace. Listing relations there is what a request about that
/// namespace would need, so an edge is shown to whoever could read it from
/// either end.
struct Sight {
    /// `None`: everything is shown.
    permissions: Option<Permissions>,
    home: Arc<str>,
    /// The namespaces asked about, and whether the caller may see them.
    decided: BTreeMap<Arc<str>, bool>,
}

impl Sight {
    fn new(permissions: Option<Permissions>, home: Option<&str>) -> Sight {
        let (permissions, home) = match (permissions, home) {
            (Some(permissions), Some(home)) if !home.is_empty() => (Some(permissions), home),
            _ => (None, ""),
        };
        Sight {
            permissions,
            home: home.into(),
            decided: BTreeMap::new(),
        }
    }

    /// Whether `node` may be shown; one in a namespace not asked about yet
    /// counts as shown until it is.
    fn shows(&self, node: &NodeKey) -> bool {
        self.permissions.is_none()
            || node.namespace == self.home
            || self.decided.get(&node.namespace) != Some(&false)
    }

    /// The namespaces of `nodes` not asked about yet.
    fn undecided<'a>(&self, nodes: impl Iterator<Item = &'a NodeKey>) -> BTreeSet<Arc<str>> {
        if self.permissions.is_none() {
            return BTreeSet::new();
        }
        nodes
            .map(|node| &node.namespace)
            .filter(|ns| **ns != self.home && !self.decided.contains_key(*ns))
            .cloned()
            .collect()
    }

    /// Asks about `namespaces`.
    async fn decide(&mut self, namespaces: BTreeSet<Arc<str>>) -> Result<(), Problem> {
        let Some(permissions) = &self.permissions else {
            return Ok(());
        };
        if namespaces.is_empty() {
            return Ok(());
        }
        let allowed = permissions
            .may_list_relations_in(namespaces.clone())
            .await
            .map_err(|e| {
                Problem::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "Unavailable",
                    e.to_string(),
                )
            })?;
        for namespace in namespaces {
            let shown = allowed.contains(&namespace);
            self.decided.insert(namespace, shown);
        }
        Ok(())
    }
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
    edge_with(edge, graph.stale(&edge.analyzer, edge.subject()).as_deref())
}

/// One edge as the API shows it, `stale` with the reason its analyzer
/// failed on the object since, if it did.
fn edge_with(edge: &Edge, stale: Option<&str>) -> Value {
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
    if let Some(reason) = stale {
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
