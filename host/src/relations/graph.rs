//! The relationship index: edges `(from, relation, to, analyzer)`,
//! reachable from either end, grouped by the analysis that found them
//! (a *subject*: one analyzer on one object), and the cache lookups each
//! analysis made, indexed so that a change finds the analyses it may
//! answer differently.
//!
//! Nodes are identified by group, kind, namespace and name, not version:
//! an edge to `apps/v1` Deployment `shop/web` and one to `apps/v1beta2`
//! Deployment `shop/web` meet at the same node. Nodes and the few strings
//! edges repeat (groups, kinds, namespaces, relations, attributes) are
//! shared, so an edge costs a few pointers.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;
use std::time::SystemTime;

use grw_selector::LabelSelector;
use smallvec::SmallVec;

use crate::store::StoredObject;

/// One object, as an end of edges: it need not exist.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeKey {
    /// API group; `""` for the core group.
    pub group: Arc<str>,
    /// Kind.
    pub kind: Arc<str>,
    /// Namespace; `""` for cluster-scoped objects.
    pub namespace: Arc<str>,
    /// Name.
    pub name: Arc<str>,
}

/// A shared node.
pub type Node = Arc<NodeKey>;

/// `group/Kind namespace/name`, with `core` for the core group and `-` for
/// no namespace: `apps/Deployment shop/web`, `core/Node -/node-1`.
impl fmt::Display for NodeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let group = if self.group.is_empty() {
            "core"
        } else {
            &self.group
        };
        let namespace = if self.namespace.is_empty() {
            "-"
        } else {
            &self.namespace
        };
        write!(f, "{group}/{} {namespace}/{}", self.kind, self.name)
    }
}

/// One relationship between two objects.
#[derive(Debug, PartialEq, Eq)]
pub struct Edge {
    /// Where it starts.
    pub from: Node,
    /// What it is, e.g. `owns`.
    pub relation: Arc<str>,
    /// Where it ends.
    pub to: Node,
    /// The analyzer that found it.
    pub analyzer: Arc<str>,
    /// Facts about it, in the order the analyzer gave them.
    pub attributes: Box<[(Arc<str>, Arc<str>)]>,
    /// Found analyzing `to` rather than `from`.
    pub incoming: bool,
}

impl Edge {
    /// The object whose analysis found this edge.
    pub fn subject(&self) -> &Node {
        if self.incoming { &self.to } else { &self.from }
    }
}

/// An edge an analysis found, before it is indexed.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Found {
    /// The relation.
    pub relation: String,
    /// From the analyzed object to `other` (`false`: back).
    pub outgoing: bool,
    /// The other end.
    pub other: NodeKey,
    /// Facts about it.
    pub attributes: Vec<(String, String)>,
}

/// A group and kind: which objects a lookup is about, in any version.
pub type KindKey = (Arc<str>, Arc<str>);

/// One cache lookup an analysis made, whose answer it depends on.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Lookup {
    /// One object by name, or the content of one object a list or
    /// owner lookup returned: any change of it matters.
    Get(NodeKey),
    /// Objects of a kind in a namespace (`""`: all) matching a selector:
    /// an object entering or leaving the set matters.
    List {
        /// The kind.
        kind: KindKey,
        /// The namespace, `""` for all.
        namespace: Arc<str>,
        /// The selector.
        selector: Arc<LabelSelector>,
    },
    /// Objects of a kind with an owner reference to a uid: an object
    /// gaining or losing that reference matters.
    OwnedBy {
        /// The kind.
        kind: KindKey,
        /// The owner's uid.
        uid: Arc<str>,
    },
}

/// One analysis: an analyzer and the object it analyzed.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SubjectKey {
    /// The analyzer.
    pub analyzer: Arc<str>,
    /// The analyzed object.
    pub node: Node,
}

/// What one analysis found and asked: one per analyzer and object, so
/// boxed slices rather than vectors, 16 bytes smaller in the map's slot.
struct Subject {
    edges: Box<[Arc<Edge>]>,
    lookups: Box<[Lookup]>,
    /// Why the last call failed, when its edges are the last good ones.
    stale: Option<Arc<str>>,
}

