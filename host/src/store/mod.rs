//! The store: one [`Cache`] of objects per watch, with indexes, the
//! resourceVersion it reflects, a bounded history of changes for resuming
//! event streams, and a broadcast of live changes.
//!
//! Every mutation takes the write lock, updates objects and indexes (by
//! uid, namespace, label, owner and name), appends to the history and
//! broadcasts while still holding it; subscribing takes the read lock. So a
//! subscriber sees each change exactly once: either in its backlog or live,
//! never both and never neither.
//!
//! Consumers are bounded: a stream that falls [`BROADCAST_CAPACITY`] changes
//! behind is cut off (and told where to resume), and a [`Tap`] holds at most
//! its byte limit of changes before it overflows and its reader catches up
//! from the cache's state instead (see [`Cache::tap`]).

mod change;
mod codec;
mod fields;
mod index;
mod name_index;
mod object;
mod tap;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ops::Bound;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::{RwLock, RwLockReadGuard};
use tokio::sync::{broadcast, watch};

pub use change::{Change, ChangeType, Origin};
pub use codec::{CompressionStats, Dictionary, Packer};
pub use fields::FieldPaths;
pub use name_index::{NameIndex, fold_name};
pub use object::{Ingest, Managed, Managers, ObjectError, ObjectKey, StoredObject, Writer};
pub use tap::{Tap, TapReceiver, TapStatus, Tapped};

use tap::TapSender;

use crate::gvk::Gvk;
use codec::Codec;
use index::Indexes;

/// Live changes a slow subscriber may fall behind by before it is cut off
/// (and told to resume from its last resourceVersion).
pub const BROADCAST_CAPACITY: usize = 4096;

/// Changes of a relist applied under one hold of the write lock: 1 to 2
/// ms of Pods on the benchmark machine (BENCHMARKS.md, "A relist holds
/// readers out for milliseconds").
const RELIST_BATCH: usize = 256;

/// Objects of a relist compared with the cache's under one hold of the
/// read lock, which keeps out only writers.
const RELIST_READ_BATCH: usize = 16_384;

/// The objects of one watch.
pub struct Cache {
    gvk: Gvk,
    /// The fields [`Cache::pack`] reads into each object for the indexes.
    field_paths: FieldPaths,
    state: RwLock<State>,
    codec: Codec,
    live: broadcast::Sender<Arc<Change>>,
    synced: watch::Sender<bool>,
}

struct State {
    objects: BTreeMap<ObjectKey, Arc<StoredObject>>,
    indexes: Indexes,
    resource_version: String,
    history: VecDeque<Arc<Change>>,
    history_capacity: usize,
    /// Stored bytes of the objects of the changes in `history`.
    history_bytes: usize,
    history_byte_budget: usize,
    /// Changes after this position are all in `history`.
    history_floor: u64,
    last_position: u64,
    /// Receives every change until it overflows: the notification engine's
    /// feed. The changes of one list come as one group.
    tap: Option<TapSender>,
    /// The changes of the relist being applied, for the tap, which gets
    /// them as one group at its end; `None` outside a relist. A tap made
    /// meanwhile starts from objects that already hold them, so it clears
    /// this.
    relist_group: Option<Vec<Arc<Change>>>,
}

/// What [`Cache::follow`] hands its reader.
pub enum Followed {
    /// Every object of the cache now.
    Snapshot(Vec<Arc<StoredObject>>),
    /// A change after the last snapshot.
    Change(Arc<Change>),
}

/// From where a subscriber wants changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    /// Only changes from now on.
    Now,
    /// An ADDED for every current object, then changes from now on.
    Snapshot,
    /// Every change after this resourceVersion, then changes from now on.
    ResourceVersion(u64),
}

/// A cache's changes from a point on, as `tail -f` shows a file: the
/// backlog asked for, then live changes.
pub struct Tail {
    /// Changes to deliver first, oldest first.
    pub backlog: Vec<Arc<Change>>,
    /// Live changes after the backlog.
    pub live: broadcast::Receiver<Arc<Change>>,
    /// The resourceVersion the cache had reached when the backlog was
    /// taken: the backlog brings a reader to it.
    pub resource_version: String,
}

