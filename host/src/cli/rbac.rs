//! `grw rbac`: the least-privilege RBAC objects for a configuration, so that
//! nobody writes them by hand.
//!
//! GRW only ever lists and watches the cluster, so a configuration asks for
//! exactly `list` and `watch` on each kind it names (and, with
//! `leaderElection`, its one Lease):
//! - `initialWatchingResources` and `subscriptions` watching the whole
//!   cluster, and the kinds the built-in analyzers follow (unless
//!   `builtinAnalyzers` turns them off), go into one ClusterRole (bound by
//!   a ClusterRoleBinding);
//! - those watching one namespace go into a Role in that namespace (bound
//!   by a RoleBinding there), unless the ClusterRole covers them already;
//! - with a ClusterRole, the discovery paths GRW reads (`/api`, `/apis` and
//!   below; every authenticated user has them through `system:discovery`
//!   anyway, this says so), and, when a watched kind is a custom resource,
//!   CustomResourceDefinitions, whose changes make GRW read discovery again
//!   at once. Without it (a namespaced sidecar) GRW reads discovery every
//!   `apiGroupsSyncIntervalSecond` instead;
//! - when a listener checks its callers with the API server (`apiAuth` or
//!   `tlsListener.auth` `delegated`), `create` on `tokenreviews` and
//!   `subjectaccessreviews`, in the ClusterRole (they are cluster-scoped).
//!
//! The kinds come from the configuration alone, without a cluster: built-in
//! kinds by Kubernetes' own names (from `k8s-openapi`), custom ones by
//! their group and a plural made from the kind the way kube does (said in
//! a comment, to check against `kubectl api-resources`). What the
//! configuration cannot tell is said in comments too: on-demand watches and
//! subscriptions created over the API need their kinds granted as well.

use std::any::TypeId;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use k8s_openapi::NamespaceResourceScope;
use k8s_openapi::api::rbac::v1::{
    ClusterRole, ClusterRoleBinding, PolicyRule, Role, RoleBinding, RoleRef, Subject,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;

use crate::config::Config;
use crate::gvk::KindRef;
use crate::plugin::BUILT_IN;

/// Who the objects bind and what they are called.
#[derive(clap::Args, Debug, Clone, PartialEq)]
pub struct RbacArgs {
    /// The config file to write RBAC for (default: as the daemon finds it)
    #[arg(long, value_name = "FILE")]
    pub config: Option<std::path::PathBuf>,
    /// The ServiceAccount GRW runs as
    #[arg(long, value_name = "NAME", default_value = "grw")]
    pub service_account: String,
    /// The ServiceAccount's namespace
    #[arg(long, value_name = "NAMESPACE", default_value = "grw")]
    pub namespace: String,
    /// Name of the ClusterRole, the Roles and their bindings
    #[arg(long, value_name = "NAME", default_value = "grw")]
    pub name: String,
}

/// The verbs of every rule: GRW lists, then watches from where the list ended.
const VERBS: [&str; 2] = ["list", "watch"];

/// The paths discovery reads.
const DISCOVERY_PATHS: [&str; 4] = ["/api", "/api/*", "/apis", "/apis/*"];

/// What `delegated` access creates: who a caller is, what it may do.
const REVIEWS: [(&str, &str); 2] = [
    ("authentication.k8s.io", "tokenreviews"),
    ("authorization.k8s.io", "subjectaccessreviews"),
];

/// One kind a configuration watches, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// API group, `""` for the core group.
    pub group: String,
    /// Plural resource name, as in URLs and RBAC rules.
    pub resource: String,
    /// `None`: the whole cluster.
    pub namespace: Option<String>,
    /// Not a built-in kind (it needs a CustomResourceDefinition).
    pub custom: bool,
    /// The configuration entry that asks for it, e.g. `initialWatchingResources[0]`.
    pub source: String,
}

