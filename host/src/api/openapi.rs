//! `GET /api/v1/openapi.json`: the OpenAPI 3.1 document of GRW's own API
//! (the native, compatibility and operations routes; not the Kubernetes
//! API under `kubeApiPathPrefix`, whose contract is the API server's, nor
//! the console's files under `/ui/`).
//!
//! The document is a JSON file beside this one (`openapi.json`), not built
//! in code: it is read and reviewed as the contract it is, edited by
//! whoever adds a parameter without learning a builder, and diffed as
//! JSON. What keeps it true is the tests below: every route of the route
//! table has an operation and every operation a route, and the query
//! parameters of the main routes are those their handlers accept (read
//! from the same lists the handlers parse with).

use std::sync::OnceLock;

use axum::body::Bytes;
use axum::extract::RawQuery;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use super::access::Rule;
use super::table::Routes;
use super::{Params, Problem};

/// The document as written in the source tree.
const SOURCE: &str = include_str!("openapi.json");

/// `info.version` in the source tree, replaced by this build's version.
const VERSION_IN_SOURCE: &str = r#""version": "VERSION""#;

/// The document with this build's version, as written otherwise (its
/// order of members, grouped by route, kept for whoever reads it).
fn document() -> &'static Bytes {
    static DOCUMENT: OnceLock<Bytes> = OnceLock::new();
    DOCUMENT.get_or_init(|| {
        // Compiled in and parsed by the tests below: a document that does
        // not parse is a build that never passed them.
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(SOURCE) {
            panic!("host/src/api/openapi.json is not valid JSON: {e}");
        }
        let version = format!(r#""version": "{}""#, env!("CARGO_PKG_VERSION"));
        Bytes::from(SOURCE.replacen(VERSION_IN_SOURCE, &version, 1))
    })
}

/// The route. Open in every mode, as `/healthz` is: the document holds no
/// data of the cluster, only what docs/ says too, and tools (a
/// client generator, a fuzzer, an API gateway) read it before they hold
/// credentials.
pub(super) fn routes() -> Routes {
    // Parsed when the router is built, at start, not at the first request.
    document();
    Routes::new().route("/api/v1/openapi.json", Rule::Open, get(serve))
}

async fn serve(RawQuery(raw): RawQuery) -> Result<Response, Problem> {
    Params::parse(raw.as_deref(), &[])?;
    let mut response = document().clone().into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

/// The query parameters the handlers of the main routes accept, from the
/// lists they parse with: `(path, method, names)`.
#[cfg(test)]
fn parsed_parameters() -> Vec<(&'static str, &'static str, &'static [&'static str])> {
    use super::{journal, native, relations};
    vec![
        ("/api/v1/objects/{kind}", "get", &native::LIST_PARAMS),
        (
            "/api/v1/namespaces/{namespace}/objects/{kind}",
            "get",
            &native::LIST_PARAMS,
        ),
        ("/api/v1/objects/{kind}/{name}", "get", &native::GET_PARAMS),
        (
            "/api/v1/namespaces/{namespace}/objects/{kind}/{name}",
            "get",
            &native::GET_PARAMS,
        ),
        ("/api/v1/relations", "get", &relations::EDGES_PARAMS),
        (
            "/api/v1/relations/{kind}/{name}",
            "get",
            &relations::AROUND_PARAMS,
        ),
        (
            "/api/v1/namespaces/{namespace}/relations/{kind}/{name}",
            "get",
            &relations::AROUND_PARAMS,
        ),
        (
            "/api/v1/history/{kind}/{name}",
            "get",
            &journal::HISTORY_PARAMS,
        ),
        (
            "/api/v1/namespaces/{namespace}/history/{kind}/{name}",
            "get",
            &journal::HISTORY_PARAMS,
        ),
        (
            "/api/v1/timeline/{kind}/{name}",
            "get",
            &journal::TIMELINE_PARAMS,
        ),
        (
            "/api/v1/namespaces/{namespace}/timeline/{kind}/{name}",
            "get",
            &journal::TIMELINE_PARAMS,
        ),
        ("/api/v1/changes", "get", &journal::CHANGES_PARAMS),
    ]
}

