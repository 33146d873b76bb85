//! NATS JetStream sink: publishes each delivery to a subject rendered from a
//! template and counts it as delivered once the stream acknowledges it.
//!
//! **Subjects.** The template is split on `.` into tokens. `{group}` (`core`
//! for the core group), `{version}`, `{kind}`, `{namespace}` (`_` for
//! cluster-scoped objects), `{name}` and `{type}` (`ADDED`, `MODIFIED`,
//! `DELETED`) are replaced by the delivery's values. A NATS subject token
//! cannot hold `.`, whitespace, `*` or `>`, so each such character of a value
//! becomes `_` (`networking.istio.io` → `networking_istio_io`) and an empty
//! value becomes `_`. Two values can thus share a subject; the headers carry
//! them unchanged.
//!
//! **Message.** The body is the delivery's payload; the headers are
//! `Nats-Msg-Id` (the delivery id), `GRW-Event-Type`, `GRW-Group` (`core` for
//! the core group), `GRW-Version`, `GRW-Kind`, `GRW-Namespace` (empty for
//! cluster-scoped objects), `GRW-Name`, `Content-Type: application/json` and,
//! with `consoleUrl`, `GRW-Console-Link` (the object's page in the web
//! console).
//!
//! **Stream.** On the first send, and again after the server answered that no
//! stream takes the subject, the stream is created if missing: file storage,
//! server defaults otherwise, and as subjects the template with each token
//! holding a placeholder replaced by `*` (`grw.*.*.*.*` for the default). An
//! existing stream is never modified, and a stream refused because another
//! one already holds these subjects is not an error: messages then go to that
//! one. When no stream captures a delivery's subject, the send is rejected
//! with a message saying so.
//!
//! **At least once.** The delivery id goes in `Nats-Msg-Id`, so JetStream
//! stores a retried delivery once if it comes within the stream's duplicate
//! window (2 minutes unless the stream says otherwise).
//!
//! **Connection.** The client connects and reconnects in the background,
//! forever. While it is not connected (including just after
//! [`NatsSink::connect`], until the first connection is up), `send` answers
//! [`SendError::Retry`] at once; otherwise a send takes at most the ack
//! timeout.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::connection::State;
use async_nats::jetstream::context::{CreateStreamErrorKind, PublishError, PublishErrorKind};
use async_nats::jetstream::{self, ErrorCode, stream};
use bytes::Bytes;

use super::payload::console_link;
use super::sink::Rejection;
use super::{Delivery, SendError};
use crate::config::nats::{Field, NatsConfigError, NatsSinkConfig, SubjectTemplate};

/// The value of a subject (or Kafka topic) placeholder for a delivery.
pub(super) fn field(delivery: &Delivery, field: Field) -> &str {
    match field {
        Field::Group => delivery.gvk.group_or_core(),
        Field::Version => &delivery.gvk.version,
        Field::Kind => &delivery.gvk.kind,
        Field::Namespace => &delivery.namespace,
        Field::Name => &delivery.name,
        Field::Type => &delivery.event_type,
    }
}

/// Why a NATS sink cannot be set up (a server that is down is not a
/// reason: the client connects in the background).
#[derive(Debug, thiserror::Error)]
pub enum NatsConnectError {
    /// The settings are not right.
    #[error(transparent)]
    Config(#[from] NatsConfigError),
    /// The client refused the servers.
    #[error("`url`: cannot use `{url}`")]
    Connect {
        /// `url` as configured.
        url: String,
        /// The client's error.
        #[source]
        source: async_nats::ConnectError,
    },
}

/// Publishes deliveries to a JetStream stream.
#[derive(Debug)]
pub struct NatsSink {
    template: SubjectTemplate,
    stream: String,
    /// The configured `url`, for messages.
    url: String,
    ack_timeout: Duration,
    client: async_nats::Client,
    jetstream: jetstream::Context,
    /// Set once the stream was found or created; a "no stream" answer
    /// checks again regardless.
    stream_ready: AtomicBool,
    /// `consoleUrl`, without a trailing `/`.
    console: Option<Arc<str>>,
}

impl NatsSink {
    /// Validates the config and starts connecting in the background, retried
    /// forever: a server that is down is not an error, only an invalid config
    /// is.
    pub async fn connect(config: NatsSinkConfig) -> Result<NatsSink, NatsConnectError> {
        let (servers, template) = config.parse()?;
        let ack_timeout = Duration::from_secs(config.ack_timeout_second);
        let client = async_nats::ConnectOptions::new()
            .name("grw")
            .retry_on_initial_connect()
            .request_timeout(Some(ack_timeout))
            .connect(servers.as_slice())
            .await
            .map_err(|source| NatsConnectError::Connect {
                url: config.url.clone(),
                source,
            })?;
        let jetstream = jetstream::ContextBuilder::new()
            .timeout(ack_timeout)
            .build(client.clone());
        Ok(NatsSink {
            template,
            stream: config.stream,
            url: config.url,
            ack_timeout,
            client,
            jetstream,
            stream_ready: AtomicBool::new(false),
            console: None,
        })
    }

