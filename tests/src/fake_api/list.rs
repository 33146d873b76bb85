//! LIST: consistent snapshots, `limit`/`continue` paging and selectors.

use std::io;
use std::ops::Bound;
use std::sync::Arc;

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use serde_json::{Value, json};

use super::Shared;
use super::params::Params;
use super::selector::Selector;
use super::state::{ObjectKey, ResourceKey, StoredObject};
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
    let (delay, pace) = {
        let faults = shared.faults.lock();
        (faults.list_delay, faults.list_pace)
    };
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
    let start = after.map_or(Bound::Unbounded, Bound::Excluded);
    let mut candidates = objects
        .range((start, Bound::Unbounded))
        .filter(|(_, o)| namespace.is_none_or(|ns| o.namespace == ns))
        .filter(|(_, o)| selector.matches(o));
    let limit = params.limit.unwrap_or(usize::MAX);
    let page: Vec<Arc<StoredObject>> = candidates
        .by_ref()
        .take(limit)
        .map(|(_, object)| object.clone())
        .collect();
    // Only a list without selectors says how many items remain, so only
    // then are the rest counted; otherwise one more match is enough to know
    // a continuation is due.
    let remaining = if selector.is_empty() {
        candidates.count()
    } else {
        usize::from(candidates.next().is_some())
    };

    let api_version = res.def.api_version(version);
    let mut metadata = json!({"resourceVersion": snapshot_rv.to_string()});
    if remaining > 0 {
        let last = page.last().map(|o| o.key()).unwrap_or_default();
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
    let mut head = Vec::with_capacity(256);
    head.extend_from_slice(b"{\"kind\":");
    head.extend_from_slice(json!(res.def.list_kind()).to_string().as_bytes());
    head.extend_from_slice(b",\"apiVersion\":");
    head.extend_from_slice(json!(api_version).to_string().as_bytes());
    head.extend_from_slice(b",\"metadata\":");
    head.extend_from_slice(metadata.to_string().as_bytes());
    head.extend_from_slice(b",\"items\":[");
    drop(objects);
    drop(store);
    let chunks = ListChunks {
        head: Some(head),
        items: page.into_iter(),
        started: false,
        done: false,
        sent: 0,
    };
    let body = match pace {
        None => Body::from_stream(futures::stream::iter(chunks.map(Ok::<_, io::Error>))),
        Some(pace) => {
            let start = tokio::time::Instant::now();
            Body::from_stream(futures::stream::unfold(
                chunks,
                move |mut chunks| async move {
                    let chunk = chunks.next()?;
                    tokio::time::sleep_until(pace.due(start, chunks.sent)).await;
                    Some((Ok::<_, io::Error>(chunk), chunks))
                },
            ))
        }
    };
    json_response(200, body)
}

/// Bytes a list answer is written in at a time, at most one item more.
const CHUNK_BYTES: usize = 256 << 10;

/// The body of a list answer, written as the connection takes it: the stored
/// bytes of each item, copied as they are. Unpaged, a million Pods of 6.8 KB
/// would otherwise be a 7 GB buffer before the first byte is sent.
struct ListChunks {
    /// Everything before the first item; `None` once sent.
    head: Option<Vec<u8>>,
    items: std::vec::IntoIter<Arc<StoredObject>>,
    /// Whether an item was written (the next one needs a comma).
    started: bool,
    /// Whether the closing `]}` was written.
    done: bool,
    /// Items written so far.
    sent: usize,
}

impl Iterator for ListChunks {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        if self.done {
            return None;
        }
        let mut out = self.head.take().unwrap_or_default();
        while out.len() < CHUNK_BYTES {
            let Some(object) = self.items.next() else {
                out.extend_from_slice(b"]}");
                self.done = true;
                break;
            };
            if std::mem::replace(&mut self.started, true) {
                out.push(b',');
            }
            out.extend_from_slice(&object.body);
            self.sent += 1;
        }
        Some(Bytes::from(out))
    }
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

    #[test]
    fn chunks_join_into_one_list() {
        let object = |i: usize| {
            let body = format!(
                r#"{{"metadata":{{"name":"p{i}"}},"data":"{}"}}"#,
                "x".repeat(1000)
            );
            Arc::new(StoredObject::for_test(
                "",
                "p",
                Default::default(),
                Box::leak(body.into_bytes().into_boxed_slice()),
            ))
        };
        for count in [0, 1, 2, 600] {
            let chunks = ListChunks {
                head: Some(b"{\"items\":[".to_vec()),
                items: (0..count).map(object).collect::<Vec<_>>().into_iter(),
                started: false,
                done: false,
                sent: 0,
            };
            let chunks: Vec<Bytes> = chunks.collect();
            // 600 items of ~1 KB pass a chunk's 256 KiB: the list comes in pieces.
            assert_eq!(
                chunks.len(),
                if count == 600 { 3 } else { 1 },
                "{count} items"
            );
            assert!(chunks.iter().all(|c| c.len() <= CHUNK_BYTES + 1100));
            let list: Value = serde_json::from_slice(&chunks.concat()).unwrap();
            let items = list["items"].as_array().unwrap();
            assert_eq!(items.len(), count);
            if count > 0 {
                assert_eq!(
                    items[count - 1]["metadata"]["name"],
                    format!("p{}", count - 1)
                );
            }
        }
    }
}
