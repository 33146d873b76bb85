//! Objects read on request: [`ObjectView`].

use std::borrow::Cow;
use std::fmt;
use std::sync::OnceLock;

use serde_json::Value;

use crate::{Error, FieldPath, Gvk, Object, ObjectRef, ObjectSource};

/// One object as a plugin sees it: read where it is (inside GRW: in the
/// host) only as far as the plugin asks, and what was read kept for later
/// calls.
///
/// [`Event`](crate::Event)s carry one for the object and one for its
/// previous state; [`Cache`](crate::Cache) lookups answer with them, so an
/// analyzer that needs a Pod's name and labels never receives its JSON.
///
/// ```
/// use grw_sdk::ObjectView;
///
/// let pod = ObjectView::new(serde_json::json!({
///     "apiVersion": "v1",
///     "kind": "Pod",
///     "metadata": {"name": "web-0", "namespace": "shop", "labels": {"app": "web"}},
/// }));
/// assert_eq!(pod.name(), "web-0");
/// assert_eq!(pod.label("app").as_deref(), Some("web"));
/// ```
pub struct ObjectView {
    source: Source,
    json: OnceLock<String>,
    parsed: OnceLock<Result<Object, Error>>,
    labels: OnceLock<Vec<(String, String)>>,
    annotations: OnceLock<Vec<(String, String)>>,
    gvk: OnceLock<Gvk>,
    namespace: OnceLock<String>,
    name: OnceLock<String>,
    uid: OnceLock<String>,
    resource_version: OnceLock<String>,
}

pub(crate) enum Source {
    /// Parsed already: [`ObjectView::parsed`] holds it.
    Parsed,
    /// Anything that answers.
    Other(Box<dyn ObjectSource>),
    /// The host's object, through a handle the call lent.
    #[cfg(target_arch = "wasm32")]
    Host(crate::__private::HostObject),
    /// The host's object, through a handle GRW gave the plugin (a cache
    /// lookup's answer), dropped with the view.
    #[cfg(target_arch = "wasm32")]
    Owned(crate::__private::raw::Object),
}

impl ObjectView {
    /// A view of a parsed object (for tests, and natively).
    pub fn new(object: Value) -> ObjectView {
        ObjectView::parsed(Object::new(object))
    }

    /// A view that reads from `source` on request.
    pub fn from_source(source: Box<dyn ObjectSource>) -> ObjectView {
        ObjectView::with_source(Source::Other(source))
    }

    pub(crate) fn parsed(object: Object) -> ObjectView {
        let view = ObjectView::with_source(Source::Parsed);
        let _ = view.parsed.set(Ok(object));
        view
    }

    pub(crate) fn with_source(source: Source) -> ObjectView {
        ObjectView {
            source,
            json: OnceLock::new(),
            parsed: OnceLock::new(),
            labels: OnceLock::new(),
            annotations: OnceLock::new(),
            gvk: OnceLock::new(),
            namespace: OnceLock::new(),
            name: OnceLock::new(),
            uid: OnceLock::new(),
            resource_version: OnceLock::new(),
        }
    }

    /// The source to ask: the one given, or the parsed object.
    fn answering(&self) -> &dyn ObjectSource {
        match (self.parsed_now(), self.source()) {
            (Some(object), _) => object,
            (None, Some(source)) => source,
            (None, None) => &NOTHING,
        }
    }

