//! Relationship analysis end to end: the real `grw` with the shipped
//! analyzers (built in, and as components), over the bundled recording and
//! against the fake API server, with edges following changes at either
//! end, analyzer faults, reloads and removals, and the routes that answer
//! from the index.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::{Duration, Instant};

use grw_e2e::daemon::{Grw, bundled_recording, eventually};
use grw_e2e::fake_api::{FakeApiOptions, FakeApiServer};
use grw_e2e::plugins::install;
use grw_e2e::receiver::Receiver;
use serde_json::{Value, json};

const TOKEN: &str = "t0k3n";
const SETTLE: Duration = Duration::from_secs(60);

/// The four shipped analyzers, by file name and package.
const ANALYZERS: [(&str, &str); 4] = [
    ("ownership", "grw-plugin-ownership"),
    ("services", "grw-plugin-services"),
    ("references", "grw-plugin-references"),
    ("istio-gateways", "grw-plugin-istio-gateways"),
];

fn plugin_dir(dir: &Path, analyzers: &[(&str, &str)]) -> std::path::PathBuf {
    let plugins = dir.join("plugins");
    std::fs::create_dir_all(&plugins).unwrap();
    for (name, package) in analyzers {
        install(&plugins, name, package, Some(json!({"kind": "analyzer"})));
    }
    plugins
}

/// Every edge as a line of `tests/data/expected-edges.txt`.
fn lines(body: &Value) -> BTreeSet<String> {
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            let attributes: String = e["attributes"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(k, v)| format!(" {k}={}", v.as_str().unwrap()))
                .collect();
            format!(
                "{} {} {}{attributes}",
                e["from"].as_str().unwrap(),
                e["relation"].as_str().unwrap(),
                e["to"].as_str().unwrap()
            )
        })
        .collect()
}

