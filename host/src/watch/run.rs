//! The list+watch loop of one watch.
//!
//! List (a streaming list where the server offers one, else paginated) →
//! replace the cache (a diff after the first time) → watch from the list's
//! resourceVersion (a streaming list goes on as that watch) → on a clean end
//! or a dropped connection, watch again from the last resourceVersion seen
//! (events or bookmarks) → on `410 Gone`, list again. Errors back off
//! exponentially; 401/403 back off slowly. The cache keeps serving its last
//! state throughout.
//!
//! The loop asks the server through [`ListWatch`]: the daemon's
//! [`KubeClient`](crate::kube::KubeClient), or in `run/tests.rs` a fake that
//! answers from a script and records what the loop asked.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use futures::StreamExt;
use serde_json::value::RawValue;
// The runtime's clock, which the tests pause; the same as std's otherwise.
use tokio::time::Instant;

use super::{Phase, Watch, WatchSettings};
use crate::backoff::Backoff;
use crate::error::Report;
use crate::event::ChangeType;
use crate::gvk::Gvk;
use crate::kube::{ApiError, INITIAL_EVENTS_END, ListWatch, WatchLine, WatchStream};
use crate::metrics::Metrics;
use crate::store::{Cache, Ingest, Origin, StoredObject};

/// A watch that ends sooner than this without any event counts as a failure
/// for backoff, so a server that closes watches at once is not hammered.
const MIN_HEALTHY_WATCH: Duration = Duration::from_secs(1);

/// A watch stream that held this long was healthy: if it then fails, the
/// backoff starts over instead of going on from the failures before it.
const HEALTHY_PERIOD: Duration = Duration::from_secs(30);

