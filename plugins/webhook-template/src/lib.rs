//! # webhook-template
//!
//! A GRW notifier that sends each change to an HTTP endpoint, with the URL,
//! headers and body written as templates.
//!
//! ## Configuration
//!
//! ```json
//! {
//!   "url": "https://hooks.example.com/grw/{{namespace}}/{{name}}",
//!   "method": "POST",
//!   "headers": {"authorization": "Bearer s3cret", "x-grw-event": "{{type}}"},
//!   "body": "{\"event\": \"{{type}}\", \"image\": \"{{object.spec.template.spec.containers.0.image}}\", \"object\": {{object}}}"
//! }
//! ```
//!
//! - `url` (string, required): `http://` or `https://`. Its host must be in
//!   the manifest's `allowedHosts` and in GRW's `pluginAllowedHosts`.
//!   Values put into the URL are percent-encoded.
//! - `method` (string, default `POST`): `GET`, `POST`, `PUT`, `PATCH` or `DELETE`.
//! - `headers` (object of strings, default none): sent as given, with
//!   placeholders filled in. `content-type: application/json` is added when
//!   there is a body and no `content-type` header.
//! - `body` (string): the request body. Default: for `GET` and `DELETE`
//!   none, otherwise a watch event, `{"type":"{{type}}","object":{{object}}}`.
//!
//! ## Placeholders
//!
//! | placeholder | value |
//! |---|---|
//! | `{{type}}` | `ADDED`, `MODIFIED` or `DELETED` |
//! | `{{origin}}` | where the change came from: `initial` (the first list), `watch` (a watch event) or `relist` (found by listing again after a watch could not resume) |
//! | `{{group}}`, `{{version}}`, `{{kind}}` | the object's kind; `group` is empty for the core group |
//! | `{{namespace}}`, `{{name}}`, `{{uid}}`, `{{resourceVersion}}` | from the object's metadata; `namespace` is empty for cluster-scoped objects |
//! | `{{object}}` | the object as JSON (its last state when deleted) |
//! | `{{oldObject}}` | the previous state as JSON for `MODIFIED` events, else `null` |
//! | `{{object.<path>}}`, `{{oldObject.<path>}}` | the value at a dotted path (`spec.replicas`, `spec.containers.0.image`) or, written `{{object/<pointer>}}`, a JSON pointer (`{{object/metadata/labels/app.kubernetes.io~1name}}`): a string as it is (no quotes), anything else as JSON; empty when the field is missing |
//!
//! Spaces inside the braces are allowed (`{{ name }}`). Values are inserted
//! as they are, without escaping: inside a JSON string, use placeholders
//! whose values cannot contain quotes (the metadata ones), or insert
//! structured values bare (`"labels": {{object.metadata.labels}}`).
//! An unknown placeholder or an unclosed `{{` is rejected at load, naming
//! the config key.
//!
//! ## Delivery
//!
//! 2xx is delivered; 408, 429, 5xx and failures to connect are retried;
//! other answers (4xx, redirects) are given up, and so is a header whose
//! value, once filled in, contains a line break.

use std::borrow::Cow;
use std::collections::BTreeMap;

use grw_sdk::{DeliveryError, Event, FieldPath, Http, HttpRequest, Interest, Notifier};
use serde::Deserialize;

