//! Kubernetes objects as JSON, with typed parsing on demand.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::{Error, Gvk};

/// A Kubernetes object as JSON.
///
/// Metadata accessors cover the common questions; [`pointer`](Object::pointer)
/// and [`get_path`](Object::get_path) reach anything else; and
/// [`parse`](Object::parse) turns the object into a typed struct, such as
/// the `k8s_openapi` types re-exported as [`crate::k8s_openapi`], when a
/// plugin needs many fields of it.
///
/// ```
/// use grw_sdk::Object;
/// use grw_sdk::k8s_openapi::api::apps::v1::Deployment;
///
/// let object = Object::from_json(
///     r#"{"apiVersion":"apps/v1","kind":"Deployment",
///         "metadata":{"name":"web","namespace":"shop"},
///         "spec":{"replicas":3,"selector":{},"template":{}}}"#,
/// )?;
/// assert_eq!(object.name(), Some("web"));
/// assert_eq!(object.get_path("spec.replicas"), Some(&serde_json::json!(3)));
/// let deployment: Deployment = object.parse()?;
/// assert_eq!(deployment.spec.replicas, Some(3));
/// # Ok::<(), grw_sdk::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Object(Value);

impl Object {
    /// Wraps a JSON value.
    pub fn new(value: Value) -> Self {
        Self(value)
    }

    /// Parses JSON text.
    pub fn from_json(text: &str) -> Result<Self, Error> {
        serde_json::from_str(text)
            .map(Self)
            .map_err(|e| Error::new(format!("object is not valid JSON: {e}")))
    }

    /// The JSON value.
    pub fn value(&self) -> &Value {
        &self.0
    }

    /// The JSON value, by value.
    pub fn into_value(self) -> Value {
        self.0
    }

    /// `apiVersion`, e.g. `apps/v1`.
    pub fn api_version(&self) -> Option<&str> {
        self.0.get("apiVersion")?.as_str()
    }

    /// `kind`, e.g. `Deployment`.
    pub fn kind(&self) -> Option<&str> {
        self.0.get("kind")?.as_str()
    }

    /// The group/version/kind from `apiVersion` and `kind`, if both are set.
    pub fn gvk(&self) -> Option<Gvk> {
        Some(Gvk::from_api_version(self.api_version()?, self.kind()?))
    }

    /// `metadata.namespace`; `None` for cluster-scoped objects.
    pub fn namespace(&self) -> Option<&str> {
        self.metadata_str("namespace").filter(|ns| !ns.is_empty())
    }

    /// `metadata.name`.
    pub fn name(&self) -> Option<&str> {
        self.metadata_str("name")
    }

    /// `metadata.uid`.
    pub fn uid(&self) -> Option<&str> {
        self.metadata_str("uid")
    }

    /// `metadata.resourceVersion`.
    pub fn resource_version(&self) -> Option<&str> {
        self.metadata_str("resourceVersion")
    }

    /// `metadata.labels`, sorted by key; empty when there are none.
    pub fn labels(&self) -> BTreeMap<&str, &str> {
        self.string_map("labels")
    }

    /// One label's value.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.0.get("metadata")?.get("labels")?.get(key)?.as_str()
    }

    /// `metadata.annotations`, sorted by key; empty when there are none.
    pub fn annotations(&self) -> BTreeMap<&str, &str> {
        self.string_map("annotations")
    }

    /// One annotation's value.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.0
            .get("metadata")?
            .get("annotations")?
            .get(key)?
            .as_str()
    }

    /// The UIDs in `metadata.ownerReferences`, in order.
    pub fn owner_uids(&self) -> Vec<&str> {
        self.0
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .map(|refs| refs.iter().filter_map(|r| r.get("uid")?.as_str()).collect())
            .unwrap_or_default()
    }

    /// The value at a JSON pointer (RFC 6901), e.g. `/spec/replicas` or
    /// `/metadata/labels/app.kubernetes.io~1name` (`~1` stands for `/`).
    pub fn pointer(&self, pointer: &str) -> Option<&Value> {
        self.0.pointer(pointer)
    }

    /// The value at a [`FieldPath`]: dotted (`spec.replicas`,
    /// `spec.containers.0.image`) or a JSON pointer if it starts with `/`.
    /// `None` if nothing is there or the path is malformed.
    pub fn get_path(&self, path: &str) -> Option<&Value> {
        path.parse::<FieldPath>().ok()?.get(&self.0)
    }

    /// Parses the object into a typed struct, e.g.
    /// `k8s_openapi::api::core::v1::Pod`. The error names the field that did
    /// not fit.
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, Error> {
        serde_path_to_error::deserialize(&self.0).map_err(|e| {
            let path = e.path().to_string();
            Error::new(format!("object does not fit at `{path}`: {}", e.inner()))
        })
    }

    /// The labels as owned pairs, sorted by key.
    pub(crate) fn labels_owned(&self) -> Vec<(String, String)> {
        owned(self.labels())
    }

    /// The string annotations as owned pairs, sorted by key.
    pub(crate) fn annotations_owned(&self) -> Vec<(String, String)> {
        owned(self.annotations())
    }

    fn metadata_str(&self, key: &str) -> Option<&str> {
        self.0.get("metadata")?.get(key)?.as_str()
    }

    fn string_map(&self, key: &str) -> BTreeMap<&str, &str> {
        self.0
            .get("metadata")
            .and_then(|m| m.get(key))
            .and_then(Value::as_object)
            .map(|map| {
                map.iter()
                    .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)))
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn owned(map: BTreeMap<&str, &str>) -> Vec<(String, String)> {
    map.into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
}

