//! Notifications: subscriptions, the durable outbox, and delivery to sinks
//! (webhooks, NATS JetStream, notifier plugins).
//!
//! How a change travels:
//! 1. A watch's cache hands every change to the watch's *feed* through a tap
//!    (the changes of one list come as one group), which holds at most
//!    `notificationBufferBytes` of waiting changes; past that the feed
//!    catches up from the cache's state instead.
//! 2. The feed compares the change with the object's *announced* state (what
//!    subscribers were last told), picks the subscriptions whose conditions
//!    it meets, and commits the change (once), a reference to it in each of
//!    their queues, the new announced state and the watch's resourceVersion
//!    in one transaction of the outbox.
//! 3. Each subscription's *worker* goes through its queue in order: its
//!    filter plugins decide (once per plugin and change, shared between
//!    subscriptions), the body is rendered in the subscription's format, and
//!    the sink gets it, one delivery at a time, with retries and capped
//!    backoff; a refused delivery goes to the subscription's dead letters.
//!    Deliveries leave the outbox only when the sink took them.
//! 4. Each subscription's queue and dead letters are bounded in bytes
//!    (`subscriptionPendingBytes`, `subscriptionDeadLetterBytes`): a receiver
//!    that never comes back costs at most those, its oldest deliveries
//!    becoming dead letters and its oldest dead letters going.
//!
//! After a restart with `dataDir`, a watch's cache starts from its announced
//! state and resourceVersion: the watch resumes from there (or relists and
//! diffs), so exactly what changed while GRW was down comes out.

mod decide;
mod feed;
pub mod kafka;
pub mod nats;
pub mod outbox;
mod payload;
mod sink;
mod subscription;
mod webhook;
mod worker;

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use parking_lot::{Mutex, RwLock};
use serde::Serialize;
use serde_json::Value;

pub use outbox::{
    Announcement, Bounds, DeadLetter, ListBytes, Outbox, OutboxError, Queued, Trimmed,
};
pub use payload::{Event, render};
pub use sink::{Delivery, Rejection, SendError};
pub use subscription::{PayloadFormat, SinkSpec, Source, Subscription};
pub use webhook::{Webhook, client as webhook_client, sign};

use crate::config::{Config, SubscriptionConfig};
use crate::kube::Discovery;
pub use crate::leader::Delivered;
use crate::leader::Deliveries;
use crate::metrics::{Metrics, QueueGauges};
use crate::plugin::{LookupError, Plugins};
use crate::watch::{Watch, WatchKey, Watches};

/// A subscription naming a plugin that cannot serve it.
#[derive(Debug, thiserror::Error)]
#[error("subscription `{subscription}`: `{field}`: {lookup}")]
pub struct PluginMissing {
    /// The subscription.
    pub subscription: String,
    /// `filters` or `plugin`.
    pub field: &'static str,
    /// Why the plugin does not serve.
    #[source]
    pub lookup: LookupError,
}

/// Why the notification engine cannot start.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The outbox cannot be opened or read.
    #[error(transparent)]
    Outbox(#[from] OutboxError),
    /// Two subscriptions of the configuration have one name.
    #[error("{origin}: subscription name `{name}` is used twice")]
    NameTwice {
        /// The second one's key.
        origin: String,
        /// The name.
        name: String,
    },
    /// A configured subscription names a plugin that cannot serve it.
    #[error("{origin}: {missing}")]
    Plugin {
        /// The subscription's key.
        origin: String,
        /// Which plugin and why.
        #[source]
        missing: PluginMissing,
    },
}