/// What the index holds for one analyzer.
#[derive(Debug, Clone, Default, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AnalyzerCounts {
    /// Objects analyzed whose edges are held.
    pub objects: usize,
    /// Edges held.
    pub edges: usize,
    /// Objects whose last analysis failed; their last good edges are held.
    pub stale_objects: usize,
    /// Calls made.
    pub analyses: u64,
    /// Calls that failed.
    pub failures: u64,
    /// When the last call answered.
    #[serde(serialize_with = "serialize_time")]
    pub last_analysis_time: Option<SystemTime>,
}

fn serialize_time<S: serde::Serializer>(t: &Option<SystemTime>, s: S) -> Result<S::Ok, S::Error> {
    match t.and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok()) {
        Some(d) => s.serialize_str(&crate::time::rfc3339(d)),
        None => s.serialize_none(),
    }
}

/// The analyses that listed a kind in one namespace, with their selectors.
type ListLookups = HashMap<SubjectKey, Vec<Arc<LabelSelector>>>;

/// The edges starting (or ending) at one node: held inline when there is
/// one, as for a Pod's owner, which saves an allocation per Pod.
type NodeEdges = SmallVec<[Arc<Edge>; 1]>;

/// Which way to follow edges from a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Edges starting at the node.
    Out,
    /// Edges ending at the node.
    In,
    /// Both.
    Both,
}

/// The index.
#[derive(Default)]
pub struct Graph {
    symbols: HashSet<Arc<str>>,
    out: HashMap<Node, NodeEdges>,
    inc: HashMap<Node, NodeEdges>,
    subjects: HashMap<SubjectKey, Subject>,
    gets: HashMap<NodeKey, HashSet<SubjectKey>>,
    /// By kind and namespace (`""`: all namespaces).
    lists: HashMap<(KindKey, Arc<str>), ListLookups>,
    /// By kind and owner uid.
    owned: HashMap<(KindKey, Arc<str>), HashSet<SubjectKey>>,
    counts: HashMap<Arc<str>, AnalyzerCounts>,
}

impl Graph {
    /// A shared copy of a string edges repeat.
    pub fn symbol(&mut self, s: &str) -> Arc<str> {
        if let Some(existing) = self.symbols.get(s) {
            return existing.clone();
        }
        let symbol: Arc<str> = s.into();
        self.symbols.insert(symbol.clone());
        symbol
    }

    /// Makes room for `analyzers` to analyze `objects` objects each, less
    /// the analyses they hold already (a pass again over the same objects
    /// replaces them), so a pass over many objects grows the table of
    /// analyses once.
    pub fn reserve_analyses(&mut self, analyzers: &[&str], objects: usize) {
        let held: usize = analyzers
            .iter()
            .filter_map(|a| self.counts.get(*a))
            .map(|c| c.objects)
            .sum();
        self.subjects
            .reserve((objects * analyzers.len()).saturating_sub(held));
    }

    /// A node key with shared group, kind and namespace.
    pub fn key(&mut self, group: &str, kind: &str, namespace: &str, name: &str) -> NodeKey {
        NodeKey {
            group: self.symbol(group),
            kind: self.symbol(kind),
            namespace: self.symbol(namespace),
            name: name.into(),
        }
    }

    /// The node of `key`, shared with the edges that already end there.
    fn node(&self, key: NodeKey) -> Node {
        self.out
            .get_key_value(&key)
            .or_else(|| self.inc.get_key_value(&key))
            .map(|(node, _)| node.clone())
            .unwrap_or_else(|| Arc::new(key))
    }

