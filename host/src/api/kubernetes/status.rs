//! Errors of the Kubernetes routes as the API server sends them: a
//! `Status` object whose `reason`, `code` and `details` client libraries turn
//! into their typed errors (`IsNotFound`, `IsForbidden`, `IsGone`,
//! `IsTooLargeResourceVersion`...), or, for paths the API server has no route
//! for, its plain `404 page not found`.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

/// An error answer of the Kubernetes routes.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum KubeError {
    /// A `Status` object.
    Status(Status),
    /// No route: `404 page not found` in plain text, as the API server
    /// answers an unknown group, version or resource.
    PageNotFound,
}

/// A `Status` of failure.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Status {
    /// HTTP status, also the body's `code`.
    pub code: StatusCode,
    /// `NotFound`, `Forbidden`, `Expired`...
    pub reason: &'static str,
    /// For people.
    pub message: String,
    /// `details` (name, group, kind, causes, retryAfterSeconds), if any.
    pub details: Option<Value>,
}

/// The resource an error is about, as `details` names it: `kind` is the
/// resource's plural name (that is what the API server puts there).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Subject<'a> {
    /// API group, `""` for the core group.
    pub group: &'a str,
    /// Plural resource name, e.g. `pods`.
    pub resource: &'a str,
}

impl Subject<'_> {
    /// `pods`, `deployments.apps`: how messages name a resource.
    fn qualified(&self) -> String {
        if self.group.is_empty() {
            self.resource.to_string()
        } else {
            format!("{}.{}", self.resource, self.group)
        }
    }

    fn details(&self, name: Option<&str>) -> Value {
        let mut details = json!({});
        if let Some(name) = name {
            details["name"] = json!(name);
        }
        if !self.group.is_empty() {
            details["group"] = json!(self.group);
        }
        if !self.resource.is_empty() {
            details["kind"] = json!(self.resource);
        }
        details
    }
}

