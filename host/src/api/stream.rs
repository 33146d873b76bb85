//! The event stream: Kubernetes watch-event JSON lines, one change per line,
//! from a snapshot or a resourceVersion on, then live.
//!
//! What both the native route (`watch=true`) and the Kubernetes routes'
//! watches share lives here: how long a stream lasts ([`lifetime`]), what a
//! selection's client sees of a change ([`selected`]), and the live part of
//! a stream ([`Live`]: changes, bookmarks, the end, a client too slow).
//! Each route writes its own lines.
//!
//! Every stream ends: a caller is checked when its stream opens, so a
//! stream that lasted for ever would keep sending to a caller whose access
//! was revoked since, and hold its watch for ever.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Body;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::RecvError;
use tokio::time::Instant;

use super::Problem;
use crate::event::ChangeType;
use crate::gvk::Gvk;
use crate::plugin::Plugin;
use crate::query::Query;
use crate::store::{Change, Since, StoredObject};
use crate::watch::{Streaming, Watch};

/// How often an idle stream that allows bookmarks gets one: the API
/// server's watch cache sends them about once a minute; more often costs
/// little and lets clients resume closer to now.
pub(super) const BOOKMARK_INTERVAL: Duration = Duration::from_secs(15);

/// How long a stream lasts: `timeoutSeconds` when the client sends one, cut
/// to `max` (`watchStreamMaxSeconds`); otherwise, like the API server's
/// watches (`--min-request-timeout`, 30 minutes, to twice that), half of
/// `max` to all of it, chosen per stream so that clients spread their
/// reconnections. Never longer than `max`: a client's number cannot make
/// the deadline overflow the clock or outlast the bound.
pub(super) fn lifetime(asked: Option<Duration>, max: Duration) -> Duration {
    match asked {
        Some(asked) => asked.min(max),
        None => {
            let nanos = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let half = max / 2;
            half + half.mul_f64(f64::from(nanos) / 1e9)
        }
    }
}

/// What a client of `query` sees of `change`: the change itself while the
/// object stays selected; an object that starts to match arrives as an
/// `ADDED`, and one that stops matching leaves as a `DELETED` of its last
/// matching state, at the resourceVersion of the change, so a client's
/// store stays exactly the selection. `None`: the client sees nothing.
pub(super) fn selected(change: &Arc<Change>, query: &Query, gvk: &Gvk) -> Option<Arc<Change>> {
    let now = query.matches(&change.object);
    let before = change.old.as_ref().map(|old| query.matches(old));
    let (kind, object) = match (change.kind, before, now) {
        (ChangeType::Modified, Some(false), true) => (ChangeType::Added, change.object.clone()),
        (ChangeType::Modified, Some(true), false) => {
            let old = change.old.as_ref()?;
            let rv = change.object.resource_version();
            (ChangeType::Deleted, at_version(old, rv, gvk)?)
        }
        (_, _, false) => return None,
        (_, _, true) => return Some(change.clone()),
    };
    Some(Arc::new(Change {
        kind,
        object,
        old: None,
        origin: change.origin,
        position: change.position,
    }))
}

/// `old` as it is sent when it leaves a selection: its last state, at the
/// resourceVersion of the change that took it out.
fn at_version(old: &StoredObject, rv: &str, gvk: &Gvk) -> Option<Arc<StoredObject>> {
    let mut value = old.to_value();
    value["metadata"]["resourceVersion"] = serde_json::json!(rv);
    let bytes = serde_json::to_vec(&value).ok()?;
    StoredObject::from_json(&bytes, gvk).ok().map(Arc::new)
}

/// The live part of a stream, after its backlog: it keeps its watch in use
/// (never removed as idle while streamed) until dropped.
pub(super) struct Live {
    changes: broadcast::Receiver<Arc<Change>>,
    deadline: Instant,
    bookmarks: Option<tokio::time::Interval>,
    watch: Arc<Watch>,
    _streaming: Streaming,
}

/// What comes next on a stream.
pub(super) enum Next {
    /// A change of the cache (not yet matched against the query).
    Change(Arc<Change>),
    /// Time for a bookmark at this resourceVersion.
    Bookmark(String),
    /// The client read too slowly and missed this many changes: the stream
    /// ends after saying so.
    Lagged(u64),
    /// The stream's lifetime is over (or the cache is gone).
    End,
}

