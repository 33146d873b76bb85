//! Discovery documents of what GRW serves: every resource of the API
//! server's discovery that can be listed and watched (so it can be cached),
//! plus GRW's own kinds, each with the verbs GRW serves (`get`, `list`,
//! `watch`) and the names, scope, short names and categories the API server
//! gives it. Built from the current discovery catalog at each request, so
//! CRDs appear and disappear as discovery follows them.
//!
//! Both forms are served: one document per group version (`/api`, `/apis`,
//! `/apis/{group}`, `/api/v1`, `/apis/{group}/{version}`), and the
//! aggregated `APIGroupDiscoveryList` that kubectl 1.30 and later ask for
//! first.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use crate::gvk::{GRW_GROUP, grw_kinds};
use crate::kube::Catalog;

/// The verbs GRW serves on every resource.
const VERBS: [&str; 3] = ["get", "list", "watch"];

/// What GRW serves, grouped as discovery groups it: the core group first
/// (named `""`), then the API server's groups in its order, then GRW's own.
pub(crate) struct Served {
    groups: Vec<ServedGroup>,
}

struct ServedGroup {
    name: String,
    /// The API server's preferred version, if GRW serves it; else the first.
    preferred: String,
    versions: Vec<ServedVersion>,
}

struct ServedVersion {
    version: String,
    resources: Vec<Resource>,
}

/// One resource as discovery describes it.
struct Resource {
    name: String,
    singular: String,
    namespaced: bool,
    kind: String,
    short_names: Vec<String>,
    categories: Vec<String>,
}

impl Served {
    /// What `catalog` lets GRW serve.
    pub(crate) fn new(catalog: &Catalog) -> Served {
        let cacheable: BTreeSet<(String, &str)> = catalog
            .resources
            .iter()
            .map(|e| (e.info.gvk.api_version(), e.info.plural.as_str()))
            .collect();
        let version_of = |group_version: &str| -> Option<ServedVersion> {
            let list = catalog.resource_lists.get(group_version)?;
            let resources: Vec<Resource> = list["resources"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Resource::read)
                .filter(|r| cacheable.contains(&(group_version.to_string(), r.name.as_str())))
                .collect();
            let version = group_version.rsplit('/').next()?.to_string();
            (!resources.is_empty()).then_some(ServedVersion { version, resources })
        };
        let mut groups = Vec::new();
        let core_versions: Vec<ServedVersion> = catalog
            .resource_lists
            .keys()
            .filter(|gv| !gv.contains('/'))
            .filter_map(|gv| version_of(gv))
            .collect();
        if !core_versions.is_empty() {
            groups.push(ServedGroup {
                name: String::new(),
                preferred: core_versions[0].version.clone(),
                versions: core_versions,
            });
        }
        for group in catalog.api_groups["groups"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let Some(name) = group["name"].as_str() else {
                continue;
            };
            let versions: Vec<ServedVersion> = group["versions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|v| version_of(v["groupVersion"].as_str()?))
                .collect();
            let Some(first) = versions.first() else {
                continue;
            };
            let preferred = group["preferredVersion"]["version"]
                .as_str()
                .filter(|p| versions.iter().any(|v| v.version == *p))
                .unwrap_or(&first.version)
                .to_string();
            groups.push(ServedGroup {
                name: name.to_string(),
                preferred,
                versions,
            });
        }
        groups.push(grw_group());
        Served { groups }
    }

    /// `/api`: `APIVersions`.
    pub(crate) fn core_versions(&self) -> Value {
        let versions: Vec<&str> = self
            .core()
            .map(|g| g.versions.iter().map(|v| v.version.as_str()).collect())
            .unwrap_or_default();
        json!({"kind": "APIVersions", "versions": versions})
    }

    /// `/apis`: `APIGroupList`.
    pub(crate) fn group_list(&self) -> Value {
        let groups: Vec<Value> = self.named().map(ServedGroup::api_group).collect();
        json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
    }

    /// `/apis/{group}`: `APIGroup`, if GRW serves that group.
    pub(crate) fn group(&self, name: &str) -> Option<Value> {
        let group = self.named().find(|g| g.name == name)?;
        let mut document = group.api_group();
        document["kind"] = json!("APIGroup");
        document["apiVersion"] = json!("v1");
        Some(document)
    }

    /// `/api/{version}`, `/apis/{group}/{version}`: `APIResourceList`, if
    /// GRW serves that group version.
    pub(crate) fn resource_list(&self, group: &str, version: &str) -> Option<Value> {
        let served = self
            .groups
            .iter()
            .find(|g| g.name == group)?
            .versions
            .iter()
            .find(|v| v.version == version)?;
        let group_version = if group.is_empty() {
            version.to_string()
        } else {
            format!("{group}/{version}")
        };
        let resources: Vec<Value> = served.resources.iter().map(Resource::classic).collect();
        Some(json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": group_version,
            "resources": resources,
        }))
    }

    /// `/api` (core) or `/apis` (the others) as an aggregated
    /// `APIGroupDiscoveryList` of `apidiscovery.k8s.io/{version}`.
    pub(crate) fn aggregated(&self, core: bool, version: &str) -> Value {
        let items: Vec<Value> = self
            .groups
            .iter()
            .filter(|g| g.name.is_empty() == core)
            .map(|g| {
                let metadata = if core {
                    json!({"creationTimestamp": null})
                } else {
                    json!({"name": g.name, "creationTimestamp": null})
                };
                // The preferred version first, as the API server orders them.
                let mut versions: Vec<&ServedVersion> = g.versions.iter().collect();
                versions.sort_by_key(|v| v.version != g.preferred);
                let versions: Vec<Value> = versions
                    .into_iter()
                    .map(|v| {
                        let resources: Vec<Value> =
                            v.resources.iter().map(Resource::aggregated).collect();
                        json!({"version": v.version, "resources": resources, "freshness": "Current"})
                    })
                    .collect();
                json!({"metadata": metadata, "versions": versions})
            })
            .collect();
        json!({
            "kind": "APIGroupDiscoveryList",
            "apiVersion": format!("apidiscovery.k8s.io/{version}"),
            "metadata": {},
            "items": items,
        })
    }

    fn core(&self) -> Option<&ServedGroup> {
        self.groups.iter().find(|g| g.name.is_empty())
    }

    fn named(&self) -> impl Iterator<Item = &ServedGroup> {
        self.groups.iter().filter(|g| !g.name.is_empty())
    }
}

