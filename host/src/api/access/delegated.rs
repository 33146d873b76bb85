//! The `delegated` access mode: the API server says who a caller is
//! (TokenReview) and whether it may make a request (SubjectAccessReview),
//! as it does for an aggregated API server or a kubelet, and the answers
//! are reused for a while ([`crate::config::DelegatedAuth`]).
//!
//! Tokens are kept by their SHA-256 hash, never as written, and never
//! logged. A token the API server rejected is remembered as long as a
//! denial (`cacheDeniedSeconds`), so that a client retrying a bad token in
//! a loop costs the API server one review per period, not one per request.
//!
//! A client sending a new token with each request misses the cache every
//! time, so the reviews asked at once are bounded too ([`Limiter`]): at most
//! `maxConcurrentReviews` in flight, `maxQueuedReviews` waiting for a
//! place, and a request whose review finds neither is answered 429
//! (`TooManyRequests`, with `Retry-After`), as the API server's own
//! priority and fairness answers a client that sends more than its share.

use std::future::Future;
use std::sync::Arc;

use prometheus_client::metrics::gauge::Gauge;
use sha2::{Digest, Sha256};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

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

/// Why a review has no answer.
#[derive(Debug, thiserror::Error)]
pub(super) enum Unanswered {
    /// The API server could not answer.
    #[error(transparent)]
    Review(#[from] ReviewError),
    /// Too many reviews are in flight and waiting.
    #[error(transparent)]
    Busy(#[from] Busy),
}

/// Why a review cannot be asked now: the caller is answered 429.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(super) enum Busy {
    /// Every place in flight and in the queue is taken ([`Limiter`]).
    #[error(
        "{in_flight} reviews are under way with the API server and {queued} more wait (delegatedAuth.maxConcurrentReviews, maxQueuedReviews)"
    )]
    QueueFull {
        /// `maxConcurrentReviews`.
        in_flight: usize,
        /// `maxQueuedReviews`.
        queued: usize,
    },
}

/// Bounds the reviews asked of the API server at once: `in_flight` of them,
/// and `queued` more waiting for a place; no more are admitted.
pub(super) struct Limiter {
    /// Places in flight.
    running: Arc<Semaphore>,
    /// Places in flight or waiting.
    admitted: Arc<Semaphore>,
    in_flight: usize,
    queued: usize,
    /// Reviews in flight and waiting, for `/metrics`.
    gauges: [Gauge; 2],
}

/// A review's admission: its place among the admitted.
pub(super) struct Ticket {
    _admitted: OwnedSemaphorePermit,
    running: Arc<Semaphore>,
    gauges: [Gauge; 2],
}

/// Decrements a gauge when dropped (a review that panics included).
struct Counted(Gauge);

impl Counted {
    fn new(gauge: &Gauge) -> Counted {
        gauge.inc();
        Counted(gauge.clone())
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.dec();
    }
}

impl Limiter {
    /// At most `in_flight` (at least 1) reviews at once, `queued` waiting.
    pub(super) fn new(in_flight: usize, queued: usize, gauges: [Gauge; 2]) -> Limiter {
        let in_flight = in_flight.max(1);
        Limiter {
            running: Arc::new(Semaphore::new(in_flight)),
            admitted: Arc::new(Semaphore::new(in_flight.saturating_add(queued))),
            in_flight,
            queued,
            gauges,
        }
    }

    /// A place for one more review, or why there is none. Taken when the
    /// review is started, so that a refusal is known at once.
    pub(super) fn admit(&self) -> Result<Ticket, Unanswered> {
        match self.admitted.clone().try_acquire_owned() {
            Ok(permit) => Ok(Ticket {
                _admitted: permit,
                running: self.running.clone(),
                gauges: self.gauges.clone(),
            }),
            Err(_) => Err(Busy::QueueFull {
                in_flight: self.in_flight,
                queued: self.queued,
            }
            .into()),
        }
    }
}

impl Ticket {
    /// Runs `review` once a place in flight is free.
    pub(super) async fn run<T>(self, review: impl Future<Output = T>) -> T {
        let waiting = Counted::new(&self.gauges[1]);
        // The semaphore is never closed.
        let _running = self.running.acquire().await;
        drop(waiting);
        let _in_flight = Counted::new(&self.gauges[0]);
        review.await
    }
}

