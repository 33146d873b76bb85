//! Outbound HTTP for notifiers.

use std::borrow::Cow;
use std::fmt;

use crate::Error;

/// An HTTP request a notifier sends through GRW.
///
/// ```
/// use grw_sdk::HttpRequest;
///
/// let request = HttpRequest::post("https://hooks.example.com/grw")
///     .header("authorization", "Bearer t0ken")
///     .json(&serde_json::json!({"text": "deployment web changed"}))?;
/// assert_eq!(request.method, "POST");
/// # Ok::<(), grw_sdk::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpRequest {
    /// Method, e.g. `POST`.
    pub method: String,
    /// Absolute URL. Its host must be allowed by both the plugin's manifest
    /// and the operator.
    pub url: String,
    /// Header names and values, in order.
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl HttpRequest {
    /// A request with no headers and an empty body.
    pub fn new(method: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            method: method.into(),
            url: url.into(),
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// A `GET` request.
    pub fn get(url: impl Into<String>) -> Self {
        Self::new("GET", url)
    }

    /// A `POST` request.
    pub fn post(url: impl Into<String>) -> Self {
        Self::new("POST", url)
    }

    /// A `PUT` request.
    pub fn put(url: impl Into<String>) -> Self {
        Self::new("PUT", url)
    }

    /// Adds a header.
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Sets the body.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self
    }

    /// Sets a JSON body and the `content-type: application/json` header.
    pub fn json<T: serde::Serialize + ?Sized>(self, value: &T) -> Result<Self, Error> {
        let body = serde_json::to_vec(value)
            .map_err(|e| Error::new(format!("cannot encode JSON body: {e}")))?;
        Ok(self.header("content-type", "application/json").body(body))
    }
}

/// The response to an [`HttpRequest`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpResponse {
    /// Status code.
    pub status: u16,
    /// Header names and values, in order.
    pub headers: Vec<(String, String)>,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// A response with the given status, no headers and an empty body.
    pub fn new(status: u16) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Vec::new(),
        }
    }

    /// The same response with `body`.
    pub fn with_body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = body.into();
        self
    }

    /// The first value of a header; names compare case-insensitively.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Whether the status is 2xx.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as text, with invalid UTF-8 replaced.
    pub fn text(&self) -> Cow<'_, str> {
        String::from_utf8_lossy(&self.body)
    }

    /// Turns a failure status into the matching [`DeliveryError`]: 408, 429
    /// and 5xx are worth retrying, other 4xx are not. Any other status
    /// (2xx, and 1xx/3xx that reached the plugin) returns the response.
    pub fn error_for_status(self) -> Result<Self, DeliveryError> {
        let status = self.status;
        let reason = || {
            let text = self.text();
            let text = text.trim();
            if text.is_empty() {
                format!("receiver answered {status}")
            } else {
                let short: String = text.chars().take(200).collect();
                format!("receiver answered {status}: {short}")
            }
        };
        match status {
            408 | 429 | 500..=599 => Err(DeliveryError::Retry(reason())),
            400..=499 => Err(DeliveryError::GiveUp(reason())),
            _ => Ok(self),
        }
    }
}

/// Why a delivery failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeliveryError {
    /// Worth trying again later (receiver down, 5xx, timeout).
    Retry(String),
    /// Will never succeed (rejected as invalid).
    GiveUp(String),
}

impl DeliveryError {
    /// The reason, whichever the variant.
    pub fn message(&self) -> &str {
        match self {
            DeliveryError::Retry(m) | DeliveryError::GiveUp(m) => m,
        }
    }
}

impl fmt::Display for DeliveryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeliveryError::Retry(m) => write!(f, "delivery failed, will retry: {m}"),
            DeliveryError::GiveUp(m) => write!(f, "delivery failed for good: {m}"),
        }
    }
}

impl std::error::Error for DeliveryError {}

/// Outbound HTTP, as GRW grants it to notifiers.
///
/// Inside GRW, requests go through the host, which enforces the allowed
/// hosts and timeouts. In unit tests, pass a [`crate::testing::RecordingHttp`].
pub trait Http {
    /// Sends a request. An error says why it could not be sent (host not
    /// allowed, connection refused, timeout); a response with an error
    /// status is not an error here (see [`HttpResponse::error_for_status`]).
    fn send(&self, request: &HttpRequest) -> Result<HttpResponse, String>;

