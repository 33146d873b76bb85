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
//! cluster-scoped objects), `GRW-Name` and `Content-Type: application/json`.
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

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use async_nats::connection::State;
use async_nats::jetstream::context::{CreateStreamErrorKind, PublishError, PublishErrorKind};
use async_nats::jetstream::{self, ErrorCode, stream};
use async_nats::{HeaderMap, ServerAddr};
use bytes::Bytes;

use super::{Delivery, SendError};

/// `nats` sink settings of a subscription.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(
    rename_all = "camelCase",
    deny_unknown_fields,
    expecting = "an object with `url`"
)]
pub struct NatsSinkConfig {
    /// Server URL(s), e.g. `nats://127.0.0.1:4222` (comma-separated for
    /// several). `nats://` and `tls://` are accepted, or a bare `host:port`;
    /// the port defaults to 4222.
    pub url: String,
    /// Subject template; default `grw.{group}.{version}.{kind}.{namespace}`.
    /// See the module documentation for the placeholders.
    #[serde(default = "default_subject")]
    pub subject: String,
    /// JetStream stream; created if missing, with subjects = the template
    /// with every placeholder token replaced by `*`. Default `GRW`.
    #[serde(default = "default_stream")]
    pub stream: String,
    /// How long a send may take, acknowledgement included, in seconds
    /// (default 10).
    #[serde(default = "default_ack_timeout_second")]
    pub ack_timeout_second: u64,
}

fn default_subject() -> String {
    "grw.{group}.{version}.{kind}.{namespace}".to_string()
}

fn default_stream() -> String {
    "GRW".to_string()
}

fn default_ack_timeout_second() -> u64 {
    10
}

impl NatsSinkConfig {
    /// Checks every setting; the error names the key and what is wrong.
    pub fn validate(&self) -> Result<(), String> {
        self.parse().map(|_| ())
    }

    fn parse(&self) -> Result<(Vec<ServerAddr>, SubjectTemplate), String> {
        let servers = parse_servers(&self.url)?;
        let template = SubjectTemplate::parse(&self.subject)?;
        check_stream_name(&self.stream)?;
        if self.ack_timeout_second == 0 {
            return Err("`ackTimeoutSecond`: must be at least 1, got 0".to_string());
        }
        Ok((servers, template))
    }
}

fn parse_servers(urls: &str) -> Result<Vec<ServerAddr>, String> {
    if urls.trim().is_empty() {
        return Err("`url`: no server given; expected e.g. `nats://127.0.0.1:4222`".to_string());
    }
    urls.split(',')
        .map(str::trim)
        .map(|url| {
            if url.is_empty() {
                return Err(format!("`url`: empty entry in `{urls}`"));
            }
            if let Some((scheme, _)) = url.split_once("://")
                && !scheme.eq_ignore_ascii_case("nats")
                && !scheme.eq_ignore_ascii_case("tls")
            {
                return Err(format!(
                    "`url`: unsupported scheme `{scheme}` in `{url}`; \
                     use nats://host:port, tls://host:port or host:port"
                ));
            }
            url.parse::<ServerAddr>()
                .ok()
                .filter(|addr| !addr.host().is_empty())
                .ok_or_else(|| {
                    format!(
                        "`url`: `{url}` is not a server address; \
                         use nats://host:port, tls://host:port or host:port"
                    )
                })
        })
        .collect()
}

fn check_stream_name(name: &str) -> Result<(), String> {
    let bad = |c: char| matches!(c, '.' | '*' | '>' | '/' | '\\') || c.is_whitespace();
    if name.is_empty() || name.chars().any(|c| bad(c) || c.is_control()) {
        return Err(format!(
            "`stream`: `{name}` is not a valid stream name; it must not be empty \
             nor contain `.`, `*`, `>`, `/`, `\\` or whitespace"
        ));
    }
    Ok(())
}

/// A value a subject placeholder stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Field {
    Group,
    Version,
    Kind,
    Namespace,
    Name,
    Type,
}

impl Field {
    fn parse(name: &str) -> Option<Field> {
        Some(match name {
            "group" => Field::Group,
            "version" => Field::Version,
            "kind" => Field::Kind,
            "namespace" => Field::Namespace,
            "name" => Field::Name,
            "type" => Field::Type,
            _ => return None,
        })
    }

    fn value(self, delivery: &Delivery) -> &str {
        match self {
            Field::Group => delivery.gvk.group_or_core(),
            Field::Version => &delivery.gvk.version,
            Field::Kind => &delivery.gvk.kind,
            Field::Namespace => &delivery.namespace,
            Field::Name => &delivery.name,
            Field::Type => &delivery.event_type,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Value(Field),
}

/// A subject template parsed into tokens (the parts between dots), each a
/// sequence of literal text and placeholders.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SubjectTemplate {
    tokens: Vec<Vec<Piece>>,
}

impl SubjectTemplate {
    fn parse(template: &str) -> Result<SubjectTemplate, String> {
        let tokens = template
            .split('.')
            .map(|token| parse_token(template, token))
            .collect::<Result<_, _>>()?;
        Ok(SubjectTemplate { tokens })
    }

