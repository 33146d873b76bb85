//! Subscriptions: who wants which changes, in which form, delivered where.
//!
//! Two ways to write one:
//! - the native form ([`Spec`]), in the config file's `subscriptions` or
//!   `POST /api/v1/subscriptions`;
//! - the compat form of the earlier GRW: `initialWatchingResources[].notifiers`
//!   and `globalWebhookUrls`, each URL becoming one subscription with the
//!   GRW webhook body.
//!
//! Both compile to a [`Subscription`]; checking happens once, at compile
//! time, with messages naming the offending member.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::Digest;

use super::nats::NatsSinkConfig;
use crate::config::{Config, WatchOptions, is_http_url};
use crate::gvk::{Gvk, KindRef};
use crate::query::{FieldSelector, LabelSelector, Query, add_pair_conditions};
use crate::store::{ChangeType, StoredObject};

/// Longest subscription name: it appears in URLs and metric labels.
const MAX_NAME_LEN: usize = 63;

/// A subscription as written by a user.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Spec {
    /// Unique name: lowercase letters, digits, `-` and `.`.
    pub name: String,
    /// The kind: `Pod`, `deployments.apps`, `apps/v1/Deployment`...
    pub kind: String,
    /// Only objects of this namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// Only objects matching this label selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub label_selector: Option<String>,
    /// Only objects matching this field selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_selector: Option<String>,
    /// `ADDED`, `MODIFIED`, `DELETED`; empty = all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub event_types: Vec<String>,
    /// Filter plugins every change must pass, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<String>,
    /// On creation, an ADDED for every object that exists then.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub snapshot: bool,
    /// Deliver to an HTTP endpoint.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<WebhookSpec>,
    /// Publish to a NATS JetStream stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nats: Option<NatsSinkConfig>,
    /// Hand to a notifier plugin.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<PluginSinkSpec>,
    /// Delay between attempts after a retryable failure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<RetrySpec>,
}

/// `webhook` member of a [`Spec`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct WebhookSpec {
    /// `http://` or `https://` URL.
    pub url: String,
    /// `grw` (the earlier GRW's body, default), `watch-event` or `cloudevents`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<String>,
    /// Extra request headers.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Signs each body with HMAC-SHA256 under this secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// Per-request timeout, seconds (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout_seconds: Option<f64>,
}

/// `plugin` member of a [`Spec`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct PluginSinkSpec {
    /// Name of a notifier plugin of the plugin directory.
    pub name: String,
}

/// `retry` member of a [`Spec`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RetrySpec {
    /// First delay, milliseconds (default 500).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_delay_ms: Option<u64>,
    /// Longest delay, seconds (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_delay_seconds: Option<f64>,
}

/// Where a subscription was defined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// The config file: changed by editing it.
    Config,
    /// The API: deleted through the API.
    Api,
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
    CloudEvents,
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

impl Spec {
    /// Reads a spec from JSON; `origin` prefixes messages (`subscriptions[2]`).
    pub fn from_json(value: &Value, origin: &str) -> Result<Spec, String> {
        if !value.is_object() {
            return Err(format!("{origin}: expected a JSON object, got {value}"));
        }
        Spec::deserialize(value).map_err(|e| format!("{origin}: {e}"))
    }

