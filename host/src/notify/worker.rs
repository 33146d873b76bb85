//! The worker of one subscription: decides and sends its queue in order.
//!
//! One delivery at a time, so a receiver sees the changes of an object in
//! the order they happened; to Kafka, whose producer keeps the order of a
//! partition with several requests in flight, up to [`kafka::WINDOW`] at
//! once, their outcomes taken in queue order. The subscription's filter plugins decide first
//! (each change once per plugin, however many subscriptions use it); a change
//! that does not pass leaves the queue unsent. The body is rendered now, in
//! the subscription's format, from the change stored once for every
//! subscription. A retryable failure holds the queue (capped exponential
//! backoff with jitter, at least the receiver's `Retry-After`); a refusal
//! moves the delivery to the dead letters and the queue goes on. Deliveries
//! are removed from the outbox only after the sink took them: a crash in
//! between sends them again, with the same id. A delivery the queue's bound
//! made a dead letter while the worker held it (retrying a receiver that is
//! down) is not sent again from the worker's hands. With leader election, a
//! replica that does not hold the Lease keeps its queue unsent (see
//! [`crate::leader`]).

use crate::cel::ChangeVariables;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::decide::Decisions;
use super::feed::stored_object;
use super::kafka::{self, KafkaSink, Produced};
use super::nats::NatsSink;
use super::outbox::{Announcement, DeadLetter, Outbox, Queued};
use super::payload::{self, Event};
use super::sink::{Delivery, Rejection, SendError};
use super::subscription::{SinkSpec, Subscription};
use super::webhook::Webhook;
use super::{Active, Delivered, IDLE_RECHECK, until_stored};
use crate::backoff::Backoff;
use crate::config::PayloadFormat;
use crate::config::kafka::KafkaSinkConfig;
use crate::config::nats::NatsSinkConfig;
use crate::metrics::{Attempt, Metrics};
use crate::plugin::{DeliveryError, Plugins};
use crate::store::Change;

/// Deliveries read from the outbox at once.
const BATCH: usize = 128;

/// Where a subscription's deliveries go.
pub(super) enum Sink {
    Webhook(Box<Webhook>),
    /// Connected on first use.
    Nats {
        config: Box<NatsSinkConfig>,
        /// `consoleUrl`.
        console: Option<Arc<str>>,
        connection: Option<Box<NatsSink>>,
    },
    /// The producer is made on first use, and again after it failed for
    /// good (see [`KafkaSink::must_restart`]).
    Kafka {
        config: Box<KafkaSinkConfig>,
        subscription: String,
        /// `consoleUrl`.
        console: Option<Arc<str>>,
        producer: Option<Box<KafkaSink>>,
    },
    Plugin(String),
    /// Cannot be set up; every attempt is retried with this reason.
    Broken(String),
}

impl Sink {
    /// The sink of `sub`; `console` is `consoleUrl` (without a trailing
    /// `/`), whose object links webhook, NATS and Kafka deliveries carry.
    pub(super) fn new(
        sub: &Subscription,
        http: &reqwest::Client,
        console: Option<&Arc<str>>,
    ) -> Sink {
        match &sub.sink {
            SinkSpec::Webhook {
                url,
                headers,
                secret,
                timeout,
            } => match Webhook::new(
                http.clone(),
                &sub.name,
                url,
                headers,
                secret.as_deref(),
                *timeout,
                sub.payload,
            ) {
                Ok(w) => Sink::Webhook(Box::new(w.with_console(console.cloned()))),
                Err(e) => Sink::Broken(crate::error::Report(&e).to_string()),
            },
            SinkSpec::Nats(config) => Sink::Nats {
                config: Box::new(config.clone()),
                console: console.cloned(),
                connection: None,
            },
            SinkSpec::Kafka(config) => Sink::Kafka {
                config: Box::new(config.clone()),
                subscription: sub.name.clone(),
                console: console.cloned(),
                producer: None,
            },
            SinkSpec::Plugin(name) => Sink::Plugin(name.clone()),
        }
    }

    /// How many deliveries go out before the first of them is settled: the
    /// Kafka producer keeps order per partition with several in flight;
    /// every other sink takes one at a time.
    fn window(&self) -> usize {
        match self {
            Sink::Kafka { .. } => kafka::WINDOW,
            _ => 1,
        }
    }

