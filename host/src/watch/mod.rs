//! Watches: one list+watch loop per (kind, namespace/selector) feeding one
//! [`Cache`], however many users want it; their status; and the replay source.
//!
//! A watch lives as long as the process, except one a caller's query
//! started ([`Watches::ensure_on_demand`]: a kind, namespace or
//! `dedicated=true` selection nothing else watches) and nothing else has
//! asked for since: the configuration, a subscription or an analyzer
//! ([`Watches::ensure`]) makes it permanent. Such a watch is removed once
//! no request has read it for `onDemandIdleSeconds` (a running event stream
//! counts as reading it): its loop ends, which closes its request at the API
//! server, and it leaves the list, so its cache is freed once the last
//! request holding it is answered. At most `maxOnDemandWatches` exist at
//! once; a query that needs one more is refused ([`TooManyWatches`]), so
//! no caller can make GRW hold API server watches and memory without bound.

mod replay;
mod run;

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use parking_lot::Mutex;
use serde::Serialize;

pub use replay::{BadEvent, Recording, ReplayError};

use crate::config::{Queries, WatchOptions};
use crate::gvk::{Gvk, KindRef, ResourceInfo};
use crate::kube::{ApiError, KubeClient};
use crate::metrics::Metrics;
use crate::store::{Cache, FieldPaths};

/// Identity of a watch: a kind and the server-side options that narrow it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct WatchKey {
    /// The kind.
    pub gvk: Gvk,
    /// Namespace, selectors and extra parameters sent to the server.
    pub options: WatchOptions,
}

/// Where a watch stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    /// First list in progress.
    Syncing,
    /// Synced and watching.
    Ready,
    /// Lost its watch or list; retrying. The cache keeps serving its last state.
    Reconnecting,
    /// Refused by the server (401/403); retrying slowly, and failed until
    /// an attempt succeeds.
    Failed,
}

/// What a watch has been doing, for the status API.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WatchStatus {
    /// Current phase.
    pub phase: Phase,
    /// Last error seen, if the watch is not healthy or recovered from one.
    pub last_error: Option<String>,
    /// When the last change arrived.
    #[serde(serialize_with = "serialize_time")]
    pub last_event_time: Option<SystemTime>,
    /// Changes applied since start.
    pub events: u64,
    /// Full relists after the first list.
    pub relists: u64,
    /// Watch requests re-opened after one ended.
    pub watch_restarts: u64,
}

fn serialize_time<S: serde::Serializer>(t: &Option<SystemTime>, s: S) -> Result<S::Ok, S::Error> {
    match t.and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok()) {
        Some(d) => s.serialize_str(&crate::time::rfc3339(d)),
        None => s.serialize_none(),
    }
}

/// One watch and its cache.
pub struct Watch {
    /// What is watched.
    pub key: WatchKey,
    /// How discovery describes the kind.
    pub resource: ResourceInfo,
    /// The objects.
    pub cache: Arc<Cache>,
    /// Started by a query rather than by configuration.
    on_demand: AtomicBool,
    /// Started by a caller's query and asked for by nothing else since:
    /// removed once idle (see the module's comment).
    caller_made: AtomicBool,
    /// When a request last read it (the runtime's clock, which tests pause).
    last_used: Mutex<tokio::time::Instant>,
    /// Event streams reading it now.
    streams: AtomicUsize,
    /// Woken when the watch is removed, to end its loop.
    stop: tokio::sync::Notify,
    /// Set once the watch is removed, for those who follow it
    /// ([`Watch::removed`]).
    gone: tokio::sync::watch::Sender<bool>,
    status: Mutex<WatchStatus>,
    /// The server's last refusal (403), until a list succeeds.
    denied: Mutex<Option<Denied>>,
    /// Woken on every status change.
    changed: tokio::sync::Notify,
}