/// Why a subscription cannot be created, deleted or changed.
#[derive(Debug, thiserror::Error)]
pub enum SubscriptionError {
    /// It names a plugin that cannot serve it.
    #[error(transparent)]
    Plugin(#[from] PluginMissing),
    /// Its kind is not served.
    #[error("subscription `{name}`: `kind`: {error}")]
    Kind {
        /// The subscription.
        name: String,
        /// Why the kind does not resolve.
        #[source]
        error: crate::kube::ResolveError,
    },
    /// A subscription of that name exists.
    #[error("subscription `{0}` already exists; delete it first or pick another name")]
    Exists(String),
    /// No subscription of that name.
    #[error("no subscription `{0}`")]
    NotFound(String),
    /// Defined in the config file: change it there.
    #[error("subscription `{0}` is defined in the config file; change it there")]
    FromConfig(String),
    /// The outbox failed.
    #[error("the notification outbox failed")]
    Store(#[from] OutboxError),
    /// Replicas elect a leader: each keeps its own subscriptions, so one
    /// made through the API would live on one replica only.
    #[error(
        "with leaderElection, subscriptions are declared in the config file that every replica reads; one made through the API would live on this replica only"
    )]
    Replicated,
}

/// One subscription at work.
pub(crate) struct Active {
    pub(crate) sub: Subscription,
    /// Next sequence number of its queue.
    next_seq: AtomicU64,
    /// Deliveries waiting.
    pending: AtomicU64,
    /// Dead letters kept.
    dead: AtomicU64,
    /// Deliveries handed to the destination whose outcome is not known
    /// yet: one at most, or up to the Kafka producer's window.
    in_flight: AtomicU64,
    /// Wakes the worker when deliveries were queued. A worker waiting out
    /// a retry's backoff does not listen: new changes do not bring the
    /// next attempt forward.
    queued: tokio::sync::Notify,
    /// Wakes the worker at once, a retry's backoff included: deleted,
    /// dead letters replayed, leading again.
    wake: tokio::sync::Notify,
    /// Set when deleted: the worker stops.
    stopped: AtomicBool,
    /// Set once a bound trimmed its lists, until a delivery goes through
    /// again: a receiver that stays down is logged once, not per change.
    trimming: AtomicBool,
    /// An initial snapshot is still to be queued.
    snapshot_due: AtomicBool,
    state: Mutex<ActiveState>,
}

#[derive(Default)]
struct ActiveState {
    /// The watch that feeds it, once its kind is served.
    watch: Option<WatchKey>,
    /// Why it is not attached to a watch yet.
    waiting: Option<String>,
    deliveries: u64,
    retries: u64,
    /// Changes its filter plugins did not let through.
    filtered: u64,
    /// Evaluations of its `matchConditions` that failed, and the last failure.
    condition_errors: u64,
    last_condition_error: Option<String>,
    last_error: Option<String>,
    last_delivery: Option<SystemTime>,
    /// The last delivery settled, by this replica or (followed) the leader.
    delivered: Option<Delivered>,
}

impl Active {
    fn seq(&self) -> u64 {
        self.next_seq.fetch_add(1, Ordering::Relaxed)
    }

    /// Counts what the outbox's bounds did to this subscription's lists.
    fn trimmed(&self, trimmed: Trimmed, metrics: &Metrics) {
        if trimmed == Trimmed::default() {
            return;
        }
        // Added before subtracted: the counters never go below zero.
        self.dead.fetch_add(trimmed.evicted, Ordering::Relaxed);
        self.pending.fetch_sub(trimmed.evicted, Ordering::Relaxed);
        self.dead.fetch_sub(trimmed.dropped, Ordering::Relaxed);
        metrics.subscription_trimmed(&self.sub.name, trimmed.evicted, trimmed.dropped);
        if !self.trimming.swap(true, Ordering::Relaxed) {
            tracing::warn!(subscription = %self.sub.name, moved_to_dead_letters = trimmed.evicted, dead_letters_dropped = trimmed.dropped, "the subscription's lists reached their bound (subscriptionPendingBytes, subscriptionDeadLetterBytes): its oldest pending deliveries become dead letters and its oldest dead letters are dropped until a delivery goes through again");
        } else {
            tracing::debug!(subscription = %self.sub.name, moved_to_dead_letters = trimmed.evicted, dead_letters_dropped = trimmed.dropped, "the subscription's lists are at their bound");
        }
    }
}

