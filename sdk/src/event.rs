//! Events: what happened to which object.

use std::borrow::Cow;
use std::fmt;

use serde_json::Value;

#[cfg(target_arch = "wasm32")]
use crate::view::Source;
use crate::view::{ObjectView, lookup};
use crate::{Error, FieldPath, Object};

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

/// Where a change came from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Origin {
    /// The first list of a watch: the object existed before GRW looked.
    Initial,
    /// A watch event from the API server (or a replayed recording).
    #[default]
    Watch,
    /// The difference between a new list and GRW's cache, after a watch
    /// could not resume: the change happened while nobody was watching.
    Relist,
}

impl Origin {
    /// `initial`, `watch` or `relist`.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Initial => "initial",
            Origin::Watch => "watch",
            Origin::Relist => "relist",
        }
    }

    /// Parses what [`Origin::as_str`] writes; `None` for anything else.
    ///
    /// ```
    /// use grw_sdk::Origin;
    /// assert_eq!(Origin::parse("relist"), Some(Origin::Relist));
    /// assert_eq!(Origin::parse("Relist"), None);
    /// ```
    pub fn parse(s: &str) -> Option<Origin> {
        [Origin::Initial, Origin::Watch, Origin::Relist]
            .into_iter()
            .find(|o| o.as_str() == s)
    }
}

impl fmt::Display for Origin {
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

/// Where an [`Event`]'s object is read from.
///
/// Inside GRW the object stays in the host and each method asks the host
/// for just that part of it; the SDK implements this itself. Implement it
/// to run a plugin's logic against objects held elsewhere (a test double,
/// or a native program embedding the plugin), and hand it to
/// [`Event::from_parts`]. [`String`] implements it for JSON text, and
/// [`Object`] for a parsed value.
///
/// Only the first four methods are required; the others have defaults that
/// read through them.
pub trait ObjectSource {
    /// The whole object as JSON text.
    fn json(&self) -> String;
    /// The value at `path` (object keys, or array indexes in decimal; the
    /// empty path is the whole object) as JSON text, or `None` when nothing
    /// is there.
    fn get(&self, path: &[String]) -> Option<String>;
    /// The labels, sorted by key.
    fn labels(&self) -> Vec<(String, String)>;
    /// The annotations whose values are strings, sorted by key.
    fn annotations(&self) -> Vec<(String, String)>;

    /// The value of the label `key`.
    fn label(&self, key: &str) -> Option<String> {
        lookup(&self.labels(), key).map(str::to_owned)
    }
    /// The object's group/version/kind, from `apiVersion` and `kind`.
    fn gvk(&self) -> Gvk {
        Gvk::from_api_version(
            &string_at(self, &["apiVersion"]),
            string_at(self, &["kind"]),
        )
    }
    /// `metadata.namespace`; empty for cluster-scoped objects.
    fn namespace(&self) -> String {
        string_at(self, &["metadata", "namespace"])
    }
    /// `metadata.name`.
    fn name(&self) -> String {
        string_at(self, &["metadata", "name"])
    }
    /// `metadata.uid`.
    fn uid(&self) -> String {
        string_at(self, &["metadata", "uid"])
    }
    /// `metadata.resourceVersion`.
    fn resource_version(&self) -> String {
        string_at(self, &["metadata", "resourceVersion"])
    }
}

/// The string at `path`, or `""` when there is none.
fn string_at<S: ObjectSource + ?Sized>(source: &S, path: &[&str]) -> String {
    let path: Vec<String> = path.iter().map(|s| s.to_string()).collect();
    source
        .get(&path)
        .and_then(|text| serde_json::from_str::<String>(&text).ok())
        .unwrap_or_default()
}

impl ObjectSource for String {
    fn json(&self) -> String {
        self.clone()
    }

    fn get(&self, path: &[String]) -> Option<String> {
        let value: Value = serde_json::from_str(self).ok()?;
        segments_get(&value, path).map(Value::to_string)
    }

    fn labels(&self) -> Vec<(String, String)> {
        Object::from_json(self)
            .map(|o| o.labels_owned())
            .unwrap_or_default()
    }

