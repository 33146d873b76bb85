//! Queries over one cache: conditions, planning (which index to start from),
//! and paging.
//!
//! A query picks the smallest candidate set among the indexes its conditions
//! can use (uid, namespace/name, label `=`/`in`/exists, owner, namespace,
//! name text), walks it in key order and checks every condition on each
//! candidate, which intersects it with the other conditions; the other
//! label requirements (`!=`, `notin`, `!key`, `>`, `<`) only filter.
//! Candidates come in key order whatever the index, so a continue token is
//! simply the last key returned.

mod name;
mod owners;
mod paging;
pub mod pool;
pub mod scan;

use std::collections::BTreeSet;
use std::ops::Bound;
use std::sync::Arc;

use serde_json::Value;

pub use crate::selectors::{
    FieldSelector, FieldSelectorError, LabelSelector, Requirement, SelectorError,
};
pub use name::{MAX_NAME_TEXT, NameContains, NameTextError};
pub use owners::{MAX_DESCENDANTS, descendants};
pub use paging::{ContinueToken, InvalidContinue};
pub use pool::{Budget, MatchTooCostly, OverBudget, PoolError, PoolSettings, QueryPool, Stopped};

use crate::cel::{Condition, EvalError};
use crate::config::{NotifierFilter, PairConditions};
use crate::selectors::field::{FieldOp, FieldValue};
use crate::store::{CacheView, FieldPaths, ObjectKey, StoredObject};

/// Conditions on the objects of one kind; all must hold.
#[derive(Debug, Clone, Default)]
pub struct Query {
    /// Only this namespace.
    pub namespace: Option<String>,
    /// Only this name.
    pub name: Option<String>,
    /// Only this uid.
    pub uid: Option<String>,
    /// Label selector.
    pub labels: LabelSelector,
    /// Field selector (string comparison, Kubernetes style).
    pub fields: FieldSelector,
    /// Annotations that must be present with these values.
    pub annotations: Vec<(String, String)>,
    /// Dotted paths whose JSON value must equal the given value, type-sensitively.
    pub json_fields: Vec<(Vec<String>, Value)>,
    /// Only objects with an owner reference to this uid.
    pub owner_uid: Option<String>,
    /// Only objects with an owner reference to one of these uids (an
    /// owner and its [`descendants`], for objects under it at any depth).
    pub owner_uid_in: Option<Arc<BTreeSet<String>>>,
    /// Only objects whose name contains this text, ignoring case.
    pub name_contains: Option<NameContains>,
    /// Only objects for which this CEL expression (`match=`) is true;
    /// evaluated after every other condition, on what is left.
    pub condition: Option<Arc<Condition>>,
}

impl Query {
    /// This query with the conditions of the compat body's pair members too.
    pub fn with_pairs(self, pairs: PairConditions) -> Query {
        Query {
            labels: pairs.labels,
            annotations: pairs.annotations,
            json_fields: pairs.json_fields,
            ..self
        }
    }
}

/// A compat notifier's `filter` as a query.
impl From<&NotifierFilter> for Query {
    fn from(filter: &NotifierFilter) -> Query {
        Query {
            name: filter.name.clone(),
            namespace: filter.namespace.clone(),
            uid: filter.uid.clone(),
            ..Query::default()
        }
        .with_pairs(filter.pairs.clone())
    }
}

/// What [`Query::collect`] took under the lock, for [`Query::finish`].
pub struct Collected {
    /// Candidates that passed the conditions answered without reading
    /// objects, in key order.
    items: Vec<Arc<StoredObject>>,
    /// Whether more candidates followed (only when nothing reads objects:
    /// otherwise every candidate is taken).
    more: bool,
    reads_objects: bool,
    paths: FieldPaths,
    /// How many objects later pages hold, when asked and known.
    rest: Option<usize>,
}

impl Collected {
    /// Whether finishing reads objects (and so belongs on the query pool).
    pub fn reads_objects(&self) -> bool {
        self.reads_objects
    }

    /// How many objects later pages hold, when counted.
    pub fn rest(&self) -> Option<usize> {
        self.rest
    }

