//! The journal's writer: one thread that takes what the feeds queue and
//! writes it in batches, one redb transaction per batch, then drops what
//! retention no longer keeps.
//!
//! Dropping old entries keeps every state after the cut rebuildable: the
//! oldest entry of an object goes only after its state is kept as the
//! object's *base* (when later entries are patches on it), and an object
//! with no later entry needs none (its state is the cache's, or it is
//! gone). So what `asOf` answers for any time after the cut is exact.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use redb::{Database, ReadableTable, Table, WriteTransaction};
use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};

use super::dictionaries::Held;
use super::record::{self, FULL_EVERY, Record, Textual, kind_key, object_key};
use super::tables::*;
use super::{Scope, diff, read};
use crate::gvk::Gvk;
use crate::store::{Change, ChangeType, Dictionary, Managed, Managers, StoredObject};

/// Most items written in one transaction.
const BATCH: usize = 512;

/// How long the writer gathers changes after the first before it writes
/// them: the most it adds to an entry's wait. Each commit waits for the
/// disk (`fsync`): at 20 ms and 200 changes a second, commits were a
/// third of the writer's CPU. Fewer commits, less CPU.
const GATHER: Duration = Duration::from_millis(50);

/// Most objects of a snapshot written in one transaction.
const SNAPSHOT_PART: usize = 512;

/// How often the writer records that GRW is alive, and checks retention,
/// when nothing comes.
pub(super) const HEARTBEAT: Duration = Duration::from_secs(5);

/// What the feeds queue for the writer.
pub(super) enum Item {
    /// One change a cache made, seen at `seen` (µs since the epoch; a
    /// replay's changes, at the time they are replayed as), queued at
    /// `queued`.
    Change {
        gvk: Gvk,
        change: Arc<Change>,
        seen: u64,
        queued: Instant,
    },
    /// Every object of a kind now (the first time, or after the feed fell
    /// behind): compared with what the journal last saw of each.
    Snapshot {
        gvk: Gvk,
        objects: Vec<Arc<StoredObject>>,
        seen: u64,
        queued: Instant,
    },
    /// Part of a snapshot, written in a transaction of its own: the
    /// first part starts it, the last finds what the journal knew that is
    /// not there any more.
    SnapshotPart {
        gvk: Gvk,
        objects: Vec<Arc<StoredObject>>,
        seen: u64,
        queued: Instant,
        first: bool,
        last: bool,
    },
    /// Edges are waiting in [`PendingEdges`]: write them soon.
    Wake,
    /// Answered once everything queued before is committed.
    Flush(oneshot::Sender<()>),
}

/// Most edge changes that may wait for the writer. The relations engine
/// cannot wait for the queue, so its edges wait here instead, and every
/// transaction takes all of them: a burst (a namespace deleted, a
/// rollout) is written whole while the writer gathers, not cut at the
/// queue's capacity. Past this bound (some 20 MB of edges, held while the
/// writer is stuck) they are counted and left out.
pub const PENDING_EDGES: usize = 100_000;

/// Edge changes the writer has not taken yet.
#[derive(Default)]
pub(super) struct PendingEdges {
    /// Each call's edges, with when they were seen and queued.
    batches: Vec<(u64, Instant, Vec<EdgeRecord>)>,
    /// Edges in `batches`.
    edges: usize,
    /// Whether the writer was woken for them and has not taken them yet.
    woken: bool,
    /// Edges left out because [`PENDING_EDGES`] were waiting.
    pub dropped: u64,
}

impl PendingEdges {
    /// Keeps `edges` seen at `seen` for the writer; whether the writer is
    /// to be woken for them (it was not yet). `false` too when they were
    /// left out.
    pub(super) fn push(&mut self, edges: Vec<EdgeRecord>, seen: u64) -> bool {
        if self.edges + edges.len() > PENDING_EDGES {
            self.dropped += edges.len() as u64;
            return false;
        }
        self.edges += edges.len();
        self.batches.push((seen, Instant::now(), edges));
        !std::mem::replace(&mut self.woken, true)
    }

    fn take(&mut self) -> Vec<(u64, Instant, Vec<EdgeRecord>)> {
        self.edges = 0;
        self.woken = false;
        std::mem::take(&mut self.batches)
    }
}

/// Failures of the store; the writer logs them and goes on.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct StoreError(#[from] redb::Error);

macro_rules! from_redb {
    ($($t:ty),*) => {$(
        impl From<$t> for StoreError {
            fn from(e: $t) -> Self {
                StoreError(e.into())
            }
        }
    )*};
}
from_redb!(
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

/// Counts the readers of [`super::Journal::status`] see.
#[derive(Debug, Default, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Counts {
    /// Entries written since the start.
    pub written: u64,
    /// Entries dropped by retention since the start.
    pub dropped: u64,
    /// Bytes the journal holds.
    pub bytes: u64,
    /// Write failures since the start.
    pub failures: u64,
    /// Why the writer stopped, when it did: nothing is journaled after.
    #[serde(skip)]
    pub stopped: Option<String>,
    /// How long the last [`LAGS_KEPT`] items waited between being queued
    /// and their transaction's commit, in µs, oldest first.
    #[serde(skip)]
    pub lags: VecDeque<u32>,
}

/// Write lags [`Counts`] keeps for their percentiles.
pub const LAGS_KEPT: usize = 10_000;

impl Counts {
    fn record_lags(&mut self, lags: impl IntoIterator<Item = Duration>) {
        for lag in lags {
            if self.lags.len() == LAGS_KEPT {
                self.lags.pop_front();
            }
            self.lags
                .push_back(u32::try_from(lag.as_micros()).unwrap_or(u32::MAX));
        }
    }

