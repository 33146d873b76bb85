//! The outbox: everything the notification engine must not forget, in one
//! embedded database (redb) under `dataDir`, or in memory without one.
//!
//! Tables:
//! - `subscriptions`: name → definition (JSON) of every subscription;
//! - `queue`: (subscription, seq) → pending delivery, oldest first;
//! - `dead`: (subscription, seq) → dead letter (a delivery the receiver refused);
//! - `announced`: (watch, object key) → the object's state as last announced
//!   (`resourceVersion`, NUL, JSON), so a restart resumes from it;
//! - `positions`: watch → resourceVersion up to which changes are announced.
//!
//! Every function is blocking; callers on the async runtime use
//! `spawn_blocking`. A write transaction is committed durably before the
//! function returns.

use std::ops::RangeBounds;
use std::path::Path;

use redb::{Database, ReadableDatabase, ReadableTable, ReadableTableMetadata, TableDefinition};

use super::sink::Delivery;
use crate::gvk::Gvk;

const SUBSCRIPTIONS: TableDefinition<&str, &[u8]> = TableDefinition::new("subscriptions");
const QUEUE: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("queue");
const DEAD: TableDefinition<(&str, u64), &[u8]> = TableDefinition::new("dead");
const ANNOUNCED: TableDefinition<(&str, &str), &[u8]> = TableDefinition::new("announced");
const POSITIONS: TableDefinition<&str, &str> = TableDefinition::new("positions");

/// Memory the database may use to cache pages. Its default (1 GiB) would
/// let a large backlog fill memory; the queues are read front to back, so a
/// small cache serves them as well.
const CACHE_BYTES: usize = 32 << 20;

/// File name of the database inside `dataDir`.
pub const FILE_NAME: &str = "grw.redb";

/// The database failed (disk full, corrupt file...).
#[derive(Debug, Clone, thiserror::Error)]
#[error("outbox: {0}")]
pub struct StoreError(String);

impl From<redb::Error> for StoreError {
    fn from(e: redb::Error) -> Self {
        StoreError(e.to_string())
    }
}

macro_rules! store_error_from {
    ($($t:ty),*) => {$(
        impl From<$t> for StoreError {
            fn from(e: $t) -> Self {
                StoreError::from(redb::Error::from(e))
            }
        }
    )*};
}
store_error_from!(
    redb::DatabaseError,
    redb::TransactionError,
    redb::TableError,
    redb::StorageError,
    redb::CommitError
);

/// A delivery the receiver refused, kept until replayed or dropped.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeadLetter {
    /// The delivery as it was queued.
    pub delivery: Delivery,
    /// What the receiver answered.
    pub reason: String,
    /// When it was refused, milliseconds since the Unix epoch.
    pub failed_ms: u64,
    /// Attempts made.
    pub attempts: u32,
}

/// The embedded database.
pub struct Outbox {
    db: Database,
    persistent: bool,
}

impl Outbox {
    /// Opens (or creates) `dir/grw.redb`; `None` keeps everything in memory.
    pub fn open(dir: Option<&Path>) -> Result<Outbox, StoreError> {
        let (db, persistent) = match dir {
            Some(dir) => {
                std::fs::create_dir_all(dir)
                    .map_err(|e| StoreError(format!("cannot create {}: {e}", dir.display())))?;
                let path = dir.join(FILE_NAME);
                let db = Database::builder()
                    .set_cache_size(CACHE_BYTES)
                    .create(&path)
                    .map_err(|e| StoreError(format!("cannot open {}: {e}", path.display())))?;
                (db, true)
            }
            None => (
                Database::builder().create_with_backend(redb::backends::InMemoryBackend::new())?,
                false,
            ),
        };
        let txn = db.begin_write()?;
        txn.open_table(SUBSCRIPTIONS)?;
        txn.open_table(QUEUE)?;
        txn.open_table(DEAD)?;
        txn.open_table(ANNOUNCED)?;
        txn.open_table(POSITIONS)?;
        txn.commit()?;
        Ok(Outbox { db, persistent })
    }

    /// Whether the outbox survives a restart.
    pub fn is_persistent(&self) -> bool {
        self.persistent
    }

