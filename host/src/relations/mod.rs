//! Relationship analysis: the analyzer plugins of the plugin directory,
//! run on the objects they declared interest in, keep a relationship index
//! ([`Graph`]) current.
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
//! One worker thread runs the analyses, in the order changes arrive; the
//! caches feed it through their live change streams (a stream that falls
//! behind starts over from the cache's state).

pub mod graph;
mod mirror;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant, SystemTime};

use parking_lot::{Mutex, RwLock};
use tokio::sync::broadcast::error::RecvError;

pub use graph::{
    AnalyzerCounts, Direction, Edge, Graph, KindKey, Lookup, Node, NodeKey, SubjectKey,
};

use crate::config::WatchOptions;
use crate::gvk::{Gvk, KindRef, ResourceInfo, grw_kinds, is_grw_kind};
use crate::kube::Discovery;
use crate::plugin::{CacheReader, Found, Plugin, Plugins, Relationship};
use crate::query::{LabelSelector, PageRequest, Query};
use crate::store::{Change, ChangeType, ObjectKey, Since, StoredObject};
use crate::watch::{Watch, Watches};
use mirror::Mirror;

/// How long the index must have been ready (every followed kind synced, no
/// analysis waiting) before it counts as settled.
const SETTLE_AFTER: Duration = Duration::from_millis(500);

/// The relations engine: the index, and the worker that keeps it.
pub struct Relations {
    graph: RwLock<Graph>,
    env: Arc<Env>,
    work: Mutex<mpsc::Sender<Work>>,
    /// Work sent and not yet done.
    pending: AtomicUsize,
    /// The index was complete once: relationship changes are news since.
    settled: AtomicBool,
}

/// What analyses read: the caches and discovery.
struct Env {
    watches: Arc<Watches>,
    discovery: Arc<Discovery>,
    plugins: Arc<Plugins>,
    /// Kinds whose changes reach the worker, by group and kind.
    fed: Mutex<HashMap<(String, String), Gvk>>,
    /// Kinds asked for that discovery does not know (yet).
    unknown: Mutex<HashSet<(String, String)>>,
}

enum Work {
    /// The analyzer plugins changed.
    Plugins,
    /// Discovery changed: kinds asked for may exist now.
    Discovery,
    /// A watch started.
    NewWatch(Arc<Watch>),
    /// Every object of a kind now (its feed started or started over).
    Snapshot(Gvk, Vec<Arc<StoredObject>>),
    /// One change.
    Change(Gvk, Arc<Change>),
}