/// The notifier, its templates parsed.
#[derive(Debug)]
pub struct WebhookTemplate {
    method: String,
    url: Template,
    headers: Vec<(String, Template)>,
    body: Template,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Config {
    url: String,
    #[serde(default = "default_method")]
    method: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    body: Option<String>,
}

fn default_method() -> String {
    "POST".into()
}

const METHODS: [&str; 5] = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/// The body sent when none is configured: the shape of a watch event.
const DEFAULT_BODY: &str = r#"{"type":"{{type}}","object":{{object}}}"#;

impl Notifier for WebhookTemplate {
    fn init(config: &str) -> Result<(Self, Interest), String> {
        let config: Config = grw_sdk::parse_config(config)?;
        let method = config.method.to_ascii_uppercase();
        if !METHODS.contains(&method.as_str()) {
            return Err(format!(
                "config key `method`: expected one of {}, got {:?}",
                METHODS.join(", "),
                config.method
            ));
        }
        if !(config.url.starts_with("https://") || config.url.starts_with("http://")) {
            return Err(format!(
                "config key `url`: expected an http:// or https:// URL, got {:?}",
                config.url
            ));
        }
        let parse = |key: &str, text: &str| {
            Template::parse(text).map_err(|e| format!("config key `{key}`: {e}"))
        };
        let body = match (&config.body, method.as_str()) {
            (Some(body), _) => body.as_str(),
            (None, "GET" | "DELETE") => "",
            (None, _) => DEFAULT_BODY,
        };
        let notifier = WebhookTemplate {
            url: parse("url", &config.url)?,
            headers: config
                .headers
                .iter()
                .map(|(name, value)| Ok((name.clone(), parse(&format!("headers.{name}"), value)?)))
                .collect::<Result<_, String>>()?,
            body: parse("body", body)?,
            method,
        };
        Ok((notifier, Interest::all()))
    }

    fn deliver(&self, event: &Event, http: &dyn Http) -> Result<(), DeliveryError> {
        let request = self.request(event)?;
        http.deliver(&request).map(drop)
    }
}

impl WebhookTemplate {
    /// The request for `event`; an error when a header value would contain
    /// a line break or another control character.
    pub fn request(&self, event: &Event) -> Result<HttpRequest, DeliveryError> {
        let mut request =
            HttpRequest::new(self.method.as_str(), self.url.render(event, percent_encode));
        for (name, template) in &self.headers {
            let value = template.render(event, as_is);
            if value.chars().any(char::is_control) {
                return Err(DeliveryError::GiveUp(format!(
                    "header `{name}` would contain a line break or another control character once filled in"
                )));
            }
            request = request.header(name.as_str(), value);
        }
        let body = self.body.render(event, as_is);
        if !body.is_empty() {
            if !request
                .headers
                .iter()
                .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            {
                request = request.header("content-type", "application/json");
            }
            request = request.body(body);
        }
        Ok(request)
    }
}

/// A string with `{{placeholder}}`s, parsed once.
#[derive(Debug, PartialEq)]
struct Template(Vec<Piece>);

#[derive(Debug, PartialEq)]
enum Piece {
    Text(String),
    Value(Placeholder),
}

#[derive(Debug, PartialEq)]
enum Placeholder {
    Type,
    Origin,
    Group,
    Version,
    Kind,
    Namespace,
    Name,
    Uid,
    ResourceVersion,
    Object,
    OldObject,
    ObjectField(FieldPath),
    OldObjectField(FieldPath),
}

const KNOWN: &str = "{{type}}, {{origin}}, {{group}}, {{version}}, {{kind}}, {{namespace}}, {{name}}, {{uid}}, {{resourceVersion}}, {{object}}, {{oldObject}}, {{object.<path>}}, {{oldObject.<path>}}";

impl Template {
    fn parse(text: &str) -> Result<Template, String> {
        let mut pieces = Vec::new();
        let mut rest = text;
        while let Some(open) = rest.find("{{") {
            if open > 0 {
                pieces.push(Piece::Text(rest[..open].to_string()));
            }
            let after = &rest[open + 2..];
            let close = after.find("}}").ok_or_else(|| {
                format!(
                    "`{{{{` at position {} is never closed with `}}}}`",
                    text.len() - rest.len() + open
                )
            })?;
            pieces.push(Piece::Value(Placeholder::parse(after[..close].trim())?));
            rest = &after[close + 2..];
        }
        if !rest.is_empty() {
            pieces.push(Piece::Text(rest.to_string()));
        }
        Ok(Template(pieces))
    }

