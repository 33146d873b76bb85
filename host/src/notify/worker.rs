//! The worker of one subscription: sends its queue in order.
//!
//! One delivery at a time, so a receiver sees the changes of an object in
//! the order they happened. A retryable failure holds the queue (capped
//! exponential backoff with jitter, at least the receiver's `Retry-After`);
//! a refusal moves the delivery to the dead letters and the queue goes on.
//! Deliveries are removed from the outbox only after the sink took them: a
//! crash in between sends them again, with the same id.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::nats::{NatsSink, NatsSinkConfig};
use super::outbox::{DeadLetter, Outbox};
use super::sink::{Delivery, SendError};
use super::subscription::{SinkSpec, Subscription};
use super::webhook::Webhook;
use super::{Active, IDLE_RECHECK, until_stored};
use crate::metrics::{Attempt, Metrics};
use crate::plugin::{DeliveryError, Plugins};
use crate::store::{Change, ChangeType, Origin, StoredObject};
use crate::watch::Backoff;

/// Deliveries read from the outbox at once.
const BATCH: usize = 128;

/// Where a subscription's deliveries go.
pub(super) enum Sink {
    Webhook(Webhook),
    /// Connected on first use.
    Nats(Box<NatsSinkConfig>, Option<Box<NatsSink>>),
    Plugin(String, Arc<Plugins>),
    /// Cannot be set up; every attempt is retried with this reason.
    Broken(String),
}

impl Sink {
    pub(super) fn new(sub: &Subscription, http: &reqwest::Client, plugins: &Arc<Plugins>) -> Sink {
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
                Ok(w) => Sink::Webhook(w),
                Err(e) => Sink::Broken(e),
            },
            SinkSpec::Nats(config) => Sink::Nats(Box::new(config.clone()), None),
            SinkSpec::Plugin(name) => Sink::Plugin(name.clone(), plugins.clone()),
        }
    }

    async fn send(&mut self, delivery: &Delivery) -> Result<(), SendError> {
        match self {
            Sink::Webhook(w) => w.send(delivery).await,
            Sink::Nats(config, connection) => {
                if connection.is_none() {
                    let sink = NatsSink::connect((**config).clone())
                        .await
                        .map_err(SendError::retry)?;
                    *connection = Some(Box::new(sink));
                }
                match connection {
                    Some(sink) => sink.send(delivery).await,
                    None => Err(SendError::retry("not connected")),
                }
            }
            Sink::Plugin(name, plugins) => {
                let plugin = plugins.notifier(name).map_err(SendError::retry)?;
                let change = change_of(delivery)?;
                let gvk = delivery.gvk.clone();
                tokio::task::spawn_blocking(move || plugin.deliver(&gvk, &change))
                    .await
                    .map_err(|e| SendError::retry(format!("plugin call failed: {e}")))?
                    .map_err(|e| match e {
                        DeliveryError::Retry { reason, after } => {
                            SendError::Retry { reason, after }
                        }
                        DeliveryError::GiveUp(reason) => SendError::Reject(reason),
                    })
            }
            Sink::Broken(reason) => Err(SendError::retry(reason.clone())),
        }
    }
}

/// The change a watch-event payload describes, for notifier plugins.
fn change_of(delivery: &Delivery) -> Result<Change, SendError> {
    let corrupt = || SendError::Reject("the queued payload is not a watch event".into());
    let mut event: serde_json::Value =
        serde_json::from_slice(&delivery.payload).map_err(|_| corrupt())?;
    let kind = ChangeType::parse(event["type"].as_str().unwrap_or_default()).ok_or_else(corrupt)?;
    let object = |v: serde_json::Value| {
        StoredObject::from_value(v, &delivery.gvk, true)
            .map(Arc::new)
            .map_err(|_| corrupt())
    };
    let old = match event.get_mut("oldObject").map(serde_json::Value::take) {
        Some(v) => Some(object(v)?),
        None => None,
    };
    Ok(Change {
        kind,
        object: object(event["object"].take())?,
        old,
        origin: Origin::Watch,
        position: 0,
    })
}

