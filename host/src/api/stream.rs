//! The event stream: Kubernetes watch-event JSON lines, one change per line,
//! from a snapshot or a resourceVersion on, then live.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use tokio::sync::broadcast::error::RecvError;

use super::Problem;
use crate::gvk::Gvk;
use crate::plugin::Plugin;
use crate::query::Query;
use crate::store::{Change, Since};
use crate::watch::Watch;

/// How often a stream with bookmarks tells the client its resume point.
const BOOKMARK_INTERVAL: Duration = Duration::from_secs(15);

/// Options of one stream request.
pub(super) struct StreamOptions {
    pub since: Since,
    pub bookmarks: bool,
    pub timeout: Option<Duration>,
    pub filters: Vec<Arc<Plugin>>,
}

pub(super) fn respond(
    watch: Arc<Watch>,
    query: Query,
    options: StreamOptions,
) -> Result<Response, Problem> {
    let tail = watch
        .cache
        .tail(options.since)
        .map_err(|e| Problem::new(StatusCode::GONE, "Expired", e.to_string()))?;
    let filters = Arc::new(options.filters);
    let gvk = watch.key.gvk.clone();
    let lines = async_stream::stream! {
        let mut last_rv = watch.cache.read().resource_version().to_string();
        let backlog: Vec<Arc<Change>> = tail
            .backlog
            .into_iter()
            .filter(|change| query.matches(&change.object))
            .collect();
        for change in plugins_pass(&filters, &gvk, backlog).await {
            last_rv = change.object.resource_version().to_string();
            yield Ok::<Bytes, std::convert::Infallible>(line(&change));
        }
        let mut live = tail.live;
        let deadline = options.timeout.map(|t| tokio::time::Instant::now() + t);
        let mut bookmarks = tokio::time::interval(BOOKMARK_INTERVAL);
        bookmarks.reset();
        loop {
            let change = tokio::select! {
                change = live.recv() => change,
                _ = bookmarks.tick(), if options.bookmarks => {
                    let rv = watch.cache.read().resource_version().to_string();
                    yield Ok(bookmark(&gvk.api_version(), &gvk.kind, &rv));
                    continue;
                }
                _ = sleep_until(deadline) => break,
            };
            match change {
                Ok(change) => {
                    if query.matches(&change.object) {
                        for change in plugins_pass(&filters, &gvk, vec![change]).await {
                            last_rv = change.object.resource_version().to_string();
                            yield Ok(line(&change));
                        }
                    }
                }
                Err(RecvError::Lagged(missed)) => {
                    yield Ok(expired(&format!(
                        "the client read too slowly and missed {missed} changes; watch again from resourceVersion {last_rv}"
                    )));
                    break;
                }
                Err(RecvError::Closed) => break,
            }
        }
    };
    let mut response = Body::from_stream(lines).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

/// The changes every filter plugin lets through. Plugin calls block for up
/// to their deadline, so they run on a blocking thread, never on the
/// runtime's own; each plugin's instance pool lets concurrent streams call
/// it at the same time.
async fn plugins_pass(
    filters: &Arc<Vec<Arc<Plugin>>>,
    gvk: &Gvk,
    changes: Vec<Arc<Change>>,
) -> Vec<Arc<Change>> {
    if filters.is_empty() || changes.is_empty() {
        return changes;
    }
    let (filters, gvk) = (filters.clone(), gvk.clone());
    tokio::task::spawn_blocking(move || {
        changes
            .into_iter()
            .filter(|change| filters.iter().all(|f| f.decide(&gvk, change)))
            .collect()
    })
    .await
    // A panic in a plugin call (a GRW bug, not a plugin's failure) lets
    // nothing through rather than take the stream down.
    .unwrap_or_default()
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// `{"type":"ADDED","object":{...}}\n`, written around the stored bytes.
fn line(change: &Change) -> Bytes {
    let mut out = Vec::with_capacity(change.object.json_len() + 32);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(change.kind.as_str().as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    change.object.write_json(&mut out);
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

fn bookmark(api_version: &str, kind: &str, rv: &str) -> Bytes {
    let event = serde_json::json!({"type": "BOOKMARK", "object": {
        "kind": kind, "apiVersion": api_version, "metadata": {"resourceVersion": rv}
    }});
    Bytes::from(format!("{event}\n"))
}

fn expired(message: &str) -> Bytes {
    let event = serde_json::json!({"type": "ERROR", "object": {
        "kind": "Status", "apiVersion": "v1", "status": "Failure",
        "reason": "Expired", "code": 410, "message": message
    }});
    Bytes::from(format!("{event}\n"))
}