    /// Sends a request and judges the outcome as most notifiers want:
    /// - a 2xx response is returned;
    /// - a failure to send (refused host, connection error, timeout) and
    ///   408, 429 and 5xx answers are [`DeliveryError::Retry`]: they may pass later;
    /// - any other status is [`DeliveryError::GiveUp`]: other 4xx will not
    ///   change by retrying, and GRW does not follow redirects, so a 3xx
    ///   means the configured URL needs fixing.
    ///
    /// The error of a failure to send is the host's message as it is.
    ///
    /// ```
    /// use grw_sdk::{DeliveryError, Http, HttpRequest, HttpResponse};
    /// use grw_sdk::testing::RecordingHttp;
    ///
    /// let http = RecordingHttp::new()
    ///     .respond(HttpResponse::new(503))
    ///     .respond(HttpResponse::new(301));
    /// let request = HttpRequest::post("https://hooks.example.com/grw");
    /// assert!(matches!(http.deliver(&request), Err(DeliveryError::Retry(_))));
    /// assert!(matches!(http.deliver(&request), Err(DeliveryError::GiveUp(_))));
    /// assert_eq!(http.deliver(&request).unwrap().status, 200);
    /// ```
    fn deliver(&self, request: &HttpRequest) -> Result<HttpResponse, DeliveryError> {
        let response = self
            .send(request)
            .map_err(DeliveryError::Retry)?
            .error_for_status()?;
        if response.is_success() {
            Ok(response)
        } else {
            Err(DeliveryError::GiveUp(format!(
                "receiver answered {}; GRW does not follow redirects, so point the plugin at the final URL",
                response.status
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_builder() {
        let request = HttpRequest::put("http://x/y")
            .header("a", "1")
            .json(&serde_json::json!({"k": 1}))
            .unwrap();
        assert_eq!(request.method, "PUT");
        assert_eq!(request.url, "http://x/y");
        assert_eq!(
            request.headers,
            vec![
                ("a".into(), "1".into()),
                ("content-type".into(), "application/json".into())
            ]
        );
        assert_eq!(request.body, br#"{"k":1}"#);
        assert_eq!(HttpRequest::get("u").body("b").body, b"b");
    }

    #[test]
    fn response_status_mapping() {
        assert!(HttpResponse::new(204).error_for_status().is_ok());
        assert!(matches!(
            HttpResponse::new(503).error_for_status(),
            Err(DeliveryError::Retry(_))
        ));
        assert!(matches!(
            HttpResponse::new(429).error_for_status(),
            Err(DeliveryError::Retry(_))
        ));
        let e = HttpResponse::new(400)
            .with_body("bad field")
            .error_for_status()
            .unwrap_err();
        assert_eq!(
            e,
            DeliveryError::GiveUp("receiver answered 400: bad field".into())
        );
        assert_eq!(e.message(), "receiver answered 400: bad field");
    }

    /// Answers every request with one status, or fails to send.
    struct Fixed(Result<u16, &'static str>);

    impl Http for Fixed {
        fn send(&self, _request: &HttpRequest) -> Result<HttpResponse, String> {
            self.0
                .map(|status| HttpResponse::new(status).with_body("why"))
                .map_err(String::from)
        }
    }

    #[test]
    fn deliver_judges_the_outcome() {
        let request = HttpRequest::post("http://hook");
        let outcome = |answer| Fixed(answer).deliver(&request);
        assert_eq!(outcome(Ok(200)).unwrap().status, 200);
        assert_eq!(outcome(Ok(204)).unwrap().status, 204);
        for status in [408, 429, 500, 503] {
            assert_eq!(
                outcome(Ok(status)),
                Err(DeliveryError::Retry(format!(
                    "receiver answered {status}: why"
                )))
            );
        }
        assert_eq!(
            outcome(Err("host x:443 is not allowed: ...")),
            Err(DeliveryError::Retry(
                "host x:443 is not allowed: ...".into()
            ))
        );
        assert_eq!(
            outcome(Ok(404)),
            Err(DeliveryError::GiveUp("receiver answered 404: why".into()))
        );
        let redirect = outcome(Ok(302)).unwrap_err();
        assert!(
            matches!(&redirect, DeliveryError::GiveUp(m) if m.starts_with("receiver answered 302; GRW does not follow redirects")),
            "{redirect:?}"
        );
    }

    #[test]
    fn response_helpers() {
        let mut response = HttpResponse::new(200).with_body("ok");
        response
            .headers
            .push(("Content-Type".into(), "text/plain".into()));
        assert!(response.is_success());
        assert_eq!(response.header("content-type"), Some("text/plain"));
        assert_eq!(response.text(), "ok");
    }
}
