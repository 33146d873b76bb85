//! The feed of one watch: turns the cache's changes into queued deliveries.
//!
//! The feed keeps the state of every object as subscribers were last told
//! (*announced*): in memory, sharing the cache's objects rather than copying
//! them, and with `dataDir` also in the outbox, so that a restart resumes from
//! it. A change is compared with it: the same resourceVersion again, an older
//! one, or deleting an object never announced changes nothing; an upsert of
//! an announced object is a MODIFIED whose old state is the announced one. So
//! whatever the path a change takes (watch event, relist diff, a resumed
//! watch after a restart), each subscriber hears of it once.
//!
//! Decide, then record: for a batch of changes the feed first works out, off
//! the async threads and outside any transaction, which subscriptions want
//! which change (event types, namespace, selectors; filter plugins run later,
//! in each subscription's worker, so a slow plugin holds up only the
//! subscriptions that use it). Then one transaction stores each wanted
//! change once, with a reference in every queue that wants it, the new
//! announced state and the watch's resourceVersion. The in-memory state moves
//! on only once that commit went through.
//!
//! The cache's tap holds at most `notificationBufferBytes` of changes waiting
//! for the feed. When the outbox cannot keep up (a failing disk), the tap
//! overflows, and once the feed can write again it catches up from the
//! cache's state, as after a relist: the latest version of each changed
//! object is announced, the versions in between are not.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::sync::Notify;

use super::decide::Decisions;
use super::outbox::{Announcement, FeedTxn, Outbox, OutboxError, Trims};
use super::{Active, until_stored};
use crate::gvk::Gvk;
use crate::metrics::Metrics;
use crate::store::{
    Cache, Change, ChangeType, ObjectKey, Origin, StoredObject, TapReceiver, Tapped, parse_rv,
};
use crate::watch::{Watch, WatchKey};

/// The subscriptions attached to the feed's watch, asked anew for each batch.
pub(super) type Subscribers = Arc<dyn Fn() -> Vec<Arc<Active>> + Send + Sync>;

/// Groups of changes handled in one transaction, at most.
const MAX_GROUPS_PER_BATCH: usize = 512;

/// A running feed.
pub(super) struct FeedHandle {
    /// Wakes the feed to queue initial snapshots of new subscriptions.
    pub(super) wake: Notify,
}

/// What every feed shares.
#[derive(Clone)]
pub(super) struct FeedContext {
    pub(super) outbox: Arc<Outbox>,
    /// The tap's limit (`notificationBufferBytes`).
    pub(super) buffer_bytes: usize,
    /// Where trimmed lists are counted.
    pub(super) metrics: Arc<Metrics>,
    /// Forgets the decisions about changes the bounds dropped.
    pub(super) decisions: Arc<Decisions>,
}

/// The outbox's name for a watch: its kind and server-side options.
pub(super) fn watch_id(key: &WatchKey) -> String {
    let mut id = key.gvk.to_string();
    let o = &key.options;
    let parts = [
        ("namespace", o.namespace.as_deref()),
        (
            "labelSelector",
            o.label_selector.as_ref().map(|s| s.as_str()),
        ),
        (
            "fieldSelector",
            o.field_selector.as_ref().map(|s| s.as_str()),
        ),
    ];
    for (name, value) in parts {
        if let Some(v) = value {
            id.push_str(&format!(" {name}={v}"));
        }
    }
    for (k, v) in &o.extra_params {
        id.push_str(&format!(" {k}={v}"));
    }
    id
}

/// Starts the feed of a watch whose loop has not started yet (or that runs
/// already, when `seed` is false). With `seed` and a `dataDir`, the cache
/// first gets the state announced before the last restart, if there is one.
pub(super) fn start(
    watch: Arc<Watch>,
    seed: bool,
    context: FeedContext,
    subscribers: Subscribers,
) -> Arc<FeedHandle> {
    let id = watch_id(&watch.key);
    let gvk = watch.key.gvk.clone();
    let outbox = &context.outbox;
    let mut seeded = false;
    if seed && outbox.is_persistent() {
        match outbox.announced(&id) {
            Ok(Some((rv, objects))) => {
                let count = objects.len();
                let objects = objects
                    .iter()
                    .filter_map(|json| stored_object(json, &gvk))
                    .collect();
                watch.cache.seed(objects, &rv);
                seeded = true;
                tracing::info!(watch = %id, objects = count, resource_version = %rv, "resuming from the state announced before the restart");
            }
            Ok(None) => {}
            Err(e) => {
                tracing::error!(watch = %id, error = %crate::error::Report(&e), "cannot read the announced state; starting fresh")
            }
        }
    }
    let tap = watch.cache.tap(context.buffer_bytes);
    let announced = tap
        .objects
        .into_iter()
        .map(|o| (o.key().clone(), o))
        .collect();
    let handle = Arc::new(FeedHandle {
        wake: Notify::new(),
    });
    let feed = Feed {
        id,
        gvk,
        cache: watch.cache.clone(),
        context,
        subscribers,
        announced,
    };
    // Objects the cache held before the feed looked existed before: they are
    // announced silently. A seeded cache holds exactly the stored state.
    let existing = (!seeded).then_some(tap.resource_version);
    tokio::spawn(feed.run(tap.rx, existing, handle.clone()));
    handle
}