/// The edges once the analyzers have caught up and the count holds still.
async fn settled_edges(grw: &Grw, path: &str) -> Value {
    let deadline = Instant::now() + SETTLE;
    let mut previous_count = usize::MAX;
    loop {
        let (status, body) = grw.get(path).await;
        assert_eq!(status, 200, "{body}");
        let count = body["items"].as_array().unwrap().len();
        if body["pending"] == 0 && count == previous_count {
            return body;
        }
        assert!(
            Instant::now() < deadline,
            "the relations did not settle: {body}"
        );
        previous_count = count;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test]
async fn the_daemon_finds_the_recorded_clusters_expected_edges() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = plugin_dir(dir.path(), &ANALYZERS);
    let grw = Grw::start(
        json!({"pluginDir": plugins, "pluginCacheDir": plugins.join(".cache")}),
        &["--replay", bundled_recording().to_str().unwrap()],
    )
    .await;
    grw.wait_ready(Duration::from_secs(60)).await;
    let body = settled_edges(&grw, "/api/v1/relations").await;
    let found = lines(&body);
    let expected: BTreeSet<String> = include_str!("../data/expected-edges.txt")
        .lines()
        .map(String::from)
        .collect();
    let missing: Vec<_> = expected.difference(&found).collect();
    let extra: Vec<_> = found.difference(&expected).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:#?}\nextra {extra:#?}"
    );
    assert_eq!(found.len(), 420);

    // Each analyzer's share shows in the plugin status.
    let (_, plugins) = grw.get("/api/v1/plugins").await;
    let mut total = 0;
    for status in plugins["items"].as_array().unwrap() {
        assert_eq!(status["kind"], "analyzer");
        let analysis = &status["analysis"];
        assert!(analysis["lastAnalysisTime"].is_string(), "{status}");
        assert_eq!(analysis["staleObjects"], 0);
        total += analysis["edges"].as_u64().unwrap();
    }
    assert_eq!(total, 420);

    // One Deployment, three steps out: its ReplicaSets, their Pods, and
    // what the Pods use.
    let (status, around) = grw
        .get("/api/v1/namespaces/shop/relations/deployments/frontend?direction=out&depth=3")
        .await;
    assert_eq!(status, 200, "{around}");
    assert_eq!(around["root"], "apps/Deployment shop/frontend");
    let nodes = around["nodes"].as_array().unwrap();
    let node = |id: &str| nodes.iter().find(|n| n["id"] == id).cloned();
    let root = node("apps/Deployment shop/frontend").unwrap();
    assert_eq!(root["exists"], true);
    assert_eq!(root["apiVersion"], "apps/v1");
    assert!(
        nodes
            .iter()
            .any(|n| n["kind"] == "Pod" && n["exists"] == true),
        "{around}"
    );
    // ServiceAccounts are not recorded, so whether one exists is unknown.
    let accounts: Vec<&Value> = nodes
        .iter()
        .filter(|n| n["kind"] == "ServiceAccount")
        .collect();
    assert!(!accounts.is_empty(), "{around}");
    assert!(accounts.iter().all(|n| n["exists"].is_null()), "{around}");
    let relations: BTreeSet<&str> = around["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["relation"].as_str().unwrap())
        .collect();
    assert!(
        relations.contains("owns") && relations.contains("runs-as"),
        "{relations:?}"
    );

    // The compatibility route of the earlier GRW, from the same index.
    let (status, hosts) = grw.get("/analyze/istioGatewayHosts").await;
    assert_eq!(status, 200, "{hosts}");
    assert_eq!(hosts["message"], "Gateway hosts fetched");
    let data = &hosts["data"];
    assert_eq!(data.as_array().unwrap().len(), 1, "{hosts}");
    assert_eq!(data[0]["namespace"], "ingress");
    assert_eq!(data[0]["gatewayName"], "shop-gateway");
    let pairs: Vec<(String, String)> = data[0]["serviceHosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["serviceName"].as_str().unwrap().to_string(),
                h["host"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [
            (
                "frontend".to_string(),
                "frontend.shop.example.com".to_string()
            ),
            (
                "payments-api".to_string(),
                "api.shop.example.com".to_string()
            )
        ]
    );
    let (_, elsewhere) = grw.get("/analyze/istioGatewayHosts?ns=shop").await;
    assert_eq!(elsewhere["data"], json!([]));
}

/// The README's run command: the recording, and nothing else configured.
#[tokio::test]
async fn the_built_in_analyzers_find_the_same_edges_with_nothing_installed() {
    let grw = Grw::replaying().await;
    let body = settled_edges(&grw, "/api/v1/relations").await;
    let expected: BTreeSet<String> = include_str!("../data/expected-edges.txt")
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(lines(&body), expected);

    let (_, plugins) = grw.get("/api/v1/plugins").await;
    assert_eq!(plugins["enabled"], false, "no plugin directory: {plugins}");
    let names: Vec<&str> = plugins["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|status| {
            assert_eq!(status["origin"], "built-in", "{status}");
            assert_eq!(status["state"], "ready", "{status}");
            assert_eq!(status["kind"], "analyzer", "{status}");
            assert!(status["hash"].is_null(), "{status}");
            assert!(
                status["analysis"]["edges"].as_u64().unwrap() > 0,
                "{status}"
            );
            status["name"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        names,
        ["istio-gateways", "ownership", "references", "services"]
    );

    // A Deployment: its ReplicaSets and what its pod template names, and
    // one step further its Pods.
    let kinds_around = |around: &Value| -> BTreeSet<String> {
        around["edges"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                format!(
                    "{} {}",
                    e["relation"].as_str().unwrap(),
                    e["to"].as_str().unwrap()
                )
            })
            .collect()
    };
    let (status, around) = grw
        .get("/api/v1/namespaces/shop/relations/deployments/frontend")
        .await;
    assert_eq!(status, 200, "{around}");
    let one_step = kinds_around(&around);
    let (owned, used): (Vec<&String>, Vec<&String>) = one_step
        .iter()
        .partition(|e| e.starts_with("owns apps/ReplicaSet shop/frontend-"));
    assert!(!owned.is_empty(), "{around}");
    assert_eq!(
        used,
        [
            "uses core/ConfigMap shop/frontend-nginx",
            "uses core/ConfigMap shop/shop-config"
        ],
        "{around}"
    );
    let (_, around) = grw
        .get("/api/v1/namespaces/shop/relations/deployments/frontend?depth=2")
        .await;
    let pods: Vec<&Value> = around["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["kind"] == "Pod")
        .collect();
    assert!(!pods.is_empty(), "{around}");
    assert!(pods.iter().all(|p| p["exists"] == true), "{around}");

    // The earlier GRW's route answers with nothing installed.
    let (status, hosts) = grw.get("/analyze/istioGatewayHosts").await;
    assert_eq!(status, 200, "{hosts}");
    assert_eq!(hosts["data"][0]["gatewayName"], "shop-gateway", "{hosts}");
}

#[tokio::test]
async fn a_plugin_file_replaces_a_built_in_analyzer_until_it_is_removed() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = plugin_dir(dir.path(), &[]);
    let grw = Grw::start(
        json!({"pluginDir": plugins, "pluginCacheDir": plugins.join(".cache")}),
        &["--replay", bundled_recording().to_str().unwrap()],
    )
    .await;
    grw.wait_ready(Duration::from_secs(60)).await;
    let owns = |body: &Value| {
        body["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["relation"] == "owns")
            .count()
    };
    let built_in = owns(&settled_edges(&grw, "/api/v1/relations").await);
    assert!(built_in > 0);

    // The same analyzer as a file, told to read only Pods' owners.
    install(
        &plugins,
        "ownership",
        "grw-plugin-ownership",
        Some(json!({"kind": "analyzer", "config": {"kinds": [{"kind": "Pod"}]}})),
    );
    let replaced = eventually(Duration::from_secs(30), || async {
        let (_, status) = grw.get("/api/v1/plugins/ownership").await;
        status["origin"] == "file" && status["state"] == "ready"
    })
    .await;
    assert!(replaced, "{:?}", grw.get("/api/v1/plugins/ownership").await);
    let (_, status) = grw.get("/api/v1/plugins/ownership").await;
    assert_eq!(status["hash"].as_str().unwrap().len(), 64, "{status}");
    let only_pods = owns(&settled_edges(&grw, "/api/v1/relations").await);
    assert!(
        0 < only_pods && only_pods < built_in,
        "{only_pods} of {built_in}"
    );

    // A file that does not load leaves the built-in one serving.
    std::fs::write(plugins.join("services.wasm"), b"not a component").unwrap();
    let stale = eventually(Duration::from_secs(10), || async {
        let (_, status) = grw.get("/api/v1/plugins/services").await;
        status["state"] == "stale"
    })
    .await;
    let (_, status) = grw.get("/api/v1/plugins/services").await;
    assert!(stale, "{status}");
    assert_eq!(status["origin"], "built-in", "{status}");
    assert!(
        status["lastError"]
            .as_str()
            .unwrap()
            .contains("not a valid WebAssembly component"),
        "{status}"
    );

    // Removing the files brings the built-in analyzers back.
    std::fs::remove_file(plugins.join("ownership.wasm")).unwrap();
    std::fs::remove_file(plugins.join("services.wasm")).unwrap();
    let back = eventually(Duration::from_secs(10), || async {
        let (_, plugins) = grw.get("/api/v1/plugins").await;
        plugins["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["origin"] == "built-in" && s["state"] == "ready")
    })
    .await;
    assert!(back, "{:?}", grw.get("/api/v1/plugins").await);
    assert_eq!(
        owns(&settled_edges(&grw, "/api/v1/relations").await),
        built_in
    );
}

#[tokio::test]
async fn built_in_analyzers_are_chosen_by_a_config_key() {
    let recording = bundled_recording();
    let replay = ["--replay", recording.to_str().unwrap()];
    let grw = Grw::start(json!({"builtinAnalyzers": ["ownership"]}), &replay).await;
    grw.wait_ready(Duration::from_secs(60)).await;
    let body = settled_edges(&grw, "/api/v1/relations").await;
    let analyzers: BTreeSet<&str> = body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["analyzer"].as_str().unwrap())
        .collect();
    assert_eq!(analyzers, BTreeSet::from(["ownership"]));
    let (status, body) = grw.get("/analyze/istioGatewayHosts").await;
    assert_eq!(status, 503, "{body}");

    let grw = Grw::start(json!({"builtinAnalyzers": false}), &replay).await;
    grw.wait_ready(Duration::from_secs(60)).await;
    let (_, plugins) = grw.get("/api/v1/plugins").await;
    assert_eq!(plugins["items"], json!([]), "{plugins}");
    let (_, body) = settled_edges_or_none(&grw).await;
    assert_eq!(body["items"], json!([]), "{body}");
}

/// Against an API server, with a configuration file of the earlier GRW
/// (its keys only, no plugin directory): its Istio route answers.
#[tokio::test]
async fn the_earlier_grws_configuration_alone_answers_the_istio_route() {
    let fake = FakeApiServer::start(FakeApiOptions {
        token: Some(TOKEN.into()),
        ..FakeApiOptions::default()
    })
    .await;
    fake.load_recording(&bundled_recording(), None).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let config = json!({
        "minLogLevel": "info",
        "initialWatchingResources": [
            {"group": "apps", "version": "v1", "kind": "Deployment", "watchOptions": null,
             "notifiers": [{"webhookUrls": ["http://127.0.0.1:9/deployments"], "eventTypes": ["ADDED"]}]},
            {"group": "core", "version": "v1", "kind": "Pod"}
        ],
        "globalWebhookUrls": [],
        "enableSyncApiGroups": true,
        "apiGroupsSyncIntervalSecond": 30,
        "k8sClientConfig": {
            "autoInClusterConfig": false,
            "authType": "BearerToken",
            "kubeConfigFilePath": "",
            "apiServerUrl": fake.url(),
            "tokenFilePath": token_file,
            "autoKeepAlive": true,
            "autoReconnect": true
        }
    });
    let grw = Grw::start_in(dir, config, &[]).await;
    grw.wait_ready(Duration::from_secs(60)).await;
    // Asked at once: the route waits for the analyzer's first look.
    let (status, hosts) = grw.get("/analyze/istioGatewayHosts").await;
    assert_eq!(status, 200, "{hosts}");
    assert_eq!(hosts["message"], "Gateway hosts fetched");
    let data = hosts["data"].as_array().unwrap();
    assert_eq!(data.len(), 1, "{hosts}");
    assert_eq!(
        (&data[0]["namespace"], &data[0]["gatewayName"]),
        (&json!("ingress"), &json!("shop-gateway"))
    );
    let pairs: Vec<(&str, &str)> = data[0]["serviceHosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| {
            (
                h["serviceName"].as_str().unwrap(),
                h["host"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        pairs,
        [
            ("frontend", "frontend.shop.example.com"),
            ("payments-api", "api.shop.example.com")
        ]
    );
    let (_, shop) = grw.get("/analyze/istioGatewayHosts?ns=shop").await;
    assert_eq!(shop["data"], json!([]));
}

/// The index of a daemon that has nothing to analyze.
async fn settled_edges_or_none(grw: &Grw) -> (u16, Value) {
    let answered = eventually(Duration::from_secs(10), || async {
        grw.get("/api/v1/relations").await.1["pending"] == 0
    })
    .await;
    assert!(answered);
    grw.get("/api/v1/relations").await
}

#[tokio::test]
async fn relation_queries_explain_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = plugin_dir(dir.path(), &[]);
    let grw = Grw::start(
        json!({"pluginDir": plugins, "builtinAnalyzers": false}),
        &["--replay", bundled_recording().to_str().unwrap()],
    )
    .await;
    grw.wait_ready(Duration::from_secs(60)).await;
    let cases = [
        (
            "/api/v1/namespaces/shop/relations/pods/a?direction=up",
            400,
            "query parameter `direction` must be `out`, `in` or `both`, got `up`",
        ),
        (
            "/api/v1/namespaces/shop/relations/pods/a?depth=11",
            400,
            "query parameter `depth` must be a whole number from 1 to 10, got `11`",
        ),
        (
            "/api/v1/relations/pods/a",
            400,
            "kind `v1/Pod` is namespaced: use /api/v1/namespaces/{namespace}/relations/pods/a",
        ),
        ("/api/v1/namespaces/shop/relations/gizmos/a", 404, "gizmos"),
        (
            "/api/v1/relations?color=red",
            400,
            "unknown query parameter `color`; this route accepts: relation, analyzer, namespace",
        ),
    ];
    for (path, status, message) in cases {
        let (got, body) = grw.get(path).await;
        assert_eq!(got, status, "{path}: {body}");
        assert!(
            body["message"].as_str().unwrap().contains(message),
            "{path}: {body}"
        );
    }
    // No analyzer of VirtualServices: the compatibility route says what is missing.
    let (status, body) = grw.get("/analyze/istioGatewayHosts").await;
    assert_eq!(status, 503, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("turn the built-in `istio-gateways` on (config key `builtinAnalyzers`)"),
        "{body}"
    );
    // An object nothing relates to: itself, and no edges.
    let (status, body) = grw
        .get("/api/v1/namespaces/shop/relations/pods/nobody")
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["nodes"].as_array().unwrap().len(), 1);
    assert_eq!(body["nodes"][0]["exists"], false);
    assert_eq!(body["edges"], json!([]));
}

async fn cluster() -> FakeApiServer {
    FakeApiServer::start(FakeApiOptions {
        token: Some(TOKEN.into()),
        bookmark_interval: Duration::from_millis(500),
        istio_crds_installed: false,
    })
    .await
}

/// grw against `fake`, with `analyzers` in its plugin directory and no
/// configured kinds: the analyzers' interests and lookups decide what is
/// watched. The built-in analyzers are off, so that only those run.
async fn grw(fake: &FakeApiServer, analyzers: &[(&str, &str)]) -> Grw {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let plugins = plugin_dir(dir.path(), analyzers);
    let config = json!({
        "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": fake.url(), "tokenFilePath": token_file},
        "initialWatchingResources": [],
        "apiGroupsSyncIntervalSecond": 3600,
        "pluginDir": plugins,
        "pluginCacheDir": plugins.join(".cache"),
        "builtinAnalyzers": false,
    });
    let grw = Grw::start_in(dir, config, &[]).await;
    grw.wait_ready(Duration::from_secs(60)).await;
    grw
}

fn pod(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"namespace": "shop", "name": name, "labels": labels},
        "spec": {"containers": [{"name": "app", "image": "shop:1"}]}})
}

