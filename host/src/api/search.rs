//! The search parameters of a list: `nameContains`, `ownerUid` or
//! `ownerKind` with `ownerName`, with `ownerDepth`, and `match` (a CEL
//! expression of `object`, compiled once per text, see [`crate::cel`]).
//! Read once into a [`Search`], then turned into conditions of a [`Query`] by
//! [`Search::apply`]; the native lists and the Kubernetes routes' lists
//! and watches take them.
//!
//! An owner named by kind and name is looked up where the API server lets
//! an owner be: a namespaced object's owner is in its namespace or
//! cluster-scoped, a cluster-scoped object's owner is cluster-scoped
//! (ownerReferences cannot cross namespaces). So a cluster-scoped owner
//! (a Node, a cluster-scoped custom resource) is found from any query; a
//! namespaced one is looked up in the query's namespace, or, for a query
//! of all namespaces, in each namespace, so that `ownerKind=Deployment`
//! with `ownerName=web` selects the objects of every namespace's `web`. An
//! owner not in the cache owns nothing: the answer is an empty list.
//!
//! The lookup reads the owner's kind, which the request's path does not
//! name: on a `delegated` listener the caller must be allowed to `list`
//! that kind where it is looked up (the query's namespace, or the whole
//! cluster for a query of all namespaces or a cluster-scoped owner), as if
//! it listed it itself; otherwise 403, before any watch of it is started.

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::http::StatusCode;

use super::access::FurtherRefusal;
use super::kinds::{KindError, resolve, synced_watch};
use super::{AppState, Problem};
use crate::cel::{Condition, Scope, compile_cached};
use crate::gvk::{KindRef, ResourceInfo};
use crate::query::{MAX_DESCENDANTS, NameContains, Query, descendants};
use crate::store::ObjectKey;

/// What a list request searches for, checked.
#[derive(Debug, Default)]
pub(crate) struct Search {
    name_contains: Option<NameContains>,
    condition: Option<Arc<Condition>>,
    owner: Option<Owner>,
    depth: OwnerDepth,
}

#[derive(Debug)]
enum Owner {
    Uid(String),
    Named { kind: KindRef, name: String },
}

/// How far below the owner selected objects may be.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum OwnerDepth {
    /// `1`: an ownerReference names the owner.
    #[default]
    Direct,
    /// `all`: the owner, or an object it owns at any depth, is named.
    All,
}

/// Why the search parameters cannot be answered.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SearchError {
    /// A value, or a combination of parameters, is wrong.
    #[error("query parameter `{parameter}`: {message}")]
    Invalid {
        /// The parameter at fault.
        parameter: &'static str,
        /// What was wrong, and what to do.
        message: String,
    },
    /// The owner's kind has no cache that can answer: unknown, not
    /// watched, forbidden, not synced in time.
    #[error("query parameter `ownerKind`: {}", .0.message)]
    OwnerKind(Problem),
    /// The owner has more descendants than a walk collects.
    #[error(
        "query parameter `ownerDepth`: the owner has more than {MAX_DESCENDANTS} descendants; ask for one level below it at a time (`ownerDepth=1`)"
    )]
    TooManyDescendants,
}

impl From<SearchError> for Problem {
    /// 400 `InvalidParameter` for a wrong request; for an owner kind that
    /// cannot be read, the status of that kind's own error (404 unknown,
    /// 403 forbidden, 504 not synced...) with its reason.
    fn from(e: SearchError) -> Problem {
        let message = e.to_string();
        match e {
            SearchError::Invalid { .. } => Problem::bad_request("InvalidParameter", message),
            SearchError::OwnerKind(problem) => Problem { message, ..problem },
            SearchError::TooManyDescendants => Problem::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "TooManyDescendants",
                message,
            ),
        }
    }
}

fn invalid(parameter: &'static str, message: impl Into<String>) -> SearchError {
    SearchError::Invalid {
        parameter,
        message: message.into(),
    }
}