impl Watch {
    /// Started by a query or an analyzer, and not (yet) asked for by the
    /// config or a subscription: it does not hold up readiness.
    pub fn on_demand(&self) -> bool {
        self.on_demand.load(Ordering::Relaxed)
    }

    /// Started by a caller's query and asked for by nothing else: removed
    /// after `onDemandIdleSeconds` unused.
    pub fn caller_made(&self) -> bool {
        self.caller_made.load(Ordering::Relaxed)
    }

    /// Records that a request read the watch now.
    pub fn touch(&self) {
        *self.last_used.lock() = tokio::time::Instant::now();
    }

    /// Marks the watch as read by an event stream until the guard is
    /// dropped: a watch being streamed is never idle.
    pub fn streaming(self: &Arc<Self>) -> Streaming {
        self.streams.fetch_add(1, Ordering::Relaxed);
        self.touch();
        Streaming(self.clone())
    }

    /// Returns once the watch is removed (see the module's comment): never
    /// for one that stays. Whoever follows the cache without reading it
    /// for a caller (the relationship index) lets go of it then, so that
    /// its memory is freed.
    pub async fn removed(&self) {
        let mut gone = self.gone.subscribe();
        // The sender lives as long as the watch: `Err` cannot happen.
        let _ = gone.wait_for(|gone| *gone).await;
    }

    /// When the watch becomes idle if nothing reads it: `None` while a
    /// stream reads it.
    fn idle_at(&self, idle: Duration) -> Option<tokio::time::Instant> {
        (self.streams.load(Ordering::Relaxed) == 0).then(|| *self.last_used.lock() + idle)
    }

    /// Whether the watch may be removed now: made by a caller, not read for
    /// `idle`, no stream reading it.
    fn removable(&self, idle: Duration) -> bool {
        self.caller_made()
            && self
                .idle_at(idle)
                .is_some_and(|at| at <= tokio::time::Instant::now())
    }

    /// A snapshot of the status.
    pub fn status(&self) -> WatchStatus {
        self.status.lock().clone()
    }

    pub(crate) fn update_status(&self, f: impl FnOnce(&mut WatchStatus)) {
        f(&mut self.status.lock());
        self.changed.notify_waiters();
    }

    /// Why the API server refuses this watch (403), if it does now.
    pub fn denied(&self) -> Option<Denied> {
        self.denied.lock().clone()
    }

    /// Records a refusal, or that the server lists again (`None`); the
    /// status update that follows wakes those waiting.
    pub(crate) fn set_denied(&self, denied: Option<Denied>) {
        *self.denied.lock() = denied;
    }

    /// Waits until the cache has synced (`Ok(true)`), `timeout` passed
    /// (`Ok(false)`), or the server refused a watch that never synced
    /// (`Err`), whichever comes first: a refusal is answered at once, not
    /// after the timeout. A cache that synced before serves its last state
    /// whatever the server says now.
    pub async fn synced_or_denied(&self, timeout: Duration) -> Result<bool, Denied> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.cache.is_synced() {
                return Ok(true);
            }
            if let Some(denied) = self.denied() {
                return Err(denied);
            }
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            tokio::select! {
                _ = changed => {}
                synced = self.cache.wait_synced(left) => return Ok(synced || self.cache.is_synced()),
            }
        }
    }
}

/// An event stream reading a watch (see [`Watch::streaming`]).
pub struct Streaming(Arc<Watch>);

impl Drop for Streaming {
    fn drop(&mut self) {
        // The idle period starts when the last stream ends.
        self.0.touch();
        self.0.streams.fetch_sub(1, Ordering::Relaxed);
    }
}

/// A query needs a new watch while `maxOnDemandWatches` watches queries
/// started are in use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "GRW already holds {max} watches that queries started (maxOnDemandWatches) and each is in use; this query needs a new one (another kind, namespace or dedicated selection): ask one GRW already watches (/api/v1/kinds lists them), or try again in {} s, when one may have been unused for onDemandIdleSeconds and removed",
    .retry_after.as_secs()
)]
pub struct TooManyWatches {
    /// The quota.
    pub max: usize,
    /// When the first watch may be idle long enough to be removed.
    pub retry_after: Duration,
}

