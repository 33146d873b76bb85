//! The journal of changes, read:
//!
//! | route | answer |
//! |---|---|
//! | `GET /api/v1/[namespaces/{ns}/]history/{kind}/{name}` | the object's versions, newest first, each with who and its diff |
//! | `GET /api/v1/[namespaces/{ns}/]objects/{kind}/{name}?asOf=` | the object as it was then (in [`super::native`]) |
//! | `GET /api/v1/[namespaces/{ns}/]timeline/{kind}/{name}` | its changes and those of everything related to it, with their Events |
//! | `GET /api/v1/changes` | recent changes across the cluster |
//! | `GET /api/v1/journal` | the journal's size, reach and counts |
//!
//! `since` and `until` take a duration back from now (`90s`, `10m`, `1h`,
//! `2d`) or an RFC 3339 time. An object's history and timeline are
//! checked as a `get` of the object; under `delegated`, a timeline leaves
//! out the entries of objects of kinds or namespaces the caller may not
//! list, and so does `changes` (checked as `list` of `changes.grw.io`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde::Serialize;
use serde::ser::{SerializeSeq, Serializer};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::access::{FurtherRefusal, Permissions, Rule};
use super::kinds::RouteKind;
use super::table::Routes;
use super::{AppState, Params, Problem};
use crate::journal::{
    AsOf, ChangesFilter, Journal, Listed, Timeline, TimelineEntry, TimelineQuery, now_micros,
    parse_node, show_key,
};
use crate::relations::NodeKey;

/// Versions or entries answered unless `limit` says otherwise.
const DEFAULT_LIMIT: u64 = 100;
/// Most a request may ask for.
const MAX_LIMIT: u64 = 10_000;
/// Steps a timeline follows unless `depth` says otherwise, and at most.
const DEFAULT_DEPTH: u64 = 2;
const MAX_DEPTH: u64 = 5;
/// Objects a timeline reaches at most.
const MAX_OBJECTS: usize = 2_000;
/// How far back a timeline or a list of changes looks by default.
const DEFAULT_SINCE: Duration = Duration::from_secs(3600);

/// The query parameters of an object's history.
pub(super) const HISTORY_PARAMS: [&str; 4] = ["since", "until", "limit", "full"];
/// The query parameters of an object's timeline.
pub(super) const TIMELINE_PARAMS: [&str; 5] = ["since", "until", "depth", "relation", "limit"];
/// The query parameters of `changes`.
pub(super) const CHANGES_PARAMS: [&str; 7] = [
    "since",
    "until",
    "kind",
    "namespace",
    "labelSelector",
    "who",
    "limit",
];

pub(super) fn routes() -> Routes {
    let own = |resource| Rule::Own {
        resource,
        subresource: "",
    };
    Routes::new()
        .route(
            "/api/v1/history/{kind}/{name}",
            Rule::Objects,
            get(history_route),
        )
        .route(
            "/api/v1/namespaces/{namespace}/history/{kind}/{name}",
            Rule::Objects,
            get(history_route),
        )
        .route(
            "/api/v1/timeline/{kind}/{name}",
            Rule::Objects,
            get(timeline_route),
        )
        .route(
            "/api/v1/namespaces/{namespace}/timeline/{kind}/{name}",
            Rule::Objects,
            get(timeline_route),
        )
        .route("/api/v1/changes", own("changes"), get(changes))
        .route("/api/v1/journal", own("journal"), get(status))
}

fn journal(state: &AppState) -> Result<Arc<Journal>, Problem> {
    state.journal.clone().ok_or_else(|| {
        Problem::new(
            axum::http::StatusCode::NOT_FOUND,
            "NoJournal",
            "the journal is off (`journal.enabled: false`)",
        )
    })
}

/// A time parameter: a duration back from now (`30s`, `10m`, `1h`, `2d`)
/// or an RFC 3339 time; µs since the epoch.
pub(super) fn time_param(params: &Params, name: &str) -> Result<Option<u64>, Problem> {
    let Some(text) = params.non_empty(name) else {
        return Ok(None);
    };
    parse_time(text).map(Some).ok_or_else(|| {
        Problem::bad_request(
            "InvalidParameter",
            format!(
                "`{name}` must be a duration back from now (`90s`, `10m`, `1h`, `2d`) or an RFC 3339 time (`2026-11-29T14:00:00Z`), got `{text}`"
            ),
        )
    })
}

