//! Plugin status: `GET /api/v1/plugins` (with the last loads, failures and
//! removals of plugin files) and `GET /api/v1/plugins/{name}`.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, RawQuery, State};
use axum::routing::get;
use serde_json::{Value, json};

use super::access::Rule;
use super::table::Routes;
use super::{AppState, Params, Problem};
use crate::plugin::{PluginKind, PluginStatus};

pub(super) fn routes() -> Routes {
    let rule = Rule::Own {
        resource: "plugins",
        subresource: "",
    };
    Routes::new()
        .route("/api/v1/plugins", rule, get(list))
        .route("/api/v1/plugins/{name}", rule, get(one))
}

async fn list(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, Problem> {
    Params::parse(raw.as_deref(), &[])?;
    Ok(Json(json!({
        "enabled": state.plugins.enabled(),
        "witVersion": wit_version(),
        "loadableWitVersions": crate::plugin::LOADABLE
            .iter()
            .map(|c| format!("{}.x", c.as_str()))
            .collect::<Vec<_>>(),
        "items": state
            .plugins
            .statuses()
            .into_iter()
            .map(|s| with_analysis(&state, s))
            .collect::<Vec<_>>(),
        "reloads": state.plugins.reloads(),
    })))
}

async fn one(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, Problem> {
    Params::parse(raw.as_deref(), &[])?;
    match state.plugins.status(&name) {
        Some(status) => Ok(Json(with_analysis(&state, status))),
        None => Err(Problem::not_found(format!(
            "no plugin `{name}` in the plugin directory"
        ))),
    }
}

/// A plugin's status; an analyzer's with what the relationship index
/// holds of it (`analysis`: objects, edges, stale objects, calls,
/// failures, last analysis time).
fn with_analysis(state: &AppState, status: PluginStatus) -> Value {
    let analyzer = status.kind == Some(PluginKind::Analyzer);
    let mut body = json!(status);
    if analyzer {
        body["analysis"] = json!(state.relations.counts(&status.name).unwrap_or_default());
    }
    body
}

fn wit_version() -> String {
    let (major, minor, patch) = crate::plugin::WIT_VERSION;
    format!("{major}.{minor}.{patch}")
}
