//! The native API.
//!
//! | route | answer |
//! |---|---|
//! | `GET /api/v1/objects/{kind}` | every object of a kind (`?watch=true`: event stream) |
//! | `GET /api/v1/objects/{kind}/{name}` | one cluster-scoped object |
//! | `GET /api/v1/namespaces/{ns}/objects/{kind}` | objects of a kind in one namespace |
//! | `GET /api/v1/namespaces/{ns}/objects/{kind}/{name}` | one namespaced object |
//! | `GET /api/v1/kinds` | every watch and its state |
//!
//! `{kind}` is any form [`KindRef::parse`] accepts (`pods`, `Deployment`,
//! `deployments.apps`, `Deployment.v1.apps`); without a version, the
//! group's preferred one answers. The access check resolves it, once, and
//! the routes serve what it resolved ([`RouteKind`]). Answers carry the
//! cache's freshness in `grw-resource-version` and `grw-ready` headers, and
//! the kind answered in `grw-gvk`; lists also in `metadata`. Lists search
//! by name and owner ([`super::search`]).

use std::sync::Arc;
use std::time::Duration;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use super::access::Rule;
use super::kinds::{RouteKind, dedicated_watch, resolve, synced_watch};
use super::list_body::json_list;
use super::search::Search;
use super::stream::{self, StreamOptions};
use super::table::Routes;
use super::{AppState, Params, Problem};
use crate::config::{Parsed, PluginName, WatchOptions};
use crate::gvk::{Gvk, KindRef, ResourceInfo};
use crate::plugin::{LookupError, Plugin};
use crate::query::{ContinueToken, FieldSelector, LabelSelector, PageRequest, Query};
use crate::store::{Change, ObjectKey, Since, StoredObject};
use crate::watch::Watch;

/// Largest page a client may ask for.
const MAX_LIMIT: u64 = 100_000;

/// The query parameters of a list (and event stream).
pub(super) const LIST_PARAMS: [&str; 16] = [
    "filter",
    "dedicated",
    "labelSelector",
    "fieldSelector",
    "match",
    "nameContains",
    "ownerUid",
    "ownerKind",
    "ownerName",
    "ownerDepth",
    "limit",
    "continue",
    "watch",
    "resourceVersion",
    "allowWatchBookmarks",
    "timeoutSeconds",
];

/// The query parameters of one object.
pub(super) const GET_PARAMS: [&str; 1] = ["asOf"];

pub(super) fn routes() -> Routes {
    let own = |resource| Rule::Own {
        resource,
        subresource: "",
    };
    Routes::new()
        .route("/api/v1/objects/{kind}", Rule::Objects, get(list_cluster))
        .route(
            "/api/v1/objects/{kind}/{name}",
            Rule::Objects,
            get(get_cluster),
        )
        .route(
            "/api/v1/namespaces/{namespace}/objects/{kind}",
            Rule::Objects,
            get(list_namespaced),
        )
        .route(
            "/api/v1/namespaces/{namespace}/objects/{kind}/{name}",
            Rule::Objects,
            get(get_namespaced),
        )
        .route("/api/v1/kinds", own("kinds"), get(kinds))
}

async fn list_cluster(
    State(state): State<Arc<AppState>>,
    kind: RouteKind,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    list(&state, None, &kind, raw.as_deref()).await
}

async fn list_namespaced(
    State(state): State<Arc<AppState>>,
    Path((namespace, _)): Path<(String, String)>,
    kind: RouteKind,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    list(&state, Some(namespace), &kind, raw.as_deref()).await
}

async fn get_cluster(
    State(state): State<Arc<AppState>>,
    Path((_, name)): Path<(String, String)>,
    kind: RouteKind,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    get_one(&state, None, &kind, &name, raw.as_deref()).await
}

async fn get_namespaced(
    State(state): State<Arc<AppState>>,
    Path((namespace, _, name)): Path<(String, String, String)>,
    kind: RouteKind,
    RawQuery(raw): RawQuery,
) -> Result<Response, Problem> {
    get_one(&state, Some(namespace), &kind, &name, raw.as_deref()).await
}

