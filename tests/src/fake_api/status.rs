//! `Status` error bodies and JSON responses.

use axum::body::Body;
use axum::response::Response;
use http::{HeaderValue, StatusCode, header};
use serde_json::{Value, json};

/// The `reason` a real API server uses for an HTTP status code.
pub(crate) fn reason_for(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        406 => "NotAcceptable",
        409 => "Conflict",
        410 => "Expired",
        415 => "UnsupportedMediaType",
        422 => "Invalid",
        429 => "TooManyRequests",
        500 => "InternalError",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        _ => "Unknown",
    }
}

/// A `Status` object with `status: Failure`.
pub(crate) fn status_body(code: u16, reason: &str, message: &str) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    })
}

/// A response carrying a JSON body.
pub(crate) fn json_response(code: u16, body: impl Into<Body>) -> Response {
    let mut response = Response::new(body.into());
    *response.status_mut() =
        StatusCode::from_u16(code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A JSON response from a value.
pub(crate) fn value_response(code: u16, value: &Value) -> Response {
    json_response(code, value.to_string())
}

/// A failure response with a `Status` body; 429 and 503 also get `Retry-After`.
pub(crate) fn status_response(code: u16, reason: &str, message: &str) -> Response {
    let mut response = value_response(code, &status_body(code, reason, message));
    if matches!(code, 429 | 503) {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    }
    response
}

/// A failure response whose reason follows from the code.
pub(crate) fn error_response(code: u16, message: &str) -> Response {
    status_response(code, reason_for(code), message)
}

/// 404 for a path no resource is served at.
pub(crate) fn not_found() -> Response {
    error_response(404, "the server could not find the requested resource")
}
