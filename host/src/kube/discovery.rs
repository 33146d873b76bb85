//! Discovery: which kinds the server has, their plural names, scope and
//! preferred versions. Kept as an immutable [`Catalog`] swapped whole on each
//! refresh, so readers never wait.

use std::collections::BTreeMap;
use std::sync::Arc;

use futures::StreamExt;
use parking_lot::RwLock;
use serde_json::{Value, json};
use tokio::sync::watch;

use super::client::{ApiError, KubeClient};
use crate::gvk::{Gvk, KindRef, ResourceInfo};

/// Group versions fetched at once during a refresh.
const CONCURRENT_FETCHES: usize = 8;

/// One resource as discovery describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceEntry {
    /// Identity, plural and scope.
    pub info: ResourceInfo,
    /// Singular resource name, lower case.
    pub singular: String,
    /// Short names (`po`, `deploy`).
    pub short_names: Vec<String>,
    /// Whether this version is its group's preferred version.
    pub preferred: bool,
}

/// Everything one discovery pass found.
#[derive(Debug, Default)]
pub struct Catalog {
    /// The server's `APIGroupList` (from `/apis`), as it sent it.
    pub api_groups: Value,
    /// Every `APIResourceList` by group version (`v1`, `apps/v1`).
    pub resource_lists: BTreeMap<String, Value>,
    /// Every resource of every group version, subresources left out.
    pub resources: Vec<ResourceEntry>,
    /// The server's `/version` document; `Null` when unknown (a replay, or
    /// the server did not answer it).
    pub version: Value,
}

/// Why a kind could not be resolved.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ResolveError {
    /// No resource matches; `candidates` are resources of the same kind name in other groups or versions.
    #[error("kind `{wanted}` is not served by the API server")]
    NotFound {
        /// What was asked for.
        wanted: String,
        /// Resources whose kind has the same name.
        candidates: Vec<ResourceInfo>,
    },
    /// Several groups serve this name; the caller must say which.
    #[error("kind `{wanted}` is ambiguous: it exists as {}; name the group", list(.candidates))]
    Ambiguous {
        /// What was asked for.
        wanted: String,
        /// The matching resources.
        candidates: Vec<ResourceInfo>,
    },
}

fn list(candidates: &[ResourceInfo]) -> String {
    candidates
        .iter()
        .map(|c| format!("`{}`", c.gvk))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A discovery failure that leaves no usable catalog.
#[derive(Debug, thiserror::Error)]
#[error("discovery failed")]
pub struct DiscoveryError(#[from] pub ApiError);

/// The short names and categories the API server gives the built-in
/// kinds, for catalogs that have no server to ask (a replay): `kubectl get
/// deploy` and `kubectl get all` then work there too.
const WELL_KNOWN_NAMES: &[(&str, &str, &[&str], &[&str])] = &[
    ("", "configmaps", &["cm"], &[]),
    ("", "endpoints", &["ep"], &[]),
    ("", "events", &["ev"], &[]),
    ("", "limitranges", &["limits"], &[]),
    ("", "namespaces", &["ns"], &[]),
    ("", "nodes", &["no"], &[]),
    ("", "persistentvolumeclaims", &["pvc"], &[]),
    ("", "persistentvolumes", &["pv"], &[]),
    ("", "pods", &["po"], &["all"]),
    ("", "replicationcontrollers", &["rc"], &["all"]),
    ("", "resourcequotas", &["quota"], &[]),
    ("", "serviceaccounts", &["sa"], &[]),
    ("", "services", &["svc"], &["all"]),
    ("apps", "daemonsets", &["ds"], &["all"]),
    ("apps", "deployments", &["deploy"], &["all"]),
    ("apps", "replicasets", &["rs"], &["all"]),
    ("apps", "statefulsets", &["sts"], &["all"]),
    (
        "autoscaling",
        "horizontalpodautoscalers",
        &["hpa"],
        &["all"],
    ),
    ("batch", "cronjobs", &["cj"], &["all"]),
    ("batch", "jobs", &[], &["all"]),
    ("events.k8s.io", "events", &["ev"], &[]),
    ("networking.k8s.io", "ingresses", &["ing"], &[]),
    ("networking.k8s.io", "networkpolicies", &["netpol"], &[]),
    ("policy", "poddisruptionbudgets", &["pdb"], &[]),
    ("storage.k8s.io", "storageclasses", &["sc"], &[]),
    (
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        &["crd", "crds"],
        &[],
    ),
    (
        "networking.istio.io",
        "gateways",
        &["gw"],
        &["istio-io", "networking-istio-io"],
    ),
    (
        "networking.istio.io",
        "virtualservices",
        &["vs"],
        &["istio-io", "networking-istio-io"],
    ),
];

fn well_known_names(info: &ResourceInfo) -> (&'static [&'static str], &'static [&'static str]) {
    WELL_KNOWN_NAMES
        .iter()
        .find(|(group, plural, ..)| *group == info.gvk.group && *plural == info.plural)
        .map_or((&[], &[]), |(_, _, short, categories)| {
            (*short, *categories)
        })
}