fn service(name: &str, selector: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"namespace": "shop", "name": name},
        "spec": {"selector": selector, "ports": [{"port": 80}]}})
}

/// The Pods `shop/web` selects now, as the API answers.
async fn selected(grw: &Grw) -> BTreeSet<String> {
    let (status, body) = grw
        .get("/api/v1/namespaces/shop/relations/services/web?direction=out&relation=selects")
        .await;
    assert_eq!(status, 200, "{body}");
    body["edges"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            e["to"]
                .as_str()
                .unwrap()
                .trim_start_matches("core/Pod shop/")
                .to_string()
        })
        .collect()
}

async fn until_selected(grw: &Grw, want: &[&str], within: Duration) -> Duration {
    let want: BTreeSet<String> = want.iter().map(|s| s.to_string()).collect();
    let started = Instant::now();
    loop {
        let now = selected(grw).await;
        if now == want {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < within,
            "web selects {now:?}, expected {want:?} within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_services_edges_follow_changes_at_either_end() {
    let fake = cluster().await;
    fake.create(service("web", json!({"app": "web"}))).unwrap();
    fake.create(pod("a", json!({"app": "web"}))).unwrap();
    fake.create(pod("db-1", json!({"app": "db"}))).unwrap();
    let grw = grw(&fake, &[("services", "grw-plugin-services")]).await;
    until_selected(&grw, &["a"], SETTLE).await;

    // A new Pod matching the Service's selector: an edge within a second.
    fake.create(pod("b", json!({"app": "web"}))).unwrap();
    let took = until_selected(&grw, &["a", "b"], Duration::from_secs(1)).await;
    eprintln!("a new matching Pod became an edge after {took:?}");

    // A change that cannot alter what the Service's lookup answers (not
    // its labels) does not call the analyzer again: only `c` does.
    let analyses = || async {
        let (_, status) = grw.get("/api/v1/plugins/services").await;
        status["analysis"]["analyses"].as_u64().unwrap()
    };
    let before = analyses().await;
    let mut annotated = pod("b", json!({"app": "web"}));
    annotated["metadata"]["annotations"] = json!({"note": "restarted"});
    fake.update(annotated).unwrap();
    fake.create(pod("c", json!({"app": "web"}))).unwrap();
    until_selected(&grw, &["a", "b", "c"], Duration::from_secs(5)).await;
    assert_eq!(analyses().await, before + 1);

    // A Pod whose labels change leaves the Service.
    fake.update(pod("a", json!({"app": "web-old"}))).unwrap();
    until_selected(&grw, &["b", "c"], Duration::from_secs(5)).await;

    // The Service's selector changes: it loses and gains edges.
    fake.update(service("web", json!({"app": "db"}))).unwrap();
    until_selected(&grw, &["db-1"], Duration::from_secs(5)).await;

    // A Pod that goes away takes its edge with it.
    fake.delete("v1", "Pod", Some("shop"), "db-1").unwrap();
    until_selected(&grw, &[], Duration::from_secs(5)).await;

    // The Service itself goes: its edges are removed, the index is empty.
    fake.update(service("web", json!({"app": "web"}))).unwrap();
    until_selected(&grw, &["b", "c"], Duration::from_secs(5)).await;
    fake.delete("v1", "Service", Some("shop"), "web").unwrap();
    let gone = eventually(Duration::from_secs(5), || async {
        let (_, body) = grw.get("/api/v1/relations").await;
        body["items"] == json!([])
    })
    .await;
    assert!(gone, "{}", grw.get("/api/v1/relations").await.1);

    // The Pods kind was watched for the analyzer's lookups, unasked.
    let watched = grw.watched_kinds().await;
    assert!(
        watched.iter().any(|k| k == "v1/Pod") && watched.iter().any(|k| k == "v1/Service"),
        "{watched:?}"
    );
}

fn deployment(replicas: u32, config_map: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"namespace": "shop", "name": "web"},
        "spec": {"replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "shop:1",
                             "volumeMounts": [{"name": "settings", "mountPath": "/etc/web"}]}],
                         "volumes": [{"name": "settings", "configMap": {"name": config_map}}]}}}})
}