fn parse_time(text: &str) -> Option<u64> {
    if let Some(at) = crate::time::parse_rfc3339(text) {
        return Some(at.as_micros() as u64);
    }
    let split = text.find(|c: char| !c.is_ascii_digit() && c != '.')?;
    let (number, unit) = text.split_at(split);
    let number: f64 = number.parse().ok()?;
    let seconds = match unit {
        "s" => 1.0,
        "m" => 60.0,
        "h" => 3600.0,
        "d" => 86_400.0,
        _ => return None,
    };
    let back = Duration::try_from_secs_f64(number * seconds).ok()?;
    Some(now_micros().saturating_sub(back.as_micros() as u64))
}

/// The object a route names: its kind resolved, in its namespace.
fn object(kind: &RouteKind, namespace: Option<&str>, name: &str) -> Result<NodeKey, Problem> {
    let resource = kind.resource()?;
    if namespace.is_some() && !resource.namespaced {
        return Err(Problem::bad_request(
            "ClusterScoped",
            format!(
                "kind `{}` is cluster-scoped: leave out the namespace",
                resource.gvk
            ),
        ));
    }
    if namespace.is_none() && resource.namespaced {
        return Err(Problem::bad_request(
            "Namespaced",
            format!(
                "kind `{}` is namespaced: use /api/v1/namespaces/{{namespace}}/...",
                resource.gvk
            ),
        ));
    }
    Ok(NodeKey {
        group: resource.gvk.group.as_str().into(),
        kind: resource.gvk.kind.as_str().into(),
        namespace: namespace.unwrap_or("").into(),
        name: name.into(),
    })
}

fn window(params: &Params, default_since: Option<Duration>) -> Result<(u64, u64), Problem> {
    let now = now_micros();
    let since = time_param(params, "since")?.unwrap_or_else(|| match default_since {
        Some(back) => now.saturating_sub(back.as_micros() as u64),
        None => 0,
    });
    let until = time_param(params, "until")?.unwrap_or(u64::MAX);
    if until < since {
        return Err(Problem::bad_request(
            "InvalidParameter",
            "`until` is before `since`",
        ));
    }
    Ok((since, until))
}

fn store_failed(e: crate::journal::StoreError) -> Problem {
    Problem::new(
        axum::http::StatusCode::SERVICE_UNAVAILABLE,
        "JournalUnavailable",
        format!("the journal cannot be read: {e}"),
    )
    .retry_after(1)
}

/// `history` of a cluster-scoped object or of one in `{namespace}`.
async fn history_route(
    State(state): State<Arc<AppState>>,
    Path(params): Path<HashMap<String, String>>,
    kind: RouteKind,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let namespace = params.get("namespace").map(String::as_str);
    let name = params.get("name").map_or("", String::as_str);
    history(&state, namespace, &kind, name, raw.as_deref()).await
}

async fn history(
    state: &Arc<AppState>,
    namespace: Option<&str>,
    kind: &RouteKind,
    name: &str,
    raw: Option<&str>,
) -> Result<Response, Problem> {
    let params = Params::parse(raw, &HISTORY_PARAMS)?;
    let journal = journal(state)?;
    let node = object(kind, namespace, name)?;
    let (since, until) = window(&params, None)?;
    let limit = params.number("limit", MAX_LIMIT)?.unwrap_or(DEFAULT_LIMIT) as usize;
    let full = params.flag("full")?;
    // The answer is made, and written out, on the query pool: up to
    // 10,000 versions, whole with `full`.
    let answer = state
        .queries
        .run(move |_budget| {
            Ok(journal
                .history(&node, since, until, limit, full)
                .map(|versions| {
                    let answer = HistoryAnswer {
                        kind: "History",
                        object: node_json(&node),
                        items: versions.iter().map(|v| v.view(full)).collect(),
                    };
                    // Strings and JSON values always serialize.
                    serde_json::to_vec(&answer).unwrap_or_default()
                }))
        })
        .await?
        .map_err(store_failed)?;
    Ok(([(CONTENT_TYPE, "application/json")], answer).into_response())
}

#[derive(Serialize)]
struct HistoryAnswer<'a> {
    kind: &'static str,
    object: Value,
    items: Vec<crate::journal::VersionView<'a>>,
}

fn node_json(node: &NodeKey) -> Value {
    json!({
        "group": &*node.group,
        "kind": &*node.kind,
        "namespace": &*node.namespace,
        "name": &*node.name,
    })
}