    fn annotations(&self) -> Vec<(String, String)> {
        Object::from_json(self)
            .map(|o| o.annotations_owned())
            .unwrap_or_default()
    }
}

impl ObjectSource for Object {
    fn json(&self) -> String {
        self.value().to_string()
    }

    fn get(&self, path: &[String]) -> Option<String> {
        segments_get(self.value(), path).map(Value::to_string)
    }

    fn labels(&self) -> Vec<(String, String)> {
        self.labels_owned()
    }

    fn annotations(&self) -> Vec<(String, String)> {
        self.annotations_owned()
    }

    fn label(&self, key: &str) -> Option<String> {
        Object::label(self, key).map(str::to_owned)
    }

    fn gvk(&self) -> Gvk {
        Object::gvk(self).unwrap_or_default()
    }

    fn namespace(&self) -> String {
        Object::namespace(self).unwrap_or_default().to_owned()
    }

    fn name(&self) -> String {
        Object::name(self).unwrap_or_default().to_owned()
    }

    fn uid(&self) -> String {
        Object::uid(self).unwrap_or_default().to_owned()
    }

    fn resource_version(&self) -> String {
        Object::resource_version(self)
            .unwrap_or_default()
            .to_owned()
    }
}

fn segments_get<'v>(value: &'v Value, path: &[String]) -> Option<&'v Value> {
    path.iter()
        .try_fold(value, |current, segment| match current {
            Value::Object(map) => map.get(segment),
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?),
            _ => None,
        })
}

/// One change of one object.
///
/// The event type and origin are fields. Everything else is read from the
/// object where it is (inside GRW: in the host) only as far as the plugin
/// asks: [`name`](Event::name), [`label`](Event::label) and
/// [`field`](Event::field) fetch just that part, while
/// [`object`](Event::object) fetches the whole JSON and parses it. What was
/// fetched is kept for later calls on the same event.
///
/// Build events for unit tests with [`Event::new`]:
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
///         "status": {"phase": "Running"},
///     }),
/// );
/// assert_eq!(event.namespace(), "shop");
/// assert_eq!(event.label("app").as_deref(), Some("web"));
/// assert_eq!(event.field(&"status.phase".parse()?), Some(serde_json::json!("Running")));
/// # Ok::<(), grw_sdk::Error>(())
/// ```
///
/// Inside GRW an event can only be read during the call it was passed to.
pub struct Event {
    /// What happened.
    pub event_type: EventType,
    /// Where the change came from: the first list, a watch event, or a
    /// relist after a watch could not resume.
    pub origin: Origin,
    object: ObjectView,
    old_object: Option<ObjectView>,
}

impl Event {
    /// An event for `object`, with origin [`Origin::Watch`].
    pub fn new(event_type: EventType, object: Value) -> Self {
        Self {
            event_type,
            origin: Origin::Watch,
            object: ObjectView::parsed(Object::new(object)),
            old_object: None,
        }
    }

    /// The same event with `old` as the object's previous state, as
    /// `MODIFIED` events carry.
    pub fn with_old_object(mut self, old: Value) -> Self {
        self.old_object = Some(ObjectView::parsed(Object::new(old)));
        self
    }

    /// The same event with another origin.
    pub fn with_origin(mut self, origin: Origin) -> Self {
        self.origin = origin;
        self
    }

    /// An event from its type and origin and where its object (and, for
    /// `MODIFIED`, its previous state) is read from. Nothing is read until
    /// asked for.
    pub fn from_parts(
        event_type: EventType,
        origin: Origin,
        object: Box<dyn ObjectSource>,
        old_object: Option<Box<dyn ObjectSource>>,
    ) -> Self {
        Self {
            event_type,
            origin,
            object: ObjectView::from_source(object),
            old_object: old_object.map(ObjectView::from_source),
        }
    }

    /// An event whose objects are the host's (see `__private`).
    #[cfg(target_arch = "wasm32")]
    pub(crate) fn from_host(
        event_type: EventType,
        origin: Origin,
        object: crate::__private::HostObject,
        old_object: Option<crate::__private::HostObject>,
    ) -> Self {
        Self {
            event_type,
            origin,
            object: ObjectView::with_source(Source::Host(object)),
            old_object: old_object.map(|o| ObjectView::with_source(Source::Host(o))),
        }
    }

    /// The object's group/version/kind.
    pub fn gvk(&self) -> &Gvk {
        self.object.gvk()
    }

