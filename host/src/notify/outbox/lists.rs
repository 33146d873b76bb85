//! A subscription's two lists inside one write transaction: its queue of
//! pending deliveries and its dead letters, with the reference counts of the
//! changes they name and how many bytes each list holds, kept within the
//! subscription's [`Bounds`].
//!
//! A list's bytes are those of the stored changes it names (the encoded
//! [`super::Announcement`], about the object's JSON, twice for MODIFIED): a
//! change stored once for five subscriptions counts in each of their lists,
//! so the outbox never holds more than the sum of every list's bound.
//!
//! At the bound:
//! - pending deliveries past `pending_bytes` become dead letters, oldest
//!   first, with a reason naming the bound: a receiver that is down for
//!   good no longer grows the outbox (in memory without `dataDir`, on disk
//!   with it) until GRW dies or the disk fills;
//! - dead letters past `dead_letter_bytes` are dropped, oldest first.

use std::collections::{BTreeMap, HashMap};
use std::ops::RangeBounds;

use redb::{ReadableTable, TableDefinition, WriteTransaction};
use serde::{Deserialize, Serialize};

use super::{CHANGES, DEAD, OutboxError, QUEUE, REFS};

/// Subscription → (pending bytes, dead letter bytes). Derived from the other
/// tables and rebuilt each time the database is opened, so that a database
/// last written by a GRW that did not keep it is read right (no new format).
pub(super) const SIZES: TableDefinition<&str, (u64, u64)> = TableDefinition::new("sizes");

/// How much of the outbox one subscription may hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Bytes of pending deliveries (`subscriptionPendingBytes`); past it the
    /// oldest become dead letters.
    pub pending_bytes: u64,
    /// Bytes of dead letters (`subscriptionDeadLetterBytes`); past it the
    /// oldest are dropped.
    pub dead_letter_bytes: u64,
}

impl Default for Bounds {
    /// 256 MiB pending: at 10 KiB a change, 26 000 changes, hours of a busy
    /// kind for a receiver that is down; 64 MiB of dead letters, the refusals
    /// someone may still want to replay.
    fn default() -> Self {
        Bounds {
            pending_bytes: 256 << 20,
            dead_letter_bytes: 64 << 20,
        }
    }
}

/// What the bounds did to one subscription's lists in one transaction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Trimmed {
    /// Oldest pending deliveries moved to the dead letters.
    pub evicted: u64,
    /// Oldest dead letters dropped.
    pub dropped: u64,
}

impl Trimmed {
    fn add(&mut self, other: Trimmed) {
        self.evicted += other.evicted;
        self.dropped += other.dropped;
    }
}

/// The bytes of one subscription's lists.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ListBytes {
    /// Of its pending deliveries.
    pub pending: u64,
    /// Of its dead letters.
    pub dead: u64,
}

/// A dead letter on disk, besides its key.
#[derive(Serialize, Deserialize)]
pub(super) struct DeadRecord<'a> {
    pub(super) change: u64,
    pub(super) reason: &'a str,
    pub(super) failed: u64,
    pub(super) attempts: u32,
}

impl DeadRecord<'_> {
    pub(super) fn encode(&self) -> Vec<u8> {
        // Numbers and a string always serialize.
        serde_json::to_vec(self).unwrap_or_default()
    }
}

pub(super) fn decode_dead_record(seq: u64, bytes: &[u8]) -> Result<DeadRecord<'_>, OutboxError> {
    serde_json::from_slice(bytes).map_err(|_| OutboxError::Corrupt(format!("dead letter {seq}")))
}

/// Every queue entry or dead letter of a subscription.
pub(super) fn of(subscription: &str) -> impl RangeBounds<(&str, u64)> {
    (subscription, 0)..=(subscription, u64::MAX)
}

/// The reason a dead letter made by the pending bound carries.
pub(super) fn evicted_reason(bound: u64) -> String {
    format!(
        "not delivered: the subscription's pending deliveries exceeded {bound} bytes (subscriptionPendingBytes), so the oldest became dead letters"
    )
}

/// The lists of every subscription, in one write transaction.
pub(super) struct Lists<'t> {
    pub(super) queue: redb::Table<'t, (&'static str, u64), u64>,
    pub(super) dead: redb::Table<'t, (&'static str, u64), &'static [u8]>,
    refs: redb::Table<'t, u64, u32>,
    changes: redb::Table<'t, u64, &'static [u8]>,
    sizes: redb::Table<'t, &'static str, (u64, u64)>,
    bounds: Bounds,
    /// Changes that lost their last reference, and are gone.
    pub(super) released: Vec<u64>,
    /// What the bounds did, per subscription.
    pub(super) trimmed: BTreeMap<String, Trimmed>,
}

