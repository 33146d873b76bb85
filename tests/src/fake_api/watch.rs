//! WATCH: a chunked stream of JSON lines, replaying the log from the requested
//! resourceVersion and then following live changes, with bookmarks,
//! `timeoutSeconds`, 410 for compacted resourceVersions and abrupt drops.

use std::io;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use serde_json::json;
use tokio::sync::{mpsc, watch};
use tokio::time::{Instant, Interval, MissedTickBehavior};
use tokio_stream::wrappers::ReceiverStream;

use super::Shared;
use super::faults::StreamingLists;
use super::params::Params;
use super::selector::Selector;
use super::state::{EventType, ResourceKey, ResourceStore, StoredObject, write_typed};
use super::status::{error_response, json_response, status_body};

/// Lines buffered between the watch task and the connection.
const CHANNEL_CAPACITY: usize = 256;

/// Initial events written per chunk of the response.
const STATE_BATCH: usize = 256;

/// What one watch stream is about.
struct WatchSpec {
    resource: ResourceKey,
    namespace: Option<String>,
    selector: Selector,
    kind: String,
    api_version: String,
    epoch: u64,
    allow_bookmarks: bool,
    timeout: Option<Duration>,
}

/// Counts a stream as open for as long as it lives.
struct OpenWatch(Arc<Shared>);

impl OpenWatch {
    fn new(shared: Arc<Shared>) -> Self {
        shared.open_watches.fetch_add(1, Ordering::SeqCst);
        OpenWatch(shared)
    }
}

impl Drop for OpenWatch {
    fn drop(&mut self) {
        self.0.open_watches.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Subscriptions taken when the request arrived, so that nothing that
/// happens afterwards is missed.
struct Signals {
    rv: watch::Receiver<u64>,
    dropped: watch::Receiver<u64>,
    shutdown: watch::Receiver<bool>,
}

/// Answers a watch request. Errors in the request itself get an ordinary
/// error response; a compacted resourceVersion gets a 200 stream holding one
/// `ERROR` event, as real servers do.
pub(crate) fn watch(
    shared: Arc<Shared>,
    resource: &ResourceKey,
    version: &str,
    namespace: Option<&str>,
    params: &Params,
) -> Response {
    let selector = match Selector::parse(
        params.label_selector.as_deref(),
        params.field_selector.as_deref(),
    ) {
        Ok(s) => s,
        Err(message) => return error_response(400, &message),
    };
    let start_rv = match params.numeric_rv() {
        Ok(rv) => rv,
        Err(message) => return error_response(400, &message),
    };
    let (streaming, list_delay, pace) = {
        let faults = shared.faults.lock();
        (faults.streaming_lists, faults.list_delay, faults.list_pace)
    };
    let send_initial_events = params.send_initial_events && streaming != StreamingLists::Ignored;
    if send_initial_events {
        let forbidden = |field: &str, what: &str| {
            error_response(
                422,
                &format!("ListOptions.meta.k8s.io \"\" is invalid: {field}: Forbidden: {what}"),
            )
        };
        if params.resource_version_match.as_deref() != Some("NotOlderThan") {
            return forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            );
        }
        if streaming == StreamingLists::Refused {
            return forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
            );
        }
    }
    let signals = Signals {
        rv: shared.rv_tx.subscribe(),
        dropped: shared.drop_tx.subscribe(),
        shutdown: shared.shutdown_tx.subscribe(),
    };

    let store = shared.store.lock();
    let Some(res) = store.resources.get(resource).filter(|r| r.served) else {
        return super::status::not_found();
    };
    let spec = WatchSpec {
        resource: resource.clone(),
        namespace: namespace.map(str::to_string),
        selector,
        kind: res.def.kind.clone(),
        api_version: res.def.api_version(version),
        epoch: res.epoch,
        allow_bookmarks: params.allow_bookmarks,
        timeout: params.timeout_seconds.map(Duration::from_secs),
    };

    // The objects the watch starts with, written out by the watch's task a
    // batch at a time (a copy of a million Pods' text would not fit).
    let mut state = Vec::new();
    let mut initial = Vec::new();
    let mut expired = false;
    let from_rv = match start_rv {
        Some(rv) if rv < store.compacted_rv => {
            let message = format!("too old resource version: {rv} ({})", store.compacted_rv);
            let status = status_body(410, "Expired", &message);
            initial.push(Bytes::from(format!(
                "{{\"type\":\"ERROR\",\"object\":{status}}}\n"
            )));
            expired = true;
            rv
        }
        Some(rv) if !send_initial_events => rv,
        _ => {
            // Start from now: the current state as synthetic ADDED events.
            state = res
                .objects
                .values()
                .filter(|object| spec.accepts(object))
                .cloned()
                .collect();
            if send_initial_events && params.allow_bookmarks {
                initial.push(bookmark_line(&spec, store.rv, true));
            }
            store.rv
        }
    };
    drop(store);

