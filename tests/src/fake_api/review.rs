//! `TokenReview` and `SubjectAccessReview`, answered from a small RBAC
//! model the test sets and changes at run time: tokens belong to users
//! (with groups), and rules are granted to users or groups, in one
//! namespace (a Role and RoleBinding) or cluster-wide (a ClusterRole and
//! ClusterRoleBinding). Like a real cluster, every authenticated user has
//! `system:discovery`'s `get` on `/api`, `/api/*`, `/apis`, `/apis/*`,
//! `/version` and the health paths.

use std::collections::BTreeMap;

use serde_json::{Value, json};

/// The group of every authenticated user.
const AUTHENTICATED: &str = "system:authenticated";

/// `system:discovery`'s paths, granted to every authenticated user.
const DISCOVERY_PATHS: [&str; 10] = [
    "/api",
    "/api/*",
    "/apis",
    "/apis/*",
    "/healthz",
    "/livez",
    "/readyz",
    "/version",
    "/version/",
    "/openapi/*",
];

/// Whom a rule is granted to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// A user, by name.
    User(String),
    /// A group, by name.
    Group(String),
}

/// One RBAC rule, as a Role or ClusterRole writes it, with where it is
/// bound. `"*"` matches anything in a list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Rule {
    /// `verbs`.
    pub verbs: Vec<String>,
    /// `apiGroups` (`""` the core group).
    pub api_groups: Vec<String>,
    /// `resources`, `resource/subresource` for a subresource.
    pub resources: Vec<String>,
    /// `resourceNames`; empty: any.
    pub resource_names: Vec<String>,
    /// `nonResourceURLs`; a trailing `*` matches any rest.
    pub non_resource_urls: Vec<String>,
    /// The namespace of the binding; `None`: cluster-wide.
    pub namespace: Option<String>,
}

impl Rule {
    /// `verbs` on `resources` of `group`, cluster-wide.
    pub fn cluster(verbs: &[&str], group: &str, resources: &[&str]) -> Rule {
        Rule {
            verbs: strings(verbs),
            api_groups: vec![group.to_string()],
            resources: strings(resources),
            ..Rule::default()
        }
    }

    /// `verbs` on `resources` of `group`, in `namespace` only.
    pub fn namespaced(namespace: &str, verbs: &[&str], group: &str, resources: &[&str]) -> Rule {
        Rule {
            namespace: Some(namespace.to_string()),
            ..Rule::cluster(verbs, group, resources)
        }
    }

    /// `verbs` on the non-resource URLs `paths`.
    pub fn paths(verbs: &[&str], paths: &[&str]) -> Rule {
        Rule {
            verbs: strings(verbs),
            non_resource_urls: strings(paths),
            ..Rule::default()
        }
    }

    fn allows(&self, spec: &Value) -> bool {
        let any = |list: &[String], value: &str| list.iter().any(|v| v == "*" || v == value);
        if let Some(n) = spec.get("nonResourceAttributes") {
            let path = n["path"].as_str().unwrap_or_default();
            let verb = n["verb"].as_str().unwrap_or_default();
            return self.namespace.is_none()
                && any(&self.verbs, verb)
                && self
                    .non_resource_urls
                    .iter()
                    .any(|url| match url.strip_suffix('*') {
                        Some(prefix) => path.starts_with(prefix),
                        None => url == path,
                    });
        }
        let r = &spec["resourceAttributes"];
        let s = |key: &str| r[key].as_str().unwrap_or_default();
        let resource = match s("subresource") {
            "" => s("resource").to_string(),
            sub => format!("{}/{sub}", s("resource")),
        };
        let in_place = match &self.namespace {
            None => true,
            Some(ns) => ns == s("namespace"),
        };
        let named = self.resource_names.is_empty()
            || (!s("name").is_empty() && self.resource_names.iter().any(|n| n == s("name")));
        in_place
            && named
            && any(&self.verbs, s("verb"))
            && any(&self.api_groups, s("group"))
            && any(&self.resources, &resource)
    }
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| s.to_string()).collect()
}

/// A user tokens belong to.
#[derive(Debug, Clone)]
struct Account {
    name: String,
    groups: Vec<String>,
}