    /// The text with every placeholder filled in from `event`, each value
    /// passed through `encode`.
    fn render(&self, event: &Event, encode: fn(&str) -> Cow<'_, str>) -> String {
        let mut out = String::new();
        for piece in &self.0 {
            match piece {
                Piece::Text(text) => out.push_str(text),
                Piece::Value(placeholder) => out.push_str(&encode(&placeholder.value(event))),
            }
        }
        out
    }
}

impl Placeholder {
    fn parse(name: &str) -> Result<Placeholder, String> {
        let field = |rest: &str| -> Option<Result<FieldPath, String>> {
            let path = rest
                .strip_prefix('.')
                .or_else(|| rest.starts_with('/').then_some(rest))?;
            Some(FieldPath::parse(path).map_err(|e| format!("placeholder `{{{{{name}}}}}`: {e}")))
        };
        Ok(match name {
            "type" => Placeholder::Type,
            "origin" => Placeholder::Origin,
            "group" => Placeholder::Group,
            "version" => Placeholder::Version,
            "kind" => Placeholder::Kind,
            "namespace" => Placeholder::Namespace,
            "name" => Placeholder::Name,
            "uid" => Placeholder::Uid,
            "resourceVersion" => Placeholder::ResourceVersion,
            "object" => Placeholder::Object,
            "oldObject" => Placeholder::OldObject,
            _ => {
                if let Some(path) = name.strip_prefix("oldObject").and_then(field) {
                    Placeholder::OldObjectField(path?)
                } else if let Some(path) = name.strip_prefix("object").and_then(field) {
                    Placeholder::ObjectField(path?)
                } else {
                    return Err(format!(
                        "unknown placeholder `{{{{{name}}}}}`; known: {KNOWN}"
                    ));
                }
            }
        })
    }

    fn value<'e>(&self, event: &'e Event) -> Cow<'e, str> {
        // One field is fetched alone: the object is not copied whole for it.
        let field = |value: Option<serde_json::Value>| -> Cow<'e, str> {
            match value {
                Some(serde_json::Value::String(s)) => Cow::Owned(s),
                Some(other) => Cow::Owned(other.to_string()),
                None => Cow::Borrowed(""),
            }
        };
        match self {
            Placeholder::Type => Cow::Borrowed(event.event_type.as_str()),
            Placeholder::Origin => Cow::Borrowed(event.origin.as_str()),
            Placeholder::Group => Cow::Borrowed(&event.gvk().group),
            Placeholder::Version => Cow::Borrowed(&event.gvk().version),
            Placeholder::Kind => Cow::Borrowed(&event.gvk().kind),
            Placeholder::Namespace => Cow::Borrowed(event.namespace()),
            Placeholder::Name => Cow::Borrowed(event.name()),
            Placeholder::Uid => Cow::Borrowed(event.uid()),
            Placeholder::ResourceVersion => Cow::Borrowed(event.resource_version()),
            Placeholder::Object => Cow::Borrowed(event.object_json()),
            Placeholder::OldObject => Cow::Borrowed(event.old_object_json().unwrap_or("null")),
            Placeholder::ObjectField(path) => field(event.field(path)),
            Placeholder::OldObjectField(path) => field(event.old_field(path)),
        }
    }
}

/// Leaves a value as it is (headers and body).
fn as_is(value: &str) -> Cow<'_, str> {
    Cow::Borrowed(value)
}

/// Percent-encodes all but the URL-safe characters (`A-Z a-z 0-9 - . _ ~`).
fn percent_encode(value: &str) -> Cow<'_, str> {
    let safe = |b: u8| b.is_ascii_alphanumeric() || b"-._~".contains(&b);
    if value.bytes().all(safe) {
        return Cow::Borrowed(value);
    }
    let mut out = String::with_capacity(value.len() * 3);
    for b in value.bytes() {
        if safe(b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    Cow::Owned(out)
}

grw_sdk::export_notifier!(WebhookTemplate);

#[cfg(test)]
mod tests;
