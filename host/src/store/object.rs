//! One cached object: its compact JSON bytes plus the few parsed fields that
//! indexes and queries need.
//!
//! Keeping the serialized bytes rather than a `serde_json::Value` is what keeps
//! memory close to the objects' JSON size: a parsed `Value` of a 6 KB Pod takes
//! about 53 KB of heap in some 470 allocations (every small map becomes a
//! `BTreeMap` node of several hundred bytes), while GRW keeps such a Pod in
//! 1.4 times its JSON. Answers are written by copying the bytes, so a list
//! never re-serializes objects. See BENCHMARKS.md.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::gvk::Gvk;

/// Key of an object in one cache: namespace (empty for cluster-scoped) and name.
///
/// Stored as one string with a NUL separator, so that keys sort by
/// (namespace, name) and cloning a key is one reference-count increment.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey(Arc<str>);

impl ObjectKey {
    /// Key of `namespace/name`; `namespace` is empty for cluster-scoped objects.
    pub fn new(namespace: &str, name: &str) -> Self {
        ObjectKey(format!("{namespace}\0{name}").into())
    }

    /// The namespace, empty for cluster-scoped objects.
    pub fn namespace(&self) -> &str {
        self.0.split_once('\0').map_or("", |(ns, _)| ns)
    }

    /// The object's name.
    pub fn name(&self) -> &str {
        self.0.split_once('\0').map_or(&*self.0, |(_, name)| name)
    }
}

impl fmt::Debug for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.namespace() {
            "" => f.write_str(self.name()),
            ns => write!(f, "{ns}/{}", self.name()),
        }
    }
}

/// Why an object from the API server or a recording cannot be cached.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ObjectError {
    /// The value is not a JSON object.
    #[error("expected a JSON object")]
    NotAnObject,
    /// `metadata.name` is missing or empty.
    #[error("object has no metadata.name")]
    NoName,
}

/// An object as the cache keeps it. Immutable; shared through `Arc`.
pub struct StoredObject {
    key: ObjectKey,
    uid: Box<str>,
    resource_version: Box<str>,
    /// Sorted by key, so lookups are a binary search.
    labels: Box<[(Box<str>, Box<str>)]>,
    owner_uids: Box<[Box<str>]>,
    json: Box<[u8]>,
}

impl StoredObject {
    /// Prepares an object for the cache: fills in `kind`/`apiVersion` (list
    /// items from the API server lack them), strips `metadata.managedFields`
    /// unless asked to keep them, and serializes it compactly.
    pub fn from_value(
        mut value: Value,
        gvk: &Gvk,
        keep_managed_fields: bool,
    ) -> Result<StoredObject, ObjectError> {
        let map = value.as_object_mut().ok_or(ObjectError::NotAnObject)?;
        if !map.get("kind").is_some_and(Value::is_string) {
            map.insert("kind".into(), Value::String(gvk.kind.clone()));
        }
        if !map.get("apiVersion").is_some_and(Value::is_string) {
            map.insert("apiVersion".into(), Value::String(gvk.api_version()));
        }
        let metadata = map.get_mut("metadata").and_then(Value::as_object_mut);
        let Some(metadata) = metadata else {
            return Err(ObjectError::NoName);
        };
        if !keep_managed_fields {
            metadata.remove("managedFields");
        }
        let text = |key: &str| metadata.get(key).and_then(Value::as_str).unwrap_or("");
        let name = text("name");
        if name.is_empty() {
            return Err(ObjectError::NoName);
        }
        let key = ObjectKey::new(text("namespace"), name);
        let uid = text("uid").into();
        let resource_version = text("resourceVersion").into();
        let mut labels: Vec<(Box<str>, Box<str>)> = metadata
            .get("labels")
            .and_then(Value::as_object)
            .map(|labels| {
                labels
                    .iter()
                    .filter_map(|(k, v)| Some((k.as_str().into(), v.as_str()?.into())))
                    .collect()
            })
            .unwrap_or_default();
        labels.sort_unstable();
        let owner_uids = metadata
            .get("ownerReferences")
            .and_then(Value::as_array)
            .map(|owners| {
                owners
                    .iter()
                    .filter_map(|o| Some(o.get("uid")?.as_str()?.into()))
                    .collect()
            })
            .unwrap_or_default();
        // Serializing a `Value` we just parsed cannot fail: keys are strings.
        let json = serde_json::to_vec(&value)
            .unwrap_or_default()
            .into_boxed_slice();
        Ok(StoredObject {
            key,
            uid,
            resource_version,
            labels: labels.into_boxed_slice(),
            owner_uids,
            json,
        })
    }