/// Settings of every watch loop.
#[derive(Debug, Clone)]
pub struct WatchSettings {
    /// Objects per LIST page.
    pub page_size: u32,
    /// `timeoutSeconds` of WATCH requests; the loop re-opens the watch after.
    pub watch_timeout_seconds: u32,
    /// Backoff after errors.
    pub backoff: (Duration, Duration),
    /// Backoff after 401/403: retrying fast only floods the audit log.
    pub denied_backoff: (Duration, Duration),
    /// Keep `metadata.managedFields`.
    pub keep_managed_fields: bool,
    /// The kinds whose objects are read with a summary of who wrote them
    /// (for the journal).
    pub who: WhoKinds,
    /// Sync with a streaming list first (see [`crate::kube::KubeClient::watch_list`]).
    pub streaming_list: bool,
    /// Changes kept per cache for resuming event streams.
    pub history_size: usize,
    /// Bytes of changes kept per cache (see [`Cache::with_history_bytes`]).
    pub history_bytes: usize,
    /// Which fields each kind's caches index (`queries.indexedFields`).
    pub queries: Arc<Queries>,
    /// A watch a caller's query started is removed after this long unused.
    pub on_demand_idle: Duration,
    /// How many watches callers' queries may have started at once.
    pub max_on_demand: usize,
}

impl Default for WatchSettings {
    fn default() -> Self {
        WatchSettings {
            page_size: 500,
            // Below kube's 295 s read timeout, so the server ends the watch first.
            watch_timeout_seconds: 290,
            backoff: (Duration::from_millis(250), Duration::from_secs(30)),
            denied_backoff: (Duration::from_secs(5), Duration::from_secs(300)),
            keep_managed_fields: false,
            who: WhoKinds::none(),
            streaming_list: true,
            history_size: 10_000,
            history_bytes: 64 << 20,
            queries: Arc::default(),
            on_demand_idle: Duration::from_secs(600),
            max_on_demand: 100,
        }
    }
}

/// Which kinds' objects are read with [`Ingest::who`](crate::store::Ingest).
#[derive(Clone)]
pub struct WhoKinds(Arc<dyn Fn(&Gvk) -> bool + Send + Sync>);

impl WhoKinds {
    /// No kind.
    pub fn none() -> WhoKinds {
        WhoKinds(Arc::new(|_| false))
    }

    /// The kinds `covers` says.
    pub fn new(covers: impl Fn(&Gvk) -> bool + Send + Sync + 'static) -> WhoKinds {
        WhoKinds(Arc::new(covers))
    }

    /// How objects of `gvk` are read.
    pub fn ingest(&self, gvk: &Gvk, keep_managed_fields: bool) -> crate::store::Ingest {
        crate::store::Ingest {
            keep_managed_fields,
            who: (self.0)(gvk),
        }
    }
}

impl std::fmt::Debug for WhoKinds {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("WhoKinds")
    }
}

/// The API server refused to let GRW list a kind (403).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Denied {
    /// What the server said, e.g. `pods is forbidden: User "..." cannot
    /// list resource "pods" in API group "" at the cluster scope`.
    pub message: String,
}

/// Called for every new watch before its loop starts.
pub type OnNewWatch = Arc<dyn Fn(&Arc<Watch>) + Send + Sync>;

/// Every watch of the process.
pub struct Watches {
    client: Option<KubeClient>,
    on_new_watch: Mutex<Vec<OnNewWatch>>,
    settings: WatchSettings,
    metrics: Arc<Metrics>,
    /// Shared with the loops of removable watches, which remove their own
    /// watch once idle.
    entries: Arc<Mutex<HashMap<WatchKey, Arc<Watch>>>>,
    pending: Mutex<Vec<Pending>>,
    /// Set while the configured kinds wait for the first discovery to be
    /// started: between discovery's answer and their watches existing,
    /// readiness would otherwise find nothing to wait for.
    awaiting_discovery: std::sync::atomic::AtomicBool,
}

