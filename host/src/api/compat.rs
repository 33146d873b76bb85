//! The routes of the earlier GRW, answering the same JSON shapes: every
//! answer is `{"code", "message", "data"}` with the HTTP status as `code`.
//! Messages are kept word for word (spelling included) because clients match
//! on them. See GRW-COMPAT.md.

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::BytesRejection;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Map, Value, json};

use super::access::Rule;
use super::kinds::{KindError, resolve, synced_watch};
use super::table::Routes;
use super::{AppState, Params, Problem};
use crate::config::{PAIR_MEMBERS, PairConditions};
use crate::gvk::{Gvk, KindRef};
use crate::kube::ResolveError;
use crate::query::{PageRequest, Query};

const OBJECT_MEMBERS: [&str; 6] = ["group", "version", "kind", "name", "namespace", "uid"];

pub(super) fn routes() -> Routes {
    let compat = Rule::Compat;
    Routes::new()
        .route("/", compat, get(hello))
        .route("/resources/k8sObjects", compat, get(objects).post(objects))
        .route("/resources/apiGroups", compat, get(api_groups))
        .route(
            "/resources/apiGroupResources",
            compat,
            get(api_group_resources),
        )
        .route("/manage/cachedResourcesList", compat, get(cached_resources))
        .route("/manage/cacheSize", compat, get(cache_size))
        .route(
            "/analyze/istioGatewayHosts",
            compat,
            get(istio_gateway_hosts),
        )
}

/// An answer in the compatibility envelope.
struct Envelope {
    status: StatusCode,
    message: String,
    data: Value,
}

impl Envelope {
    fn new(status: StatusCode, message: impl Into<String>, data: Value) -> Self {
        Envelope {
            status,
            message: message.into(),
            data,
        }
    }

    fn ok(message: impl Into<String>, data: Value) -> Self {
        Self::new(StatusCode::OK, message, data)
    }
}

impl IntoResponse for Envelope {
    fn into_response(self) -> Response {
        let body =
            json!({"code": self.status.as_u16(), "message": self.message, "data": self.data});
        (self.status, axum::Json(body)).into_response()
    }
}

impl From<Problem> for Envelope {
    fn from(p: Problem) -> Self {
        Envelope::new(p.status, p.message, Value::Null)
    }
}

async fn hello() -> &'static str {
    "Hello, this is Watcher Server"
}

