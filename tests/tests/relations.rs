//! Relationship analysis end to end: the real `grw` with the shipped
//! analyzer components, over the bundled recording and against the fake
//! API server, with edges following changes at either end, analyzer
//! faults, reloads and removals, and the routes that answer from the index.

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
    assert_eq!(found.len(), 368);

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
    assert_eq!(total, 368);

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

#[tokio::test]
async fn relation_queries_explain_bad_input() {
    let dir = tempfile::tempdir().unwrap();
    let plugins = plugin_dir(dir.path(), &[]);
    let grw = Grw::start(
        json!({"pluginDir": plugins}),
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
            .contains("put plugins/istio-gateways into pluginDir"),
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
/// watched.
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
    let (_, kinds) = grw.get("/api/v1/kinds").await;
    let watched: Vec<&str> = kinds["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|k| k["gvk"].as_str())
        .collect();
    assert!(
        watched.contains(&"v1/Pod") && watched.contains(&"v1/Service"),
        "{watched:?}"
    );
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