impl Live {
    /// Follows `changes` of `watch` for `lifetime`, with a bookmark every
    /// [`BOOKMARK_INTERVAL`] if `bookmarks`. `streaming` is the guard
    /// taken when the stream opened.
    pub(super) fn new(
        watch: Arc<Watch>,
        streaming: Streaming,
        changes: broadcast::Receiver<Arc<Change>>,
        lifetime: Duration,
        bookmarks: bool,
    ) -> Live {
        let bookmarks = bookmarks.then(|| {
            let mut interval = tokio::time::interval(BOOKMARK_INTERVAL);
            interval.reset();
            interval
        });
        Live {
            changes,
            // `lifetime` is bounded (see `lifetime`); saturate anyway.
            deadline: Instant::now()
                .checked_add(lifetime)
                .unwrap_or_else(|| Instant::now() + Duration::from_secs(86_400)),
            bookmarks,
            watch,
            _streaming: streaming,
        }
    }

    /// Waits for what comes next.
    pub(super) async fn next(&mut self) -> Next {
        let Live {
            changes,
            deadline,
            bookmarks,
            watch,
            ..
        } = self;
        let bookmark = async {
            match bookmarks {
                Some(interval) => interval.tick().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            change = changes.recv() => match change {
                Ok(change) => Next::Change(change),
                Err(RecvError::Lagged(missed)) => Next::Lagged(missed),
                Err(RecvError::Closed) => Next::End,
            },
            _ = bookmark => Next::Bookmark(watch.cache.read().resource_version().to_string()),
            () = tokio::time::sleep_until(*deadline) => Next::End,
        }
    }
}

/// Options of one stream request.
pub(super) struct StreamOptions {
    pub since: Since,
    pub bookmarks: bool,
    /// How long the stream lasts (see [`lifetime`]).
    pub lifetime: Duration,
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
    let (lifetime, bookmarks) = (options.lifetime, options.bookmarks);
    let gvk = watch.key.gvk.clone();
    let streaming = watch.streaming();
    let lines = async_stream::stream! {
        let mut last_rv = watch.cache.read().resource_version().to_string();
        // A snapshot holds every object of the cache: checked on a
        // blocking thread, as a list's candidates are, not on the runtime's.
        let (backlog, checking) = (tail.backlog, query.clone());
        let paths = watch.cache.field_paths().clone();
        let checked = tokio::task::spawn_blocking(move || {
            backlog
                .into_iter()
                .filter(|change| checking.matches_in(&change.object, &paths))
                .collect::<Vec<Arc<Change>>>()
        })
        .await;
        // A panic in the check is a GRW bug: the stream ends, and the
        // client watches again, rather than miss objects.
        let Ok(backlog) = checked else {
            tracing::error!("checking an event stream's first objects failed; the stream ends");
            return;
        };
        for change in plugins_pass(&filters, &gvk, backlog).await {
            last_rv = change.object.resource_version().to_string();
            yield Ok::<Bytes, std::convert::Infallible>(line(&change));
        }
        let mut live = Live::new(watch, streaming, tail.live, lifetime, bookmarks);
        loop {
            match live.next().await {
                Next::Change(change) => {
                    let Some(change) = selected(&change, &query, &gvk) else {
                        continue;
                    };
                    for change in plugins_pass(&filters, &gvk, vec![change]).await {
                        last_rv = change.object.resource_version().to_string();
                        yield Ok(line(&change));
                    }
                }
                Next::Bookmark(rv) => yield Ok(bookmark(&gvk.api_version(), &gvk.kind, &rv)),
                Next::Lagged(missed) => {
                    yield Ok(expired(&format!(
                        "the client read too slowly and missed {missed} changes; watch again from resourceVersion {last_rv}"
                    )));
                    break;
                }
                Next::End => break,
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

#[cfg(test)]
mod tests {
    use super::*;

    const HOUR: Duration = Duration::from_secs(3600);

    #[test]
    fn every_stream_ends_within_the_bound() {
        // The largest number a client can send: cut, no overflow.
        assert_eq!(lifetime(Some(Duration::from_secs(u64::MAX)), HOUR), HOUR);
        assert_eq!(lifetime(Some(Duration::MAX), HOUR), HOUR);
        assert_eq!(
            lifetime(Some(Duration::from_secs(10)), HOUR),
            Duration::from_secs(10)
        );
        for _ in 0..100 {
            let spread = lifetime(None, HOUR);
            assert!(
                (HOUR / 2..=HOUR).contains(&spread),
                "{spread:?} is not 30 to 60 minutes"
            );
        }
    }
}
