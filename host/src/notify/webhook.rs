//! Webhook deliveries: one HTTP POST per delivery.
//!
//! Headers of every request:
//! - `GRW-Delivery-Id`: `uid/resourceVersion/TYPE`, the same on every attempt;
//! - `GRW-Event-Type`, `GRW-Group` (`core` for the core group), `GRW-Version`,
//!   `GRW-Kind`, `GRW-Namespace`, `GRW-Name`, `GRW-Subscription`;
//! - with a secret: `GRW-Timestamp` (Unix seconds) and `GRW-Signature:
//!   sha256=<hex>`, the HMAC-SHA256 of `<timestamp>.<body>` under the secret;
//! - with `consoleUrl`: `GRW-Console-Link`, the object's page in the web
//!   console.
//!
//! Answers: 2xx is delivered; connection errors, timeouts, 408, 429 and 5xx
//! are retried (honouring `Retry-After` in seconds); any other status
//! (including redirects, which are not followed) goes to the dead letters.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use hmac::{Hmac, Mac};
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, RETRY_AFTER};
use sha2::Sha256;

use super::payload::console_link;
use super::sink::{Delivery, Rejection, SendError};
use super::subscription::PayloadFormat;

/// Longest `Retry-After` honoured: a receiver asking for a day is retried after an hour.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(3600);

/// Characters of a refusing receiver's body kept in the reason.
const BODY_EXCERPT_CHARS: usize = 200;

/// A webhook destination that cannot be sent to.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    /// The URL does not parse.
    #[error("invalid URL {url:?}")]
    Url {
        /// The URL.
        url: String,
        /// Why.
        #[source]
        source: url::ParseError,
    },
    /// A header name that is not one.
    #[error("{0:?} is not a valid header name")]
    HeaderName(String),
    /// A header value HTTP cannot carry.
    #[error("{0:?} cannot be sent as a header value")]
    HeaderValue(String),
}

/// One webhook destination.
pub struct Webhook {
    client: reqwest::Client,
    url: reqwest::Url,
    headers: HeaderMap,
    secret: Option<Vec<u8>>,
    timeout: Duration,
    /// `consoleUrl`, without a trailing `/`.
    console: Option<Arc<str>>,
}

impl Webhook {
    /// A destination; `client` is shared by every webhook (one connection pool).
    pub fn new(
        client: reqwest::Client,
        subscription: &str,
        url: &str,
        extra_headers: &[(String, String)],
        secret: Option<&str>,
        timeout: Duration,
        payload: PayloadFormat,
    ) -> Result<Webhook, WebhookError> {
        let url = reqwest::Url::parse(url).map_err(|source| WebhookError::Url {
            url: url.to_string(),
            source,
        })?;
        let mut headers = HeaderMap::new();
        let content_type = match payload {
            PayloadFormat::CloudEvents => "application/cloudevents+json",
            PayloadFormat::Grw | PayloadFormat::WatchEvent => "application/json",
        };
        headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
        headers.insert("grw-subscription", value(subscription)?);
        for (name, v) in extra_headers {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| WebhookError::HeaderName(name.clone()))?;
            headers.insert(name, value(v)?);
        }
        Ok(Webhook {
            client,
            url,
            headers,
            secret: secret.map(|s| s.as_bytes().to_vec()),
            timeout,
            console: None,
        })
    }

    /// Sends the link to each changed object's page in the web console at
    /// `base` (`consoleUrl`, without a trailing `/`) in `GRW-Console-Link`.
    pub fn with_console(mut self, base: Option<Arc<str>>) -> Webhook {
        self.console = base;
        self
    }

    /// Posts one delivery.
    pub async fn send(&self, delivery: &Delivery) -> Result<(), SendError> {
        let mut headers = self.headers.clone();
        let text_headers = [
            ("grw-delivery-id", delivery.id.as_str()),
            ("grw-event-type", delivery.event_type.as_str()),
            ("grw-group", delivery.gvk.group_or_core()),
            ("grw-version", delivery.gvk.version.as_str()),
            ("grw-kind", delivery.gvk.kind.as_str()),
            ("grw-namespace", delivery.namespace.as_str()),
            ("grw-name", delivery.name.as_str()),
        ];
        for (name, v) in text_headers {
            headers.insert(name, value(v).map_err(Rejection::from)?);
        }
        if let Some(base) = &self.console {
            let link = console_link(base, &delivery.gvk, &delivery.namespace, &delivery.name);
            headers.insert("grw-console-link", value(&link).map_err(Rejection::from)?);
        }
        if let Some(secret) = &self.secret {
            let timestamp = SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_secs())
                .to_string();
            headers.insert("grw-timestamp", value(&timestamp).map_err(Rejection::from)?);
            let signature = format!("sha256={}", sign(secret, &timestamp, &delivery.payload));
            headers.insert("grw-signature", value(&signature).map_err(Rejection::from)?);
        }
        let response = self
            .client
            .post(self.url.clone())
            .headers(headers)
            .timeout(self.timeout)
            .body(delivery.payload.clone())
            .send()
            .await
            .map_err(|e| SendError::retry(describe(&e)))?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let retry_after = response
            .headers()
            .get(RETRY_AFTER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(|s| Duration::from_secs(s).min(MAX_RETRY_AFTER));
        let body = response.text().await.unwrap_or_default();
        let excerpt: String = body.chars().take(BODY_EXCERPT_CHARS).collect();
        let reason = if excerpt.trim().is_empty() {
            format!("the receiver answered {status}")
        } else {
            format!("the receiver answered {status}: {}", excerpt.trim())
        };
        if retryable(status) {
            Err(SendError::Retry {
                reason,
                after: retry_after,
            })
        } else if status.is_redirection() {
            Err(Rejection::Redirected(reason).into())
        } else {
            Err(Rejection::Refused(reason).into())
        }
    }
}

