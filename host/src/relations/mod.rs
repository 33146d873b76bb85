//! Relationship analysis: the analyzers (built into GRW, or plugins of the
//! plugin directory), run on the objects they declared interest in, keep a
//! relationship index ([`Graph`]) current.
//!
//! How edges follow changes at either end: every cache lookup an analysis
//! makes (`get`, `list` by label selector, `owned-by`) is recorded with its
//! edges, and so is every object a lookup returned whose content the
//! analyzer read beyond its identity. A change to a cached object calls
//! again exactly the analyses it may answer differently: a `get` of that
//! object or a read of its content (any change), a `list` whose selector
//! matched it before and not after or the other way round, an `owned-by`
//! of an owner it gained or lost. So a Service's `selects` edges follow a
//! new Pod, a relabelled Pod and its own selector change, without the
//! analyzer declaring anything beyond the lookups it makes anyway.
//!
//! Which kinds are watched: every kind an analyzer's interest names (a
//! pattern with a kind), and every kind its lookups ask for. A pattern
//! without a kind covers whatever GRW watches anyway; it starts no
//! watches. A target kind is not watched for its own sake: whether a
//! target exists is known when its kind is watched, and shown as unknown
//! otherwise.
//!
//! One worker thread ([`worker`]) runs the analyses, in the order changes
//! arrive, reading the caches through a recording [`reader`]. Each followed
//! kind's changes reach it through one bounded queue ([`feed`]): a feed
//! that finds it full falls behind its cache and starts over from the
//! cache's state, so memory stays bounded however slow the analyzers are.
//! Plugin and discovery changes reach it as signals that coalesce.

mod feed;
pub mod graph;
mod mirror;
mod reader;
mod worker;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use tokio::sync::mpsc;

pub use feed::QUEUE_CAPACITY;
pub use graph::{
    AnalyzerCounts, Direction, Edge, Graph, KindKey, Lookup, Node, NodeKey, SubjectKey,
};

use crate::config::WatchOptions;
use crate::gvk::{ResourceInfo, grw_kinds};
use crate::kube::Discovery;
use crate::plugin::Plugins;
use crate::store::ObjectKey;
use crate::watch::{Watch, Watches};
use feed::Queue;
use mirror::Mirror;
use reader::Env;
use worker::{Inbox, Worker};

/// How long the index must have been ready (every followed kind synced, no
/// analysis waiting) before it counts as settled.
const SETTLE_AFTER: Duration = Duration::from_millis(500);

/// The relations engine: the index, and the worker that keeps it.
pub struct Relations {
    graph: RwLock<Graph>,
    env: Arc<Env>,
    /// Each watch GRW creates, for the worker to follow if an analyzer
    /// wants its kind: one small message per watch, taken at once.
    new_watches: mpsc::UnboundedSender<Arc<Watch>>,
    /// Queued changes and snapshots, and new watches, not yet done.
    waiting: Arc<AtomicUsize>,
    /// The plugin and discovery generations the worker has handled.
    plugins_seen: AtomicU64,
    discovery_seen: AtomicU64,
    /// The index was complete once: relationship changes are news since.
    settled: AtomicBool,
    /// Told of the edges that appear (`true`) or go once the index has
    /// settled (the journal).
    on_edges: std::sync::OnceLock<EdgeHook>,
}

/// What [`Relations::on_edge_changes`] calls: edges that appeared (`true`)
/// or went.
pub type EdgeHook = Arc<dyn Fn(Vec<(Arc<Edge>, bool)>) + Send + Sync>;