/// The answer to `objects/{kind}/{name}?asOf=`.
pub(super) async fn as_of(
    state: &AppState,
    namespace: Option<&str>,
    kind: &RouteKind,
    name: &str,
    at: &str,
) -> Result<axum::response::Response, Problem> {
    let at_stamp = crate::time::parse_rfc3339(at)
        .map(|t| t.as_micros() as u64)
        .ok_or_else(|| {
            Problem::bad_request(
                "InvalidParameter",
                format!("`asOf` must be an RFC 3339 time (`2026-11-29T14:00:00Z`), got `{at}`"),
            )
        })?;
    let journal = journal(state)?;
    let node = object(kind, namespace, name)?;
    let asked = node.clone();
    let found = state
        .queries
        .run(move |_| Ok(journal.as_of(&asked, at_stamp)))
        .await?
        .map_err(store_failed)?;
    let what = format!(
        "{} `{}`",
        node.kind,
        show_key(&crate::journal::node_key(&node))
    );
    match found {
        AsOf::Found(object) => Ok(axum::response::IntoResponse::into_response(Json(object))),
        AsOf::Current { resource_version } => {
            let resource = kind.resource()?;
            let current = state
                .watches
                .serving(&resource.gvk, namespace)
                .and_then(|w| {
                    w.cache
                        .read()
                        .get(&crate::store::ObjectKey::new(namespace.unwrap_or(""), name))
                        .filter(|o| o.resource_version() == resource_version)
                        .map(|o| o.to_value())
                });
            match current {
                Some(object) => Ok(axum::response::IntoResponse::into_response(Json(object))),
                None => Err(Problem::new(
                    axum::http::StatusCode::GONE,
                    "Expired",
                    format!(
                        "{what} at {at}: its state then (resourceVersion {resource_version}) is no longer kept"
                    ),
                )),
            }
        }
        AsOf::Missing(why) => Err(Problem::not_found(format!(
            "{what} did not exist at {at}: {why}"
        ))),
        AsOf::Gone(why) => Err(Problem::new(
            axum::http::StatusCode::GONE,
            "Expired",
            format!("{what} at {at}: {why}"),
        )),
    }
}

/// `timeline` of a cluster-scoped object or of one in `{namespace}`.
async fn timeline_route(
    State(state): State<Arc<AppState>>,
    Path(params): Path<HashMap<String, String>>,
    kind: RouteKind,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let namespace = params.get("namespace").map(String::as_str);
    let name = params.get("name").map_or("", String::as_str);
    timeline(&state, namespace, &kind, name, raw.as_deref()).await
}

