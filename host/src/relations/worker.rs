//! The worker: one thread that runs every analysis, in the order changes
//! arrive, and keeps the index ([`super::Graph`]) and its mirror of GRW's
//! own kinds current.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant, SystemTime};

use parking_lot::Mutex;
use tokio::sync::{mpsc, watch};

use super::feed::{Queue, Work};
use super::graph::{self, Edge, KindKey, Lookup, NodeKey, SubjectKey};
use super::mirror::Mirror;
use super::reader::{Asked, Env, RawLookup, Reader};
use super::{Relations, SETTLE_AFTER};
use crate::config::WatchOptions;
use crate::gvk::{Gvk, ResourceInfo, is_grw_kind};
use crate::plugin::{Plugin, Relationship};
use crate::store::{Change, ChangeType, ObjectKey, StoredObject};
use crate::watch::Watch;

/// Everything the worker waits on.
pub(super) struct Inbox {
    /// Ticks when the serving plugins change.
    pub(super) plugins: watch::Receiver<u64>,
    /// Ticks when discovery is read again.
    pub(super) discovery: watch::Receiver<u64>,
    /// Each watch GRW creates, once.
    pub(super) new_watches: mpsc::UnboundedReceiver<Arc<Watch>>,
    /// The feeds' changes and snapshots.
    pub(super) work: mpsc::Receiver<Work>,
}

/// What the worker does next.
enum Next {
    Plugins,
    Discovery,
    NewWatch(Arc<Watch>),
    Work(Work),
    /// Nothing came for a while.
    Idle,
    /// The daemon is going away.
    Closed,
}

impl Inbox {
    /// The next thing to do, signals first; [`Next::Idle`] after `idle`
    /// without any.
    async fn next(&mut self, idle: Duration) -> Next {
        tokio::select! {
            biased;
            changed = self.plugins.changed() => match changed {
                Ok(()) => Next::Plugins,
                Err(_) => Next::Closed,
            },
            changed = self.discovery.changed() => match changed {
                Ok(()) => Next::Discovery,
                Err(_) => Next::Closed,
            },
            watch = self.new_watches.recv() => watch.map_or(Next::Closed, Next::NewWatch),
            work = self.work.recv() => work.map_or(Next::Closed, Next::Work),
            () = tokio::time::sleep(idle) => Next::Idle,
        }
    }
}

/// The runtime the inbox is waited on: the thread's own, which the
/// daemon's shutting down (at exit) leaves alone.
fn inbox_runtime() -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
    {
        Ok(runtime) => Some(runtime),
        Err(e) => {
            tracing::error!(error = %e, "the relations worker cannot start; no relationships are analyzed");
            None
        }
    }
}