/// Whether an answer with this status may succeed later.
pub fn retryable(status: StatusCode) -> bool {
    status.is_server_error()
        || status == StatusCode::REQUEST_TIMEOUT
        || status == StatusCode::TOO_MANY_REQUESTS
}

/// The client every webhook shares: no redirects, connection reuse.
pub fn client() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .connect_timeout(Duration::from_secs(10))
        .pool_idle_timeout(Duration::from_secs(60))
        .user_agent(concat!("grw/", env!("CARGO_PKG_VERSION")))
        .build()
        .unwrap_or_default()
}

/// Hex HMAC-SHA256 of `timestamp.body`.
pub fn sign(secret: &[u8], timestamp: &str, body: &[u8]) -> String {
    let Ok(mut mac) = Hmac::<Sha256>::new_from_slice(secret) else {
        // HMAC takes keys of any length; this branch cannot run.
        return String::new();
    };
    mac.update(timestamp.as_bytes());
    mac.update(b".");
    mac.update(body);
    mac.finalize()
        .into_bytes()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn value(v: &str) -> Result<HeaderValue, WebhookError> {
    HeaderValue::from_str(v).map_err(|_| WebhookError::HeaderValue(v.to_string()))
}

fn describe(e: &reqwest::Error) -> String {
    if e.is_timeout() {
        "the receiver did not answer in time".into()
    } else if e.is_connect() {
        format!("cannot connect to the receiver: {}", root_cause(e))
    } else {
        format!("request failed: {}", root_cause(e))
    }
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = e;
    while let Some(next) = cause.source() {
        cause = next;
    }
    cause.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retryable_statuses() {
        for (code, retry) in [
            (500, true),
            (503, true),
            (408, true),
            (429, true),
            (400, false),
            (404, false),
            (410, false),
            (301, false),
        ] {
            assert_eq!(
                retryable(StatusCode::from_u16(code).unwrap()),
                retry,
                "{code}"
            );
        }
    }

    #[test]
    fn signature_is_hmac_sha256_of_timestamp_and_body() {
        // Computed independently: Python's hmac.new(b"s3cret", b'1700000000.{"a":1}', sha256).
        assert_eq!(
            sign(b"s3cret", "1700000000", br#"{"a":1}"#),
            "1698a50bc74d1ff1db85c4e0a5297c2ad9fdba245d5737cdb789e4cc6e098940"
        );
    }
}
