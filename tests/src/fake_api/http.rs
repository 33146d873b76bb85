//! The HTTP front: request log, authentication, injected failures and routing.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::response::Response;
use http::{Method, header};
use serde_json::json;

use super::discovery;
use super::faults::failure_message;
use super::params::{Params, is_watch};
use super::status::{error_response, json_response, not_found, status_body, value_response};
use super::write::{Target, write};
use super::{RecordedRequest, Shared};

/// Handles every request.
pub(crate) async fn handle(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_string();
    let query = request.uri().query().unwrap_or_default().to_string();
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    shared.requests.lock().push(RecordedRequest {
        method: method.to_string(),
        path: path.clone(),
        query: query.clone(),
        watch: is_watch(&query),
    });

    let injected = {
        let mut faults = shared.faults.lock();
        if !faults.authorized(authorization.as_deref()) {
            return error_response(401, "Unauthorized");
        }
        let target = if query.is_empty() {
            path.clone()
        } else {
            format!("{path}?{query}")
        };
        faults.take(&target)
    };
    if let Some(code) = injected {
        return error_response(code, &failure_message(code, method.as_str(), &path));
    }
    if ![Method::GET, Method::POST, Method::PUT].contains(&method) {
        let message =
            format!("the server does not allow this method on the requested resource: {method}");
        return error_response(405, &message);
    }
    let body = match axum::body::to_bytes(request.into_body(), MAX_BODY).await {
        Ok(body) => body,
        Err(e) => return error_response(400, &format!("cannot read the request body: {e}")),
    };
    let request = ApiRequest {
        method,
        query,
        body,
    };
    route(shared, &path, &request).await
}

/// Largest body a write may have (a real API server takes 3 MiB).
const MAX_BODY: usize = 3 << 20;

/// What a handler needs of a request besides its path.
struct ApiRequest {
    method: Method,
    query: String,
    body: bytes::Bytes,
}

async fn route(shared: Arc<Shared>, path: &str, request: &ApiRequest) -> Response {
    if request.method == Method::POST
        && let Some((code, answer)) = super::review::answer(&shared.rbac, path, &request.body)
    {
        let delay = shared.faults.lock().review_delay;
        tokio::time::sleep(delay).await;
        return value_response(code, &answer);
    }
    let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    if request.method != Method::GET {
        // Only objects and collections take writes.
        return match segments.as_slice() {
            ["api", version, rest @ ..] if !rest.is_empty() => {
                resource(shared, "", version, rest, request).await
            }
            ["apis", group, version, rest @ ..] if !rest.is_empty() => {
                resource(shared, group, version, rest, request).await
            }
            _ => error_response(
                405,
                "the server does not allow this method on the requested resource",
            ),
        };
    }
    let addr = shared.addr.to_string();
    match segments.as_slice() {
        ["version"] => value_response(200, &discovery::version_info()),
        ["openapi", "v2"] => value_response(200, &super::openapi::v2()),
        ["openapi", "v3"] => value_response(200, &super::openapi::v3_index()),
        ["openapi", "v3", rest @ ..] => match super::openapi::v3(&rest.join("/")) {
            Some(document) => {
                let mut response = value_response(200, &document);
                let etag = format!("\"{}\"", super::openapi::hash(&document));
                if let Ok(etag) = http::HeaderValue::from_str(&etag) {
                    response.headers_mut().insert(header::ETAG, etag);
                }
                response
            }
            None => not_found(),
        },
        ["healthz" | "livez" | "readyz"] => {
            let mut response = Response::new("ok".into());
            response.headers_mut().insert(
                header::CONTENT_TYPE,
                http::HeaderValue::from_static("text/plain; charset=utf-8"),
            );
            response
        }
        ["api"] => value_response(200, &discovery::api_versions(&addr)),
        ["apis"] => {
            let store = shared.store.lock();
            value_response(200, &discovery::api_group_list(store.served_defs(), &addr))
        }
        ["apis", group] => {
            let store = shared.store.lock();
            match discovery::api_group(store.served_defs(), group, &addr) {
                Some(doc) => value_response(200, &doc),
                None => not_found(),
            }
        }
        ["api", version] => resource_list(&shared, "", version),
        ["apis", group, version] => resource_list(&shared, group, version),
        ["api", version, rest @ ..] => resource(shared, "", version, rest, request).await,
        ["apis", group, version, rest @ ..] => {
            resource(shared, group, version, rest, request).await
        }
        _ => not_found(),
    }
}