/// What the API shows of a subscription.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionStatus {
    /// Name.
    pub name: String,
    /// `config` or `api`.
    pub source: Source,
    /// The definition.
    pub definition: Value,
    /// Where deliveries go.
    pub destination: String,
    /// The watch feeding it (`group/version/Kind`), once attached.
    pub watching: Option<String>,
    /// Why it is not attached yet.
    pub waiting: Option<String>,
    /// Deliveries waiting.
    pub pending: u64,
    /// Of those, the ones handed to the destination whose outcome is not
    /// known yet.
    pub in_flight: u64,
    /// Age of the oldest waiting delivery, seconds.
    pub oldest_pending_seconds: f64,
    /// Bytes of the changes waiting (at most `subscriptionPendingBytes`).
    pub pending_bytes: u64,
    /// Dead letters kept.
    pub dead_letters: u64,
    /// Bytes of the dead letters' changes (at most `subscriptionDeadLetterBytes`).
    pub dead_letter_bytes: u64,
    /// Deliveries made since start.
    pub deliveries: u64,
    /// Failed attempts retried since start.
    pub retries: u64,
    /// Changes its `matchConditions` or filter plugins did not let
    /// through, since start.
    pub filtered: u64,
    /// Changes on which one of its `matchConditions` failed (and which
    /// were not delivered), since start.
    pub condition_errors: u64,
    /// The last such failure: the condition's name, the object, and why.
    pub last_condition_error: Option<String>,
    /// When the destination last took a delivery (RFC 3339), since start.
    pub last_delivery_time: Option<String>,
    /// The last failure, if any.
    pub last_error: Option<String>,
}

/// The notification engine.
pub struct Notifications {
    outbox: Arc<Outbox>,
    watches: Arc<Watches>,
    discovery: Arc<Discovery>,
    plugins: Arc<Plugins>,
    metrics: Arc<Metrics>,
    http: reqwest::Client,
    /// `consoleUrl`, without a trailing `/`: deliveries link to the
    /// changed object's page in the web console.
    console_url: Option<Arc<str>>,
    subs: Arc<RwLock<BTreeMap<String, Arc<Active>>>>,
    feeds: Mutex<HashMap<WatchKey, Arc<feed::FeedHandle>>>,
    feed_context: feed::FeedContext,
    decisions: Arc<decide::Decisions>,
    /// Whether this replica delivers: always without leader election.
    leading: tokio::sync::watch::Sender<bool>,
    /// Told each time a worker settled deliveries.
    settled: Arc<tokio::sync::Notify>,
    replicated: bool,
}