/// `relation to via` of each edge of an answer.
fn edges_via(body: &Value) -> Vec<String> {
    body["edges"]
        .as_array()
        .unwrap_or_else(|| panic!("no edges: {body}"))
        .iter()
        .map(|e| {
            format!(
                "{} {} {} via={}",
                e["from"].as_str().unwrap(),
                e["relation"].as_str().unwrap(),
                e["to"].as_str().unwrap(),
                e["attributes"]["via"].as_str().unwrap_or("-")
            )
        })
        .collect()
}

/// A Deployment scaled to zero has no ReplicaSet with Pods to reach its
/// ConfigMap through, yet deleting the ConfigMap breaks its next Pod: the
/// built-in `references` reads its pod template, so it `uses` the
/// ConfigMap itself, one step out, and follows the template's changes.
#[tokio::test]
async fn a_deployment_scaled_to_zero_uses_the_config_map_its_template_mounts() {
    let fake = cluster().await;
    fake.create(deployment(0, "settings")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let config = json!({
        "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": fake.url(), "tokenFilePath": token_file},
        "initialWatchingResources": [],
        "apiGroupsSyncIntervalSecond": 3600,
        "builtinAnalyzers": ["references"],
    });
    let grw = Grw::start_in(dir, config, &[]).await;
    grw.wait_ready(Duration::from_secs(60)).await;

    let route = "/api/v1/namespaces/shop/relations/deployments/web?direction=out";
    let uses = |config_map: &str| {
        vec![format!(
            "apps/Deployment shop/web uses core/ConfigMap shop/{config_map} via=volume"
        )]
    };
    let found = eventually(SETTLE, || async {
        edges_via(&grw.get(route).await.1) == uses("settings")
    })
    .await;
    let (status, body) = grw.get(route).await;
    assert!(found, "{status} {body:#}");
    assert_eq!(body["depth"], 1, "{body}");
    let nodes = body["nodes"].as_array().unwrap();
    let root = nodes
        .iter()
        .find(|n| n["id"] == "apps/Deployment shop/web")
        .unwrap_or_else(|| panic!("no root: {body}"));
    assert_eq!(root["exists"], true, "{body}");
    assert_eq!(body["edges"][0]["analyzer"], "references", "{body}");

    // From the ConfigMap's side, what would break if it went.
    let (_, body) = grw
        .get("/api/v1/namespaces/shop/relations/configmaps/settings?direction=in")
        .await;
    assert_eq!(edges_via(&body), uses("settings"), "{body}");

    // The Deployments kind was watched for the analyzer alone.
    let watched = grw.watched_kinds().await;
    assert!(
        watched.iter().any(|k| k == "apps/v1/Deployment"),
        "{watched:?}"
    );

    // The template mounts another ConfigMap: the edge moves with it.
    fake.update(deployment(0, "settings-v2")).unwrap();
    let moved = eventually(Duration::from_secs(10), || async {
        edges_via(&grw.get(route).await.1) == uses("settings-v2")
    })
    .await;
    assert!(moved, "{}", grw.get(route).await.1);
}