impl ServedGroup {
    /// The group as `APIGroupList` lists it.
    fn api_group(&self) -> Value {
        let version = |v: &str| json!({"groupVersion": format!("{}/{v}", self.name), "version": v});
        let versions: Vec<Value> = self.versions.iter().map(|v| version(&v.version)).collect();
        json!({"name": self.name, "versions": versions, "preferredVersion": version(&self.preferred)})
    }
}

impl Resource {
    /// A resource of an `APIResourceList`; subresources (`pods/log`) are
    /// left out, GRW serves none.
    fn read(resource: &Value) -> Option<Resource> {
        let name = resource["name"].as_str().filter(|n| !n.contains('/'))?;
        let kind = resource["kind"].as_str()?;
        let strings = |v: &Value| -> Vec<String> {
            v.as_array()
                .into_iter()
                .flatten()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        };
        Some(Resource {
            name: name.to_string(),
            singular: resource["singularName"]
                .as_str()
                .filter(|s| !s.is_empty())
                .map_or_else(|| kind.to_lowercase(), String::from),
            namespaced: resource["namespaced"].as_bool().unwrap_or(false),
            kind: kind.to_string(),
            short_names: strings(&resource["shortNames"]),
            categories: strings(&resource["categories"]),
        })
    }

    fn classic(&self) -> Value {
        let mut resource = json!({
            "name": self.name,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": VERBS,
        });
        if !self.short_names.is_empty() {
            resource["shortNames"] = json!(self.short_names);
        }
        if !self.categories.is_empty() {
            resource["categories"] = json!(self.categories);
        }
        resource
    }

    fn aggregated(&self) -> Value {
        let mut resource = json!({
            "resource": self.name,
            "responseKind": {"group": "", "version": "", "kind": self.kind},
            "scope": if self.namespaced { "Namespaced" } else { "Cluster" },
            "singularResource": self.singular,
            "verbs": VERBS,
        });
        if !self.short_names.is_empty() {
            resource["shortNames"] = json!(self.short_names);
        }
        if !self.categories.is_empty() {
            resource["categories"] = json!(self.categories);
        }
        resource
    }
}