impl Catalog {
    /// A catalog of fixed resources (the replay source: no server to ask).
    pub fn fixed(resources: Vec<ResourceInfo>) -> Catalog {
        let mut resource_lists: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        let entries: Vec<ResourceEntry> = resources
            .into_iter()
            .map(|info| {
                let (short_names, categories) = well_known_names(&info);
                resource_lists
                    .entry(info.gvk.api_version())
                    .or_default()
                    .push(json!({
                        "name": info.plural, "singularName": info.gvk.kind.to_lowercase(),
                        "namespaced": info.namespaced, "kind": info.gvk.kind,
                        "verbs": ["get", "list", "watch"],
                        "shortNames": short_names, "categories": categories,
                    }));
                ResourceEntry {
                    singular: info.gvk.kind.to_lowercase(),
                    short_names: short_names.iter().map(|s| s.to_string()).collect(),
                    preferred: true,
                    info,
                }
            })
            .collect();
        let mut groups: BTreeMap<&str, &str> = BTreeMap::new();
        for e in &entries {
            if !e.info.gvk.group.is_empty() {
                groups.insert(&e.info.gvk.group, &e.info.gvk.version);
            }
        }
        let groups: Vec<Value> = groups
            .iter()
            .map(|(g, v)| {
                let gv = json!({"groupVersion": format!("{g}/{v}"), "version": v});
                json!({"name": g, "versions": [gv], "preferredVersion": gv})
            })
            .collect();
        let mut catalog = Catalog {
            api_groups: json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}),
            resource_lists: resource_lists
                .into_iter()
                .map(|(gv, resources)| {
                    let list = json!({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources});
                    (gv, list)
                })
                .collect(),
            resources: entries,
            version: Value::Null,
        };
        catalog.add_grw_kinds();
        catalog
    }

    /// Adds GRW's own kinds ([`crate::gvk::grw_kinds`]) to the resources,
    /// so they resolve like any other; the API server's lists are left as
    /// the server sent them.
    fn add_grw_kinds(&mut self) {
        for info in crate::gvk::grw_kinds() {
            if self.resources.iter().any(|e| e.info.gvk == info.gvk) {
                continue;
            }
            self.resources.push(ResourceEntry {
                singular: info.gvk.kind.to_lowercase(),
                short_names: Vec::new(),
                preferred: true,
                info,
            });
        }
    }

    /// Resolves what a user named to one resource.
    pub fn resolve(&self, wanted: &KindRef) -> Result<ResourceInfo, ResolveError> {
        let name_matches = |e: &ResourceEntry| {
            e.info.gvk.kind == wanted.name
                || e.info.plural.eq_ignore_ascii_case(&wanted.name)
                || e.singular.eq_ignore_ascii_case(&wanted.name)
                || e.short_names
                    .iter()
                    .any(|s| s.eq_ignore_ascii_case(&wanted.name))
                || e.info.gvk.kind.eq_ignore_ascii_case(&wanted.name)
        };
        let matching: Vec<&ResourceEntry> = self
            .resources
            .iter()
            .filter(|e| name_matches(e))
            .filter(|e| wanted.group.as_ref().is_none_or(|g| *g == e.info.gvk.group))
            .filter(|e| {
                wanted
                    .version
                    .as_ref()
                    .is_none_or(|v| *v == e.info.gvk.version)
            })
            .collect();
        // Without a version, each group contributes its preferred version.
        let chosen: Vec<&ResourceEntry> = if wanted.version.is_some() {
            matching
        } else {
            let mut by_group: BTreeMap<&str, &ResourceEntry> = BTreeMap::new();
            for e in matching {
                let slot = by_group.entry(&e.info.gvk.group).or_insert(e);
                if e.preferred && !slot.preferred {
                    *slot = e;
                }
            }
            by_group.into_values().collect()
        };
        match chosen.as_slice() {
            [one] => Ok(one.info.clone()),
            [] => Err(ResolveError::NotFound {
                wanted: wanted.to_string(),
                candidates: self.with_kind(&wanted.name),
            }),
            many => {
                // Like kubectl, a bare name prefers the core group when it has one.
                if let Some(core) = many.iter().find(|e| e.info.gvk.group.is_empty()) {
                    return Ok(core.info.clone());
                }
                Err(ResolveError::Ambiguous {
                    wanted: wanted.to_string(),
                    candidates: many.iter().map(|e| e.info.clone()).collect(),
                })
            }
        }
    }

    /// Resources whose kind is named `kind` (case-insensitive), in any group or version.
    pub fn with_kind(&self, kind: &str) -> Vec<ResourceInfo> {
        self.resources
            .iter()
            .filter(|e| e.info.gvk.kind.eq_ignore_ascii_case(kind))
            .map(|e| e.info.clone())
            .collect()
    }

    /// The resource of an exact GVK.
    pub fn get(&self, gvk: &Gvk) -> Option<&ResourceInfo> {
        self.resources
            .iter()
            .map(|e| &e.info)
            .find(|i| &i.gvk == gvk)
    }
}