/// Parses `kind` and resolves it, checking the route fits its scope: for
/// a route whose kind the access check does not resolve.
pub(super) async fn resource(
    state: &AppState,
    kind: &str,
    namespace: Option<&str>,
) -> Result<ResourceInfo, Problem> {
    let kind =
        KindRef::parse(kind).map_err(|e| Problem::bad_request("InvalidKind", e.to_string()))?;
    in_scope(resolve(state, &kind).await?, namespace)
}

/// `resource`, if a route in `namespace` (`None`: at the cluster scope)
/// may read it.
fn in_scope(resource: ResourceInfo, namespace: Option<&str>) -> Result<ResourceInfo, Problem> {
    if namespace.is_some() && !resource.namespaced {
        return Err(Problem::bad_request(
            "ClusterScoped",
            format!(
                "kind `{}` is cluster-scoped: use /api/v1/objects/{}",
                resource.gvk, resource.plural
            ),
        ));
    }
    Ok(resource)
}

async fn list(
    state: &AppState,
    namespace: Option<String>,
    kind: &RouteKind,
    raw: Option<&str>,
) -> Result<Response, Problem> {
    let params = Params::parse(raw, &LIST_PARAMS)?;
    let search = Search::parse(|p| params.get(p))?;
    let resource = in_scope(kind.resource()?, namespace.as_deref())?;
    let mut query = Query {
        namespace: namespace.clone(),
        labels: selector::<LabelSelector>(&params, "labelSelector")?,
        fields: selector::<FieldSelector>(&params, "fieldSelector")?,
        ..Query::default()
    };
    let watching = params.flag("watch")?;
    if watching {
        search.check_streamable()?;
    }
    search
        .apply(state, &resource, namespace.as_deref(), &mut query)
        .await?;
    if watching {
        for p in ["limit", "continue"] {
            if params.get(p).is_some() {
                return Err(Problem::bad_request(
                    "InvalidParameter",
                    format!("`{p}` cannot be combined with `watch`"),
                ));
            }
        }
        let since = match params.non_empty("resourceVersion") {
            None | Some("0") => Since::Snapshot,
            Some(rv) => match rv.parse::<u64>() {
                Ok(rv) => Since::ResourceVersion(rv),
                Err(_) => {
                    return Err(Problem::bad_request(
                        "InvalidParameter",
                        format!(
                            "`resourceVersion` must be a resourceVersion this API returned, got `{rv}`"
                        ),
                    ));
                }
            },
        };
        let options = StreamOptions {
            since,
            bookmarks: params.flag("allowWatchBookmarks")?,
            lifetime: stream::lifetime(
                params
                    .number("timeoutSeconds", 86_400)?
                    .map(Duration::from_secs),
                state.config.watch_stream_max,
            ),
            filters: filter_plugins(state, &params)?,
        };
        let watch = list_watch(state, &resource, namespace.as_deref(), &params).await?;
        return stream::respond(watch, query, options);
    }
    for p in ["resourceVersion", "allowWatchBookmarks", "timeoutSeconds"] {
        if params.get(p).is_some() {
            return Err(Problem::bad_request(
                "InvalidParameter",
                format!("`{p}` only applies with `watch=true`"),
            ));
        }
    }
    let page = PageRequest {
        limit: params.number("limit", MAX_LIMIT)?.map(|n| n as usize),
        after: params
            .non_empty("continue")
            .map(ContinueToken::parse)
            .transpose()
            .map_err(|e| Problem::bad_request("InvalidContinue", e.to_string()))?
            .map(|t| t.key().clone()),
    };
    let filters = filter_plugins(state, &params)?;
    let watch = list_watch(state, &resource, namespace.as_deref(), &params).await?;
    if filters.is_empty() {
        let listed = state.queries.list(&watch.cache, query, page, false).await?;
        let rv = listed.resource_version;
        let body = list_body(&resource, listed.page.items, listed.page.next, &rv);
        return Ok(json_bytes(body, &rv, &resource.gvk));
    }
    // Plugins run on the query pool, outside the cache's lock: a slow
    // plugin must not hold up the watch, nor the runtime.
    let all = PageRequest {
        limit: None,
        after: page.after.clone(),
    };
    let listed = state.queries.list(&watch.cache, query, all, false).await?;
    let rv = listed.resource_version;
    let candidates = listed.page.items;
    let gvk = resource.gvk.clone();
    let limit = page.limit.unwrap_or(usize::MAX);
    let (items, more) = state
        .queries
        .run(move |budget| {
            let mut items = Vec::new();
            for object in candidates {
                budget.charge()?;
                let change = Change::snapshot(object);
                if filters.iter().all(|f| f.decide(&gvk, &change)) {
                    if items.len() == limit {
                        return Ok((items, true));
                    }
                    items.push(change.object);
                }
            }
            Ok((items, false))
        })
        .await?;
    let next = items
        .last()
        .filter(|_| more)
        .map(|o| ContinueToken::after(o.key()));
    Ok(json_bytes(
        list_body(&resource, items, next, &rv),
        &rv,
        &resource.gvk,
    ))
}