    /// Hands a delivery to a sink that takes several at once (Kafka); the
    /// others are sent when their outcome is awaited.
    fn start(&mut self, item: &Item) -> Started {
        let Sink::Kafka {
            config,
            subscription,
            console,
            producer,
        } = self
        else {
            return Started::Later;
        };
        if producer.is_none() {
            match KafkaSink::new(config, subscription) {
                Ok(sink) => *producer = Some(Box::new(sink.with_console(console.clone()))),
                Err(e) => {
                    return Started::Done(Err(SendError::retry(
                        crate::error::Report(&e).to_string(),
                    )));
                }
            }
        }
        match producer {
            Some(sink) => Started::Kafka(sink.produce(item.delivery())),
            None => Started::Done(Err(SendError::retry("no Kafka producer"))),
        }
    }

    /// The outcome of a delivery [`Sink::start`]ed.
    async fn finish(
        &mut self,
        started: Started,
        item: &mut Item,
        plugins: &Plugins,
    ) -> Result<(), SendError> {
        match started {
            Started::Later => self.send(item, plugins).await,
            Started::Done(outcome) => outcome,
            Started::Kafka(produced) => {
                let Sink::Kafka { producer, .. } = self else {
                    return Err(SendError::retry("the sink changed"));
                };
                let Some(sink) = producer else {
                    return Err(SendError::retry("no Kafka producer"));
                };
                let outcome = sink.outcome(produced).await;
                if outcome.is_err() && sink.must_restart() {
                    *producer = None;
                }
                outcome
            }
        }
    }

    async fn send(&mut self, item: &mut Item, plugins: &Plugins) -> Result<(), SendError> {
        match self {
            Sink::Webhook(w) => w.send(item.delivery()).await,
            Sink::Nats {
                config,
                console,
                connection,
            } => {
                if connection.is_none() {
                    let sink = NatsSink::connect((**config).clone())
                        .await
                        .map_err(|e| SendError::retry(crate::error::Report(&e).to_string()))?;
                    *connection = Some(Box::new(sink.with_console(console.clone())));
                }
                match connection {
                    Some(sink) => sink.send(item.delivery()).await,
                    None => Err(SendError::retry("not connected")),
                }
            }
            Sink::Kafka { .. } => {
                let started = self.start(item);
                Box::pin(self.finish(started, item, plugins)).await
            }
            Sink::Plugin(name) => {
                plugins.loaded(name).await;
                let plugin = plugins
                    .notifier(name)
                    .map_err(|e| SendError::retry(e.to_string()))?;
                let change = item.change()?;
                let gvk = item.queued.announcement.gvk.clone();
                tokio::task::spawn_blocking(move || plugin.deliver(&gvk, &change))
                    .await
                    .map_err(|e| SendError::retry(format!("plugin call failed: {e}")))?
                    .map_err(|e| match e {
                        DeliveryError::Retry { reason, after } => {
                            SendError::Retry { reason, after }
                        }
                        DeliveryError::GiveUp(reason) => Rejection::Refused(reason).into(),
                    })
            }
            Sink::Broken(reason) => Err(SendError::retry(reason.clone())),
        }
    }
}

/// A delivery handed to its sink, or not yet.
enum Started {
    /// Sent when its outcome is awaited.
    Later,
    /// Produced to Kafka.
    Kafka(Produced),
    /// Failed before it left.
    Done(Result<(), SendError>),
}

/// One queued delivery on its way: the change as stored, and what is made
/// of it at most once, when first needed.
struct Item {
    queued: Queued,
    /// The body, for sinks that send one.
    delivery: Delivery,
    /// The change as plugins see it.
    change: Option<Arc<Change>>,
    /// Whether it passed the subscription's filter plugins, once decided.
    passes: Option<bool>,
    /// Attempts so far.
    attempts: u32,
}

impl Item {
    fn new(queued: Queued, sub: &Subscription) -> Item {
        let delivery = render(&queued, sub);
        Item {
            queued,
            delivery,
            change: None,
            passes: None,
            attempts: 0,
        }
    }

    fn delivery(&self) -> &Delivery {
        &self.delivery
    }