impl Search {
    /// Reads the parameters through `get` (a parameter's value, if given),
    /// whatever the route's own rules for other parameters are.
    pub(crate) fn parse<'a>(get: impl Fn(&str) -> Option<&'a str>) -> Result<Search, SearchError> {
        let non_empty = |parameter: &'static str| match get(parameter) {
            Some("") => Err(invalid(parameter, "must not be empty")),
            value => Ok(value),
        };
        let name_contains = non_empty("nameContains")?
            .map(NameContains::parse)
            .transpose()
            .map_err(|e| invalid("nameContains", e.to_string()))?;
        let condition = non_empty("match")?
            .map(|text| compile_cached(text, Scope::Object))
            .transpose()
            .map_err(|e| invalid("match", e.to_string()))?;
        let owner = match (
            non_empty("ownerUid")?,
            non_empty("ownerKind")?,
            non_empty("ownerName")?,
        ) {
            (None, None, None) => None,
            (Some(uid), None, None) => Some(Owner::Uid(uid.to_string())),
            (None, Some(kind), Some(name)) => Some(Owner::Named {
                kind: KindRef::parse(kind).map_err(|e| invalid("ownerKind", e.to_string()))?,
                name: name.to_string(),
            }),
            (Some(_), _, _) => {
                return Err(invalid(
                    "ownerUid",
                    "name the owner by `ownerUid` or by `ownerKind` and `ownerName`, not both",
                ));
            }
            (None, Some(_), None) => {
                return Err(invalid("ownerName", "`ownerKind` needs `ownerName`"));
            }
            (None, None, Some(_)) => {
                return Err(invalid(
                    "ownerKind",
                    "`ownerName` needs `ownerKind` (e.g. `ownerKind=Deployment`)",
                ));
            }
        };
        let depth = match non_empty("ownerDepth")? {
            None | Some("1") => OwnerDepth::Direct,
            Some("all") => OwnerDepth::All,
            Some(other) => {
                return Err(invalid(
                    "ownerDepth",
                    format!(
                        "must be `1` (an ownerReference names the owner, the default) or `all` (the owner or anything under it does), got `{other}`"
                    ),
                ));
            }
        };
        if owner.is_none() && get("ownerDepth").is_some() {
            return Err(invalid(
                "ownerDepth",
                "needs an owner: `ownerUid`, or `ownerKind` and `ownerName`",
            ));
        }
        Ok(Search {
            name_contains,
            condition,
            owner,
            depth,
        })
    }

    /// Refuses what an event stream cannot follow: `ownerDepth=all` finds
    /// the owner's descendants once, when read, and a stream would miss
    /// those created later.
    pub(crate) fn check_streamable(&self) -> Result<(), SearchError> {
        if self.depth == OwnerDepth::All {
            return Err(invalid(
                "ownerDepth",
                "`all` cannot be combined with `watch`: the descendants are found when a list is read, and a stream would miss later ones; list again instead, or watch with `ownerDepth=1`",
            ));
        }
        Ok(())
    }

    /// Sets the query's conditions for a list of `resource` in `namespace`
    /// (`None`: all namespaces): the name text, and the owner, looked up
    /// (starting a watch of its kind if needed and allowed) and, for
    /// `ownerDepth=all`, followed down through every cache.
    pub(crate) async fn apply(
        &self,
        state: &AppState,
        resource: &ResourceInfo,
        namespace: Option<&str>,
        query: &mut Query,
    ) -> Result<(), SearchError> {
        query.name_contains = self.name_contains.clone();
        query.condition = self.condition.clone();
        let owners: BTreeSet<String> = match &self.owner {
            None => return Ok(()),
            Some(Owner::Uid(uid)) if self.depth == OwnerDepth::Direct => {
                query.owner_uid = Some(uid.clone());
                return Ok(());
            }
            Some(Owner::Uid(uid)) => BTreeSet::from([uid.clone()]),
            Some(Owner::Named { kind, name }) => {
                owner_uids(state, resource, namespace, kind, name).await?
            }
        };
        let owners = match self.depth {
            OwnerDepth::Direct => owners,
            OwnerDepth::All => {
                let watches = state.watches.all();
                descendants(watches.iter().map(|w| &*w.cache), owners)
                    .ok_or(SearchError::TooManyDescendants)?
            }
        };
        query.owner_uid_in = Some(Arc::new(owners));
        Ok(())
    }
}