/// The requested resourceVersion is older than the history kept.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error(
    "resourceVersion {requested} is too old: changes are kept from {oldest} on; list again and watch from the list's resourceVersion"
)]
pub struct TooOld {
    /// What was asked for.
    pub requested: u64,
    /// The oldest resourceVersion one can resume from.
    pub oldest: u64,
}

impl Cache {
    /// An empty, not yet synced cache keeping `history_capacity` changes.
    pub fn new(gvk: Gvk, history_capacity: usize) -> Cache {
        Cache {
            gvk,
            field_paths: FieldPaths::default(),
            state: RwLock::new(State {
                objects: BTreeMap::new(),
                indexes: Indexes::default(),
                resource_version: String::new(),
                history: VecDeque::new(),
                history_capacity,
                history_bytes: 0,
                history_byte_budget: usize::MAX,
                history_floor: 0,
                last_position: 0,
                tap: None,
                relist_group: None,
            }),
            codec: Codec::new(),
            live: broadcast::channel(BROADCAST_CAPACITY).0,
            synced: watch::channel(false).0,
        }
    }

    /// Compresses objects for this cache (see [`codec`]), without taking
    /// its lock: the list loop calls it page by page, so a list of many
    /// objects is never held uncompressed. [`Cache::apply`] and
    /// [`Cache::replace`] compress what is not yet.
    pub fn pack(&self, objects: &mut [StoredObject]) {
        for object in objects.iter_mut() {
            object.index_fields(&self.field_paths);
        }
        self.codec.pack(objects);
    }