/// What the tests compare: kept apart so that a test can show what a
/// failure says.
#[cfg(test)]
mod drift {
    use std::collections::BTreeSet;

    use serde_json::Value;

    /// Methods an OpenAPI path item may hold, as the document spells them.
    pub const METHODS: [&str; 8] = [
        "get", "put", "post", "delete", "options", "head", "patch", "trace",
    ];

    /// `(path, method)` of every route the route table serves outside the
    /// Kubernetes API and the console. A route's methods are read from its
    /// handlers' `Debug` (axum writes `get: None` for a method it does not
    /// serve); HEAD is left out, as axum serves it with every GET.
    pub fn served() -> BTreeSet<(String, String)> {
        let mut served = BTreeSet::new();
        for route in crate::api::table::all("/kube") {
            if route.path.starts_with("/kube")
                || route.path == "/ui"
                || route.path.starts_with("/ui/")
            {
                continue;
            }
            let handlers = format!("{:?}", route.methods);
            assert!(
                handlers.starts_with("MethodRouter {") && handlers.contains("get: "),
                "axum writes a route's handlers differently now ({handlers}): read the methods another way"
            );
            let mut any = false;
            for method in METHODS.into_iter().filter(|m| *m != "head") {
                if !handlers.contains(&format!(" {method}: None")) {
                    served.insert((route.path.clone(), method.to_string()));
                    any = true;
                }
            }
            assert!(any, "no method read for {}: {handlers}", route.path);
        }
        served
    }

    /// `(path, method)` of every operation of `document`.
    pub fn documented(document: &Value) -> BTreeSet<(String, String)> {
        let mut documented = BTreeSet::new();
        for (path, item) in document["paths"].as_object().into_iter().flatten() {
            for method in METHODS {
                if item.get(method).is_some() {
                    documented.insert((path.clone(), method.to_string()));
                }
            }
        }
        documented
    }

    /// What differs between the routes served and the operations
    /// documented, one line each; empty when they agree.
    pub fn differences(
        served: &BTreeSet<(String, String)>,
        documented: &BTreeSet<(String, String)>,
    ) -> Vec<String> {
        let mut lines: Vec<String> = served
            .difference(documented)
            .map(|(path, method)| {
                format!(
                    "{} {path} is served but host/src/api/openapi.json has no operation for it: describe it there",
                    method.to_uppercase()
                )
            })
            .collect();
        lines.extend(documented.difference(served).map(|(path, method)| {
            format!(
                "{} {path} is described in host/src/api/openapi.json but no route serves it: remove it, or add the route",
                method.to_uppercase()
            )
        }));
        lines
    }

    /// The query parameters of one operation, `$ref`s resolved.
    pub fn query_parameters(document: &Value, path: &str, method: &str) -> BTreeSet<String> {
        document["paths"][path][method]["parameters"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| resolve(document, p))
            .filter(|p| p["in"] == "query")
            .filter_map(|p| p["name"].as_str().map(str::to_string))
            .collect()
    }