fn config_map(name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"namespace": "shop", "name": name, "labels": labels}, "data": {}})
}

/// The `mentions` edges, with whether each is stale.
async fn mentions(grw: &Grw) -> Vec<(String, bool)> {
    let (_, body) = grw.get("/api/v1/relations?relation=mentions").await;
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                format!(
                    "{}>{}",
                    e["from"]
                        .as_str()
                        .unwrap()
                        .trim_start_matches("core/ConfigMap shop/"),
                    e["to"]
                        .as_str()
                        .unwrap()
                        .trim_start_matches("core/ConfigMap shop/")
                ),
                e["stale"].as_bool().unwrap(),
            )
        })
        .collect()
}

async fn until_mentions(grw: &Grw, want: &[(&str, bool)]) {
    let want: Vec<(String, bool)> = want.iter().map(|(e, s)| (e.to_string(), *s)).collect();
    let reached = eventually(Duration::from_secs(10), || async {
        mentions(grw).await == want
    })
    .await;
    assert!(
        reached,
        "mentions {:?}, expected {want:?}",
        mentions(grw).await
    );
}

#[tokio::test]
async fn a_handle_kept_past_its_call_traps_instead_of_reading_another_object() {
    let fake = cluster().await;
    fake.create(config_map("a", json!({"mentions": "b"})))
        .unwrap();
    fake.create(config_map("b", json!({}))).unwrap();
    let grw = grw(&fake, &[]).await;
    let plugins = grw.dir.path().join("plugins");
    // One instance, so the next call is made where the handle was kept.
    install(
        &plugins,
        "mentions",
        "grw-test-plugin-analyzer-fault",
        Some(json!({"kind": "analyzer", "limits": {"instances": 1}})),
    );
    until_mentions(&grw, &[("a>b", false)]).await;

    // `k`'s analysis keeps what its lookup of `b` answered...
    fake.create(config_map("k", json!({"mentions": "b", "fault": "keep"})))
        .unwrap();
    until_mentions(&grw, &[("a>b", false), ("k>b", false)]).await;
    // ... and the next analysis, of `a`, looks `a` up, then reads the kept
    // handle. Were handles numbered from each call's start, it would now
    // name `a` (an edge `read-kept` a>a); it traps instead, so `a` keeps
    // its last edges, marked stale, and reads nothing.
    fake.update(config_map("a", json!({"mentions": "c"})))
        .unwrap();
    until_mentions(&grw, &[("a>b", true), ("k>b", false)]).await;
    let (_, body) = grw.get("/api/v1/relations?relation=mentions").await;
    let reason = body["items"][0]["staleReason"].as_str().unwrap();
    assert!(
        reason.contains("used an object handle from an earlier call"),
        "{body}"
    );
    let (_, read) = grw.get("/api/v1/relations?relation=read-kept").await;
    assert_eq!(read["items"], json!([]), "{read}");

    // The instance that trapped is replaced; the next analysis is sound.
    fake.update(config_map("a", json!({"mentions": "d"})))
        .unwrap();
    until_mentions(&grw, &[("a>d", false), ("k>b", false)]).await;
}

