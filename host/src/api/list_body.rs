//! A list answer around the stored JSON of its items, written as it is sent.
//!
//! A 1% label list of a million Pods is 10,000 Pods, 43 MB of JSON. Built
//! whole before sending, sixteen clients listing at once held sixteen such
//! bodies: 3.8 GiB of resident memory at the peak for a daemon holding
//! 2.9 GiB (BENCHMARKS.md). Written a chunk at a time as the connection
//! takes it, each answer holds one chunk, and its objects are decompressed
//! outside the cache's lock. An answer of at most one chunk is built whole,
//! and so keeps its `Content-Length`. The chunks after the first are
//! written on blocking threads: decompressing and copying 256 KB of
//! objects takes a few hundred microseconds, which a 100,000-object list
//! would otherwise take 2,000 times from the runtime that answers every
//! other caller.

use std::convert::Infallible;
use std::sync::Arc;

use axum::body::Body;
use bytes::Bytes;
use futures::StreamExt as _;

use crate::store::StoredObject;

/// JSON written before the connection is handed more. A chunk is not let
/// grow past it (but for an object larger on its own): a vector that
/// doubled past it would be a block the allocator maps and unmaps for
/// every chunk (`tune_allocator` in `main.rs`), and a list answer would
/// pay the page faults of each.
const CHUNK: usize = 256 << 10;

/// `head` (up to and including the items' `[`), the items' JSON separated
/// by commas, and `]}`.
pub(super) fn json_list(head: Vec<u8>, items: Vec<Arc<StoredObject>>) -> Body {
    json_items(head, items, StoredObject::json_len, |object, out| {
        object.write_json(out)
    })
}

/// `head`, what `write` writes of each item separated by commas, and `]}`;
/// `at_most` says how long an item's text may be (exactly, or more), so
/// that a chunk ends before it would grow past [`CHUNK`]. An answer that
/// fits in one chunk is sent whole, with its `Content-Length`.
pub(super) fn json_items<E, W>(
    head: Vec<u8>,
    items: Vec<Arc<StoredObject>>,
    at_most: E,
    write: W,
) -> Body
where
    E: Fn(&StoredObject) -> usize + Send + 'static,
    W: FnMut(&StoredObject, &mut Vec<u8>) + Send + 'static,
{
    // What a chunk reserves: a short answer, only its length.
    let len = head.len() + items.iter().map(|o| at_most(o) + 1).sum::<usize>() + 2;
    let mut chunks = Chunks {
        next: Some(head),
        items: items.into_iter().peekable(),
        first: true,
        len,
        at_most,
        write,
    };
    let Some(whole_or_first) = chunks.next_chunk() else {
        return Body::empty();
    };
    if chunks.next.is_none() {
        return Body::from(whole_or_first);
    }
    let rest = futures::stream::unfold(Some(chunks), |chunks| async move {
        let mut chunks = chunks?;
        let (chunks, chunk) = tokio::task::spawn_blocking(move || {
            let chunk = chunks.next_chunk();
            (chunks, chunk)
        })
        .await
        // A panic writing an object is a GRW bug: the answer is cut short,
        // which its client sees as JSON that does not parse.
        .ok()?;
        Some((Ok::<_, Infallible>(Bytes::from(chunk?)), Some(chunks)))
    });
    let first = futures::stream::once(std::future::ready(Ok(Bytes::from(whole_or_first))));
    Body::from_stream(first.chain(rest))
}

/// The chunks of one answer, written one at a time.
struct Chunks<E, W> {
    /// The start of the next chunk; `None` once the answer is written.
    next: Option<Vec<u8>>,
    items: std::iter::Peekable<std::vec::IntoIter<Arc<StoredObject>>>,
    first: bool,
    /// The whole answer's length, at most.
    len: usize,
    at_most: E,
    write: W,
}