    /// The object's namespace; empty for cluster-scoped objects.
    pub fn namespace(&self) -> &str {
        self.object.namespace()
    }

    /// The object's name.
    pub fn name(&self) -> &str {
        self.object.name()
    }

    /// The object's UID.
    pub fn uid(&self) -> &str {
        self.object.uid()
    }

    /// The object's resource version.
    pub fn resource_version(&self) -> &str {
        self.object.resource_version()
    }

    /// The value of one label, if the object has it. Asks for that label
    /// alone, unless all labels or the whole object were fetched already.
    pub fn label(&self, key: &str) -> Option<Cow<'_, str>> {
        self.object.label(key)
    }

    /// The object's labels, sorted by key.
    pub fn labels(&self) -> &[(String, String)] {
        self.object.labels()
    }

    /// The value of one annotation, if the object has it (and it is a
    /// string). The first lookup fetches the object's annotations.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.object.annotation(key)
    }

    /// The object's annotations whose values are strings, sorted by key.
    pub fn annotations(&self) -> &[(String, String)] {
        self.object.annotations()
    }

    /// The value at `path` in the object (its new state, or its last state
    /// for `DELETED` events); `None` when nothing is there. Fetches just
    /// that value, unless the whole object was fetched already.
    pub fn field(&self, path: &FieldPath) -> Option<Value> {
        self.object.field(path)
    }

    /// The value at `path` in the object's previous state; `None` when the
    /// event carries none or nothing is there.
    pub fn old_field(&self, path: &FieldPath) -> Option<Value> {
        self.old_object.as_ref()?.field(path)
    }

    /// Whether the event carries the previous state (`MODIFIED` events do).
    pub fn has_old_object(&self) -> bool {
        self.old_object.is_some()
    }

    /// Whether the object is cluster-scoped (has no namespace).
    pub fn is_cluster_scoped(&self) -> bool {
        self.object.is_cluster_scoped()
    }

    /// The object, read on request: what the methods above read through.
    pub fn view(&self) -> &ObjectView {
        &self.object
    }

    /// The previous state, for `MODIFIED` events.
    pub fn old_view(&self) -> Option<&ObjectView> {
        self.old_object.as_ref()
    }

    /// The object: its new state, or its last state for `DELETED` events.
    /// Fetched and parsed on first use.
    pub fn object(&self) -> Result<&Object, Error> {
        self.object.object()
    }

    /// The object's previous state, for `MODIFIED` events; `None` when the
    /// event carries none. Fetched and parsed on first use.
    pub fn old_object(&self) -> Option<Result<&Object, Error>> {
        Some(self.old_object.as_ref()?.object())
    }

    /// The object as JSON text, unparsed. Fetched on first use.
    pub fn object_json(&self) -> &str {
        self.object.json()
    }

    /// The previous state as JSON text, if the event carries one.
    pub fn old_object_json(&self) -> Option<&str> {
        Some(self.old_object.as_ref()?.json())
    }
}

