//! What every sink (webhook, NATS, Kafka, notifier plugin) is given and answers.

use std::time::Duration;

use crate::gvk::Gvk;

/// One pending delivery of one change to one subscription, as kept in the
/// outbox until the sink has taken it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Delivery {
    /// Position in its subscription's queue.
    pub seq: u64,
    /// Idempotency id: `uid/resourceVersion/TYPE`. Identical for every
    /// attempt, so a receiver can drop what it has already seen.
    pub id: String,
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub event_type: String,
    /// Kind of the object.
    pub gvk: Gvk,
    /// Namespace of the object, empty for cluster-scoped objects.
    pub namespace: String,
    /// Name of the object.
    pub name: String,
    /// When the change was queued, milliseconds since the Unix epoch.
    pub enqueued_ms: u64,
    /// The rendered body (JSON), in the subscription's payload format.
    pub payload: Vec<u8>,
    /// CloudEvents attributes (`id`, `source`, `type`, `subject`, `time`)
    /// that a sink in binary mode (Kafka) sends beside the body, which is
    /// then the event's `data`; empty otherwise.
    pub attributes: Vec<(&'static str, String)>,
}

/// Why a sink did not take a delivery.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SendError {
    /// Worth trying again: the receiver is down, slow, overloaded or failed
    /// (connection errors, timeouts, 5xx, 408, 429). `after` is the
    /// receiver's own hint (`Retry-After`).
    #[error("{reason}")]
    Retry {
        /// What happened, for logs and the status API.
        reason: String,
        /// Wait at least this long before the next attempt.
        after: Option<Duration>,
    },
    /// Will never succeed as it is (e.g. 400): goes to the dead-letter list.
    #[error("{0}")]
    Reject(String),
}

impl SendError {
    /// A retryable failure without a hint.
    pub fn retry(reason: impl Into<String>) -> SendError {
        SendError::Retry {
            reason: reason.into(),
            after: None,
        }
    }
}
