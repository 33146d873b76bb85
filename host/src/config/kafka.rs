//! The `kafka` sink of a subscription as configured ([`KafkaSinkConfig`]),
//! checked when the configuration is read: the bootstrap servers, the topic
//! template ([`TopicTemplate`]), the key, the body, and the producer's
//! settings (compression, acks, idempotence, SASL, TLS, timeouts, sizes).
//! `notify::kafka` produces with them.
//!
//! Secrets are never written in the config: SASL's password and TLS's key
//! are read from files (a mounted Secret), so that what
//! `/api/v1/subscriptions` shows holds no secret.

use std::path::PathBuf;

use serde::{Deserialize, Deserializer, Serialize};

use super::PayloadFormat;
use super::de;
use super::nats::Field;

/// The longest topic name Kafka accepts.
pub const MAX_TOPIC_CHARS: usize = 249;

/// `kafka` sink settings of a subscription.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    deny_unknown_fields,
    expecting = "an object with `bootstrapServers` and `topic`"
)]
pub struct KafkaSinkConfig {
    /// Brokers to bootstrap from, `host:port`, comma-separated.
    pub bootstrap_servers: String,
    /// Topic, or a template of `{group}` (`core` for the core group),
    /// `{version}`, `{kind}`, `{namespace}` (`_` for cluster-scoped
    /// objects), `{name}` and `{type}`. Topics are not created: Kafka
    /// clusters in production create them on purpose, with their partitions
    /// and retention.
    pub topic: String,
    /// The message key: `uid` (the default: every change of one object goes
    /// to one partition, in order), `name` (`namespace/name`) or `none`.
    #[serde(default)]
    pub key: KafkaKey,
    /// `watch-event` (the default), `grw` or `cloudevents` (binary mode: the
    /// attributes in `ce_*` headers, the value is `{object, oldObject?}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<PayloadFormat>,
    /// `none` (the default), `gzip`, `snappy`, `lz4` or `zstd`.
    #[serde(default)]
    pub compression: Compression,
    /// `all` (the default: every in-sync replica has the message) or
    /// `leader`.
    #[serde(default)]
    pub acks: Acks,
    /// The idempotent producer (default on): a message the producer retries
    /// is written once, in order. Needs `acks: all`.
    #[serde(default = "yes")]
    pub idempotence: bool,
    /// SASL authentication; without it, none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sasl: Option<KafkaSasl>,
    /// TLS to the brokers; without it, plain TCP. `{}` trusts the system's
    /// certificate authorities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tls: Option<KafkaTls>,
    /// How long the producer may try to get one message acknowledged,
    /// retries included, before the delivery is retried later (default 30).
    #[serde(default = "default_delivery_timeout")]
    pub delivery_timeout_seconds: u64,
    /// The largest message the producer sends, bytes (default 1,000,000,
    /// Kafka's default); a larger one goes to the dead letters. Keep it at
    /// most the topic's `max.message.bytes`.
    #[serde(default = "default_max_message_bytes")]
    pub max_message_bytes: u64,
}

fn yes() -> bool {
    true
}

fn default_delivery_timeout() -> u64 {
    30
}

fn default_max_message_bytes() -> u64 {
    1_000_000
}

/// What a message is keyed by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum KafkaKey {
    /// The object's uid.
    #[default]
    Uid,
    /// `namespace/name`, or `name` for cluster-scoped objects.
    Name,
    /// No key: the producer spreads messages over the partitions.
    None,
}

const KEYS: &[(&str, KafkaKey)] = &[
    ("uid", KafkaKey::Uid),
    ("name", KafkaKey::Name),
    ("none", KafkaKey::None),
];

impl<'de> Deserialize<'de> for KafkaKey {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        de::choose(deserializer, KEYS)
    }
}

/// Compression of message batches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// None.
    #[default]
    None,
    /// gzip.
    Gzip,
    /// Snappy.
    Snappy,
    /// LZ4.
    Lz4,
    /// Zstandard.
    Zstd,
}

const COMPRESSIONS: &[(&str, Compression)] = &[
    ("none", Compression::None),
    ("gzip", Compression::Gzip),
    ("snappy", Compression::Snappy),
    ("lz4", Compression::Lz4),
    ("zstd", Compression::Zstd),
];

