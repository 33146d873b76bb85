//! The outbox: everything the notification engine must not forget, in one
//! embedded database (redb) under `dataDir`, or in memory without one.
//!
//! Tables:
//! - `subscriptions`: name → definition (JSON) of every subscription;
//! - `changes`: change number → one change as subscribers are told it
//!   ([`Announcement`]), stored once however many subscriptions want it;
//! - `refs`: change number → how many queue entries and dead letters refer
//!   to the change; it goes when the last one does;
//! - `queue`: (subscription, seq) → change number, oldest first;
//! - `dead`: (subscription, seq) → dead letter: why, when, after how many
//!   attempts, and the change number;
//! - `announced`: (watch, object key) → the object's state as last announced
//!   (`resourceVersion`, NUL, JSON), so a restart resumes from it;
//! - `positions`: watch → resourceVersion up to which changes are announced;
//! - `meta`: `format` → the format of everything above ([`FORMAT`]);
//! - `sizes`: subscription → bytes of its queue and of its dead letters,
//!   derived from the tables above and rebuilt at each open.
//!
//! Each subscription's two lists are bounded in bytes ([`Bounds`]): past
//! its bound the oldest pending deliveries become dead letters, and past
//! theirs the oldest dead letters are dropped.
//!
//! Without `dataDir`, `announced` and `positions` stay empty: nothing survives a restart
//! anyway, and the feed's own record of the announced state shares the
//! cache's objects instead of copying them.
//!
//! Bodies are not stored: each sink renders the change in its own format
//! when it sends it, so five subscriptions to one watch cost one copy of each
//! change plus five 8-byte references.
//!
//! Every function is blocking; callers on the async runtime use
//! `spawn_blocking`. A write transaction is committed durably before the
//! function returns. After a failed write (a full or failing disk), redb
//! refuses every later transaction until the database is opened again; the
//! outbox does that on its own, so a disk that recovers is used again.

mod lists;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::RwLock;
use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};
use serde::{Deserialize, Serialize};

use crate::gvk::Gvk;
use crate::store::{ChangeType, Origin, StoredObject};
pub use lists::{Bounds, ListBytes, Trimmed};
use lists::{DeadRecord, Lists, decode_dead_record, of};

const SUBSCRIPTIONS: TableDefinition<&str, &[u8]> = TableDefinition::new("subscriptions");
const CHANGES: TableDefinition<u64, &[u8]> = TableDefinition::new("changes");
const REFS: TableDefinition<u64, u32> = TableDefinition::new("refs");
const QUEUE: TableDefinition<(&str, u64), u64> = TableDefinition::new("queue");
const DEAD: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("dead");
const ANNOUNCED: TableDefinition<(&str, &str), &[u8]> = TableDefinition::new("announced");
const POSITIONS: TableDefinition<&str, &str> = TableDefinition::new("positions");
const META: TableDefinition<&str, u32> = TableDefinition::new("meta");

/// The format this GRW reads and writes: the tables above and how their
/// keys and values are encoded. A change to either raises it, so that a
/// database is never misread: one of a newer format is refused, and an
/// older one is converted (there is none yet). A database written before
/// the format was recorded has this one.
pub const FORMAT: u32 = 1;

/// The key of [`FORMAT`] in the `meta` table.
const FORMAT_KEY: &str = "format";

/// Memory the database may use to cache pages. Its default (1 GiB) would
/// let a large backlog fill memory; the queues are read front to back, so a
/// small cache serves them as well.
const CACHE_BYTES: usize = 32 << 20;

/// File name of the database inside `dataDir`.
pub const FILE_NAME: &str = "grw.redb";

