//! `/openapi/v2`, `/openapi/v3` and v3's documents per group version: the
//! API server's own, so that `kubectl explain` (and clients that validate
//! against the schemas) work through GRW as against the cluster.
//!
//! Each document is fetched with GRW's credentials the first time it is
//! asked for, in the representation asked (`Accept`: v2 is JSON or
//! protobuf), and kept. Once discovery's interval
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

/// Documents kept, past which all are fetched again as asked.
const KEPT: usize = 512;

/// One document as the API server answered it.
#[derive(Clone)]
struct Kept {
    body: Bytes,
    content_type: Option<HeaderValue>,
    etag: Option<HeaderValue>,
    fetched: Instant,
}

/// By path and query, and `Accept`.
type Documents = Mutex<HashMap<(String, String), Kept>>;

static DOCUMENTS: LazyLock<Documents> = LazyLock::new(Documents::default);

/// Answers `raw` (`/openapi/v2`, `/openapi/v3[/...]`) with `query`.
pub(super) async fn serve(
    state: &AppState,
    raw: &str,
    query: Option<&str>,
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
    let target = match query {
        Some(query) if !query.is_empty() => format!("{raw}?{query}"),
        _ => raw.to_string(),
    };
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json")
        .to_string();
    let key = (target, accept);
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
                client.get_raw(&key.0, &key.1, etag).await.map_err(|e| {
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

fn keep(key: (String, String), document: Kept) -> Kept {
    let mut documents = DOCUMENTS.lock();
    if documents.len() >= KEPT {
        documents.clear();
    }
    documents.insert(key, document.clone());
    document
}