type Entries = Mutex<HashMap<WatchKey, Arc<Watch>>>;

/// Runs the loop of `watch` until the watch is removed: by its own timer,
/// once a caller-made watch is idle, or by [`Watches::make_room`]. Dropping
/// the loop closes its request to the API server.
async fn supervise(
    watch: Arc<Watch>,
    looping: impl std::future::Future<Output = ()>,
    entries: std::sync::Weak<Entries>,
    idle: Duration,
    metrics: Arc<Metrics>,
) {
    tokio::select! {
        () = looping => {}
        () = watch.stop.notified() => {}
        () = expire(&watch, &entries, idle, &metrics) => {}
    }
    tracing::info!(gvk = %watch.key.gvk, namespace = watch.key.options.namespace.as_deref().unwrap_or(""), "watch removed after being unused; its request to the API server is closed");
}

/// Returns once `watch` was removed for being idle; never for a watch
/// that is not (or no longer) caller-made.
async fn expire(
    watch: &Arc<Watch>,
    entries: &std::sync::Weak<Entries>,
    idle: Duration,
    metrics: &Metrics,
) {
    loop {
        // A stream reading the watch touches it when it ends, which starts
        // a new idle period; until then, look again after one.
        let at = watch
            .idle_at(idle)
            .unwrap_or_else(|| tokio::time::Instant::now() + idle);
        tokio::time::sleep_until(at).await;
        if !watch.caller_made() {
            // Asked for by GRW itself now: it stays for ever.
            return std::future::pending().await;
        }
        if remove_if_idle(watch, entries, idle, metrics) {
            return;
        }
    }
}

/// Removes `watch` from `entries` if it is idle; whether it is gone.
fn remove_if_idle(
    watch: &Arc<Watch>,
    entries: &std::sync::Weak<Entries>,
    idle: Duration,
    metrics: &Metrics,
) -> bool {
    let Some(entries) = entries.upgrade() else {
        return true;
    };
    let mut entries = entries.lock();
    if !watch.removable(idle) {
        return false;
    }
    if entries
        .get(&watch.key)
        .is_some_and(|w| Arc::ptr_eq(w, watch))
    {
        entries.remove(&watch.key);
        let count = entries.values().filter(|w| w.caller_made()).count();
        metrics.on_demand().watches.set(count as i64);
        removed(watch, metrics);
    }
    true
}

fn removed(watch: &Watch, metrics: &Metrics) {
    metrics.on_demand().removed.inc();
    watch.caller_made.store(false, Ordering::Relaxed);
    watch.gone.send_replace(true);
    tracing::info!(gvk = %watch.key.gvk, "removing a watch a query started, unused for onDemandIdleSeconds");
}

/// A configured kind the server does not serve yet (its CRD is not installed).
#[derive(Debug, Clone)]
pub struct Pending {
    /// The kind as configured.
    pub kind: KindRef,
    /// Its watch options.
    pub options: WatchOptions,
    /// Why it is not watched yet.
    pub reason: String,
    /// Watched for GRW's own use (the journal's Events): its watch holds up
    /// no readiness, as an analyzer's does not.
    pub optional: bool,
}

impl Watches {
    /// Watches against an API server (`Some(client)`) or fed by a replay (`None`).
    pub fn new(client: Option<KubeClient>, settings: WatchSettings, metrics: Arc<Metrics>) -> Self {
        Watches {
            client,
            on_new_watch: Mutex::new(Vec::new()),
            settings,
            metrics,
            entries: Arc::new(Mutex::new(HashMap::new())),
            pending: Mutex::new(Vec::new()),
            awaiting_discovery: Default::default(),
        }
    }