/// Why the outbox could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum OutboxError {
    /// `dataDir` cannot be created.
    #[error("cannot create the data directory {}", .path.display())]
    CreateDir {
        /// `dataDir`.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The database file cannot be opened (or reopened after a failed write).
    #[error("cannot open the outbox {}", .path.display())]
    Open {
        /// `dataDir/grw.redb`.
        path: PathBuf,
        /// Why.
        #[source]
        source: redb::DatabaseError,
    },
    /// A read or write of the database failed.
    #[error("outbox read or write failed")]
    Database(#[from] redb::Error),
    /// An entry cannot be read back.
    #[error("outbox entry {0} is corrupt")]
    Corrupt(String),
    /// The database was written by a newer GRW, in a format this one does
    /// not know.
    #[error(
        "the outbox {} has format {found}, written by a newer GRW; this GRW reads format {supported} and older. Run a GRW at least as new as the one that wrote it, or move the file away to start with an empty outbox (the deliveries and dead letters in it are then not sent)",
        .path.display()
    )]
    NewerFormat {
        /// `dataDir/grw.redb`.
        path: PathBuf,
        /// The format it has.
        found: u32,
        /// The newest format this GRW reads ([`FORMAT`]).
        supported: u32,
    },
}

impl OutboxError {
    /// Whether the database must be opened again before it can be used: redb
    /// refuses every transaction after a failed write.
    fn needs_reopen(&self) -> bool {
        matches!(
            self,
            OutboxError::Open { .. }
                | OutboxError::Database(
                    redb::Error::Io(_) | redb::Error::PreviousIo | redb::Error::DatabaseClosed
                )
        )
    }
}

macro_rules! outbox_error_from {
    ($($t:ty),*) => {$(
        impl From<$t> for OutboxError {
            fn from(e: $t) -> Self {
                OutboxError::Database(redb::Error::from(e))
            }
        }
    )*};
}
outbox_error_from!(
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

/// One change as subscribers are told it: the change's type (as announced,
/// which may differ from the cache's), where it came from, the object's
/// identity, when it was queued, and the object (with its previous state for
/// MODIFIED) as JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Announcement {
    /// Added, modified or deleted.
    pub kind: ChangeType,
    /// Watch event, relist diff, or the initial snapshot of a new subscription.
    pub origin: Origin,
    /// Kind of the object.
    pub gvk: Gvk,
    /// Namespace, empty for cluster-scoped objects.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `metadata.uid`.
    pub uid: String,
    /// `metadata.resourceVersion` of the object as announced.
    pub resource_version: String,
    /// When it was queued, milliseconds since the Unix epoch.
    pub queued_ms: u64,
    /// The object's JSON; its last state for DELETED.
    pub object: Vec<u8>,
    /// The previous state's JSON, for MODIFIED.
    pub old: Option<Vec<u8>>,
}

/// The header line of an announcement on disk.
#[derive(Serialize, Deserialize)]
struct Header<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    origin: &'a str,
    group: &'a str,
    version: &'a str,
    kind_name: &'a str,
    namespace: &'a str,
    name: &'a str,
    uid: &'a str,
    rv: &'a str,
    queued: u64,
}

impl Announcement {
    /// Idempotency id: `uid/resourceVersion/TYPE`, as in [`crate::store::Change::id`].
    pub fn id(&self) -> String {
        format!("{}/{}/{}", self.uid, self.resource_version, self.kind)
    }

    /// On disk: a JSON header line, the object's JSON, and for MODIFIED a
    /// newline and the previous state's JSON (compact JSON holds no newline).
    pub fn encode(
        kind: ChangeType,
        origin: Origin,
        gvk: &Gvk,
        object: &StoredObject,
        old: Option<&StoredObject>,
        queued_ms: u64,
    ) -> Vec<u8> {
        let header = Header {
            kind: kind.as_str(),
            origin: origin.as_str(),
            group: &gvk.group,
            version: &gvk.version,
            kind_name: &gvk.kind,
            namespace: object.namespace(),
            name: object.name(),
            uid: object.uid(),
            rv: object.resource_version(),
            queued: queued_ms,
        };
        let mut out =
            Vec::with_capacity(object.json_len() + old.map_or(0, |o| o.json_len() + 1) + 192);
        // Serializing strings and numbers into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut out, &header);
        out.push(b'\n');
        object.write_json(&mut out);
        if let Some(old) = old {
            out.push(b'\n');
            old.write_json(&mut out);
        }
        out
    }

