//! What a request to each route group does, as Kubernetes authorization
//! attributes:
//!
//! | route group | attributes |
//! |---|---|
//! | `/healthz`, `/readyz` | none: open, the kubelet probes them |
//! | the Kubernetes API below `kubeApiPathPrefix` | as the API server reads its own paths ([`super::kube_api`]) |
//! | `/api/v1/[namespaces/{ns}/]objects/{kind}[/{name}]` | the kind's resource (resolved through discovery; a kind discovery does not know, as named), `get`, `list`, or `watch` with `?watch=true` |
//! | `/api/v1/plugins[/{name}]` | `plugins.grw.io`, `list` or `get` |
//! | `/api/v1/subscriptions[/{name}[/dead-letters[/replay]]]` | `subscriptions.grw.io` (subresource `dead-letters`), the verb of the method: `list`, `get`, `create`, `delete` |
//! | `/api/v1/kinds` | `kinds.grw.io`, `list` |
//! | `/api/v1/relations`, `/api/v1/[namespaces/{ns}/]relations/{kind}/{name}` | `relations.relations.grw.io` (the `Relation` kind's resource), `list`: in namespace `ns` (or `?namespace=`), else cluster-wide; the handler leaves out edges into namespaces where the caller may not list them |
//! | `/`, `/resources/...`, `/manage/...`, `/analyze/...` (the earlier GRW's) | `compat.grw.io`, `get`: they read every cached kind |
//! | `/metrics` | the non-resource URL `/metrics` |
//!
//! GRW's own routes are resources of group `grw.io`, never non-resource
//! URLs under `/api/`: every authenticated user may `get` those
//! (`system:discovery`). A path no route serves is answered 404 without a
//! review, so a route added without a line here is closed, not open.

use axum::http::Method;

use super::attributes::{Query, path_verb, resource_verb, segments};
use super::kube_api;
use crate::gvk::{GRW_GROUP, KindRef, ResourceInfo};
use crate::kube::{AccessAttributes, NonResourceAttributes, ResourceAttributes};

/// The API group of GRW's own routes.
pub const OWN_GROUP: &str = "grw.io";

/// What a request needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Described {
    /// Nothing: anyone may ask.
    Open,
    /// The caller must be allowed these.
    Check(AccessAttributes),
    /// No route serves the path: 404, whoever asks.
    Unknown,
}

/// One request, as the access check sees it.
pub(super) struct Asked<'a> {
    pub method: &'a Method,
    /// The raw (still percent-encoded) path.
    pub path: &'a str,
    /// The raw query string.
    pub raw_query: Option<&'a str>,
    /// What of it matters to the native routes.
    pub query: Query,
}

/// Describes a request; `kube_prefix` is `kubeApiPathPrefix`, `resolve`
/// finds a native route's `{kind}` in discovery.
pub(super) fn describe(
    asked: &Asked<'_>,
    kube_prefix: &str,
    resolve: &dyn Fn(&KindRef) -> Option<ResourceInfo>,
) -> Described {
    if let Some(rest) = below(kube_prefix, asked.path) {
        return match kube_api::attributes(asked.method, rest, asked.raw_query) {
            Some(attributes) => Described::Check(attributes),
            None => Described::Unknown,
        };
    }
    let parts = segments(asked.path);
    let parts: Vec<&str> = parts.iter().map(|p| p.as_ref()).collect();
    let method = asked.method;
    let query = &asked.query;
    let own = |resource: &str, name: &str, subresource: &str| {
        let verb = resource_verb(method, !name.is_empty(), query);
        Described::Check(own_resource(&verb, resource, name, subresource, ""))
    };
    match parts.as_slice() {
        ["healthz" | "readyz"] => Described::Open,
        ["metrics"] => Described::Check(AccessAttributes::NonResource(NonResourceAttributes {
            path: "/metrics".into(),
            verb: path_verb(method),
        })),
        [] | ["resources" | "manage" | "analyze", _] => {
            Described::Check(own_resource("get", "compat", "", "", ""))
        }
        ["api", "v1", "objects", kind] => objects(asked, "", kind, "", resolve),
        ["api", "v1", "objects", kind, name] => objects(asked, "", kind, name, resolve),
        ["api", "v1", "namespaces", ns, "objects", kind] => objects(asked, ns, kind, "", resolve),
        ["api", "v1", "namespaces", ns, "objects", kind, name] => {
            objects(asked, ns, kind, name, resolve)
        }
        ["api", "v1", "relations"] => relations(query.namespace.as_deref().unwrap_or("")),
        ["api", "v1", "relations", _, _] => relations(""),
        ["api", "v1", "namespaces", ns, "relations", _, _] => relations(ns),
        ["api", "v1", "plugins"] => own("plugins", "", ""),
        ["api", "v1", "plugins", name] => own("plugins", name, ""),
        ["api", "v1", "subscriptions"] => own("subscriptions", "", ""),
        ["api", "v1", "subscriptions", name] => own("subscriptions", name, ""),
        ["api", "v1", "subscriptions", name, "dead-letters"]
        | ["api", "v1", "subscriptions", name, "dead-letters", "replay"] => {
            own("subscriptions", name, "dead-letters")
        }
        ["api", "v1", "kinds"] => own("kinds", "", ""),
        _ => Described::Unknown,
    }
}