    /// Replaces what `analyzer` found for `subject` with `found`, and the
    /// lookups it depends on with `lookups`. Returns the edges it had before
    /// and the ones it has now.
    pub fn replace(
        &mut self,
        analyzer: &str,
        subject: NodeKey,
        found: Vec<Found>,
        lookups: Vec<Lookup>,
        at: SystemTime,
    ) -> (Vec<Arc<Edge>>, Vec<Arc<Edge>>) {
        let analyzer = self.symbol(analyzer);
        let subject = self.node(subject);
        let key = SubjectKey {
            analyzer: analyzer.clone(),
            node: subject.clone(),
        };
        let before = self.remove_subject(&key);
        let mut seen = HashSet::new();
        let mut edges = Vec::with_capacity(found.len());
        for f in found {
            if !seen.insert(f.clone()) {
                continue;
            }
            let other = self.node(f.other);
            let (from, to) = if f.outgoing {
                (subject.clone(), other)
            } else {
                (other, subject.clone())
            };
            let attributes = f
                .attributes
                .iter()
                .map(|(k, v)| (self.symbol(k), self.symbol(v)))
                .collect();
            let edge = Arc::new(Edge {
                from: from.clone(),
                relation: self.symbol(&f.relation),
                to: to.clone(),
                analyzer: analyzer.clone(),
                attributes,
                incoming: !f.outgoing,
            });
            self.out.entry(from).or_default().push(edge.clone());
            self.inc.entry(to).or_default().push(edge.clone());
            edges.push(edge);
        }
        for lookup in &lookups {
            self.depend(&key, lookup);
        }
        let counts = self.counts.entry(analyzer).or_default();
        counts.objects += 1;
        counts.edges += edges.len();
        counts.analyses += 1;
        counts.last_analysis_time = Some(at);
        self.subjects.insert(
            key,
            Subject {
                edges: edges.as_slice().into(),
                lookups: lookups.into_boxed_slice(),
                stale: None,
            },
        );
        (before, edges)
    }

    /// Records that `analyzer` failed on `subject`: its last good edges
    /// stay, marked stale, until an analysis answers again.
    pub fn failed(&mut self, analyzer: &str, subject: NodeKey, error: &str) {
        let analyzer = self.symbol(analyzer);
        let error: Arc<str> = error.into();
        let counts = self.counts.entry(analyzer.clone()).or_default();
        counts.analyses += 1;
        counts.failures += 1;
        if let Some(held) = self.subjects.get_mut(&SubjectKey {
            analyzer: analyzer.clone(),
            node: Arc::new(subject.clone()),
        }) {
            if held.stale.is_none() {
                counts.stale_objects += 1;
            }
            held.stale = Some(error);
            return;
        }
        // Never answered for it: nothing to keep, but the failure shows.
        counts.objects += 1;
        counts.stale_objects += 1;
        let node = self.node(subject);
        self.subjects.insert(
            SubjectKey { analyzer, node },
            Subject {
                edges: Box::default(),
                lookups: Box::default(),
                stale: Some(error),
            },
        );
    }

    /// Removes what `analyzer` found for `subject` (the object is gone);
    /// returns the edges removed.
    pub fn remove(&mut self, analyzer: &str, subject: &NodeKey) -> Vec<Arc<Edge>> {
        let Some(analyzer) = self.symbols.get(analyzer).cloned() else {
            return Vec::new();
        };
        self.remove_subject(&SubjectKey {
            analyzer,
            node: Arc::new(subject.clone()),
        })
    }

    /// Removes everything `analyzer` found; returns each analysis removed
    /// with its edges.
    pub fn remove_analyzer(&mut self, analyzer: &str) -> Vec<(SubjectKey, Vec<Arc<Edge>>)> {
        let removed = self
            .subjects_of(analyzer)
            .into_iter()
            .map(|key| {
                let edges = self.remove_subject(&key);
                (key, edges)
            })
            .collect();
        self.counts.remove(analyzer);
        removed
    }

    /// Every analysis with the edges it found.
    pub fn analyses(&self) -> impl Iterator<Item = (&SubjectKey, &[Arc<Edge>])> {
        self.subjects.iter().map(|(k, s)| (k, &*s.edges))
    }

    /// The analyses of `analyzer`.
    pub fn subjects_of(&self, analyzer: &str) -> Vec<SubjectKey> {
        self.subjects
            .keys()
            .filter(|k| &*k.analyzer == analyzer)
            .cloned()
            .collect()
    }