    /// Namespace and name.
    pub fn key(&self) -> &ObjectKey {
        &self.key
    }

    /// The namespace, empty for cluster-scoped objects.
    pub fn namespace(&self) -> &str {
        self.key.namespace()
    }

    /// `metadata.name`.
    pub fn name(&self) -> &str {
        self.key.name()
    }

    /// `metadata.uid`.
    pub fn uid(&self) -> &str {
        &self.uid
    }

    /// `metadata.resourceVersion`.
    pub fn resource_version(&self) -> &str {
        &self.resource_version
    }

    /// The value of one label.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.labels
            .binary_search_by(|(k, _)| (**k).cmp(key))
            .ok()
            .map(|i| &*self.labels[i].1)
    }

    /// All labels, sorted by key.
    pub fn labels(&self) -> impl Iterator<Item = (&str, &str)> {
        self.labels.iter().map(|(k, v)| (&**k, &**v))
    }

    /// UIDs of `metadata.ownerReferences`.
    pub fn owner_uids(&self) -> impl Iterator<Item = &str> {
        self.owner_uids.iter().map(|u| &**u)
    }

    /// The object as compact JSON.
    pub fn json(&self) -> &[u8] {
        &self.json
    }

    /// The object parsed again, for conditions on arbitrary fields.
    pub fn to_value(&self) -> Value {
        // The bytes were produced by serde_json from a valid `Value`.
        serde_json::from_slice(&self.json).unwrap_or(Value::Null)
    }

    /// Bytes this object holds on the heap, for the memory figures.
    pub fn heap_bytes(&self) -> usize {
        let labels: usize = self
            .labels
            .iter()
            .map(|(k, v)| k.len() + v.len() + 32)
            .sum();
        let owners: usize = self.owner_uids.iter().map(|u| u.len() + 16).sum();
        self.json.len() + self.uid.len() + self.resource_version.len() + labels + owners
    }
}

impl fmt::Debug for StoredObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredObject")
            .field("key", &self.key)
            .field("resource_version", &self.resource_version)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod() -> Value {
        json!({
            "metadata": {
                "name": "web-1", "namespace": "shop", "uid": "u1", "resourceVersion": "42",
                "labels": {"tier": "front", "app": "web"},
                "ownerReferences": [{"uid": "rs-1", "kind": "ReplicaSet", "name": "web"}],
                "managedFields": [{"manager": "kubectl"}]
            },
            "spec": {"nodeName": "node-a"}
        })
    }

    #[test]
    fn fills_kind_and_strips_managed_fields() {
        let gvk = Gvk::new("", "v1", "Pod");
        let o = StoredObject::from_value(pod(), &gvk, false).unwrap();
        let v = o.to_value();
        assert_eq!(v["kind"], "Pod");
        assert_eq!(v["apiVersion"], "v1");
        assert!(v["metadata"].get("managedFields").is_none());
        assert_eq!(o.key().to_string(), "shop/web-1");
        assert_eq!((o.uid(), o.resource_version()), ("u1", "42"));
        assert_eq!(o.label("app"), Some("web"));
        assert_eq!(o.label("nope"), None);
        assert_eq!(
            o.labels().map(|(k, _)| k).collect::<Vec<_>>(),
            ["app", "tier"]
        );
        assert_eq!(o.owner_uids().collect::<Vec<_>>(), ["rs-1"]);

        let kept = StoredObject::from_value(pod(), &gvk, true).unwrap();
        assert!(kept.to_value()["metadata"]["managedFields"].is_array());
    }

    #[test]
    fn keeps_existing_kind_and_rejects_nameless() {
        let gvk = Gvk::new("apps", "v1", "Deployment");
        let mut v = pod();
        v["kind"] = json!("Other");
        let o = StoredObject::from_value(v, &gvk, false).unwrap();
        assert_eq!(o.to_value()["kind"], "Other");
        assert_eq!(o.to_value()["apiVersion"], "apps/v1");
        let err = StoredObject::from_value(json!({"metadata": {}}), &gvk, false).unwrap_err();
        assert_eq!(err, ObjectError::NoName);
        let err = StoredObject::from_value(json!([1]), &gvk, false).unwrap_err();
        assert_eq!(err, ObjectError::NotAnObject);
    }

    #[test]
    fn keys_sort_by_namespace_then_name() {
        let mut keys = [
            ObjectKey::new("a-b", "x"),
            ObjectKey::new("a", "z"),
            ObjectKey::new("", "node"),
        ];
        keys.sort();
        let shown: Vec<String> = keys.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["node", "a/z", "a-b/x"]);
    }
}