/// A configuration that names a kind `grw rbac` cannot place.
#[derive(Debug, thiserror::Error, PartialEq)]
#[error("{entry}: {message}")]
pub struct RbacError {
    /// The configuration entry.
    pub entry: String,
    /// What is wrong with it.
    pub message: String,
}

/// A kind Kubernetes serves without a CRD.
#[derive(Debug, Clone, Copy)]
struct BuiltIn {
    group: &'static str,
    kind: &'static str,
    resource: &'static str,
    namespaced: bool,
}

fn built_in<K>() -> BuiltIn
where
    K: k8s_openapi::Resource,
    K::Scope: 'static,
{
    BuiltIn {
        group: K::GROUP,
        kind: K::KIND,
        resource: K::URL_PATH_SEGMENT,
        namespaced: TypeId::of::<K::Scope>() == TypeId::of::<NamespaceResourceScope>(),
    }
}

/// Every built-in kind that can be listed and watched.
fn built_ins() -> Vec<BuiltIn> {
    use k8s_openapi::api::{
        admissionregistration, apps, autoscaling, batch, certificates, coordination, core,
        discovery, events, flowcontrol, networking, node, policy, rbac, scheduling, storage,
    };
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions;
    use k8s_openapi::kube_aggregator::pkg::apis::apiregistration;
    vec![
        built_in::<core::v1::ConfigMap>(),
        built_in::<core::v1::Endpoints>(),
        built_in::<core::v1::Event>(),
        built_in::<core::v1::LimitRange>(),
        built_in::<core::v1::Namespace>(),
        built_in::<core::v1::Node>(),
        built_in::<core::v1::PersistentVolume>(),
        built_in::<core::v1::PersistentVolumeClaim>(),
        built_in::<core::v1::Pod>(),
        built_in::<core::v1::PodTemplate>(),
        built_in::<core::v1::ReplicationController>(),
        built_in::<core::v1::ResourceQuota>(),
        built_in::<core::v1::Secret>(),
        built_in::<core::v1::Service>(),
        built_in::<core::v1::ServiceAccount>(),
        built_in::<admissionregistration::v1::MutatingWebhookConfiguration>(),
        built_in::<admissionregistration::v1::ValidatingAdmissionPolicy>(),
        built_in::<admissionregistration::v1::ValidatingAdmissionPolicyBinding>(),
        built_in::<admissionregistration::v1::ValidatingWebhookConfiguration>(),
        built_in::<apiextensions::v1::CustomResourceDefinition>(),
        built_in::<apiregistration::v1::APIService>(),
        built_in::<apps::v1::ControllerRevision>(),
        built_in::<apps::v1::DaemonSet>(),
        built_in::<apps::v1::Deployment>(),
        built_in::<apps::v1::ReplicaSet>(),
        built_in::<apps::v1::StatefulSet>(),
        built_in::<autoscaling::v2::HorizontalPodAutoscaler>(),
        built_in::<batch::v1::CronJob>(),
        built_in::<batch::v1::Job>(),
        built_in::<certificates::v1::CertificateSigningRequest>(),
        built_in::<coordination::v1::Lease>(),
        built_in::<discovery::v1::EndpointSlice>(),
        built_in::<events::v1::Event>(),
        built_in::<flowcontrol::v1::FlowSchema>(),
        built_in::<flowcontrol::v1::PriorityLevelConfiguration>(),
        built_in::<networking::v1::IPAddress>(),
        built_in::<networking::v1::Ingress>(),
        built_in::<networking::v1::IngressClass>(),
        built_in::<networking::v1::NetworkPolicy>(),
        built_in::<networking::v1::ServiceCIDR>(),
        built_in::<node::v1::RuntimeClass>(),
        built_in::<policy::v1::PodDisruptionBudget>(),
        built_in::<rbac::v1::ClusterRole>(),
        built_in::<rbac::v1::ClusterRoleBinding>(),
        built_in::<rbac::v1::Role>(),
        built_in::<rbac::v1::RoleBinding>(),
        built_in::<scheduling::v1::PriorityClass>(),
        built_in::<storage::v1::CSIDriver>(),
        built_in::<storage::v1::CSINode>(),
        built_in::<storage::v1::CSIStorageCapacity>(),
        built_in::<storage::v1::StorageClass>(),
        built_in::<storage::v1::VolumeAttachment>(),
    ]
}

