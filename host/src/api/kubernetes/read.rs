//! `get` and `list` of any resource, from the cache, with the API server's
//! meaning of `resourceVersion`, `resourceVersionMatch`, `limit` and
//! `continue` as far as a cache can honour it:
//!
//! | resourceVersion | match | answer |
//! |---|---|---|
//! | unset or `0` | – | the cache as it is |
//! | `N` | unset or `NotOlderThan` | the cache once it reached `N` (waits up to 3 s, then `504 Timeout`, cause `ResourceVersionTooLarge`) |
//! | `N` | `Exact` | the cache if it is exactly at `N` (after the same wait); older: `410 Expired`, since a cache keeps no past lists |
//!
//! A `continue` token carries the first page's resourceVersion, and every
//! page reports it, as the API server's pages do; later pages read the
//! cache as it is then, after the last key of the page before. A client
//! that watches from the list's resourceVersion so gets every change a
//! later page may already have shown, again: nothing is missed. A token
//! whose resourceVersion the cache's history no longer reaches is `410
//! Expired`, as the API server's expired tokens are.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::KubeRequest;
use super::negotiate::Representation;
use super::options::{ListOptions, Match, Version, search_status};
use super::status::{KubeError, Status, Subject};
use super::table;
use crate::api::AppState;
use crate::api::kinds::{KindError, synced_watch};
use crate::api::list_body::{json_items, json_list};
use crate::gvk::ResourceInfo;
use crate::query::{ContinueToken, PageRequest, PoolError, Query};
use crate::store::{Cache, ObjectKey, StoredObject};
use crate::watch::Watch;

/// How long a read waits for the cache to reach the resourceVersion asked
/// for: the API server's watch cache waits as long.
const FRESHNESS_WAIT: Duration = Duration::from_secs(3);
/// How often the cache's position is looked at meanwhile. Bookmarks move it
/// without a change event, so it is polled.
const FRESHNESS_POLL: Duration = Duration::from_millis(20);

/// A get or a list.
pub(super) async fn serve(
    state: &AppState,
    request: &KubeRequest<'_>,
    options: ListOptions,
) -> Result<Response, KubeError> {
    let watch = cached(state, request).await?;
    match request.name {
        Some(name) => get(state, request, &watch, name, &options).await,
        None => list(state, request, &watch, options).await,
    }
}

/// The synced watch holding the request's objects, started on demand.
pub(super) async fn cached(
    state: &AppState,
    request: &KubeRequest<'_>,
) -> Result<Arc<Watch>, KubeError> {
    synced_watch(state, &request.resource, request.namespace)
        .await
        .map_err(|e| kind_error(e, &request.resource, request.name).into())
}

async fn get(
    state: &AppState,
    request: &KubeRequest<'_>,
    watch: &Watch,
    name: &str,
    options: &ListOptions,
) -> Result<Response, KubeError> {
    if let Version::At(at_least) = options.version {
        fresh(&watch.cache, at_least).await?;
    }
    let key = ObjectKey::new(request.namespace.unwrap_or(""), name);
    let object = watch.cache.read().get(&key).cloned();
    let Some(object) = object else {
        return Err(Status::not_found(request.subject(), name).into());
    };
    let body = match request.representation {
        Representation::Metadata(version) => partial_metadata(&object, version),
        Representation::Table(version) => {
            let (printer, include) = table::requested(state, request, version, options).await?;
            printer.one(&object, include, SystemTime::now())
        }
        Representation::Plain | Representation::Aggregated(_) => object.json().to_vec(),
    };
    Ok(json_response(body))
}

