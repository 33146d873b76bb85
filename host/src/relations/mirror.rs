//! The relationship index as objects of GRW's own kinds, kept in two
//! caches like any watched kind's, so that subscriptions, event streams and
//! queries take relationship changes through the same machinery as object
//! changes (the durable outbox, its order, ids, retries, dead letters and
//! catch-up after a restart):
//!
//! - `Relation` (`relations.grw.io/v1`): one object per edge, in the
//!   namespace of its `from` end (or of its `to` end when `from` is
//!   cluster-scoped). An edge found is ADDED, one gone is DELETED, one
//!   whose attributes changed is MODIFIED. Labels `relation`, `analyzer`,
//!   `from-kind`, `to-kind`; `spec` `{from, relation, to, analyzer,
//!   attributes}`.
//! - `RelationSet`: one object per analyzed object, analyzer, relation and
//!   direction (`out`: the object is the `from` end), in the object's
//!   namespace, from its first edge of that relation on, while the object
//!   exists: `status.count` and `status.others` (the other ends, with the
//!   edges' attributes). When its last edge goes, the set stays with count
//!   0 (MODIFIED), so "a Service has no Pods any more" is a subscription to
//!   `RelationSet` with `labelSelector: relation=selects,kind=Service` and
//!   `fieldSelector: status.count=0`; "a PVC is bound to another PV" is a
//!   MODIFIED of the PVC's `bound-to` set. When the object is deleted, its
//!   sets are DELETED. Labels `relation`, `analyzer`, `direction`, `kind`.
//!
//! The objects are kept while a subscription uses them (its feed taps one
//! of the two caches): keeping them costs time and memory per edge (see
//! BENCHMARKS.md), which a daemon nobody asks for them should not pay.
//! When a subscription first appears, the objects are written from the
//! index as it stands, as an initial list: what relates then is not news.
//!
//! Names are derived from the identity (`<relation>.<hash>`), so an edge
//! keeps its object across restarts. Resource versions are microseconds
//! since the epoch, increasing: newer than any an earlier run announced.
//!
//! What exists when GRW starts is not news: until the index has first
//! settled (every followed kind synced, the analyses done), changes are
//! written as the initial list. After a restart with `dataDir`, the caches
//! start from what subscribers were last told; the first build is then
//! compared with it like a relist, and what changed while GRW was down
//! comes out (edges found, changed, gone).

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use super::graph::{Edge, NodeKey, SubjectKey};
use crate::gvk::{GRW_GROUP, Gvk};
use crate::store::{ChangeType, ObjectKey, Origin, StoredObject};
use crate::watch::Watch;

/// A set's identity within an analysis: relation and direction (`true`:
/// out of the analyzed object).
type SetKey = (Arc<str>, bool);

pub(super) struct Mirror {
    relations: Arc<Watch>,
    sets: Arc<Watch>,
    /// The origin changes are written with: the initial list (or a relist
    /// after a restart) until the index settled, watch events after.
    origin: Origin,
    /// After a restart: the objects written since, so that the others
    /// (gone while GRW was down) are deleted when the index settles.
    written: Option<HashSet<ObjectKey>>,
    /// The sets of each analysis, kept while its object exists.
    subject_sets: HashMap<SubjectKey, BTreeSet<SetKey>>,
    last_rv: u64,
    /// Whether the objects are kept (a subscription uses them).
    enabled: bool,
}

impl Mirror {
    pub(super) fn new(relations: Arc<Watch>, sets: Arc<Watch>) -> Mirror {
        // A cache the notification engine started from what was announced
        // before a restart has that state's resourceVersion, even if the
        // state is empty.
        let restarted = [&relations, &sets]
            .iter()
            .any(|w| !w.cache.read().resource_version().is_empty());
        Mirror {
            relations,
            sets,
            origin: if restarted {
                Origin::Relist
            } else {
                Origin::Initial
            },
            written: restarted.then(HashSet::new),
            subject_sets: HashMap::new(),
            last_rv: 0,
            enabled: false,
        }
    }

    /// Whether a subscription uses the objects: a notification feed taps
    /// one of the caches.
    pub(super) fn wanted(&self) -> bool {
        self.relations.cache.tap_status().is_some() || self.sets.cache.tap_status().is_some()
    }