/// The worker thread's state.
pub(super) struct Worker {
    relations: Arc<Relations>,
    /// Where the feeds of followed kinds put their changes.
    queue: Queue,
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
    pub(super) fn new(relations: Arc<Relations>, queue: Queue, mirror: Mirror) -> Worker {
        Worker {
            relations,
            queue,
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

    /// Runs on the worker's own thread until the daemon goes away: the
    /// plugins and discovery as they are, then each thing that comes, in
    /// order.
    pub(super) fn run(mut self, mut inbox: Inbox) {
        // Watches the worker starts are tasks of the daemon's runtime...
        let daemon = self.queue.runtime().clone();
        let _entered = daemon.enter();
        let Some(runtime) = inbox_runtime() else {
            return;
        };
        self.handle_plugins(&mut inbox);
        self.handle_discovery(&mut inbox);
        loop {
            match runtime.block_on(inbox.next(SETTLE_AFTER / 2)) {
                Next::Closed => return,
                next => self.handle(next, &mut inbox),
            }
            self.after_each();
        }
    }

    /// Does one thing that came.
    fn handle(&mut self, next: Next, inbox: &mut Inbox) {
        match next {
            Next::Plugins => self.handle_plugins(inbox),
            Next::Discovery => self.handle_discovery(inbox),
            Next::NewWatch(watch) => {
                self.new_watch(&watch);
                self.relations.waiting.fetch_sub(1, Ordering::SeqCst);
            }
            Next::Work(work) => {
                match work {
                    Work::Snapshot(gvk, objects) => self.snapshot(&gvk, &objects),
                    Work::Change(gvk, change) => self.change(&gvk, &change),
                    Work::Unfollowed(gvk) => self.unfollowed(&gvk),
                }
                self.relations.waiting.fetch_sub(1, Ordering::SeqCst);
            }
            Next::Idle | Next::Closed => {}
        }
    }

    /// After each thing done, or a while without any: the mirror starts
    /// once it is wanted, and the index settles once it is ready.
    fn after_each(&mut self) {
        if !self.mirror.enabled() && self.mirror.wanted() {
            let graph = self.relations.graph.read();
            self.mirror.enable(graph.analyses());
        }
        if !self.mirror.settled() {
            self.try_to_settle();
        }
    }

    fn handle_plugins(&mut self, inbox: &mut Inbox) {
        let generation = *inbox.plugins.borrow_and_update();
        self.plugins_changed();
        self.relations
            .plugins_seen
            .store(generation, Ordering::SeqCst);
    }

    fn handle_discovery(&mut self, inbox: &mut Inbox) {
        let generation = *inbox.discovery.borrow_and_update();
        self.discovery_changed();
        self.relations
            .discovery_seen
            .store(generation, Ordering::SeqCst);
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

    /// One analysis changed (see [`Mirror::update`]): the mirror follows,
    /// and once the index has settled, whoever listens is told which edges
    /// appeared or went.
    fn edges_changed(
        &mut self,
        subject: &SubjectKey,
        before: &[Arc<Edge>],
        after: &[Arc<Edge>],
        gone: bool,
    ) {
        self.mirror.update(subject, before, after, gone);
        let Some(hook) = self.relations.on_edges.get() else {
            return;
        };
        if !self.relations.settled.load(Ordering::SeqCst) {
            return;
        }
        let identity = |e: &Edge| (e.from.clone(), e.relation.clone(), e.to.clone());
        let had: HashSet<_> = before.iter().map(|e| identity(e)).collect();
        let has: HashSet<_> = after.iter().map(|e| identity(e)).collect();
        let mut changes: Vec<(Arc<Edge>, bool)> = after
            .iter()
            .filter(|e| !had.contains(&identity(e)))
            .map(|e| (e.clone(), true))
            .collect();
        changes.extend(
            before
                .iter()
                .filter(|e| !has.contains(&identity(e)))
                .map(|e| (e.clone(), false)),
        );
        if !changes.is_empty() {
            hook(changes);
        }
    }

    /// Removes an analysis (its object is gone, or its analyzer).
    fn remove(&mut self, analyzer: &Arc<str>, node: &NodeKey) {
        let removed = self.relations.graph.write().remove(analyzer, node);
        let subject = SubjectKey {
            analyzer: analyzer.clone(),
            node: Arc::new(node.clone()),
        };
        self.edges_changed(&subject, &removed, &[], true);
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
                self.edges_changed(&subject, &edges, &[], true);
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

    /// Makes sure a kind an analyzer asks for reaches the worker: its
    /// cluster-wide watch, started if there is none, and kept for good
    /// (also one a caller's query started). Such a watch is started on
    /// demand, not configured: readiness does not wait for it, so a kind
    /// GRW may not list (a sidecar's namespaced Role) holds nothing up.
    fn feed(&self, resource: &ResourceInfo) {
        let watch = self
            .env()
            .watches
            .ensure(resource, WatchOptions::default(), true);
        self.follow(watch, &resource.gvk);
    }

    /// Feeds `watch`'s changes to the worker, unless its kind is fed.
    fn follow(&self, watch: Arc<Watch>, gvk: &Gvk) {
        let key = (gvk.group.clone(), gvk.kind.clone());
        {
            let mut fed = self.env().fed.lock();
            if fed.contains_key(&key) {
                return;
            }
            fed.insert(key, gvk.clone());
        }
        tracing::info!(gvk = %gvk, removed_when_idle = watch.caller_made(), "relations follow this kind");
        self.queue.follow(watch, gvk.clone());
    }

    /// A new cluster-wide watch, of a kind an analyzer may take. One a
    /// caller's query started is followed as long as it lasts, not kept
    /// for the analyzers: an analyzer of every kind (the built-in
    /// `ownership`) would otherwise keep every kind any query ever read,
    /// and the watches callers start would never be removed.
    fn new_watch(&self, watch: &Arc<Watch>) {
        if watch.key.options != WatchOptions::default() || is_grw_kind(&watch.key.gvk) {
            return;
        }
        let wanted = self
            .analyzers
            .values()
            .any(|a| a.interest.wants_kind(&watch.key.gvk));
        match (wanted, watch.caller_made()) {
            (false, _) => {}
            (true, true) => self.follow(watch.clone(), &watch.resource.gvk),
            (true, false) => self.feed(&watch.resource),
        }
    }

    /// A followed watch was removed: the kind's subjects lose their edges
    /// (analyses that looked them up are made again), and the kind is
    /// followed again when a watch of it comes back. If one came back
    /// already, it is followed instead.
    fn unfollowed(&mut self, gvk: &Gvk) {
        if let Some(current) = self.env().watch(gvk) {
            tracing::info!(gvk = %gvk, "the kind is watched again; relations follow its new watch");
            self.queue.follow(current, gvk.clone());
            return;
        }
        tracing::info!(gvk = %gvk, "the kind's watch was removed; relations drop what they found about its objects");
        self.snapshot(gvk, &[]);
        self.snapshotted.remove(gvk);
        let kind = (gvk.group.clone(), gvk.kind.clone());
        self.env().fed.lock().remove(&kind);
        self.env()
            .analyzed
            .send_if_modified(|analyzed| analyzed.remove(&kind));
    }

    fn discovery_changed(&mut self) {
        self.scopes.clear();
        let unknown: Vec<(String, String)> = self.env().unknown.lock().drain().collect();
        let mut found = false;
        for (group, kind) in unknown {
            match self.env().resource(&group, &kind, "") {
                Some(resource) => {
                    tracing::info!(gvk = %resource.gvk, "a kind analyzers asked for is served now");
                    self.feed(&resource);
                    found = true;
                }
                // Still unknown: asked for again at the next change.
                None => {
                    self.env().unknown.lock().insert((group, kind));
                }
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
        // The objects' own keys, shared with the cache: a node key per
        // object, four strings each, would hold hundreds of megabytes at a
        // million objects for as long as the pass takes.
        let present: HashSet<ObjectKey> = objects.iter().map(|o| o.key().clone()).collect();
        // Every analysis of the pass keeps an entry: the index's table of
        // them grows once, not by doubling, which at a million objects
        // held the old table and the new one at once.
        let names: Vec<&str> = analyzers.iter().map(|a| &*a.name).collect();
        self.relations
            .graph
            .write()
            .reserve_analyses(&names, objects.len());
        for analyzer in &analyzers {
            for object in objects {
                self.analyze(analyzer, gvk, object);
            }
            self.drop_unless(analyzer, |node| {
                (node.group != kind.0 || node.kind != kind.1)
                    || present.contains(&ObjectKey::new(&node.namespace, &node.name))
            });
        }
        let depending = self.relations.graph.read().depending_on_kind(&kind);
        self.reanalyze(depending, &HashSet::new());
        let kind = (gvk.group.clone(), gvk.kind.clone());
        self.env()
            .analyzed
            .send_if_modified(|analyzed| analyzed.insert(kind));
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
                let error = crate::error::Report(&error).to_string();
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
        self.edges_changed(&subject, &before, &after, false);
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
