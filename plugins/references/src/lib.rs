//! # references
//!
//! A GRW analyzer for the objects that other objects name in their spec:
//!
//! - Pod `runs-on` Node (`spec.nodeName`), Pod `runs-as` ServiceAccount
//!   (`spec.serviceAccountName`);
//! - Pod `uses` ConfigMap, Secret or PersistentVolumeClaim, with attribute
//!   `via`: `volume` (a volume of that type), `projected` (a source of a
//!   projected volume), `env` (one variable's `valueFrom`), `envFrom`
//!   (over containers, init containers and ephemeral containers) or
//!   `imagePullSecret` (a Secret of `spec.imagePullSecrets`); one edge per
//!   target and `via`;
//! - the same `runs-as` and `uses` edges from each workload, read from its
//!   pod template: Deployment, ReplicaSet, StatefulSet, DaemonSet and Job
//!   (`spec.template.spec`), CronJob (`spec.jobTemplate.spec.template.spec`).
//!   So a Deployment `uses` the ConfigMap its Pods mount at depth 1, and
//!   still does when scaled to zero, when deleting that ConfigMap would
//!   break its next Pod all the same. A template has no node: no `runs-on`;
//! - StatefulSet `uses` StorageClass (`via` `volumeClaimTemplate`), the
//!   `storageClassName` of each of its `spec.volumeClaimTemplates`: the
//!   class its claims will be made in. `uses`, not the PersistentVolume's
//!   `of-class`, because the StatefulSet is of no class: it needs the
//!   class to exist to get its next claim, as it needs its ConfigMaps. A
//!   template without a class (the cluster's default) names none;
//! - PersistentVolumeClaim `bound-to` PersistentVolume (`spec.volumeName`);
//! - PersistentVolume `of-class` StorageClass (`spec.storageClassName`);
//! - Ingress `routes-to` Service: the default backend and every path's
//!   backend service.
//!
//! Each reads the one part of the object it needs. Targets need not exist:
//! a Pod naming a Secret that is missing has an edge to a missing Secret,
//! which is the first thing to look for when it does not start.
//!
//! No configuration.

use std::collections::BTreeSet;

use grw_sdk::{
    Analyzer, Cache, FieldPath, Gvk, Interest, KindPattern, ObjectRef, ObjectView, Relationship,
};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// The analyzer; it has no state.
pub struct References;

fn path(p: &str) -> FieldPath {
    p.parse().expect("a valid path")
}

fn core(kind: &str) -> Gvk {
    Gvk::new("", "v1", kind)
}

fn storage_class(name: String) -> ObjectRef {
    ObjectRef::new(Gvk::new("storage.k8s.io", "v1", "StorageClass"), "", name)
}

impl Analyzer for References {
    fn init(config: &str) -> Result<(Self, Interest), String> {
        let _: serde::de::IgnoredAny = grw_sdk::parse_config(config)?;
        Ok((
            References,
            Interest::all().kinds([
                KindPattern::group_kind("", "Pod"),
                KindPattern::group_kind("apps", "Deployment"),
                KindPattern::group_kind("apps", "ReplicaSet"),
                KindPattern::group_kind("apps", "StatefulSet"),
                KindPattern::group_kind("apps", "DaemonSet"),
                KindPattern::group_kind("batch", "Job"),
                KindPattern::group_kind("batch", "CronJob"),
                KindPattern::group_kind("", "PersistentVolumeClaim"),
                KindPattern::group_kind("", "PersistentVolume"),
                KindPattern::group_kind("networking.k8s.io", "Ingress"),
            ]),
        ))
    }

