//! Secondary indexes of one cache. Each maps a value to the ordered set of
//! object keys having it, so an indexed lookup also yields objects in paging
//! order (a namespace's objects are a range of the cache's map, and only
//! counted here). Cost: one `ObjectKey` clone (16 bytes plus a B-tree slot, about
//! 40 bytes in all) per indexed value; a Pod with ten labels pays ~0.5 KB.
//! The name index ([`NameIndex`]) is denser: a `u32` per trigram of the
//! name, about 147 bytes for a Pod. Only a query by part of a name reads it,
//! so it is built on the first such query of a cache and kept up to date
//! from then on: a cache nobody searches by name does not pay for it. It is
//! built outside the cache's lock ([`Indexes::start_names`],
//! [`Indexes::finish_names`]): 100,000 names take tens of milliseconds,
//! which no reader or writer waits for. Indexed fields are in
//! [`super::fields`].

use std::collections::{BTreeSet, HashMap};

use super::fields::{FieldIndex, FieldIndexes, FieldPaths};
use super::name_index::NameIndex;
use super::object::{ObjectKey, StoredObject};

type KeySet = BTreeSet<ObjectKey>;

#[derive(Default)]
pub(super) struct Indexes {
    /// Objects in each namespace. Their keys need no index: a key begins
    /// with its namespace, so a namespace's objects are one range of the
    /// cache's own map ([`ObjectKey::namespace_range`]).
    namespaces: HashMap<Box<str>, usize>,
    by_label: HashMap<Box<str>, HashMap<Box<str>, KeySet>>,
    by_owner: HashMap<Box<str>, KeySet>,
    /// Uids the API server makes (UUIDs in their canonical text) as the
    /// 16 bytes they spell, with no string of their own; any other uid
    /// in the second map.
    by_uuid: HashMap<u128, ObjectKey>,
    by_other_uid: HashMap<Box<str>, ObjectKey>,
    /// Built on first use ([`Indexes::start_names`]).
    by_name: Option<NameIndex>,
    /// While the name index is being built: the keys added (`true`) and
    /// removed since its keys were taken, to replay when it is installed.
    names_log: Option<Vec<(bool, ObjectKey)>>,
    fields: FieldIndexes,
}

impl Indexes {
    /// Indexes that also index the fields at `paths`.
    pub(super) fn with_fields(paths: FieldPaths) -> Indexes {
        Indexes {
            fields: FieldIndexes::new(paths),
            ..Indexes::default()
        }
    }

    pub(super) fn insert(&mut self, object: &StoredObject) {
        if let Some(names) = &mut self.by_name {
            names.insert(object.key());
        }
        if let Some(log) = &mut self.names_log {
            log.push((true, object.key().clone()));
        }
        self.insert_fields(object);
    }

