//! Group/version/kind identities, parsed once at the edge.
//!
//! A [`Gvk`] names a kind exactly; a [`KindRef`] is what a user typed and may
//! leave out the version or even the group ("Deployment", "deployments.apps",
//! "Deployment.v1.apps", "apps/v1/Deployment"). Discovery turns a `KindRef`
//! into a [`ResourceInfo`].

use std::fmt;

/// An exact group/version/kind. The core group is the empty string.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gvk {
    /// API group; `""` for the core group.
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Kind, case-sensitive, e.g. `Deployment`.
    pub kind: String,
}

impl Gvk {
    /// Builds a GVK; `core` is accepted as a name of the core group.
    pub fn new(group: &str, version: &str, kind: &str) -> Self {
        Gvk {
            group: normalize_group(group).to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
        }
    }

    /// `apiVersion` as written in objects: `v1` or `apps/v1`.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The group as the compatibility API spells it: `core` for the core group.
    pub fn group_or_core(&self) -> &str {
        if self.group.is_empty() {
            "core"
        } else {
            &self.group
        }
    }

    /// Parses the `group/version/Kind` form (`v1/Pod` for the core group).
    pub fn parse_slashed(s: &str) -> Option<Gvk> {
        let parts: Vec<&str> = s.split('/').collect();
        match parts.as_slice() {
            [version, kind] if !version.is_empty() && !kind.is_empty() => {
                Some(Gvk::new("", version, kind))
            }
            [group, version, kind] if !version.is_empty() && !kind.is_empty() => {
                Some(Gvk::new(group, version, kind))
            }
            _ => None,
        }
    }
}

/// `group/version/Kind`, with the group left out for core: `v1/Pod`, `apps/v1/Deployment`.
impl fmt::Display for Gvk {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.api_version(), self.kind)
    }
}

/// Maps `core` to the empty core group name.
pub fn normalize_group(group: &str) -> &str {
    if group == "core" { "" } else { group }
}

/// A kind as a user named it; any part but the kind (or resource name) may be missing.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KindRef {
    /// `None`: any group. `Some("")`: the core group.
    pub group: Option<String>,
    /// `None`: the group's preferred version.
    pub version: Option<String>,
    /// A kind (`Deployment`) or a resource name, plural or singular (`deployments`, `deployment`).
    pub name: String,
}

impl KindRef {
    /// A fully specified reference.
    pub fn exact(gvk: &Gvk) -> Self {
        KindRef {
            group: Some(gvk.group.clone()),
            version: Some(gvk.version.clone()),
            name: gvk.kind.clone(),
        }
    }

    /// Parses the forms users type:
    /// - `Pod`, `pods` — any group;
    /// - `deployments.apps`, `Deployment.apps` — a group, its preferred version;
    /// - `Deployment.v1.apps` — exact (kubectl's `resource.version.group`);
    /// - `apps/v1/Deployment`, `v1/Pod` — exact, the GVK string of the compatibility API;
    /// - `apps/Deployment` — group and kind, preferred version.
    pub fn parse(s: &str) -> Result<KindRef, NotAKind> {
        let bad = || NotAKind(s.to_string());
        if s.is_empty() || s.chars().any(|c| c.is_whitespace()) {
            return Err(bad());
        }
        if s.contains('/') {
            let parts: Vec<&str> = s.split('/').collect();
            if parts.iter().any(|p| p.is_empty()) {
                return Err(bad());
            }
            return match parts.as_slice() {
                // `v1/Pod` (core) or `apps/Deployment` (group, preferred version):
                // versions of Kubernetes APIs always look like v<digit>...
                [first, kind] if looks_like_version(first) => Ok(KindRef {
                    group: Some(String::new()),
                    version: Some(first.to_string()),
                    name: kind.to_string(),
                }),
                [group, kind] => Ok(KindRef {
                    group: Some(normalize_group(group).to_string()),
                    version: None,
                    name: kind.to_string(),
                }),
                [group, version, kind] => Ok(KindRef {
                    group: Some(normalize_group(group).to_string()),
                    version: Some(version.to_string()),
                    name: kind.to_string(),
                }),
                _ => Err(bad()),
            };
        }
        let Some((name, rest)) = s.split_once('.') else {
            return Ok(KindRef {
                group: None,
                version: None,
                name: s.to_string(),
            });
        };
        if name.is_empty() || rest.is_empty() || rest.split('.').any(str::is_empty) {
            return Err(bad());
        }
        // `Kind.version.group`: the first label after the name is a version
        // when it looks like one and a group follows.
        if let Some((maybe_version, group)) = rest.split_once('.')
            && looks_like_version(maybe_version)
        {
            return Ok(KindRef {
                group: Some(normalize_group(group).to_string()),
                version: Some(maybe_version.to_string()),
                name: name.to_string(),
            });
        }
        Ok(KindRef {
            group: Some(normalize_group(rest).to_string()),
            version: None,
            name: name.to_string(),
        })
    }
}

impl std::str::FromStr for KindRef {
    type Err = NotAKind;

    /// As [`KindRef::parse`].
    fn from_str(s: &str) -> Result<KindRef, NotAKind> {
        KindRef::parse(s)
    }
}

/// Text that is not a kind in any form [`KindRef::parse`] reads.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "`{0}` is not a kind: expected `Kind`, `resource.group`, `Kind.version.group` or `group/version/Kind`"
)]
pub struct NotAKind(pub String);

