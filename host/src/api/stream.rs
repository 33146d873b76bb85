//! The event stream: Kubernetes watch-event JSON lines, one change per line,
//! from a snapshot or a resourceVersion on, then live.
//!
//! The native route (`watch=true`) and the Kubernetes routes' watches are
//! one stream ([`events`]): how long it lasts ([`lifetime`]), what a
//! selection's client sees of a change ([`selected`]), its first changes
//! checked and written on blocking threads, and its live part ([`Live`]:
//! changes, bookmarks, the end, a client too slow). Each route only says
//! how its lines are written ([`Events`]).
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
use crate::store::{Change, FieldPaths, Since, StoredObject, Tail};
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

/// What a client of `query` sees of `change` (of a cache indexing the
/// fields `paths`): the change itself while the object stays selected; an
/// object that starts to match arrives as an `ADDED`, and one that stops
/// matching leaves as a `DELETED` of its last matching state, at the
/// resourceVersion of the change, so a client's store stays exactly the
/// selection. `None`: the client sees nothing.
pub(super) fn selected(
    change: &Arc<Change>,
    query: &Query,
    paths: &FieldPaths,
    gvk: &Gvk,
) -> Option<Arc<Change>> {
    let now = query.matches_in(&change.object, paths);
    let before = change.old.as_ref().map(|old| query.matches_in(old, paths));
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

/// How a route writes its stream's lines.
pub(super) trait Events: Send + 'static {
    /// The line of a change the client is sent (selected, and let through
    /// by the filter plugins).
    fn change(&mut self, change: &Change) -> Bytes;
    /// A bookmark at `rv`; `end_of_initial`: the one that ends the initial
    /// events of a Kubernetes watch that asked for them.
    fn bookmark(&mut self, rv: &str, end_of_initial: bool) -> Bytes;
    /// The `ERROR` event of a `410 Expired` `Status` saying `message`,
    /// which ends the stream.
    fn expired(&mut self, message: &str) -> Bytes;
}

/// One stream: what it follows, and how.
pub(super) struct Stream {
    pub watch: Arc<Watch>,
    /// Its first changes and live ones ([`Watch::cache`]'s `tail`).
    pub tail: Tail,
    pub query: Query,
    /// Filter plugins every change must pass.
    pub filters: Vec<Arc<Plugin>>,
    /// How long the stream lasts (see [`lifetime`]).
    pub lifetime: Duration,
    /// Whether an idle stream gets a bookmark every [`BOOKMARK_INTERVAL`].
    pub bookmarks: bool,
    /// Whether a bookmark marks the end of the first changes.
    pub end_of_initial: bool,
}

/// Changes of a stream's backlog checked and written in one go on a
/// blocking thread: a snapshot of 100,000 objects (100 MB of lines) is
/// never held at once, and the runtime never checks or writes it.
const BACKLOG_CHUNK: usize = 512;

/// The stream's body: its backlog, an end-of-initial bookmark if asked,
/// then live changes until its lifetime is over or its client reads too
/// slowly.
pub(super) fn events(stream: Stream, events: impl Events) -> Body {
    let Stream {
        watch,
        tail,
        query,
        filters,
        lifetime,
        bookmarks,
        end_of_initial,
    } = stream;
    let gvk = watch.key.gvk.clone();
    let streaming = watch.streaming();
    let check = Arc::new(Check {
        query,
        paths: watch.cache.field_paths().clone(),
        filters,
        gvk: gvk.clone(),
    });
    let lines = async_stream::stream! {
        let mut events = events;
        let mut last_rv = tail.resource_version.clone();
        let mut backlog = tail.backlog.into_iter();
        loop {
            let chunk: Vec<Arc<Change>> = backlog.by_ref().take(BACKLOG_CHUNK).collect();
            if chunk.is_empty() {
                break;
            }
            let check = check.clone();
            let written = tokio::task::spawn_blocking(move || {
                let lines = check.write(&mut events, chunk);
                (events, lines)
            })
            .await;
            // A panic in a check or a plugin call is a GRW bug: the stream
            // ends, and the client watches again, rather than miss objects.
            let Ok((returned, lines)) = written else {
                tracing::error!(gvk = %gvk, "writing an event stream's first changes failed; the stream ends");
                return;
            };
            events = returned;
            if let Some(rv) = lines.last_rv {
                last_rv = rv;
            }
            for line in lines.lines {
                yield Ok::<Bytes, std::convert::Infallible>(line);
            }
        }
        if end_of_initial {
            yield Ok(events.bookmark(&tail.resource_version, true));
        }
        let mut live = Live::new(watch, streaming, tail.live, lifetime, bookmarks);
        loop {
            match live.next().await {
                Next::Change(change) => {
                    let Some(change) = check.select(change).await else {
                        continue;
                    };
                    if check.passes(change.clone()).await {
                        last_rv = change.object.resource_version().to_string();
                        yield Ok(events.change(&change));
                    }
                }
                Next::Bookmark(rv) => {
                    yield Ok(events.bookmark(&rv, false));
                    last_rv = rv;
                }
                Next::Lagged(missed) => {
                    yield Ok(events.expired(&format!(
                        "the client read too slowly and missed {missed} changes; watch again from resourceVersion {last_rv}, or list again if that is too old"
                    )));
                    break;
                }
                Next::End => break,
            }
        }
    };
    Body::from_stream(lines)
}