    /// Checks every member; messages start with `subscription `name``.
    pub fn compile(&self, source: Source) -> Result<Subscription, String> {
        check_name(&self.name)?;
        let at = |member: &str, message: String| {
            format!("subscription `{}`: `{member}`: {message}", self.name)
        };
        let kind = KindRef::parse(&self.kind).map_err(|e| at("kind", e))?;
        let event_types = event_types(&self.event_types).map_err(|e| at("eventTypes", e))?;
        let labels = match &self.label_selector {
            Some(s) => s
                .parse::<LabelSelector>()
                .map_err(|e| at("labelSelector", e.to_string()))?,
            None => LabelSelector::default(),
        };
        let fields = match &self.field_selector {
            Some(s) => s
                .parse::<FieldSelector>()
                .map_err(|e| at("fieldSelector", e.to_string()))?,
            None => FieldSelector::everything(),
        };
        if let Some(f) = self.filters.iter().find(|f| f.is_empty()) {
            return Err(at(
                "filters",
                format!("plugin names cannot be empty, got {f:?}"),
            ));
        }
        let sinks = [
            self.webhook.is_some(),
            self.nats.is_some(),
            self.plugin.is_some(),
        ];
        if sinks.iter().filter(|s| **s).count() != 1 {
            return Err(format!(
                "subscription `{}`: needs exactly one destination: `webhook`, `nats` or `plugin`",
                self.name
            ));
        }
        let (sink, payload) = if let Some(w) = &self.webhook {
            webhook(w).map_err(|e| at("webhook", e))?
        } else if let Some(n) = &self.nats {
            n.validate().map_err(|e| at("nats", e))?;
            (SinkSpec::Nats(n.clone()), PayloadFormat::WatchEvent)
        } else {
            let plugin = self
                .plugin
                .as_ref()
                .map(|p| p.name.clone())
                .unwrap_or_default();
            if plugin.is_empty() {
                return Err(at("plugin.name", "expected a plugin name".into()));
            }
            (SinkSpec::Plugin(plugin), PayloadFormat::WatchEvent)
        };
        let retry = retry(self.retry.as_ref()).map_err(|e| at("retry", e))?;
        Ok(Subscription {
            name: self.name.clone(),
            source,
            definition: serde_json::to_value(self).unwrap_or(Value::Null),
            kind,
            watch_options: WatchOptions::default(),
            event_types,
            query: Query {
                namespace: self.namespace.clone().filter(|n| !n.is_empty()),
                labels,
                fields,
                ..Query::default()
            },
            filters: self.filters.clone(),
            snapshot: self.snapshot,
            payload,
            sink,
            retry,
        })
    }
}

fn check_name(name: &str) -> Result<(), String> {
    let valid_char = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.';
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME_LEN
        && name.chars().all(valid_char)
        && name.starts_with(|c: char| c.is_ascii_alphanumeric())
        && name.ends_with(|c: char| c.is_ascii_alphanumeric());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "subscription name {name:?} is invalid: use 1 to {MAX_NAME_LEN} lowercase letters, digits, `-` or `.`, starting and ending with a letter or digit"
        ))
    }
}

fn event_types(names: &[String]) -> Result<Vec<ChangeType>, String> {
    names
        .iter()
        .map(|n| {
            ChangeType::parse(n)
                .ok_or_else(|| format!("expected ADDED, MODIFIED or DELETED, got {n:?}"))
        })
        .collect()
}

fn webhook(spec: &WebhookSpec) -> Result<(SinkSpec, PayloadFormat), String> {
    if !is_http_url(&spec.url) || reqwest::Url::parse(&spec.url).is_err() {
        return Err(format!(
            "`url` must be an http:// or https:// URL with a host, got {:?}",
            spec.url
        ));
    }
    let payload = match spec.payload.as_deref() {
        None | Some("grw") => PayloadFormat::Grw,
        Some("watch-event") => PayloadFormat::WatchEvent,
        Some("cloudevents") => PayloadFormat::CloudEvents,
        Some(other) => {
            return Err(format!(
                "`payload` must be one of grw, watch-event, cloudevents, got {other:?}"
            ));
        }
    };
    for (name, value) in &spec.headers {
        if http::HeaderName::from_bytes(name.as_bytes()).is_err() {
            return Err(format!("`headers`: {name:?} is not a valid header name"));
        }
        if http::HeaderValue::from_str(value).is_err() {
            return Err(format!(
                "`headers`: the value of {name:?} is not a valid header value"
            ));
        }
    }
    if spec.secret.as_deref() == Some("") {
        return Err("`secret` cannot be empty; leave it out to send unsigned bodies".into());
    }
    let timeout = match spec.timeout_seconds {
        None => Duration::from_secs(10),
        Some(s) if s.is_finite() && s > 0.0 && s <= 3600.0 => Duration::from_secs_f64(s),
        Some(s) => {
            return Err(format!(
                "`timeoutSeconds` must be above 0 and at most 3600, got {s}"
            ));
        }
    };
    Ok((
        SinkSpec::Webhook {
            url: spec.url.clone(),
            headers: spec.headers.clone().into_iter().collect(),
            secret: spec.secret.clone(),
            timeout,
        },
        payload,
    ))
}