/// How GRW learns that CustomResourceDefinitions came or went, for the
/// status API.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CrdFollowing {
    /// A watch of CustomResourceDefinitions makes discovery be read again
    /// as soon as one changes.
    pub watched: bool,
    /// Discovery is also read again this often (`apiGroupsSyncIntervalSecond`);
    /// `None` when periodic refreshes are off.
    pub refresh_seconds: Option<u64>,
    /// Why CRDs are not watched, and what follows.
    pub warning: Option<String>,
}

/// The current catalog plus how to refresh it.
pub struct Discovery {
    client: Option<KubeClient>,
    catalog: RwLock<Arc<Catalog>>,
    generation: watch::Sender<u64>,
    /// When the last refresh started.
    refreshed: parking_lot::Mutex<Option<std::time::Instant>>,
    crds: parking_lot::Mutex<Option<CrdFollowing>>,
}

impl Discovery {
    /// Discovery against an API server; call [`Discovery::refresh`] before
    /// use. Until then only GRW's own kinds resolve.
    pub fn new(client: KubeClient) -> Discovery {
        let mut first = Catalog::default();
        first.add_grw_kinds();
        Discovery {
            client: Some(client),
            catalog: RwLock::new(Arc::new(first)),
            generation: watch::channel(0).0,
            refreshed: parking_lot::Mutex::new(None),
            crds: parking_lot::Mutex::new(None),
        }
    }

    /// A fixed catalog that never changes.
    pub fn fixed(catalog: Catalog) -> Discovery {
        Discovery {
            client: None,
            catalog: RwLock::new(Arc::new(catalog)),
            generation: watch::channel(1).0,
            refreshed: parking_lot::Mutex::new(None),
            crds: parking_lot::Mutex::new(None),
        }
    }

    /// How CRD changes are followed; `None` before the first discovery
    /// and for a replay.
    pub fn crd_following(&self) -> Option<CrdFollowing> {
        self.crds.lock().clone()
    }

    /// Records how CRD changes are followed.
    pub fn set_crd_following(&self, following: CrdFollowing) {
        *self.crds.lock() = Some(following);
    }