    /// The stored change as the cache would hand it over.
    fn change(&mut self) -> Result<Arc<Change>, SendError> {
        if let Some(change) = &self.change {
            return Ok(change.clone());
        }
        let change = Arc::new(change_of(&self.queued.announcement)?);
        self.change = Some(change.clone());
        Ok(change)
    }
}

/// The delivery of a queued change, its body rendered in the
/// subscription's format. Notifier plugins get the change itself, no body.
pub(super) fn render(queued: &Queued, sub: &Subscription) -> Delivery {
    let a = &queued.announcement;
    let id = a.id();
    let time = || crate::time::rfc3339(std::time::Duration::from_millis(a.queued_ms));
    let event = |time| Event {
        kind: a.kind,
        gvk: &a.gvk,
        namespace: &a.namespace,
        name: &a.name,
        object: &a.object,
        old: a.old.as_deref(),
        id: &id,
        subscription: &sub.name,
        time,
    };
    let (payload, attributes) = match sub.sink {
        SinkSpec::Plugin(_) => (Vec::new(), Vec::new()),
        // CloudEvents in Kafka's binary mode: attributes beside the data.
        SinkSpec::Kafka(_) if sub.payload == PayloadFormat::CloudEvents => {
            let time = time();
            let event = event(&time);
            let mut data =
                Vec::with_capacity(a.object.len() + a.old.as_ref().map_or(0, Vec::len) + 32);
            payload::cloud_event_data(&mut data, &event);
            (data, payload::cloud_event_attributes(&event).to_vec())
        }
        SinkSpec::Webhook { .. } | SinkSpec::Nats(_) | SinkSpec::Kafka(_) => {
            let time = time();
            (payload::render(sub.payload, &event(&time)), Vec::new())
        }
    };
    Delivery {
        seq: queued.seq,
        id,
        event_type: a.kind.as_str().to_string(),
        gvk: a.gvk.clone(),
        namespace: a.namespace.clone(),
        name: a.name.clone(),
        enqueued_ms: a.queued_ms,
        payload,
        attributes,
    }
}

/// The change an announcement records, with its origin.
fn change_of(a: &Announcement) -> Result<Change, SendError> {
    let object = |json: &[u8]| {
        stored_object(json, &a.gvk)
            .map(Arc::new)
            .ok_or(SendError::Reject(Rejection::Corrupt))
    };
    Ok(Change {
        kind: a.kind,
        object: object(&a.object)?,
        old: a.old.as_deref().map(object).transpose()?,
        origin: a.origin,
        position: crate::store::parse_rv(&a.resource_version),
    })
}

/// What a worker works with.
pub(super) struct Worker {
    pub(super) active: Arc<Active>,
    pub(super) sink: Sink,
    pub(super) outbox: Arc<Outbox>,
    pub(super) metrics: Arc<Metrics>,
    pub(super) plugins: Arc<Plugins>,
    pub(super) decisions: Arc<Decisions>,
    /// Whether this replica delivers (leader election); a follower's worker
    /// holds its queue.
    pub(super) leading: tokio::sync::watch::Receiver<bool>,
    /// Told after each settlement, for the leader's Lease.
    pub(super) settled: Arc<tokio::sync::Notify>,
}