    /// A compressor for objects as they are read, when this cache's codec
    /// has a dictionary and is not collecting samples; see
    /// [`StoredObject::from_raw_packed`]. Objects read without one go
    /// through [`Cache::pack`].
    pub fn packer(&self) -> Option<Packer<'_>> {
        self.codec.packer()
    }

    /// What compression has done for this cache so far.
    pub fn compression(&self) -> CompressionStats {
        self.codec.stats()
    }

    /// Bounds the history by bytes as well as by count: it keeps at most
    /// `budget` bytes of changes, counting each change's object at its
    /// stored size ([`StoredObject::heap_bytes`]) whether or not the cache
    /// still holds that version. A change larger than the budget is kept
    /// by nobody: resuming from before it takes a new list.
    pub fn with_history_bytes(self, budget: usize) -> Cache {
        self.state.write().history_byte_budget = budget;
        self
    }

    /// Indexes the fields at `paths` (see [`fields`]) as well. Set before
    /// the cache holds anything.
    pub fn with_field_paths(mut self, paths: FieldPaths) -> Cache {
        self.state.get_mut().indexes = Indexes::with_fields(paths.clone());
        self.field_paths = paths;
        self
    }

    /// The fields this cache indexes.
    pub fn field_paths(&self) -> &FieldPaths {
        &self.field_paths
    }

    /// Builds the index that queries by part of a name read, unless it is
    /// built (or being built) already. The keys are taken under the lock;
    /// the index is built without it and installed with the changes made
    /// meanwhile, so neither readers nor the watch wait for the build.
    /// Runs where blocking is allowed: 100,000 names take tens of ms.
    pub fn build_name_index(&self) {
        let keys: Vec<ObjectKey> = {
            let mut state = self.state.write();
            if !state.indexes.start_names() {
                return;
            }
            state.objects.keys().cloned().collect()
        };
        let mut names = NameIndex::default();
        for key in &keys {
            names.insert(key);
        }
        drop(keys);
        self.state.write().indexes.finish_names(names);
    }

    /// The kind this cache holds.
    pub fn gvk(&self) -> &Gvk {
        &self.gvk
    }

    /// A consistent read-only view; hold it briefly, writers wait for it.
    pub fn read(&self) -> CacheView<'_> {
        CacheView(self.state.read())
    }

    /// Applies one watch event. Returns the change, or `None` when it changes
    /// nothing (the same resourceVersion again, or deleting an unknown object).
    pub fn apply(
        &self,
        kind: ChangeType,
        mut object: StoredObject,
        origin: Origin,
    ) -> Option<Arc<Change>> {
        self.pack(std::slice::from_mut(&mut object));
        let object = Arc::new(object);
        let mut state = self.state.write();
        let position = parse_rv(object.resource_version()).max(state.last_position);
        if !object.resource_version().is_empty() {
            state.resource_version = object.resource_version().to_string();
        }
        let change = match kind {
            ChangeType::Deleted => {
                // The server's DELETED carries the final state: announce that one.
                state.remove(object.key())?;
                Change {
                    kind: ChangeType::Deleted,
                    object,
                    old: None,
                    origin,
                    position,
                }
            }
            ChangeType::Added | ChangeType::Modified => {
                state.upsert_change(object, origin, position)?
            }
        };
        let change = self.publish(&mut state, change, true);
        state.tap(vec![change.clone()], &self.gvk);
        Some(change)
    }

    /// Replaces the whole content with a fresh list, emitting the difference:
    /// ADDED for new objects, MODIFIED for ones whose resourceVersion changed,
    /// DELETED (with the last known state) for vanished ones, nothing for the
    /// unchanged. Returns the changes made.
    ///
    /// Readers are held out only briefly, however long the list: what it
    /// leaves unchanged (after a short gap, nearly all of it) is found under
    /// the read lock, and the changes are applied [`RELIST_BATCH`] at a
    /// time, each batch under its own hold of the write lock. Meanwhile a
    /// reader may see some of a relist's changes and not yet the others,
    /// each object whole, as it would had they come one by one from the
    /// watch. The cache's resourceVersion becomes the list's once every
    /// change is in, and the tap gets them as one group. A cache has one
    /// writer, its watch loop, so nothing changes the objects between the
    /// two steps.
    pub fn replace(
        &self,
        mut objects: Vec<StoredObject>,
        list_rv: &str,
        origin: Origin,
    ) -> Vec<Arc<Change>> {
        self.pack(&mut objects);
        objects.sort_unstable_by(|a, b| a.key().cmp(b.key()));
        let (position, first) = {
            let state = self.state.read();
            let position = parse_rv(list_rv).max(state.last_position);
            // The first list is the starting point: what happened before it
            // cannot be replayed, so resuming is possible from its
            // resourceVersion on, not before.
            (
                position,
                origin == Origin::Initial && state.history.is_empty(),
            )
        };
        let (changed, vanished) = self.relist_diff(objects);
        self.state.write().relist_group = Some(Vec::new());
        let mut published = Vec::with_capacity(changed.len() + vanished.len());
        let mut changed = changed.into_iter().peekable();
        while changed.peek().is_some() {
            let mut state = self.state.write();
            for object in changed.by_ref().take(RELIST_BATCH) {
                if let Some(change) = state.upsert_change(object, origin, position) {
                    published.push(self.publish_relisted(&mut state, change, !first));
                }
            }
        }
        for keys in vanished.chunks(RELIST_BATCH) {
            let mut state = self.state.write();
            for key in keys {
                if let Some(last) = state.remove(key) {
                    let change = Change {
                        kind: ChangeType::Deleted,
                        object: last,
                        old: None,
                        origin,
                        position,
                    };
                    published.push(self.publish_relisted(&mut state, change, !first));
                }
            }
        }
        let mut state = self.state.write();
        state.resource_version = list_rv.to_string();
        if let Some(group) = state.relist_group.take()
            && !group.is_empty()
        {
            state.tap(group, &self.gvk);
        }
        if first {
            // The first list's changes are at the history's floor, where no
            // resume reads them: kept, they would only take the history's
            // room (10,000 changes by default, all taken by a list of as
            // many objects) and its memory.
            state.history_floor = position;
        }
        state.last_position = position;
        published
    }

    /// What a relist of `listed` (sorted by key) changes: the objects that
    /// are new or at another resourceVersion, and the keys of the objects
    /// it no longer has. Read under the read lock, [`RELIST_READ_BATCH`]
    /// objects at a time, so that even a writer waiting for the lock (a new
    /// tap) holds readers up only that long.
    ///
    /// The unchanged objects are dropped without the lock, and the changed
    /// ones are put in their `Arc`s then, also without it: the allocator
    /// sorts the memory freed by the first on its next allocations, 25 ms
    /// for 99,000 Pods, which would otherwise be spent in the first batch
    /// under the write lock.
    fn relist_diff(&self, listed: Vec<StoredObject>) -> (Vec<Arc<StoredObject>>, Vec<ObjectKey>) {
        let mut unchanged = vec![false; listed.len()];
        for (batch, flags) in unchanged.chunks_mut(RELIST_READ_BATCH).enumerate() {
            let state = self.state.read();
            let objects = &listed[batch * RELIST_READ_BATCH..];
            for (flag, object) in flags.iter_mut().zip(objects) {
                *flag = state
                    .objects
                    .get(object.key())
                    .is_some_and(|cached| cached.resource_version() == object.resource_version());
            }
        }
        let listed_has = |key: &ObjectKey| {
            listed
                .binary_search_by(|object| object.key().cmp(key))
                .is_ok()
        };
        let mut vanished = Vec::new();
        let mut after: Option<ObjectKey> = None;
        loop {
            let state = self.state.read();
            let keys = match &after {
                None => state.objects.range::<ObjectKey, _>(..),
                Some(key) => state
                    .objects
                    .range::<ObjectKey, _>((Bound::Excluded(key), Bound::Unbounded)),
            };
            let mut seen = 0;
            for (key, _) in keys.take(RELIST_READ_BATCH) {
                seen += 1;
                if !listed_has(key) {
                    vanished.push(key.clone());
                }
                after = Some(key.clone());
            }
            if seen < RELIST_READ_BATCH {
                break;
            }
        }
        let changed: Vec<StoredObject> = listed
            .into_iter()
            .zip(unchanged)
            .filter_map(|(object, unchanged)| (!unchanged).then_some(object))
            .collect();
        (changed.into_iter().map(Arc::new).collect(), vanished)
    }

    /// [`Cache::publish`] for a change of a relist, which the tap gets
    /// with the relist's others when they are all in.
    fn publish_relisted(&self, state: &mut State, change: Change, remember: bool) -> Arc<Change> {
        let change = self.publish(state, change, remember);
        if let Some(group) = &mut state.relist_group {
            group.push(change.clone());
        }
        change
    }

    /// Records a resourceVersion reached without a change (a bookmark).
    pub fn set_resource_version(&self, rv: &str) {
        let mut state = self.state.write();
        state.resource_version = rv.to_string();
        let position = parse_rv(rv);
        if position > state.last_position {
            state.last_position = position;
            if state.history.is_empty() {
                state.history_floor = position;
            }
        }
    }

    /// Fills an empty cache with a state remembered from an earlier run, as
    /// of `rv`, and marks it synced: the watch then resumes from `rv`, and a
    /// relist is diffed against this state, so what changed meanwhile comes
    /// out as changes.
    pub fn seed(&self, objects: Vec<StoredObject>, rv: &str) {
        self.replace(objects, rv, Origin::Initial);
        self.mark_synced();
    }

    /// Every current object, and from then on every change, with nothing
    /// missed or seen twice between the two. The changes of one list (or
    /// relist) arrive together, as one group.
    ///
    /// Unlike [`Cache::tail`], no change is skipped while the reader
    /// keeps up. Changes wait in the tap until read, up to `limit_bytes` of
    /// object JSON (a group arriving at an empty tap is always taken, however
    /// large). Past that the tap takes nothing more and sends
    /// [`Tapped::Overflowed`]: its reader then calls `tap` again and catches
    /// up from the state the cache holds then, so memory stops growing while
    /// a reader is stuck. The objects a waiting change holds are mostly
    /// shared with the cache and its history, so the limit overstates what
    /// the tap itself keeps alive. A later call replaces the earlier tap.
    pub fn tap(&self, limit_bytes: usize) -> Tap {
        let mut state = self.state.write();
        let (sender, rx) = match state.tap.take() {
            Some(previous) => previous.renew(limit_bytes),
            None => TapSender::new(limit_bytes),
        };
        state.tap = Some(sender);
        if let Some(group) = &mut state.relist_group {
            // The objects below hold the relist's changes so far.
            group.clear();
        }
        Tap {
            objects: state.objects.values().cloned().collect(),
            resource_version: state.resource_version.clone(),
            rx,
        }
    }

    /// How the tap's reader keeps up, if the cache is tapped.
    pub fn tap_status(&self) -> Option<TapStatus> {
        self.state.read().tap.as_ref().map(TapSender::status)
    }

    /// Marks the cache as holding a complete list.
    pub fn mark_synced(&self) {
        self.synced.send_replace(true);
    }

    /// Whether the cache has held a complete list at least once.
    pub fn is_synced(&self) -> bool {
        *self.synced.borrow()
    }

    /// Waits until the cache is synced, however long that takes.
    pub async fn until_synced(&self) {
        let mut rx = self.synced.subscribe();
        let _ = rx.wait_for(|synced| *synced).await;
    }

    /// Waits until the cache is synced; `false` if `timeout` passed first.
    pub async fn wait_synced(&self, timeout: Duration) -> bool {
        let mut rx = self.synced.subscribe();
        tokio::time::timeout(timeout, rx.wait_for(|synced| *synced))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// The changes from a point on; see [`Since`]. A snapshot takes only
    /// the objects' `Arc`s under the read lock, and makes their changes
    /// after it.
    pub fn tail(&self, since: Since) -> Result<Tail, TooOld> {
        let state = self.state.read();
        let (backlog, snapshot) = match since {
            Since::Now => (Vec::new(), Vec::new()),
            Since::Snapshot => (Vec::new(), state.objects.values().cloned().collect()),
            Since::ResourceVersion(rv) => {
                if rv < state.history_floor {
                    return Err(TooOld {
                        requested: rv,
                        oldest: state.history_floor,
                    });
                }
                let start = state.history.partition_point(|c| c.position <= rv);
                (state.history.range(start..).cloned().collect(), Vec::new())
            }
        };
        let (position, resource_version) = (state.last_position, state.resource_version.clone());
        let live = self.live.subscribe();
        drop(state);
        let added = snapshot.into_iter().map(|object| {
            Arc::new(Change {
                kind: ChangeType::Added,
                object,
                old: None,
                origin: Origin::Initial,
                position,
            })
        });
        Ok(Tail {
            backlog: backlog.into_iter().chain(added).collect(),
            live,
            resource_version,
        })
    }

    /// Follows the cache for a reader that keeps its own picture of it:
    /// once the cache has synced, `hand` gets every object, then each
    /// change; whenever the reader falls behind the broadcast, `lagged` is
    /// told how many changes it missed and `hand` gets every object again.
    /// A tail from a snapshot misses nothing between the two. Returns when
    /// `hand` answers `false` or the cache is gone.
    pub async fn follow<F, Fut>(&self, mut hand: F, lagged: impl Fn(u64))
    where
        F: FnMut(Followed) -> Fut,
        Fut: std::future::Future<Output = bool>,
    {
        self.until_synced().await;
        loop {
            let Ok(tail) = self.tail(Since::Snapshot) else {
                return;
            };
            let objects = tail.backlog.iter().map(|c| c.object.clone()).collect();
            if !hand(Followed::Snapshot(objects)).await {
                return;
            }
            let mut live = tail.live;
            loop {
                match live.recv().await {
                    Ok(change) => {
                        if !hand(Followed::Change(change)).await {
                            return;
                        }
                    }
                    Err(broadcast::error::RecvError::Lagged(missed)) => {
                        lagged(missed);
                        break;
                    }
                    Err(broadcast::error::RecvError::Closed) => return,
                }
            }
        }
    }

    /// Live changes from now on.
    pub fn live(&self) -> broadcast::Receiver<Arc<Change>> {
        self.live.subscribe()
    }

    /// Sends `change` to live readers and, if `remember`, appends it to
    /// the history.
    fn publish(&self, state: &mut State, change: Change, remember: bool) -> Arc<Change> {
        let change = Arc::new(change);
        state.last_position = state.last_position.max(change.position);
        if remember {
            state.remember(&change);
        }
        // No receivers is fine: nobody is streaming this kind right now.
        let _ = self.live.send(change.clone());
        change
    }
}