impl Notifications {
    /// Opens the outbox, checks every configured subscription and restores
    /// the ones created through the API. Call [`Notifications::start`] next.
    pub fn open(
        config: &Config,
        watches: Arc<Watches>,
        discovery: Arc<Discovery>,
        plugins: Arc<Plugins>,
        metrics: Arc<Metrics>,
    ) -> Result<Arc<Notifications>, OpenError> {
        let bounds = Bounds {
            pending_bytes: config.subscription_pending_bytes,
            dead_letter_bytes: config.subscription_dead_letter_bytes,
        };
        let outbox = Outbox::open_bounded(config.data_dir.as_deref(), bounds)?;
        let mut configured: Vec<(Subscription, String)> = subscription::from_compat_config(config)
            .into_iter()
            .map(|s| (s, "config".to_string()))
            .collect();
        for (i, definition) in config.subscriptions.iter().enumerate() {
            let origin = format!("config key `subscriptions[{i}]`");
            let sub = Subscription::new(definition, Source::Config);
            if configured.iter().any(|(c, _)| c.name == sub.name) {
                return Err(OpenError::NameTwice {
                    origin,
                    name: sub.name,
                });
            }
            configured.push((sub, origin));
        }
        let outbox = Arc::new(outbox);
        let decisions: Arc<decide::Decisions> = Arc::default();
        let engine = Arc::new(Notifications {
            feed_context: feed::FeedContext {
                outbox: outbox.clone(),
                buffer_bytes: config.notification_buffer_bytes,
                metrics: metrics.clone(),
                decisions: decisions.clone(),
            },
            outbox,
            watches,
            discovery,
            plugins,
            metrics,
            http: webhook::client(),
            console_url: config.console_url.as_deref().map(Arc::from),
            subs: Arc::new(RwLock::new(BTreeMap::new())),
            feeds: Mutex::new(HashMap::new()),
            decisions,
            leading: tokio::sync::watch::Sender::new(config.leader_election.is_none()),
            settled: Arc::default(),
            replicated: config.leader_election.is_some(),
        });
        engine.metrics.leader(config.leader_election.is_none());
        let mut stored: BTreeMap<String, Value> = BTreeMap::new();
        for (name, bytes) in engine.outbox.subscriptions()? {
            stored.insert(name, serde_json::from_slice(&bytes).unwrap_or(Value::Null));
        }
        for (sub, origin) in configured {
            if engine.subs.read().contains_key(&sub.name) {
                tracing::warn!(subscription = %sub.name, "the config defines the same webhook twice; delivering once");
                continue;
            }
            engine
                .check_plugins(&sub)
                .map_err(|missing| OpenError::Plugin { origin, missing })?;
            if stored.get(&sub.name).is_some_and(|v| v["source"] == "api") {
                let dropped = engine.outbox.delete_subscription(&sub.name)?;
                tracing::warn!(subscription = %sub.name, dropped_deliveries = dropped, "the config now defines a subscription with the name of one created through the API; the config one replaces it");
            }
            engine
                .outbox
                .put_subscription(&sub.name, &stored_form(&sub))?;
            stored.remove(&sub.name);
            engine.install(sub, false)?;
        }
        for (name, value) in stored {
            let from_api = value["source"] == "api";
            let restored = SubscriptionConfig::from_json(&value["spec"])
                .map(|definition| Subscription::new(&definition, Source::Api))
                .map_err(|e| format!("stored subscription `{name}`: {e}"));
            match restored {
                Ok(sub) if from_api => {
                    if let Err(e) = engine.check_plugins(&sub) {
                        tracing::warn!(subscription = %name, error = %e, "restored subscription names a missing plugin; its deliveries wait for it");
                    }
                    engine.install(sub, false)?;
                }
                Err(e) if from_api => {
                    // Kept on disk: a GRW that understands it can restore it.
                    tracing::error!(subscription = %name, error = %e, "a subscription created through the API cannot be restored; it is not served");
                }
                _ => {
                    let dropped = engine.outbox.delete_subscription(&name)?;
                    tracing::warn!(subscription = %name, dropped_deliveries = dropped, "subscription no longer in the config; its queue is dropped");
                }
            }
        }
        if engine.outbox.is_persistent() {
            tracing::info!(data_dir = %config.data_dir.as_deref().unwrap_or(std::path::Path::new("")).display(), subscriptions = engine.subs.read().len(), pending = engine.outbox.total_pending().unwrap_or(0), "notification outbox opened");
        } else if !engine.subs.read().is_empty() {
            tracing::warn!(
                "no dataDir: pending deliveries and subscriptions created through the API are kept in memory only and are lost on restart, and changes made while GRW is down are not announced"
            );
        }
        Ok(engine)
    }

    /// Hooks into new watches and attaches every subscription to its watch.
    pub fn start(self: &Arc<Self>) {
        let engine = Arc::downgrade(self);
        self.watches.on_new_watch(Arc::new(move |watch| {
            if let Some(engine) = engine.upgrade() {
                engine.watch_created(watch);
            }
        }));
        self.attach_waiting();
    }

    /// Attaches subscriptions whose kind was not served yet; called after
    /// each discovery refresh.
    pub fn attach_waiting(&self) {
        let waiting: Vec<Arc<Active>> = self
            .subs
            .read()
            .values()
            .filter(|a| a.state.lock().watch.is_none())
            .cloned()
            .collect();
        for active in waiting {
            self.attach(&active);
        }
    }