/// GRW's own kinds (the relationship index as objects), served like any
/// other group.
fn grw_group() -> ServedGroup {
    let resources = grw_kinds()
        .into_iter()
        .map(|info| Resource {
            singular: info.gvk.kind.to_lowercase(),
            name: info.plural,
            namespaced: info.namespaced,
            kind: info.gvk.kind,
            short_names: Vec::new(),
            categories: Vec::new(),
        })
        .collect();
    ServedGroup {
        name: GRW_GROUP.to_string(),
        preferred: "v1".to_string(),
        versions: vec![ServedVersion {
            version: "v1".to_string(),
            resources,
        }],
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::gvk::{Gvk, ResourceInfo};
    use crate::kube::ResourceEntry;

    fn fixture(name: &str) -> Value {
        let path = format!(
            "{}/../tests/data/kube-api/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// The recorded API server's discovery as GRW's catalog holds it.
    fn recorded() -> Catalog {
        let mut resource_lists = BTreeMap::new();
        resource_lists.insert("v1".to_string(), fixture("api-v1.json"));
        resource_lists.insert("apps/v1".to_string(), fixture("apis-apps-v1.json"));
        let mut resources = Vec::new();
        for (group_version, list) in &resource_lists {
            let (group, version) = group_version.split_once('/').unwrap_or(("", group_version));
            for r in list["resources"].as_array().unwrap() {
                let name = r["name"].as_str().unwrap();
                let watchable = r["verbs"].as_array().unwrap().iter().any(|v| v == "watch");
                if name.contains('/') || !watchable {
                    continue;
                }
                resources.push(ResourceEntry {
                    info: ResourceInfo {
                        gvk: Gvk::new(group, version, r["kind"].as_str().unwrap()),
                        plural: name.to_string(),
                        namespaced: r["namespaced"].as_bool().unwrap(),
                    },
                    singular: r["singularName"].as_str().unwrap().to_string(),
                    short_names: Vec::new(),
                    preferred: true,
                });
            }
        }
        Catalog {
            api_groups: fixture("apis.json"),
            resource_lists,
            resources,
            version: Value::Null,
        }
    }

    /// `(name, kind, namespaced, shortNames, categories)` of each resource.
    fn summary(list: &Value, only: &BTreeSet<&str>) -> Vec<Value> {
        list["resources"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| only.contains(r["name"].as_str().unwrap()))
            .map(|r| {
                json!([
                    r["name"],
                    r["singularName"],
                    r["kind"],
                    r["namespaced"],
                    r["shortNames"],
                    r["categories"]
                ])
            })
            .collect()
    }

    #[test]
    fn group_version_documents_keep_the_api_servers_names_and_serve_reads() {
        let served = Served::new(&recorded());
        let ours = served.resource_list("apps", "v1").unwrap();
        let theirs = fixture("apis-apps-v1.json");
        assert_eq!(ours["kind"], "APIResourceList");
        assert_eq!(ours["groupVersion"], theirs["groupVersion"]);
        let names: BTreeSet<&str> = ours["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            BTreeSet::from([
                "controllerrevisions",
                "daemonsets",
                "deployments",
                "replicasets",
                "statefulsets"
            ])
        );
        assert_eq!(summary(&ours, &names), summary(&theirs, &names));
        for r in ours["resources"].as_array().unwrap() {
            assert_eq!(r["verbs"], json!(["get", "list", "watch"]));
        }

        // Core: no bindings (create only), no componentstatuses (no watch),
        // no subresources.
        let core = served.resource_list("", "v1").unwrap();
        let names: Vec<&str> = core["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["name"].as_str().unwrap())
            .collect();
        assert!(
            names.contains(&"pods") && names.contains(&"namespaces"),
            "{names:?}"
        );
        assert!(
            !names
                .iter()
                .any(|n| *n == "bindings" || *n == "componentstatuses" || n.contains('/'))
        );
        assert_eq!(
            served.core_versions(),
            json!({"kind": "APIVersions", "versions": ["v1"]})
        );
        assert_eq!(served.resource_list("apps", "v2"), None);
        assert_eq!(served.resource_list("batch", "v1"), None);
    }

    #[test]
    fn groups_are_those_with_something_served() {
        let served = Served::new(&recorded());
        let groups = served.group_list();
        let names: Vec<&str> = groups["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["name"].as_str().unwrap())
            .collect();
        // The recorded catalog has resource lists of core and apps only.
        assert_eq!(names, ["apps", GRW_GROUP]);
        assert_eq!(served.group("apps").unwrap(), fixture("apis-apps.json"));
        assert_eq!(served.group("batch"), None);
    }

    #[test]
    fn aggregated_documents_have_the_api_servers_shape() {
        let served = Served::new(&recorded());
        let theirs = fixture("api-aggregated.json");
        let ours = served.aggregated(true, "v2");
        assert_eq!(ours["kind"], theirs["kind"]);
        assert_eq!(ours["apiVersion"], theirs["apiVersion"]);
        assert_eq!(ours["items"][0]["metadata"], theirs["items"][0]["metadata"]);
        let pods = |doc: &Value| -> Value {
            let mut pods = doc["items"][0]["versions"][0]["resources"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["resource"] == "pods")
                .unwrap()
                .clone();
            pods.as_object_mut().unwrap().remove("verbs");
            pods.as_object_mut().unwrap().remove("subresources");
            pods
        };
        assert_eq!(pods(&ours), pods(&theirs));
        assert_eq!(ours["items"][0]["versions"][0]["freshness"], "Current");

        let apis = served.aggregated(false, "v2beta1");
        assert_eq!(apis["apiVersion"], "apidiscovery.k8s.io/v2beta1");
        let theirs = fixture("apis-aggregated.json");
        let apps = |doc: &Value| -> Value {
            doc["items"]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| g["metadata"]["name"] == "apps")
                .unwrap()["metadata"]
                .clone()
        };
        assert_eq!(apps(&apis), apps(&theirs));
    }
}