/// The kinds `config` watches from start-up, with where.
pub fn grants(config: &Config) -> Result<Vec<Grant>, RbacError> {
    let built_ins = built_ins();
    let mut grants = Vec::new();
    for (i, resource) in config.initial_resources.iter().enumerate() {
        let kind = KindRef {
            group: Some(resource.gvk.group.clone()),
            version: None,
            name: resource.gvk.kind.clone(),
        };
        let source = format!("initialWatchingResources[{i}] ({})", resource.gvk);
        grants.push(place(
            &built_ins,
            &kind,
            resource.options.namespace.clone(),
            source,
        )?);
    }
    for subscription in &config.subscriptions {
        let source = format!(
            "subscriptions `{}` ({})",
            subscription.name.as_str(),
            subscription.kind
        );
        grants.push(place(
            &built_ins,
            subscription.kind.value(),
            subscription.namespace.clone(),
            source,
        )?);
    }
    for name in &config.builtin_analyzers {
        let Some(analyzer) = BUILT_IN.iter().find(|b| b.name == name) else {
            continue;
        };
        for (group, kind) in analyzer.follows {
            let kind = KindRef {
                group: Some(group.to_string()),
                version: None,
                name: kind.to_string(),
            };
            let source = format!("builtinAnalyzers `{name}` ({})", kind.name);
            grants.push(place(&built_ins, &kind, None, source)?);
        }
    }
    if let Some(namespace) = config.journal_events() {
        let kind = KindRef {
            group: Some("events.k8s.io".into()),
            version: None,
            name: "Event".into(),
        };
        let source = "journal.events (Event)".to_string();
        grants.push(place(&built_ins, &kind, namespace, source)?);
    }
    Ok(grants)
}

