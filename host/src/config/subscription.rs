//! Native subscriptions as users write them: an entry of the config file's
//! `subscriptions`, or the body of `POST /api/v1/subscriptions`. Both are
//! read by [`SubscriptionConfig::from_json`] (the config file through the
//! same deserialization), so they follow the same rules and give the same
//! messages; the notification engine compiles a [`SubscriptionConfig`] into
//! what it runs.
//!
//! A [`SubscriptionConfig`] serializes back to the form it was read from (as
//! the API shows it and the outbox stores it), every value as written.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use super::accepted::URL_EXPECTED;
use super::de::{self, InvalidKey, Refusal};
use super::kafka::KafkaSinkConfig;
use super::nats::NatsSinkConfig;
use super::values::{Parsed, Seconds, event_type_names, event_types, is_http_url, optional_parsed};
use crate::cel::{Condition, Scope};
use crate::event::ChangeType;
use crate::gvk::KindRef;
use crate::selectors::{FieldSelector, LabelSelector};

/// Longest subscription name: it appears in URLs and metric labels.
pub const MAX_SUBSCRIPTION_NAME_LEN: usize = 63;

/// Longest plugin name.
pub const MAX_PLUGIN_NAME_LEN: usize = 63;

/// Most `matchConditions` a subscription has, as for an admission webhook.
pub const MAX_MATCH_CONDITIONS: usize = 64;

/// Names accepted by `webhook.payload`.
const PAYLOADS: &[(&str, PayloadFormat)] = &[
    ("grw", PayloadFormat::Grw),
    ("watch-event", PayloadFormat::WatchEvent),
    ("cloudevents", PayloadFormat::CloudEvents),
];

/// A name that is not of its form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("expected {expected}, got {got}")]
pub struct BadName {
    /// What the name must be.
    pub expected: &'static str,
    /// What was given, as JSON, shortened.
    pub got: String,
}

/// A string newtype checked once, when it is made: `parse` (whose error
/// says what the value must be), `as_str`, `Display`, and serde as a plain
/// string that is checked when read.
macro_rules! checked_name {
    ($(#[$doc:meta])* $name:ident, expected: $expected:literal, valid: $valid:expr $(,)?) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            const EXPECTED: &'static str = $expected;

            /// Checks `name`; the error says what the name must be.
            pub fn parse(name: &str) -> Result<$name, BadName> {
                let valid: fn(&str) -> bool = $valid;
                if valid(name) {
                    Ok($name(name.to_string()))
                } else {
                    Err(BadName {
                        expected: Self::EXPECTED,
                        got: de::show(&Value::from(name)),
                    })
                }
            }

            /// The name.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl Serialize for $name {
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                de::string_then(deserializer, Self::EXPECTED, |s| {
                    $name::parse(s).map_err(|_| Refusal::Expected)
                })
            }
        }
    };
}

checked_name! {
    /// The name of a subscription: 1 to 63 lowercase ASCII letters, digits,
    /// `-` or `.`, starting and ending with a letter or digit.
    SubscriptionName,
    expected: "a subscription name: 1 to 63 lowercase letters, digits, `-` or `.`, starting and ending with a letter or digit",
    valid: |name| {
        !name.is_empty()
            && name.len() <= MAX_SUBSCRIPTION_NAME_LEN
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
            && name.starts_with(|c: char| c.is_ascii_alphanumeric())
            && name.ends_with(|c: char| c.is_ascii_alphanumeric())
    },
}

checked_name! {
    /// The name of a plugin: the plugin is the file `NAME.wasm` of the plugin
    /// directory. 1 to 63 ASCII letters, digits, `-`, `_` or `.`, starting
    /// with a letter or digit. Filters and notifier destinations of
    /// subscriptions, and the `filter` parameter of queries, name plugins
    /// this way.
    PluginName,
    expected: "a plugin name: 1 to 63 ASCII letters, digits, `-`, `_` or `.`, starting with a letter or digit",
    valid: |name| {
        !name.is_empty()
            && name.len() <= MAX_PLUGIN_NAME_LEN
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
            && name.starts_with(|c: char| c.is_ascii_alphanumeric())
    },
}

/// Body of a delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum PayloadFormat {
    /// `{eventType, gvk, group, version, kind, eventObjects, message, additionalData}`.
    Grw,
    /// A Kubernetes watch event `{type, object}`, plus `oldObject` for MODIFIED.
    WatchEvent,
    /// A CloudEvents 1.0 JSON event whose `data` is `{object, oldObject?}`.
    #[serde(rename = "cloudevents")]
    CloudEvents,
}

impl<'de> Deserialize<'de> for PayloadFormat {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        de::choose(deserializer, PAYLOADS)
    }
}

