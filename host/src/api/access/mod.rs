//! Who may read what: one check in front of every route group, chosen per
//! listener ([`Guard`]), decided from the caller's identity.
//!
//! - `none`: no check; GRW's own credentials decide what anyone reads.
//! - `token`: every caller sends the shared token of `apiTokenFile`.
//! - `delegated`: every caller sends its own Kubernetes bearer token; the
//!   API server says who it is and whether it may make the request, which
//!   is described in Kubernetes' terms ([`routes`]), so the cluster's RBAC
//!   decides for GRW as for the API server. Refusals are the API server's
//!   answers: 401, 403 with its message, and 503 when it cannot say
//!   (never a guess). A handler whose answer reaches beyond what the
//!   request names (an object's relations, into other namespaces) asks
//!   about the rest through [`Permissions`].
//!
//! Each route is registered with its [`Rule`] ([`crate::api::table`]), and
//! checked by it: the check reads the route the router matched, never the
//! path again. In every mode it resolves the kind the request names once,
//! and hands it to the route, so that the resource checked is the resource
//! served. A path no route serves is answered 404 once the caller is
//! known, without a review.
//!
//! `/healthz` and `/readyz` are open in every mode ([`Rule::Open`]): the
//! kubelet probes them.

mod attributes;
mod bearer;
mod cache;
mod delegated;
mod further;
mod kube_api;
mod refusal;
mod routes;
mod token;

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

pub use delegated::Delegated;
pub use further::{Permissions, Unanswered};
pub use routes::OWN_GROUP;
pub(crate) use routes::Rule;
pub use token::{ApiToken, TokenError};

use self::delegated::{Decision, Identity};
use self::routes::{Asked, Described, Target, describe};
use super::AppState;
use super::kinds::REFRESH_ON_MISS;
use super::kubernetes::status::KubeError;
use crate::config::{ApiAuth, Config};
use crate::kube::{AccessAttributes, KubeClient, UserInfo};
use crate::metrics::Metrics;

/// The access check of one listener.
#[derive(Clone)]
pub enum Guard {
    /// `none`.
    Open,
    /// `token`.
    Token(Arc<ApiToken>),
    /// `delegated`.
    Delegated(Arc<Delegated>),
}

/// Who made a request a `delegated` listener let in, in the request's
/// extensions, for a handler that wants to know.
#[derive(Debug, Clone)]
pub struct Caller(pub Arc<UserInfo>);

tokio::task_local! {
    /// What the caller of the request being handled on a `delegated`
    /// listener may read further ([`Permissions::current`]). A task-local
    /// rather than a request extension: the search parameters are read
    /// deep inside the list and watch paths of every route group, which
    /// then need not pass the caller down; the handler runs inside the
    /// scope, and its further checks happen before the answer's body is
    /// sent.
    static FURTHER: Permissions;
}

/// Why the caller may not make a further read its request needs.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum FurtherRefusal {
    /// The API server's answer was no: its words for why.
    #[error("{0}")]
    Forbidden(String),
    /// The API server could not say.
    #[error("GRW cannot check with the API server what the caller may read: {0}; try again later")]
    Unknown(String),
}

/// Whether the caller of the request being handled may `list` `resource`
/// in `namespace` (`None`: every namespace, or a cluster-scoped kind), as
/// the access check decides for the request itself: for a read a request
/// makes beyond the one its path names (an `ownerKind` lookup lists the
/// owner's kind). Always allowed outside a `delegated` listener.
pub(crate) async fn may_list(
    resource: &crate::gvk::ResourceInfo,
    namespace: Option<&str>,
) -> Result<(), FurtherRefusal> {
    match Permissions::current() {
        Some(permissions) => permissions.may_list(resource, namespace).await,
        None => Ok(()),
    }
}

/// Why a listener's access check cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum AccessError {
    /// `apiTokenFile` cannot be read.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// `token` without `apiTokenFile`.
    #[error("a listener is `token` but `apiTokenFile` is not set")]
    NoToken,
    /// `delegated` without an API server.
    #[error("a listener is `delegated` but GRW serves a recording: there is no API server to ask")]
    NoApiServer,
}