/// `path` without `prefix`, if it is below it (or it).
pub(super) fn below<'a>(prefix: &str, path: &'a str) -> Option<&'a str> {
    path.strip_prefix(prefix)
        .filter(|rest| rest.is_empty() || rest.starts_with('/'))
}

fn own_resource(
    verb: &str,
    resource: &str,
    name: &str,
    subresource: &str,
    namespace: &str,
) -> AccessAttributes {
    AccessAttributes::Resource(ResourceAttributes {
        verb: verb.to_string(),
        group: OWN_GROUP.to_string(),
        version: "v1".to_string(),
        resource: resource.to_string(),
        subresource: subresource.to_string(),
        namespace: namespace.to_string(),
        name: name.to_string(),
    })
}

/// The relations routes answer edges, which are `Relation` objects: `list`
/// of them, in the namespace the answer is about or (empty) the whole
/// cluster. An answer reaching other namespaces shows only the edges into
/// those the caller may list them in too ([`list_relations`]).
fn relations(namespace: &str) -> Described {
    Described::Check(list_relations(namespace))
}

/// `list` of `relations.relations.grw.io` in `namespace` (empty: at the
/// cluster scope).
pub(super) fn list_relations(namespace: &str) -> AccessAttributes {
    AccessAttributes::Resource(ResourceAttributes {
        verb: "list".to_string(),
        group: GRW_GROUP.to_string(),
        version: "v1".to_string(),
        resource: "relations".to_string(),
        namespace: namespace.to_string(),
        ..ResourceAttributes::default()
    })
}

