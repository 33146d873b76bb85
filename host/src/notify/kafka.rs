//! Kafka sink: produces each delivery to a topic rendered from a template
//! and counts it as delivered once the broker acknowledged it (with
//! `acks: all`, every in-sync replica has it).
//!
//! **Client.** librdkafka, through the `rdkafka` crate: the idempotent
//! producer (a message the producer retries inside one session is written
//! once and in order), SASL PLAIN and SCRAM, TLS, every compression codec,
//! and the behaviour operators know from every other librdkafka producer.
//!
//! **Message.** The value is the delivery's body; the key is the object's
//! uid (or `namespace/name`, or none, as configured), so all changes of one
//! object land in one partition, in order. Headers: `GRW-Delivery-Id` (the
//! delivery id, the same on every attempt), `GRW-Subscription`,
//! `GRW-Event-Type`, `GRW-Group` (`core` for the core group), `GRW-Version`,
//! `GRW-Kind`, `GRW-Namespace` (empty for cluster-scoped objects),
//! `GRW-Name`, `content-type` and, with `consoleUrl`, `GRW-Console-Link`
//! (the object's page in the web console). With the `cloudevents` payload the message
//! is a CloudEvent in Kafka's binary mode: `ce_specversion`, `ce_id`,
//! `ce_source`, `ce_type`, `ce_subject`, `ce_time` headers and the event's
//! `data` as the value.
//!
//! **Topics.** Not created: a missing topic is retried (with the reason in
//! the status) until someone creates it. A character a topic cannot hold
//! becomes `_`.
//!
//! **In flight.** The worker hands over up to [`WINDOW`] deliveries at once
//! ([`KafkaSink::produce`]) and takes their outcomes in queue order. After a
//! failure it sends again from the first delivery not acknowledged, so a
//! consumer may see a message twice, always with the same delivery id.
//!
//! **Outcomes.** Acknowledged: delivered. Too large, refused by the
//! broker's policy, not authorized: dead letter with the broker's reason
//! (replayable once fixed). Anything else (brokers unreachable, a missing
//! topic, no acknowledgement within `deliveryTimeoutSeconds`, failed
//! authentication, an error it has no rule for): retried with backoff, and
//! the next attempt makes a new producer (new connections and metadata, the
//! password file read again, a new idempotence session).

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rdkafka::ClientContext;
use rdkafka::config::{ClientConfig, RDKafkaLogLevel};
use rdkafka::error::{KafkaError, RDKafkaErrorCode};
use rdkafka::message::{Header, OwnedHeaders};
use rdkafka::producer::{DeliveryFuture, FutureProducer, FutureRecord, Producer};

use super::payload::console_link;
use super::sink::Rejection;
use super::{Delivery, SendError};
use crate::config::kafka::{KafkaConfigError, KafkaKey, KafkaSinkConfig, TopicTemplate};

/// Deliveries handed to the producer before the first of them is settled.
pub const WINDOW: usize = 128;