impl<'de> Deserialize<'de> for Compression {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        de::choose(deserializer, COMPRESSIONS)
    }
}

impl Compression {
    fn property(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Snappy => "snappy",
            Compression::Lz4 => "lz4",
            Compression::Zstd => "zstd",
        }
    }
}

/// Which replicas must have a message before the broker acknowledges it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Acks {
    /// Every in-sync replica.
    #[default]
    All,
    /// The partition's leader only.
    Leader,
}

const ACKS: &[(&str, Acks)] = &[("all", Acks::All), ("leader", Acks::Leader)];

impl<'de> Deserialize<'de> for Acks {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        de::choose(deserializer, ACKS)
    }
}

/// `sasl` of a `kafka` sink.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    deny_unknown_fields,
    expecting = "an object with `mechanism`, `username` and `passwordFile`"
)]
pub struct KafkaSasl {
    /// `PLAIN`, `SCRAM-SHA-256` or `SCRAM-SHA-512`.
    pub mechanism: SaslMechanism,
    /// The user.
    pub username: String,
    /// A file holding the password (a trailing newline is not part of it),
    /// read each time the producer is made.
    pub password_file: PathBuf,
}

/// A SASL mechanism.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum SaslMechanism {
    /// `PLAIN`: the password as it is (use it with TLS).
    #[serde(rename = "PLAIN")]
    Plain,
    /// `SCRAM-SHA-256`.
    #[serde(rename = "SCRAM-SHA-256")]
    ScramSha256,
    /// `SCRAM-SHA-512`.
    #[serde(rename = "SCRAM-SHA-512")]
    ScramSha512,
}

const MECHANISMS: &[(&str, SaslMechanism)] = &[
    ("PLAIN", SaslMechanism::Plain),
    ("SCRAM-SHA-256", SaslMechanism::ScramSha256),
    ("SCRAM-SHA-512", SaslMechanism::ScramSha512),
];

impl<'de> Deserialize<'de> for SaslMechanism {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        de::choose(deserializer, MECHANISMS)
    }
}

impl SaslMechanism {
    fn property(self) -> &'static str {
        match self {
            SaslMechanism::Plain => "PLAIN",
            SaslMechanism::ScramSha256 => "SCRAM-SHA-256",
            SaslMechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }
}

/// `tls` of a `kafka` sink: PEM files.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    deny_unknown_fields,
    expecting = "an object with optional `caFile`, `certFile` and `keyFile`"
)]
pub struct KafkaTls {
    /// Certificate authorities to trust instead of the system's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_file: Option<PathBuf>,
    /// The client's certificate (with `keyFile`), for brokers that
    /// authenticate clients by certificate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cert_file: Option<PathBuf>,
    /// The client certificate's private key (with `certFile`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key_file: Option<PathBuf>,
}

/// A `kafka` sink setting that is not right; the message names the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KafkaConfigError {
    /// `bootstrapServers` names no broker.
    #[error(
        "`bootstrapServers`: no broker given; expected e.g. `kafka-0.kafka:9092,kafka-1.kafka:9092`"
    )]
    NoServer,
    /// An entry that is not `host:port`.
    #[error("`bootstrapServers`: `{0}` is not `host:port`")]
    NotAnAddress(String),
    /// `topic` is not a topic template.
    #[error("`topic`: {0}")]
    Topic(#[from] TopicError),
    /// Idempotence without `acks: all`.
    #[error(
        "`idempotence`: the idempotent producer needs `acks: all`; set `idempotence: false` to use `acks: leader`"
    )]
    IdempotenceNeedsAcksAll,
    /// An empty SASL user name.
    #[error("`sasl.username`: cannot be empty")]
    EmptyUser,
    /// A certificate without its key, or a key without its certificate.
    #[error("`tls`: `certFile` and `keyFile` go together; give both or neither")]
    CertWithoutKey,
    /// `deliveryTimeoutSeconds` is 0 or too large.
    #[error("`deliveryTimeoutSeconds`: must be at least 1 and at most 3600, got {0}")]
    DeliveryTimeout(u64),
    /// `maxMessageBytes` outside what the producer takes.
    #[error("`maxMessageBytes`: must be at least 1000 and at most 1000000000, got {0}")]
    MaxMessageBytes(u64),
}