async fn list(
    state: &AppState,
    request: &KubeRequest<'_>,
    watch: &Watch,
    options: ListOptions,
) -> Result<Response, KubeError> {
    let cache = &watch.cache;
    let (at, exact) = match (options.version, options.matching) {
        (Version::At(n), Some(Match::Exact)) => (Some(n), true),
        (Version::At(n), _) => (Some(n), false),
        (Version::Unset | Version::Any, _) => (None, false),
    };
    if let Some(at_least) = at {
        fresh(cache, at_least).await?;
    }
    // The printer first: finding a custom resource's may wait for GRW's
    // cache of CRDs, which must not hold the list's snapshot meanwhile.
    let table = match request.representation {
        Representation::Table(version) => {
            Some(table::requested(state, request, version, &options).await?)
        }
        _ => None,
    };
    let query = request.query(state, &options).await?;
    let page = PageRequest {
        limit: options.limit,
        after: options.continue_from.as_ref().map(|t| t.key().clone()),
    };
    // What later pages hold, as the API server reports it: only when no
    // selector filters the list (its storage then counts keys; with one it
    // would have to read every object, so it leaves the count out).
    let count_rest = options.labels.is_empty() && options.fields.is_empty();
    let listed = state
        .queries
        .list(cache, query, page, count_rest)
        .await
        .map_err(pool_status)?;
    let position = listed.position;
    if let (Some(n), true) = (at, exact)
        && n != position
    {
        return Err(Status::expired(format!(
            "The resourceVersion for the provided list is too old: GRW lists from its cache, which is at resourceVersion {position}; list without resourceVersionMatch=Exact"
        ))
        .into());
    }
    let list_rv = match options
        .continue_from
        .as_ref()
        .and_then(ContinueToken::resource_version)
    {
        Some(first_page) if first_page < listed.oldest_resumable => {
            return Err(Status::expired(
                "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.",
            )
            .into());
        }
        Some(first_page) => first_page.to_string(),
        None => listed.resource_version,
    };
    let result = listed.page;
    let remaining_item_count = listed.rest.and_then(|n| i64::try_from(n).ok());
    let next = result
        .next
        .map(|t| ContinueToken::after_at(t.key(), list_rv.parse().unwrap_or(position)).to_string());
    let representation = request.representation;
    let resource = request.resource.clone();
    let items = result.items;
    // Tables and metadata read every object: on the query pool, like
    // matching, so that a list of 10,000 Pods as a Table holds up no one.
    let body: Body = match (representation, table) {
        (_, Some((printer, include))) => {
            let meta = ListMeta::owned(list_rv, next, remaining_item_count);
            state
                .queries
                .run(move |budget| {
                    let now = SystemTime::now();
                    printer
                        .list_charged(&items, include, &meta.borrowed(), now, || budget.charge())
                        .map_err(Into::into)
                })
                .await
                .map_err(pool_status)?
                .into()
        }
        (Representation::Metadata(version), None) => {
            let meta = ListMeta::owned(list_rv, next, remaining_item_count);
            let version = version.to_string();
            metadata_list(items, version, meta)
        }
        (
            Representation::Plain | Representation::Aggregated(_) | Representation::Table(_),
            None,
        ) => {
            let meta = ListMeta {
                resource_version: &list_rv,
                continue_token: next.as_deref(),
                remaining_item_count,
            };
            object_list(&resource, items, &meta)
        }
    };
    Ok(json_response(body))
}

/// A query the pool did not answer, as the API server says the same:
/// `429 TooManyRequests` with `Retry-After` when its priority and fairness
/// queues are full, `504 Timeout` when a request outlives its timeout.
pub(super) fn pool_status(error: PoolError) -> Status {
    match error {
        PoolError::Busy { .. } => Status::too_many_requests(error.to_string(), 1),
        PoolError::OverBudget(_) => Status::timeout(error.to_string(), 1),
        PoolError::MatchTooCostly(_) => Status::bad_request(error.to_string()),
        PoolError::Failed => Status::internal(error.to_string()),
    }
}

/// The `metadata` of a list answer.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct ListMeta<'a> {
    /// `resourceVersion`.
    pub resource_version: &'a str,
    /// `continue`, when more may follow.
    pub continue_token: Option<&'a str>,
    /// `remainingItemCount`: how many objects the next pages hold, when
    /// known.
    pub remaining_item_count: Option<i64>,
}

/// A [`ListMeta`] that owns its texts, to hand to the query pool.
pub(super) struct OwnedListMeta {
    resource_version: String,
    continue_token: Option<String>,
    remaining_item_count: Option<i64>,
}

impl OwnedListMeta {
    fn borrowed(&self) -> ListMeta<'_> {
        ListMeta {
            resource_version: &self.resource_version,
            continue_token: self.continue_token.as_deref(),
            remaining_item_count: self.remaining_item_count,
        }
    }
}

impl ListMeta<'_> {
    fn owned(
        resource_version: String,
        continue_token: Option<String>,
        remaining_item_count: Option<i64>,
    ) -> OwnedListMeta {
        OwnedListMeta {
            resource_version,
            continue_token,
            remaining_item_count,
        }
    }

    fn json(&self) -> serde_json::Value {
        let mut meta = json!({"resourceVersion": self.resource_version});
        if let Some(token) = self.continue_token {
            meta["continue"] = json!(token);
        }
        if let Some(count) = self.remaining_item_count {
            meta["remainingItemCount"] = json!(count);
        }
        meta
    }
}

