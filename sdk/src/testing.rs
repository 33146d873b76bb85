//! Stand-ins for GRW's host services, for unit-testing plugin logic natively
//! with `cargo test`.
//!
//! ```
//! use grw_sdk::{Cache, Gvk};
//! use grw_sdk::testing::MemoryCache;
//! use serde_json::json;
//!
//! let cache = MemoryCache::new()
//!     .with(json!({"apiVersion": "v1", "kind": "Service",
//!                  "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}}}));
//! let services = Gvk::new("", "v1", "Service");
//! assert!(cache.get(&services, "shop", "web").is_some());
//! assert_eq!(cache.list(&services, "", "app=web").unwrap().len(), 1);
//! ```

use std::collections::VecDeque;
use std::sync::Mutex;

use serde_json::Value;

use crate::{Cache, Gvk, Http, HttpRequest, HttpResponse, LabelSelector, Object, ObjectView};

/// A [`Cache`] over objects held in memory.
///
/// An object's kind comes from its `apiVersion` and `kind`, so give each
/// object those fields. `list` understands the full label-selector syntax
/// (see [`LabelSelector`]) and, like GRW, rejects malformed selectors.
#[derive(Clone, Debug, Default)]
pub struct MemoryCache {
    objects: Vec<Object>,
}

impl MemoryCache {
    /// An empty cache.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same cache with `object` added.
    pub fn with(mut self, object: Value) -> Self {
        self.insert(object);
        self
    }

    /// Adds `object`, replacing any object of the same kind, namespace and
    /// name.
    pub fn insert(&mut self, object: Value) {
        let object = Object::new(object);
        let key = key_of(&object);
        self.objects.retain(|o| key_of(o) != key);
        self.objects.push(object);
    }

    /// How many objects the cache holds.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    fn of_kind<'a>(&'a self, gvk: &'a Gvk) -> impl Iterator<Item = &'a Object> + 'a {
        self.objects
            .iter()
            .filter(move |o| o.gvk().as_ref() == Some(gvk))
    }
}

fn key_of(object: &Object) -> (Option<Gvk>, String, String) {
    (
        object.gvk(),
        object.namespace().unwrap_or_default().to_owned(),
        object.name().unwrap_or_default().to_owned(),
    )
}

impl Cache for MemoryCache {
    fn get(&self, gvk: &Gvk, namespace: &str, name: &str) -> Option<ObjectView> {
        self.of_kind(gvk)
            .find(|o| o.namespace().unwrap_or_default() == namespace && o.name() == Some(name))
            .map(view)
    }

    fn list(
        &self,
        gvk: &Gvk,
        namespace: &str,
        label_selector: &str,
    ) -> Result<Vec<ObjectView>, String> {
        let selector = LabelSelector::parse(label_selector)?;
        Ok(self
            .of_kind(gvk)
            .filter(|o| namespace.is_empty() || o.namespace() == Some(namespace))
            .filter(|o| selector.matches(*o))
            .map(view)
            .collect())
    }

    fn owned_by(&self, gvk: &Gvk, owner_uid: &str) -> Vec<ObjectView> {
        self.of_kind(gvk)
            .filter(|o| o.owner_uids().contains(&owner_uid))
            .map(view)
            .collect()
    }
}

fn view(object: &Object) -> ObjectView {
    ObjectView::parsed(object.clone())
}

/// An [`Http`] that records every request and answers from a script.
///
/// Answers queued with [`respond`](RecordingHttp::respond) and
/// [`fail`](RecordingHttp::fail) are used in order; once they run out, every
/// request gets `200 OK` with an empty body.
///
/// ```
/// use grw_sdk::{Http, HttpRequest, HttpResponse};
/// use grw_sdk::testing::RecordingHttp;
///
/// let http = RecordingHttp::new().respond(HttpResponse::new(503));
/// assert_eq!(http.send(&HttpRequest::post("http://hook")).unwrap().status, 503);
/// assert_eq!(http.send(&HttpRequest::post("http://hook")).unwrap().status, 200);
/// assert_eq!(http.requests().len(), 2);
/// ```
#[derive(Debug, Default)]
pub struct RecordingHttp {
    requests: Mutex<Vec<HttpRequest>>,
    answers: Mutex<VecDeque<Result<HttpResponse, String>>>,
}

