//! The cost of `delegated` access on a request whose caller and decision
//! are cached (every request of a busy client but one per period): the
//! same requests through the whole router, in process, without a check
//! (`none`) and with `delegated`, alternating rounds so that both see the
//! same machine. The reviews are answered once, by a small HTTP server on
//! loopback standing in for the API server, and then come from the cache.
//!
//! Three requests: a GET of one Pod (the cheapest answer GRW has, so the
//! check weighs most), a list of the 100 Pods of a namespace, and the
//! same GET through the Kubernetes API (whose check reads the path and
//! the query as its routes do).
//!
//! Run: `cargo bench -p grw --bench access` (`-- --quick`: fewer rounds).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Body;
use axum::http::Request;
use grw::api::{self, AppState, Delegated, Guard};
use grw::config::{ClientConfig, Config, DelegatedAuth, WatchOptions};
use grw::gvk::{Gvk, ResourceInfo};
use grw::kube::{Catalog, Discovery, KubeClient};
use grw::metrics::Metrics;
use grw::notify::Notifications;
use grw::plugin::Plugins;
use grw::query::QueryPool;
use grw::relations::Relations;
use grw::store::{ChangeType, Origin, StoredObject};
use grw::watch::{WatchSettings, Watches};
use serde_json::{Value, json};
use tower::ServiceExt;

use common::{Args, cpu_model};

const TOKEN: &str = "bench-caller-token";