/// Why a Kafka producer cannot be made (brokers that are down are not a
/// reason: the producer connects in the background).
#[derive(Debug, thiserror::Error)]
pub enum KafkaConnectError {
    /// The settings are not right.
    #[error(transparent)]
    Config(#[from] KafkaConfigError),
    /// The SASL password file cannot be read.
    #[error("`sasl.passwordFile`: cannot read `{path}`: {source}")]
    PasswordFile {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The client refused its settings (e.g. a TLS file it cannot load).
    #[error("the Kafka producer cannot start")]
    Client(#[source] KafkaError),
}

/// What librdkafka reports about its connections, for the log and for the
/// reason of a delivery that timed out.
struct Context {
    servers: String,
    reported: Arc<Mutex<Reported>>,
}

/// Errors librdkafka reported outside of any one message, since the last
/// acknowledgement.
#[derive(Default)]
struct Reported {
    /// The last one.
    last: Option<String>,
    /// Why the brokers refused the credentials: kept while later errors
    /// (the connection it closed) come.
    refused: Option<String>,
    /// The last error written to the log, and when.
    written: Option<(String, Instant)>,
}

/// How long the same error is not written to the log again.
const REPEAT: Duration = Duration::from_secs(1);

impl Reported {
    /// Whether `message` is written to the log: not when it was, less than
    /// [`REPEAT`] ago. librdkafka reports a connection failure as an
    /// error-level log line and to the error callback, which `rdkafka`
    /// calls twice, all within a millisecond.
    fn first_time(&mut self, message: &str) -> bool {
        let now = Instant::now();
        if let Some((last, at)) = &self.written
            && last == message
            && now.duration_since(*at) < REPEAT
        {
            return false;
        }
        self.written = Some((message.to_string(), now));
        true
    }
}

/// A librdkafka log line without the thread it came from
/// (`[thrd:HOST:PORT/ID]: `), as the error callback has it.
fn without_thread(message: &str) -> &str {
    message
        .strip_prefix("[thrd:")
        .and_then(|rest| rest.split_once("]: "))
        .map_or(message, |(_, rest)| rest)
}

impl ClientContext for Context {
    fn log(&self, level: RDKafkaLogLevel, facility: &str, message: &str) {
        match level {
            RDKafkaLogLevel::Emerg
            | RDKafkaLogLevel::Alert
            | RDKafkaLogLevel::Critical
            | RDKafkaLogLevel::Error => {
                let message = without_thread(message);
                if self.reported.lock().first_time(message) {
                    tracing::warn!(servers = %self.servers, facility, "kafka: {message}");
                }
            }
            _ => tracing::debug!(servers = %self.servers, facility, "kafka: {message}"),
        }
    }

    fn error(&self, error: KafkaError, reason: &str) {
        let mut reported = self.reported.lock();
        if reported.first_time(reason) {
            tracing::warn!(servers = %self.servers, error = %error, "kafka: {reason}");
        }
        if matches!(
            error.rdkafka_error_code(),
            Some(RDKafkaErrorCode::Authentication | RDKafkaErrorCode::SaslAuthenticationFailed)
        ) {
            reported.refused = Some(reason.to_string());
        }
        reported.last = Some(reason.to_string());
    }
}

/// Produces deliveries to Kafka.
pub struct KafkaSink {
    /// Always set but while dropped (see `Drop`).
    producer: Option<FutureProducer<Context>>,
    /// What librdkafka reported since the last acknowledgement.
    reported: Arc<Mutex<Reported>>,
    /// Set when an outcome showed the producer cannot go on as it is.
    spent: std::sync::atomic::AtomicBool,
    topic: TopicTemplate,
    key: KafkaKey,
    subscription: String,
    timeout: Duration,
    /// `consoleUrl`, without a trailing `/`.
    console: Option<Arc<str>>,
}

/// A delivery handed to the producer, its outcome to come.
pub enum Produced {
    /// Refused before it left (too large, bad topic, full queue).
    Failed(SendError),
    /// On its way; the broker's answer is awaited.
    Sent {
        /// The producer's answer.
        future: DeliveryFuture,
        /// Where it went, for messages.
        topic: String,
    },
}

impl KafkaSink {
    /// Makes the producer of a subscription's sink; it connects in the
    /// background.
    pub fn new(
        config: &KafkaSinkConfig,
        subscription: &str,
    ) -> Result<KafkaSink, KafkaConnectError> {
        let topic = config.parse()?;
        let mut client = ClientConfig::new();
        for (name, value) in config.client_properties() {
            client.set(name, value);
        }
        if let Some(sasl) = &config.sasl {
            let password = std::fs::read_to_string(&sasl.password_file).map_err(|source| {
                KafkaConnectError::PasswordFile {
                    path: sasl.password_file.display().to_string(),
                    source,
                }
            })?;
            client.set("sasl.password", password.trim_end_matches(['\r', '\n']));
        }
        client.set_log_level(RDKafkaLogLevel::Info);
        let reported = Arc::new(Mutex::new(Reported::default()));
        let context = Context {
            servers: config.bootstrap_servers.clone(),
            reported: reported.clone(),
        };
        let producer: FutureProducer<Context> = client
            .create_with_context(context)
            .map_err(KafkaConnectError::Client)?;
        Ok(KafkaSink {
            producer: Some(producer),
            reported,
            spent: std::sync::atomic::AtomicBool::new(false),
            topic,
            key: config.key,
            subscription: subscription.to_string(),
            timeout: Duration::from_secs(config.delivery_timeout_seconds),
            console: None,
        })
    }

    /// Sends the link to each changed object's page in the web console at
    /// `base` (`consoleUrl`, without a trailing `/`) in `GRW-Console-Link`.
    pub fn with_console(mut self, base: Option<Arc<str>>) -> KafkaSink {
        self.console = base;
        self
    }

    /// The topic a delivery goes to; `None` when it would be longer than
    /// Kafka takes.
    pub fn topic(&self, delivery: &Delivery) -> Option<String> {
        self.topic.render(|f| super::nats::field(delivery, f))
    }

    /// The message key of a delivery.
    pub fn key(&self, delivery: &Delivery) -> Option<String> {
        match self.key {
            KafkaKey::Uid => Some(uid(&delivery.id).to_string()),
            KafkaKey::Name if delivery.namespace.is_empty() => Some(delivery.name.clone()),
            KafkaKey::Name => Some(format!("{}/{}", delivery.namespace, delivery.name)),
            KafkaKey::None => None,
        }
    }

    /// Hands a delivery to the producer without waiting for the broker.
    pub fn produce(&self, delivery: &Delivery) -> Produced {
        let Some(topic) = self.topic(delivery) else {
            return Produced::Failed(
                Rejection::TopicTooLong {
                    kind: delivery.gvk.kind.clone(),
                    name: delivery.name.clone(),
                }
                .into(),
            );
        };
        let key = self.key(delivery);
        let headers = self.headers(delivery);
        let mut record = FutureRecord::<str, [u8]>::to(&topic)
            .payload(delivery.payload.as_slice())
            .headers(headers);
        if let Some(key) = &key {
            record = record.key(key.as_str());
        }
        let Some(producer) = &self.producer else {
            return Produced::Failed(SendError::retry("the Kafka producer is closing"));
        };
        match producer.send_result(record) {
            Ok(future) => Produced::Sent { future, topic },
            Err((error, _)) => Produced::Failed(self.failed(&topic, &error)),
        }
    }

    /// Produces one delivery and waits for the broker's answer.
    pub async fn send(&self, delivery: &Delivery) -> Result<(), SendError> {
        self.outcome(self.produce(delivery)).await
    }

    /// The outcome of a produced delivery.
    pub async fn outcome(&self, produced: Produced) -> Result<(), SendError> {
        let (future, topic) = match produced {
            Produced::Failed(error) => return Err(error),
            Produced::Sent { future, topic } => (future, topic),
        };
        // The producer answers every message within its timeout; the margin
        // covers a producer that stopped answering at all.
        let answer = tokio::time::timeout(self.timeout + Duration::from_secs(5), future).await;
        match answer {
            Ok(Ok(Ok(_delivered))) => {
                // The connection works: earlier errors are history.
                *self.reported.lock() = Reported::default();
                Ok(())
            }
            Ok(Ok(Err((error, _message))))
                if error.rdkafka_error_code() == Some(RDKafkaErrorCode::MessageTimedOut)
                    && self.topic_missing(&topic).await =>
            {
                Err(self.spent(missing_topic(&topic, &error)))
            }
            Ok(Ok(Err((error, _message)))) => Err(self.failed(&topic, &error)),
            Ok(Err(_canceled)) => Err(SendError::retry(format!(
                "the Kafka producer stopped before `{topic}` acknowledged the message"
            ))),
            Err(_) => Err(SendError::retry(format!(
                "no acknowledgement from Kafka for `{topic}` within {} s",
                self.timeout.as_secs()
            ))),
        }
    }

    /// Whether the brokers answer that `topic` does not exist: a message
    /// to it waits for the topic until it times out.
    async fn topic_missing(&self, topic: &str) -> bool {
        let Some(producer) = self.producer.clone() else {
            return false;
        };
        let topic = topic.to_string();
        tokio::task::spawn_blocking(move || {
            let metadata = producer
                .client()
                .fetch_metadata(Some(&topic), Duration::from_secs(2))
                .ok()?;
            let error = metadata
                .topics()
                .iter()
                .find(|t| t.name() == topic)?
                .error()?;
            Some(matches!(
                RDKafkaErrorCode::from(error),
                RDKafkaErrorCode::UnknownTopicOrPartition | RDKafkaErrorCode::UnknownTopic
            ))
        })
        .await
        .ok()
        .flatten()
        .unwrap_or(false)
    }

    /// Whether the producer must be made again before the next attempt:
    /// its credentials were refused (the password file may have changed),
    /// it got no answer in time, the topic was missing, or it hit an error
    /// it cannot go on from (the idempotent producer's fatal errors).
    pub fn must_restart(&self) -> bool {
        self.spent.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Notes that the producer is spent; the reason says so.
    fn spent(&self, reason: String) -> SendError {
        self.spent.store(true, std::sync::atomic::Ordering::Relaxed);
        SendError::retry(format!(
            "{reason}; a new producer is made for the next attempt"
        ))
    }

    fn headers(&self, delivery: &Delivery) -> OwnedHeaders {
        let mut headers = OwnedHeaders::new_with_capacity(11 + delivery.attributes.len());
        for (name, value) in [
            ("GRW-Delivery-Id", delivery.id.as_str()),
            ("GRW-Subscription", self.subscription.as_str()),
            ("GRW-Event-Type", delivery.event_type.as_str()),
            ("GRW-Group", delivery.gvk.group_or_core()),
            ("GRW-Version", delivery.gvk.version.as_str()),
            ("GRW-Kind", delivery.gvk.kind.as_str()),
            ("GRW-Namespace", delivery.namespace.as_str()),
            ("GRW-Name", delivery.name.as_str()),
            // Every body is JSON; in CloudEvents' binary mode this is also
            // the event's `datacontenttype`.
            ("content-type", "application/json"),
        ] {
            headers = headers.insert(Header {
                key: name,
                value: Some(value),
            });
        }
        if let Some(base) = &self.console {
            let link = console_link(base, &delivery.gvk, &delivery.namespace, &delivery.name);
            headers = headers.insert(Header {
                key: "GRW-Console-Link",
                value: Some(link.as_str()),
            });
        }
        if !delivery.attributes.is_empty() {
            headers = headers.insert(Header {
                key: "ce_specversion",
                value: Some("1.0"),
            });
            for (name, value) in &delivery.attributes {
                headers = headers.insert(Header {
                    key: &format!("ce_{name}"),
                    value: Some(value.as_str()),
                });
            }
        }
        headers
    }

    /// The error of a failed produce; a producer that cannot go on from it
    /// is marked spent ([`KafkaSink::must_restart`]).
    fn failed(&self, topic: &str, error: &KafkaError) -> SendError {
        match self.classify(topic, error) {
            Failure::Reject(rejection) => rejection.into(),
            Failure::Restart(reason) => self.spent(reason),
        }
    }

    /// Sorts a failed produce into reject or restart, with the broker's
    /// reason. It only reads: [`KafkaSink::failed`] acts on the answer.
    fn classify(&self, topic: &str, error: &KafkaError) -> Failure {
        let reject = |what: String| {
            Failure::Reject(Rejection::Kafka {
                what,
                source: error.clone(),
            })
        };
        match error.rdkafka_error_code() {
            Some(RDKafkaErrorCode::MessageSizeTooLarge | RDKafkaErrorCode::InvalidMessageSize) => {
                reject(format!("the message to `{topic}` is too large"))
            }
            Some(RDKafkaErrorCode::TopicAuthorizationFailed) => reject(format!(
                "not authorized to write to topic `{topic}`; allow GRW's principal to WRITE \
                 it, then replay the dead letters"
            )),
            Some(RDKafkaErrorCode::ClusterAuthorizationFailed) => reject(format!(
                "not authorized by the Kafka cluster to produce to `{topic}` (the idempotent \
                 producer needs IDEMPOTENT_WRITE); allow it, then replay the dead letters"
            )),
            Some(
                RDKafkaErrorCode::InvalidRecord
                | RDKafkaErrorCode::PolicyViolation
                | RDKafkaErrorCode::InvalidTopic,
            ) => reject(format!("the broker refused the message to `{topic}`")),
            Some(RDKafkaErrorCode::UnknownTopicOrPartition | RDKafkaErrorCode::UnknownTopic) => {
                Failure::Restart(missing_topic(topic, error))
            }
            Some(
                RDKafkaErrorCode::Authentication
                | RDKafkaErrorCode::SaslAuthenticationFailed
                | RDKafkaErrorCode::Fatal,
            ) => Failure::Restart(format!(
                "producing to `{topic}` failed: {error}{}",
                self.broker_said()
            )),
            // No answer in time: the next attempt starts with new
            // connections and a new idempotence session, so that neither a
            // connection that hangs nor a broker that came back without
            // this producer's state keeps the queue waiting.
            Some(RDKafkaErrorCode::MessageTimedOut) => Failure::Restart(format!(
                "no acknowledgement from Kafka for `{topic}` within {} s{}",
                self.timeout.as_secs(),
                self.broker_said()
            )),
            // An answer GRW has no rule for: the next attempt starts
            // afresh, so that no state of this producer (the idempotent
            // producer's sequence numbers) keeps it failing.
            _ => Failure::Restart(format!(
                "producing to `{topic}` failed: {error}{}",
                self.broker_said()
            )),
        }
    }

    /// ` (<what librdkafka reported>)`, or nothing: why the credentials
    /// were refused, else the last error.
    fn broker_said(&self) -> String {
        let reported = self.reported.lock();
        match (&reported.refused, &reported.last) {
            (Some(refused), _) => format!(" (the brokers refused the credentials: {refused})"),
            (None, Some(last)) => format!(" (last connection error: {last})"),
            (None, None) => String::new(),
        }
    }
}

impl Drop for KafkaSink {
    fn drop(&mut self) {
        // librdkafka's teardown joins its threads, which can take a while
        // with brokers down: not on the thread of an async task.
        if let Some(producer) = self.producer.take() {
            std::thread::spawn(move || drop(producer));
        }
    }
}

/// What a failed produce calls for.
#[derive(Debug)]
enum Failure {
    /// A dead letter: the message will never be taken as it is.
    Reject(Rejection),
    /// A new producer before the next attempt; why.
    Restart(String),
}

/// Why a produce to `topic` failed when the topic does not exist; the next
/// producer looks it up afresh (this one would keep it unknown for
/// minutes).
fn missing_topic(topic: &str, error: &KafkaError) -> String {
    format!(
        "topic `{topic}` does not exist on the Kafka cluster; GRW does not create topics ({error})"
    )
}

/// The uid in a delivery id (`uid/resourceVersion/TYPE`).
fn uid(id: &str) -> &str {
    id.split('/').next().unwrap_or(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gvk::Gvk;

    #[test]
    fn an_error_reported_twice_at_once_is_logged_once() {
        let mut reported = Reported::default();
        let line = "[thrd:127.0.0.1:9092/bootstrap]: 127.0.0.1:9092/bootstrap: Connect to \
                    ipv4#127.0.0.1:9092 failed: Connection refused (after 0ms in state CONNECT)";
        let reason = without_thread(line);
        assert!(reason.starts_with("127.0.0.1:9092/bootstrap: Connect to"));
        assert!(reported.first_time(reason), "the log line");
        assert!(!reported.first_time(reason), "the error callback");
        assert!(!reported.first_time(reason), "the error callback again");
        assert!(reported.first_time("1/1 brokers are down"));
        assert!(reported.first_time(reason), "another error came between");
        assert_eq!(without_thread("no thread"), "no thread");
    }

    fn delivery(gvk: Gvk, namespace: &str, name: &str) -> Delivery {
        Delivery {
            seq: 1,
            id: "0b5f6c1e-3d2a-4e8f-9a7b-1c2d3e4f5a6b/42/MODIFIED".to_string(),
            event_type: "MODIFIED".to_string(),
            gvk,
            namespace: namespace.to_string(),
            name: name.to_string(),
            enqueued_ms: 0,
            payload: b"{}".to_vec(),
            attributes: Vec::new(),
        }
    }

    fn sink(extra: serde_json::Value) -> KafkaSink {
        let mut config = serde_json::json!({
            "bootstrapServers": "127.0.0.1:9",
            "topic": "k8s.{group}.{kind}",
        });
        for (k, v) in extra.as_object().into_iter().flatten() {
            config[k] = v.clone();
        }
        let config: KafkaSinkConfig = serde_json::from_value(config).unwrap();
        KafkaSink::new(&config, "audit").unwrap()
    }

    #[tokio::test]
    async fn keys_and_topics() {
        let pod = delivery(Gvk::new("", "v1", "Pod"), "shop", "web-1");
        let node = delivery(Gvk::new("", "v1", "Node"), "", "n1");
        let by_uid = sink(serde_json::json!({}));
        assert_eq!(
            by_uid.key(&pod).as_deref(),
            Some("0b5f6c1e-3d2a-4e8f-9a7b-1c2d3e4f5a6b")
        );
        assert_eq!(by_uid.topic(&pod).as_deref(), Some("k8s.core.Pod"));
        let by_name = sink(serde_json::json!({"key": "name"}));
        assert_eq!(by_name.key(&pod).as_deref(), Some("shop/web-1"));
        assert_eq!(by_name.key(&node).as_deref(), Some("n1"));
        assert_eq!(sink(serde_json::json!({"key": "none"})).key(&pod), None);
    }

    #[tokio::test]
    async fn an_unreadable_password_file_is_named() {
        let config: KafkaSinkConfig = serde_json::from_value(serde_json::json!({
            "bootstrapServers": "127.0.0.1:9",
            "topic": "t",
            "sasl": {"mechanism": "PLAIN", "username": "u", "passwordFile": "/nonexistent/password"},
        }))
        .unwrap();
        let error = KafkaSink::new(&config, "audit").err().unwrap();
        assert!(
            error
                .to_string()
                .starts_with("`sasl.passwordFile`: cannot read `/nonexistent/password`: "),
            "{error}"
        );
    }

    #[tokio::test]
    async fn a_message_above_the_limit_is_refused_before_it_leaves() {
        let sink = sink(serde_json::json!({"maxMessageBytes": 1000}));
        let mut big = delivery(Gvk::new("", "v1", "ConfigMap"), "shop", "big");
        big.payload = vec![b'x'; 5000];
        match sink.send(&big).await {
            Err(SendError::Reject(reason)) => assert!(
                reason
                    .to_string()
                    .starts_with("the message to `k8s.core.ConfigMap` is too large"),
                "{reason}"
            ),
            other => panic!("expected a rejection, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn a_failure_is_sorted_without_touching_the_producer() {
        let sink = sink(serde_json::json!({}));
        let produced = KafkaError::MessageProduction;
        for (code, rejected) in [
            (RDKafkaErrorCode::MessageSizeTooLarge, true),
            (RDKafkaErrorCode::TopicAuthorizationFailed, true),
            (RDKafkaErrorCode::ClusterAuthorizationFailed, true),
            (RDKafkaErrorCode::InvalidRecord, true),
            (RDKafkaErrorCode::UnknownTopicOrPartition, false),
            (RDKafkaErrorCode::SaslAuthenticationFailed, false),
            (RDKafkaErrorCode::MessageTimedOut, false),
            (RDKafkaErrorCode::BrokerNotAvailable, false),
        ] {
            let failure = sink.classify("t", &produced(code));
            assert_eq!(
                matches!(failure, Failure::Reject(_)),
                rejected,
                "{code:?}: {failure:?}"
            );
            assert!(!sink.must_restart(), "{code:?}: sorting spent the producer");
        }
        // Acting on the answer spends the producer when it must restart.
        let too_large = sink.failed("t", &produced(RDKafkaErrorCode::MessageSizeTooLarge));
        assert!(matches!(too_large, SendError::Reject(_)), "{too_large:?}");
        assert!(!sink.must_restart());
        let timed_out = sink.failed("t", &produced(RDKafkaErrorCode::MessageTimedOut));
        assert!(
            timed_out
                .to_string()
                .ends_with("; a new producer is made for the next attempt"),
            "{timed_out}"
        );
        assert!(sink.must_restart());
    }
}
