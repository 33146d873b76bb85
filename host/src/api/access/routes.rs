//! What a request to each route group does, as Kubernetes authorization
//! attributes. Each route is registered in the route table
//! ([`crate::api::table`]) with its [`Rule`], a row of this table:
//!
//! | route group | rule | attributes |
//! |---|---|---|
//! | `/healthz`, `/readyz` | `Open` | none: open, the kubelet probes them |
//! | the Kubernetes API below `kubeApiPathPrefix` | `KubeApi` | as the API server reads its own paths ([`super::kube_api`]) |
//! | `/api/v1/[namespaces/{ns}/]objects/{kind}[/{name}]` | `Objects` | the kind's resource (resolved through discovery; a kind discovery does not know, as named), `get`, `list`, or `watch` with `?watch=true` |
//! | `/api/v1/[namespaces/{ns}/]history/{kind}/{name}`, `.../timeline/{kind}/{name}` | `Objects` | `get` of the object, as its `objects` route; a timeline leaves out entries of kinds and namespaces the caller may not `list` |
//! | `/api/v1/changes`, `/api/v1/journal` | `Own` | `changes.grw.io` `list` (entries filtered as a timeline's), `journal.grw.io` `get` |
//! | `/api/v1/plugins[/{name}]` | `Own` | `plugins.grw.io`, `list` or `get` |
//! | `/api/v1/subscriptions[/{name}[/dead-letters[/replay]]]` | `Own` | `subscriptions.grw.io` (subresource `dead-letters`), the verb of the method: `list`, `get`, `create`, `delete` |
//! | `/api/v1/kinds` | `Own` | `kinds.grw.io`, `list` |
//! | `/api/v1/relations` | `AllRelations` | `relations.relations.grw.io` (the `Relation` kind's resource), `list`: in namespace `?namespace=`, else cluster-wide |
//! | `/api/v1/[namespaces/{ns}/]relations/{kind}/{name}` | `Relations` | the same, in namespace `ns`, else cluster-wide; the handler leaves out edges into namespaces where the caller may not list them |
//! | `/`, `/resources/...`, `/manage/...`, `/analyze/...` (the earlier GRW's) | `Compat` | `compat.grw.io`, `get`: they read every cached kind |
//! | `/metrics` | `Metrics` | the non-resource URL `/metrics` |
//! | any other path | `NotFound` | none: 404 once the caller is known |
//!
//! GRW's own routes are resources of group `grw.io`, never non-resource
//! URLs under `/api/`: every authenticated user may `get` those
//! (`system:discovery`). The check runs before the method is matched, so
//! a method a route does not serve is checked with its verb, then answered
//! 405. A path no route serves is answered 404 without a review: a route
//! is closed unless registered with its rule.

use axum::extract::rejection::RawPathParamsRejection;
use axum::extract::{FromRequestParts, RawPathParams};
use axum::http::Method;
use axum::http::request::Parts;

use super::attributes::{Query, path_verb, resource_verb};
use super::kube_api;
use crate::api::kinds::{RouteKind, Unresolved};
use crate::api::kubernetes::KubeTarget;
use crate::gvk::GRW_GROUP;
use crate::kube::{AccessAttributes, Catalog, NonResourceAttributes, ResourceAttributes};

/// The API group of GRW's own routes.
pub const OWN_GROUP: &str = "grw.io";

/// What a request to a route needs: each route of the table
/// ([`crate::api::table`]) is registered with one, the rows of the table
/// above.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rule {
    /// Nothing: anyone may ask (the probes).
    Open,
    /// The non-resource URL `/metrics`.
    Metrics,
    /// GRW's own `resource` of group `grw.io` (and `subresource`), the
    /// object the route's `{name}`, the verb the method's.
    Own {
        /// e.g. `plugins`.
        resource: &'static str,
        /// e.g. `dead-letters`; `""` for none.
        subresource: &'static str,
    },
    /// A native object route: the resource of its `{kind}`, in its
    /// `{namespace}`, the object its `{name}`.
    Objects,
    /// `list` of relations in the route's `{namespace}`, else cluster-wide.
    Relations,
    /// `list` of relations in `?namespace=`, else cluster-wide.
    AllRelations,
    /// The earlier GRW's routes: `get` of `compat.grw.io`.
    Compat,
    /// The Kubernetes API, as the API server reads its own paths.
    KubeApi,
    /// No route serves the path: 404 once the caller is known, without a
    /// review.
    NotFound,
}

impl Rule {
    /// Whether the attributes are made of the route's path parameters.
    fn reads_parameters(self) -> bool {
        matches!(self, Rule::Own { .. } | Rule::Objects | Rule::Relations)
    }
}