    /// Candidates taken.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether no candidate was taken.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// Which slice of the result a caller wants.
#[derive(Debug, Clone, Default)]
pub struct PageRequest {
    /// Most objects to return; `None` = all.
    pub limit: Option<usize>,
    /// Continue after this key (from a previous page's token).
    pub after: Option<ObjectKey>,
}

/// One page of results.
#[derive(Debug)]
pub struct Page {
    /// Matching objects in key order.
    pub items: Vec<Arc<StoredObject>>,
    /// Token for the next page, when more objects may match.
    pub next: Option<ContinueToken>,
}

impl Query {
    /// Whether `object` satisfies every condition, its fields read from its
    /// JSON. Where the object's cache is at hand, [`Query::matches_in`]
    /// reads indexed fields from the object's index instead.
    pub fn matches(&self, object: &StoredObject) -> bool {
        self.matches_in(object, &FieldPaths::default())
    }

    /// Whether `object`, of a cache indexing the fields `paths`, satisfies
    /// every condition.
    pub fn matches_in(&self, object: &StoredObject, paths: &FieldPaths) -> bool {
        self.matches_cheaply(object, paths)
            && (!self.reads_objects(paths) || self.matches_object(object, paths, None) == Ok(true))
    }

    /// Whether some condition needs the object's JSON (a field no index
    /// of `paths` holds, an annotation, a JSON field): decompressing and
    /// reading it, which costs a few microseconds per object.
    pub fn reads_objects(&self, paths: &FieldPaths) -> bool {
        self.condition.is_some() || self.reads_json_besides(paths)
    }

    /// Whether a condition other than the CEL expression reads objects'
    /// JSON.
    fn reads_json_besides(&self, paths: &FieldPaths) -> bool {
        !self.annotations.is_empty()
            || !self.json_fields.is_empty()
            || self
                .fields
                .requirements()
                .iter()
                .any(|r| paths.slot(&r.path).is_none() && key_field(&r.path).is_none())
    }

    /// The conditions answered from what the cache keeps beside the
    /// object's JSON: namespace, name, uid, owners, labels, indexed fields.
    fn matches_cheaply(&self, object: &StoredObject, paths: &FieldPaths) -> bool {
        !(self
            .namespace
            .as_deref()
            .is_some_and(|ns| ns != object.namespace())
            || self.name.as_deref().is_some_and(|n| n != object.name())
            || self.uid.as_deref().is_some_and(|u| u != object.uid())
            || self
                .owner_uid
                .as_deref()
                .is_some_and(|o| !object.owner_uids().any(|u| u == o))
            || self
                .owner_uid_in
                .as_ref()
                .is_some_and(|set| !object.owner_uids().any(|u| set.contains(u)))
            || self
                .name_contains
                .as_ref()
                .is_some_and(|text| !text.matches(object.name()))
            || !self.labels.matches(|k| object.label(k))
            || !self
                .fields
                .requirements()
                .iter()
                .all(|r| match key_field(&r.path) {
                    Some(KeyField::Name) => r.matches_text(object.name()),
                    Some(KeyField::Namespace) => r.matches_text(object.namespace()),
                    None => paths
                        .slot(&r.path)
                        .and_then(|slot| object.indexed_field(slot))
                        .is_none_or(|value| r.matches_field(value)),
                }))
    }

    /// The conditions that read the object's JSON, decompressed once; the
    /// CEL expression last. An expression that fails on the object (a field
    /// read without `has()`, a wrong type) does not match it; one that
    /// spends its cost limit stops the query.
    ///
    /// `shared` is the object as its cache shares it: the expression's
    /// answer for it is then looked up first and kept after (see
    /// [`crate::cel::decisions`]), so an unchanged object is neither
    /// decompressed nor evaluated again, unless another condition reads
    /// its JSON.
    fn matches_object(
        &self,
        object: &StoredObject,
        paths: &FieldPaths,
        shared: Option<&Arc<StoredObject>>,
    ) -> Result<bool, MatchTooCostly> {
        let kept = self
            .condition
            .as_ref()
            .zip(shared)
            .and_then(|(condition, shared)| condition.decisions().get(shared));
        if kept == Some(false) || (kept == Some(true) && !self.reads_json_besides(paths)) {
            return Ok(kept == Some(true));
        }
        let json = object.json();
        let matched = self
            .fields
            .requirements()
            .iter()
            .filter(|r| paths.slot(&r.path).is_none() && key_field(&r.path).is_none())
            .all(|r| r.matches_field(&FieldValue::from_json(object.field(&json, &r.path))))
            && self.annotations.iter().all(|(k, v)| {
                object
                    .field(&json, &["metadata", "annotations", k])
                    .and_then(|text| serde_json::from_slice::<String>(text).ok())
                    .is_some_and(|text| text == *v)
            })
            && self.json_fields.iter().all(|(path, want)| {
                object
                    .field(&json, path)
                    .and_then(|text| serde_json::from_slice::<Value>(text).ok())
                    .is_some_and(|found| found == *want)
            });
        let Some(condition) = self.condition.as_ref().filter(|_| matched) else {
            return Ok(matched);
        };
        if let Some(answer) = kept {
            return Ok(answer);
        }
        let answer = match condition.on_object(json, &|text| object.members(text).collect()) {
            Ok(answer) => answer,
            Err(EvalError::TooCostly) => {
                return Err(MatchTooCostly {
                    object: object.key().to_string(),
                });
            }
            Err(EvalError::Failed(_) | EvalError::NotBool(_)) => false,
        };
        if let Some(shared) = shared {
            condition.decisions().keep(shared, answer);
        }
        Ok(answer)
    }

