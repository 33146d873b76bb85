//! Creates (POST) and replaces (PUT) of single objects, with the API
//! server's optimistic concurrency: a replace whose `metadata.resourceVersion`
//! is not the stored one is a 409 Conflict, as leader election relies on.

use std::sync::Arc;

use http::Method;
use serde_json::{Value, json};

use super::Shared;
use super::discovery::group_version;
use super::state::{Change, ResourceKey, Store};
use super::status::{json_response, status_body, value_response};
use axum::response::Response;

/// What the request names: the resource, the version asked for, the
/// namespace of the path and, for PUT, the object's name.
pub(crate) struct Target<'a> {
    pub key: &'a ResourceKey,
    pub version: &'a str,
    pub namespace: Option<&'a str>,
    pub name: Option<&'a str>,
}

/// Handles a POST to a collection or a PUT to an object.
pub(crate) fn write(
    shared: &Arc<Shared>,
    method: &Method,
    target: &Target,
    body: &[u8],
) -> Response {
    let mut object: Value = match serde_json::from_slice(body) {
        Ok(v @ Value::Object(_)) => v,
        Ok(_) => return failure(400, "BadRequest", "the body must be a JSON object"),
        Err(e) => {
            let message = format!("the body of the request cannot be decoded: {e}");
            return failure(400, "BadRequest", &message);
        }
    };
    let (kind, qualified, api_version) = {
        let store = shared.store.lock();
        let def = &store.resources[target.key].def;
        let qualified = if def.group.is_empty() {
            def.plural.clone()
        } else {
            format!("{}.{}", def.plural, def.group)
        };
        (
            def.kind.clone(),
            qualified,
            group_version(&def.group, target.version),
        )
    };
    if object["apiVersion"] != json!(api_version) || object["kind"] != json!(kind) {
        let message = format!(
            "the object sent is not a {kind} of {api_version} (got kind {} of {})",
            object["kind"], object["apiVersion"]
        );
        return failure(400, "BadRequest", &message);
    }
    let meta = &mut object["metadata"];
    if let Some(namespace) = target.namespace {
        match meta["namespace"].as_str() {
            None | Some("") => meta["namespace"] = json!(namespace),
            Some(ns) if ns == namespace => {}
            Some(_) => {
                let message = "the namespace of the provided object does not match the namespace sent on the request";
                return failure(400, "BadRequest", message);
            }
        }
    }
    let name = meta["name"].as_str().unwrap_or_default().to_string();
    if let Some(path_name) = target.name
        && path_name != name
    {
        let message = "the name of the object does not match the name on the URL";
        return failure(400, "BadRequest", message);
    }
    let sent_rv = meta["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let namespace = target.namespace.map(str::to_string);
    let put = *method == Method::PUT;
    let outcome = shared.mutate(|store: &mut Store| {
        let stored = store.resources[target.key]
            .objects
            .get(&(namespace.clone().unwrap_or_default(), name.clone()))
            .map(|o| o.value()["metadata"]["resourceVersion"].clone());
        match (put, stored) {
            (false, Some(_)) => Err((
                409,
                "AlreadyExists",
                format!("{qualified} \"{name}\" already exists"),
            )),
            (true, None) => Err((
                404,
                "NotFound",
                format!("{qualified} \"{name}\" not found"),
            )),
            (true, Some(rv)) if !sent_rv.is_empty() && rv != json!(sent_rv) => Err((
                409,
                "Conflict",
                format!(
                    "Operation cannot be fulfilled on {qualified} \"{name}\": the object has been modified; please apply your changes to the latest version and try again"
                ),
            )),
            _ => {
                let change = if put { Change::Update } else { Change::Create };
                store
                    .apply(change, object, None)
                    .map_err(|e| (422, "Invalid", e.to_string()))?;
                let res = &store.resources[target.key];
                let stored = &res.objects[&(namespace.clone().unwrap_or_default(), name.clone())];
                Ok(stored.typed_json(&kind, &api_version))
            }
        }
    });
    match outcome {
        Ok(body) => json_response(if put { 200 } else { 201 }, body),
        Err((code, reason, message)) => failure(code, reason, &message),
    }
}

fn failure(code: u16, reason: &str, message: &str) -> Response {
    value_response(code, &status_body(code, reason, message))
}