/// What the listeners' checks are made of, shared by all of them: the
/// token file, and one set of review caches (a caller of both listeners is
/// reviewed once).
pub struct Access {
    token: Option<Arc<ApiToken>>,
    delegated: Option<Arc<Delegated>>,
}

impl Access {
    /// Reads `apiTokenFile` if set, and makes the review caches if a
    /// listener is `delegated` (which needs `client`).
    pub fn new(
        config: &Config,
        client: Option<&KubeClient>,
        metrics: &Metrics,
    ) -> Result<Access, AccessError> {
        let token = config
            .api_token_file
            .clone()
            .map(ApiToken::load)
            .transpose()?
            .map(Arc::new);
        let delegated = match (config.delegates_access(), client) {
            (false, _) => None,
            (true, Some(client)) => Some(Arc::new(Delegated::new(
                client.clone(),
                config.delegated_auth.clone(),
                metrics.access(),
            ))),
            (true, None) => return Err(AccessError::NoApiServer),
        };
        Ok(Access { token, delegated })
    }

    /// The check of a listener whose mode is `mode`.
    pub fn guard(&self, mode: ApiAuth) -> Result<Guard, AccessError> {
        match mode {
            ApiAuth::None => Ok(Guard::Open),
            ApiAuth::Token => self
                .token
                .clone()
                .map(Guard::Token)
                .ok_or(AccessError::NoToken),
            ApiAuth::Delegated => self
                .delegated
                .clone()
                .map(Guard::Delegated)
                .ok_or(AccessError::NoApiServer),
        }
    }
}

/// What the check of one route needs: the API's state, the listener's
/// guard, and the route's rule.
#[derive(Clone)]
pub(super) struct RouteCheck {
    /// The API's state: discovery, and `kubeApiPathPrefix`.
    pub state: Arc<AppState>,
    /// The listener's check.
    pub guard: Guard,
    /// The rule the route was registered with.
    pub rule: Rule,
}

/// Who the caller is, as far as the listener asks.
enum Admission {
    /// Anyone the listener lets in: `none`, or the shared token.
    Admitted,
    /// The user the API server says the token belongs to (`delegated`).
    User(Arc<Delegated>, Arc<UserInfo>),
}

/// The middleware of every route: lets a request through, or answers it.
/// In every mode, the request's kind is resolved here once ([`Target`])
/// and handed to the route; in `delegated`, the caller is then asked
/// about in Kubernetes' terms ([`describe`]).
pub(super) async fn check(
    State(route): State<RouteCheck>,
    request: Request,
    next: Next,
) -> Response {
    let RouteCheck { state, guard, rule } = route;
    if rule == Rule::Open {
        return next.run(request).await;
    }
    let (mut parts, body) = request.into_parts();
    let caller = match authenticate(&guard, &parts).await {
        Ok(caller) => caller,
        Err(refusal) => return refusal,
    };
    let asked = match Asked::read(rule, &mut parts).await {
        Ok(asked) => asked,
        // In the API's one error shape: axum's own refusal is plain text.
        Err(rejection) => {
            return super::Problem::new(rejection.status(), "InvalidPath", rejection.body_text())
                .into_response();
        }
    };
    let mut request = Request::from_parts(parts, body);
    let target = resolve(&state, rule, &asked).await;
    let attributes = match describe(rule, &asked, &target) {
        Described::Open => return next.run(request).await,
        Described::Check(attributes) => attributes,
        // The answer of the routes themselves to a path they do not serve.
        Described::Unknown if rule == Rule::KubeApi => {
            return KubeError::PageNotFound.into_response();
        }
        Described::Unknown => return super::not_found(request).await.into_response(),
    };
    target.hand_over(request.extensions_mut());
    match caller {
        Admission::Admitted => next.run(request).await,
        Admission::User(delegated, user) => {
            authorize(delegated, user, attributes, request, next).await
        }
    }
}

