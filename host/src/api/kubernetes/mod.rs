//! The Kubernetes API, served from the cache under `kubeApiPathPrefix`
//! (`/kube`): discovery, and `get`, `list` and `watch` of every resource the
//! API server has, so that kubectl, client-go, kube-rs and every other
//! client read from GRW by changing a kubeconfig's `server`.
//!
//! The same caches and query engine answer as for the native API; this
//! module only reads requests and shapes answers the Kubernetes way: the
//! API server's paths, `ListOptions`, `Status` errors, `Table`s for kubectl,
//! `PartialObjectMetadata` for metadata-only clients, aggregated discovery.
//! GRW serves reads: other methods are `405` (writes go to the API server),
//! and answers are JSON only (`406` for a client accepting only protobuf).

mod discovery;
mod negotiate;
mod openapi;
pub(super) mod options;
pub(super) mod path;
mod read;
pub(super) mod status;
mod table;
mod watch;

use std::sync::Arc;

use axum::extract::{FromRequestParts, State};
use axum::http::request::Parts;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::any;
use serde_json::{Value, json};

use self::discovery::Served;
use self::negotiate::{Endpoint, Representation, negotiate};
use self::options::ListOptions;
use self::path::{GroupVersion, KubePath, ResourcePath};
use self::read::json_response;
use self::status::{KubeError, Status, Subject};
use super::AppState;
use super::access::Rule;
use super::table::Routes;
use crate::gvk::ResourceInfo;
use crate::kube::Catalog;

/// The routes, under `prefix`: every path below it, each checked as the
/// API server reads it ([`Rule::KubeApi`]).
pub(super) fn routes(prefix: &str) -> Routes {
    Routes::new()
        .route(prefix, Rule::KubeApi, any(handle))
        .route(&format!("{prefix}/{{*path}}"), Rule::KubeApi, any(handle))
}

/// A request's path below the prefix, read once by the access check, with
/// the resource it names as discovery knows it; the check hands it to the
/// routes in the request's extensions, so that what is checked is what is
/// served.
#[derive(Debug, Clone)]
pub(crate) struct KubeTarget {
    /// The path without the prefix, as written: a discovery request's
    /// non-resource URL.
    pub raw: String,
    /// What the path names.
    pub path: KubePath,
    /// The resource of a [`KubePath::Resource`], if discovery has it.
    pub resource: Option<ResourceInfo>,
}

impl KubeTarget {
    /// Reads `path` (without GRW's prefix), its resource found in `catalog`.
    pub(crate) fn read(path: &str, catalog: &Catalog) -> KubeTarget {
        let parsed = KubePath::parse(path);
        let resource = match &parsed {
            KubePath::Resource(named) => find(catalog, &named.group_version, &named.resource),
            _ => None,
        };
        KubeTarget {
            raw: path.to_string(),
            path: parsed,
            resource,
        }
    }

    /// Whether the path names a resource discovery did not know: discovery
    /// is read again before it is answered 404 (a CRD just installed).
    pub(crate) fn missed(&self) -> bool {
        matches!(self.path, KubePath::Resource(_)) && self.resource.is_none()
    }
}

impl<S: Send + Sync> FromRequestParts<S> for KubeTarget {
    type Rejection = KubeError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<KubeTarget, KubeError> {
        parts
            .extensions
            .remove::<KubeTarget>()
            .ok_or_else(|| Status::internal("the access check did not read the path").into())
    }
}

/// One request to a resource, resolved.
pub(crate) struct KubeRequest<'a> {
    /// The resource, as discovery knows it.
    pub resource: ResourceInfo,
    /// The namespace of the path; `None` for cluster-scoped resources and
    /// lists across namespaces.
    pub namespace: Option<&'a str>,
    /// The object's name; `None` for the collection.
    pub name: Option<&'a str>,
    /// How the answer is written.
    pub representation: Representation,
}

impl KubeRequest<'_> {
    /// The resource as errors name it.
    fn subject(&self) -> Subject<'_> {
        Subject {
            group: &self.resource.gvk.group,
            resource: &self.resource.plural,
        }
    }
}

async fn handle(
    State(state): State<Arc<AppState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    target: KubeTarget,
) -> Response {
    match serve(&state, &method, target, uri.query(), &headers).await {
        Ok(response) => response,
        Err(error) => error.into_response(),
    }
}