impl From<Value> for Object {
    fn from(value: Value) -> Self {
        Self(value)
    }
}

impl From<Object> for Value {
    fn from(object: Object) -> Self {
        object.0
    }
}

/// A checked path to a field of an object, for plugin configurations that
/// name fields.
///
/// Two spellings are accepted:
/// - dotted: `spec.replicas`, `status.conditions.0.type`; a segment that is a
///   number indexes an array. Keys that contain dots (like most label keys)
///   cannot be written this way; use a pointer.
/// - a JSON pointer, starting with `/`: `/metadata/labels/app.kubernetes.io~1name`.
///
/// ```
/// use grw_sdk::FieldPath;
///
/// let path: FieldPath = "spec.template.spec.containers.0.image".parse()?;
/// let object = serde_json::json!({"spec": {"template": {"spec": {"containers": [{"image": "nginx"}]}}}});
/// assert_eq!(path.get(&object), Some(&serde_json::json!("nginx")));
/// assert!("spec..replicas".parse::<FieldPath>().is_err());
/// # Ok::<(), grw_sdk::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldPath {
    text: String,
    segments: Vec<String>,
}

impl FieldPath {
    /// Parses a dotted path or a JSON pointer.
    pub fn parse(text: &str) -> Result<Self, Error> {
        let segments = if text.is_empty() {
            return Err(Error::new("field path is empty"));
        } else if let Some(pointer) = text.strip_prefix('/') {
            pointer
                .split('/')
                .map(|token| unescape_pointer_token(token).ok_or(()))
                .collect::<Result<Vec<_>, ()>>()
                .map_err(|()| {
                    Error::new(format!(
                        "field path `{text}`: `~` must be followed by `0` or `1` in a JSON pointer"
                    ))
                })?
        } else {
            let segments: Vec<String> = text.split('.').map(str::to_owned).collect();
            if segments.iter().any(String::is_empty) {
                return Err(Error::new(format!(
                    "field path `{text}` has an empty segment; write `a.b.c`, or a JSON pointer like `/a/b`"
                )));
            }
            segments
        };
        Ok(Self {
            text: text.to_owned(),
            segments,
        })
    }

    /// The path as it was written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The keys and indexes along the path, whichever the spelling:
    /// `spec.replicas` and `/spec/replicas` both give `["spec", "replicas"]`,
    /// and pointer escapes are undone (`/a~1b` gives `["a/b"]`).
    ///
    /// ```
    /// use grw_sdk::FieldPath;
    ///
    /// let dotted: FieldPath = "metadata.labels".parse()?;
    /// let pointer: FieldPath = "/metadata/labels/app.kubernetes.io~1name".parse()?;
    /// assert!(pointer.segments().starts_with(dotted.segments()));
    /// assert_eq!(pointer.segments()[2], "app.kubernetes.io/name");
    /// # Ok::<(), grw_sdk::Error>(())
    /// ```
    pub fn segments(&self) -> &[String] {
        &self.segments
    }

    /// The value at this path inside `value`.
    pub fn get<'v>(&self, value: &'v Value) -> Option<&'v Value> {
        self.segments
            .iter()
            .try_fold(value, |current, segment| match current {
                Value::Object(map) => map.get(segment),
                Value::Array(items) => items.get(segment.parse::<usize>().ok()?),
                _ => None,
            })
    }
}