async fn timeline(
    state: &Arc<AppState>,
    namespace: Option<&str>,
    kind: &RouteKind,
    name: &str,
    raw: Option<&str>,
) -> Result<Response, Problem> {
    let params = Params::parse(raw, &TIMELINE_PARAMS)?;
    let journal = journal(state)?;
    let root = object(kind, namespace, name)?;
    let (since, until) = window(&params, Some(DEFAULT_SINCE))?;
    let depth = params.number("depth", MAX_DEPTH)?.unwrap_or(DEFAULT_DEPTH) as u32;
    let limit = params
        .number("limit", MAX_LIMIT)?
        .unwrap_or(DEFAULT_LIMIT * 5) as usize;
    let relations: Vec<String> = params
        .non_empty("relation")
        .map(|r| {
            r.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let asked = TimelineQuery {
        root: root.clone(),
        since,
        until,
        depth,
        relations,
        limit,
        max_objects: MAX_OBJECTS,
    };
    let gather = state.clone();
    let timeline = state
        .queries
        .run(move |_| {
            let graph = gather.relations.graph();
            Ok(journal.timeline(&graph, &asked))
        })
        .await?
        .map_err(store_failed)?;
    let root_key = crate::journal::node_key(&root);
    // An Event is shown to whoever may read Events there, not to every
    // reader of the object it is about.
    let event_keys: Vec<String> = timeline
        .entries
        .iter()
        .filter_map(|entry| match entry {
            TimelineEntry::Event { event, .. } => event.object_key(),
            _ => None,
        })
        .collect();
    let mut sight = Sight::new();
    sight
        .decide(
            state,
            timeline
                .objects
                .iter()
                .filter(|k| **k != root_key)
                .chain(&event_keys),
        )
        .await?;
    // The answer is made, and written out, off the runtime: a timeline of
    // hundreds of entries is milliseconds of work.
    let answer = state
        .queries
        .run(move |_| {
            Ok(render_timeline(
                &timeline, &sight, &root, &root_key, since, until, depth,
            ))
        })
        .await?;
    Ok(([(CONTENT_TYPE, "application/json")], answer).into_response())
}

/// A timeline as the route answers it: what `sight` shows of it, written
/// out from the entries as they are (no tree of values is built first).
fn render_timeline(
    timeline: &Timeline,
    sight: &Sight,
    root: &NodeKey,
    root_key: &str,
    since: u64,
    until: u64,
    depth: u32,
) -> Vec<u8> {
    // Each shown object's path, written once.
    let paths: HashMap<&str, Box<RawValue>> = timeline
        .objects
        .iter()
        .filter(|k| **k == root_key || sight.shows(k))
        .map(|k| {
            let steps = timeline.paths.get(k).map(Vec::as_slice).unwrap_or_default();
            // Strings serialize to JSON.
            let path =
                serde_json::value::to_raw_value(&PathView(steps)).unwrap_or_else(|_| empty_raw());
            (k.as_str(), path)
        })
        .collect();
    let related = timeline
        .objects
        .iter()
        .filter_map(|k| {
            Some(Related {
                object: show_key(k),
                path: paths.get(k.as_str())?,
            })
        })
        .collect();
    let answer = TimelineAnswer {
        kind: "Timeline",
        object: node_json(root),
        since: crate::journal::rfc3339_micros(since),
        until: (until != u64::MAX).then(|| crate::journal::rfc3339_micros(until)),
        depth,
        related,
        truncated: timeline.truncated,
        objects_capped: timeline.capped,
        items: Items {
            timeline,
            sight,
            paths: &paths,
        },
    };
    // About 1 KiB an entry: written once, not grown and copied a dozen
    // times. Strings and JSON values always serialize.
    let mut out = Vec::with_capacity((timeline.entries.len() + 1) * 1024);
    serde_json::to_writer(&mut out, &answer).map_or_else(|_| Vec::new(), |()| out)
}

fn empty_raw() -> Box<RawValue> {
    RawValue::from_string("[]".into()).expect("[] is JSON")
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct TimelineAnswer<'a> {
    kind: &'static str,
    object: Value,
    since: String,
    until: Option<String>,
    depth: u32,
    related: Vec<Related<'a>>,
    truncated: bool,
    objects_capped: bool,
    items: Items<'a>,
}

/// The relations that lead from the asked-for object to another.
struct PathView<'a>(&'a [crate::journal::Step]);

impl Serialize for PathView<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct StepView<'a> {
            relation: &'a str,
            direction: &'static str,
            object: String,
        }
        serializer.collect_seq(self.0.iter().map(|s| StepView {
            relation: &s.relation,
            direction: if s.out { "out" } else { "in" },
            object: show_key(&s.node),
        }))
    }
}

/// An object a timeline reached, and how.
#[derive(Serialize)]
struct Related<'a> {
    object: String,
    path: &'a RawValue,
}

/// The entries of a timeline that its reader may see, each with the path
/// of the object it is about.
struct Items<'a> {
    timeline: &'a Timeline,
    sight: &'a Sight,
    /// Of the objects shown.
    paths: &'a HashMap<&'a str, Box<RawValue>>,
}

impl Serialize for Items<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut items = serializer.serialize_seq(None)?;
        for entry in &self.timeline.entries {
            match entry {
                TimelineEntry::Change { object, version } => {
                    let Some(path) = self.paths.get(object.as_str()) else {
                        continue;
                    };
                    let mut item = version.view(false);
                    item.path = Some(path);
                    items.serialize_element(&item)?;
                }
                TimelineEntry::Event { object, event } => {
                    let Some(path) = self.paths.get(object.as_str()) else {
                        continue;
                    };
                    if !event.object_key().is_some_and(|k| self.sight.shows(&k)) {
                        continue;
                    }
                    // The Event's own change (ADDED, MODIFIED) is kept apart.
                    let mut item = event.to_json();
                    let change = item["type"].take();
                    if !item["event"].is_object() {
                        item["event"] = json!({});
                    }
                    item["event"]["change"] = change;
                    item["type"] = json!("EVENT");
                    item["path"] = serde_json::from_str(path.get()).unwrap_or_default();
                    items.serialize_element(&item)?;
                }
                TimelineEntry::Edge { stamp, edge } => {
                    if !(self.sight.shows(&edge.from) && self.sight.shows(&edge.to)) {
                        continue;
                    }
                    items.serialize_element(&json!({
                        "time": crate::journal::rfc3339_micros(*stamp),
                        "type": if edge.added { "EDGE_ADDED" } else { "EDGE_REMOVED" },
                        "edge": {
                            "from": show_key(&edge.from),
                            "relation": edge.relation,
                            "to": show_key(&edge.to),
                            "analyzer": edge.analyzer,
                        },
                    }))?;
                }
            }
        }
        items.end()
    }
}

