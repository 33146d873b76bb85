//! The object store: current objects per resource, the global resourceVersion
//! counter, the compaction point and a per-resource event log.
//!
//! Objects are kept serialised *without* `kind`/`apiVersion` (the form list
//! items take); the kind and apiVersion of the version a client asked for are
//! added when an object is sent. Every version of every object stays in the log
//! (shared with the current map), so a list continuation can be answered from
//! the state at its snapshot resourceVersion, like etcd does.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use anyhow::{Context, anyhow, bail};
use bytes::Bytes;
use serde_json::{Map, Value, json};

use super::discovery::{ResourceDef, group_version};
use super::util::{name_suffix, new_uid, now_rfc3339};

/// Identifies a resource independent of version: `(group, plural)`.
pub(crate) type ResourceKey = (String, String);

/// Identifies an object in a resource: `(namespace or "", name)`. Its order is
/// the order of etcd keys, hence of list results.
pub(crate) type ObjectKey = (String, String);

/// One stored version of an object.
#[derive(Debug)]
pub(crate) struct StoredObject {
    /// Namespace, empty for cluster-scoped objects.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
    /// The object as JSON, without `kind` and `apiVersion`; always a non-empty JSON object.
    pub body: Bytes,
}

impl StoredObject {
    fn from_value(value: &Value) -> anyhow::Result<StoredObject> {
        let meta = &value["metadata"];
        let labels = meta["labels"]
            .as_object()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                    .collect()
            })
            .unwrap_or_default();
        Ok(StoredObject {
            namespace: meta["namespace"].as_str().unwrap_or_default().to_string(),
            name: meta["name"].as_str().unwrap_or_default().to_string(),
            labels,
            body: Bytes::from(serde_json::to_vec(value).context("serialising object")?),
        })
    }

    #[cfg(test)]
    pub(crate) fn for_test(
        namespace: &str,
        name: &str,
        labels: BTreeMap<String, String>,
        body: &'static [u8],
    ) -> StoredObject {
        StoredObject {
            namespace: namespace.to_string(),
            name: name.to_string(),
            labels,
            body: Bytes::from_static(body),
        }
    }

    /// The key of this object in its resource.
    pub(crate) fn key(&self) -> ObjectKey {
        (self.namespace.clone(), self.name.clone())
    }

    /// The object as a JSON value, without `kind`/`apiVersion`.
    pub(crate) fn value(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// The object as a JSON value with the given `kind` and `apiVersion` first.
    pub(crate) fn typed_value(&self, kind: &str, api_version: &str) -> Value {
        let mut map = Map::new();
        map.insert("kind".into(), json!(kind));
        map.insert("apiVersion".into(), json!(api_version));
        if let Value::Object(rest) = self.value() {
            map.extend(rest);
        }
        Value::Object(map)
    }

    /// Serialised JSON with `kind`/`apiVersion` spliced in front of the stored fields.
    pub(crate) fn typed_json(&self, kind: &str, api_version: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.body.len() + 64);
        write_typed(&mut out, &self.body, kind, api_version);
        out
    }

    /// A field selector value: the value at a dotted path rendered as a
    /// string; empty when absent or null.
    pub(crate) fn field_value(&self, path: &str) -> String {
        let value = self.value();
        let mut cur = &value;
        for part in path.split('.') {
            cur = &cur[part];
        }
        match cur {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        }
    }
}

/// Appends `{"kind":K,"apiVersion":AV,<fields of body>}` to `out`.
pub(crate) fn write_typed(out: &mut Vec<u8>, body: &[u8], kind: &str, api_version: &str) {
    out.extend_from_slice(b"{\"kind\":");
    out.extend_from_slice(json!(kind).to_string().as_bytes());
    out.extend_from_slice(b",\"apiVersion\":");
    out.extend_from_slice(json!(api_version).to_string().as_bytes());
    if body.len() > 2 {
        out.push(b',');
        out.extend_from_slice(&body[1..]);
    } else {
        out.push(b'}');
    }
}

