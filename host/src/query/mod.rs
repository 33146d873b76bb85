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

use crate::config::{NotifierFilter, PairConditions};
use crate::store::{CacheView, ObjectKey, StoredObject};

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
    /// Whether `object` satisfies every condition.
    pub fn matches(&self, object: &StoredObject) -> bool {
        if self
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
        {
            return false;
        }
        if self.fields.is_empty() && self.annotations.is_empty() && self.json_fields.is_empty() {
            return true;
        }
        let value = object.to_value();
        self.fields.matches(&value)
            && self.annotations.iter().all(|(k, v)| {
                value["metadata"]["annotations"]
                    .get(k)
                    .and_then(Value::as_str)
                    == Some(v)
            })
            && self
                .json_fields
                .iter()
                .all(|(path, want)| lookup(&value, path) == Some(want))
    }

    /// Runs the query on a cache view.
    pub fn run(&self, view: &CacheView<'_>, page: &PageRequest) -> Page {
        let limit = page.limit.unwrap_or(usize::MAX);
        let mut items = Vec::new();
        let mut more = false;
        for object in self.candidates(view, page.after.as_ref()) {
            if !self.matches(object) {
                continue;
            }
            if items.len() == limit {
                more = true;
                break;
            }
            items.push(object.clone());
        }
        let next = match items.last() {
            Some(last) if more => Some(ContinueToken::after(last.key())),
            _ => None,
        };
        Page { items, next }
    }

    /// How many objects match after `after`, without collecting them.
    pub fn count_after(&self, view: &CacheView<'_>, after: Option<&ObjectKey>) -> usize {
        self.candidates(view, after)
            .filter(|object| self.matches(object))
            .count()
    }

    /// Objects that may match, in key order, after `after`.
    fn candidates<'v>(
        &self,
        view: &'v CacheView<'_>,
        after: Option<&ObjectKey>,
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
        match self.smallest_index(view) {
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
    fn smallest_index<'v>(&self, view: &'v CacheView<'_>) -> Option<Candidates<'v>> {
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
        // Last, because its candidates are gathered and sorted: only worth
        // it when fewer than any other set's, and than a scan's.
        if let Some(text) = &self.name_contains
            && let Some(at_most) = view.name_matches_at_most(text.folded())
            && at_most < best.as_ref().map_or(view.len(), Candidates::len)
            && let Some(keys) = view.keys_with_name_containing(text.folded())
        {
            consider(&mut best, Candidates::Merged(keys));
        }
        best
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