    /// Creates a subscription from the API.
    pub fn create(
        &self,
        definition: &SubscriptionConfig,
    ) -> Result<SubscriptionStatus, SubscriptionError> {
        if self.replicated {
            return Err(SubscriptionError::Replicated);
        }
        let sub = Subscription::new(definition, Source::Api);
        self.check_plugins(&sub)?;
        if self.discovery.is_loaded() {
            self.discovery
                .catalog()
                .resolve(&sub.kind)
                .map_err(|error| SubscriptionError::Kind {
                    name: sub.name.clone(),
                    error,
                })?;
        }
        if self.subs.read().contains_key(&sub.name) {
            return Err(SubscriptionError::Exists(sub.name));
        }
        self.outbox
            .put_subscription(&sub.name, &stored_form(&sub))?;
        let name = sub.name.clone();
        let active = self.install(sub, true)?;
        self.attach(&active);
        tracing::info!(subscription = %name, destination = %active.sub.destination(), "subscription created");
        self.status(&name).ok_or(SubscriptionError::NotFound(name))
    }

    /// Deletes a subscription created through the API, with its queue.
    pub fn delete(&self, name: &str) -> Result<u64, SubscriptionError> {
        let active = self.get(name)?;
        if active.sub.source == Source::Config {
            return Err(SubscriptionError::FromConfig(name.to_string()));
        }
        if self.replicated {
            return Err(SubscriptionError::Replicated);
        }
        active.stopped.store(true, Ordering::SeqCst);
        active.wake.notify_one();
        self.subs.write().remove(name);
        let dropped = self.outbox.delete_subscription(name)?;
        self.metrics.forget_subscription(name);
        tracing::info!(subscription = %name, dropped_deliveries = dropped, "subscription deleted");
        Ok(dropped)
    }

    /// Every subscription's status, by name.
    pub fn statuses(&self) -> Vec<SubscriptionStatus> {
        let names: Vec<String> = self.subs.read().keys().cloned().collect();
        names.iter().filter_map(|n| self.status(n)).collect()
    }

    /// Deliveries a subscription made since start: its status's
    /// `deliveries`, without reading the outbox, so cheap enough to poll.
    pub fn deliveries(&self, name: &str) -> Option<u64> {
        let active = self.subs.read().get(name).cloned()?;
        Some(active.state.lock().deliveries)
    }

    /// One subscription's status.
    pub fn status(&self, name: &str) -> Option<SubscriptionStatus> {
        let active = self.subs.read().get(name).cloned()?;
        let gauges = self.gauges(&active);
        let state = active.state.lock();
        Some(SubscriptionStatus {
            name: active.sub.name.clone(),
            source: active.sub.source,
            definition: active.sub.definition.clone(),
            destination: active.sub.destination(),
            watching: state.watch.as_ref().map(|k| k.gvk.to_string()),
            waiting: state.waiting.clone(),
            pending: gauges.pending,
            in_flight: active.in_flight.load(Ordering::Relaxed),
            oldest_pending_seconds: gauges.oldest_seconds,
            pending_bytes: gauges.pending_bytes,
            dead_letters: gauges.dead_letters,
            dead_letter_bytes: gauges.dead_letter_bytes,
            deliveries: state.deliveries,
            retries: state.retries,
            filtered: state.filtered,
            condition_errors: state.condition_errors,
            last_condition_error: state.last_condition_error.clone(),
            last_delivery_time: state
                .last_delivery
                .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
                .map(crate::time::rfc3339),
            last_error: state.last_error.clone(),
        })
    }

    /// Dead letters of a subscription, each with the body it was refused
    /// (none for notifier plugins, which get the change itself).
    pub fn dead_letters(
        &self,
        name: &str,
    ) -> Result<Vec<(DeadLetter, Delivery)>, SubscriptionError> {
        let active = self.get(name)?;
        Ok(self
            .outbox
            .dead_letters(name)?
            .into_iter()
            .map(|letter| {
                let delivery = worker::render(&letter.queued, &active.sub);
                (letter, delivery)
            })
            .collect())
    }