fn unescape_pointer_token(token: &str) -> Option<String> {
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

impl FromStr for FieldPath {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self, Error> {
        Self::parse(text)
    }
}

impl fmt::Display for FieldPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl<'de> serde::Deserialize<'de> for FieldPath {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Self::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod() -> Object {
        Object::new(json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "web-0",
                "namespace": "shop",
                "uid": "pod-uid",
                "resourceVersion": "7",
                "labels": {"app": "web", "app.kubernetes.io/name": "shop-web"},
                "annotations": {"note": "hi", "count": 3},
                "ownerReferences": [{"uid": "rs-uid"}, {"uid": "other"}],
            },
            "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]},
            "status": {"phase": "Running"},
        }))
    }

    #[test]
    fn metadata_accessors() {
        let pod = pod();
        assert_eq!(pod.api_version(), Some("v1"));
        assert_eq!(pod.kind(), Some("Pod"));
        assert_eq!(pod.gvk(), Some(Gvk::new("", "v1", "Pod")));
        assert_eq!(pod.namespace(), Some("shop"));
        assert_eq!(pod.name(), Some("web-0"));
        assert_eq!(pod.uid(), Some("pod-uid"));
        assert_eq!(pod.resource_version(), Some("7"));
        assert_eq!(pod.label("app"), Some("web"));
        assert_eq!(pod.labels().len(), 2);
        // Non-string annotation values are skipped rather than stringified.
        assert_eq!(
            pod.annotations().into_iter().collect::<Vec<_>>(),
            vec![("note", "hi")]
        );
        assert_eq!(pod.annotation("note"), Some("hi"));
        assert_eq!(pod.owner_uids(), vec!["rs-uid", "other"]);
    }

    #[test]
    fn missing_metadata_is_none_or_empty() {
        let object = Object::new(json!({"metadata": {"namespace": ""}}));
        assert_eq!(object.namespace(), None);
        assert_eq!(object.name(), None);
        assert_eq!(object.gvk(), None);
        assert!(object.labels().is_empty());
        assert!(object.owner_uids().is_empty());
    }

    #[test]
    fn paths_and_pointers() {
        let pod = pod();
        assert_eq!(pod.get_path("status.phase"), Some(&json!("Running")));
        assert_eq!(
            pod.get_path("spec.containers.0.image"),
            Some(&json!("nginx:1.27"))
        );
        assert_eq!(pod.get_path("spec.containers.1.image"), None);
        assert_eq!(pod.get_path("spec.containers.x"), None);
        assert_eq!(pod.get_path("status.phase.deeper"), None);
        assert_eq!(pod.get_path("a..b"), None);
        assert_eq!(
            pod.get_path("/metadata/labels/app.kubernetes.io~1name"),
            Some(&json!("shop-web"))
        );
        assert_eq!(pod.pointer("/spec/containers/0/name"), Some(&json!("main")));
    }

    #[test]
    fn field_path_validation() {
        assert!(FieldPath::parse("").is_err());
        assert!(FieldPath::parse(".spec").is_err());
        assert!(FieldPath::parse("spec.").is_err());
        assert!(FieldPath::parse("/a/~2").is_err());
        let path = FieldPath::parse("/a~0b/c").unwrap();
        assert_eq!(path.get(&json!({"a~b": {"c": 1}})), Some(&json!(1)));
        assert_eq!(path.to_string(), "/a~0b/c");
        let parsed: FieldPath = serde_json::from_value(json!("spec.replicas")).unwrap();
        assert_eq!(parsed.as_str(), "spec.replicas");
        assert!(serde_json::from_value::<FieldPath>(json!("a..b")).is_err());
    }

    #[test]
    fn field_path_segments_are_the_same_for_both_spellings() {
        let dotted = FieldPath::parse("spec.containers.0").unwrap();
        let pointer = FieldPath::parse("/spec/containers/0").unwrap();
        assert_eq!(dotted.segments(), ["spec", "containers", "0"]);
        assert_eq!(dotted.segments(), pointer.segments());
        let escaped = FieldPath::parse("/metadata/annotations/a~1b~0c").unwrap();
        assert_eq!(escaped.segments(), ["metadata", "annotations", "a/b~c"]);
    }

    #[test]
    fn typed_parsing() {
        use k8s_openapi::api::core::v1::Pod;
        // The test pod has a numeric annotation, which Kubernetes would not
        // allow: typed parsing names the field.
        let error = pod().parse::<Pod>().unwrap_err();
        assert!(
            error.message().contains("metadata.annotations.count"),
            "{error}"
        );

        let mut value = pod().into_value();
        value["metadata"]["annotations"]["count"] = json!("3");
        let pod: Pod = Object::new(value).parse().unwrap();
        assert_eq!(
            pod.spec.unwrap().containers[0].image.as_deref(),
            Some("nginx:1.27")
        );

        let bad = Object::new(json!({"metadata": {"name": 5}}));
        let error = bad.parse::<Pod>().unwrap_err();
        assert!(error.message().contains("metadata.name"), "{error}");
    }

    #[test]
    fn from_json_reports_invalid_text() {
        assert!(Object::from_json("[1").is_err());
        assert_eq!(Object::from_json("{}").unwrap().value(), &json!({}));
    }
}