async fn serve(
    state: &AppState,
    method: &Method,
    target: KubeTarget,
    query: Option<&str>,
    headers: &HeaderMap,
) -> Result<Response, KubeError> {
    if method != Method::GET && method != Method::HEAD {
        return Err(Status::method_not_allowed(method.as_str()).into());
    }
    // In the representation the API server gives: v2's is protobuf too.
    if target.path == KubePath::OpenApi {
        return openapi::serve(state, &target.raw, headers).await;
    }
    let endpoint = match target.path {
        KubePath::CoreVersions | KubePath::Groups => Endpoint::Discovery,
        KubePath::Resource(_) => Endpoint::Resource,
        _ => Endpoint::Other,
    };
    let representation =
        negotiate(headers, endpoint).map_err(|_| KubeError::from(Status::not_acceptable()))?;
    let served = || Served::new(&state.discovery.catalog());
    let document = match &target.path {
        KubePath::Resource(path) => {
            return serve_resource(state, path, target.resource, representation, query).await;
        }
        KubePath::Version => version(&state.discovery.catalog().version),
        KubePath::CoreVersions | KubePath::Groups => {
            let core = target.path == KubePath::CoreVersions;
            return Ok(match representation {
                Representation::Aggregated(version) => {
                    discovery_response(&served().aggregated(core, version), representation, headers)
                }
                _ if core => discovery_response(&served().core_versions(), representation, headers),
                _ => discovery_response(&served().group_list(), representation, headers),
            });
        }
        KubePath::Group(group) => served().group(group).ok_or(KubeError::PageNotFound)?,
        KubePath::Resources(GroupVersion { group, version }) => served()
            .resource_list(group, version)
            .ok_or(KubeError::PageNotFound)?,
        KubePath::Unknown | KubePath::OpenApi => return Err(KubeError::PageNotFound),
    };
    Ok(discovery_response(&document, representation, headers))
}

/// `/version`: the API server's, or, for a replay, one saying so.
fn version(of_server: &Value) -> Value {
    if of_server.is_object() {
        return of_server.clone();
    }
    json!({
        "major": "",
        "minor": "",
        "gitVersion": "v0.0.0-grw-replay",
        "gitCommit": "",
        "gitTreeState": "",
        "buildDate": "",
        "goVersion": "",
        "compiler": "",
        // Go's names, as the API server reports its platform.
        "platform": format!("{}/{}", std::env::consts::OS, match std::env::consts::ARCH {
            "x86_64" => "amd64",
            "aarch64" => "arm64",
            other => other,
        }),
    })
}

/// A discovery document, with the headers that let clients cache it: an
/// `ETag` (a matching `If-None-Match` gets `304 Not Modified`) and `Vary:
/// Accept`, since one path has two representations.
fn discovery_response(
    document: &Value,
    representation: Representation,
    headers: &HeaderMap,
) -> Response {
    use sha2::Digest as _;
    let body = document.to_string();
    let digest = sha2::Sha256::digest(body.as_bytes());
    let etag = format!(
        "\"{}\"",
        digest
            .iter()
            .map(|b| format!("{b:02X}"))
            .collect::<String>()
    );
    let content_type = match representation {
        Representation::Aggregated(version) => {
            format!("application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList")
        }
        _ => "application/json".to_string(),
    };
    let unchanged = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|t| t.trim() == etag));
    let mut response = if unchanged {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        json_response(body.into_bytes())
    };
    let out = response.headers_mut();
    if let Ok(value) = HeaderValue::from_str(&content_type) {
        out.insert(header::CONTENT_TYPE, value);
    }
    if let Ok(value) = HeaderValue::from_str(&etag) {
        out.insert(header::ETAG, value);
    }
    out.insert(header::VARY, HeaderValue::from_static("Accept"));
    response
}

async fn serve_resource(
    state: &AppState,
    path: &ResourcePath,
    resource: Option<ResourceInfo>,
    representation: Representation,
    query: Option<&str>,
) -> Result<Response, KubeError> {
    let resource = resource.ok_or(KubeError::PageNotFound)?;
    // The API server has no route for a namespace path of a cluster-scoped
    // resource, nor for a namespaced object outside a namespace.
    if path.namespace.is_some() && !resource.namespaced
        || path.namespace.is_none() && resource.namespaced && path.name.is_some()
    {
        return Err(KubeError::PageNotFound);
    }
    if let Some(subresource) = &path.subresource {
        return Err(Status::no_subresource(&resource, subresource).into());
    }
    let options = ListOptions::parse(query, path.watch_segment)?;
    let request = KubeRequest {
        resource,
        namespace: path.namespace.as_deref(),
        name: path.name.as_deref(),
        representation,
    };
    if options.watch {
        watch::serve(state, &request, options).await
    } else {
        read::serve(state, &request, options).await
    }
}

/// The resource a path names, exactly.
fn find(catalog: &Catalog, group_version: &GroupVersion, plural: &str) -> Option<ResourceInfo> {
    catalog
        .resources
        .iter()
        .map(|e| &e.info)
        .find(|info| {
            info.plural == plural
                && info.gvk.group == group_version.group
                && info.gvk.version == group_version.version
        })
        .cloned()
}
