//! What a path below the Kubernetes API's prefix names, read as the API
//! server reads it: a discovery document, or a resource (a collection or one
//! object, in a namespace or not, possibly through the legacy `/watch/`
//! segment). Read once, by the access check ([`super::KubeTarget`]), which
//! hands it to the routes: it owns its parts.

/// A path of the Kubernetes API, without GRW's prefix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KubePath {
    /// `/version`.
    Version,
    /// `/api`: the core group's versions.
    CoreVersions,
    /// `/apis`: every group.
    Groups,
    /// `/apis/{group}`.
    Group(String),
    /// `/api/{version}` or `/apis/{group}/{version}`: the resources of a
    /// group version.
    Resources(GroupVersion),
    /// A collection or an object.
    Resource(ResourcePath),
    /// `/openapi/v2`, `/openapi/v3` or one of v3's documents.
    OpenApi,
    /// Anything else: the API server answers these `404 page not found`.
    Unknown,
}

/// A group and version; the core group is `""`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GroupVersion {
    /// API group, `""` for the core group.
    pub group: String,
    /// Version, e.g. `v1`.
    pub version: String,
}

impl GroupVersion {
    fn new(group: &str, version: &str) -> GroupVersion {
        GroupVersion {
            group: group.to_string(),
            version: version.to_string(),
        }
    }
}

/// A collection or an object of one resource.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourcePath {
    /// Its group version.
    pub group_version: GroupVersion,
    /// `namespaces/{ns}/...`; `None` for cluster-scoped paths and lists
    /// across namespaces.
    pub namespace: Option<String>,
    /// The resource's plural name, e.g. `pods`.
    pub resource: String,
    /// The object's name; `None` for the collection.
    pub name: Option<String>,
    /// A subresource such as `status` or `log`, which GRW does not serve.
    pub subresource: Option<String>,
    /// Reached through the legacy `/watch/` segment
    /// (`/api/v1/watch/namespaces/a/pods`).
    pub watch_segment: bool,
}

impl KubePath {
    /// Reads `path` (starting with `/`, GRW's prefix removed).
    pub(crate) fn parse(path: &str) -> KubePath {
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        match segments.as_slice() {
            ["version"] => KubePath::Version,
            ["openapi", "v2"] | ["openapi", "v3", ..] => KubePath::OpenApi,
            ["api"] => KubePath::CoreVersions,
            ["apis"] => KubePath::Groups,
            ["apis", group] => KubePath::Group(group.to_string()),
            ["api", version] => KubePath::Resources(GroupVersion::new("", version)),
            ["apis", group, version] => KubePath::Resources(GroupVersion::new(group, version)),
            ["api", version, rest @ ..] => resource(GroupVersion::new("", version), rest),
            ["apis", group, version, rest @ ..] => {
                resource(GroupVersion::new(group, version), rest)
            }
            _ => KubePath::Unknown,
        }
    }
}

/// The subresources of a Namespace: `namespaces/{name}/status` is the
/// Namespace's status, not a resource `status` in that namespace.
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

fn resource(group_version: GroupVersion, rest: &[&str]) -> KubePath {
    let (watch_segment, rest) = match rest {
        ["watch", rest @ ..] => (true, rest),
        rest => (false, rest),
    };
    let (namespace, rest) = match rest {
        ["namespaces", namespace, next, ..] if !NAMESPACE_SUBRESOURCES.contains(next) => {
            (Some(*namespace), &rest[2..])
        }
        // `namespaces/{name}` (and its subresources) is a Namespace object.
        rest => (None, rest),
    };
    let (resource, name, subresource) = match rest {
        [resource] => (*resource, None, None),
        [resource, name] => (*resource, Some(*name), None),
        [resource, name, subresource] => (*resource, Some(*name), Some(*subresource)),
        _ => return KubePath::Unknown,
    };
    KubePath::Resource(ResourcePath {
        group_version,
        namespace: namespace.map(str::to_string),
        resource: resource.to_string(),
        name: name.map(str::to_string),
        subresource: subresource.map(str::to_string),
        watch_segment,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn core(version: &str) -> GroupVersion {
        GroupVersion::new("", version)
    }

    #[test]
    fn paths_read_as_the_api_server_reads_them() {
        let apps = || GroupVersion::new("apps", "v1");
        let at = |group_version,
                  namespace: Option<&str>,
                  resource: &str,
                  name: Option<&str>,
                  subresource: Option<&str>,
                  watch_segment| {
            KubePath::Resource(ResourcePath {
                group_version,
                namespace: namespace.map(str::to_string),
                resource: resource.to_string(),
                name: name.map(str::to_string),
                subresource: subresource.map(str::to_string),
                watch_segment,
            })
        };
        let cases = [
            ("/version", KubePath::Version),
            ("/api", KubePath::CoreVersions),
            ("/api/", KubePath::CoreVersions),
            ("/apis", KubePath::Groups),
            ("/apis/apps", KubePath::Group("apps".into())),
            ("/api/v1", KubePath::Resources(core("v1"))),
            ("/apis/apps/v1", KubePath::Resources(apps())),
            (
                "/api/v1/pods",
                at(core("v1"), None, "pods", None, None, false),
            ),
            (
                "/api/v1/namespaces",
                at(core("v1"), None, "namespaces", None, None, false),
            ),
            (
                "/api/v1/namespaces/default",
                at(core("v1"), None, "namespaces", Some("default"), None, false),
            ),
            (
                "/api/v1/namespaces/default/status",
                at(
                    core("v1"),
                    None,
                    "namespaces",
                    Some("default"),
                    Some("status"),
                    false,
                ),
            ),
            (
                "/api/v1/namespaces/default/configmaps",
                at(core("v1"), Some("default"), "configmaps", None, None, false),
            ),
            (
                "/api/v1/namespaces/a/pods",
                at(core("v1"), Some("a"), "pods", None, None, false),
            ),
            (
                "/api/v1/namespaces/a/pods/web",
                at(core("v1"), Some("a"), "pods", Some("web"), None, false),
            ),
            (
                "/api/v1/namespaces/a/pods/web/log",
                at(
                    core("v1"),
                    Some("a"),
                    "pods",
                    Some("web"),
                    Some("log"),
                    false,
                ),
            ),
            (
                "/api/v1/nodes/n1",
                at(core("v1"), None, "nodes", Some("n1"), None, false),
            ),
            (
                "/apis/apps/v1/namespaces/a/deployments",
                at(apps(), Some("a"), "deployments", None, None, false),
            ),
            (
                "/api/v1/watch/namespaces/a/pods",
                at(core("v1"), Some("a"), "pods", None, None, true),
            ),
            (
                "/apis/apps/v1/watch/deployments",
                at(apps(), None, "deployments", None, None, true),
            ),
            ("/api/v1/namespaces/a/pods/web/log/more", KubePath::Unknown),
            ("/", KubePath::Unknown),
            ("/openapi/v2", KubePath::OpenApi),
            ("/openapi/v3/apis/apps/v1", KubePath::OpenApi),
            ("/openapi/v1", KubePath::Unknown),
            ("/healthz", KubePath::Unknown),
        ];
        for (path, want) in cases {
            assert_eq!(KubePath::parse(path), want, "{path}");
        }
    }
}