    fn render(&self, delivery: &Delivery) -> String {
        self.join(|token| {
            token
                .iter()
                .map(|piece| match piece {
                    Piece::Text(text) => text.clone(),
                    Piece::Value(field) => token_value(field.value(delivery)),
                })
                .collect()
        })
    }

    /// The subject filter of a stream created for this template.
    fn wildcard(&self) -> String {
        // A token without placeholders was parsed into a single text piece.
        self.join(|token| match token {
            [Piece::Text(text)] => text.clone(),
            _ => "*".to_string(),
        })
    }

    fn join(&self, mut token: impl FnMut(&[Piece]) -> String) -> String {
        self.tokens
            .iter()
            .map(|t| token(t))
            .collect::<Vec<_>>()
            .join(".")
    }
}

fn parse_token(template: &str, token: &str) -> Result<Vec<Piece>, String> {
    if token.is_empty() {
        return Err(format!(
            "`subject`: `{template}` has an empty token; \
             tokens are separated by single dots, with none at either end"
        ));
    }
    let mut pieces = Vec::new();
    let mut rest = token;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('{') {
            let (name, tail) = after
                .split_once('}')
                .ok_or_else(|| format!("`subject`: unclosed `{{` in `{template}`"))?;
            let field = Field::parse(name).ok_or_else(|| {
                format!(
                    "`subject`: unknown placeholder `{{{name}}}` in `{template}`; use \
                     {{group}}, {{version}}, {{kind}}, {{namespace}}, {{name}} or {{type}}"
                )
            })?;
            pieces.push(Piece::Value(field));
            rest = tail;
        } else {
            let end = rest.find('{').unwrap_or(rest.len());
            let (text, tail) = rest.split_at(end);
            if text.contains('}') {
                return Err(format!("`subject`: unmatched `}}` in `{template}`"));
            }
            if let Some(bad) = text
                .chars()
                .find(|&c| c == '*' || c == '>' || c.is_whitespace())
            {
                return Err(format!(
                    "`subject`: `{template}` contains {bad:?}; a subject to publish to \
                     cannot hold `*`, `>` or whitespace"
                ));
            }
            pieces.push(Piece::Text(text.to_string()));
            rest = tail;
        }
    }
    Ok(pieces)
}

/// A value made fit for a subject token (see the module documentation).
fn token_value(value: &str) -> String {
    if value.is_empty() {
        return "_".to_string();
    }
    value
        .chars()
        .map(|c| {
            if matches!(c, '.' | '*' | '>') || c.is_whitespace() {
                '_'
            } else {
                c
            }
        })
        .collect()
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
}