/// The watch a list or event stream reads: with `dedicated=true`, one
/// scoped to exactly the query's namespace and selectors (the API server
/// filters; a namespaced Role allows it), created by the first such query
/// and shared by identical later ones; otherwise the one holding every
/// object the namespace may ask for.
async fn list_watch(
    state: &AppState,
    resource: &ResourceInfo,
    namespace: Option<&str>,
    params: &Params,
) -> Result<Arc<Watch>, Problem> {
    if !params.flag("dedicated")? {
        return Ok(synced_watch(state, resource, namespace).await?);
    }
    let options = WatchOptions {
        namespace: namespace.map(str::to_string),
        label_selector: parsed_selector::<LabelSelector>(params, "labelSelector")?,
        field_selector: parsed_selector::<FieldSelector>(params, "fieldSelector")?,
        ..WatchOptions::default()
    };
    Ok(dedicated_watch(state, resource, options).await?)
}

fn parsed_selector<T>(params: &Params, name: &str) -> Result<Option<Parsed<T>>, Problem>
where
    T: std::str::FromStr,
    T::Err: std::fmt::Display,
{
    params
        .non_empty(name)
        .map(|text| {
            text.parse::<Parsed<T>>()
                .map_err(|e| Problem::bad_request("InvalidSelector", e.to_string()))
        })
        .transpose()
}

/// `{"apiVersion", "kind": "<Kind>List", "metadata", "items"}` around the
/// stored bytes, written as it is sent.
fn list_body(
    resource: &ResourceInfo,
    items: Vec<Arc<StoredObject>>,
    next: Option<ContinueToken>,
    rv: &str,
) -> Body {
    let metadata = json!({
        "resourceVersion": rv,
        "continue": next.map(|t| t.to_string()),
        "gvk": resource.gvk.to_string(),
        "ready": true,
    });
    let head = format!(
        r#"{{"apiVersion":"{}","kind":"{}List","metadata":{metadata},"items":["#,
        resource.gvk.api_version(),
        resource.gvk.kind
    );
    json_list(head.into_bytes(), items)
}

/// The filter plugins named by `filter=a,b`.
fn filter_plugins(state: &AppState, params: &Params) -> Result<Vec<Arc<Plugin>>, Problem> {
    let Some(names) = params.non_empty("filter") else {
        return Ok(Vec::new());
    };
    names
        .split(',')
        .map(|name| {
            let name = PluginName::parse(name.trim())
                .map_err(|e| Problem::bad_request("InvalidParameter", format!("`filter`: {e}")))?;
            state.plugins.filter(name.as_str()).map_err(|e| match e {
                LookupError::Loading { .. } => Problem::new(
                    http::StatusCode::SERVICE_UNAVAILABLE,
                    "PluginLoading",
                    e.to_string(),
                ),
                _ => Problem::bad_request("UnknownFilter", e.to_string()),
            })
        })
        .collect()
}

