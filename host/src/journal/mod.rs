//! The journal: every change of every watched kind (unless excluded), who
//! made it, and the edges of the relationship index that appeared or went,
//! kept on disk under `dataDir` (`journal.redb`) or, without it, in memory
//! within a byte bound; read back as an object's history, its state at a
//! time, recent changes, and timelines of an object and what relates to it.
//!
//! How changes reach it: one task per followed kind reads its cache's live
//! changes, as the relations engine does, into one bounded queue; a task
//! that finds the queue full waits, falls behind its cache's broadcast and
//! then starts over from the cache's state: one snapshot, compared object
//! by object with what the journal last saw, so a missed change is an
//! entry of origin `relist`, never lost and never a stall of the cache or
//! of a request. One thread ([`write`]) writes the queue in batches.
//!
//! Which kinds: those watched as a whole (no namespace or selector),
//! except Leases, Endpoints and EndpointSlices, whose changes are mostly
//! heartbeats (`journal.kinds` includes them), and GRW's own kinds (their
//! edges are journaled as edges).

mod dictionaries;
mod diff;
mod read;
mod record;
mod tables;
mod write;

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use redb::{Database, ReadableDatabase, ReadableTable};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};

pub use read::{AsOf, ChangesFilter, Listed, Version, VersionView};
pub use tables::EdgeRecord;
pub use write::{Counts, StoreError};

use crate::config::{JournalConfig, WatchOptions};
use crate::gvk::{GRW_GROUP, Gvk};
use crate::memory_file::MemoryFile;
use crate::relations::{Direction, Graph, NodeKey};
use crate::store::{Change, Followed};
use crate::watch::{Watch, Watches};
use record::{kind_key, object_key};
use tables::*;
pub use write::now_micros;
use write::{Item, PendingEdges, Writer};

/// Items that may wait for the writer: each holds a change (two objects)
/// or a snapshot (pointers to the cache's objects).
pub const QUEUE_CAPACITY: usize = 1024;

/// The file under `dataDir`.
pub const FILE_NAME: &str = "journal.redb";

/// Kinds left out unless `journal.kinds` includes them: their changes are
/// heartbeats.
const CHURN: [(&str, &str); 3] = [
    ("coordination.k8s.io", "Lease"),
    ("", "Endpoints"),
    ("discovery.k8s.io", "EndpointSlice"),
];

/// The default bound of a journal on disk.
const DISK_BYTES: u64 = 1 << 30;
/// The default bound of a journal in memory.
const MEMORY_BYTES: u64 = 64 << 20;

/// Why the journal cannot open.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// `dataDir` cannot be made.
    #[error("cannot create the journal's directory {}", path.display())]
    CreateDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The file cannot be opened.
    #[error("cannot open the journal {}", path.display())]
    Open {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: redb::DatabaseError,
    },
    /// The file was written by a newer GRW.
    #[error("the journal {} has format {found}; this GRW reads format {} and older: move it away or run a newer GRW", path.display(), FORMAT)]
    NewerFormat {
        /// The file.
        path: PathBuf,
        /// Its format.
        found: u64,
    },
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Which kinds are journaled, and how long each is kept.
#[derive(Debug)]
pub struct Scope {
    max_age: Duration,
    max_bytes: u64,
    kinds: HashMap<String, KindSettings>,
    /// The caches keep `metadata.managedFields` in the objects' text
    /// (`keepManagedFields`): a state, which has none, is then not the
    /// cache's text.
    managed_fields_kept: bool,
}

/// `journal.kinds`' `journal`, `maxAgeSeconds` and `maxBytes` of a kind.
type KindSettings = (Option<bool>, Option<Duration>, Option<u64>);

impl Scope {
    /// The scope `journal` configures; `persistent` when kept on disk
    /// (the default byte bound differs).
    pub fn new(config: &JournalConfig, persistent: bool) -> Scope {
        Scope {
            max_age: config.max_age,
            max_bytes: config.max_bytes.unwrap_or(if persistent {
                DISK_BYTES
            } else {
                MEMORY_BYTES
            }),
            kinds: config
                .kinds
                .iter()
                .map(|k| {
                    (
                        kind_key(&k.group, &k.kind),
                        (k.journal, k.max_age, k.max_bytes),
                    )
                })
                .collect(),
            managed_fields_kept: false,
        }
    }