    /// Adds what is called for every new watch after its cache exists and
    /// before its loop starts (the notification engine seeds and taps
    /// caches there; the relations engine follows them).
    pub fn on_new_watch(&self, hook: OnNewWatch) {
        self.on_new_watch.lock().push(hook);
    }

    /// Whether watches are fed by an API server (rather than a replay).
    pub fn is_live(&self) -> bool {
        self.client.is_some()
    }

    /// Settings of the watch loops.
    pub fn settings(&self) -> &WatchSettings {
        &self.settings
    }

    /// The watch for `resource` with `options`, started if it does not exist.
    /// Racing callers get the same watch: exactly one loop runs per key.
    /// The watch stays as long as the process: one a caller's query
    /// started ([`Watches::ensure_on_demand`]) is no longer removed once
    /// the configuration, a subscription or an analyzer asks for it here.
    ///
    /// GRW's own kinds ([`crate::gvk::is_grw_kind`]) have one cache each,
    /// whatever the options, filled by GRW itself: no loop runs for them,
    /// and they count as synced from the start.
    pub fn ensure(
        &self,
        resource: &ResourceInfo,
        options: WatchOptions,
        on_demand: bool,
    ) -> Arc<Watch> {
        match self.start(resource, options, on_demand, false) {
            Ok(watch) => watch,
            Err(_) => unreachable!("only watches callers' queries start have a quota"),
        }
    }

    /// The watch for `resource` with `options` a caller's query reads,
    /// started if it does not exist, as one that is removed after
    /// `onDemandIdleSeconds` unused, unless something else asks for it
    /// with [`Watches::ensure`] meanwhile (see the module's comment).
    /// Refused when `maxOnDemandWatches` such watches exist and none is
    /// idle.
    pub fn ensure_on_demand(
        &self,
        resource: &ResourceInfo,
        options: WatchOptions,
    ) -> Result<Arc<Watch>, TooManyWatches> {
        self.start(resource, options, true, true)
    }

    fn start(
        &self,
        resource: &ResourceInfo,
        options: WatchOptions,
        on_demand: bool,
        by_caller: bool,
    ) -> Result<Arc<Watch>, TooManyWatches> {
        let local = crate::gvk::is_grw_kind(&resource.gvk);
        let options = if local {
            WatchOptions::default()
        } else {
            options
        };
        let key = WatchKey {
            gvk: resource.gvk.clone(),
            options,
        };
        // GRW's own kinds are filled by GRW: never removed.
        let removable = by_caller && !local;
        let mut entries = self.entries.lock();
        if let Some(watch) = entries.get(&key) {
            // A kind the config (or a subscription) names counts for
            // readiness even when a query or an analyzer started its watch
            // first.
            if !on_demand {
                watch.on_demand.store(false, Ordering::Relaxed);
            }
            if !by_caller && watch.caller_made.swap(false, Ordering::Relaxed) {
                tracing::info!(gvk = %watch.key.gvk, "a watch a query started is now asked for by GRW itself; it stays");
                self.count_on_demand(&entries);
            }
            watch.touch();
            return Ok(watch.clone());
        }
        if removable {
            self.make_room(&mut entries)?;
        }
        let watch = Arc::new(Watch {
            key: key.clone(),
            resource: resource.clone(),
            cache: Arc::new(
                Cache::new(resource.gvk.clone(), self.settings.history_size)
                    .with_history_bytes(self.settings.history_bytes)
                    .with_field_paths(FieldPaths::new(
                        self.settings.queries.indexed_fields_of(&resource.gvk),
                    )),
            ),
            on_demand: AtomicBool::new(on_demand),
            caller_made: AtomicBool::new(removable),
            last_used: Mutex::new(tokio::time::Instant::now()),
            streams: AtomicUsize::new(0),
            stop: tokio::sync::Notify::new(),
            gone: tokio::sync::watch::channel(false).0,
            status: Mutex::new(WatchStatus {
                phase: Phase::Syncing,
                last_error: None,
                last_event_time: None,
                events: 0,
                relists: 0,
                watch_restarts: 0,
            }),
            denied: Mutex::new(None),
            changed: tokio::sync::Notify::new(),
        });
        entries.insert(key, watch.clone());
        if removable {
            self.count_on_demand(&entries);
        }
        drop(entries);
        if local {
            watch.update_status(|s| s.phase = Phase::Ready);
            watch.cache.mark_synced();
        }
        tracing::info!(gvk = %resource.gvk, on_demand, removable, "watch started");
        let hooks = self.on_new_watch.lock().clone();
        for hook in hooks {
            hook(&watch);
        }
        if local {
            return Ok(watch);
        }
        let looping = self.client.clone().map(|client| {
            run::run(
                watch.clone(),
                client,
                self.settings.clone(),
                self.metrics.clone(),
            )
        });
        // A replay runs no loop; a watch a query started there (a
        // namespace or selection the recording's caches do not have) is
        // removed when idle all the same.
        if looping.is_some() || removable {
            tokio::spawn(supervise(
                watch.clone(),
                async move {
                    match looping {
                        Some(looping) => looping.await,
                        None => std::future::pending().await,
                    }
                },
                Arc::downgrade(&self.entries),
                self.settings.on_demand_idle,
                self.metrics.clone(),
            ));
        }
        Ok(watch)
    }

