//! The answers of a refused request: the Kubernetes API's own `Status`
//! errors ([`Status`]), on every route group, so that a 401 or 403 reads the
//! same below `kubeApiPathPrefix` as on the native routes (whose clients
//! read the same `code`, `reason` and `message` members as in GRW's other
//! errors), and word for word as the API server's.

use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};

use crate::api::kubernetes::status::{KubeError, Status, Subject};
use crate::kube::{AccessAttributes, UserInfo};

/// 401: no token, or one the API server does not accept.
pub(super) fn unauthorized() -> Response {
    KubeError::from(Status::unauthorized()).into_response()
}

/// 403, with the API server's message for `user` refused `attributes`,
/// and the authorizer's `reason` after it when there is one.
pub(super) fn forbidden(user: &UserInfo, attributes: &AccessAttributes, reason: &str) -> Response {
    let why = why(user, attributes, reason);
    let status = match attributes {
        AccessAttributes::Resource(r) => Status::forbidden(
            Subject {
                group: &r.group,
                resource: &r.resource,
            },
            Some(r.name.as_str()).filter(|n| !n.is_empty()),
            &why,
        ),
        AccessAttributes::NonResource(_) => Status::forbidden(
            Subject {
                group: "",
                resource: "",
            },
            None,
            &why,
        ),
    };
    KubeError::from(status).into_response()
}

