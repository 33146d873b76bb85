//! Loading a recording: JSON lines of `{"type": ..., "object": {...}}` watch events.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use anyhow::{Context, bail};
use serde_json::Value;

use super::state::{Change, Store};

/// Applies the events of a recording in order and returns how many were
/// applied. Recorded resourceVersions are kept while they increase; events of
/// kinds the store does not serve (e.g. Istio kinds before their CRDs are
/// installed) are skipped and not counted. Stops after `max_events` lines.
pub(crate) fn load(
    store: &mut Store,
    path: &Path,
    max_events: Option<usize>,
) -> anyhow::Result<usize> {
    let file = File::open(path).with_context(|| format!("opening {}", path.display()))?;
    let mut applied = 0;
    let mut seen = 0;
    for (index, line) in BufReader::new(file).lines().enumerate() {
        let line = line.with_context(|| format!("reading {}", path.display()))?;
        if line.trim().is_empty() {
            continue;
        }
        if max_events.is_some_and(|max| seen >= max) {
            break;
        }
        seen += 1;
        let context = || format!("{}:{}", path.display(), index + 1);
        let mut event: Value = serde_json::from_str(&line).with_context(context)?;
        let change = match event["type"].as_str() {
            Some("ADDED" | "MODIFIED") => Change::Upsert,
            Some("DELETED") => Change::Delete,
            other => bail!("{}: unsupported event type {other:?}", context()),
        };
        let object = event["object"].take();
        let api_version = object["apiVersion"].as_str().unwrap_or_default();
        let kind = object["kind"].as_str().unwrap_or_default();
        if store.by_kind(api_version, kind).is_none() {
            continue;
        }
        let recorded_rv = object["metadata"]["resourceVersion"]
            .as_str()
            .and_then(|s| s.parse::<u64>().ok());
        store
            .apply(change, object, recorded_rv)
            .with_context(context)?;
        applied += 1;
    }
    Ok(applied)
}
