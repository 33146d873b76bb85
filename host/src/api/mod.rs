//! The HTTP API: the native JSON API (`/api/v1/...`), the Kubernetes API
//! (under `kubeApiPathPrefix`), the compatibility routes of the earlier GRW,
//! operations (`/healthz`, `/readyz`, `/metrics`), and the web console
//! (`/ui/`), and the OpenAPI document of all but the Kubernetes API and
//! the console ([`openapi`]). One file (or folder)
//! per route group, each registering its routes in one table ([`table`])
//! with the access rule they are checked by, and [`access`], the check in
//! front of every route.

pub mod access;
mod compat;
mod console;
mod journal;
mod kinds;
mod kubernetes;
mod list_body;
mod native;
mod openapi;
mod ops;
mod params;
mod plugins;
mod problem;
mod relations;
mod search;
mod stream;
mod subscriptions;
mod table;
pub mod tls;

use std::sync::Arc;
use std::time::Instant;

use axum::Router;
use axum::extract::{MatchedPath, Request, State};
use axum::handler::Handler;
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};

pub use access::{Access, AccessError, ApiToken, Delegated, Guard, TokenError};
pub use params::Params;
pub use problem::Problem;

use crate::config::Config;
use crate::kube::{Discovery, KubeClient};
use crate::metrics::Metrics;
use crate::notify::Notifications;
use crate::plugin::Plugins;
use crate::query::QueryPool;
use crate::relations::Relations;
use crate::watch::Watches;

/// What every handler can reach.
pub struct AppState {
    /// Resolved configuration.
    pub config: Arc<Config>,
    /// Kinds the server (or the recording) has.
    pub discovery: Arc<Discovery>,
    /// Every watch and its cache.
    pub watches: Arc<Watches>,
    /// Process metrics.
    pub metrics: Arc<Metrics>,
    /// The API server, or `None` when serving a replay.
    pub client: Option<KubeClient>,
    /// Plugins of the plugin directory.
    pub plugins: Arc<Plugins>,
    /// Subscriptions and their deliveries.
    pub notifications: Arc<Notifications>,
    /// The relationship index.
    pub relations: Arc<Relations>,
    /// The threads that run the costly part of queries.
    pub queries: Arc<QueryPool>,
    /// The journal of changes; `None` when `journal.enabled` is false.
    pub journal: Option<Arc<crate::journal::Journal>>,
}

/// The whole HTTP API, behind `guard`: the one router of every listener,
/// each with its own check.
pub fn router(state: Arc<AppState>, guard: Guard) -> Router {
    ops::started();
    let max_body = state.config.max_request_body_bytes;
    let check = |rule| {
        let route = access::RouteCheck {
            state: state.clone(),
            guard: guard.clone(),
            rule,
        };
        middleware::from_fn_with_state(route, access::check)
    };
    let mut router = Router::new();
    for route in table::all(&state.config.kube_api_path_prefix) {
        // The check wraps a route's answer to a method it does not serve
        // too: the request is checked with its verb, then answered 405, as
        // the API server answers 403 before 405. (A route serving every
        // method, the Kubernetes API's, keeps its own answer.)
        let one = Router::new()
            .route(&route.path, route.methods)
            .method_not_allowed_fallback(method_not_allowed)
            .layer(check(route.rule));
        router = router.merge(one);
    }
    router
        .fallback(not_found.layer(check(access::Rule::NotFound)))
        .layer(axum::extract::DefaultBodyLimit::max(max_body))
        .layer(middleware::from_fn_with_state(
            state.clone(),
            record_metrics,
        ))
        .layer(tower_http::catch_panic::CatchPanicLayer::custom(|_| {
            Problem::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalError",
                "internal error; the daemon logged it",
            )
            .into_response()
        }))
        .with_state(state)
}

async fn not_found(request: Request) -> Problem {
    Problem::not_found(format!(
        "no route `{}`; the API is described in docs/native-api.md",
        request.uri().path()
    ))
}

async fn method_not_allowed(request: Request) -> Problem {
    Problem::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "MethodNotAllowed",
        format!(
            "method {} is not allowed on `{}`",
            request.method(),
            request.uri().path()
        ),
    )
}

async fn record_metrics(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let started = Instant::now();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_string(), |p| p.as_str().to_string());
    let response = next.run(request).await;
    state.metrics.request(
        &route,
        response.status().as_u16(),
        started.elapsed().as_secs_f64(),
    );
    response
}
