//! Operations: liveness, readiness, metrics, and the process itself.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::AppState;
use super::access::Rule;
use super::table::Routes;

pub(super) fn routes() -> Routes {
    Routes::new()
        .route("/healthz", Rule::Open, get(healthz))
        .route("/readyz", Rule::Open, get(readyz))
        .route("/metrics", Rule::Metrics, get(metrics))
        .route(
            "/api/v1/process",
            Rule::Own {
                resource: "process",
                subresource: "",
            },
            get(process),
        )
}

static STARTED: std::sync::OnceLock<std::time::SystemTime> = std::sync::OnceLock::new();

/// When the process started: noted when the router is built, at start.
pub(super) fn started() -> std::time::SystemTime {
    *STARTED.get_or_init(std::time::SystemTime::now)
}

/// The process: its version, since when it runs, its resident memory, the
/// objects it caches.
async fn process(
    State(state): State<Arc<AppState>>,
    axum::extract::RawQuery(raw): axum::extract::RawQuery,
) -> Result<axum::Json<serde_json::Value>, super::Problem> {
    super::Params::parse(raw.as_deref(), &[])?;
    let started = started();
    let uptime = started.elapsed().unwrap_or_default();
    let watches = state.watches.all();
    let objects: usize = watches.iter().map(|w| w.cache.read().len()).sum();
    Ok(axum::Json(serde_json::json!({
        "version": env!("CARGO_PKG_VERSION"),
        "build": if cfg!(debug_assertions) { "debug" } else { "release" },
        "startedAt": crate::time::rfc3339(started.duration_since(std::time::UNIX_EPOCH).unwrap_or_default()),
        "uptimeSeconds": uptime.as_secs(),
        "residentBytes": resident_bytes(),
        "cachedObjects": objects,
        "watches": watches.len(),
        "replay": state.client.is_none(),
        "kubeApiPathPrefix": state.config.kube_api_path_prefix,
    })))
}

/// Resident memory, from `/proc/self/status` (none elsewhere).
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

/// The process answers.
async fn healthz() -> &'static str {
    "ok"
}

/// Ready once discovery answered and the configured kinds it serves are
/// watched, every watch started at start-up has synced once and every
/// plugin found at start-up has loaded (or failed to).
async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    if !state.discovery.is_loaded() || state.watches.awaiting_discovery() {
        return (StatusCode::SERVICE_UNAVAILABLE, "waiting for discovery").into_response();
    }
    let loading = state.plugins.loading_since_start();
    if !loading.is_empty() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("compiling plugins: {}", loading.join(", ")),
        )
            .into_response();
    }
    let waiting: Vec<String> = state
        .watches
        .all()
        .iter()
        .filter(|w| !w.on_demand() && !w.cache.is_synced())
        .map(|w| w.key.gvk.to_string())
        .collect();
    if waiting.is_empty() {
        "ok".into_response()
    } else {
        (
            StatusCode::SERVICE_UNAVAILABLE,
            format!("syncing: {}", waiting.join(", ")),
        )
            .into_response()
    }
}

/// The metrics, gathered on a blocking thread: the outbox's counts are
/// read from its database (with `dataDir`, a read transaction per
/// subscription), which must not hold up a runtime thread.
async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    let encoded = tokio::task::spawn_blocking(move || {
        state.notifications.update_metrics();
        let kept = crate::cel::decisions::kept();
        state.metrics.queries().match_answers_kept.set(kept as i64);
        for watch in state.watches.all() {
            let ready = watch.status().phase == crate::watch::Phase::Ready;
            state.metrics.watch_ready(
                &watch.key.gvk.to_string(),
                watch.key.options.namespace.as_deref(),
                ready,
            );
        }
        state.metrics.encode()
    })
    .await;
    let Ok(encoded) = encoded else {
        return (
            StatusCode::INTERNAL_SERVER_ERROR,
            "gathering the metrics failed",
        )
            .into_response();
    };
    let mut response = encoded.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/openmetrics-text; version=1.0.0; charset=utf-8"),
    );
    response
}