    /// Runs the query on a cache view, reading objects under its lock:
    /// for small caches and callers that hold the view anyway. Requests
    /// use [`Query::collect`] and [`Query::finish`].
    pub fn run(&self, view: &CacheView<'_>, page: &PageRequest) -> Page {
        let collected = self.collect(view, page, false);
        match self.finish(collected, page, &mut Budget::unlimited()) {
            Ok(page) => page,
            // An unlimited budget is never spent; a `match=` that spends
            // its cost limit matches nothing here.
            Err(_) => Page {
                items: Vec::new(),
                next: None,
            },
        }
    }

    /// The part of a query that needs the cache's lock: the candidates
    /// that pass the conditions answered without reading objects, as
    /// shared references. When no condition reads objects, that is the
    /// answer, and it stops after the page (and, with `count_rest`,
    /// counts what later pages hold); otherwise every such candidate is
    /// taken, for [`Query::finish`] to read outside the lock. Taking
    /// 100,000 references holds the lock about a millisecond.
    pub fn collect(&self, view: &CacheView<'_>, page: &PageRequest, count_rest: bool) -> Collected {
        let paths = view.field_paths().clone();
        let reads_objects = self.reads_objects(&paths);
        let limit = match reads_objects {
            true => usize::MAX,
            false => page.limit.unwrap_or(usize::MAX),
        };
        let mut items = Vec::new();
        let mut more = false;
        // A page that needs no object read stops at its limit: the plan
        // weighs it.
        let stops_at = (!reads_objects).then_some(page.limit).flatten();
        for object in self.candidates(view, page.after.as_ref(), stops_at) {
            if !self.matches_cheaply(object, &paths) {
                continue;
            }
            if items.len() == limit {
                more = true;
                break;
            }
            items.push(object.clone());
        }
        let rest = match items.last() {
            Some(last) if more && count_rest => Some(self.count_after(view, Some(last.key()))),
            _ => None,
        };
        Collected {
            items,
            more,
            reads_objects,
            paths,
            rest,
        }
    }

    /// The rest of a query, outside the lock: the conditions that read
    /// objects, charged to `budget`, and the page.
    pub fn finish(
        &self,
        collected: Collected,
        page: &PageRequest,
        budget: &mut Budget,
    ) -> Result<Page, Stopped> {
        let limit = page.limit.unwrap_or(usize::MAX);
        let Collected {
            items: candidates,
            more,
            reads_objects,
            paths,
            ..
        } = collected;
        if !reads_objects {
            let next = match candidates.last() {
                Some(last) if more => Some(ContinueToken::after(last.key())),
                _ => None,
            };
            return Ok(Page {
                items: candidates,
                next,
            });
        }
        let shared = budget.shared() && candidates.len() >= scan::MIN_SPLIT && scan::helping();
        let (items, more) = if shared {
            let split = scan::split(self, &paths, candidates, limit, budget)?;
            (split.items, split.more)
        } else {
            self.read_each(candidates, &paths, limit, budget)?
        };
        let next = match items.last() {
            Some(last) if more => Some(ContinueToken::after(last.key())),
            _ => None,
        };
        Ok(Page { items, next })
    }