/// A checked subscription, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct SubscriptionConfig {
    /// Unique name.
    pub name: SubscriptionName,
    /// The kind: `Pod`, `deployments.apps`, `apps/v1/Deployment`...
    pub kind: Parsed<KindRef>,
    /// Only objects of this namespace.
    pub namespace: Option<String>,
    /// Only objects matching this label selector.
    pub label_selector: Option<Parsed<LabelSelector>>,
    /// Only objects matching this field selector.
    pub field_selector: Option<Parsed<FieldSelector>>,
    /// Event types wanted, each once; empty = all.
    pub event_types: Vec<ChangeType>,
    /// Filter plugins every change must pass, in order.
    pub filters: Vec<PluginName>,
    /// CEL conditions every change must meet, checked before the filters.
    pub match_conditions: Vec<MatchCondition>,
    /// On creation, an ADDED for every object that exists then.
    pub snapshot: bool,
    /// Where deliveries go.
    pub destination: Destination,
    /// Delay between attempts after a retryable failure (`retry`), as written.
    pub retry: Option<RetryConfig>,
}

/// One of a subscription's `matchConditions`, as an admission webhook has
/// them: a name, and a CEL expression of `object`, `oldObject` and `type`
/// that must be true for a change to be delivered.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an object with `name` and `expression`"
)]
pub struct MatchCondition {
    /// Its name, unique in the subscription: logs name the condition that
    /// failed.
    #[serde(deserialize_with = "condition_name")]
    pub name: String,
    /// The compiled expression.
    pub expression: Expression,
}

/// A CEL expression of a change, compiled and checked when read.
#[derive(Debug, Clone, PartialEq)]
pub struct Expression(pub Arc<Condition>);

impl<'de> Deserialize<'de> for Expression {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        de::string_then(deserializer, "a CEL expression", |text| {
            Condition::compile(text, Scope::Change)
                .map(|condition| Expression(Arc::new(condition)))
                .map_err(|e| Refusal::Message(e.to_string()))
        })
    }
}

impl Serialize for Expression {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.0.text())
    }
}

fn condition_name<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    de::string_then(
        deserializer,
        "a name of 1 to 63 letters, digits, `-`, `_` or `.`",
        |name| {
            let valid = !name.is_empty()
                && name.len() <= 63
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
            match valid {
                true => Ok(name.to_string()),
                false => Err(Refusal::Expected),
            }
        },
    )
}

pub(super) fn match_conditions<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Vec<MatchCondition>, D::Error> {
    let conditions: Vec<MatchCondition> =
        de::array(deserializer, "an array of `{name, expression}`")?;
    if conditions.len() > MAX_MATCH_CONDITIONS {
        return Err(D::Error::custom(format!(
            "has {} conditions; at most {MAX_MATCH_CONDITIONS} are accepted",
            conditions.len()
        )));
    }
    for (i, condition) in conditions.iter().enumerate() {
        if conditions[..i].iter().any(|c| c.name == condition.name) {
            return Err(D::Error::custom(format!(
                "the name `{}` is used twice; each condition needs its own",
                condition.name
            )));
        }
    }
    Ok(conditions)
}

/// Where the deliveries of a subscription go: exactly one of `webhook`,
/// `nats`, `kafka` and `plugin`.
#[derive(Debug, Clone, PartialEq)]
pub enum Destination {
    /// `webhook`: HTTP POST.
    Webhook(WebhookConfig),
    /// `nats`: publish to a NATS JetStream stream.
    Nats(NatsSinkConfig),
    /// `kafka`: produce to a Kafka topic.
    Kafka(KafkaSinkConfig),
    /// `plugin`: hand to a notifier plugin.
    Plugin(PluginName),
}

/// `webhook` of a subscription.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    deny_unknown_fields,
    expecting = "an object with `url`"
)]
pub struct WebhookConfig {
    /// `http://` or `https://` URL.
    #[serde(deserialize_with = "webhook_url")]
    pub url: String,
    /// `grw` (the earlier GRW's body, the default), `watch-event` or `cloudevents`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<PayloadFormat>,
    /// Extra request headers, valid HTTP header names and values.
    #[serde(
        default,
        deserialize_with = "headers",
        skip_serializing_if = "BTreeMap::is_empty"
    )]
    pub headers: BTreeMap<String, String>,
    /// Signs each body with HMAC-SHA256 under this secret; not empty.
    #[serde(
        default,
        deserialize_with = "secret",
        skip_serializing_if = "Option::is_none"
    )]
    pub secret: Option<String>,
    /// Per-request timeout, seconds, above 0 and at most 3600 (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<Seconds<3600>>,
}

