//! Resource definitions and the classic discovery documents built from them
//! (`/api`, `/api/v1`, `/apis`, `/apis/{group}`, `/apis/{group}/{version}`, `/version`).

use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde_json::{Value, json};

/// Verbs of an ordinary stored resource.
const STORED_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// One resource (a plural name in a group), served in one or more versions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourceDef {
    /// API group; empty for the core group.
    pub group: String,
    /// Served versions, in the order they were added.
    pub versions: Vec<String>,
    /// Kind, e.g. `Pod`.
    pub kind: String,
    /// Plural resource name, e.g. `pods`.
    pub plural: String,
    /// Singular resource name, e.g. `pod`.
    pub singular: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// `kubectl` short names.
    pub short_names: Vec<String>,
    /// Categories such as `all`.
    pub categories: Vec<String>,
    /// Subresources advertised in discovery (`status`, `scale`, ...). They are not served.
    pub subresources: Vec<String>,
    /// Whether the resource can be listed and watched. `false` for create-only
    /// virtual resources such as `bindings`.
    pub listable: bool,
    /// Whether the resource is defined by a CustomResourceDefinition.
    pub crd: bool,
    /// A CRD's `additionalPrinterColumns`, the same in every version.
    pub printer_columns: Vec<Value>,
}

impl ResourceDef {
    #[allow(clippy::too_many_arguments)]
    fn builtin(
        group: &str,
        version: &str,
        kind: &str,
        plural: &str,
        namespaced: bool,
        short_names: &[&str],
        categories: &[&str],
        subresources: &[&str],
    ) -> Self {
        ResourceDef {
            group: group.to_string(),
            versions: vec![version.to_string()],
            kind: kind.to_string(),
            plural: plural.to_string(),
            singular: kind.to_ascii_lowercase(),
            namespaced,
            short_names: short_names.iter().map(|s| s.to_string()).collect(),
            categories: categories.iter().map(|s| s.to_string()).collect(),
            subresources: subresources.iter().map(|s| s.to_string()).collect(),
            listable: true,
            crd: false,
            printer_columns: Vec::new(),
        }
    }

    /// A resource defined by a CRD, served in one version.
    pub(crate) fn custom(
        group: &str,
        version: &str,
        kind: &str,
        plural: &str,
        namespaced: bool,
    ) -> Self {
        ResourceDef {
            group: group.to_string(),
            versions: vec![version.to_string()],
            kind: kind.to_string(),
            plural: plural.to_string(),
            singular: kind.to_ascii_lowercase(),
            namespaced,
            short_names: Vec::new(),
            categories: Vec::new(),
            subresources: Vec::new(),
            listable: true,
            crd: true,
            printer_columns: Vec::new(),
        }
    }

    /// `apiVersion` of objects of this resource in `version`: `v1` or `apps/v1`.
    pub(crate) fn api_version(&self, version: &str) -> String {
        group_version(&self.group, version)
    }

    /// The list kind, e.g. `PodList`.
    pub(crate) fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    /// The most preferred of the served versions.
    pub(crate) fn preferred_version(&self) -> &str {
        self.versions
            .iter()
            .min_by(|a, b| compare_versions(a, b))
            .map(String::as_str)
            .unwrap_or("v1")
    }

    fn discovery_entries(&self) -> Vec<Value> {
        let verbs: &[&str] = if self.listable {
            STORED_VERBS
        } else {
            &["create"]
        };
        let mut main = json!({
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": verbs,
        });
        if !self.short_names.is_empty() {
            main["shortNames"] = json!(self.short_names);
        }
        if !self.categories.is_empty() {
            main["categories"] = json!(self.categories);
        }
        let mut entries = vec![main];
        for sub in &self.subresources {
            let (kind, group, version, verbs): (&str, Option<&str>, Option<&str>, &[&str]) =
                match sub.as_str() {
                    "scale" => (
                        "Scale",
                        Some("autoscaling"),
                        Some("v1"),
                        &["get", "patch", "update"],
                    ),
                    "status" => (&self.kind, None, None, &["get", "patch", "update"]),
                    "log" => ("Pod", None, None, &["get"]),
                    "eviction" => ("Eviction", Some("policy"), Some("v1"), &["create"]),
                    "binding" => ("Binding", None, None, &["create"]),
                    "finalize" => (&self.kind, None, None, &["update"]),
                    _ => (&self.kind, None, None, &["get"]),
                };
            let mut entry = json!({
                "name": format!("{}/{}", self.plural, sub),
                "singularName": "",
                "namespaced": self.namespaced,
                "kind": kind,
                "verbs": verbs,
            });
            if let Some(g) = group {
                entry["group"] = json!(g);
            }
            if let Some(v) = version {
                entry["version"] = json!(v);
            }
            entries.push(entry);
        }
        entries
    }
}