impl Status {
    pub(crate) fn new(
        code: StatusCode,
        reason: &'static str,
        message: impl Into<String>,
    ) -> Status {
        Status {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    /// 404: `pods "web" not found`.
    pub(crate) fn not_found(subject: Subject<'_>, name: &str) -> Status {
        Status {
            details: Some(subject.details(Some(name))),
            ..Status::new(
                StatusCode::NOT_FOUND,
                "NotFound",
                format!("{} \"{name}\" not found", subject.qualified()),
            )
        }
    }

    /// 403 for a read GRW's own credentials may not make, or one a caller
    /// may not make. A request on no resource (a path such as `/metrics`)
    /// has a subject with an empty `resource`: `forbidden: {why}`, with
    /// empty details, as the API server words it.
    pub(crate) fn forbidden(subject: Subject<'_>, name: Option<&str>, why: &str) -> Status {
        let message = match name {
            Some(name) => format!("{} \"{name}\" is forbidden: {why}", subject.qualified()),
            None if subject.resource.is_empty() => format!("forbidden: {why}"),
            None => format!("{} is forbidden: {why}", subject.qualified()),
        };
        Status {
            details: Some(subject.details(name)),
            ..Status::new(StatusCode::FORBIDDEN, "Forbidden", message)
        }
    }

    /// 401: no bearer token, or one the API server does not accept.
    pub(crate) fn unauthorized() -> Status {
        Status::new(StatusCode::UNAUTHORIZED, "Unauthorized", "Unauthorized")
    }

    /// 404 for a subresource (`pods/log`, `deployments/scale`): GRW
    /// caches objects, not what their subresources compute.
    pub(crate) fn no_subresource(resource: &crate::gvk::ResourceInfo, subresource: &str) -> Status {
        let subject = Subject {
            group: &resource.gvk.group,
            resource: &resource.plural,
        };
        Status {
            details: Some(subject.details(None)),
            ..Status::new(
                StatusCode::NOT_FOUND,
                "NotFound",
                format!(
                    "GRW serves no subresources: ask the Kubernetes API server for {}/{subresource}",
                    subject.qualified()
                ),
            )
        }
    }

    /// 400 `BadRequest`.
    pub(crate) fn bad_request(message: impl Into<String>) -> Status {
        Status::new(StatusCode::BAD_REQUEST, "BadRequest", message)
    }

    /// 422 `Invalid` for list options: each problem is a field and what is
    /// wrong with it (`Forbidden: ...`, `Unsupported value: ...`).
    pub(crate) fn invalid_options(problems: &[(&str, String)]) -> Status {
        let summary = problems
            .iter()
            .map(|(field, problem)| format!("{field}: {problem}"))
            .collect::<Vec<_>>()
            .join(", ");
        let summary = if problems.len() > 1 {
            format!("[{summary}]")
        } else {
            summary
        };
        let causes: Vec<Value> = problems
            .iter()
            .map(|(field, problem)| {
                let reason = if problem.starts_with("Unsupported value") {
                    "FieldValueNotSupported"
                } else if problem.starts_with("Invalid value") {
                    "FieldValueInvalid"
                } else {
                    "FieldValueForbidden"
                };
                json!({"reason": reason, "message": problem, "field": field})
            })
            .collect();
        Status {
            details: Some(json!({"group": "meta.k8s.io", "kind": "ListOptions", "causes": causes})),
            ..Status::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "Invalid",
                format!("ListOptions.meta.k8s.io \"\" is invalid: {summary}"),
            )
        }
    }

    /// 410 `Expired`: a resourceVersion or continue token older than what
    /// GRW keeps.
    pub(crate) fn expired(message: impl Into<String>) -> Status {
        Status::new(StatusCode::GONE, "Expired", message)
    }

    /// 504 `Timeout` with the `ResourceVersionTooLarge` cause: the cache
    /// did not reach the resourceVersion asked for in time.
    pub(crate) fn too_large_resource_version(requested: u64, current: &str) -> Status {
        Status {
            details: Some(json!({
                "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                "retryAfterSeconds": 1,
            })),
            ..Status::new(
                StatusCode::GATEWAY_TIMEOUT,
                "Timeout",
                format!("Timeout: Too large resource version: {requested}, current: {current}"),
            )
        }
    }

    /// 504 `Timeout` for a cache that did not sync in time.
    pub(crate) fn timeout(message: impl Into<String>, retry_after: u64) -> Status {
        Status {
            details: Some(json!({"retryAfterSeconds": retry_after})),
            ..Status::new(StatusCode::GATEWAY_TIMEOUT, "Timeout", message)
        }
    }

    /// 429 `TooManyRequests`, as the API server's priority and fairness
    /// answers when its queues are full: clients wait `retry_after`
    /// seconds (client-go reads `Retry-After` and retries by itself).
    pub(crate) fn too_many_requests(message: impl Into<String>, retry_after: u64) -> Status {
        Status {
            details: Some(json!({"retryAfterSeconds": retry_after})),
            ..Status::new(StatusCode::TOO_MANY_REQUESTS, "TooManyRequests", message)
        }
    }

    /// 500 `InternalError`: a bug in GRW, logged.
    pub(crate) fn internal(message: impl Into<String>) -> Status {
        Status::new(StatusCode::INTERNAL_SERVER_ERROR, "InternalError", message)
    }

    /// 405: GRW serves reads; writes go to the API server.
    pub(crate) fn method_not_allowed(method: &str) -> Status {
        Status {
            details: Some(json!({})),
            ..Status::new(
                StatusCode::METHOD_NOT_ALLOWED,
                "MethodNotAllowed",
                format!(
                    "the server does not allow this method on the requested resource: GRW serves reads from its cache (get, list, watch); send {method} requests to the Kubernetes API server"
                ),
            )
        }
    }

    /// 406: GRW writes JSON only.
    pub(crate) fn not_acceptable() -> Status {
        Status::new(
            StatusCode::NOT_ACCEPTABLE,
            "NotAcceptable",
            "only the following media types are accepted: application/json",
        )
    }

    /// 503 `ServiceUnavailable`.
    pub(crate) fn unavailable(message: impl Into<String>) -> Status {
        Status::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "ServiceUnavailable",
            message,
        )
    }

    /// The `Status` object.
    pub(crate) fn body(&self) -> Value {
        let mut body = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code.as_u16(),
        });
        if let Some(details) = &self.details {
            body["details"] = details.clone();
        }
        body
    }
}

impl From<Status> for KubeError {
    fn from(status: Status) -> KubeError {
        KubeError::Status(status)
    }
}