impl<E, W> Chunks<E, W>
where
    E: Fn(&StoredObject) -> usize,
    W: FnMut(&StoredObject, &mut Vec<u8>),
{
    fn next_chunk(&mut self) -> Option<Vec<u8>> {
        let mut out = self.next.take()?;
        out.reserve(CHUNK.min(self.len).saturating_sub(out.len()));
        while let Some(object) = self.items.peek() {
            // A comma, the object and the closing `]}`: a chunk that holds
            // something ends before it would grow past `CHUNK`.
            if !out.is_empty() && out.len() + (self.at_most)(object) + 3 > CHUNK {
                self.next = Some(Vec::new());
                return Some(out);
            }
            if !self.first {
                out.push(b',');
            }
            self.first = false;
            (self.write)(object, &mut out);
            self.items.next();
        }
        out.extend_from_slice(b"]}");
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use axum::body::HttpBody as _;
    use serde_json::{Value, json};

    use super::*;
    use crate::gvk::Gvk;

    fn pods(n: usize) -> Vec<Arc<StoredObject>> {
        (0..n)
            .map(|i| {
                let pod = json!({
                    "apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": format!("pod-{i}"), "namespace": "shop", "resourceVersion": "1"},
                    "spec": {"containers": [{"name": "app", "image": format!("registry.example/app:{i}")}]},
                });
                Arc::new(StoredObject::from_value(pod, &Gvk::new("", "v1", "Pod"), false).unwrap())
            })
            .collect()
    }

    async fn read(body: Body) -> (Option<u64>, usize, Value) {
        let exact = body.size_hint().exact();
        let mut frames = 0;
        let mut bytes = Vec::new();
        let mut body = std::pin::pin!(body);
        while let Some(frame) = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
            let data = frame.unwrap().into_data().unwrap();
            // Small objects never make a chunk grow past its size.
            assert!(data.len() <= CHUNK, "a chunk of {} bytes", data.len());
            bytes.extend_from_slice(&data);
            frames += 1;
        }
        (exact, frames, serde_json::from_slice(&bytes).unwrap())
    }

    #[tokio::test]
    async fn a_long_list_is_sent_in_chunks_and_reads_as_one() {
        let items = pods(5000);
        let names: Vec<String> = (0..5000).map(|i| format!("pod-{i}")).collect();
        let (exact, frames, list) =
            read(json_list(br#"{"kind":"PodList","items":["#.to_vec(), items)).await;
        assert_eq!(exact, None);
        assert!(frames > 2, "{frames} frames");
        assert_eq!(list["kind"], "PodList");
        let listed: Vec<&str> = list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(listed, names);
    }

    #[tokio::test]
    async fn an_object_larger_than_a_chunk_has_one_of_its_own() {
        let big = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "big", "namespace": "shop", "resourceVersion": "1"},
            "data": {"blob": "x".repeat(CHUNK + 10)},
        });
        let big = Arc::new(
            StoredObject::from_value(big, &Gvk::new("", "v1", "ConfigMap"), false).unwrap(),
        );
        let mut items = pods(3);
        items.insert(1, big.clone());
        let body = json_list(br#"{"kind":"List","items":["#.to_vec(), items);
        let mut body = std::pin::pin!(body);
        let mut frames = Vec::new();
        while let Some(frame) = std::future::poll_fn(|cx| body.as_mut().poll_frame(cx)).await {
            frames.push(frame.unwrap().into_data().unwrap());
        }
        assert_eq!(
            frames.len(),
            3,
            "the head and a Pod, the large object, the rest"
        );
        assert_eq!(&frames[1][1..], &*big.json(), "after its comma");
        let whole: Vec<u8> = frames.concat();
        let list: Value = serde_json::from_slice(&whole).unwrap();
        assert_eq!(list["items"].as_array().unwrap().len(), 4);
    }

    #[tokio::test]
    async fn a_short_list_is_sent_whole_with_its_length() {
        for n in [0, 1, 3] {
            let head = br#"{"kind":"PodList","items":["#.to_vec();
            let (exact, frames, list) = read(json_list(head, pods(n))).await;
            let len = serde_json::to_vec(&list).unwrap().len() as u64;
            assert_eq!((exact, frames), (Some(len), 1));
            assert_eq!(list["items"].as_array().unwrap().len(), n);
        }
    }
}