/// Runs the loop of `watch` for as long as the process does.
///
/// Generic rather than `dyn`: a trait whose methods return `impl Future`
/// makes no trait object, and the daemon has one client type, so the loop
/// is compiled once for it.
pub(super) async fn run<C: ListWatch>(
    watch: Arc<Watch>,
    client: C,
    settings: WatchSettings,
    metrics: Arc<Metrics>,
) {
    let mut retry = Retry::new(&settings);
    let gvk = watch.key.gvk.to_string();
    // Whether the journal wants who wrote each object: asked once.
    let ingest = settings
        .who
        .ingest(&watch.key.gvk, settings.keep_managed_fields);
    // `None`: the resume point is lost, list first. A cache seeded with the
    // state of an earlier run resumes from that state's resourceVersion.
    let mut resume: Option<String> = watch
        .cache
        .is_synced()
        .then(|| watch.cache.read().resource_version().to_string())
        .filter(|rv| !rv.is_empty());
    // Until the server shows it does not offer streaming lists.
    let mut streaming = settings.streaming_list;
    loop {
        // Whether this watch starts from the list just made.
        let fresh = resume.is_none();
        let (rv, streamed) = match resume.take() {
            Some(rv) => (rv, None),
            None => match sync(&watch, &client, &settings, &mut streaming).await {
                Ok(synced) => {
                    watch.set_denied(None);
                    retry.reset();
                    metrics.objects(&gvk, watch.cache.read().len());
                    synced
                }
                Err(e) => {
                    retry.fail(&watch, &client, &e).await;
                    continue;
                }
            },
        };
        let opened = Instant::now();
        // A streaming list goes on as the watch from its own end.
        let stream = match streamed {
            Some(stream) => Ok(stream),
            None => {
                client
                    .watch(
                        &watch.resource,
                        &watch.key.options,
                        &rv,
                        settings.watch_timeout_seconds,
                    )
                    .await
            }
        };
        let mut stream = match stream {
            Ok(s) => s,
            Err(e) if e.is_gone() => {
                note_relist(&watch, &metrics, &gvk, &e);
                retry.gone_again(fresh).await;
                continue;
            }
            Err(e) => {
                resume = Some(rv);
                retry.fail(&watch, &client, &e).await;
                continue;
            }
        };
        // Open: whatever was refused before is not any more.
        watch.set_denied(None);
        watch.update_status(|s| s.phase = Phase::Ready);
        let mut last_rv = rv;
        let mut saw_event = false;
        let mut failure: Option<ApiError> = None;
        while let Some(line) = stream.next().await {
            match line {
                Ok(WatchLine::Change(kind, text)) => {
                    saw_event = true;
                    match StoredObject::from_raw(&text, &watch.key.gvk, ingest) {
                        Ok(object) => {
                            last_rv = object.resource_version().to_string();
                            if watch.cache.apply(kind, object, Origin::Watch).is_some() {
                                metrics.event(&gvk, kind.as_str());
                                watch.update_status(|s| {
                                    s.events += 1;
                                    s.last_event_time = Some(SystemTime::now());
                                });
                            }
                        }
                        Err(e) => tracing::warn!(gvk, error = %e, "watch event skipped"),
                    }
                }
                Ok(WatchLine::Bookmark {
                    resource_version: bookmark_rv,
                    ..
                }) => {
                    saw_event = true;
                    watch.cache.set_resource_version(&bookmark_rv);
                    last_rv = bookmark_rv;
                }
                Ok(WatchLine::Error(e)) | Err(e) => {
                    failure = Some(e);
                    break;
                }
            }
        }
        metrics.objects(&gvk, watch.cache.read().len());
        if saw_event || opened.elapsed() >= MIN_HEALTHY_WATCH {
            retry.gone.reset();
        }
        if opened.elapsed() >= HEALTHY_PERIOD {
            retry.reset();
        }
        match failure {
            Some(e) if e.is_gone() => {
                note_relist(&watch, &metrics, &gvk, &e);
                retry.gone_again(fresh && !saw_event).await;
            }
            Some(e) => {
                resume = Some(last_rv);
                restarted(&watch, &metrics, &gvk);
                retry.fail(&watch, &client, &e).await;
            }
            None => {
                resume = Some(last_rv);
                restarted(&watch, &metrics, &gvk);
                if saw_event || opened.elapsed() >= MIN_HEALTHY_WATCH {
                    retry.reset();
                } else {
                    tokio::time::sleep(retry.normal.next_delay()).await;
                }
            }
        }
    }
}

/// Brings the cache to the server's current state: by a streaming list
/// while `streaming` holds, which returns the watch that follows it, or
/// else (and from then on, once the server refused one) by LIST pages.
/// Returns the resourceVersion to watch from.
async fn sync<C: ListWatch>(
    watch: &Watch,
    client: &C,
    settings: &WatchSettings,
    streaming: &mut bool,
) -> Result<(String, Option<WatchStream>), ApiError> {
    if *streaming {
        match stream_list(watch, client, settings).await? {
            Streamed::Synced(rv, stream) => return Ok((rv, Some(stream))),
            Streamed::NotOffered(reason) => {
                tracing::info!(gvk = %watch.key.gvk, reason, "the API server does not offer streaming lists; listing in pages from now on");
                *streaming = false;
            }
        }
    }
    Ok((list(watch, client, settings).await?, None))
}

enum Streamed {
    /// The cache holds the initial events, at this resourceVersion; the
    /// stream goes on with the changes after it.
    Synced(String, WatchStream),
    /// The server does not serve streaming lists, for this reason.
    NotOffered(String),
}