/// What `asked` names, for a route checked by `rule`. A kind discovery does
/// not know makes it read discovery again first (at most every
/// `REFRESH_ON_MISS`, and only for a caller the listener let in), so that
/// a CRD just installed is checked and served as the resource it is.
async fn resolve(state: &AppState, rule: Rule, asked: &Asked) -> Target {
    let prefix = &state.config.kube_api_path_prefix;
    let target = Target::read(rule, asked, prefix, &state.discovery.catalog());
    if !target.missed() {
        return target;
    }
    let catalog = state.discovery.refresh_if_older(REFRESH_ON_MISS).await;
    Target::read(rule, asked, prefix, &catalog)
}

/// Who makes `request`, or the refusal: 401 without the listener's token,
/// and in `delegated` 429 or 503 when the API server cannot be asked.
async fn authenticate(guard: &Guard, request: &Parts) -> Result<Admission, Response> {
    let delegated = match guard {
        Guard::Open => return Ok(Admission::Admitted),
        Guard::Token(token) if token.admits(&request.headers) => return Ok(Admission::Admitted),
        Guard::Token(_) => return Err(token::refusal()),
        Guard::Delegated(delegated) => delegated,
    };
    let metrics = delegated.metrics();
    let Some(token) = bearer::bearer_token(&request.headers) else {
        metrics.refused(401);
        tracing::info!(
            path = request.uri.path(),
            "request refused: no bearer token"
        );
        return Err(refusal::unauthorized());
    };
    match delegated.authenticate(token).await {
        Identity::Known(user) => Ok(Admission::User(delegated.clone(), user)),
        Identity::Rejected(error) => {
            metrics.refused(401);
            tracing::info!(path = request.uri.path(), reason = %error, "request refused: the API server did not accept the bearer token");
            Err(refusal::unauthorized())
        }
        Identity::Busy(why) => {
            metrics.refused(429);
            Err(refusal::too_many_requests(format!(
                "GRW cannot check the caller's token now: {why}; try again later"
            )))
        }
        Identity::Unknown(why) => {
            let why = crate::error::Report(&why);
            metrics.refused(503);
            tracing::warn!(error = %why, "cannot check a caller's token");
            Err(refusal::unavailable(format!(
                "GRW cannot check the caller's token with the API server: {why}; try again later"
            )))
        }
    }
}

/// Lets `request` through if the API server allows `user` what
/// `attributes` describe, or answers it.
async fn authorize(
    delegated: Arc<Delegated>,
    user: Arc<UserInfo>,
    attributes: AccessAttributes,
    mut request: Request,
    next: Next,
) -> Response {
    let metrics = delegated.metrics();
    let (decision, question) = delegated.authorize_widely(user, attributes).await;
    match decision {
        Decision::Allowed => {
            let permissions = Permissions::new(delegated.clone(), question.0.clone());
            request.extensions_mut().insert(Caller(question.0));
            FURTHER.scope(permissions, next.run(request)).await
        }
        Decision::Denied(verdict) => {
            metrics.refused(403);
            let (user, attributes) = &question;
            log_denial(user, attributes, &verdict.reason, &verdict.evaluation_error);
            refusal::forbidden(user, attributes, &verdict.reason)
        }
        Decision::Busy(why) => {
            metrics.refused(429);
            refusal::too_many_requests(format!(
                "GRW cannot check what the caller may read now: {why}; try again later"
            ))
        }
        Decision::Unknown(why) => {
            let why = crate::error::Report(&why);
            metrics.refused(503);
            tracing::warn!(error = %why, "cannot check what a caller may read");
            refusal::unavailable(format!(
                "GRW cannot check with the API server what the caller may read: {why}; try again later"
            ))
        }
    }
}

fn log_denial(
    user: &UserInfo,
    attributes: &AccessAttributes,
    reason: &str,
    evaluation_error: &str,
) {
    match attributes {
        AccessAttributes::Resource(r) => tracing::info!(
            user = %user.username,
            groups = ?user.groups,
            verb = %r.verb,
            group = %r.group,
            resource = %r.resource,
            subresource = %r.subresource,
            namespace = %r.namespace,
            name = %r.name,
            reason,
            evaluation_error,
            "request refused: not allowed"
        ),
        AccessAttributes::NonResource(n) => tracing::info!(
            user = %user.username,
            groups = ?user.groups,
            verb = %n.verb,
            path = %n.path,
            reason,
            evaluation_error,
            "request refused: not allowed"
        ),
    }
}