    /// Sends the link to each changed object's page in the web console at
    /// `base` (`consoleUrl`, without a trailing `/`) in `GRW-Console-Link`.
    pub fn with_console(mut self, base: Option<Arc<str>>) -> NatsSink {
        self.console = base;
        self
    }

    /// The subject a delivery goes to.
    pub fn subject(&self, delivery: &Delivery) -> String {
        self.template.render(|f| field(delivery, f))
    }

    /// Publishes one delivery to JetStream and waits for the stream's
    /// acknowledgement, at most the ack timeout in all.
    pub async fn send(&self, delivery: &Delivery) -> Result<(), SendError> {
        let subject = self.subject(delivery);
        tokio::time::timeout(self.ack_timeout, self.deliver(&subject, delivery))
            .await
            .unwrap_or_else(|_| Err(self.no_ack(&subject)))
    }

    fn no_ack(&self, subject: &str) -> SendError {
        SendError::retry(format!(
            "no acknowledgement from NATS JetStream for `{subject}` within {} s",
            self.ack_timeout.as_secs()
        ))
    }

    async fn deliver(&self, subject: &str, delivery: &Delivery) -> Result<(), SendError> {
        // Publishing while disconnected would only queue the message in the
        // client; answer now and let the caller retry.
        if self.client.connection_state() != State::Connected {
            return Err(SendError::retry(format!(
                "not connected to NATS at `{}`",
                self.url
            )));
        }
        if !self.stream_ready.load(Ordering::Acquire) {
            self.ensure_stream().await?;
        }
        let first = self.publish(subject, delivery).await;
        if !matches!(&first, Err(e) if e.kind() == PublishErrorKind::StreamNotFound) {
            return first.map_err(|e| self.classify(subject, e));
        }
        // No stream took the subject: the stream is gone (a server that lost
        // its storage) or does not capture the subject.
        let stream_subjects = self.ensure_stream().await?;
        match self.publish(subject, delivery).await {
            Err(e) if e.kind() == PublishErrorKind::StreamNotFound => {
                let streams = if stream_subjects.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (stream `{}` has subjects `{}`)",
                        self.stream,
                        stream_subjects.join("`, `")
                    )
                };
                Err(Rejection::NoStream {
                    subject: subject.to_string(),
                    streams,
                }
                .into())
            }
            second => second.map_err(|e| self.classify(subject, e)),
        }
    }

    async fn publish(&self, subject: &str, delivery: &Delivery) -> Result<(), PublishError> {
        let ack = self
            .jetstream
            .publish_with_headers(
                subject.to_string(),
                headers(delivery, self.console.as_deref()),
                Bytes::from(delivery.payload.clone()),
            )
            .await?
            .await?;
        if ack.duplicate {
            tracing::debug!(id = %delivery.id, subject, "NATS dropped a duplicate delivery");
        }
        Ok(())
    }

    /// Finds or creates the stream; returns its subjects (none when another
    /// stream already holds ours and this one could not be created).
    async fn ensure_stream(&self) -> Result<Vec<String>, SendError> {
        let config = stream::Config {
            name: self.stream.clone(),
            subjects: vec![self.template.wildcard()],
            ..Default::default()
        };
        let subjects = match self.jetstream.get_or_create_stream(config).await {
            Ok(stream) => stream.cached_info().config.subjects.clone(),
            Err(e) => match e.kind() {
                // Publishing then shows whether that other stream captures
                // the subject of this delivery.
                CreateStreamErrorKind::JetStream(api)
                    if api.error_code() == ErrorCode::STREAM_SUBJECT_OVERLAP =>
                {
                    Vec::new()
                }
                CreateStreamErrorKind::JetStreamUnavailable => {
                    return Err(SendError::retry(format!(
                        "NATS at `{}` answers no JetStream requests; is JetStream enabled?",
                        self.url
                    )));
                }
                _ => {
                    return Err(SendError::retry(format!(
                        "cannot find or create JetStream stream `{}`: {e}",
                        self.stream
                    )));
                }
            },
        };
        self.stream_ready.store(true, Ordering::Release);
        Ok(subjects)
    }

    /// Sorts a failed publish into retry or reject.
    fn classify(&self, subject: &str, error: PublishError) -> SendError {
        let api_code = std::error::Error::source(&error)
            .and_then(|source| source.downcast_ref::<jetstream::Error>())
            .map(jetstream::Error::error_code);
        if error.kind() == PublishErrorKind::MaxPayloadExceeded
            || api_code == Some(ErrorCode::STREAM_MESSAGE_EXCEEDS_MAXIMUM)
        {
            return Rejection::NatsTooLarge {
                subject: subject.to_string(),
                source: error,
            }
            .into();
        }
        match error.kind() {
            PublishErrorKind::TimedOut => self.no_ack(subject),
            PublishErrorKind::BrokenPipe => SendError::retry(format!(
                "connection to NATS lost before the acknowledgement for `{subject}`"
            )),
            _ => SendError::retry(format!(
                "NATS JetStream publish to `{subject}` failed: {error}"
            )),
        }
    }
}

