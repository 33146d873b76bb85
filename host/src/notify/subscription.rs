//! Subscriptions: who wants which changes, in which form, delivered where.
//!
//! Two ways to write one:
//! - the native form ([`SubscriptionConfig`]), in the config file's
//!   `subscriptions` or `POST /api/v1/subscriptions`;
//! - the compat form of the earlier GRW: `initialWatchingResources[].notifiers`
//!   and `globalWebhookUrls`, each URL becoming one subscription with the
//!   GRW webhook body.
//!
//! Both are checked when they are read (by [`crate::config`]); here they
//! become a [`Subscription`], what the engine runs.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Digest;

pub use crate::config::PayloadFormat;
use crate::config::kafka::KafkaSinkConfig;
use crate::config::nats::NatsSinkConfig;
use crate::config::{
    Config, Destination, MatchCondition, RetryConfig, SubscriptionConfig, WatchOptions,
};
use crate::gvk::{Gvk, KindRef};
use crate::query::{FieldSelector, Query};
use crate::store::{ChangeType, StoredObject};

/// Where a subscription was defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The config file: changed by editing it.
    Config,
    /// The API: deleted through the API.
    Api,
}

/// Where deliveries go.
#[derive(Debug, Clone, PartialEq)]
pub enum SinkSpec {
    /// HTTP POST.
    Webhook {
        /// Receiver.
        url: String,
        /// Extra headers.
        headers: Vec<(String, String)>,
        /// HMAC secret.
        secret: Option<String>,
        /// Per-request timeout.
        timeout: Duration,
    },
    /// NATS JetStream.
    Nats(NatsSinkConfig),
    /// A Kafka topic.
    Kafka(KafkaSinkConfig),
    /// A notifier plugin, by name.
    Plugin(String),
}

/// A checked subscription.
#[derive(Debug, Clone)]
pub struct Subscription {
    /// Unique name.
    pub name: String,
    /// Config file or API.
    pub source: Source,
    /// The definition as shown by the API.
    pub definition: Value,
    /// The kind.
    pub kind: KindRef,
    /// Options of the watch that feeds it.
    pub watch_options: WatchOptions,
    /// Event types wanted; empty = all.
    pub event_types: Vec<ChangeType>,
    /// Conditions on the object (its new state; the last one for deletions).
    pub query: Query,
    /// CEL conditions every change must meet (`matchConditions`).
    pub match_conditions: Vec<MatchCondition>,
    /// Filter plugins, in order.
    pub filters: Vec<String>,
    /// ADDED for existing objects on creation.
    pub snapshot: bool,
    /// Body format.
    pub payload: PayloadFormat,
    /// Destination.
    pub sink: SinkSpec,
    /// First and longest delay between attempts.
    pub retry: (Duration, Duration),
}

impl Subscription {
    /// The subscription a checked definition describes.
    pub fn new(config: &SubscriptionConfig, source: Source) -> Subscription {
        let sink = match &config.destination {
            Destination::Webhook(w) => SinkSpec::Webhook {
                url: w.url.clone(),
                headers: w.headers.clone().into_iter().collect(),
                secret: w.secret.clone(),
                timeout: w.timeout(),
            },
            Destination::Nats(n) => SinkSpec::Nats(n.clone()),
            Destination::Kafka(k) => SinkSpec::Kafka(k.clone()),
            Destination::Plugin(p) => SinkSpec::Plugin(p.to_string()),
        };
        Subscription {
            name: config.name.to_string(),
            source,
            definition: config.to_json(),
            kind: config.kind.value().clone(),
            watch_options: WatchOptions::default(),
            event_types: config.event_types.clone(),
            query: Query {
                namespace: config.namespace.clone(),
                labels: config
                    .label_selector
                    .as_ref()
                    .map(|s| s.value().clone())
                    .unwrap_or_default(),
                fields: config
                    .field_selector
                    .as_ref()
                    .map_or_else(FieldSelector::everything, |s| s.value().clone()),
                ..Query::default()
            },
            match_conditions: config.match_conditions.clone(),
            filters: config.filters.iter().map(ToString::to_string).collect(),
            snapshot: config.snapshot,
            payload: config.payload(),
            sink,
            retry: RetryConfig::delays(config.retry.as_ref()),
        }
    }
}

