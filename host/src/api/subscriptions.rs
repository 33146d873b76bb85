//! Subscriptions: `/api/v1/subscriptions`.
//!
//! - `GET /api/v1/subscriptions`: every subscription with its queue figures;
//! - `POST /api/v1/subscriptions`: create one (body: a subscription, see docs/notifications.md); 201;
//! - `GET /api/v1/subscriptions/{name}`: one;
//! - `DELETE /api/v1/subscriptions/{name}`: delete one created through the API, with its queue;
//! - `GET /api/v1/subscriptions/{name}/dead-letters`: deliveries the receiver refused;
//! - `POST /api/v1/subscriptions/{name}/dead-letters/replay[?seq=N]`: queue them again;
//! - `DELETE /api/v1/subscriptions/{name}/dead-letters[?seq=N]`: drop them.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::access::Rule;
use super::table::Routes;
use super::{AppState, Params, Problem};
use crate::config::{InvalidKey, SubscriptionConfig, SubscriptionName};
use crate::notify::{DeadLetter, Delivery, Notifications, SubscriptionError};

pub(super) fn routes() -> Routes {
    let subscription = Rule::Own {
        resource: "subscriptions",
        subresource: "",
    };
    let its_dead_letters = Rule::Own {
        resource: "subscriptions",
        subresource: "dead-letters",
    };
    Routes::new()
        .route(
            "/api/v1/subscriptions",
            subscription,
            get(list).post(create),
        )
        .route(
            "/api/v1/subscriptions/{name}",
            subscription,
            get(one).delete(delete),
        )
        .route(
            "/api/v1/subscriptions/{name}/dead-letters",
            its_dead_letters,
            get(dead_letters).delete(drop_dead),
        )
        .route(
            "/api/v1/subscriptions/{name}/dead-letters/replay",
            its_dead_letters,
            post(replay_dead),
        )
}

impl From<SubscriptionError> for Problem {
    fn from(e: SubscriptionError) -> Self {
        let message = crate::error::Report(&e).to_string();
        match e {
            SubscriptionError::Plugin(_) | SubscriptionError::Kind { .. } => {
                Problem::bad_request("InvalidSubscription", message)
            }
            SubscriptionError::Exists(_) => {
                Problem::new(StatusCode::CONFLICT, "AlreadyExists", message)
            }
            SubscriptionError::NotFound(_) => Problem::not_found(message),
            SubscriptionError::FromConfig(_) => {
                Problem::new(StatusCode::CONFLICT, "DefinedInConfig", message)
            }
            SubscriptionError::Replicated => {
                Problem::new(StatusCode::CONFLICT, "Replicated", message)
            }
            SubscriptionError::Store(_) => Problem::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "OutboxUnavailable",
                message,
            ),
        }
    }
}

async fn list(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, Problem> {
    Params::parse(raw.as_deref(), &[])?;
    Ok(Json(json!({
        "persistent": state.notifications.is_persistent(),
        "items": state.notifications.statuses(),
    })))
}

async fn create(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
    body: Result<Bytes, BytesRejection>,
) -> Result<(StatusCode, Json<Value>), Problem> {
    Params::parse(raw.as_deref(), &[])?;
    let body = body.map_err(|e| {
        Problem::new(
            e.status(),
            "InvalidBody",
            format!("request body cannot be read: {}", e.body_text()),
        )
    })?;
    let value: Value = serde_json::from_slice(&body).map_err(|e| {
        Problem::bad_request(
            "InvalidBody",
            format!("request body is not valid JSON: {e}"),
        )
    })?;
    let definition = SubscriptionConfig::from_json(&value)
        .map_err(|e| Problem::bad_request("InvalidSubscription", invalid_body(&value, &e)))?;
    // A file named by a caller would be read with GRW's rights and sent to a
    // broker the caller chose: the service account's token, for one. Only
    // the config file, written by whoever deploys GRW, names files.
    if let Some(member) = definition.file_members().first() {
        return Err(Problem::bad_request(
            "InvalidSubscription",
            format!(
                "subscription `{}`: `{member}`: a subscription created through the API cannot name a file on GRW's disk (GRW would read it and send it to the destination); define this subscription in the config file's `subscriptions`",
                definition.name
            ),
        ));
    }
    let notifications = state.notifications.clone();
    // Creating may read the outbox and start a watch: off the async threads.
    let status = tokio::task::spawn_blocking(move || notifications.create(&definition))
        .await
        .map_err(|_| {
            Problem::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalError",
                "internal error; the daemon logged it",
            )
        })??;
    Ok((StatusCode::CREATED, Json(json!(status))))
}