/// `v1` for the core group, `group/version` otherwise.
pub(crate) fn group_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// The built-in resources every fake server serves.
pub(crate) fn builtin_resources() -> Vec<ResourceDef> {
    let b = ResourceDef::builtin;
    let mut bindings = b("", "v1", "Binding", "bindings", true, &[], &[], &[]);
    bindings.listable = false;
    vec![
        bindings,
        b("", "v1", "ConfigMap", "configmaps", true, &["cm"], &[], &[]),
        b(
            "",
            "v1",
            "Namespace",
            "namespaces",
            false,
            &["ns"],
            &[],
            &["finalize", "status"],
        ),
        b("", "v1", "Event", "events", true, &["ev"], &[], &[]),
        b("", "v1", "Node", "nodes", false, &["no"], &[], &["status"]),
        b(
            "",
            "v1",
            "PersistentVolumeClaim",
            "persistentvolumeclaims",
            true,
            &["pvc"],
            &[],
            &["status"],
        ),
        b(
            "",
            "v1",
            "PersistentVolume",
            "persistentvolumes",
            false,
            &["pv"],
            &[],
            &["status"],
        ),
        b(
            "",
            "v1",
            "Pod",
            "pods",
            true,
            &["po"],
            &["all"],
            &["binding", "eviction", "log", "status"],
        ),
        b("", "v1", "Secret", "secrets", true, &[], &[], &[]),
        b(
            "",
            "v1",
            "Service",
            "services",
            true,
            &["svc"],
            &["all"],
            &["status"],
        ),
        b(
            "apps",
            "v1",
            "DaemonSet",
            "daemonsets",
            true,
            &["ds"],
            &["all"],
            &["status"],
        ),
        b(
            "apps",
            "v1",
            "Deployment",
            "deployments",
            true,
            &["deploy"],
            &["all"],
            &["scale", "status"],
        ),
        b(
            "apps",
            "v1",
            "ReplicaSet",
            "replicasets",
            true,
            &["rs"],
            &["all"],
            &["scale", "status"],
        ),
        b(
            "apps",
            "v1",
            "StatefulSet",
            "statefulsets",
            true,
            &["sts"],
            &["all"],
            &["scale", "status"],
        ),
        b(
            "batch",
            "v1",
            "Job",
            "jobs",
            true,
            &[],
            &["all"],
            &["status"],
        ),
        b(
            "coordination.k8s.io",
            "v1",
            "Lease",
            "leases",
            true,
            &[],
            &[],
            &[],
        ),
        b(
            "events.k8s.io",
            "v1",
            "Event",
            "events",
            true,
            &["ev"],
            &[],
            &[],
        ),
        b(
            "discovery.k8s.io",
            "v1",
            "EndpointSlice",
            "endpointslices",
            true,
            &[],
            &[],
            &[],
        ),
        b(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
            &["crd", "crds"],
            &["api-extensions"],
            &["status"],
        ),
    ]
}

/// The two Istio kinds of the recording, as CRD-backed resources served in `v1beta1` and `v1`.
pub(crate) fn istio_resources() -> Vec<ResourceDef> {
    let mut gateway = ResourceDef::custom(
        "networking.istio.io",
        "v1beta1",
        "Gateway",
        "gateways",
        true,
    );
    gateway.versions.push("v1".to_string());
    gateway.short_names = vec!["gw".to_string()];
    gateway.categories = vec!["istio-io".to_string(), "networking-istio-io".to_string()];
    let mut vs = ResourceDef::custom(
        "networking.istio.io",
        "v1beta1",
        "VirtualService",
        "virtualservices",
        true,
    );
    vs.versions.push("v1".to_string());
    vs.short_names = vec!["vs".to_string()];
    vs.categories = gateway.categories.clone();
    vec![gateway, vs]
}

/// Kubernetes version priority: GA before beta before alpha, higher numbers
/// first, anything unparsable last (alphabetically). `Less` means "preferred".
pub(crate) fn compare_versions(a: &str, b: &str) -> Ordering {
    fn parse(v: &str) -> Option<(u8, u64, u64)> {
        let rest = v.strip_prefix('v')?;
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let major: u64 = rest[..digits].parse().ok()?;
        let tail = &rest[digits..];
        if tail.is_empty() {
            return Some((0, major, 0));
        }
        let (stage, num) = if let Some(n) = tail.strip_prefix("beta") {
            (1, n)
        } else if let Some(n) = tail.strip_prefix("alpha") {
            (2, n)
        } else {
            return None;
        };
        Some((stage, major, num.parse().ok()?))
    }
    match (parse(a), parse(b)) {
        (Some((sa, ma, na)), Some((sb, mb, nb))) => sa.cmp(&sb).then(mb.cmp(&ma)).then(nb.cmp(&na)),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

fn server_addresses(addr: &str) -> Value {
    json!([{ "clientCIDR": "0.0.0.0/0", "serverAddress": addr }])
}

/// `GET /api`.
pub(crate) fn api_versions(addr: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": server_addresses(addr),
    })
}