    /// Starts keeping the objects, written first from `analyses` (the index
    /// as it stands) as the initial list, unless the caches started from
    /// an earlier run's state, which the index is then compared with.
    pub(super) fn enable<'a>(
        &mut self,
        analyses: impl Iterator<Item = (&'a SubjectKey, &'a [Arc<Edge>])>,
    ) {
        self.enabled = true;
        let origin = self.origin;
        if self.written.is_none() {
            self.origin = Origin::Initial;
        }
        for (subject, edges) in analyses {
            self.update(subject, &[], edges, false);
        }
        self.origin = origin;
        tracing::info!("a subscription uses relationship objects; they are kept from now on");
    }

    pub(super) fn enabled(&self) -> bool {
        self.enabled
    }

    /// Whether the index has settled once.
    pub(super) fn settled(&self) -> bool {
        self.origin == Origin::Watch
    }

    /// The index settled: after a restart, what was not found again is
    /// deleted; from now on, changes are news.
    pub(super) fn settle(&mut self) {
        if let Some(written) = self.written.take().filter(|_| self.enabled) {
            for watch in [self.relations.clone(), self.sets.clone()] {
                let gone: Vec<ObjectKey> = watch
                    .cache
                    .read()
                    .iter_after(None)
                    .map(|o| o.key().clone())
                    .filter(|k| !written.contains(k))
                    .collect();
                for key in gone {
                    self.delete(&watch, &key);
                }
            }
        }
        self.origin = Origin::Watch;
    }

    /// One analysis changed: `before` its edges before, `after` now; `gone`
    /// when its object was deleted (or its analyzer removed).
    pub(super) fn update(
        &mut self,
        subject: &SubjectKey,
        before: &[Arc<Edge>],
        after: &[Arc<Edge>],
        gone: bool,
    ) {
        if !self.enabled {
            return;
        }
        let identity = |e: &Edge| (e.from.clone(), e.relation.clone(), e.to.clone());
        let kept: HashSet<_> = after.iter().map(|e| identity(e)).collect();
        for edge in after {
            let object = relation_object(edge);
            self.put(&self.relations.clone(), object);
        }
        for edge in before {
            if !kept.contains(&identity(edge)) {
                let (namespace, name) = relation_name(edge);
                self.delete(&self.relations.clone(), &ObjectKey::new(&namespace, &name));
            }
        }
        let mut groups: BTreeMap<SetKey, Vec<&Edge>> = BTreeMap::new();
        for edge in after {
            groups
                .entry((edge.relation.clone(), !edge.incoming))
                .or_default()
                .push(edge);
        }
        let mut known = self.subject_sets.remove(subject).unwrap_or_default();
        for edge in before {
            known.insert((edge.relation.clone(), !edge.incoming));
        }
        for (set, edges) in &groups {
            let object = set_object(subject, set, edges);
            self.put(&self.sets.clone(), object);
        }
        for set in known.iter().filter(|s| !groups.contains_key(*s)) {
            if gone {
                let (namespace, name) = set_name(subject, set);
                self.delete(&self.sets.clone(), &ObjectKey::new(&namespace, &name));
            } else {
                let object = set_object(subject, set, &[]);
                self.put(&self.sets.clone(), object);
            }
        }
        if !gone {
            known.extend(groups.into_keys());
            self.subject_sets.insert(subject.clone(), known);
        }
    }

    fn next_rv(&mut self) -> String {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_micros() as u64);
        self.last_rv = (self.last_rv + 1).max(now);
        self.last_rv.to_string()
    }

    /// Writes an object unless the cache holds the same content.
    fn put(&mut self, watch: &Arc<Watch>, mut object: Value) {
        let namespace = object["metadata"]["namespace"].as_str().unwrap_or("");
        let name = object["metadata"]["name"].as_str().unwrap_or("");
        let key = ObjectKey::new(namespace, name);
        if let Some(written) = &mut self.written {
            written.insert(key.clone());
        }
        let same = watch.cache.read().get(&key).is_some_and(|cached| {
            // Decompressed once for both parts.
            let json = cached.json();
            ["spec", "status"].iter().all(|part| {
                let held: Value = cached
                    .field(&json, &[*part])
                    .and_then(|bytes| serde_json::from_slice(bytes).ok())
                    .unwrap_or(Value::Null);
                held == object[*part]
            })
        });
        if same {
            return;
        }
        object["metadata"]["resourceVersion"] = Value::String(self.next_rv());
        let gvk = watch.key.gvk.clone();
        match StoredObject::from_value(object, &gvk, false) {
            Ok(object) => {
                watch.cache.apply(ChangeType::Modified, object, self.origin);
            }
            Err(e) => {
                tracing::warn!(gvk = %gvk, error = %e, "a relation object could not be stored")
            }
        }
    }

    fn delete(&mut self, watch: &Arc<Watch>, key: &ObjectKey) {
        let gvk: &Gvk = &watch.key.gvk;
        let last = watch
            .cache
            .read()
            .get(key)
            .and_then(|o| StoredObject::from_json(&o.json(), gvk).ok());
        if let Some(last) = last {
            watch.cache.apply(ChangeType::Deleted, last, self.origin);
        }
    }
}