    fn decode(number: u64, bytes: &[u8]) -> Result<Announcement, OutboxError> {
        let corrupt = || OutboxError::Corrupt(format!("change {number}"));
        let mut parts = bytes.splitn(3, |b| *b == b'\n');
        let header: Header<'_> = parts
            .next()
            .and_then(|h| serde_json::from_slice(h).ok())
            .ok_or_else(corrupt)?;
        let object = parts.next().ok_or_else(corrupt)?.to_vec();
        Ok(Announcement {
            kind: ChangeType::parse(header.kind).ok_or_else(corrupt)?,
            origin: Origin::parse(header.origin).ok_or_else(corrupt)?,
            gvk: Gvk::new(header.group, header.version, header.kind_name),
            namespace: header.namespace.to_string(),
            name: header.name.to_string(),
            uid: header.uid.to_string(),
            resource_version: header.rv.to_string(),
            queued_ms: header.queued,
            object,
            old: parts.next().map(<[u8]>::to_vec),
        })
    }
}

/// One pending delivery: a place in a subscription's queue and the change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queued {
    /// Position in its subscription's queue.
    pub seq: u64,
    /// The change's number in the outbox.
    pub change: u64,
    /// The change.
    pub announcement: Announcement,
}

/// A delivery the receiver refused, kept until replayed or dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLetter {
    /// The delivery as it was queued.
    pub queued: Queued,
    /// What the receiver answered.
    pub reason: String,
    /// When it was refused, milliseconds since the Unix epoch.
    pub failed_ms: u64,
    /// Attempts made.
    pub attempts: u32,
}

/// What the bounds did in one transaction: per subscription, and the
/// changes that went with dropped dead letters.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Trims {
    /// Per subscription whose lists were trimmed.
    pub subscriptions: BTreeMap<String, Trimmed>,
    /// Changes no entry refers to any more, which are gone.
    pub released: Vec<u64>,
}

/// The outcome of [`Outbox::settle`].
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Settlement {
    /// Entries that left the queue: delivered or filtered out.
    pub done: u64,
    /// Entries moved to the dead letters.
    pub refused: u64,
    /// What the dead letters' bound dropped.
    pub trimmed: Trimmed,
    /// Changes no entry refers to any more, which are gone.
    pub released: Vec<u64>,
}

/// Counts of one subscription's lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct QueueCounts {
    /// Deliveries waiting.
    pub pending: u64,
    /// Dead letters.
    pub dead: u64,
    /// Highest sequence number in either list.
    pub last_seq: Option<u64>,
}

/// The announced state of a watch: its resourceVersion and objects (JSON).
pub type Announced = (String, Vec<Vec<u8>>);

/// The embedded database.
pub struct Outbox {
    /// `None` after a failed reopen, until the next attempt succeeds.
    db: RwLock<Option<Database>>,
    /// `dataDir/grw.redb`; `None` in memory.
    path: Option<PathBuf>,
    /// The number the next change gets.
    next_change: AtomicU64,
    /// How much each subscription's lists may hold.
    bounds: Bounds,
}

impl Outbox {
    /// Opens (or creates) `dir/grw.redb`; `None` keeps everything in memory.
    /// Each subscription's lists get the default [`Bounds`].
    pub fn open(dir: Option<&Path>) -> Result<Outbox, OutboxError> {
        Outbox::open_bounded(dir, Bounds::default())
    }

