//! Events: what happened to which object.

use std::fmt;
use std::sync::OnceLock;

use serde_json::Value;

use crate::{Error, Object};

/// What happened to an object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum EventType {
    /// The object appeared (created, or first seen).
    Added,
    /// The object changed; [`Event::old_object`] holds its previous state.
    Modified,
    /// The object is gone; [`Event::object`] holds its last state.
    Deleted,
}

impl EventType {
    /// The name Kubernetes watches use: `ADDED`, `MODIFIED` or `DELETED`.
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

impl fmt::Display for EventType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A Kubernetes group/version/kind. `group` is empty for the core group
/// (`Pod`, `ConfigMap`, ...).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gvk {
    /// API group, e.g. `apps`; empty for the core group.
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `Deployment`.
    pub kind: String,
}

impl Gvk {
    /// A group/version/kind from its parts.
    pub fn new(
        group: impl Into<String>,
        version: impl Into<String>,
        kind: impl Into<String>,
    ) -> Self {
        Self {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
        }
    }

    /// Splits an object's `apiVersion` (`apps/v1`, or `v1` for the core
    /// group) and pairs it with its `kind`.
    pub fn from_api_version(api_version: &str, kind: impl Into<String>) -> Self {
        let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
        Self::new(group, version, kind)
    }

    /// The `apiVersion` objects of this kind carry: `group/version`, or just
    /// `version` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

impl fmt::Display for Gvk {
    /// Formats as Kubernetes does in messages: `apps/v1, Kind=Deployment`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, Kind={}", self.api_version(), self.kind)
    }
}

/// One change of one object.
///
/// The public fields are a small envelope that is enough for most decisions
/// without touching the object's JSON. The object itself is parsed only when
/// [`object`](Event::object) or [`old_object`](Event::old_object) is first
/// called, and the result is kept for later calls.
///
/// Build events for unit tests with [`Event::new`], which fills the envelope
/// from the object's metadata:
///
/// ```
/// use grw_sdk::{Event, EventType};
///
/// let event = Event::new(
///     EventType::Added,
///     serde_json::json!({
///         "apiVersion": "v1",
///         "kind": "Pod",
///         "metadata": {"name": "web-0", "namespace": "shop", "labels": {"app": "web"}},
///     }),
/// );
/// assert_eq!(event.namespace, "shop");
/// assert_eq!(event.label("app"), Some("web"));
/// ```
#[derive(Clone)]
pub struct Event {
    /// What happened.
    pub event_type: EventType,
    /// The object's group/version/kind.
    pub gvk: Gvk,
    /// The object's namespace; empty for cluster-scoped objects.
    pub namespace: String,
    /// The object's name.
    pub name: String,
    /// The object's UID.
    pub uid: String,
    /// The object's resource version.
    pub resource_version: String,
    /// The object's labels, sorted by key.
    pub labels: Vec<(String, String)>,
    object_json: String,
    old_object_json: Option<String>,
    object: OnceLock<Result<Object, Error>>,
    old_object: OnceLock<Result<Object, Error>>,
}

impl Event {
    /// An event for `object`, with the envelope (kind, namespace, name, UID,
    /// resource version, labels) taken from the object itself. Missing fields
    /// stay empty.
    pub fn new(event_type: EventType, object: Value) -> Self {
        let parsed = Object::new(object);
        let gvk = parsed.gvk().unwrap_or_default();
        let mut labels: Vec<(String, String)> = parsed
            .labels()
            .into_iter()
            .map(|(key, value)| (key.to_owned(), value.to_owned()))
            .collect();
        labels.sort();
        let event = Self {
            event_type,
            gvk,
            namespace: parsed.namespace().unwrap_or_default().to_owned(),
            name: parsed.name().unwrap_or_default().to_owned(),
            uid: parsed.uid().unwrap_or_default().to_owned(),
            resource_version: parsed.resource_version().unwrap_or_default().to_owned(),
            labels,
            object_json: parsed.value().to_string(),
            old_object_json: None,
            object: OnceLock::new(),
            old_object: OnceLock::new(),
        };
        // Already parsed; keep it rather than parse the text again later.
        let _ = event.object.set(Ok(parsed));
        event
    }

    /// The same event with `old` as the object's previous state, as
    /// `MODIFIED` events carry.
    pub fn with_old_object(mut self, old: Value) -> Self {
        self.old_object_json = Some(old.to_string());
        self.old_object = OnceLock::new();
        let _ = self.old_object.set(Ok(Object::new(old)));
        self
    }