    /// The 50th and 99th percentile and the longest of the lags kept, in
    /// milliseconds, and how many they are.
    pub fn lag_summary(&self) -> serde_json::Value {
        let mut sorted: Vec<u32> = self.lags.iter().copied().collect();
        sorted.sort_unstable();
        let at = |p: f64| {
            (!sorted.is_empty()).then(|| {
                let i = ((sorted.len() - 1) as f64 * p).round() as usize;
                f64::from(sorted[i]) / 1000.0
            })
        };
        serde_json::json!({
            "entries": sorted.len(),
            "p50Ms": at(0.5),
            "p99Ms": at(0.99),
            "maxMs": at(1.0),
        })
    }
}

pub(super) struct Writer {
    db: Arc<Database>,
    scope: Arc<Scope>,
    last_stamp: u64,
    bytes: HashMap<String, u64>,
    total: u64,
    last_prune: Instant,
    counts: Arc<parking_lot::Mutex<Counts>>,
    /// When the run before this one was last alive.
    alive_before: Option<u64>,
    /// Kinds whose first snapshot of this run was written.
    snapshotted: HashSet<String>,
    /// Kinds known to have their `first/` time recorded.
    firsts: HashSet<String>,
    /// Kinds whose bytes changed in the transaction being written: their
    /// `bytes/` are written once, at its end.
    resized: HashSet<String>,
    /// The snapshot whose parts are being written.
    open_snapshot: Option<OpenSnapshot>,
    /// Edge changes the relations engine left for the writer.
    pending_edges: Arc<parking_lot::Mutex<PendingEdges>>,
    /// The dictionaries packed entries and bases need, in the registry.
    held: Arc<Held>,
    /// How many entries and bases need each dictionary.
    uses: HashMap<u64, u64>,
    /// Dictionaries whose uses changed in the transaction being written.
    uses_changed: HashSet<u64>,
}

/// A state as the cache holds it: compressed, its JSON's length, the
/// dictionary.
type CacheBody<'o> = (&'o [u8], u32, &'o Arc<Dictionary>);

/// Which text a cache body is: the CRC-32 of its dictionary's id and its
/// compressed bytes (the same text compressed with the same dictionary is
/// the same bytes; another text, other bytes).
pub(super) fn identity((body, len, dictionary): CacheBody<'_>) -> u32 {
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(&dictionary.id().to_le_bytes());
    hasher.update(&len.to_le_bytes());
    hasher.update(body);
    hasher.finalize()
}

/// Whether `kind` (`group/Kind`) is an Event's, `events.k8s.io/v1` or `v1`.
fn is_event(kind: &str) -> bool {
    kind == "events.k8s.io/Event" || kind == "/Event"
}

/// Whether objects of `kind` are read as values to make their state: a
/// Secret's state is not its object, and an Event says what it is about.
fn read_as_value(kind: &str) -> bool {
    kind == "/Secret" || is_event(kind)
}

/// How an entry keeps its state.
enum State<'o> {
    /// In the record: whole, or a JSON Patch (or none: a deletion, a gap).
    Record,
    /// Whole, as the cache holds it ([`record::Body::Packed`]).
    Packed(CacheBody<'o>),
    /// The entry encoded, its state a delta ([`record::Body::Delta`]).
    Delta(Vec<u8>),
}

/// Microseconds since the epoch, now.
pub fn now_micros() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

fn meta(t: &Tables<'_>, key: &str) -> Result<Option<u64>, StoreError> {
    Ok(t.meta.get(key)?.map(|v| v.value()))
}

fn set_meta(t: &mut Tables<'_>, key: &str, value: u64) -> Result<(), StoreError> {
    t.meta.insert(key, value)?;
    Ok(())
}

/// The tables of a write transaction, each opened once for all it
/// writes: opened and closed for each row, they were a third of the cost
/// of writing an entry's rows.
struct Tables<'t> {
    entries: Table<'t, u64, &'static [u8]>,
    objects: Table<'t, (&'static str, u64), u8>,
    kinds: Table<'t, (&'static str, u64), u64>,
    namespaces: Table<'t, (&'static str, u64), ()>,
    about: Table<'t, (&'static str, u64), ()>,
    latest: Table<'t, &'static str, &'static [u8]>,
    bases: Table<'t, &'static str, &'static [u8]>,
    edges: Table<'t, u64, &'static [u8]>,
    meta: Table<'t, &'static str, u64>,
    dictionaries: Table<'t, u64, &'static [u8]>,
    dictionary_uses: Table<'t, u64, u64>,
}

impl<'t> Tables<'t> {
    fn open(txn: &'t WriteTransaction) -> Result<Tables<'t>, StoreError> {
        Ok(Tables {
            entries: txn.open_table(ENTRIES)?,
            objects: txn.open_table(OBJECTS)?,
            kinds: txn.open_table(KINDS)?,
            namespaces: txn.open_table(NAMESPACES)?,
            about: txn.open_table(ABOUT)?,
            latest: txn.open_table(LATEST)?,
            bases: txn.open_table(BASES)?,
            edges: txn.open_table(EDGES)?,
            meta: txn.open_table(META)?,
            dictionaries: txn.open_table(DICTIONARIES)?,
            dictionary_uses: txn.open_table(DICTIONARY_USES)?,
        })
    }
}

/// Runs `work`, the writer's loop, on this thread. Should it panic (a
/// bug), the panic is logged and kept in `counts` for the journal's
/// status, instead of the journal going quiet with nothing said.
pub(super) fn run_reporting(counts: &parking_lot::Mutex<Counts>, work: impl FnOnce()) {
    let Err(panic) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) else {
        return;
    };
    let message = panic
        .downcast_ref::<&str>()
        .map(|text| (*text).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into());
    tracing::error!(%message, "journal: the writer stopped; changes are not journaled until GRW restarts");
    counts.lock().stopped = Some(message);
}

/// Moves what is queued now into `batch`, up to [`BATCH`] items.
fn take_queued(rx: &mut mpsc::Receiver<Item>, batch: &mut Vec<Item>) {
    while batch.len() < BATCH {
        match rx.try_recv() {
            Ok(item) => batch.push(item),
            Err(_) => break,
        }
    }
}

