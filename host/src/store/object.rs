//! One cached object: its compact JSON bytes (compressed once its cache has
//! trained a dictionary, see [`super::codec`]) plus the few parsed fields
//! that indexes and queries need.
//!
//! Keeping the serialized bytes rather than a `serde_json::Value` is what keeps
//! memory close to the objects' JSON size: a parsed `Value` of a 6 KB Pod takes
//! about 53 KB of heap in some 470 allocations (every small map becomes a
//! `BTreeMap` node of several hundred bytes), while GRW keeps such a Pod,
//! compressed, in 0.41 times its JSON. Answers are written by copying (or
//! decompressing) the bytes, so a list never re-serializes objects. See
//! BENCHMARKS.md.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde_json::Value;

mod header;
mod ingest;
mod managers;

pub use managers::{Managed, Managers, Writer};

use super::codec::{Body, Dictionary};
use super::fields::FieldPaths;
use crate::gvk::Gvk;
use crate::json_text::TopLevel;
use crate::selectors::field::FieldValue;
use header::Header;

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

    /// Bounds of the keys of `namespace`'s objects, which sort together:
    /// from `namespace` and the separator (below every name) up to, not
    /// including, `namespace` and the next byte (above every name, which
    /// holds no NUL), which no other namespace's keys fall between.
    pub fn namespace_range(namespace: &str) -> std::ops::Range<ObjectKey> {
        ObjectKey(format!("{namespace}\0").into())..ObjectKey(format!("{namespace}\u{1}").into())
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
#[derive(Debug, Clone, thiserror::Error)]
pub enum ObjectError {
    /// The value is not a JSON object.
    #[error("expected a JSON object")]
    NotAnObject,
    /// `metadata.name` is missing or empty.
    #[error("object has no metadata.name")]
    NoName,
    /// The text is not JSON.
    #[error("not valid JSON")]
    InvalidJson(#[source] Arc<serde_json::Error>),
}

impl PartialEq for ObjectError {
    fn eq(&self, other: &Self) -> bool {
        matches!(
            (self, other),
            (ObjectError::NotAnObject, ObjectError::NotAnObject)
                | (ObjectError::NoName, ObjectError::NoName)
                | (ObjectError::InvalidJson(_), ObjectError::InvalidJson(_))
        )
    }
}

impl Eq for ObjectError {}

/// An object as the cache keeps it. Immutable; shared through `Arc`.
pub struct StoredObject {
    key: ObjectKey,
    /// uid, resourceVersion, labels, owners' uids.
    header: Header,
    body: Body,
    /// Where the top-level members of the JSON are, for reading one field
    /// without parsing the whole text.
    index: TopLevel,
    /// The values of the fields its cache indexes, in the order of its
    /// [`FieldPaths`]; empty until [`StoredObject::index_fields`].
    fields: Box<[FieldValue]>,
    /// Who wrote it, from `metadata.managedFields` when read with
    /// [`Ingest::who`]; empty otherwise.
    managers: Managers,
}

/// How an object is read into the cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Ingest {
    /// Keep `metadata.managedFields` in the stored text.
    pub keep_managed_fields: bool,
    /// Summarize `metadata.managedFields` ([`StoredObject::managers`]) for
    /// the journal.
    pub who: bool,
}

impl From<bool> for Ingest {
    /// Whether to keep managed fields; no summary.
    fn from(keep_managed_fields: bool) -> Ingest {
        Ingest {
            keep_managed_fields,
            who: false,
        }
    }
}

impl StoredObject {
    /// Prepares an object for the cache: fills in `kind`/`apiVersion` (list
    /// items from the API server lack them), strips `metadata.managedFields`
    /// unless asked to keep them, and serializes it compactly.
    pub fn from_value(
        mut value: Value,
        gvk: &Gvk,
        ingest: impl Into<Ingest>,
    ) -> Result<StoredObject, ObjectError> {
        let ingest = ingest.into();
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
        let managers = match metadata.get("managedFields") {
            Some(fields) if ingest.who => Managers::from_value(fields),
            _ => Managers::default(),
        };
        if !ingest.keep_managed_fields {
            metadata.remove("managedFields");
        }
        let text = |key: &str| metadata.get(key).and_then(Value::as_str).unwrap_or("");
        let name = text("name");
        if name.is_empty() {
            return Err(ObjectError::NoName);
        }
        let key = ObjectKey::new(text("namespace"), name);
        let labels: Vec<(&str, &str)> = metadata
            .get("labels")
            .and_then(Value::as_object)
            .map(|labels| {
                labels
                    .iter()
                    .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
                    .collect()
            })
            .unwrap_or_default();
        let owner_uids = metadata
            .get("ownerReferences")
            .and_then(Value::as_array)
            .map(|owners| {
                owners
                    .iter()
                    .filter_map(|o| o.get("uid")?.as_str())
                    .collect()
            })
            .unwrap_or_default();
        let header = Header::new(text("uid"), text("resourceVersion"), labels, owner_uids);
        let (json, index) = match value.as_object() {
            Some(map) => serialize_indexed(map),
            None => return Err(ObjectError::NotAnObject),
        };
        Ok(StoredObject {
            key,
            header,
            body: Body::Plain(json.into_boxed_slice()),
            index,
            fields: Box::default(),
            managers,
        })
    }

    /// An object from JSON text that GRW wrote earlier (a stored object's
    /// [`json`](StoredObject::json), e.g. read back from the notification
    /// outbox), without building a `serde_json::Value`: the header is read
    /// from `metadata` alone and the index by one scan. Text GRW did not
    /// write (not compact, or without `kind` and `apiVersion`) takes the
    /// slower way through [`StoredObject::from_value`], managed fields kept.
    pub fn from_json(json: &[u8], gvk: &Gvk) -> Result<StoredObject, ObjectError> {
        let slow = || {
            let value: Value =
                serde_json::from_slice(json).map_err(|e| ObjectError::InvalidJson(Arc::new(e)))?;
            StoredObject::from_value(value, gvk, true)
        };
        let Some(index) = TopLevel::scan(json) else {
            return slow();
        };
        let has_string = |key: &str| {
            index
                .get(json, &[key])
                .is_some_and(|v| v.first() == Some(&b'"'))
        };
        if !has_string("kind") || !has_string("apiVersion") {
            return slow();
        }
        let Some(metadata) = index.get(json, &["metadata"]) else {
            return Err(ObjectError::NoName);
        };
        let Ok(metadata) = serde_json::from_slice::<Metadata>(metadata) else {
            return slow();
        };
        let (key, header) = metadata.read()?;
        Ok(StoredObject {
            key,
            header,
            body: Body::Plain(json.into()),
            index,
            fields: Box::default(),
            managers: Managers::default(),
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
        self.header.uid()
    }

    /// `metadata.resourceVersion`.
    pub fn resource_version(&self) -> &str {
        self.header.resource_version()
    }

    /// Who wrote it (see [`Managers`]); empty unless read with
    /// [`Ingest::who`].
    pub fn managers(&self) -> &Managers {
        &self.managers
    }

    /// The value of one label.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.header.label(key)
    }

    /// All labels, sorted by key.
    pub fn labels(&self) -> impl Iterator<Item = (&str, &str)> {
        self.header.labels()
    }

    /// UIDs of `metadata.ownerReferences`.
    pub fn owner_uids(&self) -> impl Iterator<Item = &str> {
        self.header.owner_uids()
    }

    /// The object as compact JSON: borrowed, or decompressed (a few
    /// microseconds for a Pod). To write it into an answer, prefer
    /// [`write_json`](StoredObject::write_json).
    pub fn json(&self) -> Cow<'_, [u8]> {
        self.body.json()
    }

    /// The object's compact JSON as a string (for plugins, which take text).
    pub fn json_string(&self) -> String {
        match self.json() {
            Cow::Borrowed(json) => String::from_utf8_lossy(json).into_owned(),
            // serde_json wrote it: valid UTF-8, taken without a copy.
            Cow::Owned(json) => String::from_utf8(json)
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
        }
    }

    /// Appends the object's compact JSON to `out`.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        self.body.write_to(out);
    }

    /// Length of the object's compact JSON, without decompressing it.
    pub fn json_len(&self) -> usize {
        self.body.len()
    }

    /// The value at `path` (object keys, or array indexes in decimal; the
    /// empty path is the whole object) as compact JSON text; `None` when
    /// nothing is there. Reads only the top-level member the path starts in.
    pub fn get<S: AsRef<str>>(&self, path: &[S]) -> Option<Cow<'_, [u8]>> {
        match self.body.json() {
            Cow::Borrowed(json) => self.index.get(json, path).map(Cow::Borrowed),
            Cow::Owned(json) => self
                .index
                .get(&json, path)
                .map(|value| Cow::Owned(value.to_vec())),
        }
    }

    /// The top-level members of `json` (this object's text as
    /// [`json`](StoredObject::json) returned it) as `(quoted key, value)`
    /// text, found from the object's index without a scan.
    pub(crate) fn members<'j>(&self, json: &'j [u8]) -> impl Iterator<Item = (&'j [u8], &'j [u8])> {
        self.index.members(json)
    }

    /// [`get`](StoredObject::get) in `json`, this object's text as
    /// [`json`](StoredObject::json) returned it: for reading several
    /// fields with one decompression.
    pub fn field<'j, S: AsRef<str>>(&self, json: &'j [u8], path: &[S]) -> Option<&'j [u8]> {
        self.index.get(json, path)
    }

    /// The value of one annotation, if it is a string.
    pub fn annotation(&self, key: &str) -> Option<String> {
        let text = self.get(&["metadata", "annotations", key])?;
        serde_json::from_slice::<String>(&text).ok()
    }

    /// The annotations whose values are strings, sorted by key.
    pub fn annotations(&self) -> Vec<(String, String)> {
        self.get(&["metadata", "annotations"])
            .and_then(|text| serde_json::from_slice::<BTreeMap<String, Value>>(&text).ok())
            .map(|map| {
                map.into_iter()
                    .filter_map(|(k, v)| match v {
                        Value::String(s) => Some((k, s)),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The object parsed again, for conditions on arbitrary fields.
    pub fn to_value(&self) -> Value {
        // The bytes were produced by serde_json from a valid `Value`.
        serde_json::from_slice(&self.json()).unwrap_or(Value::Null)
    }

    /// The value of the `slot`th field its cache indexes (see
    /// [`FieldPaths::slot`]), read when the object entered the cache.
    pub fn indexed_field(&self, slot: usize) -> Option<&FieldValue> {
        self.fields.get(slot)
    }

    /// Reads the values of the fields `paths` names, for the cache's field
    /// indexes: once, before the object is compressed or, if it already
    /// is, with one decompression. An object read for these paths before
    /// is left as it is.
    pub fn index_fields(&mut self, paths: &FieldPaths) {
        if paths.is_empty() || self.fields.len() == paths.len() {
            return;
        }
        let json = self.body.json();
        let fields = paths
            .iter()
            .map(|path| FieldValue::from_json(self.index.get(&json, path)))
            .collect();
        drop(json);
        self.fields = fields;
    }

    /// Bytes this object holds on the heap, for the memory figures.
    pub fn heap_bytes(&self) -> usize {
        self.body.heap_bytes()
            + self.index.heap_bytes()
            + self.header.heap_bytes()
            + self.fields.iter().map(field_heap_bytes).sum::<usize>()
            + self.managers.heap_bytes()
    }
}

impl StoredObject {
    pub(super) fn body(&self) -> &Body {
        &self.body
    }

    pub(super) fn body_mut(&mut self) -> &mut Body {
        &mut self.body
    }

    /// The object's JSON as the cache holds it compressed: the bytes, the
    /// JSON's length and the dictionary ([`Dictionary::decompress`] reads
    /// them back); `None` while the cache holds it as it is.
    pub fn packed(&self) -> Option<(&[u8], u32, &Arc<Dictionary>)> {
        self.body.packed()
    }

    /// The dictionary the object was compressed with, if it was.
    pub fn dictionary(&self) -> Option<&Dictionary> {
        self.body.dictionary().map(|d| &**d)
    }
}

fn field_heap_bytes(value: &FieldValue) -> usize {
    std::mem::size_of::<FieldValue>()
        + match value {
            FieldValue::Text(text) | FieldValue::Number(text) => text.len(),
            FieldValue::Composite => 0,
        }
}

/// Compact JSON of `map` (as `serde_json::to_vec` writes it) and the index
/// of its top-level members, made in the same pass.
fn serialize_indexed(map: &serde_json::Map<String, Value>) -> (Vec<u8>, TopLevel) {
    let mut json = Vec::with_capacity(512);
    let mut offsets = Vec::with_capacity(map.len() * 2);
    json.push(b'{');
    for (i, (key, value)) in map.iter().enumerate() {
        if i > 0 {
            json.push(b',');
        }
        offsets.push(json.len() as u32);
        // Serializing strings and parsed values into a Vec cannot fail.
        let _ = serde_json::to_writer(&mut json, key);
        json.push(b':');
        offsets.push(json.len() as u32);
        let _ = serde_json::to_writer(&mut json, value);
    }
    json.push(b'}');
    (json, TopLevel::new(offsets))
}

/// The parts of `metadata` the header keeps, read without building a `Value`.
#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Metadata {
    name: Option<Value>,
    namespace: Option<Value>,
    uid: Option<Value>,
    resource_version: Option<Value>,
    labels: Option<BTreeMap<String, Value>>,
    owner_references: Option<Vec<OwnerReference>>,
}

impl Metadata {
    /// The key and header of the object this is the metadata of.
    fn read(&self) -> Result<(ObjectKey, Header), ObjectError> {
        fn text(v: &Option<Value>) -> &str {
            v.as_ref().and_then(Value::as_str).unwrap_or("")
        }
        let name = text(&self.name);
        if name.is_empty() {
            return Err(ObjectError::NoName);
        }
        let key = ObjectKey::new(text(&self.namespace), name);
        let labels = self
            .labels
            .iter()
            .flatten()
            .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
            .collect();
        let owner_uids = self
            .owner_references
            .iter()
            .flatten()
            .filter_map(|o| o.uid.as_ref()?.as_str())
            .collect();
        let header = Header::new(
            text(&self.uid),
            text(&self.resource_version),
            labels,
            owner_uids,
        );
        Ok((key, header))
    }
}

#[derive(serde::Deserialize)]
struct OwnerReference {
    #[serde(default)]
    uid: Option<Value>,
}

impl fmt::Debug for StoredObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredObject")
            .field("key", &self.key)
            .field("resource_version", &self.resource_version())
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
    fn from_json_reads_back_what_from_value_wrote() {
        let gvk = Gvk::new("", "v1", "Pod");
        let mut v = pod();
        v["metadata"]["annotations"] = json!({"note": "a \"b\"", "n": 1});
        v["status"] = json!({"phase": "Running"});
        let written = StoredObject::from_value(v, &gvk, true).unwrap();
        let read = StoredObject::from_json(&written.json(), &gvk).unwrap();
        assert_eq!(read.json(), written.json());
        assert_eq!(read.key(), written.key());
        assert_eq!((read.uid(), read.resource_version()), ("u1", "42"));
        assert_eq!(
            read.labels().collect::<Vec<_>>(),
            written.labels().collect::<Vec<_>>()
        );
        assert_eq!(read.owner_uids().collect::<Vec<_>>(), ["rs-1"]);
        assert_eq!(read.heap_bytes(), written.heap_bytes());
        for o in [&read, &written] {
            assert_eq!(
                o.get(&["status", "phase"]).as_deref(),
                Some(&b"\"Running\""[..])
            );
            assert_eq!(
                o.get(&["spec", "nodeName"]).as_deref(),
                Some(&b"\"node-a\""[..])
            );
            assert_eq!(o.get(&["spec", "missing"]).as_deref(), None);
            assert_eq!(o.annotation("note").as_deref(), Some("a \"b\""));
            assert_eq!(o.annotation("n"), None);
            assert_eq!(
                o.annotations(),
                [("note".to_string(), "a \"b\"".to_string())]
            );
        }
    }

    #[test]
    fn from_json_takes_other_text_the_slow_way_and_rejects_garbage() {
        let gvk = Gvk::new("apps", "v1", "Deployment");
        // Not compact, no kind: parsed, filled in, written compactly.
        let o = StoredObject::from_json(
            br#"{ "metadata": {"name": "web", "namespace": "shop"}, "spec": {"replicas": 2} }"#,
            &gvk,
        )
        .unwrap();
        assert_eq!(o.key().to_string(), "shop/web");
        assert_eq!(o.get(&["kind"]).as_deref(), Some(&b"\"Deployment\""[..]));
        assert_eq!(o.get(&["spec", "replicas"]).as_deref(), Some(&b"2"[..]));
        assert!(matches!(
            StoredObject::from_json(b"{nope", &gvk),
            Err(ObjectError::InvalidJson(_))
        ));
        assert_eq!(
            StoredObject::from_json(br#"{"apiVersion":"v1","kind":"Pod","metadata":{}}"#, &gvk)
                .unwrap_err(),
            ObjectError::NoName
        );
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
