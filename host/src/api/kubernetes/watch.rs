//! `watch=true`: a stream of watch events as the API server writes them, one
//! JSON object per line, from the cache's history and then live.
//!
//! Where a watch starts:
//!
//! | request | first events |
//! |---|---|
//! | `resourceVersion` unset or `0` | an `ADDED` for every object (the API server's "get state and start at most recent" and "start at any") |
//! | `resourceVersion=N` | every change after `N`; `N` older than the history: one `ERROR` event, `410 Expired`; `N` newer than the cache: waits up to 3 s for it, then `504` |
//! | `sendInitialEvents=true` (with `resourceVersionMatch=NotOlderThan`) | an `ADDED` for every object, then a `BOOKMARK` annotated `k8s.io/initial-events-end: "true"` at the state's resourceVersion |
//! | `sendInitialEvents=false` | changes after `N` (or from now when unset) |
//!
//! With a label or field selector, an object that starts to match arrives
//! as `ADDED` and one that stops matching as `DELETED` (its last matching
//! state at the resourceVersion of the change), so a client's store stays
//! exactly the selection. Bookmarks (`allowWatchBookmarks`) come every
//! [`BOOKMARK_INTERVAL`](crate::api::stream::BOOKMARK_INTERVAL). A stream ends after `timeoutSeconds`, cut to
//! `watchStreamMaxSeconds` (default 3600), or, when none is given, after
//! half of that to all of it (30 to 60 minutes by default, as the API
//! server's do), so clients spread their reconnections; a client too slow to
//! keep up gets `410 Expired` and must list again. The stream is the native
//! route's ([`crate::api::stream::events`]): only its lines are written
//! here.

use std::time::SystemTime;

use axum::body::Body;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use bytes::Bytes;
use serde_json::json;

use super::KubeRequest;
use super::negotiate::Representation;
use super::options::{ListOptions, Version};
use super::read::{cached, fresh, partial_metadata};
use super::status::{KubeError, Status};
use super::table::{self, WatchTables};
use crate::api::stream::{Events, Stream, events, lifetime};
use crate::gvk::Gvk;
use crate::store::{Change, Since};

/// The annotation of the bookmark that ends the initial events.
const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";
/// The annotation of that bookmark carrying an empty list of the kind,
/// which clients use to build the list the events make up.
const LIST_BLUEPRINT: &str = "kubernetes.io/initial-events-list-blueprint";

/// Opens the watch stream.
pub(super) async fn serve(
    state: &crate::api::AppState,
    request: &KubeRequest<'_>,
    options: ListOptions,
) -> Result<Response, KubeError> {
    let watch = cached(state, request).await?;
    let initial = options.send_initial_events;
    let since = match (initial, options.version) {
        (Some(true), _) | (None, Version::Unset | Version::Any) => Since::Snapshot,
        (Some(false), Version::Unset | Version::Any) => Since::Now,
        (_, Version::At(n)) => Since::ResourceVersion(n),
    };
    if let Version::At(n) = options.version {
        fresh(&watch.cache, n).await?;
    }
    let query = request.query(state, &options).await?;
    let tables = match request.representation {
        Representation::Table(version) => {
            let (printer, include) = table::requested(state, request, version, &options).await?;
            Some(printer.watch(include))
        }
        _ => None,
    };
    let writer = EventWriter::new(request, tables);
    let lifetime = lifetime(options.timeout, state.config.watch_stream_max);
    let tail = match watch.cache.tail(since) {
        Ok(tail) => tail,
        Err(too_old) => {
            // A watch too old is still a 200: the error is its one event.
            let status = Status::expired(format!(
                "too old resource version: {} ({})",
                too_old.requested, too_old.oldest
            ));
            let line = event_line("ERROR", status.body().to_string().as_bytes());
            return Ok(stream_response(Body::from(line)));
        }
    };
    let stream = Stream {
        watch,
        tail,
        query,
        filters: Vec::new(),
        lifetime,
        bookmarks: options.bookmarks,
        end_of_initial: initial == Some(true),
    };
    Ok(stream_response(events(stream, writer)))
}

/// Writes the events of one stream in the representation asked for.
struct EventWriter {
    representation: Representation,
    gvk: Gvk,
    /// The Tables of a `Table` watch.
    tables: Option<WatchTables>,
}

impl EventWriter {
    fn new(request: &KubeRequest<'_>, tables: Option<WatchTables>) -> EventWriter {
        EventWriter {
            representation: request.representation,
            gvk: request.resource.gvk.clone(),
            tables,
        }
    }
}

impl Events for EventWriter {
    fn change(&mut self, change: &Change) -> Bytes {
        let (event, object) = (change.kind.as_str(), &change.object);
        match self.representation {
            Representation::Metadata(version) => {
                event_line(event, &partial_metadata(object, version))
            }
            Representation::Table(_) => {
                let table = self
                    .tables
                    .as_mut()
                    .map(|t| t.object(&object.to_value(), SystemTime::now()))
                    .unwrap_or_default();
                event_line(event, &table)
            }
            Representation::Plain | Representation::Aggregated(_) => {
                event_line(event, &object.json())
            }
        }
    }

    /// A BOOKMARK at `rv`; `end_of_initial` marks the end of the initial
    /// events. In a `Table` watch the bookmark is an object of the kind
    /// (empty but for its metadata) made into a one-row Table, as the API
    /// server's bookmarks are.
    fn bookmark(&mut self, rv: &str, end_of_initial: bool) -> Bytes {
        let (kind, api_version, list_kind) = match self.representation {
            Representation::Metadata(version) | Representation::Table(version) => (
                "PartialObjectMetadata".to_string(),
                format!("meta.k8s.io/{version}"),
                "PartialObjectMetadataList".to_string(),
            ),
            Representation::Plain | Representation::Aggregated(_) => (
                self.gvk.kind.clone(),
                self.gvk.api_version(),
                format!("{}List", self.gvk.kind),
            ),
        };
        let mut metadata = json!({"resourceVersion": rv, "creationTimestamp": null});
        if end_of_initial {
            let blueprint = format!(
                "{}\n",
                json!({"kind": list_kind, "apiVersion": api_version, "metadata": {}, "items": null})
            );
            metadata["annotations"] = json!({
                INITIAL_EVENTS_END: "true",
                LIST_BLUEPRINT: base64::engine::general_purpose::STANDARD.encode(blueprint),
            });
        }
        if let Some(tables) = &mut self.tables {
            let object = json!({
                "kind": self.gvk.kind,
                "apiVersion": self.gvk.api_version(),
                "metadata": metadata,
            });
            return event_line("BOOKMARK", &tables.object(&object, SystemTime::now()));
        }
        let object = json!({"kind": kind, "apiVersion": api_version, "metadata": metadata});
        event_line("BOOKMARK", object.to_string().as_bytes())
    }

    fn expired(&mut self, message: &str) -> Bytes {
        let status = Status::expired(message.to_string());
        event_line("ERROR", status.body().to_string().as_bytes())
    }
}

/// `{"type":"...","object":...}\n`.
fn event_line(event: &str, object: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(object.len() + 32);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(event.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    out.extend_from_slice(object);
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

fn stream_response(body: Body) -> Response {
    let mut response = body.into_response();
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
