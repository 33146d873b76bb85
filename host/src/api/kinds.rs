//! From what a request names to a synced cache: resolve the kind through
//! discovery, find the watch that holds it, start one on demand (exactly one,
//! however many requests race), and wait for it to sync.
//!
//! A native object route's `{kind}` is resolved once, by the access check,
//! which hands the answer to the route ([`RouteKind`]): the resource checked
//! is the resource served, even if discovery changes in between.
//!
//! Every watch a query starts here is caller-made: it is removed after
//! `onDemandIdleSeconds` without a request reading it, and at most
//! `maxOnDemandWatches` exist (see [`crate::watch`]). Each request that
//! gets a watch here records that it read it.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::StatusCode;
use axum::http::request::Parts;

use super::{AppState, Problem};
use crate::config::WatchOptions;
use crate::gvk::{KindRef, NotAKind, ResourceInfo};
use crate::kube::{Catalog, ResolveError};
use crate::watch::{Denied, TooManyWatches, Watch};

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
    /// A new watch is needed and `maxOnDemandWatches` are in use.
    TooManyWatches(TooManyWatches),
    /// A new watch is needed and GRW replays a recording: no API server
    /// would ever fill it.
    Replaying(ResourceInfo),
}

impl From<KindError> for Problem {
    fn from(e: KindError) -> Problem {
        match e {
            KindError::Unresolved(e) => unresolved(&e),
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
            KindError::TooManyWatches(e) => {
                let retry_after = e.retry_after.as_secs();
                Problem::new(
                    StatusCode::TOO_MANY_REQUESTS,
                    "TooManyWatches",
                    e.to_string(),
                )
                .retry_after(retry_after)
            }
            KindError::Replaying(r) => Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "NoApiServer",
                format!(
                    "GRW is replaying a recording and has no API server to fill a new watch of `{}` (for `dedicated=true`, or a namespace or selection the recording's watches do not hold); ask without `dedicated`",
                    r.gvk
                ),
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

/// 404 for a kind discovery does not know, 400 for one several groups have.
fn unresolved(e: &ResolveError) -> Problem {
    match e {
        ResolveError::NotFound { .. } => Problem::not_found(e.to_string()),
        ResolveError::Ambiguous { .. } => Problem::bad_request("AmbiguousKind", e.to_string()),
    }
}

/// A native object route's `{kind}`, as the access check resolved it.
#[derive(Debug, Clone)]
pub(crate) struct RouteKind {
    /// As the path names it, percent-decoded.
    pub named: String,
    /// The resource it names, or why it names none (shared: a request's
    /// extensions are cloned, discovery's errors cannot be).
    pub resolved: Result<ResourceInfo, Arc<Unresolved>>,
}

/// Why a route's `{kind}` names no resource.
#[derive(Debug)]
pub(crate) enum Unresolved {
    /// It is not a kind's name in any form.
    NotAKind(NotAKind),
    /// Discovery does not have it, or several groups do.
    Discovery {
        /// The kind it names.
        wanted: KindRef,
        /// Why discovery does not resolve it.
        error: ResolveError,
    },
}

impl RouteKind {
    /// Resolves `named` in `catalog`.
    pub(crate) fn read(named: &str, catalog: &Catalog) -> RouteKind {
        let resolved = match KindRef::parse(named) {
            Err(error) => Err(Arc::new(Unresolved::NotAKind(error))),
            Ok(wanted) => catalog
                .resolve(&wanted)
                .map_err(|error| Arc::new(Unresolved::Discovery { wanted, error })),
        };
        RouteKind {
            named: named.to_string(),
            resolved,
        }
    }

    /// Whether discovery did not have the kind: it is read again before
    /// the kind is answered 404 ([`REFRESH_ON_MISS`]).
    pub(crate) fn missed(&self) -> bool {
        let why = self.resolved.as_ref().err().map(|why| &**why);
        matches!(
            why,
            Some(Unresolved::Discovery {
                error: ResolveError::NotFound { .. },
                ..
            })
        )
    }

    /// The resource, or the route's answer when there is none: 400 for
    /// what is not a kind or names several, 404 for one discovery lacks.
    pub(crate) fn resource(&self) -> Result<ResourceInfo, Problem> {
        let why = match &self.resolved {
            Ok(resource) => return Ok(resource.clone()),
            Err(why) => &**why,
        };
        Err(match why {
            Unresolved::NotAKind(e) => Problem::bad_request("InvalidKind", e.to_string()),
            Unresolved::Discovery { error, .. } => unresolved(error),
        })
    }
}

impl<S: Send + Sync> FromRequestParts<S> for RouteKind {
    type Rejection = Problem;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<RouteKind, Problem> {
        parts.extensions.remove::<RouteKind>().ok_or_else(|| {
            Problem::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalError",
                "the access check did not resolve the route's kind",
            )
        })
    }
}

/// A kind the catalog does not know makes discovery be read again, at most
/// this often, before the request is answered 404: the kind (a CRD) may have
/// been installed since the last refresh.
pub(super) const REFRESH_ON_MISS: std::time::Duration = std::time::Duration::from_secs(5);

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
/// (`None` = all namespaces): one of the whole cluster, or of that
/// namespace. Without one, starts one on demand if allowed: of the whole
/// cluster, or, if the API server refuses that (a namespaced Role), of the
/// query's namespace, which later queries of the namespace share. A
/// refusal is answered at once (403 naming the permission), not after the
/// sync timeout; the refused watch stays, retrying slowly, so a permission
/// granted later is noticed.
pub(super) async fn synced_watch(
    state: &AppState,
    resource: &ResourceInfo,
    namespace: Option<&str>,
) -> Result<Arc<Watch>, KindError> {
    let cluster = WatchOptions::default();
    let scoped = namespace
        .filter(|_| resource.namespaced)
        .map(|ns| WatchOptions {
            namespace: Some(ns.to_string()),
            ..WatchOptions::default()
        });
    let refused = |w: &Watch| !w.cache.is_synced() && w.denied().is_some();
    let existing = state.watches.exact(&resource.gvk, &cluster);
    if let Some(watch) = existing.as_ref().filter(|w| !refused(w)) {
        return wait_synced(state, resource, watch.clone(), None).await;
    }
    if let Some(watch) = scoped
        .as_ref()
        .and_then(|options| state.watches.exact(&resource.gvk, options))
    {
        return wait_synced(state, resource, watch, namespace).await;
    }
    // The cluster-wide watch was refused (configured or started before).
    let refusal = existing.and_then(|w| w.denied());
    let forbidden = |denied| KindError::Forbidden(Box::new((resource.clone(), None, denied)));
    if let (None, Some(denied)) = (&scoped, &refusal) {
        return Err(forbidden(denied.clone()));
    }
    refuse_unless_on_demand(state, resource)?;
    if refusal.is_none() {
        let watch = state
            .watches
            .ensure_on_demand(resource, cluster)
            .map_err(KindError::TooManyWatches)?;
        match wait_synced(state, resource, watch, None).await {
            Err(KindError::Forbidden(refused)) if scoped.is_some() => drop(refused),
            answer => return answer,
        }
    }
    let Some(options) = scoped else {
        unreachable!("a cluster-wide query returned above");
    };
    let watch = state
        .watches
        .ensure_on_demand(resource, options)
        .map_err(KindError::TooManyWatches)?;
    wait_synced(state, resource, watch, namespace).await
}

/// The watch scoped to exactly `options` (a query's namespace and
/// selectors, `dedicated=true`), started on demand if there is none, and
/// synced.
pub(super) async fn dedicated_watch(
    state: &AppState,
    resource: &ResourceInfo,
    options: WatchOptions,
) -> Result<Arc<Watch>, KindError> {
    let namespace = options.namespace.clone();
    let watch = match state.watches.exact(&resource.gvk, &options) {
        Some(watch) => watch,
        None => {
            refuse_unless_on_demand(state, resource)?;
            state
                .watches
                .ensure_on_demand(resource, options)
                .map_err(KindError::TooManyWatches)?
        }
    };
    wait_synced(state, resource, watch, namespace.as_deref()).await
}

/// Whether a query may start a watch of `resource`.
fn refuse_unless_on_demand(state: &AppState, resource: &ResourceInfo) -> Result<(), KindError> {
    if !state.config.on_demand_watch {
        return Err(KindError::NotWatched(resource.clone()));
    }
    // A replay feeds only the watches of its recording (and GRW's own
    // kinds, filled locally): a new one would never sync, and the query
    // would wait the whole `syncTimeoutSecond` (30 s) for a 504.
    if state.client.is_none() && !crate::gvk::is_grw_kind(&resource.gvk) {
        return Err(KindError::Replaying(resource.clone()));
    }
    if resource.gvk.group.is_empty()
        && resource.gvk.kind == "Secret"
        && !state.config.allow_on_demand_secrets
    {
        return Err(KindError::SecretsRefused);
    }
    Ok(())
}

/// Waits for `watch` (of `namespace`, `None`: the whole cluster) to sync,
/// or to be refused.
async fn wait_synced(
    state: &AppState,
    resource: &ResourceInfo,
    watch: Arc<Watch>,
    namespace: Option<&str>,
) -> Result<Arc<Watch>, KindError> {
    // A request waiting for a watch uses it: a watch syncing for longer
    // than the idle period is not removed under it.
    watch.touch();
    let answer = watch.synced_or_denied(state.config.sync_timeout).await;
    watch.touch();
    match answer {
        Ok(true) => Ok(watch),
        Ok(false) => Err(KindError::SyncTimeout(
            resource.clone(),
            state.config.sync_timeout.as_secs(),
        )),
        Err(denied) => Err(KindError::Forbidden(Box::new((
            resource.clone(),
            namespace.map(str::to_string),
            denied,
        )))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gvk::Gvk;

    #[test]
    fn a_route_kind_answers_as_the_route_did_and_misses_only_an_unknown_kind() {
        let info = |group: &str, kind: &str, plural: &str| ResourceInfo {
            gvk: Gvk::new(group, "v1", kind),
            plural: plural.to_string(),
            namespaced: true,
        };
        let catalog = Catalog::fixed(vec![
            info("", "Pod", "pods"),
            info("example.com", "Widget", "widgets"),
            info("other.example.org", "Widget", "widgets"),
        ]);
        let read = |named: &str| RouteKind::read(named, &catalog);
        let pods = read("pods");
        assert_eq!(
            pods.resource().map(|r| r.gvk),
            Ok(Gvk::new("", "v1", "Pod"))
        );
        assert!(!pods.missed());
        let answer = |named: &str| {
            let kind = read(named);
            let problem = kind.resource().expect_err(named);
            (problem.status.as_u16(), problem.reason, kind.missed())
        };
        // Only a kind discovery does not have is worth reading it again for.
        assert_eq!(answer("gizmos.example.com"), (404, "NotFound", true));
        assert_eq!(answer("Widget"), (400, "AmbiguousKind", false));
        assert_eq!(answer("not a kind"), (400, "InvalidKind", false));
        assert_eq!(
            read("widgets.example.com").resource().map(|r| r.gvk),
            Ok(Gvk::new("example.com", "v1", "Widget"))
        );
    }
}