/// The type of a logged change.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EventType {
    /// The object was created.
    Added,
    /// The object was updated.
    Modified,
    /// The object was deleted; the event carries its last state.
    Deleted,
}

impl EventType {
    /// The wire name, e.g. `ADDED`.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One change in a resource's log.
#[derive(Debug, Clone)]
pub(crate) struct LoggedEvent {
    /// The resourceVersion of the change.
    pub rv: u64,
    /// What happened.
    pub kind: EventType,
    /// The object after the change (for a delete: its last state, stamped with the delete's RV).
    pub object: Arc<StoredObject>,
    /// The object before the change, if it existed.
    pub previous: Option<Arc<StoredObject>>,
}

/// Everything about one resource.
#[derive(Debug)]
pub(crate) struct ResourceStore {
    /// Its definition (kind, versions, scope).
    pub def: ResourceDef,
    /// Whether it is currently served (a removed CRD's resource is not).
    pub served: bool,
    /// Bumped whenever the resource stops being served, so watches can end.
    pub epoch: u64,
    /// Current objects.
    pub objects: BTreeMap<ObjectKey, Arc<StoredObject>>,
    /// Every change, in resourceVersion order.
    pub log: Vec<LoggedEvent>,
}

impl ResourceStore {
    fn new(def: ResourceDef) -> Self {
        ResourceStore {
            def,
            served: true,
            epoch: 0,
            objects: BTreeMap::new(),
            log: Vec::new(),
        }
    }

    /// Index of the first log entry with a resourceVersion greater than `rv`.
    pub(crate) fn log_after(&self, rv: u64) -> usize {
        self.log.partition_point(|e| e.rv <= rv)
    }

    /// The objects as they were at `rv`: the current ones when nothing
    /// changed since (no copy: at a million Pods, a copy per list page would
    /// cost more than the page), else rebuilt from the log.
    pub(crate) fn objects_at(&self, rv: u64) -> Cow<'_, BTreeMap<ObjectKey, Arc<StoredObject>>> {
        if self.log.last().is_none_or(|e| e.rv <= rv) {
            return Cow::Borrowed(&self.objects);
        }
        let mut objects = BTreeMap::new();
        for event in &self.log[..self.log_after(rv)] {
            match event.kind {
                EventType::Deleted => {
                    objects.remove(&event.object.key());
                }
                _ => {
                    objects.insert(event.object.key(), event.object.clone());
                }
            }
        }
        Cow::Owned(objects)
    }
}

/// What a change does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Change {
    /// Create or replace.
    Upsert,
    /// Create; fails if the object exists.
    Create,
    /// Replace; fails if the object does not exist.
    Update,
    /// Delete; fails if the object does not exist.
    Delete,
}

/// The whole object store.
#[derive(Debug)]
pub(crate) struct Store {
    /// The latest resourceVersion handed out.
    pub rv: u64,
    /// Watches from, and continuations of lists at, resourceVersions below this get 410.
    pub compacted_rv: u64,
    /// All resources ever defined, served or not.
    pub resources: BTreeMap<ResourceKey, ResourceStore>,
}

impl Store {
    /// A store serving `defs`, with no objects.
    pub(crate) fn new(defs: Vec<ResourceDef>) -> Store {
        let resources = defs
            .into_iter()
            .map(|d| ((d.group.clone(), d.plural.clone()), ResourceStore::new(d)))
            .collect();
        Store {
            rv: 0,
            compacted_rv: 0,
            resources,
        }
    }

    /// Definitions of all served resources.
    pub(crate) fn served_defs(&self) -> impl Iterator<Item = &ResourceDef> {
        self.resources.values().filter(|r| r.served).map(|r| &r.def)
    }