impl<'t> Lists<'t> {
    pub(super) fn open(
        txn: &'t WriteTransaction,
        bounds: Bounds,
    ) -> Result<Lists<'t>, OutboxError> {
        Ok(Lists {
            queue: txn.open_table(QUEUE)?,
            dead: txn.open_table(DEAD)?,
            refs: txn.open_table(REFS)?,
            changes: txn.open_table(CHANGES)?,
            sizes: txn.open_table(SIZES)?,
            bounds,
            released: Vec::new(),
            trimmed: BTreeMap::new(),
        })
    }

    /// The bytes of a stored change.
    fn size(&self, change: u64) -> Result<u64, OutboxError> {
        Ok(self
            .changes
            .get(change)?
            .map_or(0, |v| v.value().len() as u64))
    }

    pub(super) fn bytes(&self, subscription: &str) -> Result<ListBytes, OutboxError> {
        Ok(self
            .sizes
            .get(subscription)?
            .map_or(ListBytes::default(), |v| {
                let (pending, dead) = v.value();
                ListBytes { pending, dead }
            }))
    }

    fn set_bytes(&mut self, subscription: &str, bytes: ListBytes) -> Result<(), OutboxError> {
        if bytes == ListBytes::default() {
            self.sizes.remove(subscription)?;
        } else {
            self.sizes
                .insert(subscription, (bytes.pending, bytes.dead))?;
        }
        Ok(())
    }

    fn change_bytes(
        &mut self,
        subscription: &str,
        f: impl FnOnce(&mut ListBytes),
    ) -> Result<(), OutboxError> {
        let mut bytes = self.bytes(subscription)?;
        f(&mut bytes);
        self.set_bytes(subscription, bytes)
    }

    /// Stores change `number` with `references` queue entries to come.
    pub(super) fn store_change(
        &mut self,
        number: u64,
        encoded: &[u8],
        references: u32,
    ) -> Result<(), OutboxError> {
        self.changes.insert(number, encoded)?;
        self.refs.insert(number, references)?;
        Ok(())
    }

    /// Queues a stored change (whose reference the caller counted) and keeps
    /// the queue within its bound.
    pub(super) fn push(
        &mut self,
        subscription: &str,
        seq: u64,
        change: u64,
        now_ms: u64,
    ) -> Result<(), OutboxError> {
        let size = self.size(change)?;
        self.queue.insert((subscription, seq), change)?;
        self.change_bytes(subscription, |b| b.pending += size)?;
        self.trim(subscription, now_ms)
    }

    /// Takes an entry off the queue; `None` if it is not there (settled, or
    /// moved to the dead letters by the bound). The change keeps its reference.
    pub(super) fn take_pending(
        &mut self,
        subscription: &str,
        seq: u64,
    ) -> Result<Option<u64>, OutboxError> {
        let Some(change) = self.queue.remove((subscription, seq))?.map(|v| v.value()) else {
            return Ok(None);
        };
        let size = self.size(change)?;
        self.change_bytes(subscription, |b| b.pending = b.pending.saturating_sub(size))?;
        Ok(Some(change))
    }

    /// Adds a dead letter (the change keeps its reference) and keeps the dead
    /// letters within their bound.
    pub(super) fn put_dead(
        &mut self,
        subscription: &str,
        seq: u64,
        record: &DeadRecord<'_>,
        now_ms: u64,
    ) -> Result<(), OutboxError> {
        let size = self.size(record.change)?;
        self.dead
            .insert((subscription, seq), record.encode().as_slice())?;
        self.change_bytes(subscription, |b| b.dead += size)?;
        self.trim(subscription, now_ms)
    }

    /// Takes dead letters (all, or the one with `seq`) off the list; returns
    /// the changes they name, which keep their references.
    pub(super) fn take_dead(
        &mut self,
        subscription: &str,
        seq: Option<u64>,
    ) -> Result<Vec<u64>, OutboxError> {
        let range = match seq {
            Some(s) => (subscription, s)..=(subscription, s),
            None => (subscription, 0)..=(subscription, u64::MAX),
        };
        let mut changes = Vec::new();
        for entry in self.dead.extract_from_if(range, |_, _| true)? {
            let (key, value) = entry?;
            changes.push(decode_dead_record(key.value().1, value.value())?.change);
        }
        let mut size = 0;
        for change in &changes {
            size += self.size(*change)?;
        }
        self.change_bytes(subscription, |b| b.dead = b.dead.saturating_sub(size))?;
        Ok(changes)
    }

    /// Drops both lists of a subscription; returns how many pending
    /// deliveries went.
    pub(super) fn drop_all(&mut self, subscription: &str) -> Result<u64, OutboxError> {
        let mut changes = Vec::new();
        for entry in self.queue.extract_from_if(of(subscription), |_, _| true)? {
            changes.push(entry?.1.value());
        }
        let dropped = changes.len() as u64;
        changes.extend(self.take_dead(subscription, None)?);
        for change in changes {
            self.release(change)?;
        }
        self.sizes.remove(subscription)?;
        Ok(dropped)
    }

    /// One reference fewer to `change`; the change goes with the last one.
    pub(super) fn release(&mut self, change: u64) -> Result<(), OutboxError> {
        let count = self.refs.get(change)?.map_or(0, |v| v.value());
        if count > 1 {
            self.refs.insert(change, count - 1)?;
        } else {
            self.refs.remove(change)?;
            self.changes.remove(change)?;
            self.released.push(change);
        }
        Ok(())
    }

    /// Keeps a subscription's lists within its bounds: the oldest pending
    /// deliveries past `pending_bytes` become dead letters, then the oldest
    /// dead letters past `dead_letter_bytes` go.
    fn trim(&mut self, subscription: &str, now_ms: u64) -> Result<(), OutboxError> {
        let mut bytes = self.bytes(subscription)?;
        if bytes.pending <= self.bounds.pending_bytes && bytes.dead <= self.bounds.dead_letter_bytes
        {
            return Ok(());
        }
        let mut trimmed = Trimmed::default();
        let reason = evicted_reason(self.bounds.pending_bytes);
        while bytes.pending > self.bounds.pending_bytes {
            let Some((seq, change)) = first_queued(&self.queue, subscription)? else {
                bytes.pending = 0;
                break;
            };
            self.queue.remove((subscription, seq))?;
            let size = self.size(change)?;
            let record = DeadRecord {
                change,
                reason: &reason,
                failed: now_ms,
                attempts: 0,
            };
            self.dead
                .insert((subscription, seq), record.encode().as_slice())?;
            bytes.pending = bytes.pending.saturating_sub(size);
            bytes.dead += size;
            trimmed.evicted += 1;
        }
        while bytes.dead > self.bounds.dead_letter_bytes {
            let Some((seq, record)) = first_dead(&self.dead, subscription)? else {
                bytes.dead = 0;
                break;
            };
            self.dead.remove((subscription, seq))?;
            let change = decode_dead_record(seq, &record)?.change;
            let size = self.size(change)?;
            self.release(change)?;
            bytes.dead = bytes.dead.saturating_sub(size);
            trimmed.dropped += 1;
        }
        self.set_bytes(subscription, bytes)?;
        self.trimmed
            .entry(subscription.to_string())
            .or_default()
            .add(trimmed);
        Ok(())
    }

    /// The trimming of one subscription (none if its lists are within bounds).
    pub(super) fn trimmed_of(&self, subscription: &str) -> Trimmed {
        self.trimmed.get(subscription).copied().unwrap_or_default()
    }
}