async fn objects(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Envelope> {
    let params = Params::parse(raw.as_deref(), &OBJECT_MEMBERS)?;
    let body = parse_body(body)?;
    // A body member overrides the query member only when it is non-empty; an
    // empty one still counts as given (`"group": ""` is the core group).
    let member = |name: &str| -> Result<Option<String>, Envelope> {
        match body.get(name) {
            Some(Value::String(s)) if !s.is_empty() => Ok(Some(s.clone())),
            Some(Value::String(s)) => Ok(params.get(name).map(String::from).or(Some(s.clone()))),
            Some(Value::Null) | None => Ok(params.get(name).map(String::from)),
            Some(other) => Err(bad(format!(
                "body member `{name}` must be a string, got {other}"
            ))),
        }
    };
    let (group, version, kind) = (member("group")?, member("version")?, member("kind")?);
    let (Some(group), Some(version), Some(kind)) = (
        group,
        version.filter(|v| !v.is_empty()),
        kind.filter(|k| !k.is_empty()),
    ) else {
        let given: Map<String, Value> = OBJECT_MEMBERS
            .iter()
            .filter_map(|m| Some((m.to_string(), Value::String(member(m).ok()??))))
            .collect();
        return Err(Envelope::new(
            StatusCode::RANGE_NOT_SATISFIABLE,
            "illegal GVK in query parameters",
            Value::Object(given),
        ));
    };
    let gvk = Gvk::new(&group, &version, &kind);
    let query = Query {
        namespace: member("namespace")?.filter(|s| !s.is_empty()),
        name: member("name")?.filter(|s| !s.is_empty()),
        uid: member("uid")?.filter(|s| !s.is_empty()),
        ..Query::default()
    }
    .with_pairs(PairConditions::from_body(&body).map_err(|e| bad(e.to_string()))?);
    let resource = resolve(&state, &KindRef::exact(&gvk))
        .await
        .map_err(|e| not_found(&state, &gvk, e))?;
    let watch = synced_watch(&state, &resource, query.namespace.as_deref())
        .await
        .map_err(|e| not_found(&state, &gvk, e))?;
    let page = state
        .queries
        .list(&watch.cache, query, PageRequest::default(), false)
        .await
        .map_err(|e| Envelope::from(Problem::from(e)))?
        .page;
    let mut out = format!(
        r#"{{"code":200,"message":"{} resource(s) founded","data":["#,
        page.items.len()
    )
    .into_bytes();
    for (i, object) in page.items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        object.write_json(&mut out);
    }
    out.extend_from_slice(b"]}");
    let mut response = out.into_response();
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

fn bad(message: impl Into<String>) -> Envelope {
    Envelope::new(StatusCode::BAD_REQUEST, message, Value::Null)
}

fn not_found(state: &AppState, gvk: &Gvk, e: KindError) -> Envelope {
    match e {
        KindError::Unresolved(ResolveError::NotFound { .. } | ResolveError::Ambiguous { .. }) => {
            let candidates: Vec<Value> = state
                .discovery
                .catalog()
                .with_kind(&gvk.kind)
                .into_iter()
                .map(|r| {
                    json!({
                        "group": r.gvk.group_or_core(), "version": r.gvk.version, "kind": r.gvk.kind,
                        "gvk": r.gvk.to_string(), "resource": r.plural,
                    })
                })
                .collect();
            let data = if candidates.is_empty() {
                Value::Null
            } else {
                Value::Array(candidates)
            };
            Envelope::new(
                StatusCode::NOT_FOUND,
                "GVK not found, possible GVKs in 'data' field.",
                data,
            )
        }
        other => Problem::from(other).into(),
    }
}

fn parse_body(body: Result<Bytes, BytesRejection>) -> Result<Map<String, Value>, Envelope> {
    let bytes = body.map_err(|e| {
        Envelope::new(
            e.status(),
            format!("request body cannot be read: {}", e.body_text()),
            Value::Null,
        )
    })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(&bytes) {
        Ok(Value::Object(map)) => {
            if let Some(unknown) = map.keys().find(|k| {
                !OBJECT_MEMBERS.contains(&k.as_str()) && !PAIR_MEMBERS.contains(&k.as_str())
            }) {
                return Err(bad(format!(
                    "unknown body member `{unknown}`; accepted: {}, {}",
                    OBJECT_MEMBERS.join(", "),
                    PAIR_MEMBERS.join(", ")
                )));
            }
            Ok(map)
        }
        Ok(_) => Err(bad("request body must be a JSON object")),
        Err(e) => Err(bad(format!("request body is not valid JSON: {e}"))),
    }
}

async fn api_groups(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> Result<Envelope, Envelope> {
    let params = Params::parse(raw.as_deref(), &["forceUpdate"])?;
    let catalog = if params.flag("forceUpdate")? {
        refresh(&state).await?
    } else {
        state.discovery.catalog()
    };
    Ok(Envelope::ok("api groups", catalog.api_groups.clone()))
}

async fn api_group_resources(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> Result<Envelope, Envelope> {
    let params = Params::parse(raw.as_deref(), &["group", "version", "forceUpdate"])?;
    let (Some(group), Some(version)) = (params.get("group"), params.non_empty("version")) else {
        return Err(Envelope::new(
            StatusCode::RANGE_NOT_SATISFIABLE,
            "group or version not specified",
            Value::Null,
        ));
    };
    let catalog = if params.flag("forceUpdate")? {
        refresh(&state).await?
    } else {
        state.discovery.catalog()
    };
    let group_version = Gvk::new(group, version, "").api_version();
    match catalog.resource_lists.get(&group_version) {
        Some(list) => Ok(Envelope::ok("resource list", list.clone())),
        // The earlier GRW answered 500 here; clients depend on it.
        None => Err(Envelope::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "error get resources list",
            json!(format!("{group}/{version}")),
        )),
    }
}

async fn refresh(state: &AppState) -> Result<Arc<crate::kube::Catalog>, Envelope> {
    state.discovery.refresh().await.map_err(|e| {
        tracing::warn!(error = %crate::error::Report(&e), "forced discovery refresh failed");
        Envelope::new(
            StatusCode::BAD_GATEWAY,
            "the API server's discovery could not be read",
            Value::Null,
        )
    })
}

async fn cached_resources(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> Result<Envelope, Envelope> {
    Params::parse(raw.as_deref(), &[])?;
    // GRW's own kinds are not the cluster's: the earlier GRW had none.
    let gvks: BTreeSet<String> = state
        .watches
        .all()
        .iter()
        .filter(|w| !crate::gvk::is_grw_kind(&w.key.gvk))
        .map(|w| w.key.gvk.to_string())
        .collect();
    Ok(Envelope::ok("resources", json!(gvks)))
}

async fn cache_size(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> Result<Envelope, Envelope> {
    let params = Params::parse(raw.as_deref(), &["group", "version", "kind"])?;
    let (Some(group), Some(version), Some(kind)) = (
        params.get("group"),
        params.non_empty("version"),
        params.non_empty("kind"),
    ) else {
        return Err(Envelope::new(
            StatusCode::BAD_REQUEST,
            "missing required parameters",
            json!("group;version;kind"),
        ));
    };
    let gvk = Gvk::new(group, version, kind);
    // Objects, not names: two watches of one kind may overlap, count each object once.
    let mut keys = BTreeSet::new();
    for watch in state.watches.of_kind(&gvk) {
        keys.extend(watch.cache.read().iter_after(None).map(|o| o.key().clone()));
    }
    Ok(Envelope::ok("cached objecs count", json!(keys.len())))
}

const ISTIO: &str = "networking.istio.io";

/// Each Istio Gateway (in `ns`, when given) with the hosts of the
/// VirtualServices bound to it that one of its servers accepts. Read from
/// the relationship index: the `exposes` edges an analyzer of
/// VirtualServices (the built-in `istio-gateways`, or a plugin) finds, so
/// one must run. The first answer waits for the analyzer to have seen
/// every Gateway and VirtualService once.
async fn istio_gateway_hosts(
    State(state): State<Arc<AppState>>,
    RawQuery(raw): RawQuery,
) -> Result<Envelope, Envelope> {
    let params = Params::parse(raw.as_deref(), &["ns"])?;
    let namespace = params.non_empty("ns");
    if !state.relations.covers(ISTIO, "VirtualService") {
        return Err(Envelope::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "Gateway hosts come from an analyzer of Istio VirtualServices, and none runs: turn the built-in `istio-gateways` on (config key `builtinAnalyzers`), or put such an analyzer plugin into pluginDir",
            Value::Null,
        ));
    }
    let wanted = KindRef {
        group: Some(ISTIO.into()),
        version: None,
        name: "Gateway".into(),
    };
    let resource = match resolve(&state, &wanted).await {
        Ok(resource) => resource,
        // No Istio in this cluster: no Gateways.
        Err(KindError::Unresolved(ResolveError::NotFound { .. })) => {
            return Ok(Envelope::ok("Gateway hosts fetched", json!([])));
        }
        Err(e) => return Err(Problem::from(e).into()),
    };
    let gateways: Vec<(String, String)> = {
        let watch = synced_watch(&state, &resource, namespace)
            .await
            .map_err(|e| Envelope::from(Problem::from(e)))?;
        let view = watch.cache.read();
        view.iter_after(None)
            .filter(|g| namespace.is_none_or(|ns| g.namespace() == ns))
            .map(|g| (g.namespace().to_string(), g.name().to_string()))
            .collect()
    };
    let services = state.relations.resource(ISTIO, "VirtualService");
    if services.is_some() {
        let kinds = [(ISTIO, "Gateway"), (ISTIO, "VirtualService")];
        let timeout = state.config.sync_timeout;
        if !state.relations.wait_analyzed(&kinds, timeout).await {
            return Err(Envelope::new(
                StatusCode::GATEWAY_TIMEOUT,
                format!(
                    "Istio Gateways and VirtualServices were not all analyzed within {} s (syncTimeoutSecond); see /api/v1/kinds for their watches",
                    timeout.as_secs()
                ),
                Value::Null,
            ));
        }
    }
    let labels_of = |namespace: &str, name: &str| -> Option<Value> {
        let watch = state
            .watches
            .serving(&services.as_ref()?.gvk, Some(namespace))?;
        let view = watch.cache.read();
        let service = view.get(&crate::store::ObjectKey::new(namespace, name))?;
        let labels: Map<String, Value> = service
            .labels()
            .map(|(k, v)| (k.to_string(), Value::String(v.to_string())))
            .collect();
        (!labels.is_empty()).then_some(Value::Object(labels))
    };
    let mut data = Vec::new();
    for (namespace, name) in gateways {
        let exposed: Vec<(String, String, String)> = {
            let graph = state.relations.graph();
            let node = crate::relations::NodeKey {
                group: ISTIO.into(),
                kind: "Gateway".into(),
                namespace: namespace.as_str().into(),
                name: name.as_str().into(),
            };
            graph
                .outgoing(&node)
                .iter()
                .filter(|e| &*e.relation == "exposes" && &*e.to.kind == "VirtualService")
                .flat_map(|e| {
                    e.attributes
                        .iter()
                        .filter(|(k, _)| &**k == "host")
                        .map(|(_, host)| {
                            (
                                e.to.namespace.to_string(),
                                e.to.name.to_string(),
                                host.to_string(),
                            )
                        })
                })
                .collect()
        };
        let mut hosts: Vec<(String, String, String)> = exposed;
        hosts.sort();
        hosts.dedup();
        let service_hosts: Vec<Value> = hosts
            .into_iter()
            .map(|(service_namespace, service, host)| {
                let mut entry = json!({"serviceName": service, "host": host});
                if let Some(labels) = labels_of(&service_namespace, &service) {
                    entry["serviceLabels"] = labels;
                }
                entry
            })
            .collect();
        data.push(json!({
            "namespace": namespace,
            "gatewayName": name,
            "serviceHosts": service_hosts,
        }));
    }
    Ok(Envelope::ok("Gateway hosts fetched", Value::Array(data)))
}