/// The tokens, the grants, and what was asked.
#[derive(Debug, Default)]
pub(crate) struct Rbac {
    tokens: BTreeMap<String, Account>,
    grants: Vec<(Subject, Rule)>,
    /// What a webhook authorizer in front of RBAC denies outright.
    denials: Vec<(Subject, Rule)>,
    /// Whether `system:discovery`'s binding was removed: authenticated
    /// users then get the discovery paths only by a grant of their own.
    pub discovery_unbound: bool,
    /// Every TokenReview received, by the token's user (`None`: unknown token).
    pub token_reviews: Vec<Option<String>>,
    /// The `spec` of every SubjectAccessReview received.
    pub access_reviews: Vec<Value>,
}

impl Rbac {
    /// Makes `token` belong to `user`, in `groups` (and `system:authenticated`).
    pub(crate) fn add_token(&mut self, token: &str, user: &str, groups: &[&str]) {
        let mut groups = strings(groups);
        groups.push(AUTHENTICATED.to_string());
        self.tokens.insert(
            token.to_string(),
            Account {
                name: user.to_string(),
                groups,
            },
        );
    }

    /// Grants `rule` to `subject`.
    pub(crate) fn grant(&mut self, subject: Subject, rule: Rule) {
        self.grants.push((subject, rule));
    }

    /// Makes a webhook authorizer deny what `rule` matches to `subject`,
    /// whatever RBAC allows: unlike RBAC, it answers each question as
    /// asked, so it may deny in namespace `b` what it allows cluster-wide.
    pub(crate) fn deny(&mut self, subject: Subject, rule: Rule) {
        self.denials.push((subject, rule));
    }

    /// Takes every rule of `subject` away.
    pub(crate) fn revoke(&mut self, subject: &Subject) {
        self.grants.retain(|(s, _)| s != subject);
    }

    fn review_token(&mut self, review: &Value) -> Value {
        let token = review["spec"]["token"].as_str().unwrap_or_default();
        let account = self.tokens.get(token).cloned();
        self.token_reviews
            .push(account.as_ref().map(|a| a.name.clone()));
        let status = match account {
            Some(account) => json!({
                "authenticated": true,
                "user": {
                    "username": account.name,
                    "uid": format!("uid-{}", account.name),
                    "groups": account.groups,
                },
                "audiences": ["https://kubernetes.default.svc"],
            }),
            None => json!({"authenticated": false, "error": "invalid bearer token"}),
        };
        json!({
            "kind": "TokenReview",
            "apiVersion": "authentication.k8s.io/v1",
            "metadata": {"creationTimestamp": null},
            "spec": review["spec"],
            "status": status,
        })
    }