    /// Below the quota of watches callers' queries started, after removing
    /// those idle now (their own loops would a moment later), or why not.
    fn make_room(&self, entries: &mut HashMap<WatchKey, Arc<Watch>>) -> Result<(), TooManyWatches> {
        let idle = self.settings.on_demand_idle;
        let max = self.settings.max_on_demand;
        if entries.values().filter(|w| w.caller_made()).count() < max {
            return Ok(());
        }
        let stale: Vec<WatchKey> = entries
            .values()
            .filter(|w| w.removable(idle))
            .map(|w| w.key.clone())
            .collect();
        for key in stale {
            if let Some(watch) = entries.remove(&key) {
                removed(&watch, &self.metrics);
                // Its loop may be waiting for its own timer: end it now.
                watch.stop.notify_one();
            }
        }
        let made: Vec<&Arc<Watch>> = entries.values().filter(|w| w.caller_made()).collect();
        self.metrics.on_demand().watches.set(made.len() as i64);
        if made.len() < max {
            return Ok(());
        }
        self.metrics.on_demand().refused.inc();
        let now = tokio::time::Instant::now();
        let retry_after = made
            .iter()
            .filter_map(|w| w.idle_at(idle))
            .min()
            .map_or(idle, |at| at.saturating_duration_since(now))
            .max(Duration::from_secs(1));
        // Whole seconds, rounded up, as a Retry-After header says them.
        let retry_after = Duration::from_secs(retry_after.as_secs_f64().ceil() as u64);
        tracing::warn!(
            max,
            retry_after_s = retry_after.as_secs(),
            "a query needs a new watch and maxOnDemandWatches are in use; refused"
        );
        Err(TooManyWatches { max, retry_after })
    }

    fn count_on_demand(&self, entries: &HashMap<WatchKey, Arc<Watch>>) {
        let count = entries.values().filter(|w| w.caller_made()).count();
        self.metrics.on_demand().watches.set(count as i64);
    }

    /// Whether GRW's credentials may list `resource` with `options`, asked
    /// with a LIST of one object, for a helper watch GRW can do without
    /// (rather than start it to be refused, and have it retry for ever).
    /// Only a 403 counts as a refusal; other errors are left to the watch.
    /// A replay may list everything.
    pub async fn may_list(
        &self,
        resource: &ResourceInfo,
        options: &WatchOptions,
    ) -> Result<(), Denied> {
        let Some(client) = &self.client else {
            return Ok(());
        };
        match client.list_page(resource, options, 1, None).await {
            Err(ApiError::Status {
                code: 403, message, ..
            }) => Err(Denied { message }),
            _ => Ok(()),
        }
    }