impl Writer {
    /// Reads the sizes and last stamp, and writes the gap entry when the
    /// journal was alive before: GRW was not watching from then to now.
    pub(super) fn open(
        db: Arc<Database>,
        scope: Arc<Scope>,
        counts: Arc<parking_lot::Mutex<Counts>>,
        pending_edges: Arc<parking_lot::Mutex<PendingEdges>>,
        held: Arc<Held>,
    ) -> Result<Writer, StoreError> {
        let mut writer = Writer {
            db,
            scope,
            last_stamp: 0,
            bytes: HashMap::new(),
            total: 0,
            last_prune: Instant::now(),
            counts,
            alive_before: None,
            snapshotted: HashSet::new(),
            firsts: HashSet::new(),
            resized: HashSet::new(),
            open_snapshot: None,
            pending_edges,
            held,
            uses: HashMap::new(),
            uses_changed: HashSet::new(),
        };
        let txn = writer.db.begin_write()?;
        let mut tables = Tables::open(&txn)?;
        let t = &mut tables;
        for entry in t.meta.range("bytes/"..="bytes/\u{10FFFF}")? {
            let (key, value) = entry?;
            let kind = key.value()["bytes/".len()..].to_string();
            writer.total += value.value();
            writer.bytes.insert(kind, value.value());
        }
        for row in t.dictionary_uses.iter()? {
            let (id, uses) = row?;
            writer.uses.insert(id.value(), uses.value());
        }
        let last_entry = t.entries.last()?.map_or(0, |(k, _)| k.value());
        let last_edge = t.edges.last()?.map_or(0, |(k, _)| k.value());
        writer.last_stamp = last_entry.max(last_edge);
        writer.alive_before = meta(t, "aliveUntil")?;
        if let Some(alive) = writer.alive_before {
            let now = writer.stamp(now_micros());
            let record = Record {
                gap: Some((alive, now)),
                ..Record::of(GAP_KIND, "GAP")
            };
            writer.insert(t, now, &record, State::Record, 0, None, None)?;
            tracing::info!(from = %super::rfc3339_micros(alive), until = %super::rfc3339_micros(now), "journal: GRW was not watching in this gap");
        }
        set_meta(t, "aliveUntil", now_micros())?;
        writer.write_sizes(t)?;
        drop(tables);
        txn.commit()?;
        writer.counts.lock().bytes = writer.total;
        Ok(writer)
    }

    /// Takes items until the queue is closed. Its own small runtime
    /// waits for them, so the writer outlives no runtime.
    pub(super) fn run(mut self, mut rx: mpsc::Receiver<Item>) {
        let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
        else {
            tracing::error!("journal: the writer cannot start; changes are not journaled");
            self.counts.lock().stopped = Some("its runtime could not be built".into());
            return;
        };
        loop {
            let first =
                runtime.block_on(async { tokio::time::timeout(HEARTBEAT, rx.recv()).await });
            let mut batch = Vec::new();
            match first {
                Ok(Some(item)) => batch.push(item),
                Ok(None) => return,
                Err(_elapsed) => {}
            }
            // What comes within a moment goes in the same transaction: a
            // commit costs as much as many entries, and changes come in
            // bursts (a rollout, a node's Pods). The writer sleeps through
            // the moment and then takes what came: it wakes once a batch,
            // not once a change, and a feed's send wakes no one.
            if !batch.is_empty() {
                let until = tokio::time::Instant::now() + GATHER;
                take_queued(&mut rx, &mut batch);
                if batch.len() < BATCH {
                    runtime.block_on(async { tokio::time::sleep_until(until).await });
                    take_queued(&mut rx, &mut batch);
                }
            }
            // A snapshot is written in parts of its own, in order with
            // what came before and after it: one transaction of a whole
            // kind would hold all of it in memory until its commit.
            let mut pending = Vec::new();
            for item in batch {
                let Item::Snapshot {
                    gvk,
                    objects,
                    seen,
                    queued,
                } = item
                else {
                    pending.push(item);
                    continue;
                };
                self.commit(std::mem::take(&mut pending));
                let parts = objects.len().div_ceil(SNAPSHOT_PART).max(1);
                let mut chunks = objects.chunks(SNAPSHOT_PART);
                for part in 0..parts {
                    let objects = chunks.next().map(<[_]>::to_vec).unwrap_or_default();
                    self.commit(vec![Item::SnapshotPart {
                        gvk: gvk.clone(),
                        objects,
                        seen,
                        queued,
                        first: part == 0,
                        last: part + 1 == parts,
                    }]);
                }
            }
            self.commit(pending);
        }
    }

    /// Writes `batch` in one transaction, then answers the flushes it
    /// holds; a failure is counted and logged.
    fn commit(&mut self, batch: Vec<Item>) {
        let mut flushed = Vec::new();
        let mut queued = Vec::new();
        if let Err(e) = self.write(batch, &mut flushed, &mut queued) {
            self.counts.lock().failures += 1;
            tracing::warn!(error = %crate::error::Report(&e), "journal: a batch of changes could not be written; it is lost");
        } else {
            let committed = Instant::now();
            self.counts
                .lock()
                .record_lags(queued.into_iter().map(|q| committed - q));
        }
        for done in flushed {
            let _ = done.send(());
        }
    }