    /// This scope, for caches that keep `metadata.managedFields` (or not).
    pub fn with_managed_fields_kept(self, kept: bool) -> Scope {
        Scope {
            managed_fields_kept: kept,
            ..self
        }
    }

    /// Whether changes of this kind are journaled.
    pub fn covers(&self, group: &str, kind: &str) -> bool {
        if group == GRW_GROUP {
            return false;
        }
        match self.kinds.get(&kind_key(group, kind)).and_then(|k| k.0) {
            Some(journal) => journal,
            None => !CHURN.contains(&(group, kind)),
        }
    }

    /// The age and bytes a kind's entries are kept within.
    fn retention(&self, kind: &str) -> (Duration, u64) {
        let own = self.kinds.get(kind);
        (
            own.and_then(|k| k.1).unwrap_or(self.max_age),
            own.and_then(|k| k.2).unwrap_or(u64::MAX),
        )
    }
}

/// The journal.
pub struct Journal {
    db: Arc<Database>,
    backing: Backing,
    scope: Arc<Scope>,
    queue: mpsc::Sender<Item>,
    /// Kinds followed now (`group/Kind`), one watch each.
    followed: Mutex<HashSet<String>>,
    counts: Arc<Mutex<Counts>>,
    /// Edge changes waiting for the writer.
    pending_edges: Arc<Mutex<PendingEdges>>,
    /// Versions read before, decoded.
    decoded: read::Decoded,
    /// The dictionaries its packed entries need, in the registry while
    /// the journal is open.
    _dictionaries: Arc<dictionaries::Held>,
}

/// Where the database is kept.
enum Backing {
    /// `dataDir/journal.redb`.
    File(PathBuf),
    /// In memory, without `dataDir`.
    Memory(MemoryFile),
}

impl Backing {
    fn path(&self) -> Option<&Path> {
        match self {
            Backing::File(path) => Some(path),
            Backing::Memory(_) => None,
        }
    }
}

/// A time as answers show it: RFC 3339 with milliseconds.
pub fn rfc3339_micros(stamp: u64) -> String {
    crate::time::rfc3339_millis(Duration::from_micros(stamp))
}

/// Memory the database may use to cache pages (its default, 1 GiB, would
/// grow with the journal): recent entries, the indexes' upper levels and
/// the objects' last versions are what writing reads.
pub const CACHE_BYTES: usize = 16 << 20;

/// The same for a journal in memory: its pages are in memory already, and
/// a larger cache would only hold them twice.
pub const MEMORY_CACHE_BYTES: usize = 2 << 20;

impl Journal {
    /// Opens (or creates) `dir/journal.redb`, or a journal in memory, and
    /// starts its writer thread.
    pub fn open(scope: Arc<Scope>, dir: Option<&Path>) -> Result<Arc<Journal>, OpenError> {
        let (db, backing) = match dir {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(|source| OpenError::CreateDir {
                    path: dir.to_path_buf(),
                    source,
                })?;
                let path = dir.join(FILE_NAME);
                let db = Database::builder()
                    .set_cache_size(CACHE_BYTES)
                    .create(&path)
                    .map_err(|source| OpenError::Open {
                        path: path.clone(),
                        source,
                    })?;
                (db, Backing::File(path))
            }
            None => {
                let memory = MemoryFile::new();
                let db = Database::builder()
                    .set_cache_size(MEMORY_CACHE_BYTES)
                    .create_with_backend(memory.clone())
                    .map_err(|source| OpenError::Open {
                        path: PathBuf::from("(memory)"),
                        source,
                    })?;
                (db, Backing::Memory(memory))
            }
        };
        let txn = db.begin_write().map_err(StoreError::from)?;
        {
            let mut meta = txn.open_table(META).map_err(StoreError::from)?;
            let found = meta
                .get("format")
                .map_err(StoreError::from)?
                .map(|v| v.value());
            match found {
                Some(found) if found > FORMAT => {
                    return Err(OpenError::NewerFormat {
                        path: backing.path().map(Path::to_path_buf).unwrap_or_default(),
                        found,
                    });
                }
                // An older file is written in this format from now on.
                _ => {
                    meta.insert("format", FORMAT).map_err(StoreError::from)?;
                }
            }
        }
        macro_rules! create {
            ($($t:expr),*) => {$( txn.open_table($t).map_err(StoreError::from)?; )*};
        }
        create!(
            ENTRIES,
            OBJECTS,
            KINDS,
            NAMESPACES,
            ABOUT,
            LATEST,
            BASES,
            EDGES,
            DICTIONARY_USES
        );
        let held = Arc::new(dictionaries::Held::default());
        {
            let table = txn.open_table(DICTIONARIES).map_err(StoreError::from)?;
            for row in table.iter().map_err(StoreError::from)? {
                let (_, trained) = row.map_err(StoreError::from)?;
                held.hold(&Arc::new(crate::store::Dictionary::read(
                    trained.value(),
                    0,
                )));
            }
        }
        txn.commit().map_err(StoreError::from)?;