/// Syncs by a streaming list: `ADDED` events until the bookmark that ends
/// the initial events, stored in batches of a page while the next ones
/// arrive, as [`list`] stores pages.
///
/// The server does not offer one when it refuses the request as invalid
/// (400, 422: the `WatchList` feature is off) or sends something else than
/// `ADDED` events before that bookmark: a server before Kubernetes 1.27
/// ignores the parameters and watches from now, its bookmarks lack the
/// annotation. A stream that ends before the bookmark (its timeoutSeconds
/// ran out while the server was still sending) counts as not offered too,
/// so a list too long for one watch is made in pages.
async fn stream_list(
    watch: &Watch,
    client: &impl ListWatch,
    settings: &WatchSettings,
) -> Result<Streamed, ApiError> {
    let first = begin_sync(watch);
    let refused = |e: ApiError| match e.code() {
        Some(400 | 422) => Ok(Streamed::NotOffered(Report(&e).to_string())),
        _ => Err(e),
    };
    let mut stream = match client
        .watch_list(
            &watch.resource,
            &watch.key.options,
            settings.watch_timeout_seconds,
        )
        .await
    {
        Ok(stream) => stream,
        Err(e) => return refused(e),
    };
    let mut storing = Storing::new(watch, settings);
    let mut objects = Vec::new();
    let mut batch = Vec::new();
    while let Some(line) = stream.next().await {
        match line {
            Ok(WatchLine::Change(ChangeType::Added, text)) => {
                batch.push(text);
                if batch.len() >= settings.page_size as usize {
                    storing.start(std::mem::take(&mut batch));
                    objects.extend(storing.make_room().await);
                }
            }
            Ok(WatchLine::Bookmark {
                resource_version,
                initial_events_end: true,
            }) => {
                if !batch.is_empty() {
                    storing.start(batch);
                }
                objects.extend(storing.finish().await);
                replace(watch, objects, &resource_version, first).await;
                return Ok(Streamed::Synced(resource_version, stream));
            }
            Ok(WatchLine::Bookmark { .. }) => {
                return Ok(Streamed::NotOffered(format!(
                    "a bookmark without the {INITIAL_EVENTS_END} annotation came before the end of the initial events"
                )));
            }
            Ok(WatchLine::Change(kind, _)) => {
                return Ok(Streamed::NotOffered(format!(
                    "a {kind} event came before the end of the initial events"
                )));
            }
            Ok(WatchLine::Error(e)) | Err(e) => return refused(e),
        }
    }
    Ok(Streamed::NotOffered(
        "the stream ended before its initial events did".to_string(),
    ))
}

/// Marks the watch as syncing (the first time) or reconnecting; returns
/// whether this is the first sync.
fn begin_sync(watch: &Watch) -> bool {
    let first = !watch.cache.is_synced();
    watch.update_status(|s| {
        // Refused, it stays failed until an attempt succeeds, not only
        // while it waits to try again.
        if s.phase != Phase::Failed {
            s.phase = if first {
                Phase::Syncing
            } else {
                Phase::Reconnecting
            };
        }
    });
    first
}

/// Lists every page and replaces the cache with the result; returns the list's resourceVersion.
async fn list(
    watch: &Watch,
    client: &impl ListWatch,
    settings: &WatchSettings,
) -> Result<String, ApiError> {
    let first = begin_sync(watch);
    let mut objects = Vec::new();
    let fetch = |token: Option<String>| async move {
        let page = client
            .list_page(
                &watch.resource,
                &watch.key.options,
                settings.page_size,
                token.as_deref(),
            )
            .await;
        (page, token.is_some())
    };
    let mut storing = Storing::new(watch, settings);
    let mut pending = fetch(None).await;
    let rv = loop {
        let mut page = match pending {
            // The continue token expired between pages: the snapshot is gone, start over.
            (Err(e), true) if e.is_gone() => {
                storing.finish().await;
                objects.clear();
                pending = fetch(None).await;
                continue;
            }
            (other, _) => other?,
        };
        let token = page
            .metadata
            .continue_token
            .take()
            .filter(|t| !t.is_empty());
        // The next page is asked for, and received, while earlier ones are
        // stored on blocking threads, so the wire and the storing overlap
        // rather than take turns (BENCHMARKS.md, "The daemon at 10,000,
        // 100,000 and 1,000,000 Pods").
        storing.start(std::mem::take(&mut page.items));
        let next = async {
            match token {
                Some(t) => Some(fetch(Some(t)).await),
                None => None,
            }
        };
        let (stored, next) = tokio::join!(storing.make_room(), next);
        objects.extend(stored);
        match next {
            Some(next) => pending = next,
            None => break page.metadata.resource_version,
        }
    };
    objects.extend(storing.finish().await);
    replace(watch, objects, &rv, first).await;
    Ok(rv)
}

