//! From what a request names to a synced cache: resolve the kind through
//! discovery, find the watch that holds it, start one on demand (exactly one,
//! however many requests race), and wait for it to sync.

use std::sync::Arc;

use axum::http::StatusCode;

use super::{AppState, Problem};
use crate::config::WatchOptions;
use crate::gvk::{KindRef, ResourceInfo};
use crate::kube::ResolveError;
use crate::watch::{Denied, Watch};

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
    /// GRW's credentials may not list the kind where the query needs it:
    /// in the whole cluster (`None`) or in a namespace.
    Forbidden(Box<(ResourceInfo, Option<String>, Denied)>),
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
            KindError::Forbidden(forbidden) => {
                let (r, namespace, denied) = *forbidden;
                let group = if r.gvk.group.is_empty() {
                    "core"
                } else {
                    &r.gvk.group
                };
                let (place, grant, instead) = match &namespace {
                    None => (
                        "in the whole cluster".to_string(),
                        "cluster-wide (a ClusterRole and ClusterRoleBinding)".to_string(),
                        if r.namespaced {
                            format!(
                                ", or ask one namespace it may list (/api/v1/namespaces/NAMESPACE/objects/{})",
                                r.plural
                            )
                        } else {
                            String::new()
                        },
                    ),
                    Some(ns) => (
                        format!("in namespace `{ns}`"),
                        format!("in namespace `{ns}` (a Role and RoleBinding there)"),
                        String::new(),
                    ),
                };
                Problem::new(
                    StatusCode::FORBIDDEN,
                    "Forbidden",
                    format!(
                        "GRW may not list `{}` (group {group}) {place}, which this query needs: grant `list` and `watch` on {} {grant} to GRW's service account{instead}; the API server said: {}",
                        r.plural, r.plural, denied.message
                    ),
                )
            }
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
            refuse_unless_on_demand(state, resource)?;
            on_demand(state, resource, namespace).await?
        }
    };
    wait_synced(state, resource, watch).await
}

/// Whether a query may start a watch of `resource`.
fn refuse_unless_on_demand(state: &AppState, resource: &ResourceInfo) -> Result<(), KindError> {
    if !state.config.on_demand_watch {
        return Err(KindError::NotWatched(resource.clone()));
    }
    if resource.gvk.group.is_empty()
        && resource.gvk.kind == "Secret"
        && !state.config.allow_on_demand_secrets
    {
        return Err(KindError::SecretsRefused);
    }
    Ok(())
}

async fn wait_synced(
    state: &AppState,
    resource: &ResourceInfo,
    watch: Arc<Watch>,
) -> Result<Arc<Watch>, KindError> {
    if watch.cache.wait_synced(state.config.sync_timeout).await {
        Ok(watch)
    } else {
        Err(KindError::SyncTimeout(
            resource.clone(),
            state.config.sync_timeout.as_secs(),
        ))
    }
}

/// Starts the on-demand watch a query needs, once the API server is known
/// to allow it, so that a refusal is answered at once rather than after
/// the sync timeout: one of the whole cluster if GRW may list the kind
/// there, else, for a query of one namespace, one of that namespace (a
/// sidecar with a namespaced Role), which later queries of the namespace
/// share.
async fn on_demand(
    state: &AppState,
    resource: &ResourceInfo,
    namespace: Option<&str>,
) -> Result<Arc<Watch>, KindError> {
    let cluster = WatchOptions::default();
    let denied = match state.watches.may_list(resource, &cluster).await {
        Ok(()) => return Ok(state.watches.ensure(resource, cluster, true)),
        Err(denied) => denied,
    };
    let Some(namespace) = namespace.filter(|_| resource.namespaced) else {
        return Err(KindError::Forbidden(Box::new((
            resource.clone(),
            None,
            denied,
        ))));
    };
    let scoped = WatchOptions {
        namespace: Some(namespace.to_string()),
        ..WatchOptions::default()
    };
    match state.watches.may_list(resource, &scoped).await {
        Ok(()) => Ok(state.watches.ensure(resource, scoped, true)),
        Err(denied) => Err(KindError::Forbidden(Box::new((
            resource.clone(),
            Some(namespace.to_string()),
            denied,
        )))),
    }
}

/// The watch scoped to exactly `options` (a query's namespace and
/// selectors, `dedicated=true`), started on demand after the API server is
/// known to allow it, and synced.
pub(super) async fn dedicated_watch(
    state: &AppState,
    resource: &ResourceInfo,
    options: WatchOptions,
) -> Result<Arc<Watch>, KindError> {
    let watch = match state.watches.exact(&resource.gvk, &options) {
        Some(watch) => watch,
        None => {
            refuse_unless_on_demand(state, resource)?;
            if let Err(denied) = state.watches.may_list(resource, &options).await {
                return Err(KindError::Forbidden(Box::new((
                    resource.clone(),
                    options.namespace.clone(),
                    denied,
                ))));
            }
            state.watches.ensure(resource, options, true)
        }
    };
    wait_synced(state, resource, watch).await
}