    fn write(
        &mut self,
        batch: Vec<Item>,
        flushed: &mut Vec<oneshot::Sender<()>>,
        queued_at: &mut Vec<Instant>,
    ) -> Result<(), StoreError> {
        let txn = self.db.begin_write()?;
        let mut tables = Tables::open(&txn)?;
        let t = &mut tables;
        let mut seen_kinds: HashMap<String, u64> = HashMap::new();
        for item in batch {
            match item {
                Item::Change {
                    gvk,
                    change,
                    seen,
                    queued,
                } => {
                    queued_at.push(queued);
                    let stamp = self.change(t, &gvk, &change, seen)?;
                    if let Some(stamp) = stamp {
                        seen_kinds.insert(kind_key(&gvk.group, &gvk.kind), stamp);
                    }
                }
                // Split in parts by `run`.
                Item::Snapshot { .. } => {}
                Item::SnapshotPart {
                    gvk,
                    objects,
                    seen,
                    queued,
                    first,
                    last,
                } => {
                    queued_at.push(queued);
                    if first {
                        self.open_snapshot = Some(self.begin_snapshot(t, &gvk, seen)?);
                    }
                    let Some(mut open) = self.open_snapshot.take() else {
                        continue;
                    };
                    self.snapshot_objects(t, &gvk, &objects, seen, &mut open)?;
                    if last {
                        let stamp = self.end_snapshot(t, &open, seen)?;
                        seen_kinds.insert(kind_key(&gvk.group, &gvk.kind), stamp);
                    } else {
                        self.open_snapshot = Some(open);
                    }
                }
                Item::Wake => {}
                Item::Flush(done) => flushed.push(done),
            }
        }
        // The edges seen until now, after the changes they came of.
        let edges = self.pending_edges.lock().take();
        for (seen, queued, edges) in edges {
            queued_at.push(queued);
            self.edges(t, &edges, seen)?;
        }
        for (kind, stamp) in seen_kinds {
            set_meta(t, &format!("seen/{kind}"), stamp)?;
        }
        let now = now_micros();
        set_meta(t, "aliveUntil", now.max(self.last_stamp))?;
        if self.last_prune.elapsed() >= Duration::from_secs(1) || self.over_budget() {
            self.prune(t, now)?;
            self.last_prune = Instant::now();
        }
        self.write_uses(t)?;
        self.write_sizes(t)?;
        drop(tables);
        txn.commit()?;
        self.counts.lock().bytes = self.total;
        Ok(())
    }

    fn over_budget(&self) -> bool {
        self.total > self.scope.max_bytes
    }

    /// A stamp at or after `seen`, after every stamp given before.
    fn stamp(&mut self, seen: u64) -> u64 {
        self.last_stamp = seen.max(self.last_stamp + 1);
        self.last_stamp
    }

    fn latest(&self, t: &Tables<'_>, key: &str) -> Result<Option<Latest>, StoreError> {
        Ok(t.latest.get(key)?.and_then(|v| Latest::decode(v.value())))
    }

    /// Writes an entry and its index rows, and counts its bytes; its
    /// state is `state` ([`State::Record`]: the record's own).
    #[allow(clippy::too_many_arguments)]
    fn insert(
        &mut self,
        t: &mut Tables<'_>,
        stamp: u64,
        record: &Record,
        state: State<'_>,
        flags: u8,
        key: Option<&str>,
        namespace: Option<&str>,
    ) -> Result<(), StoreError> {
        let bytes = match state {
            State::Packed((body, len, dictionary)) => {
                self.use_dictionary(t, dictionary)?;
                record.encode_packed(dictionary, len, body)
            }
            State::Delta(bytes) => bytes,
            State::Record => record.encode(),
        };
        let size = bytes.len() as u64;
        t.entries.insert(stamp, bytes.as_slice())?;
        t.kinds.insert((record.kind.as_str(), stamp), size)?;
        if let Some(key) = key {
            t.objects.insert((key, stamp), flags)?;
        }
        if let Some(namespace) = namespace.filter(|ns| !ns.is_empty()) {
            t.namespaces.insert((namespace, stamp), ())?;
        }
        if let Some(about) = &record.about {
            t.about.insert((about.as_str(), stamp), ())?;
        }
        self.add_bytes(&record.kind, size as i64);
        let kind = &record.kind;
        if !kind.is_empty() && !self.firsts.contains(kind) {
            let first = format!("first/{kind}");
            if meta(t, &first)?.is_none() {
                set_meta(t, &first, stamp)?;
            }
            self.firsts.insert(kind.clone());
        }
        self.counts.lock().written += 1;
        Ok(())
    }

    /// Counts one more entry or base that needs `dictionary`, which is
    /// written the first time.
    fn use_dictionary(
        &mut self,
        t: &mut Tables<'_>,
        dictionary: &Arc<Dictionary>,
    ) -> Result<(), StoreError> {
        let id = dictionary.id();
        let unused = self.uses.get(&id).is_none_or(|uses| *uses == 0);
        // A dictionary in the table is in the registry already (held when
        // the journal opened, or when it was written).
        if unused && t.dictionaries.get(id)?.is_none() {
            t.dictionaries.insert(id, dictionary.trained())?;
            self.add_bytes(DICTIONARY_KIND, dictionary.trained().len() as i64);
            self.held.hold(dictionary);
        }
        *self.uses.entry(id).or_default() += 1;
        self.uses_changed.insert(id);
        Ok(())
    }

    /// Counts one fewer entry or base needing the dictionary of the
    /// stored `bytes`, if they are packed.
    fn unuse_dictionary(&mut self, bytes: &[u8]) {
        if let Some(id) = Textual::of(bytes).and_then(|t| t.dictionary()) {
            let uses = self.uses.entry(id).or_default();
            *uses = uses.saturating_sub(1);
            self.uses_changed.insert(id);
        }
    }

    /// Writes the uses that changed; a dictionary nothing needs goes.
    fn write_uses(&mut self, t: &mut Tables<'_>) -> Result<(), StoreError> {
        for id in std::mem::take(&mut self.uses_changed) {
            match self.uses.get(&id).copied().unwrap_or(0) {
                0 => {
                    self.uses.remove(&id);
                    t.dictionary_uses.remove(id)?;
                    let removed = t.dictionaries.remove(id)?.map(|v| v.value().len());
                    if let Some(len) = removed {
                        self.add_bytes(DICTIONARY_KIND, -(len as i64));
                    }
                    self.held.release(id);
                }
                uses => {
                    t.dictionary_uses.insert(id, uses)?;
                }
            }
        }
        Ok(())
    }