    fn review_access(&mut self, review: &Value) -> Value {
        let spec = &review["spec"];
        self.access_reviews.push(spec.clone());
        let user = spec["user"].as_str().unwrap_or_default();
        let groups: Vec<&str> = spec["groups"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let discovery = Rule::paths(&["get"], &DISCOVERY_PATHS);
        let holds = |subject: &Subject| match subject {
            Subject::User(name) => name == user,
            Subject::Group(name) => groups.contains(&name.as_str()),
        };
        let denied = self
            .denials
            .iter()
            .any(|(subject, rule)| holds(subject) && rule.allows(spec));
        let allowed =
            (!self.discovery_unbound && groups.contains(&AUTHENTICATED) && discovery.allows(spec))
                || self
                    .grants
                    .iter()
                    .any(|(subject, rule)| holds(subject) && rule.allows(spec));
        // A real RBAC authorizer gives no reason when nothing allows.
        let status = if denied {
            json!({"allowed": false, "denied": true, "reason": "denied by the fake API server's webhook"})
        } else if allowed {
            json!({"allowed": true, "reason": "allowed by the fake API server's RBAC"})
        } else {
            json!({"allowed": false})
        };
        json!({
            "kind": "SubjectAccessReview",
            "apiVersion": "authorization.k8s.io/v1",
            "metadata": {"creationTimestamp": null},
            "spec": spec,
            "status": status,
        })
    }
}

/// The answer to a `POST` of a review to `path`, if it is one; `None` for
/// any other path.
pub(crate) fn answer(
    rbac: &parking_lot::Mutex<Rbac>,
    path: &str,
    body: &[u8],
) -> Option<(u16, Value)> {
    let review = match path {
        "/apis/authentication.k8s.io/v1/tokenreviews" => Rbac::review_token,
        "/apis/authorization.k8s.io/v1/subjectaccessreviews" => Rbac::review_access,
        _ => return None,
    };
    let Ok(body) = serde_json::from_slice::<Value>(body) else {
        return Some((400, json!({"message": "the review is not JSON"})));
    };
    Some((201, review(&mut rbac.lock(), &body)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn access(rbac: &mut Rbac, user: &str, groups: &[&str], attributes: Value) -> bool {
        let review =
            json!({"spec": {"user": user, "groups": groups, "resourceAttributes": attributes}});
        rbac.review_access(&review)["status"]["allowed"] == true
    }

    #[test]
    fn rules_match_as_rbac_matches_them() {
        let mut rbac = Rbac::default();
        rbac.grant(
            Subject::User("jane".into()),
            Rule::namespaced("a", &["get", "list", "watch"], "", &["pods"]),
        );
        rbac.grant(
            Subject::Group("ops".into()),
            Rule {
                resource_names: vec!["web".into()],
                ..Rule::cluster(&["get"], "apps", &["deployments"])
            },
        );
        let pods =
            |ns: &str, verb: &str| json!({"verb": verb, "resource": "pods", "namespace": ns});
        assert!(access(&mut rbac, "jane", &[], pods("a", "list")));
        assert!(!access(&mut rbac, "jane", &[], pods("", "list")));
        assert!(!access(&mut rbac, "jane", &[], pods("b", "list")));
        assert!(!access(&mut rbac, "jane", &[], pods("a", "delete")));
        assert!(!access(&mut rbac, "joe", &[], pods("a", "list")));
        let deployment = |name: &str| json!({"verb": "get", "group": "apps", "resource": "deployments", "namespace": "x", "name": name});
        assert!(access(&mut rbac, "joe", &["ops"], deployment("web")));
        assert!(!access(&mut rbac, "joe", &["ops"], deployment("db")));
        rbac.revoke(&Subject::User("jane".into()));
        assert!(!access(&mut rbac, "jane", &[], pods("a", "list")));
        assert_eq!(rbac.access_reviews.len(), 8);

        let path = |rbac: &mut Rbac, groups: &[&str], path: &str| {
            let review = json!({"spec": {"user": "jane", "groups": groups, "nonResourceAttributes": {"path": path, "verb": "get"}}});
            rbac.review_access(&review)["status"]["allowed"] == true
        };
        assert!(path(&mut rbac, &[AUTHENTICATED], "/apis/apps/v1"));
        assert!(!path(&mut rbac, &[], "/apis"));
        assert!(!path(&mut rbac, &[AUTHENTICATED], "/metrics"));
        rbac.grant(
            Subject::User("jane".into()),
            Rule::paths(&["get"], &["/metrics"]),
        );
        assert!(path(&mut rbac, &[], "/metrics"));
    }

    #[test]
    fn a_webhook_denial_wins_over_rbac_for_the_question_it_matches() {
        let mut rbac = Rbac::default();
        rbac.grant(
            Subject::User("jane".into()),
            Rule::cluster(&["list"], "", &["pods"]),
        );
        rbac.deny(
            Subject::User("jane".into()),
            Rule::namespaced("b", &["*"], "*", &["*"]),
        );
        let pods = |ns: &str| json!({"verb": "list", "resource": "pods", "namespace": ns});
        assert!(access(&mut rbac, "jane", &[], pods("")));
        assert!(access(&mut rbac, "jane", &[], pods("a")));
        assert!(!access(&mut rbac, "jane", &[], pods("b")));
    }

    #[test]
    fn tokens_belong_to_their_users() {
        let mut rbac = Rbac::default();
        rbac.add_token("t1", "jane", &["dev"]);
        let answer = rbac.review_token(&json!({"spec": {"token": "t1"}}));
        assert_eq!(answer["status"]["user"]["username"], "jane");
        assert_eq!(
            answer["status"]["user"]["groups"],
            json!(["dev", AUTHENTICATED])
        );
        let answer = rbac.review_token(&json!({"spec": {"token": "t2"}}));
        assert_eq!(answer["status"]["authenticated"], false);
        assert_eq!(rbac.token_reviews, [Some("jane".to_string()), None]);
    }
}