        let db = Arc::new(db);
        let counts = Arc::new(Mutex::new(Counts::default()));
        let pending_edges = Arc::new(Mutex::new(PendingEdges::default()));
        let writer = Writer::open(
            db.clone(),
            scope.clone(),
            counts.clone(),
            pending_edges.clone(),
            held.clone(),
        )?;
        let (queue, rx) = mpsc::channel(QUEUE_CAPACITY);
        let reported = counts.clone();
        std::thread::Builder::new()
            .name("grw-journal".into())
            .spawn(move || write::run_reporting(&reported, || writer.run(rx)))
            .expect("the journal's writer thread starts");
        Ok(Arc::new(Journal {
            db,
            backing,
            scope,
            queue,
            followed: Mutex::new(HashSet::new()),
            counts,
            pending_edges,
            decoded: read::Decoded::default(),
            _dictionaries: held,
        }))
    }

    /// Where the journal is kept; `None` in memory.
    pub fn path(&self) -> Option<&Path> {
        self.backing.path()
    }

    /// Which kinds are journaled.
    pub fn scope(&self) -> &Scope {
        &self.scope
    }

    /// Follows every watch of a whole kind that exists or will.
    pub fn follow_watches(self: &Arc<Self>, watches: &Watches) {
        let weak = Arc::downgrade(self);
        watches.on_new_watch(Arc::new(move |watch| {
            if let Some(journal) = weak.upgrade() {
                journal.follow(watch.clone());
            }
        }));
        for watch in watches.all() {
            self.follow(watch);
        }
    }

    fn follow(self: &Arc<Self>, watch: Arc<Watch>) {
        let gvk = watch.key.gvk.clone();
        if watch.key.options != WatchOptions::default() || !self.scope.covers(&gvk.group, &gvk.kind)
        {
            return;
        }
        let kind = kind_key(&gvk.group, &gvk.kind);
        if !self.followed.lock().insert(kind.clone()) {
            return;
        }
        let journal = self.clone();
        tokio::spawn(async move {
            tokio::select! {
                () = journal.feed(&watch, &gvk) => {},
                () = watch.removed() => {},
            }
            journal.followed.lock().remove(&kind);
        });
    }

    /// A snapshot once the cache has synced, then each change, and a new
    /// snapshot whenever the feed fell behind the cache's broadcast.
    async fn feed(&self, watch: &Watch, gvk: &Gvk) {
        watch
            .cache
            .follow(
                |followed| {
                    let (seen, queued) = (now_micros(), Instant::now());
                    let item = match followed {
                        Followed::Snapshot(objects) => Item::Snapshot {
                            gvk: gvk.clone(),
                            objects,
                            seen,
                            queued,
                        },
                        Followed::Change(change) => Item::Change {
                            gvk: gvk.clone(),
                            change,
                            seen,
                            queued,
                        },
                    };
                    async move { self.queue.send(item).await.is_ok() }
                },
                |missed| tracing::warn!(gvk = %gvk, missed, "the journal fell behind this kind's changes; comparing it with the cache again"),
            )
            .await;
    }

    /// Writes changes a recording replays, each at its time (µs since the
    /// epoch), before the caches are followed.
    pub async fn replayed(&self, changes: Vec<(Gvk, Arc<Change>, u64)>) {
        for (gvk, change, seen) in changes {
            if self
                .queue
                .send(Item::Change {
                    gvk,
                    change,
                    seen,
                    queued: Instant::now(),
                })
                .await
                .is_err()
            {
                return;
            }
        }
    }

    /// Records edges of the relationship index that appeared or went.
    /// Never waits: they are kept for the writer's next transaction (up
    /// to 100,000 waiting; past it they are counted and left out), and the
    /// writer is woken.
    pub fn edges(&self, edges: Vec<EdgeRecord>) {
        if edges.is_empty() {
            return;
        }
        let wake = self.pending_edges.lock().push(edges, now_micros());
        // A full queue wakes the writer anyway: each transaction takes
        // every edge waiting.
        if wake {
            let _ = self.queue.try_send(Item::Wake);
        }
    }

    /// Waits until everything queued so far is written.
    pub async fn flush(&self) {
        let (done, wait) = oneshot::channel();
        if self.queue.send(Item::Flush(done)).await.is_ok() {
            let _ = wait.await;
        }
    }

    /// What the writer did, and the journal's size per kind.
    pub fn status(&self) -> Value {
        let counts = self.counts.lock().clone();
        let kinds = self
            .db
            .begin_read()
            .map_err(StoreError::from)
            .and_then(|txn| read::kinds(&txn))
            .unwrap_or_default();
        json!({
            "persistent": self.path().is_some(),
            "fileBytes": self.file_bytes(),
            "maxBytes": self.scope.max_bytes,
            "maxAgeSeconds": self.scope.max_age.as_secs(),
            "writeLag": counts.lag_summary(),
            "counts": counts,
            "edgesDropped": self.pending_edges.lock().dropped,
            "writer": {"running": counts.stopped.is_none(), "error": counts.stopped},
            "kinds": kinds.into_iter().map(|(kind, (bytes, from))| json!({
                "kind": kind,
                "bytes": bytes,
                "from": (from > 0).then(|| rfc3339_micros(from)),
            })).collect::<Vec<_>>(),
        })
    }

    /// The bytes of the database: its file's length, or the memory it
    /// holds. More than the entries' bytes: index rows, the objects' last
    /// versions, pages freed and not yet reused.
    pub fn file_bytes(&self) -> u64 {
        match &self.backing {
            Backing::Memory(memory) => memory.held() as u64,
            Backing::File(path) => std::fs::metadata(path).map_or(0, |m| m.len()),
        }
    }

    /// The versions of one object in `since..=until` (µs), newest first;
    /// with `states`, each with the whole object.
    pub fn history(
        &self,
        object: &NodeKey,
        since: u64,
        until: u64,
        limit: usize,
        states: bool,
    ) -> Result<Vec<Arc<Version>>, StoreError> {
        let txn = self.db.begin_read()?;
        read::history(
            &txn,
            &self.decoded,
            &node_key(object),
            since,
            until,
            limit,
            states,
        )
    }

    /// One object as it was at `at` (µs).
    pub fn as_of(&self, object: &NodeKey, at: u64) -> Result<AsOf, StoreError> {
        let txn = self.db.begin_read()?;
        read::as_of(
            &txn,
            &kind_key(&object.group, &object.kind),
            &node_key(object),
            at,
        )
    }

    /// Recent changes, newest first.
    pub fn changes(&self, filter: &ChangesFilter) -> Result<Vec<Listed>, StoreError> {
        let txn = self.db.begin_read()?;
        read::changes(&txn, filter)
    }

    /// The entries of `root` and of everything within `depth` steps of it
    /// in the relationship index as it was anywhere in the window (the
    /// index now, and every edge that appeared or went since `since`),
    /// with the Events about each, newest first.
    pub fn timeline(&self, graph: &Graph, asked: &TimelineQuery) -> Result<Timeline, StoreError> {
        let txn = self.db.begin_read()?;
        let mut journaled: HashMap<String, Vec<(EdgeRecord, u64)>> = HashMap::new();
        let edge_changes = read::edges(&txn, asked.since, asked.until)?;
        for (stamp, edge) in &edge_changes {
            journaled
                .entry(edge.from.clone())
                .or_default()
                .push((edge.clone(), *stamp));
            journaled
                .entry(edge.to.clone())
                .or_default()
                .push((edge.clone(), *stamp));
        }
        let wanted = |relation: &str| {
            asked.relations.is_empty() || asked.relations.iter().any(|r| r == relation)
        };
        let root_key = node_key(&asked.root);
        let mut paths: HashMap<String, Vec<Step>> = HashMap::from([(root_key.clone(), Vec::new())]);
        let mut order = vec![root_key.clone()];
        let mut frontier = VecDeque::from([(root_key, asked.root.clone(), 0u32)]);
        let mut capped = false;
        while let Some((key, node, depth)) = frontier.pop_front() {
            if depth >= asked.depth {
                continue;
            }
            let mut next: Vec<(String, String, bool)> = Vec::new();
            let (_, edges, _) = graph.around(&node, Direction::Both, 1, &asked.relations, 10_000);
            for edge in edges {
                let out = *edge.from == node;
                let other = if out { &edge.to } else { &edge.from };
                next.push((node_key(other), edge.relation.to_string(), out));
            }
            for (edge, _) in journaled.get(&key).into_iter().flatten() {
                if !wanted(&edge.relation) {
                    continue;
                }
                let out = edge.from == key;
                next.push((
                    if out {
                        edge.to.clone()
                    } else {
                        edge.from.clone()
                    },
                    edge.relation.clone(),
                    out,
                ));
            }
            // Of two paths as short, the one through owners is kept, then
            // by relation and object: the same graph always gives the same
            // paths, whatever order its edges were found in.
            next.sort_by(|a, b| {
                (a.1 != "owns", &a.1, &a.0, a.2).cmp(&(b.1 != "owns", &b.1, &b.0, b.2))
            });
            for (other, relation, out) in next {
                if paths.contains_key(&other) {
                    continue;
                }
                if order.len() >= asked.max_objects {
                    capped = true;
                    break;
                }
                let Some(other_node) = parse_node(&other) else {
                    continue;
                };
                let mut path = paths[&key].clone();
                path.push(Step {
                    relation,
                    out,
                    node: other.clone(),
                });
                paths.insert(other.clone(), path);
                order.push(other.clone());
                frontier.push_back((other, other_node, depth + 1));
            }
        }
        let edge_changes: Vec<(u64, EdgeRecord)> = edge_changes
            .into_iter()
            .filter(|(_, edge)| {
                (paths.contains_key(&edge.from) || paths.contains_key(&edge.to))
                    && wanted(&edge.relation)
            })
            .collect();
        // Which entries make the newest `limit`, from the indexes alone:
        // only those are decoded, their states rebuilt and diffed.
        // One more than the limit says whether there were more.
        let mut stamps = read::stamps(&txn, &order, asked.since, asked.until, asked.limit + 1)?;
        let mut all: Vec<u64> = stamps.iter().map(|(stamp, _, _)| *stamp).collect();
        all.extend(edge_changes.iter().map(|(stamp, _)| *stamp));
        all.sort_unstable_by(|a, b| b.cmp(a));
        let truncated = all.len() > asked.limit;
        let since = match all.get(asked.limit.saturating_sub(1)) {
            Some(&oldest) if truncated => oldest,
            _ => asked.since,
        };
        // Only the objects with an entry among those are read again.
        stamps.retain(|(stamp, _, _)| *stamp >= since);
        let changed: BTreeSet<usize> = stamps.iter().filter(|s| !s.2).map(|s| s.1).collect();
        let told: BTreeSet<usize> = stamps.iter().filter(|s| s.2).map(|s| s.1).collect();
        let mut entries: Vec<TimelineEntry> = Vec::new();
        let tables = read::VersionTables::open(&txn, &self.decoded)?;
        for i in changed {
            let key = &order[i];
            for version in tables.light(key, since, asked.until, asked.limit)? {
                entries.push(TimelineEntry::Change {
                    object: key.clone(),
                    version,
                });
            }
        }
        for i in told {
            let key = &order[i];
            for event in read::events_about(&txn, key, since, asked.until)? {
                entries.push(TimelineEntry::Event {
                    object: key.clone(),
                    event: Box::new(event),
                });
            }
        }
        for (stamp, edge) in edge_changes {
            if stamp >= since {
                entries.push(TimelineEntry::Edge { stamp, edge });
            }
        }
        entries.sort_by_key(|e| std::cmp::Reverse(e.stamp()));
        entries.truncate(asked.limit);
        Ok(Timeline {
            paths,
            objects: order,
            entries,
            truncated,
            capped,
        })
    }
}