fn retry(spec: Option<&RetrySpec>) -> Result<(Duration, Duration), String> {
    let initial = spec
        .and_then(|r| r.initial_delay_ms)
        .map_or(Duration::from_millis(500), Duration::from_millis);
    let max = match spec.and_then(|r| r.max_delay_seconds) {
        None => Duration::from_secs(60),
        Some(s) if s.is_finite() && s > 0.0 && s <= 86_400.0 => Duration::from_secs_f64(s),
        Some(s) => {
            return Err(format!(
                "`maxDelaySeconds` must be above 0 and at most 86400, got {s}"
            ));
        }
    };
    if initial.is_zero() || initial > max {
        return Err(format!(
            "`initialDelayMs` must be at least 1 and at most `maxDelaySeconds`, got {} ms",
            initial.as_millis()
        ));
    }
    Ok((initial, max))
}

/// The subscriptions the compat keys define: one per webhook URL of each
/// `initialWatchingResources[].notifiers[]`, and one per
/// (`globalWebhookUrls` URL, initial kind). Their names are derived from
/// what they are, so a restart with the same config finds their queues.
pub fn from_compat_config(config: &Config) -> Result<Vec<Subscription>, String> {
    let mut out = Vec::new();
    for (r, resource) in config.initial_resources.iter().enumerate() {
        let kind = kind_of(&resource.gvk);
        for (n, notifier) in resource.notifiers.iter().enumerate() {
            let origin = format!("initialWatchingResources[{r}].notifiers[{n}]");
            let mut query = Query::default();
            if let Some(filter) = &notifier.filter {
                query = compat_filter(filter)
                    .map_err(|e| format!("config key `{origin}.filter`: {e}"))?;
            }
            let event_types = event_types(&notifier.event_types)
                .map_err(|e| format!("config key `{origin}.eventTypes`: {e}"))?;
            for url in &notifier.webhook_urls {
                let definition = serde_json::json!({
                    "configKey": origin,
                    "kind": resource.gvk.to_string(),
                    "webhookUrl": url,
                    "eventTypes": notifier.event_types,
                    "filter": notifier.filter,
                });
                out.push(compat_subscription(
                    &resource.gvk,
                    kind.clone(),
                    resource.options.clone(),
                    url,
                    event_types.clone(),
                    query.clone(),
                    definition,
                ));
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
    Ok(out)
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

/// A compat notifier `filter`: the shape of the compat query body, every
/// member optional (`name`, `namespace`, `uid`, `labelSelectors`,
/// `annotationSelectors`, `fieldMatches`).
fn compat_filter(filter: &Value) -> Result<Query, String> {
    const MEMBERS: [&str; 9] = [
        "name",
        "namespace",
        "uid",
        "labelSelectors",
        "annotationSelectors",
        "fieldMatches",
        // Accepted and ignored: the notifier's resource already names the kind.
        "group",
        "version",
        "kind",
    ];
    let Some(map) = filter.as_object() else {
        return Err(format!("expected an object, got {filter}"));
    };
    if let Some(unknown) = map.keys().find(|k| !MEMBERS.contains(&k.as_str())) {
        return Err(format!(
            "unknown member `{unknown}`; accepted: {}",
            MEMBERS.join(", ")
        ));
    }
    let text = |member: &str| -> Result<Option<String>, String> {
        match map.get(member) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) if s.is_empty() => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(format!("`{member}` must be a string, got {other}")),
        }
    };
    let mut query = Query {
        name: text("name")?,
        namespace: text("namespace")?,
        uid: text("uid")?,
        ..Query::default()
    };
    add_pair_conditions(map, &mut query)?;
    Ok(query)
}

impl Subscription {
    /// Whether a change of `kind` to `object` is wanted, before filter plugins.
    pub fn wants(&self, kind: ChangeType, object: &StoredObject) -> bool {
        (self.event_types.is_empty() || self.event_types.contains(&kind))
            && self.query.matches(object)
    }

    /// Name of the destination for logs: the URL, the NATS server or the plugin.
    pub fn destination(&self) -> String {
        match &self.sink {
            SinkSpec::Webhook { url, .. } => url.clone(),
            SinkSpec::Nats(n) => format!("{} ({})", n.url, n.subject),
            SinkSpec::Plugin(p) => format!("plugin {p}"),
        }
    }
}

#[cfg(test)]
mod tests;