/// Why a body is not a subscription: ``subscription `NAME`: `MEMBER`: ...``
/// when the body names the subscription, ``request body: `MEMBER`: ...``
/// otherwise.
fn invalid_body(body: &Value, error: &InvalidKey) -> String {
    match body["name"].as_str().map(SubscriptionName::parse) {
        Some(Ok(name)) => format!("subscription `{name}`: {error}"),
        _ => format!("request body: {error}"),
    }
}

async fn one(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, Problem> {
    Params::parse(raw.as_deref(), &[])?;
    state
        .notifications
        .status(&name)
        .map(|s| Json(json!(s)))
        .ok_or_else(|| SubscriptionError::NotFound(name).into())
}

async fn delete(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, Problem> {
    Params::parse(raw.as_deref(), &[])?;
    let deleted = name.clone();
    let dropped = blocking(&state, move |n| n.delete(&deleted)).await?;
    Ok(Json(json!({"deleted": name, "droppedDeliveries": dropped})))
}

async fn dead_letters(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, Problem> {
    Params::parse(raw.as_deref(), &[])?;
    let letters = blocking(&state, move |n| n.dead_letters(&name)).await?;
    let items: Vec<Value> = letters
        .iter()
        .map(|(letter, delivery)| dead_letter_json(letter, delivery))
        .collect();
    Ok(Json(json!({"items": items})))
}

async fn replay_dead(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, Problem> {
    let seq = seq_param(raw.as_deref())?;
    let count = blocking(&state, move |n| n.replay_dead(&name, seq)).await?;
    Ok(Json(json!({"replayed": count})))
}

async fn drop_dead(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    RawQuery(raw): RawQuery,
) -> Result<Json<Value>, Problem> {
    let seq = seq_param(raw.as_deref())?;
    let count = blocking(&state, move |n| n.drop_dead(&name, seq)).await?;
    Ok(Json(json!({"dropped": count})))
}

/// Runs an engine call that reads or writes the outbox (and may take a
/// while with a large queue) off the async threads.
async fn blocking<T: Send + 'static>(
    state: &AppState,
    f: impl FnOnce(&Notifications) -> Result<T, SubscriptionError> + Send + 'static,
) -> Result<T, Problem> {
    let notifications = state.notifications.clone();
    match tokio::task::spawn_blocking(move || f(&notifications)).await {
        Ok(result) => result.map_err(Problem::from),
        Err(e) => {
            tracing::error!(error = %e, "subscription request failed");
            Err(Problem::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalError",
                "internal error; the daemon logged it",
            ))
        }
    }
}

fn seq_param(raw: Option<&str>) -> Result<Option<u64>, Problem> {
    let params = Params::parse(raw, &["seq"])?;
    params
        .get("seq")
        .map(|s| {
            s.parse::<u64>().map_err(|_| {
                Problem::bad_request(
                    "InvalidParameter",
                    format!(
                        "`seq` must be a dead letter's sequence number (a whole number), got {s:?}"
                    ),
                )
            })
        })
        .transpose()
}

fn dead_letter_json(letter: &DeadLetter, d: &Delivery) -> Value {
    let payload: Value = if d.payload.is_empty() {
        Value::Null
    } else {
        serde_json::from_slice(&d.payload)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&d.payload).into_owned()))
    };
    json!({
        "seq": d.seq,
        "id": d.id,
        "eventType": d.event_type,
        "gvk": d.gvk.to_string(),
        "namespace": d.namespace,
        "name": d.name,
        "origin": letter.queued.announcement.origin.as_str(),
        "reason": letter.reason,
        "attempts": letter.attempts,
        "failedAt": crate::time::rfc3339(std::time::Duration::from_millis(letter.failed_ms)),
        "payload": payload,
    })
}