/// What a timeline is asked for.
#[derive(Debug, Clone)]
pub struct TimelineQuery {
    /// The object asked about.
    pub root: NodeKey,
    /// From (µs).
    pub since: u64,
    /// Up to (µs).
    pub until: u64,
    /// Steps of the relationship index followed.
    pub depth: u32,
    /// Only these relations (empty: any).
    pub relations: Vec<String>,
    /// At most this many entries.
    pub limit: usize,
    /// At most this many related objects.
    pub max_objects: usize,
}

/// One step of the path from the asked-for object to another.
#[derive(Debug, Clone)]
pub struct Step {
    /// The relation followed.
    pub relation: String,
    /// Whether it was followed from its `from` end.
    pub out: bool,
    /// The object reached (an object key).
    pub node: String,
}

/// One entry of a timeline.
pub enum TimelineEntry {
    /// A version of an object.
    Change {
        /// Its object key.
        object: String,
        /// The version.
        version: Arc<Version>,
    },
    /// An Event about an object.
    Event {
        /// The object it is about.
        object: String,
        /// The Event's entry.
        event: Box<Listed>,
    },
    /// An edge appeared or went.
    Edge {
        /// When (µs).
        stamp: u64,
        /// Which.
        edge: EdgeRecord,
    },
}

impl TimelineEntry {
    /// When (µs).
    pub fn stamp(&self) -> u64 {
        match self {
            TimelineEntry::Change { version, .. } => version.stamp,
            TimelineEntry::Event { event, .. } => event.stamp,
            TimelineEntry::Edge { stamp, .. } => *stamp,
        }
    }
}