    fn add_bytes(&mut self, kind: &str, delta: i64) {
        let bytes = self.bytes.entry(kind.to_string()).or_default();
        *bytes = bytes.saturating_add_signed(delta);
        self.total = self.total.saturating_add_signed(delta);
        self.resized.insert(kind.to_string());
    }

    /// Writes the sizes of the kinds whose bytes changed.
    fn write_sizes(&mut self, t: &mut Tables<'_>) -> Result<(), StoreError> {
        for kind in std::mem::take(&mut self.resized) {
            let bytes = self.bytes.get(&kind).copied().unwrap_or(0);
            set_meta(t, &format!("bytes/{kind}"), bytes)?;
        }
        Ok(())
    }

    /// One change of a cache; `None` when there was nothing to write.
    fn change(
        &mut self,
        t: &mut Tables<'_>,
        gvk: &Gvk,
        change: &Change,
        seen: u64,
    ) -> Result<Option<u64>, StoreError> {
        if !self.scope.covers(&gvk.group, &gvk.kind) {
            return Ok(None);
        }
        let kind = kind_key(&gvk.group, &gvk.kind);
        let object = &change.object;
        let key = object_key(&gvk.group, &gvk.kind, object.namespace(), object.name());
        let latest = self.latest(t, &key)?;
        let deleted = change.kind == ChangeType::Deleted;
        if let Some(latest) = &latest
            && latest.resource_version == object.resource_version()
            && latest.deleted == deleted
        {
            return Ok(None);
        }
        // The version before, when the journal's last is the cache's.
        let before = change.old.as_ref().filter(|old| {
            latest
                .as_ref()
                .is_some_and(|l| !l.deleted && l.resource_version == old.resource_version())
        });
        // Who wrote the version before: the cache's, else the journal's
        // last; none for an object new to the journal.
        let managers_before = match (&change.old, &latest) {
            (Some(old), _) if !old.managers().is_empty() => Some(old.managers().clone()),
            (_, Some(latest)) if !latest.deleted => Some(managers_of(latest)),
            _ if change.kind == ChangeType::Added => None,
            _ => Some(Managers::default()),
        };
        let stamp = self.stamp(seen);
        let chain = latest.as_ref().map_or(0, |l| l.chain);
        let text_before = latest.as_ref().filter(|l| !l.deleted).and_then(|l| l.text);
        let entry = Entry {
            kind: &kind,
            gvk,
            key: &key,
            object,
            change_type: change.kind.as_str(),
            origin: change.origin.as_str(),
            gap: None,
            managers_before,
            before: before.map(|old| Before::Cached(old)),
            chain,
            text_before,
        };
        self.entry(t, stamp, entry)?;
        Ok(Some(stamp))
    }

    /// Writes one version of an object (or its deletion).
    fn entry(&mut self, t: &mut Tables<'_>, stamp: u64, e: Entry<'_>) -> Result<(), StoreError> {
        let object = e.object;
        let deleted = e.change_type == "DELETED";
        let who = object
            .managers()
            .who_changed(e.managers_before.as_ref())
            .filter(|_| !deleted);
        let mut record = Record {
            uid: object.uid().to_string(),
            origin: e.origin.to_string(),
            resource_version: object.resource_version().to_string(),
            who_time: who.as_ref().and_then(|(_, t)| stated_time(*t)),
            who: who.map(|(w, _)| (*w).clone()),
            gap: e.gap,
            ..Record::of(e.key, e.change_type)
        };
        let labels = || {
            Some(
                object
                    .labels()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            )
        };
        let is_event = is_event(e.kind);
        let mut flags = 0;
        let mut chain = 0;
        let packed = (!deleted).then(|| self.packable(e.kind, object)).flatten();
        // A delta from the version before when that is the cache's, and
        // the journal's last entry of the object kept its text.
        let delta_from = match &e.before {
            Some(Before::Cached(old))
                if packed.is_some()
                    && e.chain + 1 < FULL_EVERY
                    && e.text_before.is_some()
                    && self.packable(e.kind, old).map(identity) == e.text_before =>
            {
                Some(*old)
            }
            _ => None,
        };
        let mut state = State::Record;
        if deleted {
            flags = FULL | DELETED;
        } else if let Some(old) = delta_from {
            let (before, after) = (old.json(), object.json());
            if record.who.is_none() {
                let (_, paths) = diff::diff(&before, &after);
                self.guess_who(&mut record, object, &paths);
            }
            if !old.labels().eq(object.labels()) {
                record.labels = labels();
            }
            if let Some(before) = &e.before {
                self.keep_as_base(t, e.kind, e.key, before, None)?;
            }
            record.uid.clear();
            if let Some(bytes) = record.encode_delta(&before, &after) {
                state = State::Delta(bytes);
                chain = e.chain + 1;
            } else if let Some(body) = packed {
                // zstd failed: whole.
                state = State::Packed(body);
                flags = FULL;
                record.uid = object.uid().to_string();
                record.labels = labels();
            }
        } else if let Some(body) = packed {
            state = State::Packed(body);
            // Kept as the cache holds it: nothing parsed, diffed or
            // compressed. Who made the change is guessed from what
            // changed only when no managedFields entry moved (seldom).
            if let Some(before) = &e.before
                && record.who.is_none()
            {
                let (_, paths) = match before {
                    Before::Cached(old) => diff::diff(&old.json(), &object.json()),
                    Before::State(state) => {
                        let after = record::state_of(object.to_value(), e.kind);
                        record::diff(state, &after)
                    }
                };
                self.guess_who(&mut record, object, &paths);
            }
            if let Some(before) = &e.before {
                self.keep_as_base(t, e.kind, e.key, before, None)?;
            }
            flags = FULL;
            record.labels = labels();
        } else {
            let json = object.json();
            // Secrets and Events are read as values (a Secret's state is
            // not its object; an Event says what it is about); another
            // object is parsed only for a whole state without its
            // managedFields.
            let special = read_as_value(e.kind);
            let parsed =
                || record::state_of(serde_json::from_slice(&json).unwrap_or(Value::Null), e.kind);
            let mut after = (special
                || (e.before.is_none()
                    && memchr::memmem::find(&json, b"\"managedFields\"").is_some()))
            .then(parsed);
            if is_event {
                record.about = after.as_ref().and_then(record::event_about);
            }
            match &e.before {
                Some(before) => {
                    // The state before, when it had to be read as a value.
                    let mut before_state = None;
                    let (patch, paths) = match (before, &after) {
                        (Before::Cached(old), None) => diff::diff(&old.json(), &json),
                        (before, _) => {
                            let after = after.get_or_insert_with(parsed);
                            record::diff(before_state.insert(before.state(e.kind)), after)
                        }
                    };
                    if record.who.is_none() {
                        self.guess_who(&mut record, object, &paths);
                    }
                    if paths.iter().any(|p| p.starts_with("/metadata/labels")) {
                        record.labels = labels();
                    }
                    let patch = record::patch_text(&patch);
                    let small = patch.get().len() * 2 < object.json_len();
                    if e.chain + 1 < FULL_EVERY && small {
                        record.patch = Some(patch);
                        chain = e.chain + 1;
                    } else {
                        // A small patch is kept beside the whole state:
                        // reading this version's diff then rebuilds no
                        // state.
                        if small {
                            record.patch = Some(patch);
                        } else {
                            record.changed = paths;
                        }
                        record.full = Some(raw(after.get_or_insert_with(parsed)));
                        flags = FULL;
                        self.keep_as_base(t, e.kind, e.key, before, before_state.as_deref())?;
                    }
                }
                None => {
                    record.full = match &after {
                        Some(after) => Some(raw(after)),
                        // Stored as the cache holds it: no parse.
                        None => std::str::from_utf8(&json)
                            .ok()
                            .and_then(|text| RawValue::from_string(text.to_string()).ok()),
                    };
                    flags = FULL;
                }
            }
            if flags & FULL == 0 {
                record.uid.clear();
            } else {
                record.labels = labels();
            }
        }
        if flags & FULL != 0 {
            record.api_version = e.gvk.api_version();
        }
        let text = packed
            .filter(|_| !matches!(state, State::Record))
            .map(identity);
        self.insert(
            t,
            stamp,
            &record,
            state,
            flags,
            Some(e.key),
            Some(object.namespace()),
        )?;
        let latest = Latest {
            stamp,
            resource_version: object.resource_version().to_string(),
            deleted,
            chain,
            text,
            managers: object
                .managers()
                .entries()
                .iter()
                .filter_map(|m| m.parts().map(|(w, t, f)| ((*w).clone(), t, f)))
                .collect(),
        };
        t.latest.insert(e.key, latest.encode().as_slice())?;
        Ok(())
    }