    /// Every stored subscription definition, by name.
    pub fn subscriptions(&self) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(SUBSCRIPTIONS)?;
        let mut out = Vec::new();
        for entry in table.iter()? {
            let (k, v) = entry?;
            out.push((k.value().to_string(), v.value().to_vec()));
        }
        Ok(out)
    }

    /// Stores (or replaces) a subscription definition.
    pub fn put_subscription(&self, name: &str, definition: &[u8]) -> Result<(), StoreError> {
        let txn = self.db.begin_write()?;
        txn.open_table(SUBSCRIPTIONS)?.insert(name, definition)?;
        txn.commit()?;
        Ok(())
    }

    /// Forgets a subscription with its queue and dead letters; returns how
    /// many pending deliveries were dropped.
    pub fn delete_subscription(&self, name: &str) -> Result<u64, StoreError> {
        let txn = self.db.begin_write()?;
        txn.open_table(SUBSCRIPTIONS)?.remove(name)?;
        let dropped = {
            let mut queue = txn.open_table(QUEUE)?;
            let before = queue.range(of(name))?.count() as u64;
            queue.retain_in(of(name), |_, _| false)?;
            before
        };
        txn.open_table(DEAD)?.retain_in(of(name), |_, _| false)?;
        txn.commit()?;
        Ok(dropped)
    }

    /// The announced state of a watch: its resourceVersion and objects (JSON).
    pub fn announced(&self, watch: &str) -> Result<Option<Announced>, StoreError> {
        let txn = self.db.begin_read()?;
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
    }

    /// Forgets the announced state of a watch.
    pub fn forget_watch(&self, watch: &str) -> Result<(), StoreError> {
        self.feed(watch, |txn| txn.clear())
    }

    /// Runs `f` in one write transaction of a watch's feed and commits it.
    pub fn feed<R>(
        &self,
        watch: &str,
        f: impl FnOnce(&mut FeedTxn<'_>) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let txn = self.db.begin_write()?;
        let result = {
            let mut feed = FeedTxn {
                watch,
                announced: txn.open_table(ANNOUNCED)?,
                positions: txn.open_table(POSITIONS)?,
                queue: txn.open_table(QUEUE)?,
            };
            f(&mut feed)?
        };
        txn.commit()?;
        Ok(result)
    }

    /// Up to `limit` pending deliveries of a subscription after `after`, oldest first.
    pub fn pending(
        &self,
        subscription: &str,
        after: Option<u64>,
        limit: usize,
    ) -> Result<Vec<Delivery>, StoreError> {
        let start = after.map_or(0, |s| s.saturating_add(1));
        let txn = self.db.begin_read()?;
        let table = txn.open_table(QUEUE)?;
        let mut out = Vec::new();
        for entry in table.range((subscription, start)..=(subscription, u64::MAX))? {
            let (k, v) = entry?;
            out.push(decode_delivery(k.value().1, v.value())?);
            if out.len() == limit {
                break;
            }
        }
        Ok(out)
    }

    /// Removes delivered entries and moves refused ones to the dead-letter list, in one transaction.
    pub fn settle(
        &self,
        subscription: &str,
        delivered: &[u64],
        refused: &[DeadLetter],
    ) -> Result<(), StoreError> {
        let txn = self.db.begin_write()?;
        {
            let mut queue = txn.open_table(QUEUE)?;
            for seq in delivered {
                queue.remove((subscription, *seq))?;
            }
            let mut dead = txn.open_table(DEAD)?;
            for letter in refused {
                queue.remove((subscription, letter.delivery.seq))?;
                dead.insert(
                    (subscription, letter.delivery.seq),
                    encode_dead(letter).as_slice(),
                )?;
            }
        }
        txn.commit()?;
        Ok(())
    }

    /// Dead letters of a subscription, oldest first.
    pub fn dead_letters(&self, subscription: &str) -> Result<Vec<DeadLetter>, StoreError> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(DEAD)?;
        let mut out = Vec::new();
        for entry in table.range(of(subscription))? {
            let (k, v) = entry?;
            out.push(decode_dead(k.value().1, v.value())?);
        }
        Ok(out)
    }

    /// Puts dead letters (all, or the one with `seq`) back at the end of the
    /// queue with new sequence numbers from `next_seq`; returns how many.
    pub fn replay_dead(
        &self,
        subscription: &str,
        seq: Option<u64>,
        mut next_seq: impl FnMut() -> u64,
    ) -> Result<u64, StoreError> {
        let txn = self.db.begin_write()?;
        let count = {
            let mut dead = txn.open_table(DEAD)?;
            let mut queue = txn.open_table(QUEUE)?;
            let letters: Vec<(u64, Vec<u8>)> = dead
                .range(one_or_all(subscription, seq))?
                .map(|e| e.map(|(k, v)| (k.value().1, v.value().to_vec())))
                .collect::<Result<_, _>>()?;
            for (old_seq, bytes) in &letters {
                let letter = decode_dead(*old_seq, bytes)?;
                let mut delivery = letter.delivery;
                delivery.seq = next_seq();
                queue.insert(
                    (subscription, delivery.seq),
                    encode_delivery(&delivery).as_slice(),
                )?;
                dead.remove((subscription, *old_seq))?;
            }
            letters.len() as u64
        };
        txn.commit()?;
        Ok(count)
    }

    /// Drops dead letters (all, or the one with `seq`); returns how many.
    pub fn drop_dead(&self, subscription: &str, seq: Option<u64>) -> Result<u64, StoreError> {
        let txn = self.db.begin_write()?;
        let count = {
            let mut dead = txn.open_table(DEAD)?;
            let count = dead.range(one_or_all(subscription, seq))?.count() as u64;
            dead.retain_in(one_or_all(subscription, seq), |_, _| false)?;
            count
        };
        txn.commit()?;
        Ok(count)
    }

    /// Pending deliveries, dead letters and the highest sequence number used
    /// by a subscription (to continue numbering after a restart).
    pub fn counts(&self, subscription: &str) -> Result<QueueCounts, StoreError> {
        let txn = self.db.begin_read()?;
        let queue = txn.open_table(QUEUE)?;
        let dead = txn.open_table(DEAD)?;
        let last =
            |table: &redb::ReadOnlyTable<(&str, u64), &[u8]>| -> Result<Option<u64>, StoreError> {
                Ok(table
                    .range(of(subscription))?
                    .next_back()
                    .transpose()?
                    .map(|(k, _)| k.value().1))
            };
        Ok(QueueCounts {
            pending: queue.range(of(subscription))?.count() as u64,
            dead: dead.range(of(subscription))?.count() as u64,
            last_seq: last(&queue)?.max(last(&dead)?),
        })
    }

    /// When the oldest pending delivery of a subscription was queued.
    pub fn oldest_pending_ms(&self, subscription: &str) -> Result<Option<u64>, StoreError> {
        Ok(self
            .pending(subscription, None, 1)?
            .first()
            .map(|d| d.enqueued_ms))
    }

    /// Pending deliveries of every subscription together.
    pub fn total_pending(&self) -> Result<u64, StoreError> {
        let txn = self.db.begin_read()?;
        Ok(txn.open_table(QUEUE)?.len()?)
    }
}

