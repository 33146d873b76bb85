//! # chat-notifier
//!
//! A GRW notifier that posts a short, readable line about each change to a
//! Slack or Mattermost incoming webhook:
//!
//! ```text
//! *Deployment* `shop/web` modified: spec.replicas 2 → 3; metadata.labels.tier added
//! *Pod* `default/x` added
//! *ConfigMap* `a/b` deleted
//! ```
//!
//! ## Configuration
//!
//! ```json
//! {"url": "https://hooks.slack.com/services/T000/B000/XXXX", "channel": "#ops",
//!  "username": "grw", "iconEmoji": ":eyes:"}
//! ```
//!
//! - `url` (string, required): the incoming webhook's URL, `http://` or
//!   `https://`. Its host must be in the manifest's `allowedHosts` and in
//!   GRW's `pluginAllowedHosts`.
//! - `channel`, `username`, `iconEmoji` (strings, optional): sent as
//!   `channel`, `username` and `icon_emoji`, overriding the webhook's
//!   defaults where the chat server allows it.
//! - `ignore` (list of field paths): fields whose changes are not listed,
//!   dotted (`status`) or JSON pointers (`/metadata/annotations/a~1b`); a
//!   path covers everything under it. Default: `metadata.resourceVersion`,
//!   `metadata.managedFields`, `metadata.generation`, `status`, and the
//!   `kubectl.kubernetes.io/last-applied-configuration` annotation.
//! - `maxFields` (number ≥ 1, default 5): changed fields listed per message;
//!   the rest are counted ("and 3 more").
//!
//! A modification lists the changed leaf fields between the old and the new
//! object, the object's own fields before its metadata. A modification that
//! touches ignored fields only (a status heartbeat, a `resourceVersion`
//! bump) sends nothing. Values longer than 40 characters are cut.
//!
//! ## Delivery
//!
//! The message is `{"text": ..., "channel"?, "username"?, "icon_emoji"?}`.
//! 2xx is delivered; 429, 408, 5xx and failures to connect are retried;
//! other answers (a 4xx such as Slack's `invalid_token`, or a redirect)
//! are given up.

use std::collections::BTreeSet;
use std::fmt;

use grw_sdk::{DeliveryError, Event, EventType, FieldPath, Http, HttpRequest, Interest, Notifier};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Ignored unless the configuration says otherwise: fields that change on
/// every update, or that say how rather than what.
const DEFAULT_IGNORE: &[&str] = &[
    "metadata.resourceVersion",
    "metadata.managedFields",
    "metadata.generation",
    "status",
    "/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration",
];

/// Longest value shown, in characters.
const MAX_VALUE_CHARS: usize = 40;

/// The notifier, configured.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChatNotifier {
    url: String,
    channel: Option<String>,
    username: Option<String>,
    icon_emoji: Option<String>,
    #[serde(default = "default_ignore")]
    ignore: Vec<FieldPath>,
    #[serde(default = "default_max_fields")]
    max_fields: usize,
}

fn default_ignore() -> Vec<FieldPath> {
    DEFAULT_IGNORE
        .iter()
        .map(|p| FieldPath::parse(p).expect("default paths are valid"))
        .collect()
}

fn default_max_fields() -> usize {
    5
}

/// The body Slack and Mattermost incoming webhooks take.
#[derive(Debug, Serialize)]
struct Message<'a> {
    text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    channel: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    username: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    icon_emoji: Option<&'a str>,
}

impl Notifier for ChatNotifier {
    fn init(config: &str) -> Result<(Self, Interest), String> {
        let notifier: ChatNotifier = grw_sdk::parse_config(config)?;
        if !(notifier.url.starts_with("https://") || notifier.url.starts_with("http://")) {
            return Err(format!(
                "config key `url`: expected the webhook's http:// or https:// URL, got {:?}",
                notifier.url
            ));
        }
        if notifier.max_fields == 0 {
            return Err("config key `maxFields`: must be at least 1".into());
        }
        Ok((notifier, Interest::all()))
    }

    fn deliver(&self, event: &Event, http: &dyn Http) -> Result<(), DeliveryError> {
        let Some(text) = self.summary(event) else {
            return Ok(());
        };
        let message = Message {
            text,
            channel: self.channel.as_deref(),
            username: self.username.as_deref(),
            icon_emoji: self.icon_emoji.as_deref(),
        };
        let request = HttpRequest::post(&self.url)
            .json(&message)
            .map_err(|e| DeliveryError::GiveUp(e.to_string()))?;
        http.deliver(&request).map(drop)
    }
}