/// The first 16 bytes of a SHA-256, in hex.
fn digest(text: &str) -> String {
    Sha256::digest(text.as_bytes())[..16]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A name part from a relation: what a Kubernetes name allows of it.
fn name_part(relation: &str) -> String {
    let part: String = relation
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .take(40)
        .collect();
    let part = part.trim_matches('-');
    if part.is_empty() {
        "relation".into()
    } else {
        part.to_string()
    }
}

fn end(node: &NodeKey) -> Value {
    json!({
        "group": &*node.group,
        "kind": &*node.kind,
        "namespace": &*node.namespace,
        "name": &*node.name,
    })
}

fn attributes(edge: &Edge) -> Value {
    Value::Object(
        edge.attributes
            .iter()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect::<Map<String, Value>>(),
    )
}

/// Namespace and name of an edge's `Relation`.
fn relation_name(edge: &Edge) -> (String, String) {
    let namespace = if edge.from.namespace.is_empty() {
        &edge.to.namespace
    } else {
        &edge.from.namespace
    };
    let id = format!(
        "{}|{}|{}|{}",
        edge.from, edge.relation, edge.to, edge.analyzer
    );
    (
        namespace.to_string(),
        format!("{}.{}", name_part(&edge.relation), digest(&id)),
    )
}

fn relation_object(edge: &Edge) -> Value {
    let (namespace, name) = relation_name(edge);
    json!({
        "apiVersion": format!("{GRW_GROUP}/v1"),
        "kind": "Relation",
        "metadata": {
            "namespace": namespace,
            "name": name,
            "uid": uid(&name, &namespace),
            "labels": {
                "relation": &*edge.relation,
                "analyzer": &*edge.analyzer,
                "from-kind": &*edge.from.kind,
                "to-kind": &*edge.to.kind,
            },
        },
        "spec": {
            "from": end(&edge.from),
            "relation": &*edge.relation,
            "to": end(&edge.to),
            "analyzer": &*edge.analyzer,
            "attributes": attributes(edge),
        },
    })
}

/// Namespace and name of an analysis's `RelationSet`.
fn set_name(subject: &SubjectKey, (relation, out): &SetKey) -> (String, String) {
    let id = format!("{}|{}|{}|{}", subject.node, subject.analyzer, relation, out);
    (
        subject.node.namespace.to_string(),
        format!("{}.{}", name_part(relation), digest(&id)),
    )
}

fn set_object(subject: &SubjectKey, set: &SetKey, edges: &[&Edge]) -> Value {
    let (namespace, name) = set_name(subject, set);
    let (relation, out) = set;
    let mut others: Vec<Value> = edges
        .iter()
        .map(|e| {
            let mut other = end(if *out { &e.to } else { &e.from });
            other["attributes"] = attributes(e);
            other
        })
        .collect();
    others.sort_by_key(|o| o.to_string());
    json!({
        "apiVersion": format!("{GRW_GROUP}/v1"),
        "kind": "RelationSet",
        "metadata": {
            "namespace": namespace,
            "name": name,
            "uid": uid(&name, &namespace),
            "labels": {
                "relation": &**relation,
                "analyzer": &*subject.analyzer,
                "direction": if *out { "out" } else { "in" },
                "kind": &*subject.node.kind,
            },
        },
        "spec": {
            "object": end(&subject.node),
            "relation": &**relation,
            "direction": if *out { "out" } else { "in" },
            "analyzer": &*subject.analyzer,
        },
        "status": {
            "count": others.len(),
            "others": others,
        },
    })
}

/// A stable uid in the usual 8-4-4-4-12 form.
fn uid(name: &str, namespace: &str) -> String {
    let hex = digest(&format!("{namespace}/{name}"));
    format!(
        "{}-{}-{}-{}-{}",
        &hex[..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}