    /// Reads `candidates` in order on this thread: the first `limit` that
    /// match, and whether more followed.
    fn read_each(
        &self,
        candidates: Vec<Arc<StoredObject>>,
        paths: &FieldPaths,
        limit: usize,
        budget: &mut Budget,
    ) -> Result<(Vec<Arc<StoredObject>>, bool), Stopped> {
        let mut items = Vec::new();
        let mut more = false;
        for object in candidates {
            budget.charge()?;
            if !self.matches_object(&object, paths, Some(&object))? {
                continue;
            }
            if items.len() == limit {
                more = true;
                break;
            }
            items.push(object);
        }
        Ok((items, more))
    }

    /// How many objects match after `after`, without collecting them.
    pub fn count_after(&self, view: &CacheView<'_>, after: Option<&ObjectKey>) -> usize {
        let paths = view.field_paths();
        self.candidates(view, after, None)
            .filter(|object| self.matches_in(object, paths))
            .count()
    }

    /// Objects that may match, in key order, after `after`; the walk
    /// stops after `stops_at` matches, if given.
    fn candidates<'v>(
        &self,
        view: &'v CacheView<'_>,
        after: Option<&ObjectKey>,
        stops_at: Option<usize>,
    ) -> Box<dyn Iterator<Item = &'v Arc<StoredObject>> + 'v> {
        if let Some(uid) = &self.uid {
            let hit = view
                .get_by_uid(uid)
                .filter(|o| after.is_none_or(|a| o.key() > a));
            return Box::new(hit.into_iter());
        }
        if let (Some(ns), Some(name)) = (&self.namespace, &self.name) {
            let key = ObjectKey::new(ns, name);
            let hit = view.get(&key).filter(|_| after.is_none_or(|a| &key > a));
            return Box::new(hit.into_iter());
        }
        let start = match after {
            Some(a) => Bound::Excluded(a.clone()),
            None => Bound::Unbounded,
        };
        match self.smallest_index(view, stops_at) {
            None => view.iter_after(after),
            Some(Candidates::Set(keys)) => Box::new(
                keys.range((start, Bound::Unbounded))
                    .filter_map(move |k| view.get(k)),
            ),
            Some(Candidates::Namespace(_)) => {
                let ns = self.namespace.as_deref().unwrap_or_default();
                view.iter_in_namespace_after(ns, after)
            }
            Some(Candidates::Merged(keys)) => {
                let from = after.map_or(0, |a| keys.partition_point(|k| k <= a));
                Box::new(
                    keys.into_iter()
                        .skip(from)
                        .filter_map(move |k| view.get(&k)),
                )
            }
        }
    }

    /// The smallest key set an index offers for this query's conditions;
    /// `None` means scanning everything is the only way. A single index entry
    /// is walked in place; only `in` and bare-key conditions merge several.
    /// A walk that stops after `stops_at` matches weighs the name index's
    /// cost against it.
    fn smallest_index<'v>(
        &self,
        view: &'v CacheView<'_>,
        stops_at: Option<usize>,
    ) -> Option<Candidates<'v>> {
        static EMPTY: BTreeSet<ObjectKey> = BTreeSet::new();
        let mut best: Option<Candidates<'v>> = None;
        let consider = |best: &mut Option<Candidates<'v>>, candidates: Candidates<'v>| {
            if best.as_ref().is_none_or(|b| candidates.len() < b.len()) {
                *best = Some(candidates);
            }
        };
        if let Some(ns) = &self.namespace {
            consider(&mut best, Candidates::Namespace(view.namespace_len(ns)));
        }
        if let Some(owner) = &self.owner_uid {
            consider(
                &mut best,
                Candidates::Set(view.keys_owned_by(owner).unwrap_or(&EMPTY)),
            );
        }
        if let Some(owners) = &self.owner_uid_in {
            consider(
                &mut best,
                Candidates::merge(owners.iter().filter_map(|uid| view.keys_owned_by(uid))),
            );
        }
        for requirement in self.labels.requirements() {
            match requirement {
                Requirement::Equals { key, value } => {
                    consider(
                        &mut best,
                        Candidates::Set(view.keys_with_label(key, value).unwrap_or(&EMPTY)),
                    );
                }
                Requirement::In { key, values } => {
                    let sets = values.iter().filter_map(|v| view.keys_with_label(key, v));
                    consider(&mut best, Candidates::merge(sets));
                }
                Requirement::Exists { key } => {
                    consider(&mut best, Candidates::merge(view.keys_with_label_key(key)));
                }
                // Satisfied by objects without the label, or by values no
                // index entry names (integer comparisons): they only filter.
                Requirement::NotEquals { .. }
                | Requirement::NotIn { .. }
                | Requirement::DoesNotExist { .. }
                | Requirement::GreaterThan { .. }
                | Requirement::LessThan { .. } => {}
            }
        }
        let paths = view.field_paths();
        for requirement in self.fields.requirements() {
            if requirement.op != FieldOp::Equals {
                // `!=` is satisfied by every other value: it only filters.
                continue;
            }
            let Some(slot) = paths.slot(&requirement.path) else {
                continue;
            };
            match view.keys_with_field(slot, &requirement.value) {
                Some((texts, numbers)) if numbers.is_empty() => {
                    consider(&mut best, Candidates::Set(texts.unwrap_or(&EMPTY)));
                }
                Some((texts, numbers)) => {
                    let sets = texts.into_iter().chain(std::iter::once(numbers));
                    consider(&mut best, Candidates::merge(sets));
                }
                None => {}
            }
        }
        // Last, because its candidates are gathered and sorted: only worth
        // it when fewer than any other set's, and than a scan's, and than
        // what a walk that stops early reads.
        if let Some(text) = &self.name_contains
            && let Some(at_most) = view.name_matches_at_most(text.folded())
            && name_index_pays(
                at_most,
                best.as_ref().map_or(view.len(), Candidates::len),
                view.len(),
                stops_at,
            )
            && let Some(keys) = view.keys_with_name_containing(text.folded())
        {
            consider(&mut best, Candidates::Merged(keys));
        }
        best
    }
}