impl Relations {
    /// Starts the engine: a worker thread, and the tasks that feed it.
    /// Call inside the tokio runtime.
    pub fn start(
        watches: Arc<Watches>,
        discovery: Arc<Discovery>,
        plugins: Arc<Plugins>,
    ) -> Arc<Relations> {
        let (tx, rx) = mpsc::channel();
        let relations = Arc::new(Relations {
            graph: RwLock::new(Graph::default()),
            env: Arc::new(Env {
                watches: watches.clone(),
                discovery: discovery.clone(),
                plugins: plugins.clone(),
                fed: Mutex::new(HashMap::new()),
                unknown: Mutex::new(HashSet::new()),
            }),
            work: Mutex::new(tx),
            pending: AtomicUsize::new(0),
            settled: AtomicBool::new(false),
        });
        let weak = Arc::downgrade(&relations);
        watches.on_new_watch(Arc::new(move |watch| {
            if let Some(relations) = weak.upgrade() {
                relations.send(Work::NewWatch(watch.clone()));
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
        let runtime = tokio::runtime::Handle::current();
        let worker = relations.clone();
        std::thread::Builder::new()
            .name("grw-relations".into())
            .spawn(move || {
                let _entered = runtime.enter();
                Worker::new(worker, mirror).run(rx);
            })
            .expect("the relations worker thread starts");
        relations.send(Work::Plugins);
        let weak = Arc::downgrade(&relations);
        let mut plugin_changes = plugins.subscribe();
        let mut discovery_changes = discovery.subscribe();
        tokio::spawn(async move {
            loop {
                let work = tokio::select! {
                    changed = plugin_changes.changed() => changed.map(|_| Work::Plugins),
                    changed = discovery_changes.changed() => changed.map(|_| Work::Discovery),
                };
                let (Ok(work), Some(relations)) = (work, weak.upgrade()) else {
                    return;
                };
                relations.send(work);
            }
        });
        relations
    }

    fn send(&self, work: Work) {
        self.pending.fetch_add(1, Ordering::SeqCst);
        if self.work.lock().send(work).is_err() {
            self.pending.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// Changes and plugin updates waiting to be analyzed.
    pub fn pending(&self) -> usize {
        self.pending.load(Ordering::SeqCst)
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

impl Env {
    /// The resource of a group and kind: the version given if it is
    /// served, else the one watched, else discovery's preferred one.
    fn resource(&self, group: &str, kind: &str, version: &str) -> Option<ResourceInfo> {
        let catalog = self.discovery.catalog();
        if !version.is_empty()
            && let Some(exact) = catalog.get(&Gvk::new(group, version, kind))
        {
            return Some(exact.clone());
        }
        if let Some(fed) = self.fed.lock().get(&(group.to_string(), kind.to_string()))
            && let Some(watched) = catalog.get(fed)
        {
            return Some(watched.clone());
        }
        catalog
            .resolve(&KindRef {
                group: Some(group.to_string()),
                version: None,
                name: kind.to_string(),
            })
            .ok()
            .filter(|r| r.gvk.kind == kind)
    }

    /// The cluster-wide watch of a kind, if there is one.
    fn watch(&self, gvk: &Gvk) -> Option<Arc<Watch>> {
        self.watches.serving(gvk, None)
    }
}

/// Answers one analysis's cache lookups, recording them.
struct Reader {
    env: Arc<Env>,
    /// The analyzed object's namespace.
    namespace: String,
    asked: Mutex<Asked>,
}

#[derive(Default)]
struct Asked {
    lookups: Vec<RawLookup>,
    /// Kinds the lookups need watched.
    kinds: Vec<ResourceInfo>,
}

/// A lookup as asked, before the index shares its strings.
#[derive(PartialEq, Eq)]
enum RawLookup {
    Get(String, String, String, String),
    List(String, String, String, Arc<LabelSelector>),
    OwnedBy(String, String, String),
}

impl Reader {
    /// Records a lookup of a kind; `resource` is how discovery serves
    /// the kind, `None` when it does not (yet).
    fn record(&self, lookup: RawLookup, resource: Option<&ResourceInfo>) {
        if resource.is_none()
            && let RawLookup::Get(group, kind, ..)
            | RawLookup::List(group, kind, ..)
            | RawLookup::OwnedBy(group, kind, ..) = &lookup
        {
            self.env
                .unknown
                .lock()
                .insert((group.clone(), kind.clone()));
        }
        let mut asked = self.asked.lock();
        if !asked.lookups.contains(&lookup) {
            asked.lookups.push(lookup);
        }
        if let Some(resource) = resource
            && !asked.kinds.iter().any(|k| k.gvk == resource.gvk)
        {
            asked.kinds.push(resource.clone());
        }
    }

    /// The namespace a lookup of a kind means: none for cluster-scoped.
    fn scoped<'a>(resource: Option<&ResourceInfo>, namespace: &'a str) -> &'a str {
        match resource {
            Some(r) if !r.namespaced => "",
            _ => namespace,
        }
    }

    fn query(&self, gvk: &Gvk, query: Query) -> Vec<Found> {
        let Some(watch) = self.env.watch(gvk) else {
            return Vec::new();
        };
        let view = watch.cache.read();
        query
            .run(&view, &PageRequest::default())
            .items
            .into_iter()
            .map(|o| (gvk.clone(), o))
            .collect()
    }
}

impl CacheReader for Reader {
    fn get(&self, gvk: &Gvk, namespace: &str, name: &str) -> Option<Found> {
        let resource = self.env.resource(&gvk.group, &gvk.kind, &gvk.version);
        let namespace = Self::scoped(resource.as_ref(), namespace);
        self.record(
            RawLookup::Get(
                gvk.group.clone(),
                gvk.kind.clone(),
                namespace.to_string(),
                name.to_string(),
            ),
            resource.as_ref(),
        );
        let resource = resource?;
        let watch = self.env.watch(&resource.gvk)?;
        let object = watch
            .cache
            .read()
            .get(&ObjectKey::new(namespace, name))?
            .clone();
        Some((resource.gvk, object))
    }

    fn list(&self, gvk: &Gvk, namespace: &str, selector: &str) -> Result<Vec<Found>, String> {
        let selector: LabelSelector = selector.parse().map_err(|e| format!("{e}"))?;
        let selector = Arc::new(selector);
        let resource = self.env.resource(&gvk.group, &gvk.kind, &gvk.version);
        let namespace = Self::scoped(resource.as_ref(), namespace);
        self.record(
            RawLookup::List(
                gvk.group.clone(),
                gvk.kind.clone(),
                namespace.to_string(),
                selector.clone(),
            ),
            resource.as_ref(),
        );
        let Some(resource) = resource else {
            return Ok(Vec::new());
        };
        let query = Query {
            namespace: (!namespace.is_empty()).then(|| namespace.to_string()),
            labels: (*selector).clone(),
            ..Query::default()
        };
        Ok(self.query(&resource.gvk, query))
    }

    fn owned_by(&self, gvk: &Gvk, owner_uid: &str) -> Vec<Found> {
        let resource = self.env.resource(&gvk.group, &gvk.kind, &gvk.version);
        self.record(
            RawLookup::OwnedBy(gvk.group.clone(), gvk.kind.clone(), owner_uid.to_string()),
            resource.as_ref(),
        );
        let Some(resource) = resource else {
            return Vec::new();
        };
        let query = Query {
            owner_uid: Some(owner_uid.to_string()),
            ..Query::default()
        };
        self.query(&resource.gvk, query)
    }

    fn read(&self, gvk: &Gvk, object: &StoredObject) {
        let lookup = RawLookup::Get(
            gvk.group.clone(),
            gvk.kind.clone(),
            object.namespace().to_string(),
            object.name().to_string(),
        );
        // Found by a lookup, so its kind is known and already recorded.
        let mut asked = self.asked.lock();
        if !asked.lookups.contains(&lookup) {
            asked.lookups.push(lookup);
        }
    }
}

/// The worker thread's state.
struct Worker {
    relations: Arc<Relations>,
    /// Serving analyzers, by name.
    analyzers: BTreeMap<Arc<str>, Arc<Plugin>>,
    /// Whether each group/kind is cluster-scoped, as discovery says.
    scopes: HashMap<(String, String), Option<bool>>,
    /// The index as objects of GRW's own kinds.
    mirror: Mirror,
    /// Since when the index has been ready to settle.
    ready_since: Option<Instant>,
    /// Fed kinds whose first snapshot was analyzed: a kind fed but not
    /// yet there is analyzed, by every analyzer, when its snapshot comes.
    snapshotted: HashSet<Gvk>,
}

impl Worker {
    fn new(relations: Arc<Relations>, mirror: Mirror) -> Worker {
        Worker {
            relations,
            analyzers: BTreeMap::new(),
            scopes: HashMap::new(),
            mirror,
            ready_since: None,
            snapshotted: HashSet::new(),
        }
    }

    fn env(&self) -> &Arc<Env> {
        &self.relations.env
    }

    fn run(mut self, rx: mpsc::Receiver<Work>) {
        loop {
            match rx.recv_timeout(SETTLE_AFTER / 2) {
                Ok(work) => {
                    match work {
                        Work::Plugins => self.plugins_changed(),
                        Work::Discovery => self.discovery_changed(),
                        Work::NewWatch(watch) => self.new_watch(&watch),
                        Work::Snapshot(gvk, objects) => self.snapshot(&gvk, &objects),
                        Work::Change(gvk, change) => self.change(&gvk, &change),
                    }
                    self.relations.pending.fetch_sub(1, Ordering::SeqCst);
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
            if !self.mirror.enabled() && self.mirror.wanted() {
                let graph = self.relations.graph.read();
                self.mirror.enable(graph.analyses());
            }
            if !self.mirror.settled() {
                self.try_to_settle();
            }
        }
    }

    /// Settles the index once it has been ready for [`SETTLE_AFTER`]:
    /// discovery read, every followed kind synced, nothing waiting.
    fn try_to_settle(&mut self) {
        let env = self.env();
        let ready = env.discovery.is_loaded()
            && self.relations.pending() == 0
            && env
                .fed
                .lock()
                .values()
                .all(|gvk| env.watch(gvk).is_some_and(|w| w.cache.is_synced()));
        if !ready {
            self.ready_since = None;
            return;
        }
        let since = *self.ready_since.get_or_insert_with(Instant::now);
        if since.elapsed() >= SETTLE_AFTER {
            self.mirror.settle();
            self.relations.settled.store(true, Ordering::SeqCst);
            tracing::info!(
                edges = self.relations.graph.read().edges().count(),
                "relationship index settled; relationship changes are announced from now on"
            );
        }
    }

    /// Removes an analysis (its object is gone, or its analyzer).
    fn remove(&mut self, analyzer: &Arc<str>, node: &NodeKey) {
        let removed = self.relations.graph.write().remove(analyzer, node);
        let subject = SubjectKey {
            analyzer: analyzer.clone(),
            node: Arc::new(node.clone()),
        };
        self.mirror.update(&subject, &removed, &[], true);
    }

    fn plugins_changed(&mut self) {
        let serving: BTreeMap<Arc<str>, Arc<Plugin>> = self
            .env()
            .plugins
            .analyzers()
            .into_iter()
            .map(|p| (p.name.clone(), p))
            .collect();
        let removed: Vec<Arc<str>> = self
            .analyzers
            .keys()
            .filter(|name| !serving.contains_key(*name))
            .cloned()
            .collect();
        for name in removed {
            tracing::info!(analyzer = %name, "analyzer removed; its edges are removed");
            let removed = self.relations.graph.write().remove_analyzer(&name);
            for (subject, edges) in removed {
                self.mirror.update(&subject, &edges, &[], true);
            }
            self.analyzers.remove(&name);
        }
        let changed: Vec<Arc<Plugin>> = serving
            .values()
            .filter(|p| {
                self.analyzers
                    .get(&p.name)
                    .is_none_or(|held| !Arc::ptr_eq(held, p))
            })
            .cloned()
            .collect();
        for analyzer in changed {
            self.analyzers
                .insert(analyzer.name.clone(), analyzer.clone());
            self.watch_interest(&analyzer);
            self.analyze_everything(&analyzer);
        }
    }

    /// Makes sure the kinds an analyzer's interest names are watched and
    /// fed, and that the watched kinds a pattern without a kind covers are
    /// fed.
    fn watch_interest(&self, analyzer: &Plugin) {
        let wildcard = analyzer.interest.kinds.is_empty()
            || analyzer.interest.kinds.iter().any(|(_, _, k)| k.is_none());
        if wildcard {
            for watch in self.env().watches.all() {
                if watch.key.options == WatchOptions::default()
                    && !is_grw_kind(&watch.key.gvk)
                    && analyzer.interest.wants_kind(&watch.key.gvk)
                {
                    self.feed(&watch.resource);
                }
            }
        }
        let catalog = self.env().discovery.catalog();
        for (group, version, kind) in &analyzer.interest.kinds {
            let Some(kind) = kind else {
                continue;
            };
            let mut by_group: BTreeMap<String, ResourceInfo> = BTreeMap::new();
            for resource in catalog.with_kind(kind) {
                if resource.gvk.kind != *kind
                    || group.as_ref().is_some_and(|g| *g != resource.gvk.group)
                    || version.as_ref().is_some_and(|v| *v != resource.gvk.version)
                {
                    continue;
                }
                // One version per group: the one watched, or preferred.
                if version.is_none()
                    && self
                        .env()
                        .resource(&resource.gvk.group, kind, "")
                        .is_some_and(|chosen| chosen.gvk != resource.gvk)
                {
                    continue;
                }
                by_group.insert(resource.gvk.group.clone(), resource);
            }
            if by_group.is_empty() {
                tracing::info!(analyzer = %analyzer.name, kind, "a kind of the analyzer's interest is not served (yet); it is watched once discovery has it");
                self.env()
                    .unknown
                    .lock()
                    .insert((group.clone().unwrap_or_default(), kind.clone()));
            }
            for resource in by_group.into_values() {
                self.feed(&resource);
            }
        }
    }

    /// Makes sure a kind's changes reach the worker: its cluster-wide
    /// watch, started if there is none.
    fn feed(&self, resource: &ResourceInfo) {
        let key = (resource.gvk.group.clone(), resource.gvk.kind.clone());
        {
            let mut fed = self.env().fed.lock();
            if fed.contains_key(&key) {
                return;
            }
            fed.insert(key, resource.gvk.clone());
        }
        let watch = self
            .env()
            .watches
            .ensure(resource, WatchOptions::default(), false);
        tracing::info!(gvk = %resource.gvk, "relations follow this kind");
        let relations = Arc::downgrade(&self.relations);
        let gvk = resource.gvk.clone();
        tokio::spawn(async move {
            loop {
                // Subscribing with a snapshot misses nothing between the two.
                let Ok(subscription) = watch.cache.subscribe(Since::Snapshot) else {
                    return;
                };
                let objects = subscription
                    .backlog
                    .iter()
                    .map(|c| c.object.clone())
                    .collect();
                let Some(r) = relations.upgrade() else { return };
                r.send(Work::Snapshot(gvk.clone(), objects));
                drop(r);
                let mut live = subscription.live;
                loop {
                    match live.recv().await {
                        Ok(change) => {
                            let Some(r) = relations.upgrade() else { return };
                            r.send(Work::Change(gvk.clone(), change));
                        }
                        Err(RecvError::Lagged(missed)) => {
                            tracing::warn!(gvk = %gvk, missed, "relations fell behind this kind's changes; analyzing it again from the cache");
                            break;
                        }
                        Err(RecvError::Closed) => return,
                    }
                }
            }
        });
    }

    fn new_watch(&self, watch: &Watch) {
        if watch.key.options != WatchOptions::default() || is_grw_kind(&watch.key.gvk) {
            return;
        }
        let wanted = self
            .analyzers
            .values()
            .any(|a| a.interest.wants_kind(&watch.key.gvk));
        if wanted {
            self.feed(&watch.resource);
        }
    }

    fn discovery_changed(&mut self) {
        self.scopes.clear();
        let unknown: Vec<(String, String)> = self.env().unknown.lock().drain().collect();
        let mut found = false;
        for (group, kind) in unknown {
            if let Some(resource) = self.env().resource(&group, &kind, "") {
                tracing::info!(gvk = %resource.gvk, "a kind analyzers asked for is served now");
                self.feed(&resource);
                found = true;
            }
        }
        if found {
            let analyzers: Vec<Arc<Plugin>> = self.analyzers.values().cloned().collect();
            for analyzer in analyzers {
                self.watch_interest(&analyzer);
            }
        }
    }

    /// Analyzes every fed object an analyzer wants, then drops what it
    /// found before for objects it no longer covers (after a reload).
    /// Kinds whose first snapshot is still on its way are left to it.
    fn analyze_everything(&mut self, analyzer: &Arc<Plugin>) {
        let kinds: Vec<Gvk> = self
            .env()
            .fed
            .lock()
            .values()
            .filter(|gvk| self.snapshotted.contains(*gvk))
            .cloned()
            .collect();
        let mut analyzed = HashSet::new();
        for gvk in kinds {
            if !analyzer.interest.wants_kind(&gvk) {
                continue;
            }
            let Some(watch) = self.env().watch(&gvk) else {
                continue;
            };
            let objects: Vec<Arc<StoredObject>> =
                watch.cache.read().iter_after(None).cloned().collect();
            for object in objects {
                analyzed.insert(self.subject_key(&gvk, &object));
                self.analyze(analyzer, &gvk, &object);
            }
        }
        self.drop_unless(analyzer, |node| analyzed.contains(node));
    }

    /// Removes `analyzer`'s subjects for which `keep` says no.
    fn drop_unless(&mut self, analyzer: &Plugin, keep: impl Fn(&NodeKey) -> bool) {
        let subjects = self.relations.graph.read().subjects_of(&analyzer.name);
        for subject in subjects {
            if !keep(&subject.node) {
                self.remove(&analyzer.name, &subject.node);
            }
        }
    }

    fn snapshot(&mut self, gvk: &Gvk, objects: &[Arc<StoredObject>]) {
        self.snapshotted.insert(gvk.clone());
        let analyzers: Vec<Arc<Plugin>> = self
            .analyzers
            .values()
            .filter(|a| a.interest.wants_kind(gvk))
            .cloned()
            .collect();
        let kind: KindKey = (gvk.group.as_str().into(), gvk.kind.as_str().into());
        let present: HashSet<NodeKey> = objects.iter().map(|o| self.subject_key(gvk, o)).collect();
        for analyzer in &analyzers {
            for object in objects {
                self.analyze(analyzer, gvk, object);
            }
            self.drop_unless(analyzer, |node| {
                (node.group != kind.0 || node.kind != kind.1) || present.contains(node)
            });
        }
        let depending = self.relations.graph.read().depending_on_kind(&kind);
        self.reanalyze(depending, &HashSet::new());
    }

    fn change(&mut self, gvk: &Gvk, change: &Change) {
        let node = self.subject_key(gvk, &change.object);
        let mut done = HashSet::new();
        let analyzers: Vec<Arc<Plugin>> = self
            .analyzers
            .values()
            .filter(|a| a.interest.wants_kind(gvk))
            .cloned()
            .collect();
        for analyzer in analyzers {
            if change.kind == ChangeType::Deleted {
                self.remove(&analyzer.name, &node);
            } else {
                self.analyze(&analyzer, gvk, &change.object);
            }
            done.insert((analyzer.name.clone(), node.clone()));
        }
        let kind: KindKey = (gvk.group.as_str().into(), gvk.kind.as_str().into());
        let (old, new) = match change.kind {
            ChangeType::Added => (None, Some(&*change.object)),
            ChangeType::Modified => (change.old.as_deref(), Some(&*change.object)),
            ChangeType::Deleted => (Some(&*change.object), None),
        };
        let affected = self.relations.graph.read().affected(&kind, old, new);
        self.reanalyze(affected, &done);
    }

    /// Analyzes again, from the caches' current state, each of `subjects`
    /// not in `done`; one whose object is gone loses its edges.
    fn reanalyze(
        &mut self,
        subjects: HashSet<graph::SubjectKey>,
        done: &HashSet<(Arc<str>, NodeKey)>,
    ) {
        let mut subjects: Vec<graph::SubjectKey> = subjects.into_iter().collect();
        subjects.sort();
        for subject in subjects {
            let node = (*subject.node).clone();
            if done.contains(&(subject.analyzer.clone(), node.clone())) {
                continue;
            }
            let Some(analyzer) = self.analyzers.get(&subject.analyzer).cloned() else {
                continue;
            };
            let fed = self
                .env()
                .fed
                .lock()
                .get(&(node.group.to_string(), node.kind.to_string()))
                .cloned();
            let current = fed.and_then(|gvk| {
                let watch = self.env().watch(&gvk)?;
                let object = watch
                    .cache
                    .read()
                    .get(&ObjectKey::new(&node.namespace, &node.name))?
                    .clone();
                Some((gvk, object))
            });
            match current {
                Some((gvk, object)) => self.analyze(&analyzer, &gvk, &object),
                None => self.remove(&analyzer.name, &node),
            }
        }
    }

    /// The node of an analyzed object.
    fn subject_key(&self, gvk: &Gvk, object: &StoredObject) -> NodeKey {
        NodeKey {
            group: gvk.group.as_str().into(),
            kind: gvk.kind.as_str().into(),
            namespace: object.namespace().into(),
            name: object.name().into(),
        }
    }

    /// Whether a group/kind is namespaced, as discovery says (`None`: unknown).
    fn namespaced(&mut self, group: &str, kind: &str) -> Option<bool> {
        let key = (group.to_string(), kind.to_string());
        if let Some(known) = self.scopes.get(&key) {
            return *known;
        }
        let catalog = self.env().discovery.catalog();
        let scope = catalog
            .with_kind(kind)
            .iter()
            .find(|r| r.gvk.group == group && r.gvk.kind == kind)
            .map(|r| r.namespaced);
        self.scopes.insert(key, scope);
        scope
    }

    /// Runs one analysis and puts what it found into the index.
    fn analyze(&mut self, analyzer: &Arc<Plugin>, gvk: &Gvk, object: &Arc<StoredObject>) {
        let reader = Arc::new(Reader {
            env: self.env().clone(),
            namespace: object.namespace().to_string(),
            asked: Mutex::new(Asked::default()),
        });
        let answer = analyzer.analyze(gvk, object, reader.clone());
        let subject = self.subject_key(gvk, object);
        let found = match answer {
            Ok(found) => found,
            Err(error) => {
                tracing::warn!(analyzer = %analyzer.name, object = %subject, %error, "analysis failed; the object's last edges are kept, marked stale");
                let mut graph = self.relations.graph.write();
                let subject = graph.key(
                    &subject.group,
                    &subject.kind,
                    &subject.namespace,
                    &subject.name,
                );
                graph.failed(&analyzer.name, subject, &error);
                return;
            }
        };
        let asked = std::mem::take(&mut *reader.asked.lock());
        for resource in &asked.kinds {
            self.feed(resource);
        }
        let found: Vec<graph::Found> = found
            .into_iter()
            .filter_map(|r| self.found(analyzer, &reader.namespace, r))
            .collect();
        let mut graph = self.relations.graph.write();
        let lookups = asked
            .lookups
            .into_iter()
            .map(|l| match l {
                RawLookup::Get(group, kind, namespace, name) => {
                    Lookup::Get(graph.key(&group, &kind, &namespace, &name))
                }
                RawLookup::List(group, kind, namespace, selector) => Lookup::List {
                    kind: (graph.symbol(&group), graph.symbol(&kind)),
                    namespace: graph.symbol(&namespace),
                    selector,
                },
                RawLookup::OwnedBy(group, kind, uid) => Lookup::OwnedBy {
                    kind: (graph.symbol(&group), graph.symbol(&kind)),
                    uid: uid.into(),
                },
            })
            .collect();
        let subject = graph.key(
            &subject.group,
            &subject.kind,
            &subject.namespace,
            &subject.name,
        );
        let found = found
            .into_iter()
            .map(|mut f| {
                f.other = graph.key(
                    &f.other.group,
                    &f.other.kind,
                    &f.other.namespace,
                    &f.other.name,
                );
                f
            })
            .collect();
        let node = Arc::new(subject.clone());
        let (before, after) =
            graph.replace(&analyzer.name, subject, found, lookups, SystemTime::now());
        drop(graph);
        let subject = SubjectKey {
            analyzer: analyzer.name.clone(),
            node,
        };
        self.mirror.update(&subject, &before, &after, false);
    }

    /// A relationship as the index keeps it: the target's namespace
    /// dropped for cluster-scoped kinds and filled in with the analyzed
    /// object's for namespaced kinds. One without a relation, kind or name
    /// is left out.
    fn found(
        &mut self,
        analyzer: &Plugin,
        namespace: &str,
        r: Relationship,
    ) -> Option<graph::Found> {
        if r.relation.is_empty() || r.gvk.kind.is_empty() || r.name.is_empty() {
            tracing::warn!(analyzer = %analyzer.name, relation = %r.relation, kind = %r.gvk.kind, name = %r.name, "a relationship without a relation, target kind or target name is left out");
            return None;
        }
        let target_namespace = match self.namespaced(&r.gvk.group, &r.gvk.kind) {
            Some(false) => String::new(),
            Some(true) if r.namespace.is_empty() => namespace.to_string(),
            _ => r.namespace,
        };
        Some(graph::Found {
            relation: r.relation,
            outgoing: r.outgoing,
            other: NodeKey {
                group: r.gvk.group.into(),
                kind: r.gvk.kind.into(),
                namespace: target_namespace.into(),
                name: r.name.into(),
            },
            attributes: r.attributes,
        })
    }
}