    /// The watch that holds every object of `gvk` a query for `namespace`
    /// may ask for: an unfiltered watch of the whole cluster, or of that namespace.
    pub fn serving(&self, gvk: &Gvk, namespace: Option<&str>) -> Option<Arc<Watch>> {
        let entries = self.entries.lock();
        let cluster = WatchKey {
            gvk: gvk.clone(),
            options: WatchOptions::default(),
        };
        if let Some(w) = entries.get(&cluster) {
            return Some(w.clone());
        }
        let ns = namespace?;
        entries
            .values()
            .find(|w| {
                &w.key.gvk == gvk
                    && w.key.options
                        == WatchOptions {
                            namespace: Some(ns.to_string()),
                            ..Default::default()
                        }
            })
            .cloned()
    }

    /// The watch of `gvk` with exactly `options`, if there is one.
    pub fn exact(&self, gvk: &Gvk, options: &WatchOptions) -> Option<Arc<Watch>> {
        self.entries
            .lock()
            .get(&WatchKey {
                gvk: gvk.clone(),
                options: options.clone(),
            })
            .cloned()
    }

    /// Every watch of a kind, whatever its options.
    pub fn of_kind(&self, gvk: &Gvk) -> Vec<Arc<Watch>> {
        self.entries
            .lock()
            .values()
            .filter(|w| &w.key.gvk == gvk)
            .cloned()
            .collect()
    }

    /// Every watch, ordered by kind.
    pub fn all(&self) -> Vec<Arc<Watch>> {
        let mut all: Vec<_> = self.entries.lock().values().cloned().collect();
        all.sort_by(|a, b| a.key.gvk.cmp(&b.key.gvk));
        all
    }

    /// Whether every watch has synced at least once.
    pub fn all_synced(&self) -> bool {
        self.entries.lock().values().all(|w| w.cache.is_synced())
    }

    /// Says that the configured kinds wait for discovery: readiness
    /// waits until [`Watches::discovery_applied`].
    pub fn await_discovery(&self) {
        self.awaiting_discovery
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// The first discovery was applied: the kinds it serves are watched.
    pub fn discovery_applied(&self) {
        self.awaiting_discovery
            .store(false, std::sync::atomic::Ordering::SeqCst);
    }

    /// Whether configured kinds still wait for the first discovery.
    pub fn awaiting_discovery(&self) -> bool {
        self.awaiting_discovery
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Remembers a configured kind to watch once discovery serves it.
    pub fn add_pending(&self, pending: Pending) {
        tracing::warn!(kind = %pending.kind, reason = %pending.reason, "configured kind not served yet; it is watched as soon as it appears");
        self.pending.lock().push(pending);
    }

    /// Configured kinds not watched yet, with the reason.
    pub fn pending(&self) -> Vec<(String, String)> {
        self.pending
            .lock()
            .iter()
            .map(|p| (p.kind.to_string(), p.reason.clone()))
            .collect()
    }

    /// Takes out the pending kinds that `resolve` now finds, to be watched
    /// (with whether they are optional);
    /// the others stay pending with the new reason. Kinds that stay pending
    /// never leave the list, so the status API always shows them.
    pub fn take_resolvable<E: std::fmt::Display>(
        &self,
        resolve: impl Fn(&KindRef) -> Result<ResourceInfo, E>,
    ) -> Vec<(ResourceInfo, WatchOptions, bool)> {
        let mut ready = Vec::new();
        self.pending
            .lock()
            .retain_mut(|pending| match resolve(&pending.kind) {
                Ok(resource) => {
                    ready.push((resource, pending.options.clone(), pending.optional));
                    false
                }
                Err(reason) => {
                    pending.reason = reason.to_string();
                    true
                }
            });
        ready
    }
}

#[cfg(test)]
mod tests;