/// The announced state of a watch: its resourceVersion and objects (JSON).
pub type Announced = (String, Vec<Vec<u8>>);

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

/// One write transaction of a watch's feed.
pub struct FeedTxn<'t> {
    watch: &'t str,
    announced: redb::Table<'t, (&'static str, &'static str), &'static [u8]>,
    positions: redb::Table<'t, &'static str, &'static str>,
    queue: redb::Table<'t, (&'static str, u64), &'static [u8]>,
}

impl FeedTxn<'_> {
    /// The announced state of one object: its resourceVersion and JSON.
    pub fn announced(&self, key: &str) -> Result<Option<(String, Vec<u8>)>, StoreError> {
        Ok(self.announced.get((self.watch, key))?.map(|v| {
            let (rv, json) = split_state(v.value());
            (rv.to_string(), json.to_vec())
        }))
    }

    /// Whether anything was ever announced for this watch.
    pub fn has_position(&self) -> Result<bool, StoreError> {
        Ok(self.positions.get(self.watch)?.is_some())
    }

    /// Every announced object of this watch: key and JSON.
    pub fn announced_all(&self) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let mut out = Vec::new();
        for entry in self.announced.range((self.watch, "")..)? {
            let (k, v) = entry?;
            let (watch, key) = k.value();
            if watch != self.watch {
                break;
            }
            out.push((key.to_string(), split_state(v.value()).1.to_vec()));
        }
        Ok(out)
    }

    /// Forgets everything announced for this watch.
    pub fn clear(&mut self) -> Result<(), StoreError> {
        self.positions.remove(self.watch)?;
        for (key, _) in self.announced_all()? {
            self.announced.remove((self.watch, key.as_str()))?;
        }
        Ok(())
    }

    /// Records an object's new announced state (`None`: deleted).
    pub fn set_announced(
        &mut self,
        key: &str,
        state: Option<(&str, &[u8])>,
    ) -> Result<(), StoreError> {
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
    pub fn set_position(&mut self, rv: &str) -> Result<(), StoreError> {
        self.positions.insert(self.watch, rv)?;
        Ok(())
    }

    /// Queues a delivery.
    pub fn enqueue(&mut self, subscription: &str, delivery: &Delivery) -> Result<(), StoreError> {
        self.queue.insert(
            (subscription, delivery.seq),
            encode_delivery(delivery).as_slice(),
        )?;
        Ok(())
    }
}

