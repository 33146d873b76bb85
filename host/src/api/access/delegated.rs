//! The `delegated` access mode: the API server says who a caller is
//! (TokenReview) and whether it may make a request (SubjectAccessReview),
//! as it does for an aggregated API server or a kubelet, and the answers
//! are reused for a while ([`crate::config::DelegatedAuth`]).
//!
//! Tokens are kept by their SHA-256 hash, never as written, and never
//! logged. A token the API server rejected is remembered as long as a
//! denial (`cacheDeniedSeconds`), so that a client retrying a bad token in
//! a loop costs the API server one review per period, not one per request.

use std::sync::Arc;

use sha2::{Digest, Sha256};

use super::cache::{Failed, ReviewCache, Source};
use crate::config::DelegatedAuth;
use crate::kube::{
    AccessAttributes, AccessVerdict, KubeClient, ResourceAttributes, ReviewError, TokenVerdict,
    UserInfo,
};
use crate::metrics::AccessMetrics;

/// The group every authenticated user is in; the API server's delegating
/// authenticator adds it when a TokenReview's answer lacks it.
const AUTHENTICATED: &str = "system:authenticated";

/// What `anonymous` callers are called, who are not in [`AUTHENTICATED`].
const ANONYMOUS: &str = "system:anonymous";

/// Who a token belongs to, or why it is refused.
type TokenAnswer = Result<Arc<UserInfo>, Arc<str>>;

/// A decision's question: who asks to do what.
type Question = (Arc<UserInfo>, AccessAttributes);

/// The caches of the API server's answers and the client to ask it; one
/// for every listener that is `delegated`.
pub struct Delegated {
    client: KubeClient,
    settings: DelegatedAuth,
    tokens: Arc<ReviewCache<[u8; 32], TokenAnswer, ReviewError>>,
    decisions: Arc<ReviewCache<Question, AccessVerdict, ReviewError>>,
    metrics: AccessMetrics,
}

/// Who the caller is.
pub(super) enum Identity {
    /// A user the API server knows.
    Known(Arc<UserInfo>),
    /// The token is not valid; the API server's explanation.
    Rejected(Arc<str>),
    /// The API server could not say; why.
    Unknown(NoAnswer),
}

/// Whether the caller may make the request.
pub(super) enum Decision {
    /// Yes.
    Allowed,
    /// No, with the authorizer's reason (often empty).
    Denied(AccessVerdict),
    /// The API server could not say; why.
    Unknown(NoAnswer),
}

/// Why the API server gave no answer about a caller.
#[derive(Debug, thiserror::Error)]
pub(super) enum NoAnswer {
    /// The review failed; its error says how.
    #[error(transparent)]
    Review(Arc<ReviewError>),
    /// The review's task ended without an answer (it panicked).
    #[error("the review failed unexpectedly; the daemon logged it")]
    Lost,
}

impl From<Failed<ReviewError>> for NoAnswer {
    fn from(failed: Failed<ReviewError>) -> NoAnswer {
        match failed {
            Failed::Review(error) => NoAnswer::Review(error),
            Failed::Lost => NoAnswer::Lost,
        }
    }
}

impl Delegated {
    /// Empty caches sized and timed by `settings`, asking through `client`.
    pub fn new(client: KubeClient, settings: DelegatedAuth, metrics: AccessMetrics) -> Delegated {
        let [token_entries, decision_entries] = metrics.entries.clone();
        Delegated {
            tokens: ReviewCache::new(settings.cache_max_entries, token_entries),
            decisions: ReviewCache::new(settings.cache_max_entries, decision_entries),
            client,
            settings,
            metrics,
        }
    }

    /// Who `token` belongs to.
    pub(super) async fn authenticate(&self, token: &str) -> Identity {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let review = || {
            let client = self.client.clone();
            let metrics = self.metrics.clone();
            let token = token.to_string();
            async move {
                let verdict = client.review_token(&token).await;
                let result = match &verdict {
                    Ok(TokenVerdict::Authenticated(_)) => "authenticated",
                    Ok(TokenVerdict::Rejected(_)) => "rejected",
                    Err(_) => "error",
                };
                metrics.review(0, result);
                verdict.map(|verdict| match verdict {
                    TokenVerdict::Authenticated(user) => Ok(Arc::new(authenticated(user))),
                    TokenVerdict::Rejected(error) => Err(Arc::from(error)),
                })
            }
        };
        let (known, denied) = (self.settings.token_cache, self.settings.cache_denied);
        let keep = move |answer: &TokenAnswer| if answer.is_ok() { known } else { denied };
        let (answer, source) = self.tokens.get(&key, review, keep).await;
        self.count_hit(0, source);
        match answer {
            Ok(Ok(user)) => Identity::Known(user),
            Ok(Err(error)) => Identity::Rejected(error),
            Err(failed) => Identity::Unknown(failed.into()),
        }
    }