    /// The current catalog.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.catalog.read().clone()
    }

    /// Whether a catalog has been loaded (discovery succeeded at least once).
    pub fn is_loaded(&self) -> bool {
        *self.generation.borrow() > 0
    }

    /// Ticks each time the catalog is replaced.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }

    /// How many times the catalog was replaced: what
    /// [`Discovery::subscribe`] ticks with.
    pub fn generation(&self) -> u64 {
        *self.generation.borrow()
    }

    /// Reads discovery again unless a refresh started less than `age` ago;
    /// the catalog either way. A request naming a kind the catalog does not
    /// know uses it: the kind may have been installed since the last refresh.
    pub async fn refresh_if_older(&self, age: std::time::Duration) -> Arc<Catalog> {
        let recent = self.refreshed.lock().is_some_and(|t| t.elapsed() < age);
        if recent || self.client.is_none() {
            return self.catalog();
        }
        match self.refresh().await {
            Ok(catalog) => catalog,
            Err(e) => {
                tracing::warn!(error = %crate::error::Report(&e), "discovery refresh failed; keeping the previous one");
                self.catalog()
            }
        }
    }

    /// Reads discovery again from the server. Group versions that fail (an
    /// aggregated API being down is common) are left out with a warning.
    pub async fn refresh(&self) -> Result<Arc<Catalog>, DiscoveryError> {
        let Some(client) = &self.client else {
            return Ok(self.catalog());
        };
        *self.refreshed.lock() = Some(std::time::Instant::now());
        let core = client.get_json("/api").await?;
        let api_groups = client.get_json("/apis").await?;
        let version = match client.get_json("/version").await {
            Ok(version) => version,
            Err(e) => {
                tracing::warn!(error = %crate::error::Report(&e), "the API server's /version could not be read");
                Value::Null
            }
        };
        let mut group_versions: Vec<(String, String, bool)> = Vec::new();
        for v in core["versions"].as_array().into_iter().flatten() {
            if let Some(v) = v.as_str() {
                group_versions.push((format!("/api/{v}"), v.to_string(), true));
            }
        }
        for group in api_groups["groups"].as_array().into_iter().flatten() {
            let preferred = group["preferredVersion"]["groupVersion"].as_str();
            for version in group["versions"].as_array().into_iter().flatten() {
                if let Some(gv) = version["groupVersion"].as_str() {
                    let is_preferred = preferred.is_none_or(|p| p == gv);
                    group_versions.push((format!("/apis/{gv}"), gv.to_string(), is_preferred));
                }
            }
        }
        let fetched: Vec<(String, bool, Result<Value, ApiError>)> =
            futures::stream::iter(group_versions)
                .map(|(path, gv, preferred)| async move {
                    (gv, preferred, client.get_json(&path).await)
                })
                .buffer_unordered(CONCURRENT_FETCHES)
                .collect()
                .await;
        let mut catalog = Catalog {
            api_groups,
            version,
            ..Catalog::default()
        };
        for (gv, preferred, result) in fetched {
            match result {
                Ok(list) => {
                    catalog.resources.extend(entries(&gv, &list, preferred));
                    catalog.resource_lists.insert(gv, list);
                }
                Err(e) => {
                    tracing::warn!(group_version = %gv, error = %crate::error::Report(&e), "discovery skipped a group version")
                }
            }
        }
        catalog.add_grw_kinds();
        catalog
            .resources
            .sort_by(|a, b| a.info.gvk.cmp(&b.info.gvk));
        let catalog = Arc::new(catalog);
        let changed = {
            let mut current = self.catalog.write();
            let changed = current.resources != catalog.resources;
            *current = catalog.clone();
            changed
        };
        if changed {
            self.generation.send_modify(|g| *g += 1);
        }
        Ok(catalog)
    }
}