/// A topic template that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopicError {
    /// Nothing.
    #[error("cannot be empty")]
    Empty,
    /// `{` without `}`.
    #[error("unclosed `{{` in `{0}`")]
    Unclosed(String),
    /// `}` without `{`.
    #[error("unmatched `}}` in `{0}`")]
    Unmatched(String),
    /// A placeholder of no value.
    #[error(
        "unknown placeholder `{{{name}}}` in `{template}`; use {{group}}, {{version}}, {{kind}}, {{namespace}}, {{name}} or {{type}}"
    )]
    Placeholder {
        /// The name between the braces.
        name: String,
        /// The template.
        template: String,
    },
    /// A character a topic name cannot hold.
    #[error(
        "`{template}` contains {bad:?}; a Kafka topic holds only ASCII letters, digits, `.`, `_` and `-`"
    )]
    Character {
        /// The character.
        bad: char,
        /// The template.
        template: String,
    },
    /// A fixed topic longer than Kafka takes.
    #[error("`{0}` is longer than 249 characters")]
    TooLong(String),
    /// `.` or `..`, which Kafka refuses.
    #[error("`{0}` is not a topic name Kafka accepts")]
    Reserved(String),
}

impl KafkaSinkConfig {
    /// Checks every setting; the error names the key and what is wrong.
    pub fn validate(&self) -> Result<(), KafkaConfigError> {
        self.parse().map(|_| ())
    }

    /// The topic template, every setting checked.
    pub fn parse(&self) -> Result<TopicTemplate, KafkaConfigError> {
        parse_servers(&self.bootstrap_servers)?;
        let topic = TopicTemplate::parse(&self.topic)?;
        if self.idempotence && self.acks != Acks::All {
            return Err(KafkaConfigError::IdempotenceNeedsAcksAll);
        }
        if let Some(sasl) = &self.sasl
            && sasl.username.is_empty()
        {
            return Err(KafkaConfigError::EmptyUser);
        }
        if let Some(tls) = &self.tls
            && tls.cert_file.is_some() != tls.key_file.is_some()
        {
            return Err(KafkaConfigError::CertWithoutKey);
        }
        if !(1..=3600).contains(&self.delivery_timeout_seconds) {
            return Err(KafkaConfigError::DeliveryTimeout(
                self.delivery_timeout_seconds,
            ));
        }
        if !(1000..=1_000_000_000).contains(&self.max_message_bytes) {
            return Err(KafkaConfigError::MaxMessageBytes(self.max_message_bytes));
        }
        Ok(topic)
    }

    /// The body format.
    pub fn payload(&self) -> PayloadFormat {
        self.payload.unwrap_or(PayloadFormat::WatchEvent)
    }

    /// The producer's settings, by their Kafka client names, but for the
    /// SASL password (read from its file when the producer is made).
    pub fn client_properties(&self) -> Vec<(&'static str, String)> {
        let mut properties = vec![
            ("bootstrap.servers", self.bootstrap_servers.replace(' ', "")),
            ("client.id", "grw".to_string()),
            (
                "security.protocol",
                match (&self.sasl, &self.tls) {
                    (None, None) => "plaintext",
                    (None, Some(_)) => "ssl",
                    (Some(_), None) => "sasl_plaintext",
                    (Some(_), Some(_)) => "sasl_ssl",
                }
                .to_string(),
            ),
            (
                "acks",
                match self.acks {
                    Acks::All => "all",
                    Acks::Leader => "1",
                }
                .to_string(),
            ),
            ("enable.idempotence", self.idempotence.to_string()),
            ("compression.type", self.compression.property().to_string()),
            (
                "message.timeout.ms",
                (self.delivery_timeout_seconds * 1000).to_string(),
            ),
            ("message.max.bytes", self.max_message_bytes.to_string()),
            // Each delivery is sent as soon as it is queued; the deliveries
            // queued while a request is in flight go in the next one.
            ("linger.ms", "0".to_string()),
            // Small requests leave at once, not when the last one was acked.
            ("socket.nagle.disable", "true".to_string()),
            // Topics are the cluster's to create, even where its brokers
            // would create them on first use.
            ("allow.auto.create.topics", "false".to_string()),
        ];
        if !self.idempotence {
            // Without sequence numbers, a retried request could land after
            // the one sent behind it: one request at a time keeps each
            // object's changes in order.
            properties.push(("max.in.flight.requests.per.connection", "1".to_string()));
        }
        if let Some(sasl) = &self.sasl {
            properties.push(("sasl.mechanism", sasl.mechanism.property().to_string()));
            properties.push(("sasl.username", sasl.username.clone()));
        }
        if let Some(tls) = &self.tls {
            let path = |p: &PathBuf| p.to_string_lossy().into_owned();
            // `probe`: the system's CA bundle, wherever this system keeps it.
            let ca = tls.ca_file.as_ref().map_or("probe".to_string(), path);
            properties.push(("ssl.ca.location", ca));
            if let (Some(cert), Some(key)) = (&tls.cert_file, &tls.key_file) {
                properties.push(("ssl.certificate.location", path(cert)));
                properties.push(("ssl.key.location", path(key)));
            }
        }
        properties
    }
}

