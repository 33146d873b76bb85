//! What a request to the Kubernetes API (below `kubeApiPathPrefix`) asks
//! for, as authorization attributes. The path is read once, into the
//! [`KubePath`] that the routes are then handed ([`KubeTarget`]), and the
//! query by the same [`ListOptions`] that the routes read it with, so that
//! what is checked is what is served; the rest is filled in as the API
//! server's request-info parser fills it in:
//!
//! - discovery (`/api`, `/apis`, `/apis/{group}`, `/api/{version}`,
//!   `/apis/{group}/{version}`) and `/version` are non-resource URLs,
//!   checked by their path without GRW's prefix and the method in lower
//!   case. Every cluster binds the `system:discovery` ClusterRole, which
//!   allows `get` on those paths, to `system:authenticated`: they need only
//!   a valid token, as on the API server, yet a cluster that removed the
//!   binding is obeyed;
//! - the verb: `get` of a named object, `list` of a collection, `watch`
//!   with `watch=true` or the legacy `/watch/` segment, `create`, `update`,
//!   `patch`, `delete` or `deletecollection` for writes (which the routes
//!   then refuse with 405). A named GET with `watch=true` is a `watch`:
//!   GRW streams that object's changes where the API server would return
//!   it once;
//! - `namespaces/{ns}` (and its `status` and `finalize`) is in namespace
//!   `{ns}`, so that a Role there may allow reading its own Namespace;
//! - a list or watch with `fieldSelector=metadata.name=NAME` is for `NAME`,
//!   so that a grant of one object allows `kubectl get pod NAME --watch`.
//!
//! Paths no route serves have no attributes: 404 once the caller is known.

use axum::http::Method;

use super::attributes::{Query, exact_name, path_verb, resource_verb};
use crate::api::kubernetes::KubeTarget;
use crate::api::kubernetes::options::ListOptions;
use crate::api::kubernetes::path::{KubePath, ResourcePath};
use crate::kube::{AccessAttributes, NonResourceAttributes, ResourceAttributes};

/// The attributes of a request to the Kubernetes API to `target`; `query`
/// is the raw query string.
pub(super) fn attributes(
    method: &Method,
    target: &KubeTarget,
    query: Option<&str>,
) -> Option<AccessAttributes> {
    match &target.path {
        KubePath::Version
        | KubePath::CoreVersions
        | KubePath::Groups
        | KubePath::Group(_)
        | KubePath::Resources(_)
        | KubePath::OpenApi => Some(AccessAttributes::NonResource(NonResourceAttributes {
            path: target.raw.clone(),
            verb: path_verb(method),
        })),
        KubePath::Resource(resource) => Some(AccessAttributes::Resource(of_resource(
            method, resource, query,
        ))),
        KubePath::Unknown => None,
    }
}

fn of_resource(method: &Method, path: &ResourcePath, query: Option<&str>) -> ResourceAttributes {
    let named = path.name.as_deref().unwrap_or_default();
    let reading = *method == Method::GET || *method == Method::HEAD;
    if path.watch_segment {
        return attributes_of(path, "watch", named);
    }
    if !reading {
        return attributes_of(
            path,
            &resource_verb(method, !named.is_empty(), &Query::default()),
            named,
        );
    }
    // The query as the routes read it; one they refuse (400 after this
    // check) is read as the API server reads it then: `watch` with any
    // value but `false` or `0`, and no name.
    let (watch, selected) = match ListOptions::parse(query, false) {
        Ok(options) => (options.watch, exact_name(&options.fields).map(String::from)),
        Err(_) => (Query::parse(query).is_watch(), None),
    };
    let selected = selected.as_deref().unwrap_or_default();
    match (watch, path.name.as_deref()) {
        (true, Some(name)) => attributes_of(path, "watch", name),
        (false, Some(name)) => attributes_of(path, "get", name),
        (true, None) => attributes_of(path, "watch", selected),
        (false, None) => attributes_of(path, "list", selected),
    }
}