    /// One label: from the labels fetched already, or else just that one.
    /// The value of one label, if the object has it. Asks for that label
    /// alone, unless all labels or the whole object were fetched already.
    pub fn label(&self, key: &str) -> Option<Cow<'_, str>> {
        if let Some(labels) = self.labels.get() {
            return lookup(labels, key).map(Cow::Borrowed);
        }
        if let Some(object) = self.parsed_now() {
            return object.label(key).map(Cow::Borrowed);
        }
        self.source()?.label(key).map(Cow::Owned)
    }

    fn source(&self) -> Option<&dyn ObjectSource> {
        match &self.source {
            Source::Parsed => None,
            Source::Other(source) => Some(source.as_ref()),
            #[cfg(target_arch = "wasm32")]
            Source::Host(host) => Some(host),
            #[cfg(target_arch = "wasm32")]
            Source::Owned(object) => Some(object),
        }
    }

    /// What was parsed already, if anything.
    fn parsed_now(&self) -> Option<&Object> {
        self.parsed.get()?.as_ref().ok()
    }

    /// The object as JSON text, unparsed. Fetched on first use.
    pub fn json(&self) -> &str {
        self.json.get_or_init(|| match self.source() {
            Some(source) => source.json(),
            None => self
                .parsed_now()
                .map(|o| o.value().to_string())
                .unwrap_or_default(),
        })
    }

    /// The object, fetched and parsed on first use.
    pub fn object(&self) -> Result<&Object, Error> {
        self.parsed
            .get_or_init(|| Object::from_json(self.json()))
            .as_ref()
            .map_err(Clone::clone)
    }

    /// The value at `path`; `None` when nothing is there. Fetches just that
    /// value, unless the whole object was fetched already.
    pub fn field(&self, path: &FieldPath) -> Option<Value> {
        if let Some(object) = self.parsed_now() {
            return path.get(object.value()).cloned();
        }
        let text = self.source()?.get(path.segments())?;
        serde_json::from_str(&text).ok()
    }

    /// The labels, sorted by key.
    pub fn labels(&self) -> &[(String, String)] {
        self.labels.get_or_init(|| match self.source() {
            Some(source) => source.labels(),
            None => self
                .parsed_now()
                .map(Object::labels_owned)
                .unwrap_or_default(),
        })
    }

    /// The annotations whose values are strings, sorted by key.
    pub fn annotations(&self) -> &[(String, String)] {
        self.annotations.get_or_init(|| match self.source() {
            Some(source) => source.annotations(),
            None => self
                .parsed_now()
                .map(Object::annotations_owned)
                .unwrap_or_default(),
        })
    }

    /// The object's group/version/kind.
    pub fn gvk(&self) -> &Gvk {
        self.gvk.get_or_init(|| self.answering().gvk())
    }

    /// The object's namespace; empty for cluster-scoped objects.
    pub fn namespace(&self) -> &str {
        self.namespace.get_or_init(|| self.answering().namespace())
    }

    /// The object's name.
    pub fn name(&self) -> &str {
        self.name.get_or_init(|| self.answering().name())
    }

    /// The object's UID.
    pub fn uid(&self) -> &str {
        self.uid.get_or_init(|| self.answering().uid())
    }

    /// The object's resource version.
    pub fn resource_version(&self) -> &str {
        self.resource_version
            .get_or_init(|| self.answering().resource_version())
    }

    /// The value of one annotation, if the object has it (and it is a
    /// string). The first lookup fetches the object's annotations.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        lookup(self.annotations(), key)
    }

    /// Whether the object is cluster-scoped (has no namespace).
    pub fn is_cluster_scoped(&self) -> bool {
        self.namespace().is_empty()
    }

    /// A reference to this object.
    pub fn to_ref(&self) -> ObjectRef {
        ObjectRef::new(self.gvk().clone(), self.namespace(), self.name())
    }
}

impl fmt::Debug for ObjectView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectView")
            .field("gvk", self.gvk())
            .field("namespace", &self.namespace())
            .field("name", &self.name())
            .finish_non_exhaustive()
    }
}

/// What a source that is not there answers: nothing.
static NOTHING: Nothing = Nothing;

struct Nothing;

impl ObjectSource for Nothing {
    fn json(&self) -> String {
        String::new()
    }

    fn get(&self, _path: &[String]) -> Option<String> {
        None
    }

    fn labels(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    fn annotations(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

pub(crate) fn lookup<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .binary_search_by(|(k, _)| k.as_str().cmp(key))
        .ok()
        .map(|i| pairs[i].1.as_str())
}