/// An object GRW stored earlier as JSON, read back without a round trip
/// through `serde_json::Value`.
pub(super) fn stored_object(json: &[u8], gvk: &Gvk) -> Option<StoredObject> {
    StoredObject::from_json(json, gvk).ok()
}

struct Feed {
    id: String,
    gvk: Gvk,
    cache: Arc<Cache>,
    context: FeedContext,
    subscribers: Subscribers,
    /// Every object as subscribers were last told, sharing the cache's copies.
    announced: HashMap<ObjectKey, Arc<StoredObject>>,
}

/// What one transaction records, worked out before it opens.
#[derive(Default)]
struct Plan {
    /// Forget the stored announced state first (the feed's first commit).
    reset: bool,
    /// New announced states in order; `None`: deleted.
    updates: Vec<(ObjectKey, Option<Arc<StoredObject>>)>,
    /// Changes to store once each, with the queues that want them.
    changes: Vec<Planned>,
    /// The resourceVersion the watch's changes are announced up to.
    position: Option<String>,
    /// Subscriptions whose initial snapshot this plan queues.
    snapshots: Vec<Arc<Active>>,
}

/// One change to store, and who wants it.
struct Planned {
    number: u64,
    kind: ChangeType,
    origin: Origin,
    object: Arc<StoredObject>,
    old: Option<Arc<StoredObject>>,
    queued_ms: u64,
    /// Subscriptions and the place in their queue.
    targets: Vec<(Arc<Active>, u64)>,
}

impl Feed {
    async fn run(mut self, mut rx: TapReceiver, existing: Option<String>, handle: Arc<FeedHandle>) {
        if let Some(rv) = existing {
            let plan = Plan {
                reset: true,
                updates: self
                    .announced
                    .iter()
                    .map(|(k, o)| (k.clone(), Some(o.clone())))
                    .collect(),
                position: Some(rv),
                ..Plan::default()
            };
            self.commit(plan).await;
        }
        loop {
            let mut groups = Vec::new();
            let mut overflowed = false;
            tokio::select! {
                item = rx.recv() => match item {
                    None => return,
                    Some(Tapped::Changes(group)) => groups.push(group),
                    Some(Tapped::Overflowed) => overflowed = true,
                },
                () = handle.wake.notified() => {}
            }
            while !overflowed && groups.len() < MAX_GROUPS_PER_BATCH {
                match rx.try_recv() {
                    Some(Tapped::Changes(group)) => groups.push(group),
                    Some(Tapped::Overflowed) => overflowed = true,
                    None => break,
                }
            }
            let Some(feed) = self.process(groups).await else {
                return;
            };
            self = feed;
            if overflowed {
                let tap = self.cache.tap(self.context.buffer_bytes);
                rx = tap.rx;
                let catch_up = self.catch_up(tap.objects, &tap.resource_version);
                let count = catch_up.len();
                let Some(feed) = self.process(vec![catch_up]).await else {
                    return;
                };
                self = feed;
                tracing::info!(watch = %self.id, changes = count, resource_version = %tap.resource_version, "the notification feed caught up from the cache's state");
            }
        }
    }

    /// Plans a batch off the async threads, then commits it. `None` if
    /// planning failed, which only a bug can cause; the feed stops.
    async fn process(self, groups: Vec<Vec<Arc<Change>>>) -> Option<Feed> {
        let planned = tokio::task::spawn_blocking(move || {
            let plan = self.plan(&groups);
            (self, plan)
        })
        .await;
        match planned {
            Ok((mut feed, plan)) => {
                feed.commit(plan).await;
                Some(feed)
            }
            Err(e) => {
                tracing::error!(error = %e, "the notification feed failed; its watch's changes are no longer queued");
                None
            }
        }
    }