    /// [`Outbox::open`] with each subscription's lists held within `bounds`.
    pub fn open_bounded(dir: Option<&Path>, bounds: Bounds) -> Result<Outbox, OutboxError> {
        let (db, path) = match dir {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(|source| OutboxError::CreateDir {
                    path: dir.to_path_buf(),
                    source,
                })?;
                let path = dir.join(FILE_NAME);
                (open_file(&path)?, Some(path))
            }
            None => (
                Database::builder().create_with_backend(crate::memory_file::MemoryFile::new())?,
                None,
            ),
        };
        let txn = db.begin_write()?;
        {
            let mut meta = txn.open_table(META)?;
            let found = meta.get(FORMAT_KEY)?.map(|f| f.value());
            match found {
                None => {
                    meta.insert(FORMAT_KEY, FORMAT)?;
                }
                Some(found) if found > FORMAT => {
                    return Err(OutboxError::NewerFormat {
                        path: path.unwrap_or_default(),
                        found,
                        supported: FORMAT,
                    });
                }
                Some(_) => {}
            }
        }
        txn.open_table(SUBSCRIPTIONS)?;
        let next_change = txn
            .open_table(CHANGES)?
            .last()?
            .map_or(0, |(k, _)| k.value() + 1);
        txn.open_table(REFS)?;
        txn.open_table(QUEUE)?;
        txn.open_table(DEAD)?;
        txn.open_table(ANNOUNCED)?;
        txn.open_table(POSITIONS)?;
        lists::rebuild_sizes(&txn)?;
        txn.commit()?;
        Ok(Outbox {
            db: RwLock::new(Some(db)),
            path,
            next_change: AtomicU64::new(next_change),
            bounds,
        })
    }

    /// Whether the outbox survives a restart.
    pub fn is_persistent(&self) -> bool {
        self.path.is_some()
    }

    /// A number for a new change, never given out before by this outbox.
    pub fn next_change_number(&self) -> u64 {
        self.next_change.fetch_add(1, Ordering::Relaxed)
    }

    /// Runs `op` on the database; after an error that leaves redb unusable
    /// (a failed write), opens the database again for the next call.
    fn with<T>(
        &self,
        op: impl FnOnce(&Database) -> Result<T, OutboxError>,
    ) -> Result<T, OutboxError> {
        let closed = self.db.read().is_none();
        if closed {
            self.reopen()?;
        }
        let result = {
            let db = self.db.read();
            match db.as_ref() {
                Some(db) => op(db),
                None => Err(OutboxError::Database(redb::Error::DatabaseClosed)),
            }
        };
        if let Err(e) = &result
            && e.needs_reopen()
            && let Err(reopen) = self.reopen()
        {
            tracing::warn!(error = %crate::error::Report(&reopen), "the outbox cannot be opened again yet; trying again with the next call");
        }
        result
    }

    /// Closes the database and opens it again (redb repairs it if needed).
    /// In memory there is nothing to reopen.
    fn reopen(&self) -> Result<(), OutboxError> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let mut db = self.db.write();
        // The old handle holds the file lock: it must go first.
        drop(db.take());
        let fresh = open_file(path)?;
        *db = Some(fresh);
        tracing::info!(path = %path.display(), "outbox opened again after a failed write");
        Ok(())
    }

    /// Every stored subscription definition, by name.
    pub fn subscriptions(&self) -> Result<Vec<(String, Vec<u8>)>, OutboxError> {
        self.with(|db| {
            let txn = db.begin_read()?;
            let table = txn.open_table(SUBSCRIPTIONS)?;
            let mut out = Vec::new();
            for entry in table.iter()? {
                let (k, v) = entry?;
                out.push((k.value().to_string(), v.value().to_vec()));
            }
            Ok(out)
        })
    }

    /// Stores (or replaces) a subscription definition.
    pub fn put_subscription(&self, name: &str, definition: &[u8]) -> Result<(), OutboxError> {
        self.with(|db| {
            let txn = db.begin_write()?;
            txn.open_table(SUBSCRIPTIONS)?.insert(name, definition)?;
            txn.commit()?;
            Ok(())
        })
    }

    /// Forgets a subscription with its queue and dead letters; returns how
    /// many pending deliveries were dropped.
    pub fn delete_subscription(&self, name: &str) -> Result<u64, OutboxError> {
        self.with(|db| {
            let txn = db.begin_write()?;
            txn.open_table(SUBSCRIPTIONS)?.remove(name)?;
            let dropped = Lists::open(&txn, self.bounds)?.drop_all(name)?;
            txn.commit()?;
            Ok(dropped)
        })
    }

    /// The announced state of a watch: its resourceVersion and objects (JSON).
    pub fn announced(&self, watch: &str) -> Result<Option<Announced>, OutboxError> {
        self.with(|db| {
            let txn = db.begin_read()?;
            let Some(rv) = txn
                .open_table(POSITIONS)?
                .get(watch)?
                .map(|v| v.value().to_string())
            else {
                return Ok(None);
            };
            let table = txn.open_table(ANNOUNCED)?;
            let mut objects = Vec::new();
            for entry in table.range((watch, "")..)? {
                let (k, v) = entry?;
                if k.value().0 != watch {
                    break;
                }
                objects.push(split_state(v.value()).1.to_vec());
            }
            Ok(Some((rv, objects)))
        })
    }

    /// Forgets the announced state of a watch.
    pub fn forget_watch(&self, watch: &str) -> Result<(), OutboxError> {
        self.feed(watch, |txn| txn.clear()).map(|_| ())
    }

    /// Runs `f` in one write transaction of a watch's feed and commits it;
    /// returns what `f` returned and what the bounds trimmed meanwhile.
    pub fn feed<R>(
        &self,
        watch: &str,
        f: impl FnOnce(&mut FeedTxn<'_>) -> Result<R, OutboxError>,
    ) -> Result<(R, Trims), OutboxError> {
        self.with(|db| {
            let txn = db.begin_write()?;
            let result = {
                let mut feed = FeedTxn {
                    watch,
                    announced: txn.open_table(ANNOUNCED)?,
                    positions: txn.open_table(POSITIONS)?,
                    lists: Lists::open(&txn, self.bounds)?,
                    now_ms: crate::time::unix_millis(),
                };
                let result = f(&mut feed)?;
                let trims = Trims {
                    subscriptions: std::mem::take(&mut feed.lists.trimmed),
                    released: std::mem::take(&mut feed.lists.released),
                };
                (result, trims)
            };
            txn.commit()?;
            Ok(result)
        })
    }

    /// Up to `limit` pending deliveries of a subscription, oldest first.
    pub fn pending(&self, subscription: &str, limit: usize) -> Result<Vec<Queued>, OutboxError> {
        self.with(|db| {
            let txn = db.begin_read()?;
            let queue = txn.open_table(QUEUE)?;
            let changes = txn.open_table(CHANGES)?;
            let mut out = Vec::new();
            for entry in queue.range(of(subscription))?.take(limit) {
                let (k, v) = entry?;
                out.push(read_queued(&changes, k.value().1, v.value())?);
            }
            Ok(out)
        })
    }

    /// Removes delivered (or filtered out) entries and moves refused ones to
    /// the dead letters, in one transaction. Entries no longer queued (the
    /// bound made them dead letters meanwhile) are left as they are, and not
    /// counted in the outcome.
    pub fn settle(
        &self,
        subscription: &str,
        done: &[u64],
        refused: &[DeadLetter],
    ) -> Result<Settlement, OutboxError> {
        self.with(|db| {
            let txn = db.begin_write()?;
            let settlement = {
                let mut lists = Lists::open(&txn, self.bounds)?;
                let mut settlement = Settlement::default();
                for seq in done {
                    if let Some(change) = lists.take_pending(subscription, *seq)? {
                        lists.release(change)?;
                        settlement.done += 1;
                    }
                }
                let now_ms = crate::time::unix_millis();
                for letter in refused {
                    let seq = letter.queued.seq;
                    let Some(change) = lists.take_pending(subscription, seq)? else {
                        continue;
                    };
                    let record = DeadRecord {
                        change,
                        reason: &letter.reason,
                        failed: letter.failed_ms,
                        attempts: letter.attempts,
                    };
                    lists.put_dead(subscription, seq, &record, now_ms)?;
                    settlement.refused += 1;
                }
                settlement.trimmed = lists.trimmed_of(subscription);
                settlement.released = lists.released;
                settlement
            };
            txn.commit()?;
            Ok(settlement)
        })
    }

    /// Dead letters of a subscription, oldest first.
    pub fn dead_letters(&self, subscription: &str) -> Result<Vec<DeadLetter>, OutboxError> {
        self.with(|db| {
            let txn = db.begin_read()?;
            let table = txn.open_table(DEAD)?;
            let changes = txn.open_table(CHANGES)?;
            let mut out = Vec::new();
            for entry in table.range(of(subscription))? {
                let (k, v) = entry?;
                let seq = k.value().1;
                let record = decode_dead_record(seq, v.value())?;
                out.push(DeadLetter {
                    queued: read_queued(&changes, seq, record.change)?,
                    reason: record.reason.to_string(),
                    failed_ms: record.failed,
                    attempts: record.attempts,
                });
            }
            Ok(out)
        })
    }

    /// Puts dead letters (all, or the one with `seq`) back at the end of the
    /// queue with new sequence numbers from `next_seq`; returns how many, and
    /// what the queue's bound then did (replaying more than it holds makes
    /// the oldest dead letters again).
    pub fn replay_dead(
        &self,
        subscription: &str,
        seq: Option<u64>,
        mut next_seq: impl FnMut() -> u64,
    ) -> Result<(u64, Trims), OutboxError> {
        self.with(|db| {
            let txn = db.begin_write()?;
            let result = {
                let mut lists = Lists::open(&txn, self.bounds)?;
                let changes = lists.take_dead(subscription, seq)?;
                let now_ms = crate::time::unix_millis();
                for change in &changes {
                    lists.push(subscription, next_seq(), *change, now_ms)?;
                }
                let trims = Trims {
                    subscriptions: std::mem::take(&mut lists.trimmed),
                    released: std::mem::take(&mut lists.released),
                };
                (changes.len() as u64, trims)
            };
            txn.commit()?;
            Ok(result)
        })
    }

    /// Drops dead letters (all, or the one with `seq`); returns how many and
    /// the numbers of the changes that went with them.
    pub fn drop_dead(
        &self,
        subscription: &str,
        seq: Option<u64>,
    ) -> Result<(u64, Vec<u64>), OutboxError> {
        self.with(|db| {
            let txn = db.begin_write()?;
            let result = {
                let mut lists = Lists::open(&txn, self.bounds)?;
                let changes = lists.take_dead(subscription, seq)?;
                for change in &changes {
                    lists.release(*change)?;
                }
                (changes.len() as u64, lists.released)
            };
            txn.commit()?;
            Ok(result)
        })
    }

    /// Pending deliveries, dead letters and the highest sequence number used
    /// by a subscription (to continue numbering after a restart).
    pub fn counts(&self, subscription: &str) -> Result<QueueCounts, OutboxError> {
        self.with(|db| {
            let txn = db.begin_read()?;
            let queue = txn.open_table(QUEUE)?;
            let dead = txn.open_table(DEAD)?;
            let last_queued = queue
                .range(of(subscription))?
                .next_back()
                .transpose()?
                .map(|(k, _)| k.value().1);
            let last_dead = dead
                .range(of(subscription))?
                .next_back()
                .transpose()?
                .map(|(k, _)| k.value().1);
            Ok(QueueCounts {
                pending: queue.range(of(subscription))?.count() as u64,
                dead: dead.range(of(subscription))?.count() as u64,
                last_seq: last_queued.max(last_dead),
            })
        })
    }

    /// The bytes of a subscription's pending deliveries and dead letters.
    pub fn bytes(&self, subscription: &str) -> Result<ListBytes, OutboxError> {
        self.with(|db| {
            let txn = db.begin_read()?;
            let sizes = txn.open_table(lists::SIZES)?;
            Ok(sizes.get(subscription)?.map_or(ListBytes::default(), |v| {
                let (pending, dead) = v.value();
                ListBytes { pending, dead }
            }))
        })
    }

    /// The sequence number of a subscription's oldest pending delivery.
    pub fn first_pending_seq(&self, subscription: &str) -> Result<Option<u64>, OutboxError> {
        self.with(|db| {
            let txn = db.begin_read()?;
            let queue = txn.open_table(QUEUE)?;
            Ok(queue
                .range(of(subscription))?
                .next()
                .transpose()?
                .map(|(k, _)| k.value().1))
        })
    }

    /// When the oldest pending delivery of a subscription was queued.
    pub fn oldest_pending_ms(&self, subscription: &str) -> Result<Option<u64>, OutboxError> {
        Ok(self
            .pending(subscription, 1)?
            .first()
            .map(|q| q.announcement.queued_ms))
    }

    /// Pending deliveries of every subscription together.
    pub fn total_pending(&self) -> Result<u64, OutboxError> {
        self.with(|db| {
            let txn = db.begin_read()?;
            Ok(txn.open_table(QUEUE)?.len()?)
        })
    }

    /// Changes stored, whatever number of deliveries refer to each.
    pub fn stored_changes(&self) -> Result<u64, OutboxError> {
        self.with(|db| {
            let txn = db.begin_read()?;
            Ok(txn.open_table(CHANGES)?.len()?)
        })
    }
}