    /// Whether `user` may make a request described by `attributes`.
    pub(super) async fn authorize(&self, question: &Question) -> Decision {
        let review = || {
            let client = self.client.clone();
            let metrics = self.metrics.clone();
            let (user, attributes) = question.clone();
            async move {
                let verdict = client.review_access(&user, &attributes).await;
                let result = match &verdict {
                    Ok(v) if v.allowed => "allowed",
                    Ok(_) => "denied",
                    Err(_) => "error",
                };
                metrics.review(1, result);
                verdict
            }
        };
        let (allowed, denied) = (self.settings.cache_allowed, self.settings.cache_denied);
        let keep = move |verdict: &AccessVerdict| if verdict.allowed { allowed } else { denied };
        let (answer, source) = self.decisions.get(question, review, keep).await;
        self.count_hit(1, source);
        match answer {
            Ok(verdict) if verdict.allowed => Decision::Allowed,
            Ok(verdict) => Decision::Denied(verdict),
            Err(failed) => Decision::Unknown(failed.into()),
        }
    }

    /// Whether `user` may make the request `attributes` describes, asking
    /// first whether it may read the resource more widely: everywhere
    /// (every namespace, every name), then in the request's namespace
    /// (every name), then exactly. In RBAC a permission over every name or
    /// namespace holds for each of them, so a wider answer that allows is
    /// the narrower one's answer too; and since answers are cached per
    /// question, a client reading many objects of a kind it may read costs
    /// the API server one review per period, not one per object (a
    /// dashboard getting 10,000 Pods by name asks once instead of 10,000
    /// times). A wider question denied or unanswerable falls through to
    /// the next; the exact question's answer is final. Writes and
    /// non-resource requests are asked exactly.
    ///
    /// Returns the decision and the question it answers.
    pub(super) async fn authorize_widely(
        &self,
        user: Arc<UserInfo>,
        attributes: AccessAttributes,
    ) -> (Decision, Question) {
        for wider in wider_questions(&attributes) {
            let question = (user.clone(), wider);
            if let Decision::Allowed = self.authorize(&question).await {
                return (Decision::Allowed, question);
            }
        }
        let question = (user, attributes);
        (self.authorize(&question).await, question)
    }

    /// The metrics to count refusals in.
    pub(super) fn metrics(&self) -> &AccessMetrics {
        &self.metrics
    }

    fn count_hit(&self, review: usize, source: Source) {
        if source != Source::Review {
            self.metrics.hits[review].inc();
        }
    }
}

/// The wider forms of a read, widest first (see
/// [`Delegated::authorize_widely`]): the whole resource at the cluster scope
/// when the request names a namespace or an object, then the whole
/// namespace when it names an object in one.
///
/// Lazy: a wider question is only written when the one before it did not
/// allow, since writing one copies the request's attributes.
fn wider_questions(attributes: &AccessAttributes) -> impl Iterator<Item = AccessAttributes> + '_ {
    let read = match attributes {
        AccessAttributes::Resource(exact)
            if matches!(exact.verb.as_str(), "get" | "list" | "watch") =>
        {
            Some(exact)
        }
        _ => None,
    };
    let everywhere = read.filter(|exact| !exact.namespace.is_empty() || !exact.name.is_empty());
    let namespace = read.filter(|exact| !exact.namespace.is_empty() && !exact.name.is_empty());
    everywhere
        .into_iter()
        .map(|exact| ResourceAttributes {
            namespace: String::new(),
            name: String::new(),
            ..exact.clone()
        })
        .chain(namespace.into_iter().map(|exact| ResourceAttributes {
            name: String::new(),
            ..exact.clone()
        }))
        .map(AccessAttributes::Resource)
}

/// The user with [`AUTHENTICATED`] among its groups, as the API server's
/// delegating authenticator makes it.
fn authenticated(mut user: UserInfo) -> UserInfo {
    if user.username != ANONYMOUS && !user.groups.iter().any(|g| g == AUTHENTICATED) {
        user.groups.push(AUTHENTICATED.to_string());
    }
    user
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(verb: &str, namespace: &str, name: &str) -> AccessAttributes {
        AccessAttributes::Resource(ResourceAttributes {
            verb: verb.into(),
            version: "v1".into(),
            resource: "pods".into(),
            namespace: namespace.into(),
            name: name.into(),
            ..ResourceAttributes::default()
        })
    }

    #[test]
    fn reads_are_asked_widest_first_and_writes_exactly() {
        let wider = |attributes: AccessAttributes| wider_questions(&attributes).collect::<Vec<_>>();
        assert_eq!(
            wider(read("get", "a", "web-1")),
            [read("get", "", ""), read("get", "a", "")]
        );
        assert_eq!(wider(read("list", "a", "")), [read("list", "", "")]);
        assert_eq!(wider(read("get", "", "node-1")), [read("get", "", "")]);
        assert!(wider(read("list", "", "")).is_empty());
        assert!(wider(read("delete", "a", "web-1")).is_empty());
        let metrics = AccessAttributes::NonResource(crate::kube::NonResourceAttributes {
            verb: "get".into(),
            path: "/metrics".into(),
        });
        assert!(wider(metrics).is_empty());
    }

    #[test]
    fn authenticated_users_are_in_system_authenticated_once() {
        let user = |name: &str, groups: &[&str]| UserInfo {
            username: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..UserInfo::default()
        };
        assert_eq!(
            authenticated(user("jane", &["dev"])).groups,
            ["dev", AUTHENTICATED]
        );
        assert_eq!(
            authenticated(user("jane", &[AUTHENTICATED, "dev"])).groups,
            [AUTHENTICATED, "dev"]
        );
        assert_eq!(
            authenticated(user(ANONYMOUS, &["system:unauthenticated"])).groups,
            ["system:unauthenticated"]
        );
    }
}
