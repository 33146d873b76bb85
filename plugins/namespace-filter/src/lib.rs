//! # namespace-filter
//!
//! A GRW filter that passes events by the object's namespace.
//!
//! ## Configuration
//!
//! ```json
//! {"include": ["shop", "team-*"], "exclude": ["kube-*"], "clusterScoped": true}
//! ```
//!
//! - `include` (list of globs, default `[]`): namespaces to pass. Empty
//!   passes every namespace.
//! - `exclude` (list of globs, default `[]`): namespaces to drop. Exclusion
//!   wins over inclusion: with the example above, `team-kube` passes but
//!   `kube-system` does not, even if it were also included.
//! - `clusterScoped` (bool, default `true`): whether events for
//!   cluster-scoped objects (nodes, namespaces, CRDs ...), which have no
//!   namespace, pass. `include` and `exclude` do not apply to them.
//!
//! Globs match whole namespace names: `*` stands for any run of characters
//! (including none) and `?` for exactly one. Since namespace names are
//! lowercase letters, digits and `-`, a glob may only contain those and the
//! two wildcards, at most 63 characters; anything else (say `Team-*` or
//! `shop/*`) is a configuration error naming the key, e.g.
//! ``config key `include[1]`: ...``, as are unknown keys and wrong types.
//!
//! The decision uses only the event's namespace, so the object's JSON is
//! never parsed.

use grw_sdk::{Event, Filter, Interest};
use serde::Deserialize;

/// The namespace filter, configured.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct NamespaceFilter {
    #[serde(default)]
    include: Vec<Glob>,
    #[serde(default)]
    exclude: Vec<Glob>,
    #[serde(default = "pass_cluster_scoped")]
    cluster_scoped: bool,
}

fn pass_cluster_scoped() -> bool {
    true
}

impl NamespaceFilter {
    /// Whether events in `namespace` (empty for cluster-scoped objects) pass.
    pub fn passes(&self, namespace: &str) -> bool {
        if namespace.is_empty() {
            return self.cluster_scoped;
        }
        if self.exclude.iter().any(|g| g.matches(namespace)) {
            return false;
        }
        self.include.is_empty() || self.include.iter().any(|g| g.matches(namespace))
    }
}

impl Filter for NamespaceFilter {
    fn init(config: &str) -> Result<(Self, Interest), String> {
        Ok((grw_sdk::parse_config(config)?, Interest::all()))
    }

    fn decide(&self, event: &Event) -> bool {
        self.passes(event.namespace())
    }
}

grw_sdk::export_filter!(NamespaceFilter);

/// A namespace glob with `*` and `?`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Glob(String);

impl Glob {
    /// Checks that `pattern` can match namespace names.
    pub fn new(pattern: &str) -> Result<Self, String> {
        let valid_chars = pattern.bytes().all(|b| {
            b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'-' | b'*' | b'?')
        });
        if pattern.is_empty() || pattern.len() > 63 || !valid_chars {
            return Err(format!(
                "`{pattern}` is not a namespace glob: use 1-63 lowercase letters, digits, `-`, and the wildcards `*` and `?`"
            ));
        }
        Ok(Self(pattern.to_owned()))
    }

    /// Whether the whole of `name` matches.
    pub fn matches(&self, name: &str) -> bool {
        let (pattern, name) = (self.0.as_bytes(), name.as_bytes());
        let (mut p, mut n) = (0, 0);
        // Where to resume after the last `*`: the pattern just past it, and
        // the name position it has absorbed up to. Backtracking only to the
        // last star keeps matching linear-ish, with no recursion.
        let mut star: Option<(usize, usize)> = None;
        while n < name.len() {
            match pattern.get(p) {
                Some(b'*') => {
                    star = Some((p + 1, n));
                    p += 1;
                }
                Some(&c) if c == b'?' || c == name[n] => {
                    p += 1;
                    n += 1;
                }
                _ => match star {
                    Some((after_star, absorbed)) => {
                        p = after_star;
                        n = absorbed + 1;
                        star = Some((after_star, absorbed + 1));
                    }
                    None => return false,
                },
            }
        }
        pattern[p..].iter().all(|&c| c == b'*')
    }
}