    /// Writes a plan, trying again until the outbox takes it (a change is
    /// never dropped because the disk had a bad moment), then moves the
    /// in-memory state on.
    async fn commit(&mut self, plan: Plan) {
        let plan = Arc::new(plan);
        let persistent = self.context.outbox.is_persistent();
        let durable_state = persistent && (!plan.updates.is_empty() || plan.position.is_some());
        let mut trims = Trims::default();
        if plan.reset || !plan.changes.is_empty() || durable_state {
            let what = format!("queueing the changes of watch {}", self.id);
            let (outbox, id, gvk, writing) = (
                self.context.outbox.clone(),
                self.id.clone(),
                self.gvk.clone(),
                plan.clone(),
            );
            ((), trims) = until_stored(&what, move || {
                outbox.feed(&id, |txn| writing.write(txn, persistent, &gvk))
            })
            .await;
        }
        for (key, state) in &plan.updates {
            match state {
                Some(object) => self.announced.insert(key.clone(), object.clone()),
                None => self.announced.remove(key),
            };
        }
        for active in &plan.snapshots {
            active.snapshot_due.store(false, Ordering::SeqCst);
        }
        let mut queued: HashMap<&str, (&Arc<Active>, u64)> = HashMap::new();
        for planned in &plan.changes {
            for (active, _) in &planned.targets {
                queued.entry(&active.sub.name).or_insert((active, 0)).1 += 1;
            }
        }
        for (active, count) in queued.into_values() {
            active.pending.fetch_add(count, Ordering::Relaxed);
            if let Some(trimmed) = trims.subscriptions.get(&active.sub.name) {
                active.trimmed(*trimmed, &self.context.metrics);
            }
            active.queued.notify_one();
        }
        self.context.decisions.forget(&trims.released);
    }

    /// Which subscription wants which change of `groups`, and the announced
    /// state after them.
    fn plan(&self, groups: &[Vec<Arc<Change>>]) -> Plan {
        let subs = (self.subscribers)();
        let mut plan = Plan::default();
        // The announced state as this batch changes it.
        let mut overlay: HashMap<ObjectKey, Option<Arc<StoredObject>>> = HashMap::new();
        let now = crate::time::unix_millis();
        for group in groups {
            for change in group {
                let key = change.object.key();
                let announced = match overlay.get(key) {
                    Some(state) => state.clone(),
                    None => self.announced.get(key).cloned(),
                };
                let (kind, old) = match (change.kind, announced) {
                    (ChangeType::Deleted, None) => continue,
                    (ChangeType::Deleted, Some(_)) => (ChangeType::Deleted, None),
                    (_, Some(a))
                        if !newer(change.object.resource_version(), a.resource_version()) =>
                    {
                        continue;
                    }
                    (_, Some(a)) => (ChangeType::Modified, Some(a)),
                    (_, None) => (ChangeType::Added, None),
                };
                let state = (kind != ChangeType::Deleted).then(|| change.object.clone());
                overlay.insert(key.clone(), state.clone());
                plan.updates.push((key.clone(), state));
                if change.origin == Origin::Initial {
                    // The object existed before GRW looked: not news.
                    continue;
                }
                let targets: Vec<(Arc<Active>, u64)> = subs
                    .iter()
                    .filter(|a| a.sub.wants(kind, &change.object))
                    .map(|a| (a.clone(), a.seq()))
                    .collect();
                if !targets.is_empty() {
                    plan.changes.push(Planned {
                        number: self.context.outbox.next_change_number(),
                        kind,
                        origin: change.origin,
                        object: change.object.clone(),
                        old,
                        queued_ms: now,
                        targets,
                    });
                }
            }
            if let Some(last) = group.last() {
                plan.position = Some(last.position.to_string());
            }
        }
        let due: Vec<Arc<Active>> = subs
            .into_iter()
            .filter(|a| a.snapshot_due.load(Ordering::SeqCst))
            .collect();
        if !due.is_empty() {
            let current = self
                .announced
                .iter()
                .filter(|(k, _)| !overlay.contains_key(*k))
                .map(|(_, o)| o)
                .chain(overlay.values().flatten());
            for object in current {
                for active in &due {
                    plan.changes.push(Planned {
                        number: self.context.outbox.next_change_number(),
                        kind: ChangeType::Added,
                        origin: Origin::Initial,
                        object: object.clone(),
                        old: None,
                        queued_ms: now,
                        targets: vec![(active.clone(), active.seq())],
                    });
                }
            }
            plan.snapshots = due;
        }
        plan
    }

