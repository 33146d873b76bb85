//! What every sink (webhook, NATS, Kafka, notifier plugin) is given and answers.

use std::time::Duration;

use async_nats::jetstream::context::PublishError;
use rdkafka::error::KafkaError;

use super::webhook::WebhookError;
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
#[derive(Debug, thiserror::Error)]
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
    #[error(transparent)]
    Reject(#[from] Rejection),
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

/// Why a delivery will never succeed as it is. A dead letter keeps it as
/// text, with its causes ([`crate::error::Report`]).
#[derive(Debug, thiserror::Error)]
pub enum Rejection {
    /// The receiver refused it in its own words: a webhook's answer (its
    /// status and the start of its body) or a notifier plugin's reason for
    /// giving up.
    #[error("{0}")]
    Refused(String),
    /// The webhook receiver answered with a redirect (its answer, as for
    /// [`Rejection::Refused`]).
    #[error("{0} (redirects are not followed; configure the final URL)")]
    Redirected(String),
    /// A request header cannot carry a value of the delivery.
    #[error(transparent)]
    Header(#[from] WebhookError),
    /// No JetStream stream captures the subject.
    #[error(
        "no JetStream stream captures subject `{subject}`{streams}; add the subject to a stream or change the sink's `subject`"
    )]
    NoStream {
        /// The delivery's subject.
        subject: String,
        /// ` (stream `S` has subjects ...)`, or nothing when there is none.
        streams: String,
    },
    /// NATS refused the message as too large.
    #[error("message to `{subject}` is too large")]
    NatsTooLarge {
        /// The delivery's subject.
        subject: String,
        /// NATS' answer.
        #[source]
        source: PublishError,
    },
    /// The topic template makes a topic longer than Kafka takes.
    #[error("the topic for {kind}/{name} would be longer than Kafka's 249 characters")]
    TopicTooLong {
        /// The object's kind.
        kind: String,
        /// The object's name.
        name: String,
    },
    /// The Kafka producer or broker refused the message; what that means.
    #[error("{what} ({source})")]
    Kafka {
        /// What was refused, and what to do.
        what: String,
        /// The producer's error.
        #[source]
        source: KafkaError,
    },
    /// The outbox's copy of the change does not read back.
    #[error("the stored change is corrupt")]
    Corrupt,
}