    fn analyze(&self, object: &ObjectView, _cache: &dyn Cache) -> Vec<Relationship> {
        match (object.gvk().group.as_str(), object.gvk().kind.as_str()) {
            ("", "Pod") => pod(object),
            ("apps", "Deployment" | "ReplicaSet" | "DaemonSet") | ("batch", "Job") => {
                template(object, "spec.template.spec")
            }
            ("apps", "StatefulSet") => {
                let mut edges = template(object, "spec.template.spec");
                edges.extend(claim_templates(object));
                edges
            }
            ("batch", "CronJob") => template(object, "spec.jobTemplate.spec.template.spec"),
            ("", "PersistentVolumeClaim") => named(object, "spec.volumeName", "bound-to", |name| {
                ObjectRef::new(core("PersistentVolume"), "", name)
            }),
            ("", "PersistentVolume") => {
                named(object, "spec.storageClassName", "of-class", storage_class)
            }
            ("networking.k8s.io", "Ingress") => ingress(object),
            _ => Vec::new(),
        }
    }
}

/// One edge to the object a string field names, if it is set.
fn named(
    object: &ObjectView,
    field: &str,
    relation: &str,
    target: impl FnOnce(String) -> ObjectRef,
) -> Vec<Relationship> {
    match object.field(&path(field)) {
        Some(Value::String(name)) if !name.is_empty() => {
            vec![Relationship::outgoing(relation, target(name))]
        }
        _ => Vec::new(),
    }
}