impl RecordingHttp {
    /// Answers `200 OK` to everything.
    pub fn new() -> Self {
        Self::default()
    }

    /// Queues a response.
    pub fn respond(self, response: HttpResponse) -> Self {
        lock(&self.answers).push_back(Ok(response));
        self
    }

    /// Queues a failure to send (as when the host is not allowed or the
    /// connection is refused).
    pub fn fail(self, reason: impl Into<String>) -> Self {
        lock(&self.answers).push_back(Err(reason.into()));
        self
    }

    /// The requests sent so far, in order.
    pub fn requests(&self) -> Vec<HttpRequest> {
        lock(&self.requests).clone()
    }
}

impl Http for RecordingHttp {
    fn send(&self, request: &HttpRequest) -> Result<HttpResponse, String> {
        lock(&self.requests).push(request.clone());
        lock(&self.answers)
            .pop_front()
            .unwrap_or_else(|| Ok(HttpResponse::new(200)))
    }
}

/// Locks, ignoring poisoning: a panicking test must not hide the recording
/// from the assertions that follow.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(ns: &str, name: &str, app: &str, owner: &str) -> Value {
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": ns,
                "labels": {"app": app},
                "ownerReferences": [{"uid": owner}],
            },
        })
    }

    fn cache() -> MemoryCache {
        MemoryCache::new()
            .with(pod("shop", "web-0", "web", "rs-1"))
            .with(pod("shop", "web-1", "web", "rs-1"))
            .with(pod("shop", "api-0", "api", "rs-2"))
            .with(pod("other", "web-0", "web", "rs-3"))
            .with(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}}))
    }

    const POD: fn() -> Gvk = || Gvk::new("", "v1", "Pod");

    #[test]
    fn get_by_kind_namespace_and_name() {
        let cache = cache();
        assert_eq!(cache.len(), 5);
        let pod = cache.get(&POD(), "other", "web-0").unwrap();
        assert_eq!(pod.namespace(), "other");
        assert!(cache.get(&POD(), "shop", "missing").is_none());
        assert!(
            cache
                .get(&Gvk::new("apps", "v1", "Pod"), "shop", "web-0")
                .is_none()
        );
        let namespace = Gvk::new("", "v1", "Namespace");
        assert!(cache.get(&namespace, "", "shop").is_some());
    }

    #[test]
    fn insert_replaces_the_same_object() {
        let mut cache = cache();
        cache.insert(pod("shop", "web-0", "changed", "rs-1"));
        assert_eq!(cache.len(), 5);
        assert_eq!(
            cache
                .get(&POD(), "shop", "web-0")
                .unwrap()
                .label("app")
                .as_deref(),
            Some("changed")
        );
        assert!(!MemoryCache::new().with(json!({})).is_empty());
    }

    #[test]
    fn list_filters_by_namespace_and_selector() {
        let cache = cache();
        assert_eq!(cache.list(&POD(), "", "").unwrap().len(), 4);
        assert_eq!(cache.list(&POD(), "shop", "").unwrap().len(), 3);
        assert_eq!(cache.list(&POD(), "shop", "app=web").unwrap().len(), 2);
        assert_eq!(
            cache
                .list(&POD(), "", "app in (web,api),app!=api")
                .unwrap()
                .len(),
            3
        );
        assert!(cache.list(&POD(), "", "app in web").is_err());
    }

    #[test]
    fn owned_by_follows_owner_references() {
        let cache = cache();
        let names: Vec<_> = cache
            .owned_by(&POD(), "rs-1")
            .iter()
            .map(|o| o.name().to_owned())
            .collect();
        assert_eq!(names, ["web-0", "web-1"]);
        assert!(cache.owned_by(&POD(), "nobody").is_empty());
    }

    #[test]
    fn recording_http_scripts_answers() {
        let http = RecordingHttp::new()
            .fail("host not allowed")
            .respond(HttpResponse::new(201));
        let request = HttpRequest::post("http://a");
        assert_eq!(http.send(&request), Err("host not allowed".into()));
        assert_eq!(http.send(&request).unwrap().status, 201);
        assert_eq!(http.send(&request).unwrap().status, 200);
        assert_eq!(
            http.requests(),
            vec![request.clone(), request.clone(), request]
        );
    }
}