    /// Starts the snapshot of a kind (every object of it, in parts): each
    /// object whose version is not the journal's last is an entry, and
    /// each the journal knew that is not there any more is deleted. The
    /// first time a kind is seen, `initial`; after, `relist`, with the gap
    /// since the journal last saw the kind.
    fn begin_snapshot(
        &mut self,
        t: &mut Tables<'_>,
        gvk: &Gvk,
        seen: u64,
    ) -> Result<OpenSnapshot, StoreError> {
        let kind = kind_key(&gvk.group, &gvk.kind);
        let last_seen = meta(t, &format!("seen/{kind}"))?;
        let now = now_micros().max(seen);
        let first_key = format!("first/{kind}");
        if meta(t, &first_key)?.is_none() {
            set_meta(t, &first_key, seen)?;
        }
        // After a restart, the kind was last seen when GRW last was alive;
        // after a feed fell behind, at its last change.
        let restarted = self.snapshotted.insert(kind.clone());
        let last_seen = match (last_seen, self.alive_before) {
            (Some(last), Some(alive)) if restarted => Some(last.max(alive)),
            (last, _) => last,
        };
        let (origin, gap) = match last_seen {
            None => ("initial", None),
            Some(last) => ("relist", Some((last, now))),
        };
        Ok(OpenSnapshot {
            kind,
            origin,
            gap,
            present: HashSet::new(),
        })
    }

    /// The entries of a part of a snapshot.
    fn snapshot_objects(
        &mut self,
        t: &mut Tables<'_>,
        gvk: &Gvk,
        objects: &[Arc<StoredObject>],
        seen: u64,
        open: &mut OpenSnapshot,
    ) -> Result<(), StoreError> {
        let (kind, origin, gap) = (open.kind.as_str(), open.origin, open.gap);
        for object in objects {
            let key = object_key(&gvk.group, &gvk.kind, object.namespace(), object.name());
            let latest = self.latest(t, &key)?;
            open.present.insert(key.clone());
            if latest
                .as_ref()
                .is_some_and(|l| !l.deleted && l.resource_version == object.resource_version())
            {
                continue;
            }
            let existed = latest.as_ref().is_some_and(|l| !l.deleted);
            let before = if existed {
                super::read::state_at(&t.objects, &t.entries, &t.bases, &key, u64::MAX)?
                    .map(|(state, _)| state)
            } else {
                None
            };
            let stamp = self.stamp(seen);
            let entry = Entry {
                kind,
                gvk,
                key: &key,
                object,
                change_type: if existed { "MODIFIED" } else { "ADDED" },
                origin,
                gap,
                managers_before: latest.as_ref().filter(|l| !l.deleted).map(managers_of),
                before: before.map(Before::State),
                chain: FULL_EVERY,
                text_before: None,
            };
            self.entry(t, stamp, entry)?;
        }
        Ok(())
    }