impl State {
    /// Appends `change` to the history, evicting the oldest changes past
    /// its count and bytes.
    fn remember(&mut self, change: &Arc<Change>) {
        if self.history_capacity == 0 {
            self.history_floor = change.position;
            return;
        }
        self.history_bytes += change.object.heap_bytes();
        self.history.push_back(change.clone());
        while self.history.len() > self.history_capacity
            || self.history_bytes > self.history_byte_budget
        {
            let Some(evicted) = self.history.pop_front() else {
                break;
            };
            self.history_bytes -= evicted.object.heap_bytes();
            self.history_floor = evicted.position;
        }
    }

    fn tap(&mut self, group: Vec<Arc<Change>>, gvk: &Gvk) {
        if let Some(tap) = &self.tap
            && !tap.send(group, gvk)
        {
            self.tap = None;
        }
    }

    /// Adds or replaces an object; the ADDED or MODIFIED it makes, or `None`
    /// when the cache already holds this very version.
    fn upsert_change(
        &mut self,
        object: Arc<StoredObject>,
        origin: Origin,
        position: u64,
    ) -> Option<Change> {
        let unchanged = self
            .objects
            .get(object.key())
            .is_some_and(|cached| cached.resource_version() == object.resource_version());
        if unchanged {
            return None;
        }
        let old = self.upsert(object.clone());
        Some(Change {
            kind: if old.is_some() {
                ChangeType::Modified
            } else {
                ChangeType::Added
            },
            object,
            old,
            origin,
            position,
        })
    }