/// Finds the resource `kind` names: a built-in kind by its kind, plural or
/// singular name (in its group, or in any group if none is given and only
/// one has it), or a custom kind of the group given.
fn place(
    built_ins: &[BuiltIn],
    kind: &KindRef,
    namespace: Option<String>,
    source: String,
) -> Result<Grant, RbacError> {
    let name = kind.name.as_str();
    let matches: Vec<&BuiltIn> = built_ins
        .iter()
        .filter(|b| kind.group.as_deref().is_none_or(|g| g == b.group))
        .filter(|b| {
            b.kind == name
                || b.resource == name
                || (name.chars().all(|c| c.is_ascii_lowercase()) && b.kind.to_lowercase() == name)
        })
        .collect();
    let refuse = |message: String| RbacError {
        entry: source.clone(),
        message,
    };
    match (matches.as_slice(), &kind.group) {
        ([b], _) => Ok(Grant {
            group: b.group.to_string(),
            resource: b.resource.to_string(),
            // A cluster-scoped kind is watched cluster-wide, whatever was said.
            namespace: namespace.filter(|_| b.namespaced),
            custom: false,
            source,
        }),
        ([], Some(group)) => Ok(Grant {
            group: group.clone(),
            resource: plural_of(name),
            namespace,
            custom: true,
            source,
        }),
        ([], None) => Err(refuse(format!(
            "`{name}` is not a built-in kind; name its group too (`{}.example.com`, or `example.com/v1/{name}`) so that the rule can say which API group it is in",
            name.to_lowercase()
        ))),
        (several, _) => Err(refuse(format!(
            "`{name}` is a kind of several groups ({}); name the group",
            several
                .iter()
                .map(|b| if b.group.is_empty() { "core" } else { b.group })
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// The plural resource name of a custom kind: a lowercase name ending in `s`
/// is taken as the plural already; otherwise kube's rules make one from the
/// kind (`Gateway` → `gateways`, `AuthorizationPolicy` →
/// `authorizationpolicies`), as most CRDs name their plural; the comment
/// beside the rule says it is a guess.
fn plural_of(name: &str) -> String {
    if name.ends_with('s') && name.chars().all(|c| !c.is_ascii_uppercase()) {
        return name.to_string();
    }
    let gvk = kube::core::GroupVersionKind::gvk("", "v1", name);
    kube::core::ApiResource::from_gvk(&gvk).plural
}

/// The RBAC objects for `grants`, as a multi-document YAML file with
/// comments saying where each rule comes from and what the configuration
/// cannot tell.
pub fn render(config: &Config, grants: &[Grant], args: &RbacArgs) -> String {
    let lease = config.leader_election.as_ref().map(|election| {
        let namespace = election
            .lease_namespace
            .clone()
            .unwrap_or_else(|| args.namespace.clone());
        (namespace, election.lease_name.clone())
    });
    let cluster: BTreeSet<(&str, &str)> = grants
        .iter()
        .filter(|g| g.namespace.is_none())
        .map(|g| (g.group.as_str(), g.resource.as_str()))
        .collect();
    let mut by_namespace: BTreeMap<&str, BTreeSet<(&str, &str)>> = BTreeMap::new();
    for grant in grants {
        if let Some(ns) = &grant.namespace
            && !cluster.contains(&(grant.group.as_str(), grant.resource.as_str()))
        {
            by_namespace
                .entry(ns)
                .or_default()
                .insert((&grant.group, &grant.resource));
        }
    }

    if let Some((namespace, _)) = &lease {
        by_namespace.entry(namespace).or_default();
    }
    let mut out = String::from(
        "# The RBAC GRW needs for its configuration: `list` and `watch` on each kind\n\
         # it watches, nothing else. Written by `grw rbac`; write it again when the\n\
         # configuration changes.\n#\n",
    );
    if let Some((namespace, name)) = &lease {
        let _ = writeln!(
            out,
            "# leaderElection: create, and get and update of the Lease {name}, in namespace {namespace}"
        );
    }
    let delegated = config.delegates_access();
    if delegated {
        out.push_str(
            "# delegated access (apiAuth or tlsListener.auth): create tokenreviews and\n\
             # subjectaccessreviews, to ask the API server who each caller is and what it may read\n",
        );
    }
    for grant in grants {
        let place = grant.namespace.as_deref().map_or_else(
            || "the whole cluster".to_string(),
            |ns| format!("namespace {ns}"),
        );
        let group = if grant.group.is_empty() {
            "core"
        } else {
            &grant.group
        };
        let _ = writeln!(
            out,
            "# {}: {} in {group}, in {place}",
            grant.source, grant.resource
        );
        if grant.custom {
            let _ = writeln!(
                out,
                "#   (a custom resource: `{}` is its plural as GRW guesses it; `kubectl api-resources --api-group={group}` shows the real one)",
                grant.resource
            );
        }
    }
    if grants.is_empty() {
        out.push_str(
            "# The configuration watches nothing from start-up: GRW needs only discovery,\n\
             # which every authenticated user may read (system:discovery).\n",
        );
    }
    if config.on_demand_watch {
        out.push_str(
            "#\n# onDemandWatch is on: a query for a kind not listed above is answered 403\n\
             # unless `list` and `watch` on that kind are granted too. So are kinds of\n\
             # subscriptions created over the API and the kinds analyzer plugins follow.\n",
        );
    }
    let custom = grants.iter().any(|g| g.custom);
    if !cluster.is_empty() || delegated {
        let mut rules = rules(&cluster);
        if !cluster.is_empty() {
            if custom {
                rules.push(rule(
                    "apiextensions.k8s.io",
                    ["customresourcedefinitions"].into_iter(),
                ));
            }
            rules.push(PolicyRule {
                non_resource_urls: Some(DISCOVERY_PATHS.iter().map(|p| p.to_string()).collect()),
                verbs: vec!["get".into()],
                ..PolicyRule::default()
            });
        }
        if delegated {
            rules.extend(REVIEWS.iter().map(|(group, resource)| PolicyRule {
                api_groups: Some(vec![group.to_string()]),
                resources: Some(vec![resource.to_string()]),
                verbs: vec!["create".into()],
                ..PolicyRule::default()
            }));
        }
        document(
            &mut out,
            &ClusterRole {
                metadata: meta(&args.name, None),
                rules: Some(rules),
                ..ClusterRole::default()
            },
        );
        document(
            &mut out,
            &ClusterRoleBinding {
                metadata: meta(&args.name, None),
                role_ref: role_ref("ClusterRole", &args.name),
                subjects: Some(vec![subject(args)]),
            },
        );
    }
    if cluster.is_empty() && custom {
        out.push_str(
            "#\n# Without a ClusterRole GRW cannot watch CustomResourceDefinitions: it notices\n\
             # CRDs installed later by reading discovery every apiGroupsSyncIntervalSecond.\n",
        );
    }
    for (namespace, resources) in &by_namespace {
        let mut rules = rules(resources);
        if let Some((lease_namespace, name)) = &lease
            && lease_namespace == namespace
        {
            rules.extend(lease_rules(name));
        }
        document(
            &mut out,
            &Role {
                metadata: meta(&args.name, Some(namespace)),
                rules: Some(rules),
            },
        );
        document(
            &mut out,
            &RoleBinding {
                metadata: meta(&args.name, Some(namespace)),
                role_ref: role_ref("Role", &args.name),
                subjects: Some(vec![subject(args)]),
            },
        );
    }
    out
}

/// One rule per API group, its resources sorted.
fn rules(resources: &BTreeSet<(&str, &str)>) -> Vec<PolicyRule> {
    let mut by_group: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (group, resource) in resources {
        by_group.entry(group).or_default().push(resource);
    }
    by_group
        .into_iter()
        .map(|(group, resources)| rule(group, resources.into_iter()))
        .collect()
}

fn rule<'a>(group: &str, resources: impl Iterator<Item = &'a str>) -> PolicyRule {
    PolicyRule {
        api_groups: Some(vec![group.to_string()]),
        resources: Some(resources.map(str::to_string).collect()),
        verbs: VERBS.iter().map(|v| v.to_string()).collect(),
        ..PolicyRule::default()
    }
}

/// Leader election creates its Lease once (RBAC cannot limit `create` to a
/// name), then reads and renews that one Lease.
fn lease_rules(name: &str) -> [PolicyRule; 2] {
    let lease = |verbs: &[&str], names: Option<Vec<String>>| PolicyRule {
        api_groups: Some(vec!["coordination.k8s.io".into()]),
        resources: Some(vec!["leases".into()]),
        resource_names: names,
        verbs: verbs.iter().map(|v| v.to_string()).collect(),
        ..PolicyRule::default()
    };
    [
        lease(&["create"], None),
        lease(&["get", "update"], Some(vec![name.to_string()])),
    ]
}

fn meta(name: &str, namespace: Option<&str>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        namespace: namespace.map(str::to_string),
        labels: Some(
            [("app.kubernetes.io/name".to_string(), "grw".to_string())]
                .into_iter()
                .collect(),
        ),
        ..ObjectMeta::default()
    }
}

fn role_ref(kind: &str, name: &str) -> RoleRef {
    RoleRef {
        api_group: Some("rbac.authorization.k8s.io".into()),
        kind: kind.into(),
        name: name.into(),
    }
}

fn subject(args: &RbacArgs) -> Subject {
    Subject {
        kind: "ServiceAccount".into(),
        name: args.service_account.clone(),
        namespace: Some(args.namespace.clone()),
        ..Subject::default()
    }
}

fn document(out: &mut String, object: &impl Serialize) {
    out.push_str("---\n");
    // The objects are plain maps, lists and strings: YAML serialisation of
    // them cannot fail.
    out.push_str(&serde_saphyr::to_string(object).expect("RBAC objects serialise"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(json: serde_json::Value) -> Config {
        crate::config::parse(&json.to_string(), &|_| None)
            .unwrap()
            .0
    }

    fn args() -> RbacArgs {
        RbacArgs {
            config: None,
            service_account: "grw".into(),
            namespace: "grw".into(),
            name: "grw".into(),
        }
    }

    #[test]
    fn built_in_kinds_have_kubernetes_own_plurals_and_scopes() {
        let all = built_ins();
        let find = |kind: &str, group: &str| {
            *all.iter()
                .find(|b| b.kind == kind && b.group == group)
                .unwrap()
        };
        assert_eq!(find("Endpoints", "").resource, "endpoints");
        assert_eq!(find("Ingress", "networking.k8s.io").resource, "ingresses");
        assert_eq!(
            find("NetworkPolicy", "networking.k8s.io").resource,
            "networkpolicies"
        );
        assert!(find("Pod", "").namespaced);
        assert!(!find("PersistentVolume", "").namespaced);
        assert!(!find("CustomResourceDefinition", "apiextensions.k8s.io").namespaced);
    }

    #[test]
    fn kinds_are_found_by_kind_plural_or_singular_name() {
        let all = built_ins();
        for name in ["Deployment", "deployments", "deployment"] {
            let kind = KindRef {
                group: None,
                version: None,
                name: name.into(),
            };
            let grant = place(&all, &kind, None, "s".into()).unwrap();
            assert_eq!(
                (grant.group.as_str(), grant.resource.as_str()),
                ("apps", "deployments")
            );
        }
    }

    #[test]
    fn unknown_or_ambiguous_kinds_are_refused_naming_the_entry() {
        let all = built_ins();
        let any = |name: &str| KindRef {
            group: None,
            version: None,
            name: name.into(),
        };
        assert_eq!(
            place(&all, &any("Widget"), None, "subscriptions `w`".into())
                .unwrap_err()
                .to_string(),
            "subscriptions `w`: `Widget` is not a built-in kind; name its group too (`widget.example.com`, or `example.com/v1/Widget`) so that the rule can say which API group it is in"
        );
        assert_eq!(
            place(&all, &any("Event"), None, "subscriptions `e`".into())
                .unwrap_err()
                .to_string(),
            "subscriptions `e`: `Event` is a kind of several groups (core, events.k8s.io); name the group"
        );
    }

    #[test]
    fn custom_kinds_get_kube_s_plural() {
        assert_eq!(plural_of("VirtualService"), "virtualservices");
        assert_eq!(plural_of("Gateway"), "gateways");
        assert_eq!(plural_of("AuthorizationPolicy"), "authorizationpolicies");
        assert_eq!(plural_of("widgets"), "widgets");
    }

    #[test]
    fn cluster_wide_kinds_make_a_cluster_role_and_namespaced_ones_a_role() {
        let config = config(serde_json::json!({
            "builtinAnalyzers": false,
            "initialWatchingResources": [
                {"group": "apps", "version": "v1", "kind": "Deployment"},
                {"group": "core", "version": "v1", "kind": "Pod", "watchOptions": {"namespace": "shop"}},
                {"group": "core", "version": "v1", "kind": "ConfigMap", "watchOptions": {"namespace": "shop"}},
                {"group": "apps", "version": "v1", "kind": "Deployment", "watchOptions": {"namespace": "shop"}},
                {"group": "networking.istio.io", "version": "v1", "kind": "Gateway"}
            ]
        }));
        let grants = grants(&config).unwrap();
        let yaml = render(&config, &grants, &args());
        let documents: Vec<serde_json::Value> = yaml
            .split("---\n")
            .skip(1)
            .map(|d| serde_saphyr::from_str(d).unwrap())
            .collect();
        assert_eq!(documents.len(), 4, "{yaml}");
        assert_eq!(documents[0]["kind"], "ClusterRole");
        assert_eq!(
            documents[0]["rules"],
            serde_json::json!([
                {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["list", "watch"]},
                {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["list", "watch"]},
                {"apiGroups": ["networking.istio.io"], "resources": ["gateways"], "verbs": ["list", "watch"]},
                {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["list", "watch"]},
                {"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*"], "verbs": ["get"]}
            ])
        );
        assert_eq!(documents[1]["kind"], "ClusterRoleBinding");
        assert_eq!(
            documents[1]["subjects"],
            serde_json::json!([{"kind": "ServiceAccount", "name": "grw", "namespace": "grw"}])
        );
        // The namespaced Deployment watch is covered by the ClusterRole.
        assert_eq!(documents[2]["kind"], "Role");
        assert_eq!(documents[2]["metadata"]["namespace"], "shop");
        assert_eq!(
            documents[2]["rules"],
            serde_json::json!([
                {"apiGroups": [""], "resources": ["configmaps", "pods"], "verbs": ["list", "watch"]}
            ])
        );
        assert_eq!(documents[3]["kind"], "RoleBinding");
        assert_eq!(documents[3]["roleRef"]["kind"], "Role");
        assert!(yaml.contains("# initialWatchingResources[4] (networking.istio.io/v1/Gateway): gateways in networking.istio.io, in the whole cluster\n"), "{yaml}");
        assert!(yaml.contains("onDemandWatch is on"), "{yaml}");
        // Watches in several namespaces: the journal's Events in all.
        assert!(
            yaml.contains(
                "# journal.events (Event): events in events.k8s.io, in the whole cluster\n"
            ),
            "{yaml}"
        );
    }

    #[test]
    fn the_built_in_analyzers_kinds_are_granted_cluster_wide() {
        let config = config(serde_json::json!({
            "onDemandWatch": false,
            "builtinAnalyzers": ["services", "istio-gateways"],
        }));
        let yaml = render(&config, &grants(&config).unwrap(), &args());
        let documents: Vec<serde_json::Value> = yaml
            .split("---\n")
            .skip(1)
            .map(|d| serde_saphyr::from_str(d).unwrap())
            .collect();
        assert_eq!(documents[0]["kind"], "ClusterRole", "{yaml}");
        assert_eq!(
            documents[0]["rules"],
            serde_json::json!([
                {"apiGroups": [""], "resources": ["pods", "services"], "verbs": ["list", "watch"]},
                {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": ["list", "watch"]},
                {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": ["list", "watch"]},
                {"apiGroups": ["networking.istio.io"], "resources": ["gateways", "virtualservices"], "verbs": ["list", "watch"]},
                {"apiGroups": ["apiextensions.k8s.io"], "resources": ["customresourcedefinitions"], "verbs": ["list", "watch"]},
                {"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*"], "verbs": ["get"]}
            ])
        );
        assert!(
            yaml.contains(
                "# builtinAnalyzers `services` (Pod): pods in core, in the whole cluster\n"
            ),
            "{yaml}"
        );
        // Ownership follows only what is watched anyway; off, nothing.
        let only_ownership =
            config_of(r#"{"builtinAnalyzers": ["ownership"], "journal": {"events": false}}"#);
        assert!(grants(&only_ownership).unwrap().is_empty());
    }

    fn config_of(text: &str) -> Config {
        crate::config::parse(text, &|_| None).unwrap().0
    }

    #[test]
    fn a_namespaced_configuration_needs_no_cluster_role() {
        let config = config(serde_json::json!({
            "onDemandWatch": false,
            "builtinAnalyzers": false,
            "initialWatchingResources": [
                {"group": "core", "version": "v1", "kind": "Pod", "watchOptions": {"namespace": "shop"}}
            ]
        }));
        let yaml = render(&config, &grants(&config).unwrap(), &args());
        assert!(!yaml.contains("ClusterRole"), "{yaml}");
        assert!(!yaml.contains("onDemandWatch"), "{yaml}");
        assert_eq!(yaml.matches("---\n").count(), 2, "{yaml}");
    }

    #[test]
    fn delegated_access_may_create_reviews() {
        let rules_of = |config: &Config| -> Vec<serde_json::Value> {
            let yaml = render(config, &grants(config).unwrap(), &args());
            yaml.split("---\n")
                .skip(1)
                .map(|d| serde_saphyr::from_str::<serde_json::Value>(d).unwrap())
                .filter(|d| d["kind"] == "ClusterRole")
                .flat_map(|d| d["rules"].as_array().unwrap().clone())
                .collect()
        };
        let reviews = [
            serde_json::json!({"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]}),
            serde_json::json!({"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]}),
        ];
        // A namespaced sidecar needs a ClusterRole for them alone.
        let sidecar = config(serde_json::json!({
            "onDemandWatch": false,
            "builtinAnalyzers": false,
            "apiAuth": "delegated",
            "initialWatchingResources": [{"version": "v1", "kind": "Pod", "watchOptions": {"namespace": "shop"}}]
        }));
        assert_eq!(rules_of(&sidecar), reviews);
        let yaml = render(&sidecar, &grants(&sidecar).unwrap(), &args());
        assert!(
            yaml.contains(
                "# delegated access (apiAuth or tlsListener.auth): create tokenreviews and\n"
            ),
            "{yaml}"
        );
        assert_eq!(yaml.matches("\nkind: Role\n").count(), 1, "{yaml}");
        // After the rest, from the TLS listener too.
        let standalone = config(serde_json::json!({
            "builtinAnalyzers": false,
            "tlsListener": {"certFile": "/c", "keyFile": "/k"},
            "initialWatchingResources": [{"version": "v1", "kind": "Pod"}]
        }));
        let rules = rules_of(&standalone);
        assert_eq!(rules.len(), 5);
        assert_eq!(rules[3..], reviews);
        // Without delegated access, none: Pods, Events and CRDs, then
        // discovery.
        let plain = config(
            serde_json::json!({"builtinAnalyzers": false, "initialWatchingResources": [{"version": "v1", "kind": "Pod"}]}),
        );
        assert_eq!(rules_of(&plain).len(), 3);
    }

    #[test]
    fn leader_election_may_create_its_lease_and_renew_only_that_one() {
        let config = config(serde_json::json!({
            "onDemandWatch": false,
            "builtinAnalyzers": false,
            "initialWatchingResources": [{"version": "v1", "kind": "Pod", "watchOptions": {"namespace": "shop"}}],
            "leaderElection": {"leaseName": "grw-shop"}
        }));
        let yaml = render(&config, &grants(&config).unwrap(), &args());
        let documents: Vec<serde_json::Value> = yaml
            .split("---\n")
            .skip(1)
            .map(|d| serde_saphyr::from_str(d).unwrap())
            .collect();
        // The Lease lives in GRW's own namespace (`--namespace`).
        let roles: Vec<_> = documents.iter().filter(|d| d["kind"] == "Role").collect();
        assert_eq!(roles.len(), 2, "{yaml}");
        assert_eq!(roles[0]["metadata"]["namespace"], "grw");
        assert_eq!(
            roles[0]["rules"],
            serde_json::json!([
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": ["grw-shop"], "verbs": ["get", "update"]}
            ])
        );
        assert_eq!(roles[1]["metadata"]["namespace"], "shop");
        assert!(yaml.contains("# leaderElection: create, and get and update of the Lease grw-shop, in namespace grw\n"), "{yaml}");
    }
}