/// Replaces the cache with a sync's `objects` at `rv` and marks it synced.
/// On a blocking thread: at 100,000 Pods the diff takes a third of a
/// second of CPU, during which a runtime thread would answer nothing (an
/// exact GET waited 180 ms behind a relist; BENCHMARKS.md).
async fn replace(watch: &Watch, objects: Vec<StoredObject>, rv: &str, first: bool) {
    let origin = if first {
        Origin::Initial
    } else {
        Origin::Relist
    };
    let (cache, listed_rv) = (watch.cache.clone(), rv.to_string());
    let replacing = tokio::task::spawn_blocking(move || {
        let changes = cache.replace(objects, &listed_rv, origin);
        // The sync's pages, parsed lines and replaced objects are freed:
        // give the memory back before the cache counts as synced, rather
        // than keep it for a sync that may not come.
        crate::store::release_free_memory();
        changes
    });
    let changes = match replacing.await {
        Ok(changes) => changes,
        Err(failed) => match failed.try_into_panic() {
            // A panic in the diff is a GRW bug: the watch loop sees it as
            // it would have on its own thread.
            Ok(panic) => std::panic::resume_unwind(panic),
            // The runtime is shutting down.
            Err(_) => return,
        },
    };
    // Listed: neither refused nor failed any more, in its status before
    // the cache says it is synced, so that whoever sees `/readyz` answer
    // 200 sees the kind ready too.
    watch.set_denied(None);
    watch.update_status(|s| {
        s.phase = Phase::Ready;
        if !first {
            s.events += changes.len() as u64;
            if !changes.is_empty() {
                s.last_event_time = Some(SystemTime::now());
            }
        }
    });
    watch.cache.mark_synced();
    let count = watch.cache.read().len();
    tracing::info!(gvk = %watch.key.gvk, objects = count, resource_version = %rv, changes = changes.len(), first, "listed");
}

/// Pages being stored on blocking threads, at most one per core, their
/// objects handed back in the order of the pages.
struct Storing<'w> {
    watch: &'w Watch,
    ingest: Ingest,
    in_flight: std::collections::VecDeque<tokio::task::JoinHandle<Vec<StoredObject>>>,
    limit: usize,
}

impl<'w> Storing<'w> {
    fn new(watch: &'w Watch, settings: &WatchSettings) -> Self {
        Storing {
            watch,
            ingest: settings
                .who
                .ingest(&watch.key.gvk, settings.keep_managed_fields),
            in_flight: Default::default(),
            limit: std::thread::available_parallelism().map_or(1, |n| n.get()),
        }
    }

    fn start(&mut self, items: Vec<Box<RawValue>>) {
        let cache = self.watch.cache.clone();
        let gvk = self.watch.key.gvk.clone();
        let ingest = self.ingest;
        self.in_flight
            .push_back(tokio::task::spawn_blocking(move || {
                store_page(&items, &gvk, ingest, &cache)
            }));
    }

    /// The objects of the oldest page once it is stored, when as many pages
    /// are being stored as there are cores; nothing otherwise.
    async fn make_room(&mut self) -> Vec<StoredObject> {
        if self.in_flight.len() < self.limit {
            return Vec::new();
        }
        match self.in_flight.pop_front() {
            Some(oldest) => joined(oldest.await),
            None => Vec::new(),
        }
    }

    /// The objects of every page still being stored, in order.
    async fn finish(&mut self) -> Vec<StoredObject> {
        let mut objects = Vec::new();
        while let Some(page) = self.in_flight.pop_front() {
            objects.extend(joined(page.await));
        }
        objects
    }
}