    /// Ends a snapshot: those the journal knew that the cache does not
    /// hold went while nobody looked.
    fn end_snapshot(
        &mut self,
        t: &mut Tables<'_>,
        open: &OpenSnapshot,
        seen: u64,
    ) -> Result<u64, StoreError> {
        let prefix = format!("{}\0", open.kind);
        let end = format!("{}\u{1}", open.kind);
        let mut gone = Vec::new();
        for row in t.latest.range(prefix.as_str()..end.as_str())? {
            let (key, value) = row?;
            if !open.present.contains(key.value())
                && Latest::decode(value.value()).is_some_and(|l| !l.deleted)
            {
                gone.push(key.value().to_string());
            }
        }
        for key in gone {
            let stamp = self.stamp(seen);
            let record = Record {
                origin: open.origin.into(),
                gap: open.gap,
                ..Record::of(&key, "DELETED")
            };
            self.insert(
                t,
                stamp,
                &record,
                State::Record,
                FULL | DELETED,
                Some(&key),
                Some(&record.namespace),
            )?;
            if let Some(mut latest) = self.latest(t, &key)? {
                latest.deleted = true;
                latest.stamp = stamp;
                t.latest.insert(key.as_str(), latest.encode().as_slice())?;
            }
        }
        Ok(self.last_stamp.max(seen))
    }

    fn edges(
        &mut self,
        t: &mut Tables<'_>,
        edges: &[EdgeRecord],
        seen: u64,
    ) -> Result<(), StoreError> {
        for edge in edges {
            let stamp = self.stamp(seen);
            let bytes = serde_json::to_vec(edge).unwrap_or_default();
            t.edges.insert(stamp, bytes.as_slice())?;
            self.add_bytes(EDGE_KIND, bytes.len() as i64);
        }
        Ok(())
    }

    /// Drops what retention keeps no more: each kind's entries older than
    /// its age limit, then its oldest while it holds more than its bytes,
    /// then the oldest of all while the journal does.
    fn prune(&mut self, t: &mut Tables<'_>, now: u64) -> Result<(), StoreError> {
        let kinds: Vec<String> = self.bytes.keys().cloned().collect();
        for kind in &kinds {
            let (max_age, max_bytes) = self.scope.retention(kind);
            let cutoff = now.saturating_sub(max_age.as_micros() as u64);
            if kind == EDGE_KIND {
                self.prune_edges(t, cutoff, u64::MAX)?;
                continue;
            }
            // They go with the last entry that needs them.
            if kind == DICTIONARY_KIND {
                continue;
            }
            let mut old = Vec::new();
            for row in t.kinds.range((kind.as_str(), 0)..(kind.as_str(), cutoff))? {
                old.push(row?.0.value().1);
            }
            for stamp in old {
                self.drop_entry(t, stamp)?;
            }
            while self.bytes.get(kind).copied().unwrap_or(0) > max_bytes {
                let oldest = t
                    .kinds
                    .range((kind.as_str(), 0)..=(kind.as_str(), u64::MAX))?
                    .next()
                    .transpose()?
                    .map(|(k, _)| k.value().1);
                match oldest {
                    Some(stamp) => self.drop_entry(t, stamp)?,
                    None => break,
                }
            }
        }
        while self.total > self.scope.max_bytes {
            let entry = t.entries.first()?.map(|(k, _)| k.value());
            let edge = t.edges.first()?.map(|(k, _)| k.value());
            match (entry, edge) {
                (Some(e), Some(g)) if g < e => self.prune_edges(t, g + 1, 1)?,
                (Some(e), _) => self.drop_entry(t, e)?,
                (None, Some(g)) => self.prune_edges(t, g + 1, 1)?,
                (None, None) => break,
            }
        }
        Ok(())
    }

    fn prune_edges(
        &mut self,
        t: &mut Tables<'_>,
        before: u64,
        most: u64,
    ) -> Result<(), StoreError> {
        let table = &mut t.edges;
        let mut freed = 0i64;
        let mut taken = 0;
        let old: Vec<u64> = table
            .range(0..before)?
            .take(most as usize)
            .filter_map(|r| {
                r.ok().map(|(k, v)| {
                    freed += v.value().len() as i64;
                    k.value()
                })
            })
            .collect();
        for stamp in old {
            table.remove(stamp)?;
            taken += 1;
        }
        if taken > 0 {
            self.add_bytes(EDGE_KIND, -freed);
            let reach = meta(t, "reach/~edges")?.unwrap_or(0).max(before);
            set_meta(t, "reach/~edges", reach)?;
        }
        Ok(())
    }

    /// Keeps `before`, the version an object's new entry follows, as its
    /// base when no entry of the object is left to diff that entry with
    /// (retention dropped them all while it did not change): as the cache
    /// holds it when it can, else its state (`state`, when known).
    fn keep_as_base(
        &mut self,
        t: &mut Tables<'_>,
        kind: &str,
        key: &str,
        before: &Before<'_>,
        state: Option<&Value>,
    ) -> Result<(), StoreError> {
        let earlier = t
            .objects
            .range((key, 0)..=(key, u64::MAX))?
            .next()
            .is_some();
        if earlier || t.bases.get(key)?.is_some() {
            return Ok(());
        }
        let cached = match before {
            Before::Cached(old) if state.is_none() => self.packable(kind, old),
            _ => None,
        };
        let encoded = match cached {
            Some((body, len, dictionary)) => {
                self.use_dictionary(t, dictionary)?;
                Record::default().encode_packed(dictionary, len, body)
            }
            None => match state {
                Some(state) => encode_state(state),
                None => encode_state(&before.state(kind)),
            },
        };
        t.bases.insert(key, encoded.as_slice())?;
        self.add_bytes(kind, encoded.len() as i64);
        Ok(())
    }