impl<'de> Deserialize<'de> for Glob {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let pattern = String::deserialize(deserializer)?;
        Glob::new(&pattern).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use grw_sdk::EventType;
    use serde_json::json;

    fn filter(config: &str) -> NamespaceFilter {
        let (filter, interest) = NamespaceFilter::init(config).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(interest, Interest::all());
        filter
    }

    fn event(namespace: &str) -> Event {
        Event::new(
            EventType::Added,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": namespace}}),
        )
    }

    #[test]
    fn globs() {
        let g = |p: &str| Glob::new(p).unwrap();
        assert!(g("shop").matches("shop"));
        assert!(!g("shop").matches("shops"));
        assert!(!g("shop").matches("sho"));
        assert!(g("team-*").matches("team-"));
        assert!(g("team-*").matches("team-a-b"));
        assert!(!g("team-*").matches("xteam-a"));
        assert!(g("*-prod").matches("shop-prod"));
        assert!(!g("*-prod").matches("shop-prod-2"));
        assert!(g("a*b*c").matches("aXbYbZc"));
        assert!(!g("a*b*c").matches("aXbYbZ"));
        assert!(g("ns-?").matches("ns-1"));
        assert!(!g("ns-?").matches("ns-12"));
        assert!(!g("ns-?").matches("ns-"));
        assert!(g("*").matches("anything"));
        assert!(g("**").matches("x"));
        assert!(g("?*?").matches("ab"));
        assert!(!g("?*?").matches("a"));
    }

    #[test]
    fn example_config() {
        let f = filter(r#"{"include": ["shop", "team-*"], "exclude": ["kube-*"]}"#);
        assert!(f.decide(&event("shop")));
        assert!(f.decide(&event("team-a")));
        assert!(!f.decide(&event("default")));
        assert!(!f.decide(&event("kube-system")));
        // Cluster-scoped objects pass by default.
        assert!(f.decide(&event("")));
    }

    #[test]
    fn exclude_wins_over_include() {
        let f = filter(r#"{"include": ["team-*"], "exclude": ["team-secret"]}"#);
        assert!(f.decide(&event("team-open")));
        assert!(!f.decide(&event("team-secret")));
    }

    #[test]
    fn empty_include_passes_all_not_excluded() {
        let f = filter(r#"{"exclude": ["kube-*"]}"#);
        assert!(f.decide(&event("anything")));
        assert!(!f.decide(&event("kube-public")));
        let f = filter("{}");
        assert!(f.decide(&event("anything")));
        let f = filter("");
        assert!(f.decide(&event("anything")));
    }

    #[test]
    fn cluster_scoped_objects() {
        let f = filter(r#"{"include": ["shop"], "clusterScoped": false}"#);
        assert!(!f.decide(&event("")));
        assert!(f.decide(&event("shop")));
        // Include and exclude do not apply to cluster-scoped objects.
        let f = filter(r#"{"include": ["shop"], "exclude": ["*"]}"#);
        assert!(f.decide(&event("")));
    }

    #[test]
    fn bad_config_names_the_key() {
        let error = |config: &str| NamespaceFilter::init(config).err().unwrap();
        let e = error(r#"{"include": ["shop", "Team-*"]}"#);
        assert!(
            e.starts_with("config key `include[1]`")
                && e.contains("`Team-*` is not a namespace glob"),
            "{e}"
        );
        let e = error(r#"{"exclude": ["kube/*"]}"#);
        assert!(e.starts_with("config key `exclude[0]`"), "{e}");
        let e = error(r#"{"exclude": [""]}"#);
        assert!(e.starts_with("config key `exclude[0]`"), "{e}");
        let e = error(r#"{"include": "shop"}"#);
        assert!(
            e.starts_with("config key `include`") && e.contains("expected a sequence"),
            "{e}"
        );
        let e = error(r#"{"clusterScoped": "yes"}"#);
        assert!(e.starts_with("config key `clusterScoped`"), "{e}");
        let e = error(r#"{"includes": []}"#);
        assert!(e.contains("unknown field `includes`"), "{e}");
        let e = error("include: shop");
        assert!(e.contains("not valid JSON"), "{e}");
        assert!(Glob::new(&"a".repeat(64)).is_err());
    }
}