/// The subscriptions the compat keys define: one per webhook URL of each
/// `initialWatchingResources[].notifiers[]`, and one per
/// (`globalWebhookUrls` URL, initial kind). Their names are derived from
/// what they are, so a restart with the same config finds their queues.
pub fn from_compat_config(config: &Config) -> Vec<Subscription> {
    let mut out = Vec::new();
    for (r, resource) in config.initial_resources.iter().enumerate() {
        let kind = kind_of(&resource.gvk);
        for (n, notifier) in resource.notifiers.iter().enumerate() {
            let origin = format!("initialWatchingResources[{r}].notifiers[{n}]");
            let query = notifier
                .filter
                .as_ref()
                .map(Query::from)
                .unwrap_or_default();
            let event_types: Vec<&str> = notifier.event_types.iter().map(|t| t.as_str()).collect();
            for url in &notifier.webhook_urls {
                let mut definition = serde_json::json!({
                    "configKey": origin,
                    "kind": resource.gvk.to_string(),
                    "webhookUrl": url,
                    "eventTypes": event_types,
                    "filter": notifier.filter.as_ref().map(|f| &f.written),
                });
                // Only when given: a notifier without conditions keeps the
                // name (and queue) it had before they existed.
                if !notifier.match_conditions.is_empty() {
                    definition["matchConditions"] = serde_json::json!(notifier.match_conditions);
                }
                let mut subscription = compat_subscription(
                    &resource.gvk,
                    kind.clone(),
                    resource.options.clone(),
                    url,
                    notifier.event_types.clone(),
                    query.clone(),
                    definition,
                );
                subscription.match_conditions = notifier.match_conditions.clone();
                out.push(subscription);
            }
        }
        for url in &config.global_webhook_urls {
            let definition = serde_json::json!({
                "configKey": "globalWebhookUrls",
                "kind": resource.gvk.to_string(),
                "webhookUrl": url,
            });
            out.push(compat_subscription(
                &resource.gvk,
                kind.clone(),
                resource.options.clone(),
                url,
                Vec::new(),
                Query::default(),
                definition,
            ));
        }
    }
    out
}

fn kind_of(gvk: &Gvk) -> KindRef {
    KindRef {
        group: Some(gvk.group.clone()),
        version: Some(gvk.version.clone()).filter(|v| !v.is_empty()),
        name: gvk.kind.clone(),
    }
}

fn compat_subscription(
    gvk: &Gvk,
    kind: KindRef,
    watch_options: WatchOptions,
    url: &str,
    event_types: Vec<ChangeType>,
    query: Query,
    definition: Value,
) -> Subscription {
    // Same definition, same name: its queue is found again after a restart.
    let digest = sha2::Sha256::digest(definition.to_string().as_bytes());
    let hex: String = digest[..4].iter().map(|b| format!("{b:02x}")).collect();
    Subscription {
        name: format!("config-{}-{hex}", gvk.kind.to_ascii_lowercase()),
        source: Source::Config,
        definition,
        kind,
        watch_options,
        event_types,
        query,
        match_conditions: Vec::new(),
        filters: Vec::new(),
        snapshot: false,
        payload: PayloadFormat::Grw,
        sink: SinkSpec::Webhook {
            url: url.to_string(),
            headers: Vec::new(),
            secret: None,
            timeout: Duration::from_secs(10),
        },
        retry: (Duration::from_millis(500), Duration::from_secs(60)),
    }
}

impl Subscription {
    /// Whether a change of `kind` to `object` is wanted, before filter plugins.
    pub fn wants(&self, kind: ChangeType, object: &StoredObject) -> bool {
        (self.event_types.is_empty() || self.event_types.contains(&kind))
            && self.query.matches(object)
    }

    /// Name of the destination for logs: the URL, the NATS server, the Kafka
    /// brokers or the plugin.
    pub fn destination(&self) -> String {
        match &self.sink {
            SinkSpec::Webhook { url, .. } => url.clone(),
            SinkSpec::Nats(n) => format!("{} ({})", n.url, n.subject),
            SinkSpec::Kafka(k) => format!("{} ({})", k.bootstrap_servers, k.topic),
            SinkSpec::Plugin(p) => format!("plugin {p}"),
        }
    }
}

#[cfg(test)]
mod tests;