fn of(subscription: &str) -> impl RangeBounds<(&str, u64)> {
    (subscription, 0)..=(subscription, u64::MAX)
}

fn one_or_all(subscription: &str, seq: Option<u64>) -> impl RangeBounds<(&str, u64)> {
    match seq {
        Some(s) => (subscription, s)..=(subscription, s),
        None => (subscription, 0)..=(subscription, u64::MAX),
    }
}

fn split_state(value: &[u8]) -> (&str, &[u8]) {
    let nul = value.iter().position(|b| *b == 0).unwrap_or(0);
    (
        std::str::from_utf8(&value[..nul]).unwrap_or(""),
        &value[(nul + 1).min(value.len())..],
    )
}

/// A delivery on disk: a JSON header line, then the payload.
fn encode_delivery(d: &Delivery) -> Vec<u8> {
    let header = serde_json::json!({
        "id": d.id,
        "type": d.event_type,
        "group": d.gvk.group,
        "version": d.gvk.version,
        "kind": d.gvk.kind,
        "namespace": d.namespace,
        "name": d.name,
        "enqueued": d.enqueued_ms,
    });
    let mut out = serde_json::to_vec(&header).unwrap_or_default();
    out.push(b'\n');
    out.extend_from_slice(&d.payload);
    out
}

fn decode_delivery(seq: u64, bytes: &[u8]) -> Result<Delivery, StoreError> {
    let corrupt = || StoreError(format!("queue entry {seq} is corrupt"));
    let newline = bytes.iter().position(|b| *b == b'\n').ok_or_else(corrupt)?;
    let header: serde_json::Value =
        serde_json::from_slice(&bytes[..newline]).map_err(|_| corrupt())?;
    let text = |k: &str| header[k].as_str().unwrap_or_default().to_string();
    Ok(Delivery {
        seq,
        id: text("id"),
        event_type: text("type"),
        gvk: Gvk::new(&text("group"), &text("version"), &text("kind")),
        namespace: text("namespace"),
        name: text("name"),
        enqueued_ms: header["enqueued"].as_u64().unwrap_or(0),
        payload: bytes[newline + 1..].to_vec(),
    })
}

/// A dead letter on disk: a JSON line with why, then the delivery.
fn encode_dead(letter: &DeadLetter) -> Vec<u8> {
    let header = serde_json::json!({
        "reason": letter.reason,
        "failed": letter.failed_ms,
        "attempts": letter.attempts,
    });
    let mut out = serde_json::to_vec(&header).unwrap_or_default();
    out.push(b'\n');
    out.extend_from_slice(&encode_delivery(&letter.delivery));
    out
}

