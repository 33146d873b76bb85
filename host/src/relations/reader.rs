//! What an analysis reads: GRW's caches and discovery ([`Env`]), through a
//! [`Reader`] that answers one analysis's lookups and records them, so the
//! worker can tell which changes would answer them differently.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::gvk::{Gvk, KindRef, ResourceInfo};
use crate::kube::Discovery;
use crate::plugin::{CacheReader, Found, Plugins};
use crate::query::{LabelSelector, PageRequest, Query};
use crate::store::{ObjectKey, StoredObject};
use crate::watch::{Watch, Watches};

/// What analyses read: the caches and discovery.
pub(super) struct Env {
    pub(super) watches: Arc<Watches>,
    pub(super) discovery: Arc<Discovery>,
    pub(super) plugins: Arc<Plugins>,
    /// Kinds whose changes reach the worker, by group and kind.
    pub(super) fed: Mutex<HashMap<(String, String), Gvk>>,
    /// Kinds asked for that discovery does not know (yet).
    pub(super) unknown: Mutex<HashSet<(String, String)>>,
    /// Fed kinds (group, kind) whose first synced state was analyzed.
    pub(super) analyzed: tokio::sync::watch::Sender<HashSet<(String, String)>>,
}

impl Env {
    /// The resource of a group and kind: the version given if it is
    /// served, else the one watched, else discovery's preferred one.
    pub(super) fn resource(&self, group: &str, kind: &str, version: &str) -> Option<ResourceInfo> {
        let catalog = self.discovery.catalog();
        if !version.is_empty()
            && let Some(exact) = catalog.get(&Gvk::new(group, version, kind))
        {
            return Some(exact.clone());
        }
        if let Some(fed) = self.fed.lock().get(&(group.to_string(), kind.to_string()))
            && let Some(watched) = catalog.get(fed)
        {
            return Some(watched.clone());
        }
        catalog
            .resolve(&KindRef {
                group: Some(group.to_string()),
                version: None,
                name: kind.to_string(),
            })
            .ok()
            .filter(|r| r.gvk.kind == kind)
    }

    /// The cluster-wide watch of a kind, if there is one.
    pub(super) fn watch(&self, gvk: &Gvk) -> Option<Arc<Watch>> {
        self.watches.serving(gvk, None)
    }
}

/// Answers one analysis's cache lookups, recording them.
pub(super) struct Reader {
    pub(super) env: Arc<Env>,
    /// The analyzed object's namespace.
    pub(super) namespace: String,
    pub(super) asked: Mutex<Asked>,
}

#[derive(Default)]
pub(super) struct Asked {
    pub(super) lookups: Vec<RawLookup>,
    /// Kinds the lookups need watched.
    pub(super) kinds: Vec<ResourceInfo>,
}

/// A lookup as asked, before the index shares its strings.
#[derive(PartialEq, Eq)]
pub(super) enum RawLookup {
    Get(String, String, String, String),
    List(String, String, String, Arc<LabelSelector>),
    OwnedBy(String, String, String),
}

impl Reader {
    /// Records a lookup of a kind; `resource` is how discovery serves
    /// the kind, `None` when it does not (yet).
    fn record(&self, lookup: RawLookup, resource: Option<&ResourceInfo>) {
        if resource.is_none()
            && let RawLookup::Get(group, kind, ..)
            | RawLookup::List(group, kind, ..)
            | RawLookup::OwnedBy(group, kind, ..) = &lookup
        {
            self.env
                .unknown
                .lock()
                .insert((group.clone(), kind.clone()));
        }
        let mut asked = self.asked.lock();
        if !asked.lookups.contains(&lookup) {
            asked.lookups.push(lookup);
        }
        if let Some(resource) = resource
            && !asked.kinds.iter().any(|k| k.gvk == resource.gvk)
        {
            asked.kinds.push(resource.clone());
        }
    }

    /// The namespace a lookup of a kind means: none for cluster-scoped.
    fn scoped<'a>(resource: Option<&ResourceInfo>, namespace: &'a str) -> &'a str {
        match resource {
            Some(r) if !r.namespaced => "",
            _ => namespace,
        }
    }

    fn query(&self, gvk: &Gvk, query: Query) -> Vec<Found> {
        let Some(watch) = self.env.watch(gvk) else {
            return Vec::new();
        };
        let view = watch.cache.read();
        query
            .run(&view, &PageRequest::default())
            .items
            .into_iter()
            .map(|o| (gvk.clone(), o))
            .collect()
    }
}

impl CacheReader for Reader {
    fn get(&self, gvk: &Gvk, namespace: &str, name: &str) -> Option<Found> {
        let resource = self.env.resource(&gvk.group, &gvk.kind, &gvk.version);
        let namespace = Self::scoped(resource.as_ref(), namespace);
        self.record(
            RawLookup::Get(
                gvk.group.clone(),
                gvk.kind.clone(),
                namespace.to_string(),
                name.to_string(),
            ),
            resource.as_ref(),
        );
        let resource = resource?;
        let watch = self.env.watch(&resource.gvk)?;
        let object = watch
            .cache
            .read()
            .get(&ObjectKey::new(namespace, name))?
            .clone();
        Some((resource.gvk, object))
    }

    fn list(&self, gvk: &Gvk, namespace: &str, selector: &str) -> Result<Vec<Found>, String> {
        let selector: LabelSelector = selector.parse().map_err(|e| format!("{e}"))?;
        let selector = Arc::new(selector);
        let resource = self.env.resource(&gvk.group, &gvk.kind, &gvk.version);
        let namespace = Self::scoped(resource.as_ref(), namespace);
        self.record(
            RawLookup::List(
                gvk.group.clone(),
                gvk.kind.clone(),
                namespace.to_string(),
                selector.clone(),
            ),
            resource.as_ref(),
        );
        let Some(resource) = resource else {
            return Ok(Vec::new());
        };
        let query = Query {
            namespace: (!namespace.is_empty()).then(|| namespace.to_string()),
            labels: (*selector).clone(),
            ..Query::default()
        };
        Ok(self.query(&resource.gvk, query))
    }

    fn owned_by(&self, gvk: &Gvk, owner_uid: &str) -> Vec<Found> {
        let resource = self.env.resource(&gvk.group, &gvk.kind, &gvk.version);
        self.record(
            RawLookup::OwnedBy(gvk.group.clone(), gvk.kind.clone(), owner_uid.to_string()),
            resource.as_ref(),
        );
        let Some(resource) = resource else {
            return Vec::new();
        };
        let query = Query {
            owner_uid: Some(owner_uid.to_string()),
            ..Query::default()
        };
        self.query(&resource.gvk, query)
    }

    fn read(&self, gvk: &Gvk, object: &StoredObject) {
        let lookup = RawLookup::Get(
            gvk.group.clone(),
            gvk.kind.clone(),
            object.namespace().to_string(),
            object.name().to_string(),
        );
        // Found by a lookup, so its kind is known and already recorded.
        let mut asked = self.asked.lock();
        if !asked.lookups.contains(&lookup) {
            asked.lookups.push(lookup);
        }
    }
}