impl IntoResponse for KubeError {
    fn into_response(self) -> Response {
        let mut response = match self {
            KubeError::Status(status) => {
                let mut response = (status.code, status.body().to_string()).into_response();
                let headers = response.headers_mut();
                headers.insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("application/json"),
                );
                if status.code == StatusCode::TOO_MANY_REQUESTS
                    && let Some(seconds) = status
                        .details
                        .as_ref()
                        .and_then(|d| d["retryAfterSeconds"].as_u64())
                {
                    headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
                }
                // The API server marks its refusals so, not its other errors.
                if status.code == StatusCode::FORBIDDEN {
                    headers.insert(
                        header::X_CONTENT_TYPE_OPTIONS,
                        HeaderValue::from_static("nosniff"),
                    );
                }
                response
            }
            KubeError::PageNotFound => {
                let mut response = (StatusCode::NOT_FOUND, "404 page not found\n").into_response();
                response.headers_mut().insert(
                    header::CONTENT_TYPE,
                    HeaderValue::from_static("text/plain; charset=utf-8"),
                );
                response
            }
        };
        response.headers_mut().insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-cache, private"),
        );
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Value {
        let path = format!(
            "{}/../tests/data/kube-api/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn statuses_have_the_api_servers_shape() {
        let pods = Subject {
            group: "",
            resource: "pods",
        };
        assert_eq!(
            Status::not_found(pods, "nope").body(),
            fixture("status-404.json")
        );
        let forbidden = Status::forbidden(
            pods,
            Some("web-1"),
            "User \"acceptance-limited\" cannot get resource \"pods\" in API group \"\" in the namespace \"kube-system\"",
        );
        assert_eq!(forbidden.body(), fixture("status-403-get.json"));
        let forbidden = Status::forbidden(
            pods,
            None,
            "User \"acceptance-limited\" cannot list resource \"pods\" in API group \"\" at the cluster scope",
        );
        assert_eq!(forbidden.body(), fixture("status-403.json"));

        assert_eq!(Status::unauthorized().body(), fixture("status-401.json"));
        let metrics = Subject {
            group: "",
            resource: "",
        };
        let forbidden =
            Status::forbidden(metrics, None, "User \"jane\" cannot get path \"/metrics\"");
        assert_eq!(
            forbidden.message,
            "forbidden: User \"jane\" cannot get path \"/metrics\""
        );
        assert_eq!(forbidden.body()["details"], json!({}));

        let deployments = Subject {
            group: "apps",
            resource: "deployments",
        };
        assert_eq!(
            Status::not_found(deployments, "web").body(),
            json!({
                "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "deployments.apps \"web\" not found", "reason": "NotFound",
                "details": {"name": "web", "group": "apps", "kind": "deployments"}, "code": 404
            })
        );
        let method = Status::method_not_allowed("POST").body();
        let want = fixture("status-405.json");
        assert_eq!(method["reason"], want["reason"]);
        assert_eq!(method["code"], want["code"]);
        assert_eq!(method["details"], want["details"]);
        assert!(
            method["message"]
                .as_str()
                .unwrap()
                .starts_with(want["message"].as_str().unwrap()),
            "{method}"
        );
    }

    #[test]
    fn invalid_list_options_name_each_field() {
        let one = Status::invalid_options(&[(
            "resourceVersionMatch",
            "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
                .into(),
        )]);
        assert_eq!(one.code, StatusCode::UNPROCESSABLE_ENTITY);
        assert_eq!(
            one.message,
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
        );
        assert_eq!(
            one.body()["details"]["causes"][0],
            json!({"reason": "FieldValueForbidden", "field": "resourceVersionMatch",
                   "message": "Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"})
        );
        let two = Status::invalid_options(&[
            ("a", "Forbidden: x".into()),
            ("b", "Unsupported value: \"y\"".into()),
        ]);
        assert_eq!(
            two.message,
            "ListOptions.meta.k8s.io \"\" is invalid: [a: Forbidden: x, b: Unsupported value: \"y\"]"
        );
        assert_eq!(
            two.body()["details"]["causes"][1]["reason"],
            "FieldValueNotSupported"
        );
    }

    #[test]
    fn too_large_resource_version_carries_its_cause() {
        let status = Status::too_large_resource_version(500, "321");
        let body = status.body();
        assert_eq!(body["code"], 504);
        assert_eq!(body["reason"], "Timeout");
        assert_eq!(
            body["message"],
            "Timeout: Too large resource version: 500, current: 321"
        );
        assert_eq!(
            body["details"]["causes"][0]["reason"],
            "ResourceVersionTooLarge"
        );
        assert_eq!(body["details"]["retryAfterSeconds"], 1);
    }
}