/// The oldest entry of a subscription's queue: its seq and change.
fn first_queued(
    queue: &redb::Table<'_, (&'static str, u64), u64>,
    subscription: &str,
) -> Result<Option<(u64, u64)>, OutboxError> {
    Ok(queue
        .range(of(subscription))?
        .next()
        .transpose()?
        .map(|(k, v)| (k.value().1, v.value())))
}

/// The oldest dead letter of a subscription: its seq and record.
fn first_dead(
    dead: &redb::Table<'_, (&'static str, u64), &'static [u8]>,
    subscription: &str,
) -> Result<Option<(u64, Vec<u8>)>, OutboxError> {
    Ok(dead
        .range(of(subscription))?
        .next()
        .transpose()?
        .map(|(k, v)| (k.value().1, v.value().to_vec())))
}

/// Recomputes every subscription's bytes from the queue and dead letters.
pub(super) fn rebuild_sizes(txn: &WriteTransaction) -> Result<(), OutboxError> {
    txn.delete_table(SIZES)?;
    let queue = txn.open_table(QUEUE)?;
    let dead = txn.open_table(DEAD)?;
    let changes = txn.open_table(CHANGES)?;
    let size = |change: u64| -> Result<u64, OutboxError> {
        Ok(changes.get(change)?.map_or(0, |v| v.value().len() as u64))
    };
    let mut totals: HashMap<String, ListBytes> = HashMap::new();
    for entry in queue.iter()? {
        let (k, v) = entry?;
        let bytes = size(v.value())?;
        totals.entry(k.value().0.to_string()).or_default().pending += bytes;
    }
    for entry in dead.iter()? {
        let (k, v) = entry?;
        let (subscription, seq) = k.value();
        let bytes = size(decode_dead_record(seq, v.value())?.change)?;
        totals.entry(subscription.to_string()).or_default().dead += bytes;
    }
    let mut sizes = txn.open_table(SIZES)?;
    for (subscription, bytes) in totals {
        sizes.insert(subscription.as_str(), (bytes.pending, bytes.dead))?;
    }
    Ok(())
}