/// What a request needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Described {
    /// Nothing: anyone may ask.
    Open,
    /// The caller must be allowed these.
    Check(AccessAttributes),
    /// Nothing is served there: 404, whoever asks.
    Unknown,
}

/// One request, as the access check sees it.
pub(super) struct Asked {
    /// Its method.
    pub method: Method,
    /// The raw (still percent-encoded) path.
    pub path: String,
    /// The raw query string.
    pub raw_query: Option<String>,
    /// What of it matters to the native routes.
    pub query: Query,
    /// The matched route's path parameters, percent-decoded.
    params: Vec<(String, String)>,
}

impl Asked {
    /// Reads a request to a route checked by `rule`. A path parameter the
    /// rule reads that does not decode to UTF-8 is refused (400), as the
    /// route would refuse it.
    pub(super) async fn read(
        rule: Rule,
        parts: &mut Parts,
    ) -> Result<Asked, RawPathParamsRejection> {
        let params = match RawPathParams::from_request_parts(parts, &()).await {
            Ok(params) => params
                .iter()
                .map(|(name, value)| (name.to_string(), value.to_string()))
                .collect(),
            // The fallback has none, and the Kubernetes API's routes read
            // the raw path, undecoded, as the API server does.
            Err(_) if !rule.reads_parameters() => Vec::new(),
            Err(rejection) => return Err(rejection),
        };
        Ok(Asked {
            method: parts.method.clone(),
            path: parts.uri.path().to_string(),
            raw_query: parts.uri.query().map(str::to_string),
            query: Query::parse(parts.uri.query()),
            params,
        })
    }

    /// The path parameter `name`; `""` if the route has none.
    fn param(&self, name: &str) -> &str {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map_or("", |(_, value)| value.as_str())
    }
}

/// What the check resolved of a request, which the route is handed.
pub(super) enum Target {
    /// Nothing to resolve.
    Nothing,
    /// A native object route's `{kind}`.
    Kind(RouteKind),
    /// A path of the Kubernetes API.
    Kube(KubeTarget),
}

impl Target {
    /// What `asked`, to a route checked by `rule`, names, in `catalog`;
    /// `kube_prefix` is `kubeApiPathPrefix`.
    pub(super) fn read(rule: Rule, asked: &Asked, kube_prefix: &str, catalog: &Catalog) -> Target {
        match rule {
            Rule::Objects => Target::Kind(RouteKind::read(asked.param("kind"), catalog)),
            Rule::KubeApi => {
                let path = below(kube_prefix, &asked.path).unwrap_or_default();
                Target::Kube(KubeTarget::read(path, catalog))
            }
            _ => Target::Nothing,
        }
    }

    /// Whether it names a kind discovery did not know.
    pub(super) fn missed(&self) -> bool {
        match self {
            Target::Nothing => false,
            Target::Kind(kind) => kind.missed(),
            Target::Kube(kube) => kube.missed(),
        }
    }

    /// Hands it to the route.
    pub(super) fn hand_over(self, extensions: &mut axum::http::Extensions) {
        match self {
            Target::Nothing => {}
            Target::Kind(kind) => {
                extensions.insert(kind);
            }
            Target::Kube(kube) => {
                extensions.insert(kube);
            }
        }
    }
}