/// Built-in groups come first in this order; other groups follow alphabetically.
const GROUP_ORDER: &[&str] = &[
    "apps",
    "events.k8s.io",
    "batch",
    "discovery.k8s.io",
    "apiextensions.k8s.io",
];

/// Named groups (not core) with their versions, most preferred version first.
fn groups<'a>(resources: impl Iterator<Item = &'a ResourceDef>) -> Vec<(String, Vec<String>)> {
    let mut by_group: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for def in resources.filter(|d| !d.group.is_empty()) {
        let versions = by_group.entry(def.group.clone()).or_default();
        for v in &def.versions {
            if !versions.contains(v) {
                versions.push(v.clone());
            }
        }
    }
    let mut out: Vec<(String, Vec<String>)> = by_group
        .into_iter()
        .map(|(g, mut vs)| {
            vs.sort_by(|a, b| compare_versions(a, b));
            (g, vs)
        })
        .collect();
    let rank = |g: &str| {
        GROUP_ORDER
            .iter()
            .position(|x| *x == g)
            .unwrap_or(GROUP_ORDER.len())
    };
    out.sort_by(|(a, _), (b, _)| rank(a).cmp(&rank(b)).then(a.cmp(b)));
    out
}

fn group_doc(group: &str, versions: &[String], addr: &str) -> Value {
    let gv = |v: &String| json!({ "groupVersion": group_version(group, v), "version": v });
    json!({
        "name": group,
        "versions": versions.iter().map(gv).collect::<Vec<_>>(),
        "preferredVersion": gv(&versions[0]),
        "serverAddressByClientCIDRs": server_addresses(addr),
    })
}

/// `GET /apis`.
pub(crate) fn api_group_list<'a>(
    resources: impl Iterator<Item = &'a ResourceDef>,
    addr: &str,
) -> Value {
    let groups: Vec<Value> = groups(resources)
        .iter()
        .map(|(g, vs)| {
            let mut doc = group_doc(g, vs, addr);
            doc.as_object_mut()
                .map(|m| m.remove("serverAddressByClientCIDRs"));
            doc
        })
        .collect();
    json!({ "kind": "APIGroupList", "apiVersion": "v1", "groups": groups })
}

/// `GET /apis/{group}`; `None` if no resource is served in that group.
pub(crate) fn api_group<'a>(
    resources: impl Iterator<Item = &'a ResourceDef>,
    group: &str,
    addr: &str,
) -> Option<Value> {
    let (name, versions) = groups(resources).into_iter().find(|(g, _)| g == group)?;
    let mut doc = group_doc(&name, &versions, addr);
    let map = doc.as_object_mut()?;
    map.insert("kind".into(), json!("APIGroup"));
    map.insert("apiVersion".into(), json!("v1"));
    Some(doc)
}

/// `GET /api/{version}` or `GET /apis/{group}/{version}`; `None` if nothing is served there.
pub(crate) fn api_resource_list<'a>(
    resources: impl Iterator<Item = &'a ResourceDef>,
    group: &str,
    version: &str,
) -> Option<Value> {
    let mut defs: Vec<&ResourceDef> = resources
        .filter(|d| d.group == group && d.versions.iter().any(|v| v == version))
        .collect();
    if defs.is_empty() {
        return None;
    }
    defs.sort_by(|a, b| a.plural.cmp(&b.plural));
    let entries: Vec<Value> = defs.iter().flat_map(|d| d.discovery_entries()).collect();
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version(group, version),
        "resources": entries,
    }))
}

/// `GET /version`.
pub(crate) fn version_info() -> Value {
    json!({
        "major": "1",
        "minor": "32",
        "gitVersion": "v1.32.13",
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-11-01T00:00:00Z",
        "goVersion": "go1.23.12",
        "compiler": "gc",
        "platform": "linux/amd64",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_priority() {
        let mut vs = vec![
            "v1alpha1", "v1beta1", "v2", "v1", "v2beta3", "foo", "v1beta2",
        ];
        vs.sort_by(|a, b| compare_versions(a, b));
        assert_eq!(
            vs,
            [
                "v2", "v1", "v2beta3", "v1beta2", "v1beta1", "v1alpha1", "foo"
            ]
        );
    }

    #[test]
    fn istio_prefers_v1() {
        let defs = istio_resources();
        assert_eq!(defs[0].preferred_version(), "v1");
        let list = api_group_list(defs.iter(), "127.0.0.1:1");
        assert_eq!(list["groups"][0]["preferredVersion"]["version"], "v1");
        assert_eq!(
            list["groups"][0]["versions"][1]["groupVersion"],
            "networking.istio.io/v1beta1"
        );
    }
}