async fn get_one(
    state: &AppState,
    namespace: Option<String>,
    kind: &RouteKind,
    name: &str,
    raw: Option<&str>,
) -> Result<Response, Problem> {
    let params = Params::parse(raw, &GET_PARAMS)?;
    if let Some(at) = params.get("asOf") {
        return super::journal::as_of(state, namespace.as_deref(), kind, name, at).await;
    }
    let resource = in_scope(kind.resource()?, namespace.as_deref())?;
    if namespace.is_none() && resource.namespaced {
        return Err(Problem::bad_request(
            "Namespaced",
            format!(
                "kind `{}` is namespaced: use /api/v1/namespaces/{{namespace}}/objects/{}/{name}",
                resource.gvk, resource.plural
            ),
        ));
    }
    let watch = synced_watch(state, &resource, namespace.as_deref()).await?;
    let key = ObjectKey::new(namespace.as_deref().unwrap_or(""), name);
    let view = watch.cache.read();
    match view.get(&key) {
        Some(object) => Ok(json_bytes(
            object.json().to_vec(),
            view.resource_version(),
            &resource.gvk,
        )),
        None => Err(Problem::not_found(format!(
            "{} `{key}` is not in the cache (at resourceVersion {})",
            resource.gvk.kind,
            view.resource_version()
        ))),
    }
}

/// A label or field selector parameter; its error says which selector
/// language, the selector, and what was wrong where.
fn selector<T>(params: &Params, name: &str) -> Result<T, Problem>
where
    T: std::str::FromStr + Default,
    T::Err: std::fmt::Display,
{
    match params.get(name) {
        Some(text) => text
            .parse()
            .map_err(|e: T::Err| Problem::bad_request("InvalidSelector", e.to_string())),
        None => Ok(T::default()),
    }
}

/// A JSON answer with the cache's freshness and the kind answered (the
/// version chosen when the request named none) in headers.
fn json_bytes(body: impl Into<Body>, rv: &str, gvk: &Gvk) -> Response {
    let mut response = body.into().into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    if let Ok(rv) = HeaderValue::from_str(rv) {
        headers.insert("grw-resource-version", rv);
    }
    headers.insert("grw-ready", HeaderValue::from_static("true"));
    if let Ok(gvk) = HeaderValue::from_str(&gvk.to_string()) {
        headers.insert("grw-gvk", gvk);
    }
    response
}

async fn kinds(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, Problem> {
    Params::parse(raw.as_deref(), &[])?;
    let items: Vec<Value> = state.watches.all().iter().map(|w| kind_status(w)).collect();
    let pending: Vec<Value> = state
        .watches
        .pending()
        .into_iter()
        .map(|(kind, reason)| json!({"kind": kind, "reason": reason}))
        .collect();
    Ok(Json(json!({
        "items": items,
        "pending": pending,
        "discovery": {"crds": state.discovery.crd_following()},
    })))
}

fn kind_status(watch: &Watch) -> Value {
    let (objects, rv) = {
        let view = watch.cache.read();
        (view.len(), view.resource_version().to_string())
    };
    let options = &watch.key.options;
    json!({
        "gvk": watch.key.gvk.to_string(),
        "resource": watch.resource.plural,
        "namespaced": watch.resource.namespaced,
        "namespace": options.namespace,
        "labelSelector": options.label_selector,
        "fieldSelector": options.field_selector,
        "onDemand": watch.on_demand(),
        "removedWhenIdle": watch.caller_made(),
        "synced": watch.cache.is_synced(),
        "objects": objects,
        "resourceVersion": rv,
        "status": watch.status(),
        "notificationFeed": watch.cache.tap_status(),
        "indexedFields": watch.cache.field_paths().dotted(),
    })
}
