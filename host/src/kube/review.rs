//! Asking the API server about GRW's own callers: who a bearer token
//! belongs to (`TokenReview`, authentication.k8s.io/v1) and whether a user
//! may make a request (`SubjectAccessReview`, authorization.k8s.io/v1), the
//! two questions a Kubernetes API server's delegating authenticator and
//! authorizer ask. GRW needs `create` on both resources (`grw rbac` says so
//! when a listener is `delegated`).

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::authentication::v1::{TokenReview, TokenReviewSpec};
use k8s_openapi::api::authorization::v1::{
    self as authorization, SubjectAccessReview, SubjectAccessReviewSpec,
};

use super::client::{ApiError, KubeClient};

/// How long one review may take: the API server's own delegating
/// authenticator and authorizer give theirs 10 s too.
const REVIEW_TIMEOUT: Duration = Duration::from_secs(10);

/// Who a caller is, as the API server knows it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct UserInfo {
    /// `system:serviceaccount:shop:web`, `jane@example.com`...
    pub username: String,
    /// Unique across time; may be empty.
    pub uid: String,
    /// Groups, `system:authenticated` among them.
    pub groups: Vec<String>,
    /// What the authenticator added (e.g. the pod a service account token
    /// was bound to).
    pub extra: BTreeMap<String, Vec<String>>,
}

/// What a request does, in the terms of Kubernetes authorization: on a
/// resource, or on a path that is not one.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AccessAttributes {
    /// A request on a resource (`pods`, `deployments.apps`...).
    Resource(ResourceAttributes),
    /// A request on another path (`/metrics`, `/apis`...).
    NonResource(NonResourceAttributes),
}

/// A request on a resource; an empty string is a value not given.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ResourceAttributes {
    /// `get`, `list`, `watch`, `create`, `delete`...
    pub verb: String,
    /// API group; empty for the core group.
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural resource name.
    pub resource: String,
    /// Subresource (`status`, `log`...).
    pub subresource: String,
    /// Namespace; empty for the cluster scope (or all namespaces).
    pub namespace: String,
    /// Object name; empty for a collection.
    pub name: String,
}

/// A request on a path that is not a resource.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct NonResourceAttributes {
    /// The URL path.
    pub path: String,
    /// The lower-case HTTP method (`get`, `post`...).
    pub verb: String,
}

/// The API server's answer about a token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenVerdict {
    /// The token is valid and belongs to this user.
    Authenticated(UserInfo),
    /// The token is not valid (expired, revoked, unknown...), with the
    /// server's explanation, which may be empty.
    Rejected(String),
}

/// The API server's answer about a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccessVerdict {
    /// The request may be made.
    pub allowed: bool,
    /// Why, when the authorizer says (often empty for a denial); what a
    /// refused caller is told, as by the API server's webhook authorizer.
    pub reason: String,
    /// An error the authorizer met while deciding; for the log.
    pub evaluation_error: String,
}

/// Why a review got no answer. Never a reason to let a request in.
#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    /// The API server answered with an error status: GRW may not create
    /// reviews (403), or the server is in trouble.
    #[error(
        "the API server refused GRW's {review} ({code}): {message}; GRW needs `create` on {resource} (see `grw rbac`)"
    )]
    Refused {
        /// `TokenReview` or `SubjectAccessReview`.
        review: &'static str,
        /// The resource GRW must be allowed to create.
        resource: &'static str,
        /// HTTP status.
        code: u16,
        /// The server's message.
        message: String,
    },
    /// The server could not be reached or did not answer properly.
    #[error("cannot make a {review} with the API server")]
    Unreachable {
        /// `TokenReview` or `SubjectAccessReview`.
        review: &'static str,
        /// Why.
        #[source]
        source: ApiError,
    },
    /// The server did not answer in time.
    #[error("the API server did not answer a {review} within {} s", REVIEW_TIMEOUT.as_secs())]
    Timeout {
        /// `TokenReview` or `SubjectAccessReview`.
        review: &'static str,
    },
    /// The answer had no status.
    #[error("the API server answered a {review} without a status")]
    NoStatus {
        /// `TokenReview` or `SubjectAccessReview`.
        review: &'static str,
    },
}

