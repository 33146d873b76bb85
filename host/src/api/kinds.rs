//! From what a request names to a synced cache: resolve the kind through
//! discovery, find the watch that holds it, start one on demand (exactly one,
//! however many requests race), and wait for it to sync.

use std::sync::Arc;

use axum::http::StatusCode;

use super::{AppState, Problem};
use crate::config::WatchOptions;
use crate::gvk::{KindRef, ResourceInfo};
use crate::kube::ResolveError;
use crate::watch::Watch;

/// Why a kind cannot be answered.
#[derive(Debug)]
pub(super) enum KindError {
    /// Discovery does not know it (or several groups have it).
    Unresolved(ResolveError),
    /// Not watched, and on-demand watches are off.
    NotWatched(ResourceInfo),
    /// On-demand watches of Secrets are refused unless allowed.
    SecretsRefused,
    /// The watch did not sync in time.
    SyncTimeout(ResourceInfo, u64),
}

impl From<KindError> for Problem {
    fn from(e: KindError) -> Problem {
        match e {
            KindError::Unresolved(e @ ResolveError::NotFound { .. }) => {
                Problem::not_found(e.to_string())
            }
            KindError::Unresolved(e @ ResolveError::Ambiguous { .. }) => {
                Problem::bad_request("AmbiguousKind", e.to_string())
            }
            KindError::NotWatched(r) => Problem::new(
                StatusCode::NOT_FOUND,
                "NotWatched",
                format!(
                    "kind `{}` is not watched and on-demand watches are off (onDemandWatch); add it to initialWatchingResources",
                    r.gvk
                ),
            ),
            KindError::SecretsRefused => Problem::new(
                StatusCode::FORBIDDEN,
                "SecretsRefused",
                "a query cannot start a watch of Secrets (it would copy every Secret of the cluster into memory); watch them from the configuration, or set allowOnDemandSecrets",
            ),
            KindError::SyncTimeout(r, seconds) => Problem::new(
                StatusCode::GATEWAY_TIMEOUT,
                "SyncTimeout",
                format!(
                    "the cache of `{}` did not sync within {seconds} s; its state is at /api/v1/kinds, try again later",
                    r.gvk
                ),
            ),
        }
    }
}

/// A kind the catalog does not know makes discovery be read again, at most
/// this often, before the request is answered 404: the kind (a CRD) may have
/// been installed since the last refresh.
const REFRESH_ON_MISS: std::time::Duration = std::time::Duration::from_secs(5);

/// Resolves a kind through discovery; one not found is looked up again in a
/// fresh catalog (see [`REFRESH_ON_MISS`]).
pub(super) async fn resolve(state: &AppState, kind: &KindRef) -> Result<ResourceInfo, KindError> {
    match state.discovery.catalog().resolve(kind) {
        Err(ResolveError::NotFound { .. }) => state
            .discovery
            .refresh_if_older(REFRESH_ON_MISS)
            .await
            .resolve(kind)
            .map_err(KindError::Unresolved),
        result => result.map_err(KindError::Unresolved),
    }
}

/// The synced watch holding `resource` objects for a query in `namespace`
/// (`None` = all namespaces). Starts an on-demand watch if allowed.
pub(super) async fn synced_watch(
    state: &AppState,
    resource: &ResourceInfo,
    namespace: Option<&str>,
) -> Result<Arc<Watch>, KindError> {
    let watch = match state.watches.serving(&resource.gvk, namespace) {
        Some(watch) => watch,
        None => {
            if !state.config.on_demand_watch {
                return Err(KindError::NotWatched(resource.clone()));
            }
            if resource.gvk.group.is_empty()
                && resource.gvk.kind == "Secret"
                && !state.config.allow_on_demand_secrets
            {
                return Err(KindError::SecretsRefused);
            }
            state
                .watches
                .ensure(resource, WatchOptions::default(), true)
        }
    };
    if watch.cache.wait_synced(state.config.sync_timeout).await {
        Ok(watch)
    } else {
        Err(KindError::SyncTimeout(
            resource.clone(),
            state.config.sync_timeout.as_secs(),
        ))
    }
}