#[tokio::test]
async fn an_analyzer_that_fails_keeps_its_last_good_edges_marked_stale() {
    let fake = cluster().await;
    fake.create(config_map("a", json!({"mentions": "b"})))
        .unwrap();
    fake.create(config_map("b", json!({}))).unwrap();
    let grw = grw(&fake, &[]).await;
    let plugins = grw.dir.path().join("plugins");
    install(
        &plugins,
        "mentions",
        "grw-test-plugin-analyzer-fault",
        Some(json!({"kind": "analyzer", "limits": {"timeoutMs": 200}})),
    );
    until_mentions(&grw, &[("a>b", false)]).await;

    // It traps on `a`: the edge stays, stale, with the reason.
    fake.update(config_map("a", json!({"mentions": "c", "fault": "trap"})))
        .unwrap();
    until_mentions(&grw, &[("a>b", true)]).await;
    let (_, body) = grw.get("/api/v1/relations?relation=mentions").await;
    assert!(
        body["items"][0]["staleReason"]
            .as_str()
            .unwrap()
            .contains("trapped"),
        "{body}"
    );
    let (_, status) = grw.get("/api/v1/plugins/mentions").await;
    assert_eq!(status["analysis"]["staleObjects"], 1, "{status}");
    assert!(
        status["analysis"]["failures"].as_u64().unwrap() >= 1,
        "{status}"
    );

    // Other objects are analyzed meanwhile, and queries are answered.
    fake.create(config_map("d", json!({"mentions": "b"})))
        .unwrap();
    until_mentions(&grw, &[("a>b", true), ("d>b", false)]).await;

    // It never returns on `d`: stopped at its deadline, the same way.
    fake.update(config_map("d", json!({"mentions": "a", "fault": "loop"})))
        .unwrap();
    until_mentions(&grw, &[("a>b", true), ("d>b", true)]).await;
    let (status, _) = grw.get("/api/v1/namespaces/shop/objects/configmaps").await;
    assert_eq!(status, 200);

    // Fixed: fresh edges, no longer stale.
    fake.update(config_map("a", json!({"mentions": "c"})))
        .unwrap();
    fake.update(config_map("d", json!({}))).unwrap();
    until_mentions(&grw, &[("a>c", false)]).await;
    let (_, status) = grw.get("/api/v1/plugins/mentions").await;
    assert_eq!(status["analysis"]["staleObjects"], 0, "{status}");
    assert_eq!(status["analysis"]["edges"], 1, "{status}");

    // The target `c` does not exist: the edge shows a missing object.
    let (_, around) = grw
        .get("/api/v1/namespaces/shop/relations/configmaps/a")
        .await;
    let c = around["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["name"] == "c")
        .cloned()
        .unwrap();
    assert_eq!(c["exists"], false, "{around}");
    fake.create(config_map("c", json!({}))).unwrap();
    let appeared = eventually(Duration::from_secs(5), || async {
        let (_, around) = grw
            .get("/api/v1/namespaces/shop/relations/configmaps/a")
            .await;
        around["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["name"] == "c" && n["exists"] == true)
    })
    .await;
    assert!(appeared);

    // A new version (here: another configuration) re-analyzes what it covers.
    let (_, status) = grw.get("/api/v1/plugins/mentions").await;
    let before = status["analysis"]["analyses"].as_u64().unwrap();
    install(
        &plugins,
        "mentions",
        "grw-test-plugin-analyzer-fault",
        Some(json!({"kind": "analyzer", "limits": {"timeoutMs": 300}})),
    );
    let reanalyzed = eventually(Duration::from_secs(10), || async {
        let (_, status) = grw.get("/api/v1/plugins/mentions").await;
        status["limits"]["timeoutMs"] == 300
            && status["analysis"]["analyses"].as_u64() >= Some(before + 4)
    })
    .await;
    assert!(
        reanalyzed,
        "{}",
        grw.get("/api/v1/plugins/mentions").await.1
    );
    until_mentions(&grw, &[("a>c", false)]).await;

    // Removed: its edges go with it.
    std::fs::remove_file(plugins.join("mentions.wasm")).unwrap();
    until_mentions(&grw, &[]).await;
}

/// `TYPE from relation to` of a watch-event delivery of a `Relation`.
fn relation_summary(body: &Value) -> String {
    let spec = &body["object"]["spec"];
    format!(
        "{} {} {} {}",
        body["type"].as_str().unwrap(),
        spec["from"]["name"].as_str().unwrap(),
        spec["relation"].as_str().unwrap(),
        spec["to"]["name"].as_str().unwrap()
    )
}

#[tokio::test]
async fn relationship_changes_go_through_the_outbox_and_are_caught_up_after_a_restart() {
    let fake = cluster().await;
    fake.create(service("web", json!({"app": "web"}))).unwrap();
    fake.create(pod("a", json!({"app": "web"}))).unwrap();
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let plugins = plugin_dir(dir.path(), &[("services", "grw-plugin-services")]);
    let config = json!({
        "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": fake.url(), "tokenFilePath": token_file},
        "initialWatchingResources": [],
        "apiGroupsSyncIntervalSecond": 3600,
        "pluginDir": plugins,
        "pluginCacheDir": plugins.join(".cache"),
        "dataDir": dir.path().join("data"),
        "subscriptions": [
            {"name": "edges", "kind": "Relation", "namespace": "shop",
             "labelSelector": "relation=selects",
             "webhook": {"url": receiver.url("/edges"), "payload": "watch-event"}},
            {"name": "no-pods-left", "kind": "relationsets.relations.grw.io",
             "labelSelector": "relation=selects,kind=Service,direction=out",
             "fieldSelector": "status.count=0", "eventTypes": ["MODIFIED"],
             "webhook": {"url": receiver.url("/empty"), "payload": "watch-event"}},
        ],
    });
    let first = Grw::start_in(dir, config.clone(), &[]).await;
    first.wait_ready(Duration::from_secs(60)).await;
    let settled = eventually(SETTLE, || async {
        let (_, body) = first.get("/api/v1/relations").await;
        body["settled"] == true && body["items"].as_array().unwrap().len() == 1
    })
    .await;
    assert!(settled, "{}", first.get("/api/v1/relations").await.1);

    // What related when GRW started is not news; what changes after is.
    // (Each step waits for its delivery: the index follows the caches'
    // current state, so an edge that comes and goes before its analysis
    // runs is never in it.)
    fake.create(pod("b", json!({"app": "web"}))).unwrap();
    receiver.wait_accepted(1, Duration::from_secs(10)).await;
    fake.delete("v1", "Pod", Some("shop"), "a").unwrap();
    receiver.wait_accepted(2, Duration::from_secs(10)).await;
    fake.delete("v1", "Pod", Some("shop"), "b").unwrap();
    let received = receiver.wait_accepted(4, Duration::from_secs(10)).await;
    let edges: Vec<String> = received
        .iter()
        .filter(|r| r.path == "/edges")
        .map(|r| relation_summary(&r.body))
        .collect();
    assert_eq!(
        edges,
        [
            "ADDED web selects b",
            "DELETED web selects a",
            "DELETED web selects b"
        ],
        "in order"
    );
    let empty: Vec<&Value> = received
        .iter()
        .filter(|r| r.path == "/empty")
        .map(|r| &r.body)
        .collect();
    assert_eq!(empty.len(), 1, "{empty:?}");
    assert_eq!(empty[0]["type"], "MODIFIED");
    assert_eq!(empty[0]["object"]["status"]["count"], 0);
    assert_eq!(empty[0]["object"]["spec"]["object"]["name"], "web");
    let ids: BTreeSet<&str> = received
        .iter()
        .map(|r| r.header("grw-delivery-id"))
        .collect();
    assert_eq!(ids.len(), 4, "each delivery has its own id");

    // Changes while GRW is down come out after the restart.
    let dir = first.kill();
    fake.create(pod("c", json!({"app": "web"}))).unwrap();
    let second = Grw::start_in(dir, config, &[]).await;
    second.wait_ready(Duration::from_secs(60)).await;
    let received = receiver.wait_accepted(5, Duration::from_secs(20)).await;
    assert!(received.len() >= 5, "{}", second.logs());
    assert_eq!(
        relation_summary(&received[4].body),
        "ADDED web selects c",
        "{}",
        second.logs()
    );
    // Nothing else arrives: no repeat of what was told before the restart.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(receiver.accepted().len(), 5);
}

/// What one burst left: the index's edges, the most changes seen waiting
/// for the analyzer at once, and how much the process grew.
struct Burst {
    edges: BTreeSet<String>,
    most_pending: usize,
    rss_growth_kib: u64,
}

/// The process's resident memory, KiB.
fn rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches(" kB").parse().ok())
        .unwrap()
}