    /// Queues dead letters again (all, or one by sequence number); returns how many.
    pub fn replay_dead(&self, name: &str, seq: Option<u64>) -> Result<u64, SubscriptionError> {
        let active = self.get(name)?;
        let (count, trims) = self.outbox.replay_dead(name, seq, || active.seq())?;
        active.pending.fetch_add(count, Ordering::Relaxed);
        active.dead.fetch_sub(count, Ordering::Relaxed);
        self.decisions.forget(&trims.released);
        active.trimmed(
            trims.subscriptions.get(name).copied().unwrap_or_default(),
            &self.metrics,
        );
        active.wake.notify_one();
        Ok(count)
    }

    /// Drops dead letters (all, or one by sequence number); returns how many.
    pub fn drop_dead(&self, name: &str, seq: Option<u64>) -> Result<u64, SubscriptionError> {
        let active = self.get(name)?;
        let (count, released) = self.outbox.drop_dead(name, seq)?;
        self.decisions.forget(&released);
        active.dead.fetch_sub(count, Ordering::Relaxed);
        Ok(count)
    }

    /// Starts or stops delivering (leader election). A replica that does not
    /// deliver still queues every change, so that it can take over.
    pub fn set_leading(&self, leading: bool) {
        self.leading.send_replace(leading);
        self.metrics.leader(leading);
        if leading {
            for active in self.subs.read().values() {
                active.wake.notify_one();
            }
        }
    }

    /// Told each time a worker settled deliveries.
    pub fn settled(&self) -> Arc<tokio::sync::Notify> {
        self.settled.clone()
    }

    /// The last delivery each subscription settled.
    pub fn delivered(&self) -> BTreeMap<String, Delivered> {
        self.subs
            .read()
            .iter()
            .filter_map(|(name, a)| Some((name.clone(), a.state.lock().delivered.clone()?)))
            .collect()
    }

    /// A replica that does not deliver drops from its queues what the
    /// leader settled: each queue up to and including the leader's last
    /// delivery. Replicas see a kind's watch events in the same order, so
    /// the id is normally found; a queue that does not hold it (a replica
    /// that relisted, or started later) is trimmed while its entries'
    /// resourceVersions are not above the leader's.
    pub async fn follow(&self, leader: &BTreeMap<String, Delivered>) {
        for (name, delivered) in leader {
            let Some(active) = self.subs.read().get(name).cloned() else {
                continue;
            };
            if active.state.lock().delivered.as_ref() == Some(delivered) {
                continue;
            }
            let outbox = self.outbox.clone();
            let (queue, target) = (name.clone(), delivered.clone());
            let settlement = until_stored(&format!("following the leader for {name}"), move || {
                let queued = outbox.pending(&queue, FOLLOW_SCAN)?;
                let done = settled_by_leader(&queued, &target);
                outbox.settle(&queue, &done, &[])
            })
            .await;
            self.decisions.forget(&settlement.released);
            active.pending.fetch_sub(settlement.done, Ordering::Relaxed);
            active.state.lock().delivered = Some(delivered.clone());
        }
    }

    /// Whether pending deliveries survive a restart.
    pub fn is_persistent(&self) -> bool {
        self.outbox.is_persistent()
    }

    /// Sets the queue gauges of every subscription and the buffer gauge of
    /// every feed (before a metrics scrape).
    pub fn update_metrics(&self) {
        let all: Vec<Arc<Active>> = self.subs.read().values().cloned().collect();
        for active in all {
            self.metrics.queue(&active.sub.name, self.gauges(&active));
        }
        for watch in self.watches.all() {
            if let Some(tap) = watch.cache.tap_status() {
                self.metrics.feed(
                    &watch.key.gvk.to_string(),
                    tap.buffered_bytes,
                    tap.overflows,
                );
            }
        }
    }

    fn gauges(&self, active: &Active) -> QueueGauges {
        let pending = active.pending.load(Ordering::Relaxed);
        let bytes = self.outbox.bytes(&active.sub.name).unwrap_or_default();
        let oldest_seconds = if pending == 0 {
            0.0
        } else {
            let now = crate::time::unix_millis();
            self.outbox
                .oldest_pending_ms(&active.sub.name)
                .ok()
                .flatten()
                .map_or(0.0, |t| now.saturating_sub(t) as f64 / 1000.0)
        };
        QueueGauges {
            pending,
            oldest_seconds,
            pending_bytes: bytes.pending,
            dead_letters: active.dead.load(Ordering::Relaxed),
            dead_letter_bytes: bytes.dead,
        }
    }