/// Runs until the subscription is deleted.
pub(super) async fn run(
    active: Arc<Active>,
    mut sink: Sink,
    outbox: Arc<Outbox>,
    metrics: Arc<Metrics>,
) {
    let name = active.sub.name.clone();
    let (initial, max) = active.sub.retry;
    let mut backoff = Backoff::new(initial, max);
    let mut settled = Settled::default();
    loop {
        if active.stopped.load(Ordering::SeqCst) {
            return;
        }
        let reader = outbox.clone();
        let queue_name = name.clone();
        let batch = until_stored(&format!("reading the queue of {name}"), move || {
            reader.pending(&queue_name, None, BATCH)
        })
        .await;
        if batch.is_empty() {
            tokio::select! {
                () = active.wake.notified() => {}
                () = tokio::time::sleep(IDLE_RECHECK) => {}
            }
            continue;
        }
        for delivery in batch {
            let mut attempts = 0;
            loop {
                if active.stopped.load(Ordering::SeqCst) {
                    return;
                }
                attempts += 1;
                match sink.send(&delivery).await {
                    Ok(()) => {
                        metrics.delivery_attempt(&name, Attempt::Delivered);
                        let mut state = active.state.lock();
                        state.deliveries += 1;
                        state.last_delivery = Some(std::time::SystemTime::now());
                        drop(state);
                        settled.delivered.push(delivery.seq);
                        backoff.reset();
                        break;
                    }
                    Err(SendError::Reject(reason)) => {
                        metrics.delivery_attempt(&name, Attempt::DeadLettered);
                        tracing::warn!(subscription = %name, delivery = %delivery.id, reason = %reason, "delivery refused; kept as a dead letter");
                        active.state.lock().last_error = Some(reason.clone());
                        settled.refused.push(DeadLetter {
                            delivery: delivery.clone(),
                            reason,
                            failed_ms: crate::time::unix_millis(),
                            attempts,
                        });
                        break;
                    }
                    Err(SendError::Retry { reason, after }) => {
                        metrics.delivery_attempt(&name, Attempt::Retried);
                        {
                            let mut state = active.state.lock();
                            state.retries += 1;
                            state.last_error = Some(reason.clone());
                        }
                        // What went through so far leaves the outbox before the wait.
                        settled.flush(&active, &outbox).await;
                        let delay = backoff.next_delay().max(after.unwrap_or_default());
                        if attempts == 1 {
                            tracing::warn!(subscription = %name, delivery = %delivery.id, reason = %reason, retry_in_ms = delay.as_millis() as u64, "delivery failed; retrying");
                        } else {
                            tracing::debug!(subscription = %name, delivery = %delivery.id, attempts, reason = %reason, retry_in_ms = delay.as_millis() as u64, "delivery failed again");
                        }
                        tokio::select! {
                            () = tokio::time::sleep(delay) => {}
                            () = active.wake.notified() => {}
                        }
                    }
                }
            }
        }
        settled.flush(&active, &outbox).await;
    }
}

/// Outcomes not yet written to the outbox.
#[derive(Default)]
struct Settled {
    delivered: Vec<u64>,
    refused: Vec<DeadLetter>,
}

impl Settled {
    /// Writes the outcomes, trying again until the outbox takes them.
    async fn flush(&mut self, active: &Active, outbox: &Arc<Outbox>) {
        if self.delivered.is_empty() && self.refused.is_empty() {
            return;
        }
        let delivered = std::mem::take(&mut self.delivered);
        let refused = std::mem::take(&mut self.refused);
        let (done, dead) = (delivered.len() as u64, refused.len() as u64);
        let name = active.sub.name.clone();
        let writer = outbox.clone();
        until_stored(&format!("settling deliveries of {name}"), move || {
            writer.settle(&name, &delivered, &refused)
        })
        .await;
        active.pending.fetch_sub(done + dead, Ordering::Relaxed);
        active.dead.fetch_add(dead, Ordering::Relaxed);
    }
}