/// The relations engine in this process, fed by a cache of 1,000
/// ConfigMaps that changes 100,000 times as fast as it can (each change
/// relabels one, so each is analyzed again), with the `mentions` analyzer
/// taking `delay_micros` per analysis.
async fn burst(delay_micros: u64) -> Burst {
    use grw::config::AllowedHosts;
    use grw::config::WatchOptions;
    use grw::gvk::{Gvk, ResourceInfo};
    use grw::kube::{Catalog, Discovery};
    use grw::metrics::Metrics;
    use grw::plugin::{ArtifactCache, Limits, Plugins};
    use grw::relations::Relations;
    use grw::store::{ChangeType, Origin, StoredObject};
    use grw::watch::{WatchSettings, Watches};
    use std::sync::Arc;

    const OBJECTS: usize = 1_000;
    const ROUNDS: usize = 100;
    let config_maps = ResourceInfo {
        gvk: Gvk::new("", "v1", "ConfigMap"),
        plural: "configmaps".into(),
        namespaced: true,
    };
    let settings = WatchSettings {
        history_size: 0,
        ..WatchSettings::default()
    };
    let watches = Arc::new(Watches::new(None, settings, Arc::new(Metrics::new())));
    let watch = watches.ensure(&config_maps, WatchOptions::default(), false);
    // 2 KB of data each, so that changes held anywhere show in memory.
    let payload = "x".repeat(2048);
    let mut version = 0u64;
    let mut object = |i: usize, mentions: usize| {
        version += 1;
        let object = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"namespace": "shop", "name": format!("cm-{i}"), "uid": format!("u-{i}"),
                "resourceVersion": version.to_string(),
                "labels": {"mentions": format!("cm-{}", mentions % OBJECTS)}},
            "data": {"payload": payload}});
        StoredObject::from_value(object, &config_maps.gvk, false).unwrap()
    };
    for i in 0..OBJECTS {
        let added = object(i, i);
        watch.cache.apply(ChangeType::Added, added, Origin::Initial);
    }
    watch.cache.mark_synced();

    let dir = tempfile::tempdir().unwrap();
    install(
        dir.path(),
        "mentions",
        "grw-test-plugin-analyzer-fault",
        Some(json!({"kind": "analyzer", "config": {"delayMicros": delay_micros}})),
    );
    let plugins = Plugins::new(
        dir.path().to_path_buf(),
        Some(ArtifactCache::new(dir.path().join(".cache"))),
        Limits::default(),
        AllowedHosts::none(),
        Arc::new(Metrics::new()),
    )
    .unwrap();
    plugins.scan();
    let discovery = Arc::new(Discovery::fixed(Catalog::fixed(vec![config_maps.clone()])));
    let relations = Relations::start(watches.clone(), discovery, plugins);
    let settle = |relations: Arc<Relations>| async move {
        let settled = eventually(SETTLE, || async {
            relations.pending() == 0 && relations.graph().edges().count() == OBJECTS
        })
        .await;
        assert!(settled, "{} waiting", relations.pending());
    };
    settle(relations.clone()).await;

    let rss_before = rss_kib();
    let mut most_pending = 0;
    for round in 1..=ROUNDS {
        for i in 0..OBJECTS {
            let changed = object(i, i + round);
            watch
                .cache
                .apply(ChangeType::Modified, changed, Origin::Watch);
        }
        most_pending = most_pending.max(relations.pending());
        tokio::task::yield_now().await;
    }
    let rss_after = rss_kib();
    settle(relations.clone()).await;
    let edges = relations
        .graph()
        .edges()
        .map(|e| format!("{}>{}", e.from.name, e.to.name))
        .collect();
    Burst {
        edges,
        most_pending,
        rss_growth_kib: rss_after.saturating_sub(rss_before),
    }
}