impl ReviewError {
    fn from_api(review: &'static str, resource: &'static str, e: ApiError) -> ReviewError {
        match e {
            ApiError::Status { code, message, .. } => ReviewError::Refused {
                review,
                resource,
                code,
                message,
            },
            source => ReviewError::Unreachable { review, source },
        }
    }
}

const TOKEN_REVIEW: &str = "TokenReview";
const ACCESS_REVIEW: &str = "SubjectAccessReview";

impl KubeClient {
    /// Asks who `token` belongs to. The token goes to the API server only.
    pub async fn review_token(&self, token: &str) -> Result<TokenVerdict, ReviewError> {
        let review = TokenReview {
            spec: TokenReviewSpec {
                token: token.to_string(),
                audiences: None,
            },
            ..TokenReview::default()
        };
        let api = kube::Api::<TokenReview>::all(self.get());
        let answer = tokio::time::timeout(
            REVIEW_TIMEOUT,
            api.create(&kube::api::PostParams::default(), &review),
        )
        .await
        .map_err(|_| ReviewError::Timeout {
            review: TOKEN_REVIEW,
        })?
        .map_err(|e| {
            ReviewError::from_api(
                TOKEN_REVIEW,
                "tokenreviews.authentication.k8s.io",
                ApiError::from_kube(e),
            )
        })?;
        let status = answer.status.ok_or(ReviewError::NoStatus {
            review: TOKEN_REVIEW,
        })?;
        if status.authenticated != Some(true) {
            return Ok(TokenVerdict::Rejected(status.error.unwrap_or_default()));
        }
        let user = status.user.unwrap_or_default();
        Ok(TokenVerdict::Authenticated(UserInfo {
            username: user.username.unwrap_or_default(),
            uid: user.uid.unwrap_or_default(),
            groups: user.groups.unwrap_or_default(),
            extra: user.extra.unwrap_or_default(),
        }))
    }

    /// Asks whether `user` may make a request described by `attributes`.
    pub async fn review_access(
        &self,
        user: &UserInfo,
        attributes: &AccessAttributes,
    ) -> Result<AccessVerdict, ReviewError> {
        let given = |s: &str| (!s.is_empty()).then(|| s.to_string());
        let (resource_attributes, non_resource_attributes) = match attributes {
            AccessAttributes::Resource(r) => (
                Some(authorization::ResourceAttributes {
                    verb: given(&r.verb),
                    group: given(&r.group),
                    version: given(&r.version),
                    resource: given(&r.resource),
                    subresource: given(&r.subresource),
                    namespace: given(&r.namespace),
                    name: given(&r.name),
                    ..authorization::ResourceAttributes::default()
                }),
                None,
            ),
            AccessAttributes::NonResource(n) => (
                None,
                Some(authorization::NonResourceAttributes {
                    path: given(&n.path),
                    verb: given(&n.verb),
                }),
            ),
        };
        let review = SubjectAccessReview {
            spec: SubjectAccessReviewSpec {
                user: given(&user.username),
                uid: given(&user.uid),
                groups: Some(user.groups.clone()).filter(|g| !g.is_empty()),
                extra: Some(user.extra.clone()).filter(|e| !e.is_empty()),
                resource_attributes,
                non_resource_attributes,
            },
            ..SubjectAccessReview::default()
        };
        let api = kube::Api::<SubjectAccessReview>::all(self.get());
        let answer = tokio::time::timeout(
            REVIEW_TIMEOUT,
            api.create(&kube::api::PostParams::default(), &review),
        )
        .await
        .map_err(|_| ReviewError::Timeout {
            review: ACCESS_REVIEW,
        })?
        .map_err(|e| {
            ReviewError::from_api(
                ACCESS_REVIEW,
                "subjectaccessreviews.authorization.k8s.io",
                ApiError::from_kube(e),
            )
        })?;
        let status = answer.status.ok_or(ReviewError::NoStatus {
            review: ACCESS_REVIEW,
        })?;
        // `denied` only matters between several authorizers: for GRW, the
        // only one, `allowed` false is a denial either way.
        Ok(AccessVerdict {
            allowed: status.allowed,
            reason: status.reason.unwrap_or_default(),
            evaluation_error: status.evaluation_error.unwrap_or_default(),
        })
    }
}