    fn get(&self, name: &str) -> Result<Arc<Active>, SubscriptionError> {
        self.subs
            .read()
            .get(name)
            .cloned()
            .ok_or_else(|| SubscriptionError::NotFound(name.to_string()))
    }

    /// Filter plugins must be loaded filters, a plugin destination a loaded
    /// notifier; a plugin still loading is taken on trust.
    fn check_plugins(&self, sub: &Subscription) -> Result<(), PluginMissing> {
        let missing = |field, lookup| PluginMissing {
            subscription: sub.name.clone(),
            field,
            lookup,
        };
        for name in sub.filters.iter().filter(|n| !self.plugins.is_loading(n)) {
            self.plugins
                .filter(name)
                .map_err(|e| missing("filters", e))?;
        }
        if let SinkSpec::Plugin(name) = &sub.sink
            && !self.plugins.is_loading(name)
        {
            self.plugins
                .notifier(name)
                .map_err(|e| missing("plugin", e))?;
        }
        Ok(())
    }

    /// Registers a subscription and starts its worker.
    fn install(&self, sub: Subscription, new: bool) -> Result<Arc<Active>, OutboxError> {
        let counts = self.outbox.counts(&sub.name)?;
        let sink = worker::Sink::new(&sub, &self.http, self.console_url.as_ref());
        let active = Arc::new(Active {
            next_seq: AtomicU64::new(counts.last_seq.map_or(0, |s| s + 1)),
            pending: AtomicU64::new(counts.pending),
            dead: AtomicU64::new(counts.dead),
            in_flight: AtomicU64::new(0),
            queued: tokio::sync::Notify::new(),
            wake: tokio::sync::Notify::new(),
            stopped: AtomicBool::new(false),
            trimming: AtomicBool::new(false),
            snapshot_due: AtomicBool::new(new && sub.snapshot),
            state: Mutex::new(ActiveState::default()),
            sub,
        });
        self.subs
            .write()
            .insert(active.sub.name.clone(), active.clone());
        let worker = worker::Worker {
            active: active.clone(),
            sink,
            outbox: self.outbox.clone(),
            metrics: self.metrics.clone(),
            plugins: self.plugins.clone(),
            decisions: self.decisions.clone(),
            leading: self.leading.subscribe(),
            settled: self.settled.clone(),
        };
        tokio::spawn(worker.run());
        Ok(active)
    }

    /// Finds (or starts) the watch of a subscription and makes sure it has a feed.
    fn attach(&self, active: &Arc<Active>) {
        let resource = match self.discovery.catalog().resolve(&active.sub.kind) {
            Ok(r) => r,
            Err(e) => {
                active.state.lock().waiting = Some(if self.discovery.is_loaded() {
                    e.to_string()
                } else {
                    "waiting for discovery".into()
                });
                return;
            }
        };
        // May run `watch_created` for a new watch, which starts the feed.
        let watch = self
            .watches
            .ensure(&resource, active.sub.watch_options.clone(), false);
        self.ensure_feed(&watch, false);
        {
            let mut state = active.state.lock();
            state.watch = Some(watch.key.clone());
            state.waiting = None;
        }
        if let Some(feed) = self.feeds.lock().get(&watch.key) {
            feed.wake.notify_one();
        }
    }

    /// A new watch: if a subscription wants it, start its cache from the
    /// announced state of the last run and tap it; otherwise forget any
    /// announced state it had.
    fn watch_created(&self, watch: &Arc<Watch>) {
        let catalog = self.discovery.catalog();
        let targeted: Vec<Arc<Active>> = self
            .subs
            .read()
            .values()
            .filter(|a| {
                a.sub.watch_options == watch.key.options
                    && catalog
                        .resolve(&a.sub.kind)
                        .is_ok_and(|r| r.gvk == watch.key.gvk)
            })
            .cloned()
            .collect();
        let id = feed::watch_id(&watch.key);
        if targeted.is_empty() {
            if let Err(e) = self.outbox.forget_watch(&id) {
                tracing::warn!(error = %crate::error::Report(&e), "cannot forget the announced state of an unsubscribed watch");
            }
            return;
        }
        self.ensure_feed(watch, self.watches.is_live());
        for active in targeted {
            let mut state = active.state.lock();
            state.watch = Some(watch.key.clone());
            state.waiting = None;
        }
    }