/// The parts of a Pod's spec that name other objects.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct PodSpec {
    node_name: Option<String>,
    service_account_name: Option<String>,
    image_pull_secrets: Vec<Named>,
    volumes: Vec<Volume>,
    containers: Vec<Container>,
    init_containers: Vec<Container>,
    ephemeral_containers: Vec<Container>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Volume {
    config_map: Option<Named>,
    secret: Option<SecretVolume>,
    persistent_volume_claim: Option<Claim>,
    projected: Option<Projected>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Named {
    name: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct SecretVolume {
    secret_name: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Claim {
    claim_name: Option<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Projected {
    sources: Vec<ProjectedSource>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct ProjectedSource {
    config_map: Option<Named>,
    secret: Option<Named>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Container {
    env: Vec<EnvVar>,
    env_from: Vec<EnvFrom>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct EnvVar {
    value_from: Option<EnvSource>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct EnvSource {
    config_map_key_ref: Option<Named>,
    secret_key_ref: Option<Named>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct EnvFrom {
    config_map_ref: Option<Named>,
    secret_ref: Option<Named>,
}

/// The part of `object` at `field`, or `None` when it is absent or
/// unreadable (with a warning, since the object's edges then go missing).
fn read<T: DeserializeOwned>(object: &ObjectView, field: &str) -> Option<T> {
    match object.field(&path(field)).map(serde_json::from_value) {
        Some(Ok(part)) => Some(part),
        Some(Err(e)) => {
            grw_sdk::log::warn(format!(
                "{} {}/{}: unreadable {field} ({e}); no reference edges from it",
                object.gvk().kind,
                object.namespace(),
                object.name()
            ));
            None
        }
        None => None,
    }
}

/// A Pod: its node, and what its spec names.
fn pod(pod: &ObjectView) -> Vec<Relationship> {
    let Some(mut spec) = read::<PodSpec>(pod, "spec") else {
        return Vec::new();
    };
    let mut edges = Vec::new();
    if let Some(node) = spec.node_name.take().filter(|n| !n.is_empty()) {
        edges.push(Relationship::outgoing(
            "runs-on",
            ObjectRef::new(core("Node"), "", node),
        ));
    }
    edges.extend(pod_spec(pod.namespace(), spec));
    edges
}

/// A workload: what the pod template at `field` names, as a Pod made from
/// it would (it has no node yet).
fn template(workload: &ObjectView, field: &str) -> Vec<Relationship> {
    read::<PodSpec>(workload, field)
        .map(|spec| pod_spec(workload.namespace(), spec))
        .unwrap_or_default()
}

/// The ServiceAccount a pod spec runs as and what it uses, in `namespace`:
/// one path for Pods and pod templates alike.
fn pod_spec(namespace: &str, spec: PodSpec) -> Vec<Relationship> {
    let mut edges = Vec::new();
    if let Some(account) = spec.service_account_name.filter(|n| !n.is_empty()) {
        edges.push(Relationship::outgoing(
            "runs-as",
            ObjectRef::new(core("ServiceAccount"), namespace, account),
        ));
    }
    // (kind, name, via), each once.
    let mut uses = BTreeSet::new();
    let mut add = |kind: &'static str, name: Option<String>, via: &'static str| {
        if let Some(name) = name.filter(|n| !n.is_empty()) {
            uses.insert((kind, name, via));
        }
    };
    for secret in spec.image_pull_secrets {
        add("Secret", secret.name, "imagePullSecret");
    }
    for volume in spec.volumes {
        add(
            "ConfigMap",
            volume.config_map.and_then(|c| c.name),
            "volume",
        );
        add(
            "Secret",
            volume.secret.and_then(|s| s.secret_name),
            "volume",
        );
        add(
            "PersistentVolumeClaim",
            volume.persistent_volume_claim.and_then(|c| c.claim_name),
            "volume",
        );
        for source in volume.projected.map(|p| p.sources).unwrap_or_default() {
            add(
                "ConfigMap",
                source.config_map.and_then(|c| c.name),
                "projected",
            );
            add("Secret", source.secret.and_then(|s| s.name), "projected");
        }
    }
    let containers = spec
        .containers
        .into_iter()
        .chain(spec.init_containers)
        .chain(spec.ephemeral_containers);
    for container in containers {
        for source in container.env.into_iter().filter_map(|e| e.value_from) {
            add(
                "ConfigMap",
                source.config_map_key_ref.and_then(|c| c.name),
                "env",
            );
            add("Secret", source.secret_key_ref.and_then(|s| s.name), "env");
        }
        for from in container.env_from {
            add(
                "ConfigMap",
                from.config_map_ref.and_then(|c| c.name),
                "envFrom",
            );
            add("Secret", from.secret_ref.and_then(|s| s.name), "envFrom");
        }
    }
    edges.extend(uses.into_iter().map(|(kind, name, via)| {
        Relationship::outgoing("uses", ObjectRef::new(core(kind), namespace, name)).with("via", via)
    }));
    edges
}

/// The part of a StatefulSet's claim template that names another object.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ClaimTemplate {
    spec: ClaimSpec,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct ClaimSpec {
    storage_class_name: Option<String>,
}

/// A StatefulSet's claim templates: the StorageClasses its claims will be
/// made in, each once.
fn claim_templates(set: &ObjectView) -> Vec<Relationship> {
    let templates: Vec<ClaimTemplate> = read(set, "spec.volumeClaimTemplates").unwrap_or_default();
    let classes: BTreeSet<String> = templates
        .into_iter()
        .filter_map(|t| t.spec.storage_class_name)
        .filter(|n| !n.is_empty())
        .collect();
    classes
        .into_iter()
        .map(|class| {
            Relationship::outgoing("uses", storage_class(class)).with("via", "volumeClaimTemplate")
        })
        .collect()
}

/// The parts of an Ingress's spec that name Services.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct IngressSpec {
    default_backend: Option<Backend>,
    rules: Vec<Rule>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Rule {
    http: Option<HttpRule>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct HttpRule {
    paths: Vec<HttpPath>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct HttpPath {
    backend: Option<Backend>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct Backend {
    service: Option<Named>,
}

fn ingress(ingress: &ObjectView) -> Vec<Relationship> {
    let Some(Ok(spec)) = ingress
        .field(&path("spec"))
        .map(serde_json::from_value::<IngressSpec>)
    else {
        return Vec::new();
    };
    let backends = spec.default_backend.into_iter().chain(
        spec.rules
            .into_iter()
            .filter_map(|r| r.http)
            .flat_map(|h| h.paths)
            .filter_map(|p| p.backend),
    );
    let services: BTreeSet<String> = backends
        .filter_map(|b| b.service?.name)
        .filter(|n| !n.is_empty())
        .collect();
    services
        .into_iter()
        .map(|name| {
            Relationship::outgoing(
                "routes-to",
                ObjectRef::new(core("Service"), ingress.namespace(), name),
            )
        })
        .collect()
}

grw_sdk::export_analyzer!(References);

#[cfg(test)]
mod tests;
