//! The feed of one watch: turns the cache's changes into queued deliveries.
//!
//! The feed keeps, in the outbox, the state of every object as subscribers
//! were last told (*announced*). A change is compared with it: the same
//! resourceVersion again, an older one, or deleting an object never announced
//! changes nothing; an upsert of an announced object is a MODIFIED whose old
//! state is the announced one. So whatever the path a change takes (watch
//! event, relist diff, a resumed watch after a restart), each subscriber hears
//! of it once.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use tokio::sync::{Notify, mpsc};

use super::outbox::{FeedTxn, Outbox, StoreError};
use super::payload::{self, Event};
use super::sink::Delivery;
use super::{Active, until_stored};
use crate::gvk::Gvk;
use crate::plugin::Plugins;
use crate::store::{Change, ChangeType, Origin, StoredObject, parse_rv};
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

/// The outbox's name for a watch: its kind and server-side options.
pub(super) fn watch_id(key: &WatchKey) -> String {
    let mut id = key.gvk.to_string();
    let o = &key.options;
    let parts = [
        ("namespace", o.namespace.as_deref()),
        ("labelSelector", o.label_selector.as_deref()),
        ("fieldSelector", o.field_selector.as_deref()),
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
/// already, when `seed` is false). With `seed`, the cache first gets the
/// announced state of the last run, if there is one.
pub(super) fn start(
    watch: Arc<Watch>,
    seed: bool,
    outbox: Arc<Outbox>,
    plugins: Arc<Plugins>,
    subscribers: Subscribers,
) -> Arc<FeedHandle> {
    let id = watch_id(&watch.key);
    let mut seeded = false;
    if seed {
        match outbox.announced(&id) {
            Ok(Some((rv, objects))) => {
                let count = objects.len();
                let objects = objects
                    .iter()
                    .filter_map(|json| serde_json::from_slice(json).ok())
                    .filter_map(|v| StoredObject::from_value(v, &watch.key.gvk, true).ok())
                    .collect();
                watch.cache.seed(objects, &rv);
                seeded = true;
                tracing::info!(watch = %id, objects = count, resource_version = %rv, "resuming from the state announced before the restart");
            }
            Ok(None) => {}
            Err(e) => {
                tracing::error!(watch = %id, error = %e, "cannot read the announced state; starting fresh")
            }
        }
    }
    let (snapshot, rx) = watch.cache.tap();
    let rv = watch.cache.read().resource_version().to_string();
    let handle = Arc::new(FeedHandle {
        wake: Notify::new(),
    });
    let feed = Feed {
        id,
        gvk: watch.key.gvk.clone(),
        outbox,
        plugins,
        subscribers,
    };
    tokio::spawn(feed.run((!seeded).then_some((snapshot, rv)), rx, handle.clone()));
    handle
}

struct Feed {
    id: String,
    gvk: Gvk,
    outbox: Arc<Outbox>,
    plugins: Arc<Plugins>,
    subscribers: Subscribers,
}

enum Input {
    /// The objects at tap time, announced silently: they existed before.
    Existing(Vec<Arc<StoredObject>>, String),
    /// Groups of changes.
    Changes(Vec<Vec<Arc<Change>>>),
}

impl Feed {
    async fn run(
        self,
        existing: Option<(Vec<Arc<StoredObject>>, String)>,
        mut rx: mpsc::UnboundedReceiver<Vec<Arc<Change>>>,
        handle: Arc<FeedHandle>,
    ) {
        let feed = Arc::new(self);
        if let Some((objects, rv)) = existing {
            feed.clone().process(Input::Existing(objects, rv)).await;
        }
        loop {
            let input = tokio::select! {
                group = rx.recv() => {
                    let Some(group) = group else { return };
                    let mut groups = vec![group];
                    while groups.len() < MAX_GROUPS_PER_BATCH {
                        match rx.try_recv() {
                            Ok(g) => groups.push(g),
                            Err(_) => break,
                        }
                    }
                    Input::Changes(groups)
                }
                () = handle.wake.notified() => Input::Changes(Vec::new()),
            };
            feed.clone().process(input).await;
        }
    }

    /// Commits one input, trying again until the outbox takes it: a change
    /// is never dropped because the disk had a bad moment.
    async fn process(self: Arc<Self>, input: Input) {
        let what = format!("queueing the changes of watch {}", self.id);
        let input = Arc::new(input);
        until_stored(&what, move || self.commit(&input)).await;
    }

    fn commit(&self, input: &Input) -> Result<(), StoreError> {
        let subs = (self.subscribers)();
        let due: Vec<Arc<Active>> = subs
            .iter()
            .filter(|a| a.snapshot_due.load(Ordering::SeqCst))
            .cloned()
            .collect();
        let queued = self.outbox.feed(&self.id, |txn| {
            let mut queued: HashMap<String, u64> = HashMap::new();
            match input {
                Input::Existing(objects, rv) => {
                    txn.clear()?;
                    for o in objects {
                        txn.set_announced(&state_key(o), Some((o.resource_version(), o.json())))?;
                    }
                    txn.set_position(rv)?;
                }
                Input::Changes(groups) => {
                    for group in groups {
                        for change in group {
                            self.announce(txn, change, &subs, &mut queued)?;
                        }
                        if let Some(last) = group.last() {
                            txn.set_position(&last.position.to_string())?;
                        }
                    }
                }
            }
            for active in &due {
                for (_, json) in txn.announced_all()? {
                    let Some(object) = serde_json::from_slice(&json)
                        .ok()
                        .and_then(|v| StoredObject::from_value(v, &self.gvk, true).ok())
                    else {
                        continue;
                    };
                    let change = Change::snapshot(Arc::new(object));
                    self.offer(txn, active, &News::of(&change, None), &mut queued)?;
                }
            }
            Ok(queued)
        })?;
        for active in due {
            active.snapshot_due.store(false, Ordering::SeqCst);
        }
        for active in subs {
            if let Some(n) = queued.get(&active.sub.name) {
                active.pending.fetch_add(*n, Ordering::Relaxed);
                active.wake.notify_one();
            }
        }
        Ok(())
    }

    /// Updates the announced state with one change and queues it for every
    /// subscription that wants it.
    fn announce(
        &self,
        txn: &mut FeedTxn<'_>,
        change: &Change,
        subs: &[Arc<Active>],
        queued: &mut HashMap<String, u64>,
    ) -> Result<(), StoreError> {
        let object = &change.object;
        let key = state_key(object);
        let announced = txn.announced(&key)?;
        let (kind, old) = match (change.kind, announced) {
            (ChangeType::Deleted, None) => return Ok(()),
            (ChangeType::Deleted, Some(_)) => (ChangeType::Deleted, None),
            (_, Some((rv, _))) if !newer(object.resource_version(), &rv) => return Ok(()),
            (_, Some((_, json))) => (ChangeType::Modified, Some(json)),
            (_, None) => (ChangeType::Added, None),
        };
        let state =
            (kind != ChangeType::Deleted).then(|| (object.resource_version(), object.json()));
        txn.set_announced(&key, state)?;
        if change.origin == Origin::Initial {
            // The object existed before GRW looked: not news.
            return Ok(());
        }
        let change = Change {
            kind,
            ..change.clone()
        };
        let news = News::of(&change, old.as_deref());
        for active in subs {
            self.offer(txn, active, &news, queued)?;
        }
        Ok(())
    }

    /// Queues a change for one subscription if it wants it.
    fn offer(
        &self,
        txn: &mut FeedTxn<'_>,
        active: &Active,
        news: &News<'_>,
        queued: &mut HashMap<String, u64>,
    ) -> Result<(), StoreError> {
        let sub = &active.sub;
        let change = news.change;
        let object = &change.object;
        if !sub.wants(change.kind, object) || !self.filters_pass(active, change) {
            return Ok(());
        }
        let body = payload::render(
            sub.payload,
            &Event {
                kind: change.kind,
                gvk: &self.gvk,
                namespace: object.namespace(),
                name: object.name(),
                object: object.json(),
                old: news.old,
                id: &news.id,
                subscription: &sub.name,
                time: &news.time,
            },
        );
        let delivery = Delivery {
            seq: active.seq(),
            id: news.id.clone(),
            event_type: change.kind.as_str().to_string(),
            gvk: self.gvk.clone(),
            namespace: object.namespace().to_string(),
            name: object.name().to_string(),
            enqueued_ms: news.enqueued_ms,
            payload: body,
        };
        txn.enqueue(&sub.name, &delivery)?;
        *queued.entry(sub.name.clone()).or_default() += 1;
        Ok(())
    }

    /// Every filter plugin of the subscription lets the change pass. A plugin
    /// that is not loaded lets nothing pass (and says so in the log).
    fn filters_pass(&self, active: &Active, change: &Change) -> bool {
        active.sub.filters.iter().all(|name| match self.plugins.filter(name) {
            Ok(plugin) => plugin.decide(&self.gvk, change),
            Err(e) => {
                tracing::warn!(subscription = %active.sub.name, error = %e, object = %change.object.key(), "filter plugin unavailable; the change does not pass");
                false
            }
        })
    }
}

/// One change as every subscription of the feed is told it: what is the
/// same for all of them is worked out once.
struct News<'a> {
    /// The change as announced (its type may differ from the cache's: an
    /// upsert of an object never announced is an ADDED).
    change: &'a Change,
    /// The announced state it replaces, for MODIFIED.
    old: Option<&'a [u8]>,
    /// `uid/resourceVersion/TYPE`.
    id: String,
    /// When it was queued, RFC 3339 and milliseconds since the epoch.
    time: String,
    enqueued_ms: u64,
}

impl<'a> News<'a> {
    fn of(change: &'a Change, old: Option<&'a [u8]>) -> News<'a> {
        News {
            change,
            old,
            id: change.id(),
            time: crate::time::now_rfc3339(),
            enqueued_ms: crate::time::unix_millis(),
        }
    }
}

/// `namespace/name`; `/name` for cluster-scoped objects.
fn state_key(object: &StoredObject) -> String {
    format!("{}/{}", object.namespace(), object.name())
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
                label_selector: Some("tier=web".into()),
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
