//! Secondary indexes of one cache. Each maps a value to the ordered set of
//! object keys having it, so an indexed lookup also yields objects in paging
//! order. Cost: one `ObjectKey` clone (16 bytes plus a B-tree slot, about
//! 40 bytes in all) per indexed value; a Pod with ten labels pays ~0.5 KB.
//! The name index ([`NameIndex`]) is denser: a `u32` per trigram of the
//! name, about 147 bytes for a Pod. Only a query by part of a name reads it,
//! so it is built on the first such query of a cache and kept up to date
//! from then on: a cache nobody searches by name does not pay for it.

use std::collections::{BTreeSet, HashMap};
use std::sync::OnceLock;

use super::name_index::NameIndex;
use super::object::{ObjectKey, StoredObject};

type KeySet = BTreeSet<ObjectKey>;

#[derive(Default)]
pub(super) struct Indexes {
    by_namespace: HashMap<Box<str>, KeySet>,
    by_label: HashMap<Box<str>, HashMap<Box<str>, KeySet>>,
    by_owner: HashMap<Box<str>, KeySet>,
    by_uid: HashMap<Box<str>, ObjectKey>,
    /// Built on first use ([`Indexes::names`]).
    by_name: OnceLock<NameIndex>,
}

impl Indexes {
    pub(super) fn insert(&mut self, object: &StoredObject) {
        if let Some(names) = self.by_name.get_mut() {
            names.insert(object.key());
        }
        self.insert_fields(object);
    }

    pub(super) fn remove(&mut self, object: &StoredObject) {
        if let Some(names) = self.by_name.get_mut() {
            names.remove(object.key());
        }
        self.remove_fields(object);
    }

    /// A new version of an object: same key, so same name, and the name
    /// index is left as it is.
    pub(super) fn replace(&mut self, old: &StoredObject, new: &StoredObject) {
        debug_assert_eq!(old.key(), new.key());
        self.remove_fields(old);
        self.insert_fields(new);
    }

    /// Every index but the name's.
    fn insert_fields(&mut self, object: &StoredObject) {
        let key = object.key();
        self.by_namespace
            .entry(object.namespace().into())
            .or_default()
            .insert(key.clone());
        for (k, v) in object.labels() {
            self.by_label
                .entry(k.into())
                .or_default()
                .entry(v.into())
                .or_default()
                .insert(key.clone());
        }
        for owner in object.owner_uids() {
            self.by_owner
                .entry(owner.into())
                .or_default()
                .insert(key.clone());
        }
        if !object.uid().is_empty() {
            self.by_uid.insert(object.uid().into(), key.clone());
        }
    }

    fn remove_fields(&mut self, object: &StoredObject) {
        let key = object.key();
        remove_from(&mut self.by_namespace, object.namespace(), key);
        for (k, v) in object.labels() {
            if let Some(values) = self.by_label.get_mut(k) {
                remove_from(values, v, key);
                if values.is_empty() {
                    self.by_label.remove(k);
                }
            }
        }
        for owner in object.owner_uids() {
            remove_from(&mut self.by_owner, owner, key);
        }
        // A new object may already hold the uid under another key only if the
        // server reused a uid, which it does not; check anyway to stay exact.
        if self.by_uid.get(object.uid()) == Some(key) {
            self.by_uid.remove(object.uid());
        }
    }

    pub(super) fn namespace(&self, namespace: &str) -> Option<&KeySet> {
        self.by_namespace.get(namespace)
    }

    pub(super) fn label(&self, key: &str, value: &str) -> Option<&KeySet> {
        self.by_label.get(key)?.get(value)
    }

    pub(super) fn label_values(&self, key: &str) -> impl Iterator<Item = &KeySet> {
        self.by_label
            .get(key)
            .into_iter()
            .flat_map(|values| values.values())
    }

    pub(super) fn owner(&self, uid: &str) -> Option<&KeySet> {
        self.by_owner.get(uid)
    }

    pub(super) fn uid(&self, uid: &str) -> Option<&ObjectKey> {
        self.by_uid.get(uid)
    }

    /// The name index, built from `keys` (every key of the cache) the
    /// first time it is asked for. Readers hold the cache's read lock, so
    /// no writer changes the keys meanwhile; readers arriving during the
    /// build wait for it.
    pub(super) fn names<'k>(&self, keys: impl Iterator<Item = &'k ObjectKey>) -> &NameIndex {
        self.by_name.get_or_init(|| {
            let mut names = NameIndex::default();
            for key in keys {
                names.insert(key);
            }
            names
        })
    }

    /// Whether the name index has been built.
    #[cfg(test)]
    pub(super) fn has_names(&self) -> bool {
        self.by_name.get().is_some()
    }

    pub(super) fn namespaces(&self) -> impl Iterator<Item = &str> {
        self.by_namespace.keys().map(|ns| &**ns)
    }
}

fn remove_from(map: &mut HashMap<Box<str>, KeySet>, value: &str, key: &ObjectKey) {
    if let Some(keys) = map.get_mut(value) {
        keys.remove(key);
        if keys.is_empty() {
            map.remove(value);
        }
    }
}