impl WebhookConfig {
    /// The body format.
    pub fn payload(&self) -> PayloadFormat {
        self.payload.unwrap_or(PayloadFormat::Grw)
    }

    /// The per-request timeout.
    pub fn timeout(&self) -> Duration {
        self.timeout_seconds
            .map_or(Duration::from_secs(10), Seconds::duration)
    }
}

/// `retry` of a subscription: `initialDelayMs` at least 1 and at most
/// `maxDelaySeconds`, which is above 0 and at most 86400.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RetryConfig {
    /// First delay, milliseconds (default 500).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub initial_delay_ms: Option<u64>,
    /// Longest delay, seconds (default 60).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_delay_seconds: Option<Seconds<86_400>>,
}

impl RetryConfig {
    /// First and longest delay between attempts, defaults applied.
    pub fn delays(retry: Option<&RetryConfig>) -> (Duration, Duration) {
        let initial = retry
            .and_then(|r| r.initial_delay_ms)
            .map_or(Duration::from_millis(500), Duration::from_millis);
        let max = retry
            .and_then(|r| r.max_delay_seconds)
            .map_or(Duration::from_secs(60), Seconds::duration);
        (initial, max)
    }
}

impl<'de> Deserialize<'de> for RetryConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields, expecting = "an object")]
        struct Written {
            #[serde(default)]
            initial_delay_ms: Option<u64>,
            #[serde(default)]
            max_delay_seconds: Option<Seconds<86_400>>,
        }
        let written = Written::deserialize(deserializer)?;
        let retry = RetryConfig {
            initial_delay_ms: written.initial_delay_ms,
            max_delay_seconds: written.max_delay_seconds,
        };
        let (initial, max) = RetryConfig::delays(Some(&retry));
        if initial.is_zero() || initial > max {
            return Err(D::Error::custom(format!(
                "`initialDelayMs` must be at least 1 and at most `maxDelaySeconds`, got {} ms",
                initial.as_millis()
            )));
        }
        Ok(retry)
    }
}

/// The form a subscription is written in.
#[derive(Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    deny_unknown_fields,
    expecting = "a JSON object"
)]
struct Written {
    name: SubscriptionName,
    kind: Parsed<KindRef>,
    #[serde(
        default,
        deserialize_with = "de_text",
        skip_serializing_if = "Option::is_none"
    )]
    namespace: Option<String>,
    #[serde(
        default,
        deserialize_with = "optional_parsed",
        skip_serializing_if = "Option::is_none"
    )]
    label_selector: Option<Parsed<LabelSelector>>,
    #[serde(
        default,
        deserialize_with = "optional_parsed",
        skip_serializing_if = "Option::is_none"
    )]
    field_selector: Option<Parsed<FieldSelector>>,
    #[serde(
        default,
        deserialize_with = "event_types",
        serialize_with = "event_type_names",
        skip_serializing_if = "Vec::is_empty"
    )]
    event_types: Vec<ChangeType>,
    #[serde(
        default,
        deserialize_with = "filters",
        skip_serializing_if = "Vec::is_empty"
    )]
    filters: Vec<PluginName>,
    #[serde(
        default,
        deserialize_with = "match_conditions",
        skip_serializing_if = "Vec::is_empty"
    )]
    match_conditions: Vec<MatchCondition>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    snapshot: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    webhook: Option<WebhookConfig>,
    #[serde(
        default,
        deserialize_with = "nats",
        skip_serializing_if = "Option::is_none"
    )]
    nats: Option<NatsSinkConfig>,
    #[serde(
        default,
        deserialize_with = "kafka",
        skip_serializing_if = "Option::is_none"
    )]
    kafka: Option<KafkaSinkConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    plugin: Option<PluginDestination>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    retry: Option<RetryConfig>,
}

/// `plugin` of a subscription.
#[derive(Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    deny_unknown_fields,
    expecting = "an object with `name`"
)]
struct PluginDestination {
    name: PluginName,
}

impl<'de> Deserialize<'de> for SubscriptionConfig {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let w = Written::deserialize(deserializer)?;
        let destination = match (w.webhook, w.nats, w.kafka, w.plugin) {
            (Some(webhook), None, None, None) => Destination::Webhook(webhook),
            (None, Some(nats), None, None) => Destination::Nats(nats),
            (None, None, Some(kafka), None) => Destination::Kafka(kafka),
            (None, None, None, Some(plugin)) => Destination::Plugin(plugin.name),
            _ => {
                return Err(D::Error::custom(
                    "needs exactly one destination: `webhook`, `nats`, `kafka` or `plugin`",
                ));
            }
        };
        Ok(SubscriptionConfig {
            name: w.name,
            kind: w.kind,
            namespace: w.namespace,
            label_selector: w.label_selector,
            field_selector: w.field_selector,
            event_types: w.event_types,
            filters: w.filters,
            match_conditions: w.match_conditions,
            snapshot: w.snapshot,
            destination,
            retry: w.retry,
        })
    }
}

