//! How the caches' changes reach the worker: one task per followed kind
//! reads its cache's live changes into one bounded queue ([`Queue`]).
//!
//! The bound is the point. A queued change holds its object and the
//! previous state, which the cache may have let go of since, so an
//! unbounded queue under a slow analyzer grows by two objects per change.
//! With [`QUEUE_CAPACITY`] items, a feed that finds the queue full waits,
//! stops reading its cache's broadcast, falls behind it (the broadcast
//! keeps [`crate::store::BROADCAST_CAPACITY`] changes) and then starts over
//! from the cache's current state: one [`Work::Snapshot`] of shared
//! objects replaces every change it missed. The worker analyzes a snapshot
//! as it analyzes a kind's first one, which also analyzes again every
//! analysis that looked the kind up, so nothing missed is lost.
//!
//! So what the relations engine holds beyond the caches is at most
//! [`QUEUE_CAPACITY`] changes (two objects each) plus one snapshot per
//! kind in flight (pointers to objects the cache holds), whatever the rate
//! of changes and however slow the analyzers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::mpsc;

use crate::gvk::Gvk;
use crate::store::{Change, Followed, StoredObject};
use crate::watch::Watch;

/// Changes and snapshots that may wait for the worker. At the analyzers'
/// usual 10 to 100 µs per change this is 10 to 100 ms of work; a feed
/// that finds it full has fallen behind anyway.
pub const QUEUE_CAPACITY: usize = 1024;

/// What the feeds hand the worker.
pub(super) enum Work {
    /// Every object of a kind now: its cache synced, or a feed that fell
    /// behind starts over.
    Snapshot(Gvk, Vec<Arc<StoredObject>>),
    /// One change.
    Change(Gvk, Arc<Change>),
    /// The kind's watch was removed (one a caller's query started, unused
    /// for `onDemandIdleSeconds`): its objects are known no more.
    Unfollowed(Gvk),
}

/// The sending side of the worker's queue, with the count of what waits.
#[derive(Clone)]
pub(super) struct Queue {
    tx: mpsc::Sender<Work>,
    /// Items sent and not yet done; shared with the front for `pending`.
    waiting: Arc<AtomicUsize>,
    /// The daemon's runtime, which runs the feeds.
    runtime: tokio::runtime::Handle,
}

impl Queue {
    /// A queue whose feeds run on `runtime`, and its receiving end;
    /// `waiting` counts what is in it (the worker takes one off when it is
    /// done with an item).
    pub(super) fn new(
        waiting: Arc<AtomicUsize>,
        runtime: tokio::runtime::Handle,
    ) -> (Queue, mpsc::Receiver<Work>) {
        let (tx, rx) = mpsc::channel(QUEUE_CAPACITY);
        (
            Queue {
                tx,
                waiting,
                runtime,
            },
            rx,
        )
    }

    /// The daemon's runtime.
    pub(super) fn runtime(&self) -> &tokio::runtime::Handle {
        &self.runtime
    }

    /// Waits for room, then queues `work`; `false` once the worker is gone.
    async fn send(&self, work: Work) -> bool {
        self.waiting.fetch_add(1, Ordering::SeqCst);
        if self.tx.send(work).await.is_err() {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return false;
        }
        true
    }

    /// Feeds one kind's changes into the queue until the worker is gone
    /// or the watch is removed (then [`Work::Unfollowed`]); see
    /// [`Queue::feed`]. Only the task holds the watch, so a removed one is
    /// freed.
    pub(super) fn follow(&self, watch: Arc<Watch>, gvk: Gvk) {
        let queue = self.clone();
        self.runtime.spawn(async move {
            let removed = tokio::select! {
                () = queue.feed(&watch, &gvk) => false,
                () = watch.removed() => true,
            };
            drop(watch);
            if removed {
                queue.send(Work::Unfollowed(gvk)).await;
            }
        });
    }

    /// A snapshot once the cache has synced, then each change, and a new
    /// snapshot whenever the feed fell behind the cache's broadcast.
    /// Returns once the worker (or the cache) is gone. The first snapshot
    /// is of a complete list, so analyzing it analyzes the kind (see
    /// `Relations::wait_analyzed`).
    async fn feed(&self, watch: &Watch, gvk: &Gvk) {
        watch
            .cache
            .follow(
                |followed| {
                    let work = match followed {
                        Followed::Snapshot(objects) => Work::Snapshot(gvk.clone(), objects),
                        Followed::Change(change) => Work::Change(gvk.clone(), change),
                    };
                    self.send(work)
                },
                |missed| tracing::warn!(gvk = %gvk, missed, "relations fell behind this kind's changes; analyzing it again from the cache"),
            )
            .await;
    }
}