    /// The served resource with this plural in `group`/`version`.
    pub(crate) fn by_path(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<&ResourceStore> {
        self.resources
            .get(&(group.to_string(), plural.to_string()))
            .filter(|r| r.served && r.def.versions.iter().any(|v| v == version))
    }

    /// The key of the served resource for `apiVersion` + `kind`.
    pub(crate) fn by_kind(&self, api_version: &str, kind: &str) -> Option<ResourceKey> {
        let (group, version) = split_api_version(api_version);
        self.resources
            .iter()
            .find(|(_, r)| {
                r.served
                    && r.def.group == group
                    && r.def.kind == kind
                    && r.def.versions.iter().any(|v| v == version)
            })
            .map(|(k, _)| k.clone())
    }

    /// Applies one change. `keep_rv` is used as the new resourceVersion when it
    /// is above the current one; otherwise the next resourceVersion is used.
    /// Returns the new resourceVersion.
    pub(crate) fn apply(
        &mut self,
        change: Change,
        object: Value,
        keep_rv: Option<u64>,
    ) -> anyhow::Result<u64> {
        let Value::Object(mut map) = object else {
            bail!("object must be a JSON object");
        };
        let api_version =
            take_string(&mut map, "apiVersion").context("object has no apiVersion")?;
        let kind = take_string(&mut map, "kind").context("object has no kind")?;
        let key = self
            .by_kind(&api_version, &kind)
            .ok_or_else(|| anyhow!("no served resource for {api_version} {kind}"))?;
        let resource = self.resources.get(&key).expect("resolved above");
        let namespaced = resource.def.namespaced;

        let meta = map
            .entry("metadata")
            .or_insert_with(|| json!({}))
            .as_object_mut()
            .context("metadata must be an object")?;
        if meta
            .get("name")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            match meta.get("generateName").and_then(Value::as_str) {
                Some(prefix) if change != Change::Delete => {
                    let name = format!("{prefix}{}", name_suffix());
                    meta.insert("name".into(), json!(name));
                }
                _ => bail!("{kind} has no metadata.name"),
            }
        }
        if namespaced {
            if meta
                .get("namespace")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                bail!("namespaced {kind} has no metadata.namespace");
            }
        } else {
            meta.remove("namespace");
        }
        let object_key = (
            meta.get("namespace")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            meta["name"].as_str().unwrap_or_default().to_string(),
        );
        let previous = resource.objects.get(&object_key).cloned();
        let event_type = match (change, &previous) {
            (Change::Delete, None) | (Change::Update, None) => {
                bail!("{kind} {}/{} not found", object_key.0, object_key.1)
            }
            (Change::Create, Some(_)) => {
                bail!("{kind} {}/{} already exists", object_key.0, object_key.1)
            }
            (Change::Delete, Some(_)) => EventType::Deleted,
            (_, Some(_)) => EventType::Modified,
            (_, None) => EventType::Added,
        };

