//! The route table: every route once, with the access rule its requests
//! are checked by ([`Rule`]). The router is built from it
//! ([`super::router`]), so that the check reads the rule of the route that
//! matched, and no second reading of the path can disagree with the
//! router's.

use std::sync::Arc;

use axum::routing::MethodRouter;

use super::AppState;
use super::access::Rule;

/// One route: its path (in the router's syntax), its rule, its handlers.
pub(super) struct Route {
    /// The path, e.g. `/api/v1/objects/{kind}`.
    pub path: String,
    /// What a request to it needs.
    pub rule: Rule,
    /// Its handlers, by method.
    pub methods: MethodRouter<Arc<AppState>>,
}

/// The routes of a group, or of the whole API.
#[derive(Default)]
pub(super) struct Routes(Vec<Route>);

impl Routes {
    /// No routes.
    pub(super) fn new() -> Routes {
        Routes::default()
    }

    /// Adds the route `path`, checked by `rule`, served by `methods`.
    pub(super) fn route(
        mut self,
        path: &str,
        rule: Rule,
        methods: MethodRouter<Arc<AppState>>,
    ) -> Routes {
        self.0.push(Route {
            path: path.to_string(),
            rule,
            methods,
        });
        self
    }

    /// Adds the routes of `other`.
    pub(super) fn merge(mut self, other: Routes) -> Routes {
        self.0.extend(other.0);
        self
    }
}

impl IntoIterator for Routes {
    type Item = Route;
    type IntoIter = std::vec::IntoIter<Route>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

/// Every route of the API; `kube_prefix` is `kubeApiPathPrefix`.
pub(super) fn all(kube_prefix: &str) -> Routes {
    Routes::new()
        .merge(super::native::routes())
        .merge(super::kubernetes::routes(kube_prefix))
        .merge(super::compat::routes())
        .merge(super::ops::routes())
        .merge(super::plugins::routes())
        .merge(super::relations::routes())
        .merge(super::journal::routes())
        .merge(super::subscriptions::routes())
        .merge(super::console::routes())
        .merge(super::openapi::routes())
}