fn headers(delivery: &Delivery, console: Option<&str>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(async_nats::header::NATS_MESSAGE_ID, delivery.id.as_str());
    headers.insert("GRW-Event-Type", delivery.event_type.as_str());
    headers.insert("GRW-Group", delivery.gvk.group_or_core());
    headers.insert("GRW-Version", delivery.gvk.version.as_str());
    headers.insert("GRW-Kind", delivery.gvk.kind.as_str());
    headers.insert("GRW-Namespace", delivery.namespace.as_str());
    headers.insert("GRW-Name", delivery.name.as_str());
    headers.insert("Content-Type", "application/json");
    if let Some(base) = console {
        let link = console_link(base, &delivery.gvk, &delivery.namespace, &delivery.name);
        headers.insert("GRW-Console-Link", link.as_str());
    }
    headers
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gvk::Gvk;

    fn delivery(gvk: Gvk, namespace: &str, name: &str) -> Delivery {
        Delivery {
            seq: 1,
            id: "uid/1/ADDED".to_string(),
            event_type: "ADDED".to_string(),
            gvk,
            namespace: namespace.to_string(),
            name: name.to_string(),
            enqueued_ms: 0,
            payload: b"{}".to_vec(),
            attributes: Vec::new(),
        }
    }

    #[test]
    fn subjects_and_stream_wildcards() {
        let istio = Gvk::new("networking.istio.io", "v1beta1", "VirtualService");
        let pod = Gvk::new("", "v1", "Pod");
        let node = Gvk::new("", "v1", "Node");
        let default = "grw.{group}.{version}.{kind}.{namespace}";
        for (template, gvk, namespace, name, subject, wildcard) in [
            (
                default,
                &pod,
                "shop",
                "web-1",
                "grw.core.v1.Pod.shop",
                "grw.*.*.*.*",
            ),
            (
                default,
                &node,
                "",
                "n1",
                "grw.core.v1.Node._",
                "grw.*.*.*.*",
            ),
            (
                default,
                &istio,
                "mesh",
                "vs",
                "grw.networking_istio_io.v1beta1.VirtualService.mesh",
                "grw.*.*.*.*",
            ),
            (
                "k8s.{kind}-{type}.{name}",
                &pod,
                "shop",
                "a b*c>d.e",
                "k8s.Pod-ADDED.a_b_c_d_e",
                "k8s.*.*",
            ),
            (
                "fixed.subject",
                &pod,
                "shop",
                "web",
                "fixed.subject",
                "fixed.subject",
            ),
            ("ns-{namespace}", &node, "", "n1", "ns-_", "*"),
        ] {
            let template = SubjectTemplate::parse(template).unwrap();
            let delivery = delivery(gvk.clone(), namespace, name);
            assert_eq!(template.render(|f| field(&delivery, f)), subject);
            assert_eq!(template.wildcard(), wildcard);
        }
    }
}