fn decode_dead(seq: u64, bytes: &[u8]) -> Result<DeadLetter, StoreError> {
    let corrupt = || StoreError(format!("dead letter {seq} is corrupt"));
    let newline = bytes.iter().position(|b| *b == b'\n').ok_or_else(corrupt)?;
    let header: serde_json::Value =
        serde_json::from_slice(&bytes[..newline]).map_err(|_| corrupt())?;
    Ok(DeadLetter {
        delivery: decode_delivery(seq, &bytes[newline + 1..])?,
        reason: header["reason"].as_str().unwrap_or_default().to_string(),
        failed_ms: header["failed"].as_u64().unwrap_or(0),
        attempts: header["attempts"].as_u64().unwrap_or(0) as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delivery(seq: u64, name: &str) -> Delivery {
        Delivery {
            seq,
            id: format!("uid-{name}/7/ADDED"),
            event_type: "ADDED".into(),
            gvk: Gvk::new("apps", "v1", "Deployment"),
            namespace: "shop".into(),
            name: name.into(),
            enqueued_ms: 1_700_000_000_000 + seq,
            payload: format!(r#"{{"n":"{name}"}}"#).into_bytes(),
        }
    }

    fn enqueue(outbox: &Outbox, sub: &str, deliveries: &[Delivery]) {
        outbox
            .feed("w", |txn| {
                for d in deliveries {
                    txn.enqueue(sub, d)?;
                }
                Ok(())
            })
            .unwrap();
    }

    #[test]
    fn queue_keeps_order_and_survives_reopening() {
        let dir = tempfile::tempdir().unwrap();
        {
            let outbox = Outbox::open(Some(dir.path())).unwrap();
            assert!(outbox.is_persistent());
            enqueue(
                &outbox,
                "a",
                &[delivery(1, "x"), delivery(2, "y"), delivery(3, "z")],
            );
            enqueue(&outbox, "b", &[delivery(1, "other")]);
            outbox.settle("a", &[1], &[]).unwrap();
        }
        let outbox = Outbox::open(Some(dir.path())).unwrap();
        let pending = outbox.pending("a", None, 10).unwrap();
        assert_eq!(pending, vec![delivery(2, "y"), delivery(3, "z")]);
        assert_eq!(
            outbox.pending("a", Some(2), 10).unwrap(),
            vec![delivery(3, "z")]
        );
        assert_eq!(outbox.pending("a", None, 1).unwrap().len(), 1);
        assert_eq!(
            outbox.counts("a").unwrap(),
            QueueCounts {
                pending: 2,
                dead: 0,
                last_seq: Some(3)
            }
        );
        assert_eq!(
            outbox.oldest_pending_ms("a").unwrap(),
            Some(1_700_000_000_002)
        );
        assert_eq!(outbox.total_pending().unwrap(), 3);
    }

    #[test]
    fn dead_letters_replay_and_drop() {
        let outbox = Outbox::open(None).unwrap();
        assert!(!outbox.is_persistent());
        enqueue(&outbox, "a", &[delivery(1, "x"), delivery(2, "y")]);
        let refused = DeadLetter {
            delivery: delivery(1, "x"),
            reason: "HTTP 400: bad".into(),
            failed_ms: 5,
            attempts: 1,
        };
        outbox
            .settle("a", &[], std::slice::from_ref(&refused))
            .unwrap();
        assert_eq!(outbox.dead_letters("a").unwrap(), vec![refused]);
        assert_eq!(outbox.counts("a").unwrap().pending, 1);
        let mut next = 10;
        let replayed = outbox
            .replay_dead("a", None, || {
                next += 1;
                next
            })
            .unwrap();
        assert_eq!(replayed, 1);
        let pending = outbox.pending("a", None, 10).unwrap();
        assert_eq!(pending.iter().map(|d| d.seq).collect::<Vec<_>>(), [2, 11]);
        assert_eq!(pending[1].name, "x");
        assert!(outbox.dead_letters("a").unwrap().is_empty());
        outbox
            .settle(
                "a",
                &[],
                &[DeadLetter {
                    delivery: pending[0].clone(),
                    reason: "no".into(),
                    failed_ms: 6,
                    attempts: 2,
                }],
            )
            .unwrap();
        assert_eq!(outbox.drop_dead("a", Some(99)).unwrap(), 0);
        assert_eq!(outbox.drop_dead("a", Some(2)).unwrap(), 1);
        assert_eq!(outbox.counts("a").unwrap().dead, 0);
    }

    #[test]
    fn announced_state_per_watch() {
        let outbox = Outbox::open(None).unwrap();
        assert_eq!(outbox.announced("w").unwrap(), None);
        outbox
            .feed("w", |txn| {
                assert!(!txn.has_position()?);
                txn.set_announced("shop/a", Some(("5", br#"{"a":1}"#)))?;
                txn.set_announced("shop/b", Some(("6", br#"{"b":1}"#)))?;
                txn.set_announced("shop/b", None)?;
                txn.set_position("6")?;
                Ok(())
            })
            .unwrap();
        outbox
            .feed("other", |txn| {
                txn.set_announced("shop/a", Some(("9", b"{}")))?;
                txn.set_position("9")
            })
            .unwrap();
        let (rv, objects) = outbox.announced("w").unwrap().unwrap();
        assert_eq!(rv, "6");
        assert_eq!(objects, vec![br#"{"a":1}"#.to_vec()]);
        outbox
            .feed("w", |txn| {
                assert_eq!(
                    txn.announced("shop/a")?,
                    Some(("5".to_string(), br#"{"a":1}"#.to_vec()))
                );
                Ok(())
            })
            .unwrap();
        outbox.forget_watch("w").unwrap();
        assert_eq!(outbox.announced("w").unwrap(), None);
        assert!(outbox.announced("other").unwrap().is_some());
    }

    #[test]
    fn deleting_a_subscription_drops_its_lists() {
        let outbox = Outbox::open(None).unwrap();
        outbox.put_subscription("a", b"{}").unwrap();
        outbox.put_subscription("b", b"{\"x\":1}").unwrap();
        enqueue(&outbox, "a", &[delivery(1, "x"), delivery(2, "y")]);
        enqueue(&outbox, "b", &[delivery(1, "x")]);
        assert_eq!(outbox.delete_subscription("a").unwrap(), 2);
        assert_eq!(
            outbox.subscriptions().unwrap(),
            vec![("b".to_string(), b"{\"x\":1}".to_vec())]
        );
        assert_eq!(outbox.counts("a").unwrap(), QueueCounts::default());
        assert_eq!(outbox.counts("b").unwrap().pending, 1);
    }
}
