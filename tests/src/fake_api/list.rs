//! LIST: consistent snapshots, `limit`/`continue` paging and selectors.

use axum::response::Response;
use serde_json::{Value, json};

use super::Shared;
use super::params::Params;
use super::selector::Selector;
use super::state::{ObjectKey, ResourceKey};
use super::status::{error_response, json_response, status_response};

/// Where a list page starts: the snapshot and the last key already returned.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ContinueToken {
    rv: u64,
    after: ObjectKey,
}

impl ContinueToken {
    fn encode(&self) -> String {
        let doc =
            json!({"v": "meta.k8s.io/v1", "rv": self.rv, "ns": self.after.0, "name": self.after.1});
        super::util::hex_encode(doc.to_string().as_bytes())
    }

    fn decode(token: &str) -> Option<ContinueToken> {
        let doc: Value = serde_json::from_slice(&super::util::hex_decode(token)?).ok()?;
        Some(ContinueToken {
            rv: doc["rv"].as_u64()?,
            after: (
                doc["ns"].as_str()?.to_string(),
                doc["name"].as_str()?.to_string(),
            ),
        })
    }
}

const CONTINUE_TOO_OLD: &str = "The provided continue parameter is too old to display a consistent list result. \
You can start a new list without the continue parameter, or use the continue token in this response to \
retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - \
objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/// Answers a list request for `resource`, optionally in one namespace.
pub(crate) async fn list(
    shared: &Shared,
    resource: &ResourceKey,
    version: &str,
    namespace: Option<&str>,
    params: &Params,
) -> Response {
    let delay = shared.faults.lock().list_delay;
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    let selector = match Selector::parse(
        params.label_selector.as_deref(),
        params.field_selector.as_deref(),
    ) {
        Ok(s) => s,
        Err(message) => return error_response(400, &message),
    };
    let store = shared.store.lock();
    let Some(res) = store.resources.get(resource).filter(|r| r.served) else {
        return super::status::not_found();
    };

    // Which snapshot, and where in it.
    let (snapshot_rv, after) = if let Some(token) = &params.continue_token {
        let Some(token) = ContinueToken::decode(token) else {
            return error_response(
                400,
                "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)",
            );
        };
        if token.rv < store.compacted_rv {
            return status_response(410, "Expired", CONTINUE_TOO_OLD);
        }
        (token.rv, Some(token.after))
    } else {
        let requested = match params.numeric_rv() {
            Ok(rv) => rv,
            Err(message) => return error_response(400, &message),
        };
        match (requested, params.resource_version_match.as_deref()) {
            (Some(rv), Some("Exact")) => {
                if rv < store.compacted_rv {
                    let message =
                        format!("too old resource version: {rv} ({})", store.compacted_rv);
                    return status_response(410, "Expired", &message);
                }
                if rv > store.rv {
                    let message =
                        format!("Too large resource version: {rv}, current: {}", store.rv);
                    return status_response(504, "Timeout", &message);
                }
                (rv, None)
            }
            (Some(rv), _) if rv > store.rv => {
                let message = format!("Too large resource version: {rv}, current: {}", store.rv);
                return status_response(504, "Timeout", &message);
            }
            _ => (store.rv, None),
        }
    };

    let objects = res.objects_at(snapshot_rv);
    let candidates = objects
        .iter()
        .filter(|(key, _)| after.as_ref().is_none_or(|a| *key > a))
        .filter(|(_, o)| namespace.is_none_or(|ns| o.namespace == ns))
        .filter(|(_, o)| selector.matches(o));
    let limit = params.limit.unwrap_or(usize::MAX);
    let mut page = Vec::new();
    let mut remaining = 0usize;
    for (key, object) in candidates {
        if page.len() < limit {
            page.push((key, object));
        } else {
            remaining += 1;
        }
    }

    let api_version = res.def.api_version(version);
    let mut metadata = json!({"resourceVersion": snapshot_rv.to_string()});
    if remaining > 0 {
        let last = page.last().map(|(k, _)| (*k).clone()).unwrap_or_default();
        metadata["continue"] = json!(
            ContinueToken {
                rv: snapshot_rv,
                after: last
            }
            .encode()
        );
        if selector.is_empty() {
            metadata["remainingItemCount"] = json!(remaining);
        }
    }
    let size: usize = page.iter().map(|(_, o)| o.body.len() + 1).sum();
    let mut out = Vec::with_capacity(size + 256);
    out.extend_from_slice(b"{\"kind\":");
    out.extend_from_slice(json!(res.def.list_kind()).to_string().as_bytes());
    out.extend_from_slice(b",\"apiVersion\":");
    out.extend_from_slice(json!(api_version).to_string().as_bytes());
    out.extend_from_slice(b",\"metadata\":");
    out.extend_from_slice(metadata.to_string().as_bytes());
    out.extend_from_slice(b",\"items\":[");
    for (i, (_, object)) in page.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&object.body);
    }
    out.extend_from_slice(b"]}");
    drop(store);
    json_response(200, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continue_token_round_trip() {
        let t = ContinueToken {
            rv: 77,
            after: ("shop".into(), "web-1".into()),
        };
        assert_eq!(ContinueToken::decode(&t.encode()), Some(t));
        assert_eq!(ContinueToken::decode("zz"), None);
    }
}