#[derive(Serialize)]
struct ChangeList {
    kind: &'static str,
    items: Vec<Value>,
}

async fn changes(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    let params = Params::parse(raw.as_deref(), &CHANGES_PARAMS)?;
    let journal = journal(&state)?;
    let (since, until) = window(&params, Some(DEFAULT_SINCE))?;
    let mut kinds = Vec::new();
    if let Some(named) = params.non_empty("kind") {
        for one in named.split(',') {
            let resource = super::native::resource(&state, one.trim(), None).await?;
            kinds.push(format!("{}/{}", resource.gvk.group, resource.gvk.kind));
        }
    }
    let labels = match params.non_empty("labelSelector") {
        Some(text) => Some(text.parse::<grw_selector::LabelSelector>().map_err(|e| {
            Problem::bad_request(
                "InvalidLabelSelector",
                format!("`labelSelector` is not a label selector: {e}"),
            )
        })?),
        None => None,
    };
    let filter = ChangesFilter {
        since,
        until,
        kinds,
        namespace: params.non_empty("namespace").map(str::to_string),
        labels,
        who: params.non_empty("who").map(str::to_string),
        limit: params
            .number("limit", MAX_LIMIT)?
            .unwrap_or(DEFAULT_LIMIT * 5) as usize,
    };
    let found: Vec<Listed> = state
        .queries
        .run(move |_| Ok(journal.changes(&filter)))
        .await?
        .map_err(store_failed)?;
    let mut sight = Sight::new();
    let keys: Vec<String> = found.iter().filter_map(Listed::object_key).collect();
    sight.decide(&state, keys.iter()).await?;
    // Up to 10,000 entries: made and written out on the query pool.
    let answer = state
        .queries
        .run(move |_| {
            let items: Vec<Value> = found
                .iter()
                .filter(|l| l.object_key().is_none_or(|k| sight.shows(&k)))
                .map(Listed::to_json)
                .collect();
            let answer = ChangeList {
                kind: "ChangeList",
                items,
            };
            // JSON values always serialize.
            Ok(serde_json::to_vec(&answer).unwrap_or_default())
        })
        .await?;
    Ok(([(CONTENT_TYPE, "application/json")], answer).into_response())
}

async fn status(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, Problem> {
    Params::parse(raw.as_deref(), &[])?;
    let journal = journal(&state)?;
    let status = state.queries.run(move |_| Ok(journal.status())).await?;
    Ok(Json(status))
}

/// Under `delegated`, which objects' entries the caller may see: those of
/// kinds and namespaces it may `list`, asked once per kind and namespace.
struct Sight {
    permissions: Option<Permissions>,
    /// (group, kind, namespace) → may see.
    decided: BTreeMap<(String, String, String), bool>,
}

impl Sight {
    fn new() -> Sight {
        Sight {
            permissions: Permissions::current(),
            decided: BTreeMap::new(),
        }
    }

    fn scope_of(key: &str) -> Option<(String, String, String)> {
        let node = parse_node(key)?;
        Some((
            node.group.to_string(),
            node.kind.to_string(),
            node.namespace.to_string(),
        ))
    }

    async fn decide<'k>(
        &mut self,
        state: &AppState,
        keys: impl Iterator<Item = &'k String>,
    ) -> Result<(), Problem> {
        let Some(permissions) = self.permissions.clone() else {
            return Ok(());
        };
        let scopes: BTreeSet<_> = keys.filter_map(|k| Self::scope_of(k)).collect();
        for scope in scopes {
            if self.decided.contains_key(&scope) {
                continue;
            }
            let (group, kind, namespace) = &scope;
            let allowed = match state.relations.resource(group, kind) {
                Some(resource) => {
                    let namespace = Some(namespace.as_str()).filter(|ns| !ns.is_empty());
                    match permissions.may_list(&resource, namespace).await {
                        Ok(()) => true,
                        Err(FurtherRefusal::Forbidden(_)) => false,
                        Err(unknown) => {
                            return Err(Problem::new(
                                axum::http::StatusCode::SERVICE_UNAVAILABLE,
                                "Unavailable",
                                unknown.to_string(),
                            ));
                        }
                    }
                }
                // A kind discovery does not know: nobody may be shown it.
                None => false,
            };
            self.decided.insert(scope, allowed);
        }
        Ok(())
    }

    fn shows(&self, key: &str) -> bool {
        self.permissions.is_none()
            || Self::scope_of(key).is_some_and(|s| self.decided.get(&s) == Some(&true))
    }
}