/// Waits until the cache reached `at_least`, for up to [`FRESHNESS_WAIT`].
pub(super) async fn fresh(cache: &Cache, at_least: u64) -> Result<(), Status> {
    let deadline = tokio::time::Instant::now() + FRESHNESS_WAIT;
    loop {
        let (position, rv) = {
            let view = cache.read();
            (view.position(), view.resource_version().to_string())
        };
        if position >= at_least {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(Status::too_large_resource_version(at_least, &rv));
        }
        tokio::time::sleep(FRESHNESS_POLL).await;
    }
}

/// `{"kind": "{Kind}List", ...}` around the stored bytes of each item,
/// written as it is sent.
fn object_list(resource: &ResourceInfo, items: Vec<Arc<StoredObject>>, meta: &ListMeta) -> Body {
    let head = format!(
        r#"{{"kind":"{}List","apiVersion":"{}","metadata":{},"items":["#,
        resource.gvk.kind,
        resource.gvk.api_version(),
        meta.json()
    );
    json_list(head.into_bytes(), items)
}

/// One object as `PartialObjectMetadata` of `meta.k8s.io/{version}`.
pub(super) fn partial_metadata(object: &StoredObject, version: &str) -> Vec<u8> {
    let mut body = Vec::with_capacity(256);
    write_partial_metadata(&mut body, object, version);
    body
}

fn write_partial_metadata(body: &mut Vec<u8>, object: &StoredObject, version: &str) {
    body.extend_from_slice(
        format!(
            r#"{{"kind":"PartialObjectMetadata","apiVersion":"meta.k8s.io/{version}","metadata":"#
        )
        .as_bytes(),
    );
    body.extend_from_slice(&object.get(&["metadata"]).unwrap_or(Cow::Borrowed(b"{}")));
    body.push(b'}');
}

/// `PartialObjectMetadataList` around the `metadata` of each item, written
/// as it is sent, like [`object_list`]: each item's metadata is read (and
/// decompressed) only when its chunk is written.
fn metadata_list(items: Vec<Arc<StoredObject>>, version: String, meta: OwnedListMeta) -> Body {
    let head = format!(
        r#"{{"kind":"PartialObjectMetadataList","apiVersion":"meta.k8s.io/{version}","metadata":{},"items":["#,
        meta.borrowed().json()
    );
    // The metadata and its wrapper are never longer than the object and
    // 128 bytes.
    let at_most = |object: &StoredObject| object.json_len() + 128;
    json_items(head.into_bytes(), items, at_most, move |object, out| {
        write_partial_metadata(out, object, &version)
    })
}

/// A 200 with a JSON body.
pub(super) fn json_response(body: impl Into<Body>) -> Response {
    let mut response = (StatusCode::OK, body.into()).into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("no-cache, private"),
    );
    response
}

/// Why no cache can answer, as a `Status`.
pub(super) fn kind_error(error: KindError, resource: &ResourceInfo, name: Option<&str>) -> Status {
    let subject = Subject {
        group: &resource.gvk.group,
        resource: &resource.plural,
    };
    let forbidden = matches!(error, KindError::Forbidden(_) | KindError::SecretsRefused);
    let timeout = matches!(error, KindError::SyncTimeout(..));
    let problem = crate::api::Problem::from(error);
    let message = problem.message;
    if let Some(retry_after) = problem.retry_after {
        Status::too_many_requests(message, retry_after)
    } else if forbidden {
        Status::forbidden(subject, name, &message)
    } else if timeout {
        Status::timeout(message, 1)
    } else {
        // Not watched, with on-demand watches off: GRW cannot serve it now.
        Status::unavailable(message)
    }
}

/// The query a list or watch runs: the path's namespace (and, for a watch
/// of one object, its name), the selectors, and GRW's search (its owner
/// looked up now).
impl KubeRequest<'_> {
    pub(super) async fn query(
        &self,
        state: &AppState,
        options: &ListOptions,
    ) -> Result<Query, Status> {
        let mut query = Query {
            namespace: self.namespace.map(str::to_string),
            name: self.name.map(str::to_string),
            labels: options.labels.clone(),
            fields: options.fields.clone(),
            ..Query::default()
        };
        options
            .search
            .apply(state, &self.resource, self.namespace, &mut query)
            .await
            .map_err(search_status)?;
        Ok(query)
    }
}