impl fmt::Display for KindRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.group, &self.version) {
            (Some(g), Some(v)) if g.is_empty() => write!(f, "{v}/{}", self.name),
            (Some(g), Some(v)) => write!(f, "{g}/{v}/{}", self.name),
            (Some(g), None) if g.is_empty() => write!(f, "core/{}", self.name),
            (Some(g), None) => write!(f, "{g}/{}", self.name),
            (None, _) => write!(f, "{}", self.name),
        }
    }
}

/// `v1`, `v1beta1`, `v2alpha3`.
fn looks_like_version(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next() == Some('v') && chars.next().is_some_and(|c| c.is_ascii_digit())
}

/// What discovery knows of one resource.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ResourceInfo {
    /// The kind's exact identity.
    pub gvk: Gvk,
    /// Plural resource name used in URLs, e.g. `deployments`.
    pub plural: String,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
}

/// The group of GRW's own kinds: served from its caches, never asked of
/// the API server.
pub const GRW_GROUP: &str = "relations.grw.io";

/// GRW's own kinds: `Relation` (one object per edge of the relationship
/// index) and `RelationSet` (one per analyzed object, analyzer, relation and
/// direction), both `relations.grw.io/v1`.
pub fn grw_kinds() -> Vec<ResourceInfo> {
    [("Relation", "relations"), ("RelationSet", "relationsets")]
        .into_iter()
        .map(|(kind, plural)| ResourceInfo {
            gvk: Gvk::new(GRW_GROUP, "v1", kind),
            plural: plural.to_string(),
            namespaced: true,
        })
        .collect()
}

/// Whether a kind is one of GRW's own.
pub fn is_grw_kind(gvk: &Gvk) -> bool {
    gvk.group == GRW_GROUP
}

impl ResourceInfo {
    /// Path of the resource collection, optionally inside one namespace.
    pub fn collection_path(&self, namespace: Option<&str>) -> String {
        let prefix = if self.gvk.group.is_empty() {
            format!("/api/{}", self.gvk.version)
        } else {
            format!("/apis/{}/{}", self.gvk.group, self.gvk.version)
        };
        match namespace {
            Some(ns) if self.namespaced => format!("{prefix}/namespaces/{ns}/{}", self.plural),
            _ => format!("{prefix}/{}", self.plural),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(group: Option<&str>, version: Option<&str>, name: &str) -> KindRef {
        KindRef {
            group: group.map(str::to_string),
            version: version.map(str::to_string),
            name: name.to_string(),
        }
    }

    #[test]
    fn parses_kind_refs() {
        let cases = [
            ("Pod", r(None, None, "Pod")),
            ("pods", r(None, None, "pods")),
            ("v1/Pod", r(Some(""), Some("v1"), "Pod")),
            ("core/v1/Pod", r(Some(""), Some("v1"), "Pod")),
            (
                "apps/v1/Deployment",
                r(Some("apps"), Some("v1"), "Deployment"),
            ),
            ("apps/Deployment", r(Some("apps"), None, "Deployment")),
            ("core/Pod", r(Some(""), None, "Pod")),
            ("deployments.apps", r(Some("apps"), None, "deployments")),
            (
                "Deployment.v1.apps",
                r(Some("apps"), Some("v1"), "Deployment"),
            ),
            (
                "virtualservices.networking.istio.io",
                r(Some("networking.istio.io"), None, "virtualservices"),
            ),
            (
                "Gateway.v1beta1.networking.istio.io",
                r(Some("networking.istio.io"), Some("v1beta1"), "Gateway"),
            ),
        ];
        for (input, want) in cases {
            assert_eq!(KindRef::parse(input).unwrap(), want, "{input}");
        }
    }

    #[test]
    fn rejects_malformed_kind_refs() {
        for input in [
            "",
            "a b",
            "/v1/Pod",
            "apps//Deployment",
            "a/b/c/d",
            ".apps",
            "pods.",
            "a..b",
        ] {
            let err = KindRef::parse(input).unwrap_err().to_string();
            assert!(err.contains("is not a kind"), "{input}: {err}");
        }
    }

    #[test]
    fn gvk_strings_round_trip() {
        for s in [
            "v1/Pod",
            "apps/v1/Deployment",
            "networking.istio.io/v1beta1/Gateway",
        ] {
            assert_eq!(Gvk::parse_slashed(s).unwrap().to_string(), s);
        }
        assert_eq!(Gvk::new("core", "v1", "Pod").to_string(), "v1/Pod");
        assert_eq!(Gvk::parse_slashed("core/v1/Pod").unwrap().group, "");
    }

    #[test]
    fn collection_paths() {
        let pods = ResourceInfo {
            gvk: Gvk::new("", "v1", "Pod"),
            plural: "pods".into(),
            namespaced: true,
        };
        assert_eq!(pods.collection_path(None), "/api/v1/pods");
        assert_eq!(
            pods.collection_path(Some("shop")),
            "/api/v1/namespaces/shop/pods"
        );
        let pv = ResourceInfo {
            gvk: Gvk::new("", "v1", "PersistentVolume"),
            plural: "persistentvolumes".into(),
            namespaced: false,
        };
        assert_eq!(
            pv.collection_path(Some("shop")),
            "/api/v1/persistentvolumes"
        );
    }
}