        let rv = match keep_rv {
            Some(r) if r > self.rv => r,
            _ => self.rv + 1,
        };
        let previous_meta = previous.as_ref().map(|p| p.value()["metadata"].clone());
        if meta
            .get("uid")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            let uid = previous_meta
                .as_ref()
                .and_then(|m| m["uid"].as_str().map(str::to_string))
                .unwrap_or_else(new_uid);
            meta.insert("uid".into(), json!(uid));
        }
        if meta.get("creationTimestamp").is_none_or(Value::is_null) {
            let ts = previous_meta
                .as_ref()
                .and_then(|m| m["creationTimestamp"].as_str().map(str::to_string))
                .unwrap_or_else(now_rfc3339);
            meta.insert("creationTimestamp".into(), json!(ts));
        }
        meta.insert("resourceVersion".into(), json!(rv.to_string()));

        let stored = Arc::new(StoredObject::from_value(&Value::Object(map))?);
        let resource = self.resources.get_mut(&key).expect("resolved above");
        if event_type == EventType::Deleted {
            resource.objects.remove(&object_key);
        } else {
            resource.objects.insert(object_key, stored.clone());
        }
        resource.log.push(LoggedEvent {
            rv,
            kind: event_type,
            object: stored,
            previous,
        });
        self.rv = rv;
        Ok(rv)
    }

    /// Deletes a stored object, sending its current state as the DELETED object.
    pub(crate) fn delete(
        &mut self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> anyhow::Result<u64> {
        let key = self
            .by_kind(api_version, kind)
            .ok_or_else(|| anyhow!("no served resource for {api_version} {kind}"))?;
        let object_key = (namespace.unwrap_or_default().to_string(), name.to_string());
        let current = self.resources[&key]
            .objects
            .get(&object_key)
            .ok_or_else(|| anyhow!("{kind} {}/{} not found", object_key.0, object_key.1))?
            .clone();
        let object = current.typed_value(kind, api_version);
        self.apply(Change::Delete, object, None)
    }

    /// One current object, typed for `apiVersion`.
    pub(crate) fn get(
        &self,
        api_version: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        let key = self.by_kind(api_version, kind)?;
        let object_key = (namespace.unwrap_or_default().to_string(), name.to_string());
        self.resources[&key]
            .objects
            .get(&object_key)
            .map(|o| o.typed_value(kind, api_version))
    }

    /// All current objects of a kind, typed for `apiVersion`, in namespace/name order.
    pub(crate) fn objects(&self, api_version: &str, kind: &str) -> Vec<Value> {
        let Some(key) = self.by_kind(api_version, kind) else {
            return Vec::new();
        };
        self.resources[&key]
            .objects
            .values()
            .map(|o| o.typed_value(kind, api_version))
            .collect()
    }

    /// Serves a CRD-backed resource (or adds a version to one), and creates or
    /// updates its `CustomResourceDefinition` object.
    pub(crate) fn install_crd(&mut self, def: ResourceDef) -> anyhow::Result<u64> {
        let key = (def.group.clone(), def.plural.clone());
        let resource = self
            .resources
            .entry(key)
            .or_insert_with(|| ResourceStore::new(def.clone()));
        if !resource.served {
            resource.def = def.clone();
            resource.served = true;
        }
        for v in &def.versions {
            if !resource.def.versions.contains(v) {
                resource.def.versions.push(v.clone());
            }
        }
        let crd = crd_object(&resource.def);
        self.apply(Change::Upsert, crd, None)
    }

    /// Deletes every object of a CRD-backed resource, then its
    /// `CustomResourceDefinition`, then stops serving it. Returns `false` if
    /// there is no such served CRD-backed resource.
    pub(crate) fn uninstall_crd(&mut self, group: &str, plural: &str) -> anyhow::Result<bool> {
        let key = (group.to_string(), plural.to_string());
        let Some(resource) = self.resources.get(&key).filter(|r| r.served && r.def.crd) else {
            return Ok(false);
        };
        let def = resource.def.clone();
        let api_version = def.api_version(def.preferred_version());
        let names: Vec<ObjectKey> = resource.objects.keys().cloned().collect();
        for (ns, name) in names {
            let ns = (!ns.is_empty()).then_some(ns.as_str());
            self.delete(&api_version, &def.kind, ns, &name)?;
        }
        let crd_name = format!("{plural}.{group}");
        if self
            .get(
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                None,
                &crd_name,
            )
            .is_some()
        {
            self.delete(
                "apiextensions.k8s.io/v1",
                "CustomResourceDefinition",
                None,
                &crd_name,
            )?;
        }
        let resource = self.resources.get_mut(&key).expect("checked above");
        resource.served = false;
        resource.epoch += 1;
        Ok(true)
    }
}

/// Splits `apps/v1` into `("apps", "v1")` and `v1` into `("", "v1")`.
pub(crate) fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

fn take_string(map: &mut Map<String, Value>, field: &str) -> Option<String> {
    match map.remove(field) {
        Some(Value::String(s)) if !s.is_empty() => Some(s),
        _ => None,
    }
}