    fn remove_subject(&mut self, key: &SubjectKey) -> Vec<Arc<Edge>> {
        let Some(held) = self.subjects.remove(key) else {
            return Vec::new();
        };
        for lookup in &held.lookups {
            self.forget(key, lookup);
        }
        if let Some(counts) = self.counts.get_mut(&key.analyzer) {
            counts.objects -= 1;
            counts.edges -= held.edges.len();
            if held.stale.is_some() {
                counts.stale_objects -= 1;
            }
        }
        for edge in &held.edges {
            detach(&mut self.out, &edge.from, edge);
            detach(&mut self.inc, &edge.to, edge);
        }
        held.edges.into_vec()
    }

    fn depend(&mut self, key: &SubjectKey, lookup: &Lookup) {
        match lookup {
            Lookup::Get(node) => {
                self.gets
                    .entry(node.clone())
                    .or_default()
                    .insert(key.clone());
            }
            Lookup::List {
                kind,
                namespace,
                selector,
            } => self
                .lists
                .entry((kind.clone(), namespace.clone()))
                .or_default()
                .entry(key.clone())
                .or_default()
                .push(selector.clone()),
            Lookup::OwnedBy { kind, uid } => {
                self.owned
                    .entry((kind.clone(), uid.clone()))
                    .or_default()
                    .insert(key.clone());
            }
        }
    }

    fn forget(&mut self, key: &SubjectKey, lookup: &Lookup) {
        match lookup {
            Lookup::Get(node) => remove_from(&mut self.gets, node, key),
            Lookup::List {
                kind, namespace, ..
            } => {
                let bucket = (kind.clone(), namespace.clone());
                if let Some(subjects) = self.lists.get_mut(&bucket) {
                    subjects.remove(key);
                    if subjects.is_empty() {
                        self.lists.remove(&bucket);
                    }
                }
            }
            Lookup::OwnedBy { kind, uid } => {
                remove_from(&mut self.owned, &(kind.clone(), uid.clone()), key)
            }
        }
    }

    /// The analyses whose lookups a change of one object may answer
    /// differently: `old` is its state before (none when added), `new`
    /// after (none when deleted).
    pub fn affected(
        &self,
        kind: &KindKey,
        old: Option<&StoredObject>,
        new: Option<&StoredObject>,
    ) -> HashSet<SubjectKey> {
        let mut affected = HashSet::new();
        let Some(any) = new.or(old) else {
            return affected;
        };
        let node = NodeKey {
            group: kind.0.clone(),
            kind: kind.1.clone(),
            namespace: any.namespace().into(),
            name: any.name().into(),
        };
        if let Some(subjects) = self.gets.get(&node) {
            affected.extend(subjects.iter().cloned());
        }
        for namespace in [any.namespace(), ""] {
            let Some(subjects) = self.lists.get(&(kind.clone(), Arc::from(namespace))) else {
                continue;
            };
            for (subject, selectors) in subjects {
                let entered_or_left = selectors.iter().any(|s| {
                    let matched =
                        |o: Option<&StoredObject>| o.is_some_and(|o| s.matches(|k| o.label(k)));
                    matched(old) != matched(new)
                });
                if entered_or_left {
                    affected.insert(subject.clone());
                }
            }
            if namespace.is_empty() {
                break;
            }
        }
        let owners = |o: Option<&StoredObject>| -> HashSet<String> {
            o.map(|o| o.owner_uids().map(str::to_string).collect())
                .unwrap_or_default()
        };
        let (before, after) = (owners(old), owners(new));
        for uid in before.symmetric_difference(&after) {
            if let Some(subjects) = self.owned.get(&(kind.clone(), Arc::from(uid.as_str()))) {
                affected.extend(subjects.iter().cloned());
            }
        }
        affected
    }

    /// The analyses with a lookup of this kind.
    pub fn depending_on_kind(&self, kind: &KindKey) -> HashSet<SubjectKey> {
        let mut found = HashSet::new();
        for (node, subjects) in &self.gets {
            if node.group == kind.0 && node.kind == kind.1 {
                found.extend(subjects.iter().cloned());
            }
        }
        for ((k, _), subjects) in &self.lists {
            if k == kind {
                found.extend(subjects.keys().cloned());
            }
        }
        for ((k, _), subjects) in &self.owned {
            if k == kind {
                found.extend(subjects.iter().cloned());
            }
        }
        found
    }