/// A native object route: the kind's resource as discovery knows it, or as
/// the request names it (the route then answers 404 or 400 to whoever may
/// ask, as the API server answers 403 before 404).
fn objects(
    asked: &Asked<'_>,
    namespace: &str,
    kind: &str,
    name: &str,
    resolve: &dyn Fn(&KindRef) -> Option<ResourceInfo>,
) -> Described {
    let (group, version, resource) = match KindRef::parse(kind) {
        Ok(wanted) => match resolve(&wanted) {
            Some(info) => (info.gvk.group, info.gvk.version, info.plural),
            None => (
                wanted.group.unwrap_or_default(),
                wanted.version.unwrap_or_default(),
                wanted.name,
            ),
        },
        Err(_) => (String::new(), String::new(), kind.to_string()),
    };
    let verb = resource_verb(asked.method, !name.is_empty(), &asked.query);
    let name = match (name, verb.as_str()) {
        ("", "list" | "watch") => asked.query.selected_name().unwrap_or_default(),
        (name, _) => name.to_string(),
    };
    Described::Check(AccessAttributes::Resource(ResourceAttributes {
        verb,
        group,
        version,
        resource,
        subresource: String::new(),
        namespace: namespace.to_string(),
        name,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gvk::Gvk;

    fn catalog(wanted: &KindRef) -> Option<ResourceInfo> {
        let known = [
            ("", "v1", "Pod", "pods", true),
            ("apps", "v1", "Deployment", "deployments", true),
            ("", "v1", "Node", "nodes", false),
        ];
        known
            .iter()
            .find(|(group, _, kind, plural, _)| {
                (wanted.name == *kind || wanted.name == *plural)
                    && wanted.group.as_deref().is_none_or(|g| g == *group)
            })
            .map(|(group, version, kind, plural, namespaced)| ResourceInfo {
                gvk: Gvk::new(group, version, kind),
                plural: plural.to_string(),
                namespaced: *namespaced,
            })
    }

    fn describe_request(method: Method, target: &str) -> Described {
        let (path, query) = target.split_once('?').unwrap_or((target, ""));
        let asked = Asked {
            method: &method,
            path,
            raw_query: Some(query),
            query: Query::parse(Some(query)),
        };
        describe(&asked, "/kube", &catalog)
    }

    fn resource(
        verb: &str,
        group: &str,
        version: &str,
        resource: &str,
        subresource: &str,
        namespace: &str,
        name: &str,
    ) -> Described {
        Described::Check(AccessAttributes::Resource(ResourceAttributes {
            verb: verb.into(),
            group: group.into(),
            version: version.into(),
            resource: resource.into(),
            subresource: subresource.into(),
            namespace: namespace.into(),
            name: name.into(),
        }))
    }

    fn path(verb: &str, path: &str) -> Described {
        Described::Check(AccessAttributes::NonResource(NonResourceAttributes {
            path: path.into(),
            verb: verb.into(),
        }))
    }

    #[test]
    fn every_route_group_has_its_attributes() {
        use Method as M;
        #[rustfmt::skip]
        let cases = [
            // Probes are open; metrics a non-resource URL.
            (M::GET, "/healthz", Described::Open),
            (M::GET, "/readyz", Described::Open),
            (M::GET, "/metrics", path("get", "/metrics")),
            // The Kubernetes API, without GRW's prefix.
            (M::GET, "/kube/api/v1/namespaces/a/pods", resource("list", "", "v1", "pods", "", "a", "")),
            (M::GET, "/kube/apis/apps/v1/deployments?watch=true", resource("watch", "apps", "v1", "deployments", "", "", "")),
            (M::GET, "/kube/apis", path("get", "/apis")),
            (M::GET, "/kube/version", path("get", "/version")),
            (M::GET, "/kube", Described::Unknown),
            (M::GET, "/kube/openapi/v2", Described::Unknown),
            (M::GET, "/kube/api/v1/watch", Described::Unknown),
            // Not the prefix, only a path beginning like it.
            (M::GET, "/kubeapi/v1/pods", Described::Unknown),
            // Native object routes, kinds resolved through discovery.
            (M::GET, "/api/v1/objects/pods", resource("list", "", "v1", "pods", "", "", "")),
            (M::GET, "/api/v1/objects/Pod?watch=true", resource("watch", "", "v1", "pods", "", "", "")),
            (M::GET, "/api/v1/objects/nodes/n1", resource("get", "", "v1", "nodes", "", "", "n1")),
            (M::GET, "/api/v1/namespaces/a/objects/Deployment", resource("list", "apps", "v1", "deployments", "", "a", "")),
            (M::GET, "/api/v1/namespaces/b/objects/deployments.apps/web", resource("get", "apps", "v1", "deployments", "", "b", "web")),
            (M::GET, "/api/v1/namespaces/a/objects/pods?fieldSelector=metadata.name%3Dweb-1", resource("list", "", "v1", "pods", "", "a", "web-1")),
            // Kinds discovery does not know: as named.
            (M::GET, "/api/v1/objects/widgets.example.com", resource("list", "example.com", "", "widgets", "", "", "")),
            (M::GET, "/api/v1/objects/Widget.v2.example.com/w", resource("get", "example.com", "v2", "Widget", "", "", "w")),
            (M::GET, "/api/v1/objects/not%20a%20kind", resource("list", "", "", "not a kind", "", "", "")),
            // A method the route does not serve keeps its verb.
            (M::POST, "/api/v1/objects/pods", resource("create", "", "v1", "pods", "", "", "")),
            // GRW's own routes.
            (M::GET, "/api/v1/plugins", resource("list", "grw.io", "v1", "plugins", "", "", "")),
            (M::GET, "/api/v1/plugins/label-filter", resource("get", "grw.io", "v1", "plugins", "", "", "label-filter")),
            (M::GET, "/api/v1/subscriptions", resource("list", "grw.io", "v1", "subscriptions", "", "", "")),
            (M::POST, "/api/v1/subscriptions", resource("create", "grw.io", "v1", "subscriptions", "", "", "")),
            (M::GET, "/api/v1/subscriptions/s", resource("get", "grw.io", "v1", "subscriptions", "", "", "s")),
            (M::DELETE, "/api/v1/subscriptions/s", resource("delete", "grw.io", "v1", "subscriptions", "", "", "s")),
            (M::GET, "/api/v1/subscriptions/s/dead-letters", resource("get", "grw.io", "v1", "subscriptions", "dead-letters", "", "s")),
            (M::DELETE, "/api/v1/subscriptions/s/dead-letters?seq=3", resource("delete", "grw.io", "v1", "subscriptions", "dead-letters", "", "s")),
            (M::POST, "/api/v1/subscriptions/s/dead-letters/replay", resource("create", "grw.io", "v1", "subscriptions", "dead-letters", "", "s")),
            (M::GET, "/api/v1/kinds", resource("list", "grw.io", "v1", "kinds", "", "", "")),
            // Relations: a namespace when the answer stays in it.
            (M::GET, "/api/v1/relations", resource("list", "relations.grw.io", "v1", "relations", "", "", "")),
            (M::GET, "/api/v1/relations?namespace=a", resource("list", "relations.grw.io", "v1", "relations", "", "a", "")),
            (M::GET, "/api/v1/relations/nodes/n1", resource("list", "relations.grw.io", "v1", "relations", "", "", "")),
            (M::GET, "/api/v1/namespaces/a/relations/pods/p", resource("list", "relations.grw.io", "v1", "relations", "", "a", "")),
            (M::GET, "/api/v1/namespaces/a/relations/pods/p?depth=1", resource("list", "relations.grw.io", "v1", "relations", "", "a", "")),
            // Deeper answers are filtered by the handler, not refused here.
            (M::GET, "/api/v1/namespaces/a/relations/pods/p?depth=2", resource("list", "relations.grw.io", "v1", "relations", "", "a", "")),
            // The earlier GRW's routes, as a whole.
            (M::GET, "/", resource("get", "grw.io", "v1", "compat", "", "", "")),
            (M::POST, "/resources/k8sObjects", resource("get", "grw.io", "v1", "compat", "", "", "")),
            (M::GET, "/manage/cacheSize", resource("get", "grw.io", "v1", "compat", "", "", "")),
            (M::GET, "/analyze/istioGatewayHosts", resource("get", "grw.io", "v1", "compat", "", "", "")),
            // Paths no route serves.
            (M::GET, "/api/v1/unknown", Described::Unknown),
            (M::GET, "/api/v1", Described::Unknown),
            (M::GET, "/api", Described::Unknown),
            (M::GET, "/api/v1/namespaces/a/objects", Described::Unknown),
            (M::GET, "/api/v1/objects/pods/p/extra", Described::Unknown),
            (M::GET, "/favicon.ico", Described::Unknown),
            (M::GET, "/resources", Described::Unknown),
            (M::GET, "/healthz/extra", Described::Unknown),
        ];
        for (method, target, want) in cases {
            assert_eq!(
                describe_request(method.clone(), target),
                want,
                "{method} {target}"
            );
        }
    }
}