    /// The changes that take the announced state to the cache's `objects`:
    /// what a relist diff would say, for the time the tap overflowed.
    fn catch_up(&self, objects: Vec<Arc<StoredObject>>, rv: &str) -> Vec<Arc<Change>> {
        let position = parse_rv(rv);
        let mut seen: HashSet<ObjectKey> = HashSet::with_capacity(objects.len());
        let mut changes = Vec::new();
        for object in objects {
            seen.insert(object.key().clone());
            let old = self.announced.get(object.key());
            if old.is_some_and(|o| o.resource_version() == object.resource_version()) {
                continue;
            }
            changes.push(Arc::new(Change {
                kind: if old.is_some() {
                    ChangeType::Modified
                } else {
                    ChangeType::Added
                },
                old: old.cloned(),
                object,
                origin: Origin::Relist,
                position,
            }));
        }
        for (key, last) in &self.announced {
            if !seen.contains(key) {
                changes.push(Arc::new(Change {
                    kind: ChangeType::Deleted,
                    object: last.clone(),
                    old: None,
                    origin: Origin::Relist,
                    position,
                }));
            }
        }
        changes
    }
}

impl Plan {
    /// Writes the plan in one transaction. The announced state and position
    /// are written only when they must survive a restart.
    fn write(&self, txn: &mut FeedTxn<'_>, persistent: bool, gvk: &Gvk) -> Result<(), OutboxError> {
        if persistent {
            if self.reset {
                txn.clear()?;
            }
            for (key, state) in &self.updates {
                let json = state.as_ref().map(|o| o.json());
                let state = state.as_ref().zip(json.as_deref());
                txn.set_announced(
                    &state_key(key),
                    state.map(|(o, json)| (o.resource_version(), json)),
                )?;
            }
            if let Some(rv) = &self.position {
                txn.set_position(rv)?;
            }
        }
        for planned in &self.changes {
            // A subscription deleted since the plan was made gets nothing.
            let targets: Vec<(&str, u64)> = planned
                .targets
                .iter()
                .filter(|(active, _)| !active.stopped.load(Ordering::SeqCst))
                .map(|(active, seq)| (active.sub.name.as_str(), *seq))
                .collect();
            if targets.is_empty() {
                continue;
            }
            let encoded = Announcement::encode(
                planned.kind,
                planned.origin,
                gvk,
                &planned.object,
                planned.old.as_deref(),
                planned.queued_ms,
            );
            txn.queue_change(planned.number, &encoded, &targets)?;
        }
        Ok(())
    }
}

/// `namespace/name`; `/name` for cluster-scoped objects.
fn state_key(key: &ObjectKey) -> String {
    format!("{}/{}", key.namespace(), key.name())
}

/// Whether `rv` is a newer state than the announced `announced`. Equal
/// versions are the same state; numeric versions (every etcd-backed server)
/// also tell an older one, e.g. an event replayed after a resume.
fn newer(rv: &str, announced: &str) -> bool {
    if rv == announced {
        return false;
    }
    let (a, b) = (parse_rv(rv), parse_rv(announced));
    a == 0 || b == 0 || a > b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newer_versions() {
        assert!(newer("12", "11"));
        assert!(!newer("11", "11"));
        assert!(!newer("10", "11"));
        // Opaque versions: anything different is news.
        assert!(newer("abc", "11"));
        assert!(newer("11", "abc"));
    }

    #[test]
    fn watch_ids_name_kind_and_options() {
        let key = WatchKey {
            gvk: Gvk::new("apps", "v1", "Deployment"),
            options: crate::config::WatchOptions {
                namespace: Some("shop".into()),
                label_selector: Some("tier=web".parse().unwrap()),
                field_selector: None,
                extra_params: vec![("x".into(), "1".into())],
            },
        };
        assert_eq!(
            watch_id(&key),
            "apps/v1/Deployment namespace=shop labelSelector=tier=web x=1"
        );
        let plain = WatchKey {
            gvk: Gvk::new("", "v1", "Pod"),
            options: Default::default(),
        };
        assert_eq!(watch_id(&plain), "v1/Pod");
    }
}