    fn ensure_feed(&self, watch: &Arc<Watch>, seed: bool) {
        let mut feeds = self.feeds.lock();
        if feeds.contains_key(&watch.key) {
            return;
        }
        let handle = feed::start(
            watch.clone(),
            seed,
            self.feed_context.clone(),
            self.subscriptions_of(watch.key.clone()),
        );
        feeds.insert(watch.key.clone(), handle);
    }

    /// A function giving the subscriptions attached to a watch, for its feed.
    fn subscriptions_of(&self, key: WatchKey) -> feed::Subscribers {
        let subs = self.subs.clone();
        Arc::new(move || {
            subs.read()
                .values()
                .filter(|a| a.state.lock().watch.as_ref() == Some(&key))
                .cloned()
                .collect()
        })
    }
}

/// Queue entries a follower looks through for the leader's last delivery.
const FOLLOW_SCAN: usize = 100_000;

/// The entries of a follower's queue that the leader has settled.
fn settled_by_leader(queued: &[Queued], leader: &Delivered) -> Vec<u64> {
    if let Some(at) = queued.iter().position(|q| q.announcement.id() == leader.id) {
        return queued[..=at].iter().map(|q| q.seq).collect();
    }
    let number = |rv: &str| rv.parse::<u64>().ok();
    let Some(limit) = number(&leader.resource_version) else {
        return Vec::new();
    };
    queued
        .iter()
        .take_while(|q| number(&q.announcement.resource_version).is_some_and(|rv| rv <= limit))
        .map(|q| q.seq)
        .collect()
}

/// What the outbox keeps of a subscription: enough to restore API ones and
/// to recognise config ones that went away.
fn stored_form(sub: &Subscription) -> Vec<u8> {
    serde_json::to_vec(&serde_json::json!({
        "source": sub.source,
        "spec": sub.definition,
    }))
    .unwrap_or_default()
}

/// Wait before trying a failed outbox read or write again.
const STORE_RETRY: Duration = Duration::from_secs(1);

/// Runs an outbox operation off the async threads, trying again (and
/// logging why) until it succeeds: neither a change nor a delivery outcome
/// is dropped because the disk had a bad moment. `what` names the operation
/// and whose it is, for the log.
async fn until_stored<T: Send + 'static>(
    what: &str,
    operation: impl Fn() -> Result<T, OutboxError> + Send + Sync + 'static,
) -> T {
    let operation = Arc::new(operation);
    loop {
        let attempt = operation.clone();
        match tokio::task::spawn_blocking(move || attempt()).await {
            Ok(Ok(value)) => return value,
            Ok(Err(e)) => {
                tracing::error!(error = %crate::error::Report(&e), "{what} failed; trying again")
            }
            Err(e) => tracing::error!(error = %e, "{what} panicked; trying again"),
        }
        tokio::time::sleep(STORE_RETRY).await;
    }
}

/// How long a worker waits for new deliveries before looking at the outbox
/// again on its own (a safety net; queued deliveries wake it at once).
const IDLE_RECHECK: Duration = Duration::from_secs(5);

/// The elected replica drives the engine through this; see [`crate::leader`].
impl Deliveries for Notifications {
    fn set_leading(&self, leading: bool) {
        Notifications::set_leading(self, leading);
    }

    fn settled(&self) -> Arc<tokio::sync::Notify> {
        Notifications::settled(self)
    }

    fn delivered(&self) -> BTreeMap<String, Delivered> {
        Notifications::delivered(self)
    }

    async fn follow(&self, leader: &BTreeMap<String, Delivered>) {
        Notifications::follow(self, leader).await;
    }
}
