//! `/openapi/v2`, `/openapi/v3` and v3's documents per group version: the
//! API server's own, so that `kubectl explain` (and clients that validate
//! against the schemas) work through GRW as against the cluster.
//!
//! Each document is fetched with GRW's credentials the first time it is
//! asked for, in the representation asked (JSON, or protobuf when the
//! client's `Accept` names it), and kept, by its path alone: v3's `hash`
//! parameter only tells clients' caches apart, and a query a caller makes
//! up must not make GRW fetch and hold another copy. So what GRW holds is
//! at most the API server's documents, twice. Once discovery's interval
//! (`apiGroupsSyncIntervalSecond`) has passed it is asked again with the
//! ETag the API server gave, and a `304` keeps it: a CRD added changes
//! the documents as it changes discovery. v3's index names each document
//! with a hash, so that a client asks a changed one anew. The API server's
//! answer is passed on as it is, its status too (a `404` for a group
//! version it does not serve); only `200`s are kept. A replay has no API
//! server: `404` saying so.

use std::collections::HashMap;
use std::sync::LazyLock;
use std::time::Instant;

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use parking_lot::Mutex;

use super::status::{KubeError, Status};
use crate::api::AppState;

/// One document as the API server answered it.
#[derive(Clone)]
struct Kept {
    body: Bytes,
    content_type: Option<HeaderValue>,
    etag: Option<HeaderValue>,
    fetched: Instant,
}

/// By path, and the media type fetched.
type Documents = Mutex<HashMap<(String, &'static str), Kept>>;

static DOCUMENTS: LazyLock<Documents> = LazyLock::new(Documents::default);

/// The media type to fetch `raw` in for a client that accepts `accept`.
fn media_type(raw: &str, accept: &str) -> &'static str {
    match (accept.contains("protobuf"), raw.starts_with("/openapi/v2")) {
        (false, _) => "application/json",
        (true, true) => "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
        (true, false) => "application/com.github.proto-openapi.spec.v3@v1.0+protobuf",
    }
}

/// Answers `raw` (`/openapi/v2`, `/openapi/v3[/...]`), whatever its query.
pub(super) async fn serve(
    state: &AppState,
    raw: &str,
    headers: &HeaderMap,
) -> Result<Response, KubeError> {
    let Some(client) = &state.client else {
        return Err(Status::new(
            StatusCode::NOT_FOUND,
            "NotFound",
            "GRW serves the API server's OpenAPI documents, and a replay has no API server",
        )
        .into());
    };
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let key = (raw.to_string(), media_type(raw, accept));
    let kept = DOCUMENTS.lock().get(&key).cloned();
    let fresh_for = state.config.api_groups_sync_interval;
    let document = match kept {
        Some(kept) if kept.fetched.elapsed() < fresh_for => kept,
        kept => {
            let etag = kept
                .as_ref()
                .and_then(|k| k.etag.as_ref())
                .and_then(|e| e.to_str().ok());
            let (status, answer, body) =
                client.get_raw(&key.0, key.1, etag).await.map_err(|e| {
                    Status::unavailable(format!(
                        "the API server's OpenAPI document {} cannot be read: {}",
                        key.0,
                        crate::error::Report(&e)
                    ))
                })?;
            match (status, kept) {
                (StatusCode::NOT_MODIFIED, Some(kept)) => keep(
                    key,
                    Kept {
                        fetched: Instant::now(),
                        ..kept
                    },
                ),
                (StatusCode::OK, _) => keep(
                    key,
                    Kept {
                        body,
                        content_type: answer.get(header::CONTENT_TYPE).cloned(),
                        etag: answer.get(header::ETAG).cloned(),
                        fetched: Instant::now(),
                    },
                ),
                // Passed on as it is.
                (status, _) => {
                    let mut response = (status, body).into_response();
                    if let Some(content_type) = answer.get(header::CONTENT_TYPE) {
                        response
                            .headers_mut()
                            .insert(header::CONTENT_TYPE, content_type.clone());
                    }
                    return Ok(response);
                }
            }
        }
    };
    let same = |etag: &HeaderValue| {
        headers
            .get(header::IF_NONE_MATCH)
            .is_some_and(|asked| asked == etag)
    };
    let mut response = match &document.etag {
        Some(etag) if same(etag) => StatusCode::NOT_MODIFIED.into_response(),
        _ => (StatusCode::OK, document.body.clone()).into_response(),
    };
    let out = response.headers_mut();
    if let Some(content_type) = document.content_type {
        out.insert(header::CONTENT_TYPE, content_type);
    }
    if let Some(etag) = document.etag {
        out.insert(header::ETAG, etag);
    }
    Ok(response)
}

fn keep(key: (String, &'static str), document: Kept) -> Kept {
    DOCUMENTS.lock().insert(key, document.clone());
    document
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_fetched_as_json_or_as_the_protobuf_of_their_version() {
        let json = "application/json";
        assert_eq!(media_type("/openapi/v3/api/v1", json), json);
        assert_eq!(media_type("/openapi/v2", ""), json);
        assert_eq!(media_type("/openapi/v2", "*/*"), json);
        assert_eq!(
            media_type(
                "/openapi/v2",
                "application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json"
            ),
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
        );
        // A made-up type is not passed on.
        assert_eq!(
            media_type("/openapi/v3/apis/apps/v1", "text/x-protobuf-anything"),
            "application/com.github.proto-openapi.spec.v3@v1.0+protobuf"
        );
    }
}