    /// Why the last analysis of `subject` by `analyzer` failed, if it did.
    pub fn stale(&self, analyzer: &Arc<str>, subject: &Node) -> Option<Arc<str>> {
        self.subjects
            .get(&SubjectKey {
                analyzer: analyzer.clone(),
                node: subject.clone(),
            })?
            .stale
            .clone()
    }

    /// What the index holds for `analyzer`.
    pub fn counts(&self, analyzer: &str) -> Option<AnalyzerCounts> {
        self.counts.get(analyzer).cloned()
    }

    /// The edges starting at a node.
    pub fn outgoing(&self, node: &NodeKey) -> &[Arc<Edge>] {
        self.out.get(node).map_or(&[], |edges| edges.as_slice())
    }

    /// Every edge, in no particular order.
    pub fn edges(&self) -> impl Iterator<Item = &Arc<Edge>> {
        self.out.values().flatten()
    }

    /// The edges reachable from `root` in `direction` within `depth` steps
    /// whose relation is one of `relations` (empty: any), and the nodes
    /// they reach, `root` first. Stops after `limit` edges; the flag says
    /// whether it did.
    pub fn around(
        &self,
        root: &NodeKey,
        direction: Direction,
        depth: u32,
        relations: &[String],
        limit: usize,
    ) -> (Vec<NodeKey>, Vec<Arc<Edge>>, bool) {
        self.around_visible(root, direction, depth, relations, limit, &|_| true)
    }

    /// [`Graph::around`] through the nodes `visible` admits only: an edge
    /// to any other is left out, and so is what lies only beyond it. The
    /// root is always visible.
    pub fn around_visible(
        &self,
        root: &NodeKey,
        direction: Direction,
        depth: u32,
        relations: &[String],
        limit: usize,
        visible: &dyn Fn(&NodeKey) -> bool,
    ) -> (Vec<NodeKey>, Vec<Arc<Edge>>, bool) {
        let mut nodes = vec![root.clone()];
        let mut seen_nodes: HashSet<NodeKey> = HashSet::from([root.clone()]);
        let mut seen_edges: HashSet<*const Edge> = HashSet::new();
        let mut edges = Vec::new();
        let mut frontier = vec![root.clone()];
        let wanted =
            |e: &Edge| relations.is_empty() || relations.iter().any(|r| **r == *e.relation);
        for _ in 0..depth {
            let mut next = Vec::new();
            for node in &frontier {
                let outgoing = matches!(direction, Direction::Out | Direction::Both)
                    .then(|| self.out.get(node))
                    .flatten()
                    .into_iter()
                    .flatten()
                    .map(|e| (e, &e.to));
                let incoming = matches!(direction, Direction::In | Direction::Both)
                    .then(|| self.inc.get(node))
                    .flatten()
                    .into_iter()
                    .flatten()
                    .map(|e| (e, &e.from));
                for (edge, other) in outgoing.chain(incoming) {
                    if !wanted(edge)
                        || !(seen_nodes.contains(&**other) || visible(other))
                        || !seen_edges.insert(Arc::as_ptr(edge))
                    {
                        continue;
                    }
                    if edges.len() == limit {
                        return (nodes, edges, true);
                    }
                    edges.push(edge.clone());
                    if seen_nodes.insert((**other).clone()) {
                        nodes.push((**other).clone());
                        next.push((**other).clone());
                    }
                }
            }
            if next.is_empty() {
                break;
            }
            frontier = next;
        }
        (nodes, edges, false)
    }
}

fn detach(map: &mut HashMap<Node, NodeEdges>, node: &Node, edge: &Arc<Edge>) {
    if let Some(edges) = map.get_mut(node) {
        if let Some(i) = edges.iter().position(|e| Arc::ptr_eq(e, edge)) {
            edges.swap_remove(i);
        }
        if edges.is_empty() {
            map.remove(node);
        }
    }
}

fn remove_from<K: std::hash::Hash + Eq>(
    map: &mut HashMap<K, HashSet<SubjectKey>>,
    at: &K,
    key: &SubjectKey,
) {
    if let Some(subjects) = map.get_mut(at) {
        subjects.remove(key);
        if subjects.is_empty() {
            map.remove(at);
        }
    }
}

#[cfg(test)]
mod tests;
