//! Error answers of the native API: `{"code", "reason", "message"}` with the
//! HTTP status as `code`. Messages say what was wrong in the request; they
//! never carry internals.

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::query::PoolError;

/// An error answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// HTTP status.
    pub status: StatusCode,
    /// Short machine-readable cause, e.g. `InvalidSelector`.
    pub reason: &'static str,
    /// What was wrong, for people.
    pub message: String,
    /// Seconds after which trying again may succeed (`Retry-After`).
    pub retry_after: Option<u64>,
}

impl Problem {
    /// A problem with any status.
    pub fn new(status: StatusCode, reason: &'static str, message: impl Into<String>) -> Self {
        Problem {
            status,
            reason,
            message: message.into(),
            retry_after: None,
        }
    }

    /// The same problem with a `Retry-After` of `seconds`.
    pub fn retry_after(self, seconds: u64) -> Self {
        Problem {
            retry_after: Some(seconds),
            ..self
        }
    }

    /// 400 with a reason.
    pub fn bad_request(reason: &'static str, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, reason, message)
    }

    /// 404.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, "NotFound", message)
    }
}

impl IntoResponse for Problem {
    fn into_response(self) -> Response {
        let body = json!({
            "code": self.status.as_u16(),
            "reason": self.reason,
            "message": self.message,
        });
        let mut response = (self.status, Json(body)).into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        response
    }
}

/// A query the pool did not answer: 429 when it is busy (as the API
/// server's priority and fairness answers), 504 when the query spent its
/// budget (as its request timeout does), 400 when its `match=` spent its
/// cost limit on an object.
impl From<PoolError> for Problem {
    fn from(error: PoolError) -> Problem {
        let (status, reason) = match &error {
            PoolError::Busy { .. } => (StatusCode::TOO_MANY_REQUESTS, "TooManyRequests"),
            PoolError::OverBudget(_) => (StatusCode::GATEWAY_TIMEOUT, "Timeout"),
            PoolError::MatchTooCostly(_) => (StatusCode::BAD_REQUEST, "InvalidParameter"),
            PoolError::Failed => (StatusCode::INTERNAL_SERVER_ERROR, "InternalError"),
        };
        let problem = Problem::new(status, reason, error.to_string());
        match error {
            PoolError::Busy { .. } => problem.retry_after(1),
            _ => problem,
        }
    }
}