/// Whether gathering and sorting the name index's candidates, at most
/// `matches`, costs less than walking `walked` objects of the `len` of
/// the cache, stopping after `stops_at` matches.
///
/// A walk that stops reads about `(stops_at + 1) × len / matches` objects
/// if matches are spread evenly, and a candidate gathered and sorted costs
/// about 1.5 times an object checked (0.75 µs against 0.5 at 100,000
/// Pods; BENCHMARKS.md, "Name and owner search"). But `matches` counts
/// the names holding the text's rarest trigram, which may be several
/// times those holding the text, and fewer matches make a longer walk: the
/// walk is chosen only when it reads less than a quarter of the estimate.
/// At 100,000 objects and pages of 100, a text in more than some 5,000
/// names is found by the walk.
fn name_index_pays(matches: usize, walked: usize, len: usize, stops_at: Option<usize>) -> bool {
    match stops_at {
        None => matches < walked,
        Some(limit) => {
            let read = (limit.saturating_add(1))
                .saturating_mul(len)
                .checked_div(matches)
                .map_or(walked, |read| read.min(walked));
            matches.saturating_mul(3) / 2 < read.saturating_mul(4)
        }
    }
}

/// Keys an index yields for a query, in key order.
enum Candidates<'v> {
    /// One index entry, borrowed.
    Set(&'v BTreeSet<ObjectKey>),
    /// The objects of the query's namespace (a range of the cache): how
    /// many.
    Namespace(usize),
    /// Keys gathered from several entries, sorted, each once.
    Merged(Vec<ObjectKey>),
}

impl<'v> Candidates<'v> {
    /// The union of several entries. A label's entries are disjoint (one
    /// value per object), owners' are not (an object may name two).
    fn merge(sets: impl Iterator<Item = &'v BTreeSet<ObjectKey>>) -> Self {
        let mut keys: Vec<ObjectKey> = sets.flatten().cloned().collect();
        keys.sort_unstable();
        keys.dedup();
        Candidates::Merged(keys)
    }

    fn len(&self) -> usize {
        match self {
            Candidates::Set(keys) => keys.len(),
            Candidates::Namespace(len) => *len,
            Candidates::Merged(keys) => keys.len(),
        }
    }
}

/// The fields every object's key holds, which field selectors name often
/// (client-go watches one object with `metadata.name=NAME`).
enum KeyField {
    Name,
    Namespace,
}

fn key_field(path: &[String]) -> Option<KeyField> {
    match path {
        [metadata, field] if metadata == "metadata" => match field.as_str() {
            "name" => Some(KeyField::Name),
            "namespace" => Some(KeyField::Namespace),
            _ => None,
        },
        _ => None,
    }
}

/// The value at a dotted path; numeric segments index arrays.
pub fn lookup<'v>(value: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter().try_fold(value, |v, segment| match v {
        Value::Object(map) => map.get(segment),
        Value::Array(items) => items.get(segment.parse::<usize>().ok()?),
        _ => None,
    })
}

#[cfg(test)]
mod tests;