/// Describes a request to a route checked by `rule`, whose kinds are
/// resolved in `target`.
pub(super) fn describe(rule: Rule, asked: &Asked, target: &Target) -> Described {
    let method = &asked.method;
    let query = &asked.query;
    let attributes = match (rule, target) {
        (Rule::Open, _) => return Described::Open,
        (Rule::NotFound, _) => return Described::Unknown,
        (Rule::Metrics, _) => AccessAttributes::NonResource(NonResourceAttributes {
            path: "/metrics".into(),
            verb: path_verb(method),
        }),
        (
            Rule::Own {
                resource,
                subresource,
            },
            _,
        ) => {
            let name = asked.param("name");
            let verb = resource_verb(method, !name.is_empty(), query);
            own_resource(&verb, resource, name, subresource, "")
        }
        (Rule::Compat, _) => own_resource("get", "compat", "", "", ""),
        // The relations routes answer edges, which are `Relation` objects:
        // `list` of them, in the namespace the answer is about or (empty)
        // the whole cluster. An answer reaching other namespaces shows only
        // the edges into those the caller may list them in too.
        (Rule::Relations, _) => list_relations(asked.param("namespace")),
        (Rule::AllRelations, _) => list_relations(query.namespace.as_deref().unwrap_or("")),
        (Rule::Objects, Target::Kind(kind)) => objects(asked, kind),
        (Rule::KubeApi, Target::Kube(kube)) => {
            match kube_api::attributes(method, kube, asked.raw_query.as_deref()) {
                Some(attributes) => attributes,
                None => return Described::Unknown,
            }
        }
        // A rule whose target was not read: nothing is served unchecked.
        (Rule::Objects | Rule::KubeApi, _) => return Described::Unknown,
    };
    Described::Check(attributes)
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
fn objects(asked: &Asked, kind: &RouteKind) -> AccessAttributes {
    let (group, version, resource) = match kind.resolved.as_ref().map_err(|why| &**why) {
        Ok(info) => (
            info.gvk.group.clone(),
            info.gvk.version.clone(),
            info.plural.clone(),
        ),
        Err(Unresolved::Discovery { wanted, .. }) => (
            wanted.group.clone().unwrap_or_default(),
            wanted.version.clone().unwrap_or_default(),
            wanted.name.clone(),
        ),
        Err(Unresolved::NotAKind(_)) => (String::new(), String::new(), kind.named.clone()),
    };
    let name = asked.param("name");
    let verb = resource_verb(&asked.method, !name.is_empty(), &asked.query);
    let name = match (name, verb.as_str()) {
        ("", "list" | "watch") => asked.query.selected_name().unwrap_or_default(),
        (name, _) => name.to_string(),
    };
    AccessAttributes::Resource(ResourceAttributes {
        verb,
        group,
        version,
        resource,
        subresource: String::new(),
        namespace: asked.param("namespace").to_string(),
        name,
    })
}

#[cfg(test)]
mod tests {
    use axum::Router;
    use axum::body::Body;
    use axum::extract::Request;
    use axum::response::{IntoResponse, Response};
    use axum::routing::any;
    use tower::ServiceExt;

    use super::*;
    use crate::gvk::{Gvk, ResourceInfo};

    fn catalog() -> Catalog {
        let known = [
            ("", "v1", "Pod", "pods", true),
            ("apps", "v1", "Deployment", "deployments", true),
            ("", "v1", "Node", "nodes", false),
        ];
        Catalog::fixed(
            known
                .iter()
                .map(|(group, version, kind, plural, namespaced)| ResourceInfo {
                    gvk: Gvk::new(group, version, kind),
                    plural: plural.to_string(),
                    namespaced: *namespaced,
                })
                .collect(),
        )
    }

    /// What the check asks of `rule`'s route for `request`, in the
    /// response's extensions.
    async fn described(rule: Rule, request: Request) -> Response {
        let (mut parts, _) = request.into_parts();
        let asked = Asked::read(rule, &mut parts)
            .await
            .expect("path parameters");
        let target = Target::read(rule, &asked, "/kube", &catalog());
        let mut response = ().into_response();
        response
            .extensions_mut()
            .insert(describe(rule, &asked, &target));
        response
    }

    /// The API's route table, `kubeApiPathPrefix` `/kube`, each route
    /// answering with what its rule describes (the handlers left out: they
    /// need a running daemon), and the fallback with what it does.
    fn table() -> Router {
        let mut router = Router::new();
        for route in crate::api::table::all("/kube") {
            let rule = route.rule;
            router = router.route(&route.path, any(move |r| described(rule, r)));
        }
        router.fallback(|r| described(Rule::NotFound, r))
    }

    async fn describe_request(method: Method, target: &str) -> Described {
        let request = Request::builder()
            .method(method)
            .uri(target)
            .body(Body::empty())
            .expect("request");
        let response = table().oneshot(request).await.expect("answer");
        response
            .extensions()
            .get::<Described>()
            .cloned()
            .expect("described")
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

    /// Through the real route table: a route that loses its rule, or is
    /// registered with another, fails here.
    #[tokio::test]
    async fn every_route_group_has_its_attributes() {
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
            // The path as written: an escape is no separator, nor decoded.
            (M::GET, "/kube/api/v1/namespaces/a%2Fb/pods", resource("list", "", "v1", "pods", "", "a%2Fb", "")),
            (M::GET, "/kube/api/v1/namespaces/%ff/pods", resource("list", "", "v1", "pods", "", "%ff", "")),
            (M::GET, "/kube", Described::Unknown),
            (M::GET, "/kube/openapi/v2", path("get", "/openapi/v2")),
            (M::GET, "/kube/openapi/v3/api/v1?hash=AB12", path("get", "/openapi/v3/api/v1")),
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
                describe_request(method.clone(), target).await,
                want,
                "{method} {target}"
            );
        }
    }
}