impl fmt::Debug for Event {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Event")
            .field("event_type", &self.event_type)
            .field("origin", &self.origin)
            .field("gvk", self.gvk())
            .field("namespace", &self.namespace())
            .field("name", &self.name())
            .field("has_old_object", &self.has_old_object())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::rc::Rc;

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
                "annotations": {"note": "hi", "n": 3},
            },
            "spec": {"replicas": 3},
        })
    }

    #[test]
    fn new_fills_the_envelope_from_metadata() {
        let event = Event::new(EventType::Added, deployment());
        assert_eq!(*event.gvk(), Gvk::new("apps", "v1", "Deployment"));
        assert_eq!(event.origin, Origin::Watch);
        assert_eq!(event.namespace(), "shop");
        assert_eq!(event.name(), "web");
        assert_eq!(event.uid(), "u-1");
        assert_eq!(event.resource_version(), "42");
        // Sorted by key, as GRW sends them.
        assert_eq!(
            event.labels(),
            [
                ("app".to_string(), "web".to_string()),
                ("tier".to_string(), "front".to_string())
            ]
        );
        assert_eq!(event.label("tier").as_deref(), Some("front"));
        assert_eq!(event.label("missing"), None);
        assert_eq!(event.annotation("note"), Some("hi"));
        assert_eq!(event.annotation("n"), None);
        assert!(!event.is_cluster_scoped());
        assert!(event.old_object().is_none());
        assert!(!event.has_old_object());
        let relisted = Event::new(EventType::Deleted, deployment()).with_origin(Origin::Relist);
        assert_eq!(relisted.origin.to_string(), "relist");
    }

    /// A source that counts what is asked of it.
    struct Counting {
        json: String,
        asked: Rc<Cell<(u32, u32, u32)>>,
    }

    impl ObjectSource for Counting {
        fn json(&self) -> String {
            let (j, g, l) = self.asked.get();
            self.asked.set((j + 1, g, l));
            self.json.clone()
        }
        fn get(&self, path: &[String]) -> Option<String> {
            let (j, g, l) = self.asked.get();
            self.asked.set((j, g + 1, l));
            self.json.get(path)
        }
        fn labels(&self) -> Vec<(String, String)> {
            let (j, g, l) = self.asked.get();
            self.asked.set((j, g, l + 1));
            self.json.labels()
        }
        fn annotations(&self) -> Vec<(String, String)> {
            self.json.annotations()
        }
    }

    #[test]
    fn only_what_is_asked_for_is_fetched_and_each_once() {
        let asked = Rc::new(Cell::new((0, 0, 0)));
        let source = |text: &str| -> Box<dyn ObjectSource> {
            Box::new(Counting {
                json: text.into(),
                asked: asked.clone(),
            })
        };
        let event = Event::from_parts(
            EventType::Modified,
            Origin::Relist,
            source(r#"{"data":{"k":"new"},"metadata":{"labels":{"a":"1"}}}"#),
            Some(source(r#"{"data":{"k":"old"}}"#)),
        );
        let path: FieldPath = "data.k".parse().unwrap();
        assert_eq!(event.field(&path), Some(json!("new")));
        assert_eq!(event.old_field(&path), Some(json!("old")));
        assert_eq!(event.label("a").as_deref(), Some("1"));
        assert_eq!(event.label("b"), None);
        // Two field lookups, one label each, no whole object.
        assert_eq!(asked.get(), (0, 2, 2));
        // All labels once; single lookups answer from them after.
        assert_eq!(event.labels().len(), 1);
        assert_eq!(event.label("a").as_deref(), Some("1"));
        assert_eq!(asked.get(), (0, 2, 3));
        let first = event.object().unwrap();
        let second = event.object().unwrap();
        assert!(std::ptr::eq(first, second));
        assert_eq!(
            event.object_json(),
            r#"{"data":{"k":"new"},"metadata":{"labels":{"a":"1"}}}"#
        );
        // Once parsed, fields come from the parsed object.
        assert_eq!(event.field(&path), Some(json!("new")));
        assert_eq!(asked.get(), (1, 2, 3));
        let old = event.old_object().unwrap().unwrap();
        assert_eq!(old.pointer("/data/k"), Some(&json!("old")));
        assert_eq!(event.old_object_json(), Some(r#"{"data":{"k":"old"}}"#));
    }

    #[test]
    fn invalid_json_is_an_error_every_time() {
        let event = Event::from_parts(
            EventType::Added,
            Origin::Watch,
            Box::new("{not json".to_string()),
            None,
        );
        let error = event.object().unwrap_err();
        assert!(error.message().contains("JSON"), "{error}");
        assert_eq!(event.object().unwrap_err(), error);
        assert_eq!(event.field(&"a".parse().unwrap()), None);
        assert!(event.labels().is_empty());
    }

    #[test]
    fn with_old_object_sets_the_previous_state() {
        let mut old = deployment();
        old["spec"]["replicas"] = json!(1);
        let event = Event::new(EventType::Modified, deployment()).with_old_object(old);
        let old = event.old_object().unwrap().unwrap();
        assert_eq!(old.get_path("spec.replicas"), Some(&json!(1)));
        assert!(event.old_object_json().unwrap().contains("\"replicas\":1"));
        assert_eq!(
            event.old_field(&"spec.replicas".parse().unwrap()),
            Some(json!(1))
        );
        assert_eq!(
            event.field(&"spec.replicas".parse().unwrap()),
            Some(json!(3))
        );
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