impl Relations {
    /// Starts the engine: a worker thread, and the tasks that feed it.
    /// Call inside the tokio runtime.
    pub fn start(
        watches: Arc<Watches>,
        discovery: Arc<Discovery>,
        plugins: Arc<Plugins>,
    ) -> Arc<Relations> {
        let waiting = Arc::new(AtomicUsize::new(0));
        let (queue, work) = Queue::new(waiting.clone(), tokio::runtime::Handle::current());
        let (new_watches, new_watches_rx) = mpsc::unbounded_channel();
        let inbox = Inbox {
            plugins: plugins.subscribe(),
            discovery: discovery.subscribe(),
            new_watches: new_watches_rx,
            work,
        };
        let relations = Arc::new(Relations {
            graph: RwLock::new(Graph::default()),
            env: Arc::new(Env {
                watches: watches.clone(),
                discovery: discovery.clone(),
                plugins: plugins.clone(),
                fed: Mutex::new(Default::default()),
                unknown: Mutex::new(HashSet::new()),
                analyzed: tokio::sync::watch::channel(HashSet::new()).0,
            }),
            new_watches,
            waiting,
            plugins_seen: AtomicU64::new(0),
            discovery_seen: AtomicU64::new(0),
            settled: AtomicBool::new(false),
            on_edges: std::sync::OnceLock::new(),
        });
        let weak = Arc::downgrade(&relations);
        watches.on_new_watch(Arc::new(move |watch| {
            if let Some(relations) = weak.upgrade()
                && relations.new_watches.send(watch.clone()).is_ok()
            {
                relations.waiting.fetch_add(1, Ordering::SeqCst);
            }
        }));
        // GRW's own kinds, created here so that the notification engine
        // (hooked in before) starts their feeds, seeded with what was
        // announced before a restart.
        let mut own = grw_kinds()
            .into_iter()
            .map(|r| watches.ensure(&r, WatchOptions::default(), false));
        let (Some(relation_watch), Some(set_watch)) = (own.next(), own.next()) else {
            unreachable!("GRW has two kinds of its own");
        };
        let mirror = Mirror::new(relation_watch, set_watch);
        let worker = Worker::new(relations.clone(), queue, mirror);
        std::thread::Builder::new()
            .name("grw-relations".into())
            .spawn(move || worker.run(inbox))
            .expect("the relations worker thread starts");
        relations
    }

    /// Calls `hook` with the edges that appear or go once the index has
    /// settled (before, what is found is what was there). Set once.
    pub fn on_edge_changes(&self, hook: EdgeHook) {
        let _ = self.on_edges.set(hook);
    }

    /// Changes, new watches and plugin or discovery updates waiting to be
    /// handled.
    pub fn pending(&self) -> usize {
        let behind =
            |current: u64, seen: &AtomicU64| usize::from(current > seen.load(Ordering::SeqCst));
        self.waiting.load(Ordering::SeqCst)
            + behind(self.env.plugins.generation(), &self.plugins_seen)
            + behind(self.env.discovery.generation(), &self.discovery_seen)
    }

    /// Waits until the worker has analyzed the first complete state of
    /// each of `kinds` (group, kind: their caches synced and fed to the
    /// analyzers); `false` if `timeout` passed first.
    pub async fn wait_analyzed(&self, kinds: &[(&str, &str)], timeout: Duration) -> bool {
        let mut analyzed = self.env.analyzed.subscribe();
        let all = |done: &HashSet<(String, String)>| {
            kinds
                .iter()
                .all(|(g, k)| done.contains(&(g.to_string(), k.to_string())))
        };
        tokio::time::timeout(timeout, analyzed.wait_for(all))
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// Whether the index has been complete once (every kind it follows
    /// synced and analyzed): relationship changes are announced since.
    pub fn settled(&self) -> bool {
        self.settled.load(Ordering::SeqCst)
    }

    /// A read-locked view of the index; hold it briefly.
    pub fn graph(&self) -> parking_lot::RwLockReadGuard<'_, Graph> {
        self.graph.read()
    }

    /// What the index holds for one analyzer.
    pub fn counts(&self, analyzer: &str) -> Option<AnalyzerCounts> {
        self.graph.read().counts(analyzer)
    }

    /// Whether a serving analyzer analyzes objects of this group and kind.
    pub fn covers(&self, group: &str, kind: &str) -> bool {
        self.env.plugins.analyzers().iter().any(|a| {
            a.interest.kinds.iter().any(|(g, _, k)| {
                g.as_deref().is_none_or(|g| g == group) && k.as_deref().is_none_or(|k| k == kind)
            })
        })
    }

    /// The resource of a group and kind, in the version GRW watches it in
    /// (or discovery prefers).
    pub fn resource(&self, group: &str, kind: &str) -> Option<ResourceInfo> {
        self.env.resource(group, kind, "")
    }

    /// Whether the object a node names exists: `None` when its kind is
    /// not watched, so nobody knows.
    pub fn exists(&self, node: &NodeKey) -> Option<bool> {
        let resource = self.env.resource(&node.group, &node.kind, "")?;
        let namespace = (!node.namespace.is_empty()).then_some(&*node.namespace);
        let watch = self.env.watches.serving(&resource.gvk, namespace)?;
        if !watch.cache.is_synced() {
            return None;
        }
        let found = watch
            .cache
            .read()
            .get(&ObjectKey::new(&node.namespace, &node.name))
            .is_some();
        Some(found)
    }
}