    /// `value`, or what its `$ref` points to within `document`.
    pub fn resolve<'a>(document: &'a Value, value: &'a Value) -> &'a Value {
        match value.get("$ref").and_then(Value::as_str) {
            Some(pointer) => document
                .pointer(pointer.trim_start_matches('#'))
                .unwrap_or(&Value::Null),
            None => value,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use serde_json::Value;

    use super::drift::{self, differences, documented, query_parameters, served};
    use super::*;

    fn source() -> Value {
        serde_json::from_str(SOURCE).expect("host/src/api/openapi.json is valid JSON")
    }

    #[test]
    fn document_describes_every_route_and_only_those() {
        let lines = differences(&served(), &documented(&source()));
        assert!(lines.is_empty(), "\n{}", lines.join("\n"));
    }

    #[test]
    fn a_route_missing_from_the_document_is_named() {
        let mut document = source();
        let paths = document["paths"].as_object_mut().expect("paths");
        paths.remove("/api/v1/kinds");
        paths.insert("/api/v1/nothing".into(), serde_json::json!({"get": {}}));
        assert_eq!(
            differences(&served(), &documented(&document)),
            [
                "GET /api/v1/kinds is served but host/src/api/openapi.json has no operation for it: describe it there",
                "GET /api/v1/nothing is described in host/src/api/openapi.json but no route serves it: remove it, or add the route",
            ]
        );
    }

    #[test]
    fn methods_are_read_from_the_route_table() {
        let served = served();
        for (path, method) in [
            ("/api/v1/subscriptions", "post"),
            ("/api/v1/subscriptions/{name}", "delete"),
            ("/resources/k8sObjects", "post"),
            ("/api/v1/openapi.json", "get"),
        ] {
            assert!(
                served.contains(&(path.to_string(), method.to_string())),
                "{method} {path}"
            );
        }
        assert!(!served.contains(&("/api/v1/kinds".into(), "post".into())));
        assert!(
            !served
                .iter()
                .any(|(p, _)| p.starts_with("/kube") || p.starts_with("/ui"))
        );
    }

    #[test]
    fn query_parameters_are_those_the_handlers_parse() {
        let document = source();
        let mut wrong = Vec::new();
        for (path, method, accepted) in parsed_parameters() {
            let accepted: BTreeSet<String> = accepted.iter().map(|p| p.to_string()).collect();
            let described = query_parameters(&document, path, method);
            for missing in accepted.difference(&described) {
                wrong.push(format!(
                    "{} {path}: query parameter `{missing}` is accepted but not described",
                    method.to_uppercase()
                ));
            }
            for extra in described.difference(&accepted) {
                wrong.push(format!(
                    "{} {path}: query parameter `{extra}` is described but refused",
                    method.to_uppercase()
                ));
            }
        }
        assert!(wrong.is_empty(), "\n{}", wrong.join("\n"));
    }

    /// Every `$ref` points at something in the document, and every error
    /// answer of the native API is the one `Problem` shape.
    #[test]
    fn references_resolve_and_errors_share_one_shape() {
        let document = source();
        assert_eq!(document["openapi"], "3.1.0");
        let mut refs = Vec::new();
        collect_refs(&document, &mut refs);
        assert!(refs.len() > 100, "{} references", refs.len());
        for pointer in &refs {
            assert!(
                pointer.starts_with("#/components/") && document.pointer(&pointer[1..]).is_some(),
                "unresolved {pointer}"
            );
        }
        for (path, item) in document["paths"].as_object().expect("paths") {
            if !path.starts_with("/api/") {
                continue;
            }
            for (method, operation) in item.as_object().expect("path item") {
                for (status, answer) in operation["responses"].as_object().expect("responses") {
                    // 414 is the HTTP server's, before GRW reads the
                    // request: it has no body.
                    if status == "414" {
                        continue;
                    }
                    if status.starts_with('4') || status.starts_with('5') {
                        let answer = drift::resolve(&document, answer);
                        assert_eq!(
                            answer["content"]["application/json"]["schema"]["$ref"],
                            "#/components/schemas/Problem",
                            "{method} {path} {status}"
                        );
                    }
                }
            }
        }
    }

    fn collect_refs(value: &Value, refs: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, inner) in map {
                    match (key.as_str(), inner) {
                        ("$ref", Value::String(pointer)) => refs.push(pointer.clone()),
                        _ => collect_refs(inner, refs),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|v| collect_refs(v, refs)),
            _ => {}
        }
    }

    #[test]
    fn served_document_carries_the_build_version() {
        assert_eq!(source()["info"]["version"], "VERSION");
        let served: Value = serde_json::from_slice(document()).expect("JSON");
        assert_eq!(served["info"]["version"], env!("CARGO_PKG_VERSION"));
        let mut source = source();
        source["info"]["version"] = served["info"]["version"].clone();
        assert_eq!(served, source);
    }
}