/// A `CustomResourceDefinition` object describing `def`.
fn crd_object(def: &ResourceDef) -> Value {
    let names = json!({
        "kind": def.kind,
        "listKind": def.list_kind(),
        "plural": def.plural,
        "singular": def.singular,
        "shortNames": def.short_names,
        "categories": def.categories,
    });
    let storage = def.versions.first().cloned().unwrap_or_default();
    let versions: Vec<Value> = def
        .versions
        .iter()
        .map(|v| {
            let mut version = json!({
                "name": v,
                "served": true,
                "storage": *v == storage,
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "x-kubernetes-preserve-unknown-fields": true,
                }},
            });
            if !def.printer_columns.is_empty() {
                version["additionalPrinterColumns"] = json!(def.printer_columns);
            }
            version
        })
        .collect();
    let condition = |t: &str, reason: &str, message: &str| {
        json!({
            "type": t,
            "status": "True",
            "lastTransitionTime": now_rfc3339(),
            "reason": reason,
            "message": message,
        })
    };
    json!({
        "apiVersion": group_version("apiextensions.k8s.io", "v1"),
        "kind": "CustomResourceDefinition",
        "metadata": {"name": format!("{}.{}", def.plural, def.group), "generation": 1},
        "spec": {
            "group": def.group,
            "names": names,
            "scope": if def.namespaced { "Namespaced" } else { "Cluster" },
            "versions": versions,
            "conversion": {"strategy": "None"},
        },
        "status": {
            "acceptedNames": names,
            "conditions": [
                condition("NamesAccepted", "NoConflicts", "no conflicts found"),
                condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
            ],
            "storedVersions": [storage],
        },
    })
}

#[cfg(test)]
mod tests {
    use super::super::discovery::builtin_resources;
    use super::*;

    fn cm(name: &str, data: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": name, "namespace": "ns", "labels": {"a": "b"}},
               "data": {"k": data}})
    }

    #[test]
    fn apply_assigns_rv_uid_and_logs() {
        let mut store = Store::new(builtin_resources());
        let rv1 = store.apply(Change::Create, cm("x", "1"), None).unwrap();
        let rv2 = store
            .apply(Change::Upsert, cm("x", "2"), Some(100))
            .unwrap();
        let rv3 = store.apply(Change::Create, cm("y", "1"), Some(50)).unwrap();
        assert_eq!((rv1, rv2, rv3), (1, 100, 101));
        assert!(store.apply(Change::Create, cm("x", "3"), None).is_err());
        let x = store.get("v1", "ConfigMap", Some("ns"), "x").unwrap();
        assert_eq!(x["kind"], "ConfigMap");
        assert_eq!(x["metadata"]["resourceVersion"], "100");
        assert_eq!(x["data"]["k"], "2");
        let r = &store.resources[&(String::new(), "configmaps".to_string())];
        assert_eq!(r.log.len(), 3);
        assert_eq!(r.log[1].kind, EventType::Modified);
        let uid = |v: &Value| v["metadata"]["uid"].as_str().unwrap().to_string();
        assert_eq!(uid(&r.log[0].object.value()), uid(&x));
        assert!(!r.log[0].object.body.starts_with(b"{\"apiVersion"));
        assert_eq!(r.objects_at(1).len(), 1);
        assert_eq!(r.objects_at(100).len(), 1);
        assert_eq!(r.objects_at(101).len(), 2);
        store.delete("v1", "ConfigMap", Some("ns"), "x").unwrap();
        assert_eq!(store.objects("v1", "ConfigMap").len(), 1);
        assert!(
            store
                .apply(
                    Change::Upsert,
                    json!({"apiVersion": "v9", "kind": "ConfigMap", "metadata": {"name": "z"}}),
                    None
                )
                .is_err()
        );
    }

    #[test]
    fn typed_json_splices_kind() {
        let o = StoredObject::for_test("", "n", BTreeMap::new(), br#"{"metadata":{"name":"n"}}"#);
        let v: Value = serde_json::from_slice(&o.typed_json("Node", "v1")).unwrap();
        assert_eq!(
            v,
            json!({"kind": "Node", "apiVersion": "v1", "metadata": {"name": "n"}})
        );
    }
}