fn joined<T>(result: Result<T, tokio::task::JoinError>) -> T {
    match result {
        Ok(value) => value,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    }
}

/// One page's objects as the cache stores them: from the text received,
/// compressed (so a list is never held whole as JSON).
fn store_page(
    items: &[Box<RawValue>],
    gvk: &Gvk,
    ingest: Ingest,
    cache: &Cache,
) -> Vec<StoredObject> {
    // Compressed as they are read once the cache has a dictionary; the
    // first pages of a kind (and those collecting samples for a new
    // dictionary) are compressed after, a page at a time.
    let packer = cache.packer();
    let mut objects: Vec<StoredObject> = items
        .iter()
        .filter_map(|item| {
            match StoredObject::from_raw_packed(item, gvk, ingest, packer.as_ref()) {
                Ok(o) => Some(o),
                Err(e) => {
                    tracing::warn!(gvk = %gvk, error = %e, "listed object skipped");
                    None
                }
            }
        })
        .collect();
    drop(packer);
    cache.pack(&mut objects);
    objects
}

fn note_relist(watch: &Watch, metrics: &Metrics, gvk: &str, e: &ApiError) {
    tracing::info!(gvk, reason = %crate::error::Report(e), "resume point lost, listing again");
    metrics.relist(gvk);
    watch.update_status(|s| s.relists += 1);
}

fn restarted(watch: &Watch, metrics: &Metrics, gvk: &str) {
    metrics.watch_restart(gvk);
    watch.update_status(|s| s.watch_restarts += 1);
}

struct Retry {
    normal: Backoff,
    denied: Backoff,
    /// Between lists whose own resourceVersion the server answers `410
    /// Gone` to at once: reset only by a watch that held (a list that
    /// succeeds does not count), so a server in that state gets a list
    /// less and less often rather than one after another.
    gone: Backoff,
}

impl Retry {
    fn new(settings: &WatchSettings) -> Self {
        Retry {
            normal: Backoff::new(settings.backoff.0, settings.backoff.1),
            denied: Backoff::new(settings.denied_backoff.0, settings.denied_backoff.1),
            gone: Backoff::new(settings.backoff.0, settings.backoff.1),
        }
    }

    /// After a `410 Gone`: waits before the relist when the watch started
    /// from the list just made (`fresh`), as the server then refuses its
    /// own resourceVersion; a watch that resumed from an older one relists
    /// at once.
    async fn gone_again(&mut self, fresh: bool) {
        if fresh {
            let delay = self.gone.next_delay();
            tracing::warn!(
                retry_in_ms = delay.as_millis() as u64,
                "the server answered 410 Gone to the resourceVersion of its own list; listing again after a pause"
            );
            tokio::time::sleep(delay).await;
        }
    }

    fn reset(&mut self) {
        self.normal.reset();
        self.denied.reset();
    }

    /// Records the error and waits before the next attempt.
    async fn fail(&mut self, watch: &Watch, client: &impl ListWatch, e: &ApiError) {
        let denied = e.is_denied();
        let delay = if denied {
            self.denied.next_delay()
        } else {
            self.normal.next_delay()
        };
        let error = Report(e).to_string();
        tracing::warn!(gvk = %watch.key.gvk, error, retry_in_ms = delay.as_millis() as u64, "watch failed");
        if let ApiError::Status {
            code: 403, message, ..
        } = e
        {
            watch.set_denied(Some(super::Denied {
                message: message.clone(),
            }));
        }
        watch.update_status(|s| {
            s.phase = if denied {
                Phase::Failed
            } else {
                Phase::Reconnecting
            };
            s.last_error = Some(error);
        });
        tokio::time::sleep(delay).await;
        if e.code() == Some(401)
            && let Err(e) = client.reconnect().await
        {
            tracing::warn!(error = %Report(&e), "rebuilding the Kubernetes client failed");
        }
    }
}

#[cfg(test)]
mod tests;