/// The engine's queue is bounded (`grw::relations::QUEUE_CAPACITY`): under
/// an analyzer far slower than a burst of 100,000 changes, what waits
/// stays within the queue (a feed that finds it full falls behind its
/// cache and starts over from the cache's state), so memory does not grow
/// with the burst, and the index ends where a fast analyzer's does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_under_a_slow_analyzer_waits_in_bounded_memory_and_ends_alike() {
    let fast = burst(0).await;
    let slow = burst(300).await;
    let expected: BTreeSet<String> = (0..1_000)
        .map(|i| format!("cm-{i}>cm-{}", (i + 100) % 1_000))
        .collect();
    assert_eq!(fast.edges, expected);
    assert_eq!(slow.edges, expected);
    // The queue, plus what each of the two feeds (ConfigMaps and nothing
    // else) may hold while it waits for room, plus signals.
    let bound = grw::relations::QUEUE_CAPACITY + 4;
    assert!(
        slow.most_pending <= bound,
        "{} changes waited at once, more than {bound}",
        slow.most_pending
    );
    // 100,000 changes of 2 KB objects: held until analyzed they would take
    // 200 MB and more.
    assert!(
        slow.rss_growth_kib < 64 * 1024,
        "the process grew by {} KiB over the burst",
        slow.rss_growth_kib
    );
    eprintln!(
        "fast: {} waiting at most, {} KiB; slow: {} waiting at most, {} KiB",
        fast.most_pending, fast.rss_growth_kib, slow.most_pending, slow.rss_growth_kib
    );
}

#[tokio::test]
async fn an_analyzer_s_lookups_cannot_hold_more_than_its_memory_limit() {
    let fake = cluster().await;
    for name in ["a", "b", "c"] {
        fake.create(config_map(name, json!({}))).unwrap();
    }
    let grw = grw(&fake, &[]).await;
    let plugins = grw.dir.path().join("plugins");
    install(
        &plugins,
        "mentions",
        "grw-test-plugin-analyzer-fault",
        Some(json!({"kind": "analyzer", "limits": {"memoryMb": 8, "timeoutMs": 20000}})),
    );
    // `h` lists its namespace's ConfigMaps until a list is refused. Each
    // answer is dropped by the guest, but GRW keeps what a call found until
    // the call ends: 8 MiB of them is all the call may hold.
    fake.create(config_map("h", json!({"fault": "hoard"})))
        .unwrap();
    let refused = || async {
        let (_, body) = grw.get("/api/v1/relations?relation=refused").await;
        body["items"].as_array().cloned().unwrap_or_default()
    };
    assert!(
        eventually(SETTLE, || async { !refused().await.is_empty() }).await,
        "no list was refused: {}",
        grw.get("/api/v1/plugins/mentions").await.1
    );
    let edges = refused().await;
    let error = edges[0]["attributes"]["error"].as_str().unwrap();
    assert!(
        error.contains("over the plugin's memory limit of 8388608 bytes (limits.memoryMb)"),
        "{error}"
    );
    // The call answered: the refusal reached the guest as an error, not a trap.
    let (_, status) = grw.get("/api/v1/plugins/mentions").await;
    assert_eq!(status["analysis"]["staleObjects"], 0, "{status}");
}
