//! The tap: every change of one cache, in order, for one reader that must not
//! miss any (the notification engine's feed), with a ceiling on what waits.
//!
//! A reader that falls behind (its disk stopped taking writes, say) would
//! otherwise make the queue, and memory, grow without end. Instead the tap
//! stops taking changes once the waiting ones hold its limit in object bytes
//! and tells its reader so ([`Tapped::Overflowed`]); the reader then taps
//! again and catches up by comparing the cache's current state with what it
//! has seen, as after a relist. What it misses is intermediate versions of
//! objects that changed several times meanwhile, never the final state.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use serde::Serialize;
use tokio::sync::mpsc;

use super::{Change, StoredObject};
use crate::gvk::Gvk;

/// What a tap hands its reader.
#[derive(Debug)]
pub enum Tapped {
    /// Changes, in order; the changes of one list come as one group.
    Changes(Vec<Arc<Change>>),
    /// The tap reached its limit and took nothing after the changes already
    /// sent: tap again ([`super::Cache::tap`]) and catch up from the objects
    /// it returns.
    Overflowed,
}

/// A new tap: the cache's objects and resourceVersion when it was made, and
/// every change after them.
pub struct Tap {
    /// Every object of the cache at tap time.
    pub objects: Vec<Arc<StoredObject>>,
    /// The resourceVersion the cache reflected at tap time.
    pub resource_version: String,
    /// The changes after that.
    pub rx: TapReceiver,
}

/// How a tap's reader keeps up, for the status API and metrics.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TapStatus {
    /// Object bytes of the changes waiting to be read.
    pub buffered_bytes: usize,
    /// The most the waiting changes may hold before the tap overflows.
    pub limit_bytes: usize,
    /// Whether the tap overflowed and its reader has not caught up yet.
    pub behind: bool,
    /// Times the tap overflowed since the watch started.
    pub overflows: u64,
}

/// What the cache and the reader share.
struct Shared {
    /// Object bytes of the changes sent and not yet received.
    buffered: AtomicUsize,
    limit: AtomicUsize,
    overflowed: AtomicBool,
    overflows: AtomicU64,
}

/// The cache's end.
pub(super) struct TapSender {
    tx: mpsc::UnboundedSender<Tapped>,
    shared: Arc<Shared>,
}

/// The reader's end.
pub struct TapReceiver {
    rx: mpsc::UnboundedReceiver<Tapped>,
    shared: Arc<Shared>,
}

impl TapSender {
    pub(super) fn new(limit: usize) -> (TapSender, TapReceiver) {
        let shared = Arc::new(Shared {
            buffered: AtomicUsize::new(0),
            limit: AtomicUsize::new(limit),
            overflowed: AtomicBool::new(false),
            overflows: AtomicU64::new(0),
        });
        Self::with(shared)
    }

    /// A fresh channel for the same tap: the overflow count carries on.
    pub(super) fn renew(self, limit: usize) -> (TapSender, TapReceiver) {
        let shared = self.shared;
        shared.buffered.store(0, Ordering::SeqCst);
        shared.limit.store(limit, Ordering::SeqCst);
        shared.overflowed.store(false, Ordering::SeqCst);
        Self::with(shared)
    }

    fn with(shared: Arc<Shared>) -> (TapSender, TapReceiver) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            TapSender {
                tx,
                shared: shared.clone(),
            },
            TapReceiver { rx, shared },
        )
    }

    /// Sends a group unless the tap is full; `false` when the reader is gone.
    pub(super) fn send(&self, group: Vec<Arc<Change>>, gvk: &Gvk) -> bool {
        let shared = &self.shared;
        if shared.overflowed.load(Ordering::SeqCst) {
            return !self.tx.is_closed();
        }
        let bytes = group_bytes(&group);
        let buffered = shared.buffered.load(Ordering::SeqCst);
        let limit = shared.limit.load(Ordering::SeqCst);
        if buffered > 0 && buffered.saturating_add(bytes) > limit {
            shared.overflowed.store(true, Ordering::SeqCst);
            shared.overflows.fetch_add(1, Ordering::SeqCst);
            tracing::warn!(
                gvk = %gvk,
                buffered_bytes = buffered,
                limit_bytes = limit,
                "the notification feed does not keep up with this watch (is the dataDir failing?); \
                 no more changes are buffered for it: it will catch up from the cache's state, \
                 announcing the latest version of each object that changed meanwhile"
            );
            return self.tx.send(Tapped::Overflowed).is_ok();
        }
        shared.buffered.fetch_add(bytes, Ordering::SeqCst);
        self.tx.send(Tapped::Changes(group)).is_ok()
    }

    pub(super) fn status(&self) -> TapStatus {
        let shared = &self.shared;
        TapStatus {
            buffered_bytes: shared.buffered.load(Ordering::SeqCst),
            limit_bytes: shared.limit.load(Ordering::SeqCst),
            behind: shared.overflowed.load(Ordering::SeqCst),
            overflows: shared.overflows.load(Ordering::SeqCst),
        }
    }
}

impl TapReceiver {
    /// The next item; `None` when the cache replaced this tap or went away.
    pub async fn recv(&mut self) -> Option<Tapped> {
        let item = self.rx.recv().await;
        self.received(item)
    }

    /// The next item if one is waiting.
    pub fn try_recv(&mut self) -> Option<Tapped> {
        let item = self.rx.try_recv().ok();
        self.received(item)
    }

    fn received(&self, item: Option<Tapped>) -> Option<Tapped> {
        if let Some(Tapped::Changes(group)) = &item {
            self.shared
                .buffered
                .fetch_sub(group_bytes(group), Ordering::SeqCst);
        }
        item
    }
}

/// What a group counts against the limit: the JSON of every object it holds.
fn group_bytes(group: &[Arc<Change>]) -> usize {
    group
        .iter()
        .map(|c| c.object.json_len() + c.old.as_ref().map_or(0, |o| o.json_len()))
        .sum()
}