    pub(super) fn remove(&mut self, object: &StoredObject) {
        if let Some(names) = &mut self.by_name {
            names.remove(object.key());
        }
        if let Some(log) = &mut self.names_log {
            log.push((false, object.key().clone()));
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
        self.fields.insert(object);
        match self.namespaces.get_mut(object.namespace()) {
            Some(count) => *count += 1,
            None => {
                self.namespaces.insert(object.namespace().into(), 1);
            }
        }
        for (k, v) in object.labels() {
            slot(slot(&mut self.by_label, k), v).insert(key.clone());
        }
        for owner in object.owner_uids() {
            slot(&mut self.by_owner, owner).insert(key.clone());
        }
        match (object.uid(), uuid(object.uid())) {
            ("", _) => {}
            (_, Some(uuid)) => {
                self.by_uuid.insert(uuid, key.clone());
            }
            (uid, None) => {
                self.by_other_uid.insert(uid.into(), key.clone());
            }
        }
    }

    fn remove_fields(&mut self, object: &StoredObject) {
        let key = object.key();
        self.fields.remove(object);
        if let Some(count) = self.namespaces.get_mut(object.namespace()) {
            *count -= 1;
            if *count == 0 {
                self.namespaces.remove(object.namespace());
            }
        }
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
        if self.uid(object.uid()) == Some(key) {
            match uuid(object.uid()) {
                Some(uuid) => self.by_uuid.remove(&uuid),
                None => self.by_other_uid.remove(object.uid()),
            };
        }
    }

    /// How many objects are in `namespace`.
    pub(super) fn namespace_len(&self, namespace: &str) -> usize {
        self.namespaces.get(namespace).copied().unwrap_or(0)
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
        match uuid(uid) {
            Some(uuid) => self.by_uuid.get(&uuid),
            None => self.by_other_uid.get(uid),
        }
    }

    /// The name index, once built.
    pub(super) fn names(&self) -> Option<&NameIndex> {
        self.by_name.as_ref()
    }

    /// Whether the name index has been built.
    pub(super) fn has_names(&self) -> bool {
        self.by_name.is_some()
    }

    /// Starts recording the keys added and removed, for a name index
    /// being built from the keys the cache holds now; `false` when one is
    /// built or being built already.
    pub(super) fn start_names(&mut self) -> bool {
        if self.by_name.is_some() || self.names_log.is_some() {
            return false;
        }
        self.names_log = Some(Vec::new());
        true
    }

    /// Installs a name index built from the keys of [`start_names`]'s
    /// moment, brought up to date with what changed since.
    ///
    /// [`start_names`]: Indexes::start_names
    pub(super) fn finish_names(&mut self, mut names: NameIndex) {
        for (added, key) in self.names_log.take().unwrap_or_default() {
            if added {
                names.insert(&key);
            } else {
                names.remove(&key);
            }
        }
        self.by_name = Some(names);
    }

    /// The paths of the indexed fields.
    pub(super) fn field_paths(&self) -> &FieldPaths {
        self.fields.paths()
    }

    /// The index of the field in `slot` of [`Indexes::field_paths`].
    pub(super) fn field(&self, slot: usize) -> Option<&FieldIndex> {
        self.fields.get(slot)
    }

    pub(super) fn namespaces(&self) -> impl Iterator<Item = &str> {
        self.namespaces.keys().map(|ns| &**ns)
    }
}

/// The number a UUID in canonical text spells (`8-4-4-4-12` lowercase hex
/// digits, as the API server writes uids); `None` for any other text, so
/// that two texts never share a number.
fn uuid(text: &str) -> Option<u128> {
    let bytes = text.as_bytes();
    if bytes.len() != 36 {
        return None;
    }
    let mut number = 0u128;
    for (i, &b) in bytes.iter().enumerate() {
        let digit = match b {
            b'-' if matches!(i, 8 | 13 | 18 | 23) => continue,
            b'0'..=b'9' if !matches!(i, 8 | 13 | 18 | 23) => b - b'0',
            b'a'..=b'f' if !matches!(i, 8 | 13 | 18 | 23) => b - b'a' + 10,
            _ => return None,
        };
        number = number << 4 | u128::from(digit);
    }
    Some(number)
}

/// The entry of `key` in `map`, made empty if there is none. Unlike
/// `entry`, it allocates the key only when it makes the entry: most
/// changes touch labels and owners the index has, and an allocation under
/// the cache's write lock may be the one that sorts the memory the
/// allocator was given back (see `Cache::replace`).
fn slot<'m, V: Default>(map: &'m mut HashMap<Box<str>, V>, key: &str) -> &'m mut V {
    if !map.contains_key(key) {
        map.insert(key.into(), V::default());
    }
    map.get_mut(key)
        .expect("the entry exists: made above if it did not")
}

fn remove_from(map: &mut HashMap<Box<str>, KeySet>, value: &str, key: &ObjectKey) {
    if let Some(keys) = map.get_mut(value) {
        keys.remove(key);
        if keys.is_empty() {
            map.remove(value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::uuid;

    #[test]
    fn only_canonical_uuids_are_read_as_numbers() {
        assert_eq!(
            uuid("0a1b2c3d-4e5f-6789-abcd-ef0123456789"),
            Some(0x0a1b2c3d_4e5f_6789_abcd_ef0123456789)
        );
        assert_eq!(uuid("00000000-0000-0000-0000-000000000000"), Some(0));
        for other in [
            "",
            "uid-a-x",
            // Upper case, which the API server does not write: kept as text,
            // so it is found only as it was written.
            "0A1B2C3D-4E5F-6789-ABCD-EF0123456789",
            "0a1b2c3d4e5f6789abcdef0123456789",
            "0a1b2c3d-4e5f-6789-abcd-ef012345678",
            "0a1b2c3d-4e5f-6789-abcd-ef01234567890",
            "0a1b2c3d-4e5f-6789-abcd_ef0123456789",
            "0a1b2c3-d4e5f-6789-abcd-ef0123456789",
            "0a1b2c3d-4e5f-6789-abcd-ef012345678g",
        ] {
            assert_eq!(uuid(other), None, "{other:?}");
        }
    }
}