/// The caches of the API server's answers and the client to ask it; one
/// for every listener that is `delegated`.
pub struct Delegated {
    client: KubeClient,
    settings: DelegatedAuth,
    tokens: Arc<ReviewCache<[u8; 32], TokenAnswer, Unanswered>>,
    decisions: Arc<ReviewCache<Question, AccessVerdict, Unanswered>>,
    limiter: Arc<Limiter>,
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
    /// Too many reviews are under way to ask now.
    Busy(Busy),
}

/// Whether the caller may make the request.
pub(super) enum Decision {
    /// Yes.
    Allowed,
    /// No, with the authorizer's reason (often empty).
    Denied(AccessVerdict),
    /// The API server could not say; why.
    Unknown(NoAnswer),
    /// Too many reviews are under way to ask now.
    Busy(Busy),
}

/// Why the API server gave no answer about a caller.
#[derive(Debug, thiserror::Error)]
pub(super) enum NoAnswer {
    /// The review failed; its error says how.
    #[error(transparent)]
    Review(Arc<Unanswered>),
    /// The review's task ended without an answer (it panicked).
    #[error("the review failed unexpectedly; the daemon logged it")]
    Lost,
}

impl From<Failed<Unanswered>> for NoAnswer {
    fn from(failed: Failed<Unanswered>) -> NoAnswer {
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
            limiter: Arc::new(Limiter::new(
                settings.max_concurrent_reviews,
                settings.max_queued_reviews,
                metrics.reviews_at_once.clone(),
            )),
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
            let ticket = self.limiter.admit();
            async move {
                let verdict = ticket?.run(client.review_token(&token)).await;
                let result = match &verdict {
                    Ok(TokenVerdict::Authenticated(_)) => "authenticated",
                    Ok(TokenVerdict::Rejected(_)) => "rejected",
                    Err(_) => "error",
                };
                metrics.review(0, result);
                Ok(token_answer(verdict?))
            }
        };
        let (known, denied) = (self.settings.token_cache, self.settings.cache_denied);
        let keep = move |answer: &TokenAnswer| if answer.is_ok() { known } else { denied };
        let (answer, source) = self.tokens.get(&key, review, keep).await;
        self.count_hit(0, source);
        match answer {
            Ok(Ok(user)) => Identity::Known(user),
            Ok(Err(error)) => Identity::Rejected(error),
            Err(failed) => match busy(&failed) {
                Some(busy) => Identity::Busy(busy),
                None => Identity::Unknown(failed.into()),
            },
        }
    }

    /// Whether `user` may make a request described by `attributes`.
    pub(super) async fn authorize(&self, question: &Question) -> Decision {
        let review = || {
            let client = self.client.clone();
            let metrics = self.metrics.clone();
            let (user, attributes) = question.clone();
            let ticket = self.limiter.admit();
            async move {
                let verdict = ticket?.run(client.review_access(&user, &attributes)).await;
                let result = match &verdict {
                    Ok(v) if v.allowed => "allowed",
                    Ok(_) => "denied",
                    Err(_) => "error",
                };
                metrics.review(1, result);
                Ok(verdict?)
            }
        };
        let (allowed, denied) = (self.settings.cache_allowed, self.settings.cache_denied);
        let keep = move |verdict: &AccessVerdict| if verdict.allowed { allowed } else { denied };
        let (answer, source) = self.decisions.get(question, review, keep).await;
        self.count_hit(1, source);
        match answer {
            Ok(verdict) if verdict.allowed => Decision::Allowed,
            Ok(verdict) => Decision::Denied(verdict),
            Err(failed) => match busy(&failed) {
                Some(busy) => Decision::Busy(busy),
                None => Decision::Unknown(failed.into()),
            },
        }
    }

    /// Whether `user` may make the request `attributes` describes. With
    /// `widen` (the default), asks first whether it may read the resource
    /// more widely: everywhere (every namespace, every name), then in the
    /// request's namespace (every name), then exactly. In RBAC a permission over every name or
    /// namespace holds for each of them, so a wider answer that allows is
    /// the narrower one's answer too; and since answers are cached per
    /// question, a client reading many objects of a kind it may read costs
    /// the API server one review per period, not one per object (a
    /// dashboard getting 10,000 Pods by name asks once instead of 10,000
    /// times). A wider question denied or unanswerable falls through to
    /// the next; the exact question's answer is final. Writes and
    /// non-resource requests are asked exactly.
    ///
    /// Without `widen`, every request is asked exactly: an authorizer other
    /// than RBAC (a webhook) may deny in one namespace what it allows at the
    /// cluster scope, and a wider allow would bypass that denial.
    ///
    /// Returns the decision and the question it answers.
    pub(super) async fn authorize_widely(
        &self,
        user: Arc<UserInfo>,
        attributes: AccessAttributes,
    ) -> (Decision, Question) {
        let widen = self.settings.widen.then_some(&attributes);
        for wider in widen.into_iter().flat_map(wider_questions) {
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

/// Who a token belongs to, as the cache keeps it.
fn token_answer(verdict: TokenVerdict) -> TokenAnswer {
    match verdict {
        TokenVerdict::Authenticated(user) => Ok(Arc::new(authenticated(user))),
        TokenVerdict::Rejected(error) => Err(Arc::from(error)),
    }
}

/// Why a review was not asked, if it was refused for want of a place.
fn busy(failed: &Failed<Unanswered>) -> Option<Busy> {
    match failed {
        Failed::Review(e) => match &**e {
            Unanswered::Busy(busy) => Some(busy.clone()),
            Unanswered::Review(_) => None,
        },
        Failed::Lost => None,
    }
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

    #[tokio::test(start_paused = true)]
    async fn reviews_past_those_in_flight_wait_and_past_the_queue_are_refused() {
        let gauges = [Gauge::default(), Gauge::default()];
        let limiter = Limiter::new(2, 1, gauges.clone());
        let mut releases = Vec::new();
        let mut reviews = Vec::new();
        for i in 0..3 {
            let ticket = limiter.admit().expect("admitted");
            let (release, released) = tokio::sync::oneshot::channel::<()>();
            releases.push(release);
            reviews.push(tokio::spawn(ticket.run(async move {
                let _ = released.await;
                i
            })));
        }
        tokio::task::yield_now().await;
        // Two in flight, the third waiting: a fourth finds no place.
        assert_eq!((gauges[0].get(), gauges[1].get()), (2, 1));
        let Err(busy) = limiter.admit() else {
            panic!("a fourth review was admitted");
        };
        assert_eq!(
            busy.to_string(),
            "2 reviews are under way with the API server and 1 more wait (delegatedAuth.maxConcurrentReviews, maxQueuedReviews)"
        );
        // One answer frees a place: the waiting one goes, and one more may wait.
        releases.remove(0).send(()).unwrap();
        assert_eq!(reviews.remove(0).await.unwrap(), 0);
        tokio::task::yield_now().await;
        assert_eq!((gauges[0].get(), gauges[1].get()), (2, 0));
        let waiting = limiter.admit().expect("a place in the queue again");
        assert!(limiter.admit().is_err());
        drop(waiting);
        for release in releases {
            release.send(()).unwrap();
        }
        for review in reviews {
            review.await.unwrap();
        }
        assert_eq!((gauges[0].get(), gauges[1].get()), (0, 0));
        assert!(limiter.admit().is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn a_refused_review_is_not_kept_and_is_asked_again() {
        let cache: Arc<ReviewCache<u8, bool, Unanswered>> = ReviewCache::new(8, Gauge::default());
        let limiter = Limiter::new(1, 0, [Gauge::default(), Gauge::default()]);
        let held = limiter.admit().unwrap();
        let keep = |_: &bool| std::time::Duration::from_secs(10);
        let ask = || {
            let ticket = limiter.admit();
            async move { ticket?.run(async { Ok::<bool, Unanswered>(true) }).await }
        };
        let (answer, _) = cache.get(&1, ask, keep).await;
        let Err(failed) = answer else {
            panic!("answered while no place was free");
        };
        assert_eq!(
            busy(&failed),
            Some(Busy::QueueFull {
                in_flight: 1,
                queued: 0
            })
        );
        drop(held);
        let ask = || {
            let ticket = limiter.admit();
            async move { ticket?.run(async { Ok::<bool, Unanswered>(true) }).await }
        };
        let (answer, source) = cache.get(&1, ask, keep).await;
        assert!(matches!(answer, Ok(true)));
        assert_eq!(source, Source::Review);
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
