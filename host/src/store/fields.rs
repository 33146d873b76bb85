//! Indexes of fields: for the field selectors clients send most, the
//! objects having each value, as labels have theirs.
//!
//! `kubectl describe node` lists the node's Pods with
//! `fieldSelector=spec.nodeName=NODE`, and the kubelet watches its own the
//! same way; without an index, every such list reads a field of every Pod
//! in the cache (decompressing each). The API server's watch cache indexes
//! the same field for the same reason. A cache indexes the fields its
//! kind's [`FieldPaths`] name: for Pods `spec.nodeName` and `status.phase`,
//! plus any path the configuration adds for any kind
//! (`queries.indexedFields`). Each object keeps the values it had at those
//! paths when it entered the cache ([`StoredObject::indexed_field`]), so a
//! selector on an indexed field is also checked without reading the object.
//!
//! Cost: per object and indexed field, the value (16 bytes and its text)
//! and a key in the value's set (about 40 bytes): about 130 bytes for a
//! Pod with the two default fields.

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use super::object::{ObjectKey, StoredObject};
use crate::selectors::field::FieldValue;

type KeySet = BTreeSet<ObjectKey>;

/// The field paths a cache indexes, in slot order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldPaths(Arc<[Vec<String>]>);

impl FieldPaths {
    /// The paths `paths`, each once, in the order given.
    pub fn new(paths: impl IntoIterator<Item = Vec<String>>) -> FieldPaths {
        let mut unique: Vec<Vec<String>> = Vec::new();
        for path in paths {
            if !unique.contains(&path) {
                unique.push(path);
            }
        }
        FieldPaths(unique.into())
    }

    /// The slot of `path`, if it is indexed.
    pub fn slot(&self, path: &[String]) -> Option<usize> {
        self.0.iter().position(|p| p == path)
    }

    /// The paths.
    pub fn iter(&self) -> impl Iterator<Item = &Vec<String>> {
        self.0.iter()
    }

    /// How many paths.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no field is indexed.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The paths as selectors write them (`spec.nodeName`).
    pub fn dotted(&self) -> Vec<String> {
        self.0
            .iter()
            .map(|path| {
                path.iter()
                    .map(|segment| segment.replace('.', "\\."))
                    .collect::<Vec<_>>()
                    .join(".")
            })
            .collect()
    }
}

/// The objects by the value of one indexed field.
#[derive(Default)]
pub(super) struct FieldIndex {
    by_text: HashMap<Box<str>, KeySet>,
    /// Objects whose value is a number: which texts equal it is for
    /// [`FieldValue::equals`] to say, so they are candidates of every
    /// lookup.
    numbers: KeySet,
}

impl FieldIndex {
    pub(super) fn insert(&mut self, key: &ObjectKey, value: &FieldValue) {
        match value {
            FieldValue::Text(text) => {
                self.by_text
                    .entry(text.clone())
                    .or_default()
                    .insert(key.clone());
            }
            FieldValue::Number(_) => {
                self.numbers.insert(key.clone());
            }
            // Equal to no text: never a candidate.
            FieldValue::Composite => {}
        }
    }

    pub(super) fn remove(&mut self, key: &ObjectKey, value: &FieldValue) {
        match value {
            FieldValue::Text(text) => {
                if let Some(keys) = self.by_text.get_mut(text) {
                    keys.remove(key);
                    if keys.is_empty() {
                        self.by_text.remove(text);
                    }
                }
            }
            FieldValue::Number(_) => {
                self.numbers.remove(key);
            }
            FieldValue::Composite => {}
        }
    }

    /// The keys whose value may equal `text`: all that do, and objects
    /// with a number there (check each).
    pub(super) fn lookup(&self, text: &str) -> (Option<&KeySet>, &KeySet) {
        (self.by_text.get(text), &self.numbers)
    }
}

/// Every indexed field of one cache.
#[derive(Default)]
pub(super) struct FieldIndexes {
    paths: FieldPaths,
    indexes: Vec<FieldIndex>,
}

impl FieldIndexes {
    pub(super) fn new(paths: FieldPaths) -> FieldIndexes {
        let indexes = paths.iter().map(|_| FieldIndex::default()).collect();
        FieldIndexes { paths, indexes }
    }

    pub(super) fn paths(&self) -> &FieldPaths {
        &self.paths
    }

    pub(super) fn insert(&mut self, object: &StoredObject) {
        for (slot, index) in self.indexes.iter_mut().enumerate() {
            if let Some(value) = object.indexed_field(slot) {
                index.insert(object.key(), value);
            }
        }
    }

    pub(super) fn remove(&mut self, object: &StoredObject) {
        for (slot, index) in self.indexes.iter_mut().enumerate() {
            if let Some(value) = object.indexed_field(slot) {
                index.remove(object.key(), value);
            }
        }
    }

    pub(super) fn get(&self, slot: usize) -> Option<&FieldIndex> {
        self.indexes.get(slot)
    }
}