/// What a stream checks each change against.
struct Check {
    query: Query,
    /// The fields the cache indexes.
    paths: FieldPaths,
    filters: Vec<Arc<Plugin>>,
    gvk: Gvk,
}

impl Check {
    /// What the client sees of `change` ([`selected`]). A `match=`
    /// expression may run up to its cost limit (milliseconds), so a query
    /// with one is checked on a blocking thread, never on the runtime's
    /// own; the others, a few microseconds at most, are checked here.
    async fn select(self: &Arc<Self>, change: Arc<Change>) -> Option<Arc<Change>> {
        if self.query.condition.is_none() {
            return selected(&change, &self.query, &self.paths, &self.gvk);
        }
        let check = self.clone();
        tokio::task::spawn_blocking(move || {
            selected(&change, &check.query, &check.paths, &check.gvk)
        })
        .await
        // A panic in a check (a GRW bug) lets nothing through rather than
        // take the stream down.
        .unwrap_or(None)
    }

    /// Whether every filter plugin lets `change` through. Plugin calls
    /// block for up to their deadline, so they run on a blocking thread,
    /// never on the runtime's own; each plugin's instance pool lets
    /// concurrent streams call it at the same time.
    async fn passes(self: &Arc<Self>, change: Arc<Change>) -> bool {
        if self.filters.is_empty() {
            return true;
        }
        let check = self.clone();
        tokio::task::spawn_blocking(move || check.plugins_pass(&change))
            .await
            // A panic in a plugin call (a GRW bug, not a plugin's failure)
            // lets nothing through rather than take the stream down.
            .unwrap_or(false)
    }

    fn plugins_pass(&self, change: &Change) -> bool {
        self.filters.iter().all(|f| f.decide(&self.gvk, change))
    }

    /// The lines of the changes of `chunk` the client is sent. Blocks:
    /// checking an object may read its JSON, and a filter plugin may take
    /// up to its deadline.
    fn write(&self, events: &mut impl Events, chunk: Vec<Arc<Change>>) -> Written {
        let sent: Vec<Arc<Change>> = chunk
            .iter()
            .filter_map(|change| selected(change, &self.query, &self.paths, &self.gvk))
            .filter(|change| self.plugins_pass(change))
            .collect();
        Written {
            last_rv: sent
                .last()
                .map(|change| change.object.resource_version().to_string()),
            lines: sent.iter().map(|change| events.change(change)).collect(),
        }
    }
}

/// The lines written of a chunk of a stream's first changes.
struct Written {
    lines: Vec<Bytes>,
    /// The resourceVersion of the last change written, if any.
    last_rv: Option<String>,
}

/// The options of one native stream request.
pub(super) struct StreamOptions {
    pub since: Since,
    pub bookmarks: bool,
    /// How long the stream lasts (see [`lifetime`]).
    pub lifetime: Duration,
    pub filters: Vec<Arc<Plugin>>,
}

/// The native stream: `{"type":"ADDED","object":{...}}` lines of the
/// objects as stored; `410` if `options.since` is older than the history.
pub(super) fn respond(
    watch: Arc<Watch>,
    query: Query,
    options: StreamOptions,
) -> Result<Response, Problem> {
    let tail = watch
        .cache
        .tail(options.since)
        .map_err(|e| Problem::new(StatusCode::GONE, "Expired", e.to_string()))?;
    let gvk = watch.key.gvk.clone();
    let stream = Stream {
        watch,
        tail,
        query,
        filters: options.filters,
        lifetime: options.lifetime,
        bookmarks: options.bookmarks,
        end_of_initial: false,
    };
    let mut response = events(stream, NativeEvents { gvk }).into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

/// The native stream's lines.
struct NativeEvents {
    gvk: Gvk,
}

impl Events for NativeEvents {
    /// `{"type":"ADDED","object":{...}}\n`, written around the stored bytes.
    fn change(&mut self, change: &Change) -> Bytes {
        let mut out = Vec::with_capacity(change.object.json_len() + 32);
        out.extend_from_slice(b"{\"type\":\"");
        out.extend_from_slice(change.kind.as_str().as_bytes());
        out.extend_from_slice(b"\",\"object\":");
        change.object.write_json(&mut out);
        out.extend_from_slice(b"}\n");
        Bytes::from(out)
    }

    fn bookmark(&mut self, rv: &str, _end_of_initial: bool) -> Bytes {
        let event = serde_json::json!({"type": "BOOKMARK", "object": {
            "kind": self.gvk.kind, "apiVersion": self.gvk.api_version(),
            "metadata": {"resourceVersion": rv}
        }});
        Bytes::from(format!("{event}\n"))
    }

    fn expired(&mut self, message: &str) -> Bytes {
        let event = serde_json::json!({"type": "ERROR", "object": {
            "kind": "Status", "apiVersion": "v1", "status": "Failure",
            "reason": "Expired", "code": 410, "message": message
        }});
        Bytes::from(format!("{event}\n"))
    }
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