impl Serialize for SubscriptionConfig {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let (mut webhook, mut nats, mut kafka, mut plugin) = (None, None, None, None);
        match &self.destination {
            Destination::Webhook(w) => webhook = Some(w.clone()),
            Destination::Nats(n) => nats = Some(n.clone()),
            Destination::Kafka(k) => kafka = Some(k.clone()),
            Destination::Plugin(name) => plugin = Some(PluginDestination { name: name.clone() }),
        }
        Written {
            name: self.name.clone(),
            kind: self.kind.clone(),
            namespace: self.namespace.clone(),
            label_selector: self.label_selector.clone(),
            field_selector: self.field_selector.clone(),
            event_types: self.event_types.clone(),
            filters: self.filters.clone(),
            match_conditions: self.match_conditions.clone(),
            snapshot: self.snapshot,
            webhook,
            nats,
            kafka,
            plugin,
            retry: self.retry,
        }
        .serialize(serializer)
    }
}

impl SubscriptionConfig {
    /// Reads and checks a subscription written as JSON. The error names the
    /// member (`webhook.url`; empty when it is about the whole subscription).
    /// Unknown members are refused.
    pub fn from_json(value: &Value) -> Result<SubscriptionConfig, InvalidKey> {
        de::from_value(value, &mut Vec::new())
    }

    /// The definition as the API shows it and the outbox stores it.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The members that name a file on GRW's disk, which GRW reads and
    /// hands to the destination (a Kafka password, TLS keys and
    /// certificates), e.g. `kafka.sasl.passwordFile`.
    pub fn file_members(&self) -> Vec<&'static str> {
        let Destination::Kafka(kafka) = &self.destination else {
            return Vec::new();
        };
        let mut members = Vec::new();
        if kafka.sasl.is_some() {
            members.push("kafka.sasl.passwordFile");
        }
        if let Some(tls) = &kafka.tls {
            for (member, file) in [
                ("kafka.tls.caFile", &tls.ca_file),
                ("kafka.tls.certFile", &tls.cert_file),
                ("kafka.tls.keyFile", &tls.key_file),
            ] {
                if file.is_some() {
                    members.push(member);
                }
            }
        }
        members
    }

    /// The body format of its deliveries.
    pub fn payload(&self) -> PayloadFormat {
        match &self.destination {
            Destination::Webhook(w) => w.payload(),
            Destination::Kafka(k) => k.payload(),
            Destination::Nats(_) | Destination::Plugin(_) => PayloadFormat::WatchEvent,
        }
    }
}

fn de_text<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    de::text(deserializer)
}

fn filters<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<PluginName>, D::Error> {
    de::array(deserializer, "an array of filter plugin names")
}

fn webhook_url<'de, D: Deserializer<'de>>(deserializer: D) -> Result<String, D::Error> {
    de::string_then(deserializer, URL_EXPECTED, |s| {
        if is_http_url(s) && reqwest::Url::parse(s).is_ok() {
            Ok(s.to_string())
        } else {
            Err(Refusal::Expected)
        }
    })
}

fn headers<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<BTreeMap<String, String>, D::Error> {
    let headers = BTreeMap::<String, String>::deserialize(deserializer)?;
    for (name, value) in &headers {
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(D::Error::custom(format!(
                "{name:?} is not a valid header name"
            )));
        }
        if http::HeaderValue::from_str(value).is_err() {
            return Err(D::Error::custom(format!(
                "the value of {name:?} is not a valid header value"
            )));
        }
    }
    Ok(headers)
}

fn secret<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<String>, D::Error> {
    de::string_then(deserializer, "a string", |s| {
        if s.is_empty() {
            Err(Refusal::Message(
                "cannot be empty; leave it out to send unsigned bodies".into(),
            ))
        } else {
            Ok(Some(s.to_string()))
        }
    })
}

fn nats<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<NatsSinkConfig>, D::Error> {
    let config = NatsSinkConfig::deserialize(deserializer)?;
    config.validate().map_err(D::Error::custom)?;
    Ok(Some(config))
}

fn kafka<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<KafkaSinkConfig>, D::Error> {
    let config = KafkaSinkConfig::deserialize(deserializer)?;
    config.validate().map_err(D::Error::custom)?;
    Ok(Some(config))
}

#[cfg(test)]
mod tests;