    /// An event from its envelope and the object as JSON text, exactly as
    /// GRW delivers it. Nothing is parsed until asked for.
    #[allow(
        clippy::too_many_arguments,
        reason = "mirrors the WIT record field by field"
    )]
    pub fn from_parts(
        event_type: EventType,
        gvk: Gvk,
        namespace: String,
        name: String,
        uid: String,
        resource_version: String,
        labels: Vec<(String, String)>,
        object_json: String,
        old_object_json: Option<String>,
    ) -> Self {
        Self {
            event_type,
            gvk,
            namespace,
            name,
            uid,
            resource_version,
            labels,
            object_json,
            old_object_json,
            object: OnceLock::new(),
            old_object: OnceLock::new(),
        }
    }

    /// The value of one label, if the object has it.
    pub fn label(&self, key: &str) -> Option<&str> {
        // Linear: objects carry few labels, and the field is public, so its
        // order is not guaranteed.
        self.labels
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, value)| value.as_str())
    }

    /// Whether the object is cluster-scoped (has no namespace).
    pub fn is_cluster_scoped(&self) -> bool {
        self.namespace.is_empty()
    }

    /// The object: its new state, or its last state for `DELETED` events.
    /// Parsed on first use.
    pub fn object(&self) -> Result<&Object, Error> {
        self.object
            .get_or_init(|| Object::from_json(&self.object_json))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The object's previous state, for `MODIFIED` events; `None` when the
    /// event carries none. Parsed on first use.
    pub fn old_object(&self) -> Option<Result<&Object, Error>> {
        let text = self.old_object_json.as_deref()?;
        Some(
            self.old_object
                .get_or_init(|| Object::from_json(text))
                .as_ref()
                .map_err(Clone::clone),
        )
    }

    /// The object as the JSON text GRW sent, unparsed.
    pub fn object_json(&self) -> &str {
        &self.object_json
    }

    /// The previous state as JSON text, if the event carries one.
    pub fn old_object_json(&self) -> Option<&str> {
        self.old_object_json.as_deref()
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event")
            .field("event_type", &self.event_type)
            .field("gvk", &self.gvk)
            .field("namespace", &self.namespace)
            .field("name", &self.name)
            .field("uid", &self.uid)
            .field("resource_version", &self.resource_version)
            .field("labels", &self.labels)
            .field("object_json", &self.object_json)
            .field("old_object_json", &self.old_object_json)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment() -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "web",
                "namespace": "shop",
                "uid": "u-1",
                "resourceVersion": "42",
                "labels": {"tier": "front", "app": "web"},
            },
            "spec": {"replicas": 3},
        })
    }

    #[test]
    fn new_fills_the_envelope_from_metadata() {
        let event = Event::new(EventType::Added, deployment());
        assert_eq!(event.gvk, Gvk::new("apps", "v1", "Deployment"));
        assert_eq!(event.namespace, "shop");
        assert_eq!(event.name, "web");
        assert_eq!(event.uid, "u-1");
        assert_eq!(event.resource_version, "42");
        // Sorted by key, as GRW sends them.
        assert_eq!(
            event.labels,
            vec![
                ("app".into(), "web".into()),
                ("tier".into(), "front".into())
            ]
        );
        assert_eq!(event.label("tier"), Some("front"));
        assert_eq!(event.label("missing"), None);
        assert!(!event.is_cluster_scoped());
        assert!(event.old_object().is_none());
    }

    #[test]
    fn object_is_parsed_lazily_and_cached() {
        let event = Event::from_parts(
            EventType::Modified,
            Gvk::new("", "v1", "ConfigMap"),
            "ns".into(),
            "cm".into(),
            "u".into(),
            "1".into(),
            vec![],
            r#"{"data":{"k":"new"}}"#.into(),
            Some(r#"{"data":{"k":"old"}}"#.into()),
        );
        let first = event.object().unwrap();
        let second = event.object().unwrap();
        assert!(std::ptr::eq(first, second));
        assert_eq!(first.get_path("data.k"), Some(&json!("new")));
        let old = event.old_object().unwrap().unwrap();
        assert_eq!(old.pointer("/data/k"), Some(&json!("old")));
        assert_eq!(event.object_json(), r#"{"data":{"k":"new"}}"#);
        assert_eq!(event.old_object_json(), Some(r#"{"data":{"k":"old"}}"#));
    }

    #[test]
    fn invalid_json_is_an_error_every_time() {
        let event = Event::from_parts(
            EventType::Added,
            Gvk::default(),
            String::new(),
            "x".into(),
            String::new(),
            String::new(),
            vec![],
            "{not json".into(),
            None,
        );
        let error = event.object().unwrap_err();
        assert!(error.message().contains("JSON"), "{error}");
        assert_eq!(event.object().unwrap_err(), error);
    }

    #[test]
    fn with_old_object_sets_the_previous_state() {
        let mut old = deployment();
        old["spec"]["replicas"] = json!(1);
        let event = Event::new(EventType::Modified, deployment()).with_old_object(old);
        let old = event.old_object().unwrap().unwrap();
        assert_eq!(old.get_path("spec.replicas"), Some(&json!(1)));
        assert!(event.old_object_json().unwrap().contains("\"replicas\":1"));
    }

    #[test]
    fn gvk_api_version_round_trips() {
        let apps = Gvk::from_api_version("apps/v1", "Deployment");
        assert_eq!(apps, Gvk::new("apps", "v1", "Deployment"));
        assert_eq!(apps.api_version(), "apps/v1");
        assert_eq!(apps.to_string(), "apps/v1, Kind=Deployment");
        let core = Gvk::from_api_version("v1", "Pod");
        assert_eq!(core.group, "");
        assert_eq!(core.api_version(), "v1");
        assert_eq!(EventType::Deleted.to_string(), "DELETED");
    }
}