/// The uids of the objects of `kind` named `name` that may own objects of
/// `resource` in `namespace` (see the module's comment).
async fn owner_uids(
    state: &AppState,
    resource: &ResourceInfo,
    namespace: Option<&str>,
    kind: &KindRef,
    name: &str,
) -> Result<BTreeSet<String>, SearchError> {
    let owner_kind = |e: KindError| SearchError::OwnerKind(Problem::from(e));
    let owner = resolve(state, kind).await.map_err(owner_kind)?;
    if owner.namespaced && !resource.namespaced {
        return Err(invalid(
            "ownerKind",
            format!(
                "`{}` is namespaced and `{}` is cluster-scoped: a cluster-scoped object's owners are cluster-scoped",
                owner.gvk, resource.gvk
            ),
        ));
    }
    let namespace = namespace.filter(|_| owner.namespaced);
    super::access::may_list(&owner, namespace)
        .await
        .map_err(|refusal| {
            let status = match refusal {
                FurtherRefusal::Forbidden(_) => StatusCode::FORBIDDEN,
                FurtherRefusal::Unknown(_) => StatusCode::SERVICE_UNAVAILABLE,
            };
            let reason = if status == StatusCode::FORBIDDEN {
                "Forbidden"
            } else {
                "ServiceUnavailable"
            };
            SearchError::OwnerKind(Problem::new(
                status,
                reason,
                format!(
                    "looking the owner up lists `{}`, which the caller may not: {refusal}",
                    owner.plural
                ),
            ))
        })?;
    let watch = synced_watch(state, &owner, namespace)
        .await
        .map_err(owner_kind)?;
    let view = watch.cache.read();
    let uid = |ns: &str| {
        view.get(&ObjectKey::new(ns, name))
            .map(|o| o.uid().to_string())
            .filter(|uid| !uid.is_empty())
    };
    Ok(match (owner.namespaced, namespace) {
        (false, _) => uid("").into_iter().collect(),
        (true, Some(ns)) => uid(ns).into_iter().collect(),
        (true, None) => view.namespaces().filter_map(uid).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(pairs: &[(&str, &str)]) -> Result<Search, String> {
        Search::parse(|name| pairs.iter().find(|(n, _)| *n == name).map(|(_, v)| *v))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn reads_each_way_of_naming_an_owner() {
        let search = parse(&[("nameContains", "Web"), ("ownerUid", "u1")]).unwrap();
        assert_eq!(search.name_contains.unwrap().folded(), "web");
        assert!(matches!(search.owner, Some(Owner::Uid(ref u)) if u == "u1"));
        assert_eq!(search.depth, OwnerDepth::Direct);
        let search = parse(&[
            ("ownerKind", "deployments.apps"),
            ("ownerName", "web"),
            ("ownerDepth", "all"),
        ])
        .unwrap();
        assert!(matches!(search.owner, Some(Owner::Named { ref name, .. }) if name == "web"));
        assert_eq!(search.depth, OwnerDepth::All);
        assert!(search.check_streamable().is_err());
        let none = parse(&[("limit", "3")]).unwrap();
        assert!(none.name_contains.is_none() && none.owner.is_none());
        assert!(none.check_streamable().is_ok());
    }

    #[test]
    fn refuses_incomplete_or_conflicting_owners() {
        for (pairs, message) in [
            (
                &[("ownerKind", "Deployment")][..],
                "query parameter `ownerName`: `ownerKind` needs `ownerName`",
            ),
            (
                &[("ownerUid", "u"), ("ownerName", "web")][..],
                "query parameter `ownerUid`: name the owner by `ownerUid` or by `ownerKind` and `ownerName`, not both",
            ),
            (
                &[("ownerDepth", "1")][..],
                "query parameter `ownerDepth`: needs an owner: `ownerUid`, or `ownerKind` and `ownerName`",
            ),
            (
                &[("nameContains", "")][..],
                "query parameter `nameContains`: must not be empty",
            ),
        ] {
            assert_eq!(parse(pairs).unwrap_err(), message);
        }
    }
}