fn resource_list(shared: &Shared, group: &str, version: &str) -> Response {
    let store = shared.store.lock();
    match discovery::api_resource_list(store.served_defs(), group, version) {
        Some(doc) => value_response(200, &doc),
        None => not_found(),
    }
}

/// Paths below a group version: collections and single objects.
async fn resource(
    shared: Arc<Shared>,
    group: &str,
    version: &str,
    rest: &[&str],
    request: &ApiRequest,
) -> Response {
    let query = request.query.as_str();
    let (namespace, plural, name) = match rest {
        [plural] => (None, *plural, None),
        ["namespaces", ns, plural] => (Some(*ns), *plural, None),
        ["namespaces", ns, plural, name] => (Some(*ns), *plural, Some(*name)),
        [plural, name] => (None, *plural, Some(*name)),
        _ => return not_found(),
    };
    let (key, namespaced, listable) = {
        let store = shared.store.lock();
        let Some(res) = store.by_path(group, version, plural) else {
            return not_found();
        };
        (
            (res.def.group.clone(), res.def.plural.clone()),
            res.def.namespaced,
            res.def.listable,
        )
    };
    if namespace.is_some() && !namespaced {
        return not_found();
    }
    let writes = request.method != Method::GET;
    let verb = if request.method == Method::POST {
        "create"
    } else if request.method == Method::PUT {
        "update"
    } else if name.is_some() {
        "get"
    } else if is_watch(query) {
        "watch"
    } else {
        "list"
    };
    let refusal = shared
        .faults
        .lock()
        .namespace_only
        .as_ref()
        .and_then(|only| only.refusal(verb, &key.0, &key.1, namespace));
    if let Some(message) = refusal {
        let mut status = status_body(403, "Forbidden", &message);
        status["details"] = json!({"group": key.0, "kind": key.1});
        return value_response(403, &status);
    }
    if !listable {
        return error_response(
            405,
            "the server does not allow this method on the requested resource",
        );
    }
    if writes {
        if (request.method == Method::POST) == name.is_some() || namespaced != namespace.is_some() {
            return error_response(
                405,
                "the server does not allow this method on the requested resource",
            );
        }
        let target = Target {
            key: &key,
            version,
            namespace,
            name,
        };
        return write(&shared, &request.method, &target, &request.body);
    }
    if let Some(name) = name {
        if namespaced && namespace.is_none() {
            return not_found();
        }
        return get_object(&shared, &key, version, namespace, name);
    }
    let params = match Params::parse(query) {
        Ok(p) => p,
        Err(message) => return error_response(400, &message),
    };
    if params.watch {
        super::watch::watch(shared, &key, version, namespace, &params)
    } else {
        super::list::list(&shared, &key, version, namespace, &params).await
    }
}

fn get_object(
    shared: &Shared,
    key: &(String, String),
    version: &str,
    namespace: Option<&str>,
    name: &str,
) -> Response {
    let store = shared.store.lock();
    let res = &store.resources[key];
    let object_key = (namespace.unwrap_or_default().to_string(), name.to_string());
    match res.objects.get(&object_key) {
        Some(object) => {
            let body = object.typed_json(&res.def.kind, &res.def.api_version(version));
            json_response(200, body)
        }
        None => {
            let resource = if res.def.group.is_empty() {
                res.def.plural.clone()
            } else {
                format!("{}.{}", res.def.plural, res.def.group)
            };
            let mut status =
                status_body(404, "NotFound", &format!("{resource} \"{name}\" not found"));
            status["details"] =
                json!({"name": name, "group": res.def.group, "kind": res.def.plural});
            value_response(404, &status)
        }
    }
}