    /// The object as its cache holds it, when that is its state: compressed
    /// with a dictionary, and neither a Secret nor an Event (their states
    /// are read from their values) nor holding managedFields.
    fn packable<'o>(&self, kind: &str, object: &'o StoredObject) -> Option<CacheBody<'o>> {
        if read_as_value(kind) || self.scope.managed_fields_kept {
            return None;
        }
        object.packed()
    }

    /// Sets who made the change to the likely writer of `paths`, a guess.
    fn guess_who(&self, record: &mut Record, object: &StoredObject, paths: &[String]) {
        if paths.is_empty() {
            return;
        }
        if let Some((writer, time)) = object.managers().likely_writer(paths) {
            record.who = Some((*writer).clone());
            record.who_time = stated_time(time);
            record.who_guessed = true;
        }
    }

    /// Drops one entry, the oldest of its object: its state becomes the
    /// object's base if later entries build on it.
    fn drop_entry(&mut self, t: &mut Tables<'_>, stamp: u64) -> Result<(), StoreError> {
        let Some(bytes) = t.entries.remove(stamp)?.map(|v| v.value().to_vec()) else {
            return Ok(());
        };
        let size = bytes.len() as i64;
        // What the indexes need; a packed entry's state is not read.
        let record = Record::decode_header(&bytes).unwrap_or_default();
        t.kinds.remove((record.kind.as_str(), stamp))?;
        t.namespaces.remove((record.namespace.as_str(), stamp))?;
        if let Some(about) = &record.about {
            t.about.remove((about.as_str(), stamp))?;
        }
        let mut freed = size;
        if record.kind != GAP_KIND {
            let key = record.key.as_str();
            t.objects.remove((key, stamp))?;
            let later = t
                .objects
                .range((key, stamp + 1)..=(key, u64::MAX))?
                .next()
                .is_some();
            let old_base = t.bases.remove(key)?.map(|v| v.value().to_vec());
            if let Some(old) = &old_base {
                freed += old.len() as i64;
                self.unuse_dictionary(old);
            }
            let mut kept_as_base = false;
            if later && record.change != "DELETED" {
                let packed = Textual::of(&bytes).and_then(|t| t.dictionary()).is_some();
                if packed {
                    // A whole state as the cache held it: the base as it is.
                    freed -= size;
                    t.bases.insert(key, bytes.as_slice())?;
                    kept_as_base = true;
                } else {
                    // The state after it, on the base it followed.
                    let before = old_base.as_deref().and_then(read::decode_base);
                    let entry = if record.textual {
                        Record::decode(&bytes)
                    } else {
                        Some(record.clone())
                    };
                    let after = entry.and_then(|r| read::State::after(before.as_ref(), &r));
                    if let Some(encoded) = after.as_ref().and_then(encode_base) {
                        freed -= encoded.len() as i64;
                        t.bases.insert(key, encoded.as_slice())?;
                    }
                }
            }
            if !kept_as_base {
                self.unuse_dictionary(&bytes);
            }
            if !later && record.change == "DELETED" {
                t.latest.remove(key)?;
            }
        }
        self.add_bytes(&record.kind, -freed);
        let reach_key = format!("reach/{}", record.kind);
        let reach = meta(t, &reach_key)?.unwrap_or(0).max(stamp + 1);
        set_meta(t, &reach_key, reach)?;
        self.counts.lock().dropped += 1;
        Ok(())
    }
}

/// A snapshot being written, part by part.
struct OpenSnapshot {
    /// `group/Kind`.
    kind: String,
    origin: &'static str,
    gap: Option<(u64, u64)>,
    /// The keys of the objects its parts held so far.
    present: HashSet<String>,
}

/// What [`Writer::entry`] writes.
struct Entry<'a> {
    kind: &'a str,
    /// The kind's watch: its `apiVersion` is a whole state's.
    gvk: &'a Gvk,
    key: &'a str,
    object: &'a StoredObject,
    change_type: &'static str,
    origin: &'static str,
    gap: Option<(u64, u64)>,
    /// The writers of the version before; `None` for a new object.
    managers_before: Option<Managers>,
    /// The state before, when the journal's last version is it.
    before: Option<Before<'a>>,
    /// Patches or deltas since the last whole state.
    chain: u32,
    /// Which text the journal's last entry of the object keeps, if it
    /// keeps one ([`Textual`], [`identity`]): a delta can follow it.
    text_before: Option<u32>,
}

/// The version before a change.
enum Before<'a> {
    /// Rebuilt from the journal.
    State(Value),
    /// The cache's, which the journal last saw: compared as text.
    Cached(&'a StoredObject),
}

impl Before<'_> {
    /// Its state (see [`record::state_of`]).
    fn state(&self, kind: &str) -> Cow<'_, Value> {
        match self {
            Before::State(state) => Cow::Borrowed(state),
            Before::Cached(old) => Cow::Owned(record::state_of(old.to_value(), kind)),
        }
    }
}

fn managers_of(latest: &Latest) -> Managers {
    Managers::new(
        latest
            .managers
            .iter()
            .map(|(w, t, f)| Managed::new(w.clone(), *t, *f))
            .collect(),
    )
}

fn raw(value: &Value) -> Box<RawValue> {
    serde_json::value::to_raw_value(value)
        .unwrap_or_else(|_| RawValue::from_string("null".into()).expect("null is JSON"))
}

pub(super) fn encode_state(state: &Value) -> Vec<u8> {
    Record {
        full: Some(raw(state)),
        ..Record::default()
    }
    .encode()
}

/// A base holding `state`: its text as it is (a delta may follow it).
fn encode_base(state: &read::State) -> Option<Vec<u8>> {
    let text = String::from_utf8(state.text().into_owned()).ok()?;
    Some(
        Record {
            full: Some(RawValue::from_string(text).ok()?),
            ..Record::default()
        }
        .encode(),
    )
}

/// A managedFields entry's time, if it has one: `kubectl scale`'s entry
/// has none, read as 0.
fn stated_time(time: u32) -> Option<u32> {
    (time > 0).then_some(time)
}