    let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
    let open = OpenWatch::new(shared.clone());
    tokio::spawn(async move {
        let _open = open;
        if send_initial_events && !expired {
            tokio::time::sleep(list_delay).await;
        }
        let start = Instant::now();
        for (i, batch) in state.chunks(STATE_BATCH).enumerate() {
            let mut lines = Vec::new();
            for object in batch {
                write_event(&mut lines, EventType::Added, &object.body, &spec);
            }
            if let Some(pace) = pace {
                tokio::time::sleep_until(pace.due(start, i * STATE_BATCH + batch.len())).await;
            }
            if tx.send(Ok(Bytes::from(lines))).await.is_err() {
                return;
            }
            shared
                .watch_events_sent
                .fetch_add(batch.len(), Ordering::Relaxed);
        }
        for line in initial {
            if tx.send(Ok(line)).await.is_err() {
                return;
            }
            shared.watch_events_sent.fetch_add(1, Ordering::Relaxed);
        }
        if !expired {
            follow(&shared, &spec, from_rv, signals, &tx).await;
        }
    });
    json_response(200, Body::from_stream(ReceiverStream::new(rx)))
}

type Sink = mpsc::Sender<Result<Bytes, io::Error>>;

/// Streams live changes until the stream times out, is dropped, the client goes
/// away, the server shuts down or the resource stops being served.
async fn follow(
    shared: &Shared,
    spec: &WatchSpec,
    mut last_rv: u64,
    mut signals: Signals,
    tx: &Sink,
) {
    let deadline = spec.timeout.map(|t| Instant::now() + t);
    let mut bookmarks = spec.allow_bookmarks.then(|| {
        let every = shared.bookmark_interval.max(Duration::from_millis(10));
        let mut timer = tokio::time::interval_at(Instant::now() + every, every);
        timer.set_missed_tick_behavior(MissedTickBehavior::Delay);
        timer
    });
    let mut bookmark_due = false;
    loop {
        signals.rv.borrow_and_update();
        let (lines, rv, ended) = {
            let store = shared.store.lock();
            match store.resources.get(&spec.resource) {
                Some(res) => {
                    let lines = pending_lines(res, spec, last_rv);
                    (lines, store.rv, !res.served || res.epoch != spec.epoch)
                }
                None => (Vec::new(), store.rv, true),
            }
        };
        for line in lines {
            if tx.send(Ok(line)).await.is_err() {
                return;
            }
            shared.watch_events_sent.fetch_add(1, Ordering::Relaxed);
        }
        last_rv = rv;
        if ended {
            return;
        }
        if std::mem::take(&mut bookmark_due)
            && tx
                .send(Ok(bookmark_line(spec, last_rv, false)))
                .await
                .is_err()
        {
            return;
        }
        tokio::select! {
            changed = signals.rv.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            _ = tick(&mut bookmarks) => bookmark_due = true,
            _ = sleep_until(deadline) => return,
            _ = signals.dropped.changed() => {
                let error = io::Error::new(io::ErrorKind::ConnectionAborted, "watch dropped by test");
                let _ = tx.send(Err(error)).await;
                return;
            }
            _ = signals.shutdown.changed() => return,
            _ = tx.closed() => return,
        }
    }
}

async fn tick(timer: &mut Option<Interval>) {
    match timer {
        Some(timer) => {
            timer.tick().await;
        }
        None => std::future::pending().await,
    }
}

async fn sleep_until(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => tokio::time::sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

impl WatchSpec {
    fn accepts(&self, object: &StoredObject) -> bool {
        self.namespace
            .as_ref()
            .is_none_or(|ns| object.namespace == *ns)
            && self.selector.matches(object)
    }
}

/// Lines for logged changes after `after_rv`. An update that makes an object
/// start (stop) matching the selector is sent as ADDED (DELETED), like the
/// watch cache of a real server does.
fn pending_lines(res: &ResourceStore, spec: &WatchSpec, after_rv: u64) -> Vec<Bytes> {
    let mut lines = Vec::new();
    for event in &res.log[res.log_after(after_rv)..] {
        let now = spec.accepts(&event.object);
        if event.kind == EventType::Deleted {
            if now {
                lines.push(event_line(EventType::Deleted, &event.object.body, spec));
            }
            continue;
        }
        let before = event.previous.as_ref().is_some_and(|p| spec.accepts(p));
        match (before, now) {
            (true, true) => lines.push(event_line(EventType::Modified, &event.object.body, spec)),
            (false, true) => lines.push(event_line(EventType::Added, &event.object.body, spec)),
            (true, false) => {
                let previous = event.previous.as_ref().expect("matched above");
                let mut old = previous.value();
                old["metadata"]["resourceVersion"] = json!(event.rv.to_string());
                let body = serde_json::to_vec(&old).unwrap_or_default();
                lines.push(event_line(EventType::Deleted, &body, spec));
            }
            (false, false) => {}
        }
    }
    lines
}

fn event_line(kind: EventType, body: &[u8], spec: &WatchSpec) -> Bytes {
    let mut out = Vec::with_capacity(body.len() + 96);
    write_event(&mut out, kind, body, spec);
    Bytes::from(out)
}

fn write_event(out: &mut Vec<u8>, kind: EventType, body: &[u8], spec: &WatchSpec) {
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_str().as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    write_typed(out, body, &spec.kind, &spec.api_version);
    out.extend_from_slice(b"}\n");
}

fn bookmark_line(spec: &WatchSpec, rv: u64, initial_events_end: bool) -> Bytes {
    let annotations = if initial_events_end {
        json!({"k8s.io/initial-events-end": "true"})
    } else {
        json!({})
    };
    let event = json!({
        "type": "BOOKMARK",
        "object": {
            "kind": spec.kind,
            "apiVersion": spec.api_version,
            "metadata": {"resourceVersion": rv.to_string(), "annotations": annotations},
        },
    });
    Bytes::from(format!("{event}\n"))
}