impl Worker {
    /// Runs until the subscription is deleted.
    pub(super) async fn run(mut self) {
        let active = self.active.clone();
        let name = active.sub.name.clone();
        let (initial, max) = active.sub.retry;
        let mut backoff = Backoff::new(initial, max);
        let mut settled = Settled::default();
        let mut leading = self.leading.clone();
        loop {
            if active.stopped.load(Ordering::SeqCst) {
                return;
            }
            if !*leading.borrow_and_update() {
                tokio::select! {
                    _ = leading.changed() => {}
                    () = active.wake.notified() => {}
                    () = active.queued.notified() => {}
                    () = tokio::time::sleep(IDLE_RECHECK) => {}
                }
                continue;
            }
            let reader = self.outbox.clone();
            let queue_name = name.clone();
            let batch = until_stored(&format!("reading the queue of {name}"), move || {
                reader.pending(&queue_name, BATCH)
            })
            .await;
            if batch.is_empty() {
                tokio::select! {
                    () = active.wake.notified() => {}
                    () = active.queued.notified() => {}
                    () = tokio::time::sleep(IDLE_RECHECK) => {}
                }
                continue;
            }
            let mut items: Vec<Item> = batch
                .into_iter()
                .map(|queued| Item::new(queued, &active.sub))
                .collect();
            // Items before `next` are settled (delivered, filtered out or
            // dead); from `next` on, up to the sink's window is sent at once
            // and the outcomes are taken in queue order. A retry sends again
            // from the first item that was not acknowledged.
            let mut next = 0;
            'batch: while next < items.len() {
                if active.stopped.load(Ordering::SeqCst) {
                    return;
                }
                if !*leading.borrow() {
                    // Another replica delivers now; this one keeps the rest.
                    break 'batch;
                }
                let mut started = Vec::new();
                let mut passing = 0;
                while next + started.len() < items.len() && passing < self.sink.window() {
                    let item = &mut items[next + started.len()];
                    if item.passes.is_none() {
                        item.passes = Some(self.passes_filters(item).await);
                    }
                    if item.passes == Some(true) {
                        passing += 1;
                        started.push(Some(self.sink.start(item)));
                    } else {
                        started.push(None);
                    }
                }
                active.in_flight.store(passing as u64, Ordering::Relaxed);
                for started in started {
                    let item = &mut items[next];
                    let Some(started) = started else {
                        self.metrics.subscription_filtered(&name);
                        active.state.lock().filtered += 1;
                        settled.done(&item.queued);
                        next += 1;
                        continue;
                    };
                    item.attempts += 1;
                    let outcome = self.sink.finish(started, item, &self.plugins).await;
                    active.in_flight.fetch_sub(1, Ordering::Relaxed);
                    match outcome {
                        Ok(()) => {
                            self.metrics.delivery_attempt(&name, Attempt::Delivered);
                            active.trimming.store(false, Ordering::Relaxed);
                            let mut state = active.state.lock();
                            state.deliveries += 1;
                            state.last_delivery = Some(std::time::SystemTime::now());
                            drop(state);
                            settled.done(&item.queued);
                            backoff.reset();
                        }
                        Err(SendError::Reject(rejection)) => {
                            let reason = crate::error::Report(&rejection).to_string();
                            self.metrics.delivery_attempt(&name, Attempt::DeadLettered);
                            tracing::warn!(subscription = %name, delivery = %item.delivery.id, reason = %reason, "delivery refused; kept as a dead letter");
                            active.state.lock().last_error = Some(reason.clone());
                            settled.last = Some(delivered(&item.queued));
                            settled.refused.push(DeadLetter {
                                queued: item.queued.clone(),
                                reason,
                                failed_ms: crate::time::unix_millis(),
                                attempts: item.attempts,
                            });
                        }
                        Err(SendError::Retry { reason, after }) => {
                            self.metrics.delivery_attempt(&name, Attempt::Retried);
                            {
                                let mut state = active.state.lock();
                                state.retries += 1;
                                state.last_error = Some(reason.clone());
                            }
                            // What went through so far leaves the outbox before the wait.
                            settled.flush(&self).await;
                            let delay = backoff.next_delay().max(after.unwrap_or_default());
                            let attempts = item.attempts;
                            if attempts == 1 {
                                tracing::warn!(subscription = %name, delivery = %item.delivery.id, reason = %reason, retry_in_ms = delay.as_millis() as u64, "delivery failed; retrying");
                            } else {
                                tracing::debug!(subscription = %name, delivery = %item.delivery.id, attempts, reason = %reason, retry_in_ms = delay.as_millis() as u64, "delivery failed again");
                            }
                            // Changes queued meanwhile wait too: a receiver
                            // that is down is tried on the backoff, not once
                            // per change.
                            tokio::select! {
                                () = tokio::time::sleep(delay) => {}
                                () = active.wake.notified() => {}
                            }
                            // The queue's bound may have made the oldest
                            // dead letters meanwhile: they are not sent again.
                            next = self.skip_gone(&items, next).await;
                            // The outcomes still to come are dropped: what
                            // reached the broker comes again, same id.
                            active.in_flight.store(0, Ordering::Relaxed);
                            continue 'batch;
                        }
                    }
                    next += 1;
                }
            }
            settled.flush(&self).await;
        }
    }

    /// The first of `items[next..]` still queued. Those in hand are the
    /// oldest of the queue, in order, and what went before `next` is
    /// settled: any of them older than the queue's first entry is gone, made
    /// a dead letter by the queue's bound.
    async fn skip_gone(&self, items: &[Item], mut next: usize) -> usize {
        let reader = self.outbox.clone();
        let name = self.active.sub.name.clone();
        let first = until_stored(&format!("reading the queue of {name}"), move || {
            reader.first_pending_seq(&name)
        })
        .await;
        while next < items.len() && first.is_none_or(|first| items[next].queued.seq < first) {
            next += 1;
        }
        next
    }

    /// Whether the item passes the subscription's filter plugins. A change
    /// that cannot be read back passes, so that the sink reports it.
    async fn passes_filters(&self, item: &mut Item) -> bool {
        let sub = &self.active.sub;
        if !self.meets_conditions(item) {
            return false;
        }
        if sub.filters.is_empty() {
            return true;
        }
        let Ok(change) = item.change() else {
            return true;
        };
        self.decisions
            .passes(
                &self.plugins,
                &sub.filters,
                &sub.name,
                item.queued.change,
                &item.queued.announcement.gvk,
                &change,
            )
            .await
    }

    /// Whether a change meets every `matchConditions` of the subscription.
    /// Evaluated here, on the worker's task: a typical condition takes a
    /// few microseconds (far less than handing it to another thread), and
    /// the cost limit stops any within milliseconds. One that fails on the
    /// change (a field read without `has()`, a wrong type, the cost limit)
    /// lets it not pass, and is counted and shown in the subscription's
    /// status.
    fn meets_conditions(&self, item: &Item) -> bool {
        let conditions = &self.active.sub.match_conditions;
        if conditions.is_empty() {
            return true;
        }
        let a = &item.queued.announcement;
        let variables = ChangeVariables::new(a.kind, &a.object, a.old.as_deref());
        for condition in conditions {
            match condition.expression.0.on(&variables) {
                Ok(true) => {}
                Ok(false) => return false,
                Err(e) => {
                    let error = format!(
                        "matchConditions `{}` on {}/{}: {e}",
                        condition.name, a.namespace, a.name
                    );
                    let name = &self.active.sub.name;
                    self.metrics.subscription_condition_error(name);
                    let mut state = self.active.state.lock();
                    // The first failure and every thousandth are logged;
                    // all are counted, and the last one shown.
                    if state.condition_errors.is_multiple_of(1000) {
                        tracing::warn!(subscription = %name, %error, failures = state.condition_errors + 1, "a match condition failed on a change, which is not delivered");
                    }
                    state.condition_errors += 1;
                    state.last_condition_error = Some(error);
                    return false;
                }
            }
        }
        true
    }
}