/// 503: the API server could not say who the caller is or what it may
/// read; nothing is let in on a guess. Clients may retry after a second.
pub(super) fn unavailable(message: String) -> Response {
    let mut response = KubeError::from(Status::unavailable(message)).into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// 429: too many reviews are under way with the API server to ask one more
/// now; `Retry-After` and `details.retryAfterSeconds` say when to try
/// again, as the API server's own priority and fairness answers.
pub(super) fn too_many_requests(message: String) -> Response {
    let status = Status {
        code: axum::http::StatusCode::TOO_MANY_REQUESTS,
        reason: "TooManyRequests",
        message,
        details: Some(serde_json::json!({"retryAfterSeconds": 1})),
    };
    let mut response = KubeError::from(status).into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}

/// The API server's words for why: `User "jane" cannot get resource
/// "pods" in API group "" in the namespace "a"`, `... at the cluster
/// scope`, or `User "jane" cannot get path "/metrics"`; then `: reason`
/// if the authorizer gave one.
pub(super) fn why(user: &UserInfo, attributes: &AccessAttributes, reason: &str) -> String {
    let user = quote(&user.username);
    let what = match attributes {
        AccessAttributes::NonResource(n) => {
            format!("User {user} cannot {} path {}", n.verb, quote(&n.path))
        }
        AccessAttributes::Resource(r) => {
            let resource = if r.subresource.is_empty() {
                r.resource.clone()
            } else {
                format!("{}/{}", r.resource, r.subresource)
            };
            let place = if r.namespace.is_empty() {
                "at the cluster scope".to_string()
            } else {
                format!("in the namespace {}", quote(&r.namespace))
            };
            format!(
                "User {user} cannot {} resource {} in API group {} {place}",
                r.verb,
                quote(&resource),
                quote(&r.group)
            )
        }
    };
    // The API server escapes what could pass for HTML in this part.
    let mut why = what
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    if !reason.is_empty() {
        why.push_str(": ");
        why.push_str(reason);
    }
    why
}

/// A string in double quotes with Go's escapes (`%q`), as the API server's
/// messages quote names.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;
    use crate::kube::{NonResourceAttributes, ResourceAttributes};

    fn user(name: &str) -> UserInfo {
        UserInfo {
            username: name.into(),
            ..UserInfo::default()
        }
    }

    fn resource(
        verb: &str,
        group: &str,
        resource: &str,
        sub: &str,
        ns: &str,
        name: &str,
    ) -> AccessAttributes {
        AccessAttributes::Resource(ResourceAttributes {
            verb: verb.into(),
            group: group.into(),
            version: "v1".into(),
            resource: resource.into(),
            subresource: sub.into(),
            namespace: ns.into(),
            name: name.into(),
        })
    }

    fn path(path: &str) -> AccessAttributes {
        AccessAttributes::NonResource(NonResourceAttributes {
            path: path.into(),
            verb: "get".into(),
        })
    }

    /// The body of a real API server's answer in `tests/data/kube-api`.
    fn recorded(name: &str) -> Value {
        let path = format!(
            "{}/../tests/data/kube-api/{name}.json",
            env!("CARGO_MANIFEST_DIR")
        );
        serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
    }

    async fn body(response: Response) -> Value {
        let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
            .await
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    }

    #[tokio::test]
    async fn refusals_are_the_api_server_s_word_for_word() {
        let limited = user("acceptance-limited");
        let response = forbidden(&limited, &resource("list", "", "pods", "", "", ""), "");
        assert_eq!(response.status(), 403);
        assert_eq!(response.headers()["x-content-type-options"], "nosniff");
        assert_eq!(response.headers()["cache-control"], "no-cache, private");
        assert_eq!(response.headers()["content-type"], "application/json");
        assert_eq!(body(response).await, recorded("status-403"));

        let response = forbidden(
            &limited,
            &resource("get", "", "pods", "", "kube-system", "web-1"),
            "",
        );
        assert_eq!(body(response).await, recorded("status-403-get"));

        let response = unauthorized();
        assert_eq!(response.status(), 401);
        assert_eq!(response.headers()["content-type"], "application/json");
        assert!(!response.headers().contains_key("x-content-type-options"));
        assert_eq!(body(response).await, recorded("status-401"));

        let response = unavailable("the API server is away".into());
        assert_eq!(response.status(), 503);
        assert_eq!(response.headers()["retry-after"], "1");
        assert_eq!(body(response).await["reason"], "ServiceUnavailable");
    }

    #[tokio::test]
    async fn a_refused_path_has_empty_details() {
        let got = body(forbidden(&user("jane"), &path("/metrics"), "")).await;
        assert_eq!(
            got["message"],
            r#"forbidden: User "jane" cannot get path "/metrics""#
        );
        assert_eq!(got["details"], json!({}));
        assert_eq!(got["code"], 403);
    }

    #[test]
    fn reasons_of_every_kind_of_request() {
        let jane = user("jane");
        let cases = [
            (
                resource("list", "", "pods", "", "b", ""),
                "",
                r#"User "jane" cannot list resource "pods" in API group "" in the namespace "b""#,
            ),
            (
                resource("watch", "apps", "deployments", "", "", ""),
                "",
                r#"User "jane" cannot watch resource "deployments" in API group "apps" at the cluster scope"#,
            ),
            (
                resource("get", "", "pods", "log", "a", "web-1"),
                "",
                r#"User "jane" cannot get resource "pods/log" in API group "" in the namespace "a""#,
            ),
            (
                resource("create", "grw.io", "subscriptions", "", "", ""),
                "no RBAC policy matched",
                r#"User "jane" cannot create resource "subscriptions" in API group "grw.io" at the cluster scope: no RBAC policy matched"#,
            ),
            (
                path("/metrics"),
                "",
                r#"User "jane" cannot get path "/metrics""#,
            ),
            (
                path("/<script>"),
                "",
                r#"User "jane" cannot get path "/&lt;script&gt;""#,
            ),
        ];
        for (attributes, reason, want) in cases {
            assert_eq!(why(&jane, &attributes, reason), want);
        }
        let odd = user("a \"quoted\"\\name\n");
        assert_eq!(
            why(&odd, &resource("get", "", "pods", "", "", "p"), ""),
            r#"User "a \"quoted\"\\name\n" cannot get resource "pods" in API group "" at the cluster scope"#
        );
    }
}