fn entries(group_version: &str, list: &Value, preferred: bool) -> Vec<ResourceEntry> {
    let (group, version) = group_version.split_once('/').unwrap_or(("", group_version));
    list["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| {
            let plural = r["name"].as_str()?;
            if plural.contains('/') {
                return None; // a subresource such as pods/status
            }
            let kind = r["kind"].as_str()?;
            let strings = |v: &Value| -> Vec<String> {
                v.as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|s| s.as_str().map(String::from))
                    .collect()
            };
            if !strings(&r["verbs"]).iter().any(|v| v == "watch") {
                return None; // cannot be cached
            }
            let singular = r["singularName"].as_str().filter(|s| !s.is_empty());
            Some(ResourceEntry {
                info: ResourceInfo {
                    gvk: Gvk::new(group, version, kind),
                    plural: plural.to_string(),
                    namespaced: r["namespaced"].as_bool().unwrap_or(false),
                },
                singular: singular.map_or_else(|| kind.to_lowercase(), String::from),
                short_names: strings(&r["shortNames"]),
                preferred,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        let core = json!({"resources": [
            {"name": "pods", "singularName": "pod", "namespaced": true, "kind": "Pod", "verbs": ["list", "watch"], "shortNames": ["po"]},
            {"name": "pods/status", "namespaced": true, "kind": "Pod", "verbs": ["get"]},
            {"name": "events", "singularName": "event", "namespaced": true, "kind": "Event", "verbs": ["list", "watch"]},
            {"name": "bindings", "namespaced": true, "kind": "Binding", "verbs": ["create"]},
        ]});
        let events = json!({"resources": [
            {"name": "events", "singularName": "event", "namespaced": true, "kind": "Event", "verbs": ["list", "watch"]},
        ]});
        let istio = |v| {
            json!({"resources": [
            {"name": "gateways", "singularName": "gateway", "namespaced": true, "kind": "Gateway", "verbs": ["list", "watch"]},
        ], "groupVersion": format!("networking.istio.io/{v}")})
        };
        let gw = json!({"resources": [
            {"name": "gateways", "singularName": "gateway", "namespaced": true, "kind": "Gateway", "verbs": ["list", "watch"]},
        ]});
        let mut resources = entries("v1", &core, true);
        resources.extend(entries("events.k8s.io/v1", &events, true));
        resources.extend(entries("networking.istio.io/v1", &istio("v1"), true));
        resources.extend(entries(
            "networking.istio.io/v1beta1",
            &istio("v1beta1"),
            false,
        ));
        resources.extend(entries("gateway.networking.k8s.io/v1", &gw, true));
        Catalog {
            resources,
            ..Default::default()
        }
    }

    fn resolve(c: &Catalog, s: &str) -> Result<String, ResolveError> {
        c.resolve(&KindRef::parse(s).unwrap())
            .map(|i| i.gvk.to_string())
    }

    #[test]
    fn resolves_names_plurals_short_names_and_preferred_versions() {
        let c = catalog();
        for (input, want) in [
            ("Pod", "v1/Pod"),
            ("pods", "v1/Pod"),
            ("po", "v1/Pod"),
            ("pod", "v1/Pod"),
            ("v1/Pod", "v1/Pod"),
            ("core/Pod", "v1/Pod"),
            ("Event", "v1/Event"),
            ("events.events.k8s.io", "events.k8s.io/v1/Event"),
            (
                "gateways.networking.istio.io",
                "networking.istio.io/v1/Gateway",
            ),
            (
                "Gateway.v1beta1.networking.istio.io",
                "networking.istio.io/v1beta1/Gateway",
            ),
            (
                "networking.istio.io/v1beta1/Gateway",
                "networking.istio.io/v1beta1/Gateway",
            ),
        ] {
            assert_eq!(resolve(&c, input).unwrap(), want, "{input}");
        }
        assert_eq!(
            c.resources
                .iter()
                .filter(|e| e.info.plural.contains('/'))
                .count(),
            0
        );
        assert!(
            c.resources.iter().all(|e| e.info.gvk.kind != "Binding"),
            "unwatchable kinds are left out"
        );
    }

    #[test]
    fn unknown_and_ambiguous_kinds_say_what_exists() {
        let c = catalog();
        match c.resolve(&KindRef::parse("v2/Pod").unwrap()) {
            Err(ResolveError::NotFound { candidates, .. }) => {
                assert_eq!(candidates.len(), 1);
                assert_eq!(candidates[0].gvk.to_string(), "v1/Pod");
            }
            other => panic!("{other:?}"),
        }
        let err = c.resolve(&KindRef::parse("Gateway").unwrap()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "kind `Gateway` is ambiguous: it exists as `gateway.networking.k8s.io/v1/Gateway`, `networking.istio.io/v1/Gateway`; name the group"
        );
        assert!(
            matches!(resolve(&c, "Nope"), Err(ResolveError::NotFound { candidates, .. }) if candidates.is_empty())
        );
    }

    #[test]
    fn fixed_catalog_serves_discovery_documents() {
        let c = Catalog::fixed(vec![
            ResourceInfo {
                gvk: Gvk::new("", "v1", "Pod"),
                plural: "pods".into(),
                namespaced: true,
            },
            ResourceInfo {
                gvk: Gvk::new("apps", "v1", "Deployment"),
                plural: "deployments".into(),
                namespaced: true,
            },
        ]);
        assert_eq!(c.api_groups["groups"][0]["name"], "apps");
        assert_eq!(
            c.resource_lists["apps/v1"]["resources"][0]["name"],
            "deployments"
        );
        assert_eq!(resolve(&c, "deployments").unwrap(), "apps/v1/Deployment");
    }
}