/// Outcomes not yet written to the outbox.
#[derive(Default)]
struct Settled {
    /// Delivered or filtered out: they leave the queue.
    done: Vec<u64>,
    refused: Vec<DeadLetter>,
    /// The last of them, in queue order.
    last: Option<Delivered>,
}

fn delivered(queued: &Queued) -> Delivered {
    Delivered {
        id: queued.announcement.id(),
        resource_version: queued.announcement.resource_version.clone(),
    }
}

impl Settled {
    fn done(&mut self, queued: &Queued) {
        self.done.push(queued.seq);
        self.last = Some(delivered(queued));
    }

    /// Writes the outcomes, trying again until the outbox takes them.
    async fn flush(&mut self, worker: &Worker) {
        if self.done.is_empty() && self.refused.is_empty() {
            return;
        }
        let done = std::mem::take(&mut self.done);
        let refused = std::mem::take(&mut self.refused);
        let last = self.last.take();
        let name = worker.active.sub.name.clone();
        let writer = worker.outbox.clone();
        let settlement = until_stored(&format!("settling deliveries of {name}"), move || {
            writer.settle(&name, &done, &refused)
        })
        .await;
        worker.decisions.forget(&settlement.released);
        // Counted as the outbox found them: an entry the bound made a dead
        // letter meanwhile was counted then.
        let active = &worker.active;
        active.dead.fetch_add(settlement.refused, Ordering::Relaxed);
        active
            .pending
            .fetch_sub(settlement.done + settlement.refused, Ordering::Relaxed);
        active.trimmed(settlement.trimmed, &worker.metrics);
        if let Some(last) = last {
            worker.active.state.lock().delivered = Some(last);
            worker.settled.notify_one();
        }
    }
}