/// A timeline: the objects reached, how, and the entries.
pub struct Timeline {
    /// The path from the asked-for object to each object reached.
    pub paths: HashMap<String, Vec<Step>>,
    /// The objects reached, the asked-for one first.
    pub objects: Vec<String>,
    /// Newest first.
    pub entries: Vec<TimelineEntry>,
    /// More entries than the limit: the oldest are left out.
    pub truncated: bool,
    /// More objects within the depth than a timeline walks (`max_objects`):
    /// the farthest are left out.
    pub capped: bool,
}

/// The object key of a node.
pub fn node_key(node: &NodeKey) -> String {
    object_key(&node.group, &node.kind, &node.namespace, &node.name)
}

/// The node of an object key.
pub fn parse_node(key: &str) -> Option<NodeKey> {
    let (group, kind, namespace, name) = record::split_object_key(key)?;
    Some(NodeKey {
        group: group.into(),
        kind: kind.into(),
        namespace: namespace.into(),
        name: name.into(),
    })
}

/// `group/Kind namespace/name` of an object key, as the relations routes
/// write nodes.
pub fn show_key(key: &str) -> String {
    // As a node shows itself, without making one.
    match record::split_object_key(key) {
        Some((group, kind, namespace, name)) => {
            let group = if group.is_empty() { "core" } else { group };
            let namespace = if namespace.is_empty() { "-" } else { namespace };
            format!("{group}/{kind} {namespace}/{name}")
        }
        None => key.to_string(),
    }
}

#[cfg(test)]
mod tests;