/// The attributes of `path` for `verb` on the object `name` (empty: the
/// collection).
fn attributes_of(path: &ResourcePath, verb: &str, name: &str) -> ResourceAttributes {
    let namespace = match (&path.namespace, path.resource.as_str(), &path.name) {
        (Some(namespace), _, _) => namespace,
        (None, "namespaces", Some(own)) => own,
        (None, _, _) => "",
    };
    ResourceAttributes {
        verb: verb.to_string(),
        group: path.group_version.group.clone(),
        version: path.group_version.version.clone(),
        resource: path.resource.clone(),
        subresource: path.subresource.clone().unwrap_or_default(),
        namespace: namespace.to_string(),
        name: name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kube::Catalog;

    /// `path` as the check reads it; the catalog does not matter to the
    /// attributes, which are the path's.
    fn read(path: &str) -> KubeTarget {
        KubeTarget::read(path, &Catalog::default())
    }

    fn resource(
        verb: &str,
        group: &str,
        version: &str,
        resource: &str,
        subresource: &str,
        namespace: &str,
        name: &str,
    ) -> Option<AccessAttributes> {
        Some(AccessAttributes::Resource(ResourceAttributes {
            verb: verb.into(),
            group: group.into(),
            version: version.into(),
            resource: resource.into(),
            subresource: subresource.into(),
            namespace: namespace.into(),
            name: name.into(),
        }))
    }

    fn path(verb: &str, path: &str) -> Option<AccessAttributes> {
        Some(AccessAttributes::NonResource(NonResourceAttributes {
            path: path.into(),
            verb: verb.into(),
        }))
    }

    #[test]
    fn requests_read_as_the_routes_serve_them() {
        let get = Method::GET;
        #[rustfmt::skip]
        let cases: Vec<(Method, &str, &str, Option<AccessAttributes>)> = vec![
            // Discovery and the version: paths, without GRW's prefix.
            (get.clone(), "/version", "", path("get", "/version")),
            (get.clone(), "/api", "", path("get", "/api")),
            (get.clone(), "/api/", "", path("get", "/api/")),
            (get.clone(), "/api/v1", "", path("get", "/api/v1")),
            (get.clone(), "/apis", "", path("get", "/apis")),
            // OpenAPI documents: a path, as the API server's
            // `system:discovery` grants it (`/openapi/*`).
            (get.clone(), "/openapi/v2", "", path("get", "/openapi/v2")),
            (get.clone(), "/openapi/v3/apis/apps/v1", "hash=AB12", path("get", "/openapi/v3/apis/apps/v1")),
            (get.clone(), "/apis/apps", "", path("get", "/apis/apps")),
            (get.clone(), "/apis/apps/v1", "", path("get", "/apis/apps/v1")),
            (Method::HEAD, "/apis/apps/v1", "", path("head", "/apis/apps/v1")),
            // Collections: cluster-wide, in a namespace.
            (get.clone(), "/api/v1/pods", "", resource("list", "", "v1", "pods", "", "", "")),
            (get.clone(), "/api/v1/namespaces/a/pods", "", resource("list", "", "v1", "pods", "", "a", "")),
            (get.clone(), "/apis/apps/v1/namespaces/a/deployments", "limit=5", resource("list", "apps", "v1", "deployments", "", "a", "")),
            (get.clone(), "/apis/apps/v1/deployments", "", resource("list", "apps", "v1", "deployments", "", "", "")),
            // Objects and subresources.
            (get.clone(), "/api/v1/namespaces/a/pods/web-1", "", resource("get", "", "v1", "pods", "", "a", "web-1")),
            (get.clone(), "/api/v1/namespaces/a/pods/web-1/log", "", resource("get", "", "v1", "pods", "log", "a", "web-1")),
            (get.clone(), "/api/v1/nodes/n1", "", resource("get", "", "v1", "nodes", "", "", "n1")),
            // A Namespace is in itself.
            (get.clone(), "/api/v1/namespaces", "", resource("list", "", "v1", "namespaces", "", "", "")),
            (get.clone(), "/api/v1/namespaces/a", "", resource("get", "", "v1", "namespaces", "", "a", "a")),
            (get.clone(), "/api/v1/namespaces/a/status", "", resource("get", "", "v1", "namespaces", "status", "a", "a")),
            // Watches: by parameter, as the routes read it, or by path.
            (get.clone(), "/api/v1/namespaces/a/pods", "watch=true", resource("watch", "", "v1", "pods", "", "a", "")),
            (get.clone(), "/api/v1/pods", "watch=1&resourceVersion=5", resource("watch", "", "v1", "pods", "", "", "")),
            (get.clone(), "/api/v1/pods", "watch=false", resource("list", "", "v1", "pods", "", "", "")),
            (get.clone(), "/api/v1/pods", "watch=f", resource("list", "", "v1", "pods", "", "", "")),
            (get.clone(), "/api/v1/watch/namespaces/a/pods", "", resource("watch", "", "v1", "pods", "", "a", "")),
            (get.clone(), "/api/v1/watch/namespaces/a/pods/web-1", "", resource("watch", "", "v1", "pods", "", "a", "web-1")),
            (get.clone(), "/apis/apps/v1/watch/deployments", "", resource("watch", "apps", "v1", "deployments", "", "", "")),
            // A named GET with `watch` is served as a watch of that object.
            (get.clone(), "/api/v1/namespaces/a/pods/web-1", "watch=true", resource("watch", "", "v1", "pods", "", "a", "web-1")),
            // A query the routes refuse: the API server's reading.
            (get.clone(), "/api/v1/pods", "watch=yes", resource("watch", "", "v1", "pods", "", "", "")),
            (get.clone(), "/api/v1/pods", "watch=yes&fieldSelector=metadata.name%3Dweb-1", resource("watch", "", "v1", "pods", "", "", "")),
            // A list or watch of one object by field selector is for that object...
            (get.clone(), "/api/v1/namespaces/a/pods", "fieldSelector=metadata.name%3Dweb-1&watch=true", resource("watch", "", "v1", "pods", "", "a", "web-1")),
            (get.clone(), "/api/v1/namespaces/a/pods", "fieldSelector=metadata.name%3D%3Dweb-1", resource("list", "", "v1", "pods", "", "a", "web-1")),
            (get.clone(), "/api/v1/namespaces/a/pods", "fieldSelector=status.phase%3DRunning", resource("list", "", "v1", "pods", "", "a", "")),
            (get.clone(), "/api/v1/namespaces/a/pods", "fieldSelector=metadata.name%21%3Dweb-1", resource("list", "", "v1", "pods", "", "a", "")),
            // ...but not through the `/watch/` path, nor for a get.
            (get.clone(), "/api/v1/watch/namespaces/a/pods", "fieldSelector=metadata.name%3Dweb-1", resource("watch", "", "v1", "pods", "", "a", "")),
            (get.clone(), "/api/v1/namespaces/a/pods/web-1", "fieldSelector=metadata.name%3Dother", resource("get", "", "v1", "pods", "", "a", "web-1")),
            // Writes, which the routes refuse after the check.
            (Method::POST, "/api/v1/namespaces/a/pods", "", resource("create", "", "v1", "pods", "", "a", "")),
            (Method::PUT, "/api/v1/namespaces/a/pods/p", "", resource("update", "", "v1", "pods", "", "a", "p")),
            (Method::DELETE, "/api/v1/namespaces/a/pods", "", resource("deletecollection", "", "v1", "pods", "", "a", "")),
            (Method::DELETE, "/api/v1/namespaces/a/pods/p", "", resource("delete", "", "v1", "pods", "", "a", "p")),
            (Method::PATCH, "/apis/apps/v1/namespaces/a/deployments/d/scale", "", resource("patch", "apps", "v1", "deployments", "scale", "a", "d")),
            // Paths the routes do not serve.
            (get.clone(), "", "", None),
            (get.clone(), "/", "", None),
            (get.clone(), "/healthz", "", None),
            (get.clone(), "/api/v1/watch", "", None),
            (get.clone(), "/api/v1/namespaces/a/pods/web/log/more", "", None),
            (get.clone(), "/api/v1/proxy/namespaces/a/pods/p/x", "", None),
        ];
        for (method, target, query, want) in cases {
            let got = attributes(&method, &read(target), Some(query));
            assert_eq!(got, want, "{method} {target}?{query}");
        }
    }

    /// The check and the routes see the same request, on paths whose
    /// reading is not obvious. What the routes serve for each is written
    /// here by hand, not computed by the parser both use: the check's
    /// attributes must match it, and so must the routes' reading.
    #[test]
    fn the_check_and_the_routes_agree_on_every_path() {
        // (path, group, resource, namespace, name) as the routes serve it.
        #[rustfmt::skip]
        let cases = [
            ("/api/v1/namespaces/a/pods", "", "pods", "a", ""),
            // Empty segments are dropped, as the API server drops them:
            // `namespaces//pods` is the Namespace named `pods`.
            ("/api/v1/namespaces//pods", "", "namespaces", "", "pods"),
            ("/api/v1/pods/", "", "pods", "", ""),
            ("/api//v1/pods", "", "pods", "", ""),
            ("/api/v1/namespaces/a/pods//web", "", "pods", "a", "web"),
            // The path is served undecoded: `%2F` is no separator, and
            // the store is asked for the namespace `a%2Fb`.
            ("/api/v1/namespaces/a%2Fb/pods/x%2Fy", "", "pods", "a%2Fb", "x%2Fy"),
            ("/apis/apps/v1/namespaces/a", "apps", "namespaces", "", "a"),
            ("/api/v1/watch/namespaces/a/pods/web", "", "pods", "a", "web"),
        ];
        for (target, group, resource, namespace, name) in cases {
            let read = read(target);
            let KubePath::Resource(served) = &read.path else {
                panic!("{target}: not served as a resource");
            };
            let served = (
                served.group_version.group.as_str(),
                served.resource.as_str(),
                served.namespace.as_deref().unwrap_or_default(),
                served.name.as_deref().unwrap_or_default(),
            );
            assert_eq!(
                served,
                (group, resource, namespace, name),
                "{target}: served"
            );
            let Some(AccessAttributes::Resource(checked)) = attributes(&Method::GET, &read, None)
            else {
                panic!("{target}: not a resource");
            };
            let checked = (
                checked.group.as_str(),
                checked.resource.as_str(),
                checked.namespace.as_str(),
                checked.name.as_str(),
            );
            // The check puts a Namespace in itself, so that a Role there
            // may allow reading it.
            let namespace = if resource == "namespaces" {
                name
            } else {
                namespace
            };
            assert_eq!(
                checked,
                (group, resource, namespace, name),
                "{target}: checked"
            );
        }
    }
}