fn open_file(path: &Path) -> Result<Database, OutboxError> {
    Database::builder()
        .set_cache_size(CACHE_BYTES)
        .create(path)
        .map_err(|source| OutboxError::Open {
            path: path.to_path_buf(),
            source,
        })
}

/// One write transaction of a watch's feed.
pub struct FeedTxn<'t> {
    watch: &'t str,
    announced: redb::Table<'t, (&'static str, &'static str), &'static [u8]>,
    positions: redb::Table<'t, &'static str, &'static str>,
    lists: Lists<'t>,
    /// When the transaction began: the time of dead letters the bound makes.
    now_ms: u64,
}

impl FeedTxn<'_> {
    /// Forgets everything announced for this watch.
    pub fn clear(&mut self) -> Result<(), OutboxError> {
        self.positions.remove(self.watch)?;
        let watch = self.watch;
        for entry in self
            .announced
            .extract_from_if((watch, "")..(watch, "\u{10ffff}"), |k, _| k.0 == watch)?
        {
            entry?;
        }
        Ok(())
    }

    /// Records an object's new announced state (`None`: deleted).
    pub fn set_announced(
        &mut self,
        key: &str,
        state: Option<(&str, &[u8])>,
    ) -> Result<(), OutboxError> {
        match state {
            Some((rv, json)) => {
                let mut value = Vec::with_capacity(rv.len() + 1 + json.len());
                value.extend_from_slice(rv.as_bytes());
                value.push(0);
                value.extend_from_slice(json);
                self.announced.insert((self.watch, key), value.as_slice())?;
            }
            None => {
                self.announced.remove((self.watch, key))?;
            }
        }
        Ok(())
    }

    /// Records the resourceVersion up to which the watch's changes are announced.
    pub fn set_position(&mut self, rv: &str) -> Result<(), OutboxError> {
        self.positions.insert(self.watch, rv)?;
        Ok(())
    }

    /// Stores change `number` (an encoded [`Announcement`]) once and queues
    /// it for each `(subscription, seq)`, each queue kept within its bound.
    pub fn queue_change(
        &mut self,
        number: u64,
        encoded: &[u8],
        targets: &[(&str, u64)],
    ) -> Result<(), OutboxError> {
        if targets.is_empty() {
            return Ok(());
        }
        self.lists
            .store_change(number, encoded, targets.len() as u32)?;
        for (subscription, seq) in targets {
            self.lists.push(subscription, *seq, number, self.now_ms)?;
        }
        Ok(())
    }
}

fn read_queued(
    changes: &impl ReadableTable<u64, &'static [u8]>,
    seq: u64,
    change: u64,
) -> Result<Queued, OutboxError> {
    let bytes = changes.get(change)?.ok_or_else(|| {
        OutboxError::Corrupt(format!("queue entry {seq} (change {change} is missing)"))
    })?;
    Ok(Queued {
        seq,
        change,
        announcement: Announcement::decode(change, bytes.value())?,
    })
}

fn split_state(value: &[u8]) -> (&str, &[u8]) {
    let nul = value.iter().position(|b| *b == 0).unwrap_or(0);
    (
        std::str::from_utf8(&value[..nul]).unwrap_or(""),
        &value[(nul + 1).min(value.len())..],
    )
}

#[cfg(test)]
mod tests;