impl NatsSink {
    /// Validates the config and starts connecting in the background, retried
    /// forever: a server that is down is not an error, only an invalid config
    /// is.
    pub async fn connect(config: NatsSinkConfig) -> Result<NatsSink, String> {
        let (servers, template) = config.parse()?;
        let ack_timeout = Duration::from_secs(config.ack_timeout_second);
        let client = async_nats::ConnectOptions::new()
            .name("grw")
            .retry_on_initial_connect()
            .request_timeout(Some(ack_timeout))
            .connect(servers.as_slice())
            .await
            .map_err(|e| format!("`url`: cannot use `{}`: {e}", config.url))?;
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
        })
    }

    /// The subject a delivery goes to.
    pub fn subject(&self, delivery: &Delivery) -> String {
        self.template.render(delivery)
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
                let detail = if stream_subjects.is_empty() {
                    String::new()
                } else {
                    format!(
                        " (stream `{}` has subjects `{}`)",
                        self.stream,
                        stream_subjects.join("`, `")
                    )
                };
                Err(SendError::Reject(format!(
                    "no JetStream stream captures subject `{subject}`{detail}; \
                     add the subject to a stream or change the sink's `subject`"
                )))
            }
            second => second.map_err(|e| self.classify(subject, e)),
        }
    }

    async fn publish(&self, subject: &str, delivery: &Delivery) -> Result<(), PublishError> {
        let ack = self
            .jetstream
            .publish_with_headers(
                subject.to_string(),
                headers(delivery),
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
            return SendError::Reject(format!("message to `{subject}` is too large: {error}"));
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

fn headers(delivery: &Delivery) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(async_nats::header::NATS_MESSAGE_ID, delivery.id.as_str());
    headers.insert("GRW-Event-Type", delivery.event_type.as_str());
    headers.insert("GRW-Group", delivery.gvk.group_or_core());
    headers.insert("GRW-Version", delivery.gvk.version.as_str());
    headers.insert("GRW-Kind", delivery.gvk.kind.as_str());
    headers.insert("GRW-Namespace", delivery.namespace.as_str());
    headers.insert("GRW-Name", delivery.name.as_str());
    headers.insert("Content-Type", "application/json");
    headers
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gvk::Gvk;

    fn config(url: &str, subject: &str, stream: &str) -> NatsSinkConfig {
        NatsSinkConfig {
            url: url.to_string(),
            subject: subject.to_string(),
            stream: stream.to_string(),
            ack_timeout_second: 10,
        }
    }

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
        }
    }

    #[test]
    fn defaults_fill_missing_keys_and_unknown_keys_are_refused() {
        let parsed: NatsSinkConfig =
            serde_json::from_str(r#"{"url": "nats://127.0.0.1:4222"}"#).unwrap();
        assert_eq!(
            parsed,
            config(
                "nats://127.0.0.1:4222",
                "grw.{group}.{version}.{kind}.{namespace}",
                "GRW"
            )
        );
        assert_eq!(parsed.validate(), Ok(()));
        let unknown = serde_json::from_str::<NatsSinkConfig>(r#"{"url": "x", "topic": "y"}"#);
        assert!(
            unknown
                .unwrap_err()
                .to_string()
                .contains("unknown field `topic`")
        );
    }

    #[test]
    fn valid_configs() {
        for (url, subject, stream) in [
            ("nats://127.0.0.1:4222", "grw.{group}.{kind}", "GRW"),
            ("tls://nats.example.com:4443", "k8s", "events-1"),
            (
                "127.0.0.1:4222, nats://10.0.0.2:4222",
                "a.{kind}-{name}.{type}",
                "S_2",
            ),
            ("NATS://host", "x.{namespace}.{name}", "GRW"),
        ] {
            assert_eq!(
                config(url, subject, stream).validate(),
                Ok(()),
                "{url} {subject}"
            );
        }
    }

    #[test]
    fn invalid_configs_say_what_is_wrong() {
        let default = "grw.{kind}";
        for (url, subject, stream, message) in [
            (
                "http://127.0.0.1:4222",
                default,
                "GRW",
                "`url`: unsupported scheme `http` in `http://127.0.0.1:4222`; \
                 use nats://host:port, tls://host:port or host:port",
            ),
            (
                "ws://h:80",
                default,
                "GRW",
                "`url`: unsupported scheme `ws` in `ws://h:80`; \
                 use nats://host:port, tls://host:port or host:port",
            ),
            (
                " ",
                default,
                "GRW",
                "`url`: no server given; expected e.g. `nats://127.0.0.1:4222`",
            ),
            (
                "nats://a:4222,,nats://b:4222",
                default,
                "GRW",
                "`url`: empty entry in `nats://a:4222,,nats://b:4222`",
            ),
            (
                "nats://h:99999",
                default,
                "GRW",
                "`url`: `nats://h:99999` is not a server address; \
                 use nats://host:port, tls://host:port or host:port",
            ),
            (
                "nats://127.0.0.1:4222",
                "grw.{cluster}",
                "GRW",
                "`subject`: unknown placeholder `{cluster}` in `grw.{cluster}`; \
                 use {group}, {version}, {kind}, {namespace}, {name} or {type}",
            ),
            (
                "nats://127.0.0.1:4222",
                "grw..{kind}",
                "GRW",
                "`subject`: `grw..{kind}` has an empty token; \
                 tokens are separated by single dots, with none at either end",
            ),
            (
                "nats://127.0.0.1:4222",
                "grw.{kind}.",
                "GRW",
                "`subject`: `grw.{kind}.` has an empty token; \
                 tokens are separated by single dots, with none at either end",
            ),
            (
                "nats://127.0.0.1:4222",
                "grw.{kind",
                "GRW",
                "`subject`: unclosed `{` in `grw.{kind`",
            ),
            (
                "nats://127.0.0.1:4222",
                "grw.kind}",
                "GRW",
                "`subject`: unmatched `}` in `grw.kind}`",
            ),
            (
                "nats://127.0.0.1:4222",
                "grw.>",
                "GRW",
                "`subject`: `grw.>` contains '>'; a subject to publish to \
                 cannot hold `*`, `>` or whitespace",
            ),
            (
                "nats://127.0.0.1:4222",
                "grw.my kind",
                "GRW",
                "`subject`: `grw.my kind` contains ' '; a subject to publish to \
                 cannot hold `*`, `>` or whitespace",
            ),
            (
                "nats://127.0.0.1:4222",
                default,
                "grw.events",
                "`stream`: `grw.events` is not a valid stream name; it must not be empty \
                 nor contain `.`, `*`, `>`, `/`, `\\` or whitespace",
            ),
            (
                "nats://127.0.0.1:4222",
                default,
                "",
                "`stream`: `` is not a valid stream name; it must not be empty \
                 nor contain `.`, `*`, `>`, `/`, `\\` or whitespace",
            ),
        ] {
            assert_eq!(
                config(url, subject, stream).validate(),
                Err(message.to_string())
            );
        }
        let mut zero = config("nats://127.0.0.1:4222", default, "GRW");
        zero.ack_timeout_second = 0;
        assert_eq!(
            zero.validate(),
            Err("`ackTimeoutSecond`: must be at least 1, got 0".to_string())
        );
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
            assert_eq!(
                template.render(&delivery(gvk.clone(), namespace, name)),
                subject
            );
            assert_eq!(template.wildcard(), wildcard);
        }
    }
}