impl ChatNotifier {
    /// The message text for `event`; `None` when it modifies ignored fields
    /// only. `&`, `<` and `>` are escaped as Slack requires.
    pub fn summary(&self, event: &Event) -> Option<String> {
        let name = if event.namespace().is_empty() {
            event.name().to_string()
        } else {
            format!("{}/{}", event.namespace(), event.name())
        };
        let subject = format!("*{}* `{name}`", event.gvk().kind);
        let text = match event.event_type {
            EventType::Added => format!("{subject} added"),
            EventType::Deleted => format!("{subject} deleted"),
            EventType::Modified => match (event.object(), event.old_object()) {
                (Ok(new), Some(Ok(old))) => {
                    let changes = self.changes(old.value(), new.value());
                    if changes.is_empty() {
                        return None;
                    }
                    let shown: Vec<String> = changes
                        .iter()
                        .take(self.max_fields)
                        .map(ToString::to_string)
                        .collect();
                    let mut text = format!("{subject} modified: {}", shown.join("; "));
                    if changes.len() > self.max_fields {
                        text += &format!("; and {} more", changes.len() - self.max_fields);
                    }
                    text
                }
                // Without both states there is nothing to compare.
                _ => format!("{subject} modified"),
            },
        };
        Some(escape(&text))
    }

    /// The leaf fields that differ, outside the ignored paths.
    fn changes<'v>(&self, old: &'v Value, new: &'v Value) -> Vec<FieldChange<'v>> {
        let mut changes = Vec::new();
        self.diff(&mut Vec::new(), Some(old), Some(new), &mut changes);
        changes
    }

    fn diff<'v>(
        &self,
        path: &mut Vec<String>,
        old: Option<&'v Value>,
        new: Option<&'v Value>,
        out: &mut Vec<FieldChange<'v>>,
    ) {
        if self
            .ignore
            .iter()
            .any(|ignored| path.starts_with(ignored.segments()))
        {
            return;
        }
        match (old, new) {
            (Some(Value::Object(old)), Some(Value::Object(new))) => {
                let mut keys: Vec<&String> = old
                    .keys()
                    .chain(new.keys())
                    .collect::<BTreeSet<_>>()
                    .into_iter()
                    .collect();
                if path.is_empty() {
                    // What the object is about first, its metadata after.
                    keys.sort_by_key(|k| *k == "metadata");
                }
                for key in keys {
                    path.push(key.clone());
                    self.diff(path, old.get(key), new.get(key), out);
                    path.pop();
                }
            }
            (Some(Value::Array(old)), Some(Value::Array(new))) => {
                for i in 0..old.len().max(new.len()) {
                    path.push(i.to_string());
                    self.diff(path, old.get(i), new.get(i), out);
                    path.pop();
                }
            }
            (old, new) if old != new => out.push(FieldChange {
                path: path.join("."),
                old,
                new,
            }),
            _ => {}
        }
    }
}

/// One field that differs between the old and the new object.
struct FieldChange<'v> {
    path: String,
    old: Option<&'v Value>,
    new: Option<&'v Value>,
}

impl fmt::Display for FieldChange<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.old, self.new) {
            (None, _) => write!(f, "{} added", self.path),
            (_, None) => write!(f, "{} removed", self.path),
            (Some(old), Some(new)) => write!(f, "{} {} → {}", self.path, short(old), short(new)),
        }
    }
}

/// A value as a person reads it: strings bare, the rest as compact JSON,
/// cut at [`MAX_VALUE_CHARS`].
fn short(value: &Value) -> String {
    let text = match value {
        Value::String(s) if !s.is_empty() => s.clone(),
        other => other.to_string(),
    };
    if text.chars().count() > MAX_VALUE_CHARS {
        let cut: String = text.chars().take(MAX_VALUE_CHARS - 1).collect();
        format!("{cut}…")
    } else {
        text
    }
}

/// Slack's control characters in message text.
fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

grw_sdk::export_notifier!(ChatNotifier);

#[cfg(test)]
mod tests;