    fn upsert(&mut self, object: Arc<StoredObject>) -> Option<Arc<StoredObject>> {
        let old = self.objects.insert(object.key().clone(), object.clone());
        match &old {
            Some(old) => self.indexes.replace(old, &object),
            None => self.indexes.insert(&object),
        }
        old
    }

    fn remove(&mut self, key: &ObjectKey) -> Option<Arc<StoredObject>> {
        let old = self.objects.remove(key)?;
        self.indexes.remove(&old);
        Some(old)
    }
}

/// A read-locked view of one cache.
pub struct CacheView<'a>(RwLockReadGuard<'a, State>);

impl CacheView<'_> {
    /// Number of objects.
    pub fn len(&self) -> usize {
        self.0.objects.len()
    }

    /// Whether the cache holds no object.
    pub fn is_empty(&self) -> bool {
        self.0.objects.is_empty()
    }

    /// The resourceVersion the cache reflects (last list, event or bookmark).
    pub fn resource_version(&self) -> &str {
        &self.0.resource_version
    }

    /// The cache's position: the largest resourceVersion it has reached,
    /// as a number.
    pub fn position(&self) -> u64 {
        self.0.last_position
    }

    /// The oldest resourceVersion a stream can resume from
    /// ([`Cache::tail`] with an older one is [`TooOld`]).
    pub fn oldest_resumable(&self) -> u64 {
        self.0.history_floor
    }

    /// One object by key.
    pub fn get(&self, key: &ObjectKey) -> Option<&Arc<StoredObject>> {
        self.0.objects.get(key)
    }

    /// One object by uid.
    pub fn get_by_uid(&self, uid: &str) -> Option<&Arc<StoredObject>> {
        self.0.objects.get(self.0.indexes.uid(uid)?)
    }

    /// All objects in key order, starting after `after` when given.
    pub fn iter_after<'s>(
        &'s self,
        after: Option<&ObjectKey>,
    ) -> Box<dyn Iterator<Item = &'s Arc<StoredObject>> + 's> {
        match after {
            Some(key) => Box::new(
                self.0
                    .objects
                    .range((std::ops::Bound::Excluded(key), std::ops::Bound::Unbounded))
                    .map(|(_, o)| o),
            ),
            None => Box::new(self.0.objects.values()),
        }
    }

    /// How many objects are in one namespace.
    pub fn namespace_len(&self, namespace: &str) -> usize {
        self.0.indexes.namespace_len(namespace)
    }

    /// The objects of one namespace in key order, starting after `after`
    /// when given.
    pub fn iter_in_namespace_after<'s>(
        &'s self,
        namespace: &str,
        after: Option<&ObjectKey>,
    ) -> Box<dyn Iterator<Item = &'s Arc<StoredObject>> + 's> {
        use std::ops::Bound;
        let range = ObjectKey::namespace_range(namespace);
        let start = match after {
            // After the namespace (a continue token of another query).
            Some(key) if *key >= range.end => return Box::new(std::iter::empty()),
            Some(key) if *key >= range.start => Bound::Excluded(key.clone()),
            _ => Bound::Included(range.start),
        };
        Box::new(
            self.0
                .objects
                .range((start, Bound::Excluded(range.end)))
                .map(|(_, o)| o),
        )
    }

    /// Keys of the objects having label `key=value`, in key order.
    pub fn keys_with_label(&self, key: &str, value: &str) -> Option<&BTreeSet<ObjectKey>> {
        self.0.indexes.label(key, value)
    }

    /// Key sets of every value of label `key`.
    pub fn keys_with_label_key(&self, key: &str) -> impl Iterator<Item = &BTreeSet<ObjectKey>> {
        self.0.indexes.label_values(key)
    }

    /// Keys of the objects owned by `uid`, in key order.
    pub fn keys_owned_by(&self, uid: &str) -> Option<&BTreeSet<ObjectKey>> {
        self.0.indexes.owner(uid)
    }

    /// At most how many objects have a name containing `folded` (a text
    /// folded with [`fold_name`]), read from the name index in a few
    /// lookups; `None` when the text is under three bytes, which the
    /// index cannot answer, or the index is not built
    /// ([`Cache::build_name_index`]).
    pub fn name_matches_at_most(&self, folded: &str) -> Option<usize> {
        self.0.indexes.names()?.estimate(folded)
    }

    /// Keys of the objects whose name may contain `folded` (a text folded
    /// with [`fold_name`]), in key order: all that do, and perhaps a few
    /// that only hold its trigrams, so check each. `None` when the text is
    /// under three bytes or the index is not built.
    pub fn keys_with_name_containing(&self, folded: &str) -> Option<Vec<ObjectKey>> {
        self.0.indexes.names()?.candidates(folded)
    }

    /// Whether the name index has been built (by a first query by name).
    pub fn has_name_index(&self) -> bool {
        self.0.indexes.has_names()
    }

    /// The fields this cache indexes.
    pub fn field_paths(&self) -> &FieldPaths {
        self.0.indexes.field_paths()
    }

    /// Keys of the objects whose indexed field in `slot` (of
    /// [`CacheView::field_paths`]) may equal `text`, in key order: those
    /// whose value is that text, and those whose value is a number (which
    /// texts equal a number is for the query to check). `None` when the
    /// slot is not indexed.
    pub fn keys_with_field(
        &self,
        slot: usize,
        text: &str,
    ) -> Option<(Option<&BTreeSet<ObjectKey>>, &BTreeSet<ObjectKey>)> {
        Some(self.0.indexes.field(slot)?.lookup(text))
    }

    /// Namespaces that hold at least one object.
    pub fn namespaces(&self) -> impl Iterator<Item = &str> {
        self.0.indexes.namespaces()
    }
}

/// ResourceVersions are opaque strings in Kubernetes, but every API server
/// backed by etcd uses its revision numbers; ordering (for resuming streams)
/// relies on that. A non-numeric version sorts first.
pub fn parse_rv(rv: &str) -> u64 {
    rv.parse().unwrap_or(0)
}

#[cfg(test)]
mod tests;

/// Returns the allocator's free memory to the system, where it keeps it for
/// later allocations: after a sync, the pages and lines it read (hundreds
/// of them, freed in no order) leave free chunks all over the heap, which
/// glibc's allocator gives back only when they reach its top. With one
/// arena per core (`main.rs`), GRW held 5 to 10 MB less at ready with
/// 10,000 Pods (BENCHMARKS.md). It takes 2 ms after a list of 10,000 Pods
/// and 4 ms after 100,000, on the calling thread. musl's allocator returns
/// freed memory by itself, and has nothing like it.
pub(crate) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: takes no pointer; the allocator's own locks guard its state.
    unsafe {
        libc::malloc_trim(0);
    }
}