fn pod(namespace: &str, name: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name, "namespace": namespace, "uid": format!("uid-{namespace}-{name}"),
            "resourceVersion": "1", "labels": {"app": "web", "pod-template-hash": "5d8f7c9b6"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5d8f7c9b6", "uid": "rs-uid", "controller": true}],
        },
        "spec": {"containers": [{"name": "main", "image": "registry.example.com/web:1.2.3", "ports": [{"containerPort": 8080}],
            "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}}}], "nodeName": "node-1", "serviceAccountName": "web"},
        "status": {"phase": "Running", "podIP": "10.0.0.1", "conditions": [{"type": "Ready", "status": "True"}]},
    })
}

/// A stand-in for the API server: every token is `bench`'s, every request allowed.
async fn reviewer() -> String {
    async fn token_review(body: axum::Json<Value>) -> (axum::http::StatusCode, axum::Json<Value>) {
        let mut review = body.0;
        review["status"] = json!({"authenticated": true, "user": {"username": "bench", "groups": ["system:authenticated"]}});
        (axum::http::StatusCode::CREATED, axum::Json(review))
    }
    async fn access_review(body: axum::Json<Value>) -> (axum::http::StatusCode, axum::Json<Value>) {
        let mut review = body.0;
        review["status"] = json!({"allowed": true});
        (axum::http::StatusCode::CREATED, axum::Json(review))
    }
    let app = Router::new()
        .route(
            "/apis/authentication.k8s.io/v1/tokenreviews",
            axum::routing::post(token_review),
        )
        .route(
            "/apis/authorization.k8s.io/v1/subjectaccessreviews",
            axum::routing::post(access_review),
        );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

/// The state of a daemon holding 100 Pods in each of 10 namespaces.
async fn state(config: &Config) -> Arc<AppState> {
    let pods = ResourceInfo {
        gvk: Gvk::new("", "v1", "Pod"),
        plural: "pods".into(),
        namespaced: true,
    };
    let metrics = Arc::new(Metrics::new());
    let discovery = Arc::new(Discovery::fixed(Catalog::fixed(vec![pods.clone()])));
    let watches = Arc::new(Watches::new(
        None,
        WatchSettings::default(),
        metrics.clone(),
    ));
    let watch = watches.ensure(&pods, WatchOptions::default(), false);
    for ns in 0..10 {
        for i in 0..100 {
            let object = StoredObject::from_value(
                pod(&format!("ns-{ns}"), &format!("web-{i}")),
                &pods.gvk,
                false,
            )
            .unwrap();
            watch.cache.apply(ChangeType::Added, object, Origin::Watch);
        }
    }
    watch.cache.mark_synced();
    let plugins = Plugins::none(metrics.clone());
    let notifications = Notifications::open(
        config,
        watches.clone(),
        discovery.clone(),
        plugins.clone(),
        metrics.clone(),
    )
    .unwrap();
    let relations = Relations::start(watches.clone(), discovery.clone(), plugins.clone());
    let queries = QueryPool::new(grw::app::query_pool_settings(config), metrics.queries());
    Arc::new(AppState {
        config: Arc::new(config.clone()),
        discovery,
        watches,
        metrics,
        client: None,
        plugins,
        notifications,
        relations,
        queries,
        journal: None,
    })
}

async fn call(router: &Router, path: &str) -> usize {
    let request = Request::get(path)
        .header("authorization", format!("Bearer {TOKEN}"))
        .body(Body::empty())
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    assert_eq!(response.status(), 200, "{path}");
    axum::body::to_bytes(response.into_body(), usize::MAX)
        .await
        .unwrap()
        .len()
}

/// Nanoseconds per request over `n` requests of `path`.
async fn per_request(router: &Router, path: &str, n: usize) -> f64 {
    let started = Instant::now();
    for _ in 0..n {
        std::hint::black_box(call(router, path).await);
    }
    started.elapsed().as_nanos() as f64 / n as f64
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    let args = Args::from_env();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let url = reviewer().await;
        let dir = tempfile::tempdir().unwrap();
        let token_file = dir.path().join("token");
        std::fs::write(&token_file, "grw").unwrap();
        let config = Config {
            client: ClientConfig {
                auth_type: Some(grw::config::AuthType::BearerToken),
                api_server_url: Some(url),
                token_file: Some(token_file),
                ..ClientConfig::default()
            },
            builtin_analyzers: Vec::new(),
            ..Config::default()
        };
        let state = state(&config).await;
        let client = KubeClient::connect(&config.client).await.unwrap();
        // Answers kept for the whole run: every measured request is a hit.
        let settings = DelegatedAuth {
            cache_allowed: Duration::from_secs(3600),
            cache_denied: Duration::from_secs(3600),
            token_cache: Duration::from_secs(3600),
            ..DelegatedAuth::default()
        };
        let delegated = Arc::new(Delegated::new(client, settings, state.metrics.access()));
        let open = api::router(state.clone(), Guard::Open);
        let checked = api::router(state.clone(), Guard::Delegated(delegated));

        println!("machine: {}", cpu_model());
        let (rounds, n) = if args.quick { (5, 2_000) } else { (15, 10_000) };
        for (what, path) in [
            ("get one Pod", "/api/v1/namespaces/ns-3/objects/pods/web-42"),
            ("list 100 Pods", "/api/v1/namespaces/ns-3/objects/pods"),
            (
                "get one Pod, Kubernetes API",
                "/kube/api/v1/namespaces/ns-3/pods/web-42",
            ),
        ] {
            let bytes = call(&checked, path).await;
            for router in [&open, &checked] {
                per_request(router, path, n / 10).await;
            }
            let (mut without, mut with) = (Vec::new(), Vec::new());
            for _ in 0..rounds {
                without.push(per_request(&open, path, n).await);
                with.push(per_request(&checked, path, n).await);
            }
            let (without, with) = (median(without), median(with));
            println!(
                "{what} ({bytes} bytes): none {:.2} µs, delegated (cached) {:.2} µs per request: +{:.2} µs, {:+.1} %",
                without / 1000.0,
                with / 1000.0,
                (with - without) / 1000.0,
                (with - without) / without * 100.0
            );
        }
        let reviews = state.metrics.encode();
        let made: Vec<&str> = reviews
            .lines()
            .filter(|l| l.starts_with("grw_access_reviews_total"))
            .collect();
        println!("reviews asked of the stand-in API server: {made:?}");
    });
}