fn parse_servers(servers: &str) -> Result<(), KafkaConfigError> {
    if servers.trim().is_empty() {
        return Err(KafkaConfigError::NoServer);
    }
    for server in servers.split(',').map(str::trim) {
        let (host, port) = server
            .rsplit_once(':')
            .ok_or_else(|| KafkaConfigError::NotAnAddress(server.to_string()))?;
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let plain_host = !host.is_empty()
            && !host.contains(['/', ' '])
            && (host.parse::<std::net::Ipv6Addr>().is_ok() || !host.contains(':'));
        if !plain_host || port.parse::<u16>().map_or(true, |p| p == 0) {
            return Err(KafkaConfigError::NotAnAddress(server.to_string()));
        }
    }
    Ok(())
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Text(String),
    Value(Field),
}

/// A topic template: literal text and placeholders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TopicTemplate {
    pieces: Vec<Piece>,
}

impl TopicTemplate {
    /// Parses a template; the error says what is wrong with it.
    pub fn parse(template: &str) -> Result<TopicTemplate, TopicError> {
        if template.is_empty() {
            return Err(TopicError::Empty);
        }
        let mut pieces = Vec::new();
        let mut rest = template;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('{') {
                let (name, tail) = after
                    .split_once('}')
                    .ok_or_else(|| TopicError::Unclosed(template.to_string()))?;
                let field = Field::parse(name).ok_or_else(|| TopicError::Placeholder {
                    name: name.to_string(),
                    template: template.to_string(),
                })?;
                pieces.push(Piece::Value(field));
                rest = tail;
            } else {
                let end = rest.find('{').unwrap_or(rest.len());
                let (text, tail) = rest.split_at(end);
                if text.contains('}') {
                    return Err(TopicError::Unmatched(template.to_string()));
                }
                if let Some(bad) = text.chars().find(|&c| !topic_char(c)) {
                    return Err(TopicError::Character {
                        bad,
                        template: template.to_string(),
                    });
                }
                pieces.push(Piece::Text(text.to_string()));
                rest = tail;
            }
        }
        let fixed = !pieces.iter().any(|p| matches!(p, Piece::Value(_)));
        if fixed && template.len() > MAX_TOPIC_CHARS {
            return Err(TopicError::TooLong(template.to_string()));
        }
        if template == "." || template == ".." {
            return Err(TopicError::Reserved(template.to_string()));
        }
        Ok(TopicTemplate { pieces })
    }

    /// The topic for these values of the placeholders: a character a topic
    /// cannot hold becomes `_`, and so does an empty value. `None` when it
    /// comes out longer than Kafka takes.
    pub fn render<'v>(&self, value: impl Fn(Field) -> &'v str) -> Option<String> {
        let mut topic = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => topic.push_str(text),
                Piece::Value(field) => {
                    let value = value(*field);
                    if value.is_empty() {
                        topic.push('_');
                    }
                    topic.extend(value.chars().map(|c| if topic_char(c) { c } else { '_' }));
                }
            }
        }
        (topic.len() <= MAX_TOPIC_CHARS).then_some(topic)
    }
}

fn topic_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')
}

#[cfg(test)]
mod tests;
