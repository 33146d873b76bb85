//! No caller makes GRW hold resources for ever: watches queries start are
//! closed at the API server and removed once unused for
//! `onDemandIdleSeconds`, at most `maxOnDemandWatches` exist, every event
//! stream ends, a client's `timeoutSeconds` is bounded, and an `ownerKind`
//! lookup is allowed only to a caller who may list the owner's kind.

use std::time::Duration;

use grw_e2e::daemon::{EventStream, Grw, edge_line, eventually};
use grw_e2e::fake_api::{FakeApiOptions, FakeApiServer, Rule, Subject};
use serde_json::{Value, json};

const TOKEN: &str = "t0k3n";
const READY: Duration = Duration::from_secs(30);
/// Longer than the idle period of these tests, with room for a slow machine.
const REMOVED_WITHIN: Duration = Duration::from_secs(15);

async fn fake() -> FakeApiServer {
    let fake = FakeApiServer::start(FakeApiOptions {
        token: Some(TOKEN.into()),
        ..FakeApiOptions::default()
    })
    .await;
    for namespace in ["a", "b"] {
        fake.create(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
        )
        .unwrap();
        fake.create(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "settings", "namespace": namespace, "labels": {"app": "web"}},
            "data": {"k": "v"},
        }))
        .unwrap();
    }
    fake
}

/// `grw` watching Pods from its config, without analyzers (which would
/// make the watches queries start permanent), with `extra` config keys.
async fn grw(fake: &FakeApiServer, extra: Value) -> Grw {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let mut config = json!({
        "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": fake.url(), "tokenFilePath": token_file},
        "initialWatchingResources": [{"group": "core", "version": "v1", "kind": "Pod"}],
        "builtinAnalyzers": false,
        "apiGroupsSyncIntervalSecond": 3600,
        // These tests count the watches open: no Events watch besides.
        "journal": {"events": false},
    });
    for (k, v) in extra.as_object().into_iter().flatten() {
        config[k] = v.clone();
    }
    let grw = Grw::start_in(dir, config, &[]).await;
    grw.wait_ready(READY).await;
    grw
}

/// The watches of core kinds `/api/v1/kinds` lists, as `gvk namespace`
/// (GRW's own kinds and CustomResourceDefinitions are always watched).
async fn listed(grw: &Grw) -> Vec<String> {
    let (_, kinds) = grw.get("/api/v1/kinds").await;
    let mut listed: Vec<String> = kinds["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["gvk"].as_str().unwrap().starts_with("v1/"))
        .map(|k| {
            format!(
                "{} {}",
                k["gvk"].as_str().unwrap(),
                k["namespace"].as_str().unwrap_or("*")
            )
        })
        .collect();
    listed.sort();
    listed
}

#[tokio::test]
async fn an_unused_watch_a_query_started_is_closed_and_removed_a_configured_one_stays() {
    let fake = fake().await;
    let grw = grw(&fake, json!({"onDemandIdleSeconds": 2})).await;
    // Pods from the config, and CustomResourceDefinitions, which GRW
    // always watches.
    let configured = fake.open_watches();
    assert_eq!(configured, 2);

    let (status, body) = grw.get("/api/v1/objects/configmaps").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["items"].as_array().unwrap().len(), 2);
    assert_eq!(listed(&grw).await, ["v1/ConfigMap *", "v1/Pod *"]);
    assert_eq!(fake.open_watches(), configured + 1);
    // The kinds say which will go.
    let (_, kinds) = grw.get("/api/v1/kinds").await;
    let removable = |gvk: &str| {
        kinds["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["gvk"] == gvk)
            .map(|k| k["removedWhenIdle"].clone())
    };
    assert_eq!(removable("v1/ConfigMap"), Some(json!(true)), "{kinds}");
    assert_eq!(removable("v1/Pod"), Some(json!(false)), "{kinds}");

    let removed = eventually(REMOVED_WITHIN, || async {
        listed(&grw).await == ["v1/Pod *"] && fake.open_watches() == configured
    })
    .await;
    assert!(
        removed,
        "the ConfigMap watch is still there: {:?}, {} open at the API server",
        listed(&grw).await,
        fake.open_watches()
    );
    let metrics = grw.get_raw("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("grw_on_demand_watches_removed_total 1"),
        "{metrics}"
    );
    assert!(metrics.contains("grw_on_demand_watches 0"), "{metrics}");

    // Asked again, it is watched again.
    let (status, _) = grw.get("/api/v1/objects/configmaps").await;
    assert_eq!(status, 200);
    assert_eq!(fake.open_watches(), configured + 1);
}

/// The edges `/api/v1/relations` has to or from ConfigMaps, as
/// `from relation to`.
async fn config_map_edges(grw: &Grw) -> Vec<String> {
    let (status, body) = grw.get("/api/v1/relations").await;
    assert_eq!(status, 200, "{body}");
    body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(edge_line)
        .filter(|line| line.contains("/ConfigMap "))
        .collect()
}

/// Waits until the ConfigMaps' edges are `want`; else fails saying `why`.
async fn until_config_map_edges(grw: &Grw, want: &[&str], why: &str) {
    let reached = eventually(REMOVED_WITHIN, || async {
        config_map_edges(grw).await == want
    })
    .await;
    assert!(reached, "{why}: {:?}", config_map_edges(grw).await);
}

const CONFIG_MAP_OWNED: &str = "apps/Deployment a/web owns core/ConfigMap a/owned";

#[tokio::test]
async fn analyzers_of_every_kind_follow_a_watch_a_query_started_without_keeping_it() {
    let fake = fake().await;
    fake.create(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "owned", "namespace": "a", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "d-1", "controller": true}
        ]},
    }))
    .unwrap();
    // The built-in `ownership` analyzer takes every kind that is watched.
    let grw = grw(
        &fake,
        json!({"onDemandIdleSeconds": 2, "builtinAnalyzers": ["ownership"]}),
    )
    .await;
    let configured = fake.open_watches();

    let (status, body) = grw.get("/api/v1/objects/configmaps").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(fake.open_watches(), configured + 1);
    // While the watch lasts, the analyzer reads its objects...
    until_config_map_edges(&grw, &[CONFIG_MAP_OWNED], "the ConfigMap is not analyzed").await;

    // ...and it is removed all the same, its edges with it.
    let removed = eventually(REMOVED_WITHIN, || async {
        listed(&grw).await == ["v1/Pod *"] && fake.open_watches() == configured
    })
    .await;
    assert!(
        removed,
        "the ConfigMap watch stays: {:?}, {} open at the API server",
        listed(&grw).await,
        fake.open_watches()
    );
    until_config_map_edges(&grw, &[], "edges of objects no longer watched").await;

    // Watched again, analyzed again.
    let (status, _) = grw.get("/api/v1/objects/configmaps").await;
    assert_eq!(status, 200);
    until_config_map_edges(&grw, &[CONFIG_MAP_OWNED], "not analyzed again").await;
}

#[tokio::test]
async fn an_open_stream_keeps_its_watch() {
    let fake = fake().await;
    let grw = grw(&fake, json!({"onDemandIdleSeconds": 1})).await;
    let configured = fake.open_watches();
    let mut stream = grw
        .stream("/api/v1/namespaces/a/objects/configmaps?watch=true&dedicated=true")
        .await;
    assert_eq!(
        stream.next(Duration::from_secs(5)).await.unwrap()["type"],
        "ADDED"
    );
    tokio::time::sleep(Duration::from_secs(4)).await;
    assert_eq!(listed(&grw).await, ["v1/ConfigMap a", "v1/Pod *"]);
    assert_eq!(fake.open_watches(), configured + 1);
    // Changes still arrive through it.
    fake.create(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "more", "namespace": "a"}}))
        .unwrap();
    let next = stream.next(Duration::from_secs(5)).await.unwrap();
    assert_eq!(
        (&next["type"], &next["object"]["metadata"]["name"]),
        (&json!("ADDED"), &json!("more"))
    );

    drop(stream);
    let removed = eventually(REMOVED_WITHIN, || async {
        listed(&grw).await == ["v1/Pod *"] && fake.open_watches() == configured
    })
    .await;
    assert!(
        removed,
        "not removed once its stream ended: {:?}",
        listed(&grw).await
    );
}

#[tokio::test]
async fn over_the_quota_a_query_needing_a_new_watch_gets_429() {
    let fake = fake().await;
    let grw = grw(&fake, json!({"maxOnDemandWatches": 2})).await;
    let configured = fake.open_watches();
    let http = reqwest::Client::new();
    let get = |path: String| {
        let request = http.get(format!("{}{path}", grw.url));
        async move {
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            let retry_after = response
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().to_string());
            (status, retry_after, response.json::<Value>().await.unwrap())
        }
    };
    for n in 1..=2 {
        let (status, _, body) = get(format!(
            "/api/v1/namespaces/a/objects/configmaps?dedicated=true&labelSelector=n%3D{n}"
        ))
        .await;
        assert_eq!(status, 200, "{body}");
    }
    let (status, retry_after, body) =
        get("/api/v1/namespaces/a/objects/configmaps?dedicated=true&labelSelector=n%3D3".into())
            .await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(body["reason"], "TooManyWatches");
    let message = body["message"].as_str().unwrap();
    assert!(
        message
            .starts_with("GRW already holds 2 watches that queries started (maxOnDemandWatches)"),
        "{message}"
    );
    let seconds: u64 = retry_after.expect("Retry-After").parse().unwrap();
    assert!((1..=600).contains(&seconds), "{seconds}");

    // The Kubernetes routes answer as the API server does.
    let (status, retry_after, body) = get("/kube/api/v1/namespaces/b/configmaps".into()).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(
        (&body["kind"], &body["reason"]),
        (&json!("Status"), &json!("TooManyRequests"))
    );
    assert!(
        body["details"]["retryAfterSeconds"].as_u64().is_some(),
        "{body}"
    );
    assert!(retry_after.is_some());

    // What is watched already is still answered, and nothing more was
    // opened at the API server.
    let (status, _, _) =
        get("/api/v1/namespaces/a/objects/configmaps?dedicated=true&labelSelector=n%3D1".into())
            .await;
    assert_eq!(status, 200);
    assert_eq!(fake.open_watches(), configured + 2);
    let metrics = grw.get_raw("/metrics").await.text().await.unwrap();
    assert!(metrics.contains("grw_on_demand_watches 2"), "{metrics}");
    assert!(
        metrics.contains("grw_on_demand_watches_refused_total 2"),
        "{metrics}"
    );
}

#[tokio::test]
async fn streams_end_and_a_huge_timeout_is_bounded_on_both_routes() {
    let fake = fake().await;
    let grw = grw(&fake, json!({"watchStreamMaxSeconds": 2})).await;
    let ends_within = |mut stream: EventStream, limit: Duration| async move {
        let started = std::time::Instant::now();
        while stream.next(limit).await.is_some() {
            assert!(started.elapsed() < limit, "the stream outlived {limit:?}");
        }
        started.elapsed() < limit
    };

    // The native stream: its own timeoutSeconds...
    let stream = grw
        .stream("/api/v1/objects/pods?watch=true&timeoutSeconds=1")
        .await;
    assert!(ends_within(stream, Duration::from_secs(10)).await);
    // ...none: at most watchStreamMaxSeconds...
    let stream = grw.stream("/api/v1/objects/pods?watch=true").await;
    assert!(ends_within(stream, Duration::from_secs(10)).await);
    // ...more than a day: refused, naming the parameter.
    let (status, body) = grw
        .get("/api/v1/objects/pods?watch=true&timeoutSeconds=18446744073709551615")
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("timeoutSeconds"),
        "{body}"
    );

    // The Kubernetes routes: the largest number that parses is cut to
    // watchStreamMaxSeconds, and the daemon goes on serving.
    let path = "/kube/api/v1/pods?watch=true&timeoutSeconds=18446744073709551615";
    let stream = grw.stream(path).await;
    assert!(ends_within(stream, Duration::from_secs(10)).await);
    let stream = grw
        .stream("/kube/api/v1/pods?watch=true&timeoutSeconds=3600")
        .await;
    assert!(ends_within(stream, Duration::from_secs(10)).await);
    let (status, _) = grw.get("/kube/api/v1/pods").await;
    assert_eq!(status, 200);
    assert!(!grw.logs().contains("panicked"), "{}", grw.logs());
}

#[tokio::test]
async fn an_owner_lookup_needs_the_callers_permission_to_list_the_owners_kind() {
    let fake = FakeApiServer::start(FakeApiOptions {
        token: Some(TOKEN.into()),
        ..FakeApiOptions::default()
    })
    .await;
    fake.create(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a"}}))
        .unwrap();
    fake.add_token("jane-token", "jane", &["developers"]);
    fake.grant(
        Subject::User("jane".into()),
        Rule::namespaced("a", &["get", "list", "watch"], "", &["pods"]),
    );
    fake.add_token("ops-token", "ops", &["operators"]);
    fake.grant(
        Subject::User("ops".into()),
        Rule::namespaced("a", &["get", "list", "watch"], "", &["pods"]),
    );
    fake.grant(
        Subject::User("ops".into()),
        Rule::namespaced("a", &["list"], "apps", &["replicasets"]),
    );
    let grw = grw(&fake, json!({"apiAuth": "delegated"})).await;
    let http = reqwest::Client::new();
    let get = |token: &'static str, path: &'static str| {
        let request = http.get(format!("{}{path}", grw.url)).bearer_auth(token);
        async move {
            let response = request.send().await.unwrap();
            (
                response.status().as_u16(),
                response.json::<Value>().await.unwrap(),
            )
        }
    };
    let path = "/api/v1/namespaces/a/objects/pods?ownerKind=ReplicaSet&ownerName=web";
    let (status, body) = get("jane-token", path).await;
    assert_eq!(status, 403, "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(
        message.contains("`replicasets`")
            && message.contains(r#"User "jane" cannot list resource "replicasets" in API group "apps" in the namespace "a""#),
        "{message}"
    );
    // No watch of ReplicaSets was started for her.
    assert!(
        !fake
            .requests()
            .iter()
            .any(|r| r.path.contains("replicasets")),
        "{:?}",
        fake.requests()
    );
    // The same on the Kubernetes routes.
    let (status, body) = get(
        "jane-token",
        "/kube/api/v1/namespaces/a/pods?ownerKind=ReplicaSet&ownerName=web",
    )
    .await;
    assert_eq!(
        (status, &body["reason"]),
        (403, &json!("Forbidden")),
        "{body}"
    );
    // A caller who may list ReplicaSets there gets the (empty) answer.
    let (status, body) = get("ops-token", path).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["items"], json!([]));
    // The lookup was asked as a list of the owner's kind in the namespace.
    assert!(
        fake.access_reviews()
            .iter()
            .any(|spec| spec["user"] == "jane"
                && spec["resourceAttributes"]["resource"] == "replicasets"
                && spec["resourceAttributes"]["verb"] == "list"
                && spec["resourceAttributes"]["namespace"] == "a"),
        "{:?}",
        fake.access_reviews()
    );
}

#[tokio::test]
async fn the_native_stream_follows_a_selection_as_the_kubernetes_watch_does() {
    let fake = fake().await;
    let grw = grw(&fake, json!({})).await;
    let mut streams = [
        grw.stream("/api/v1/namespaces/a/objects/configmaps?watch=true&labelSelector=app%3Dweb")
            .await,
        grw.stream("/kube/api/v1/namespaces/a/configmaps?watch=true&labelSelector=app%3Dweb")
            .await,
    ];
    for stream in &mut streams {
        assert_eq!(stream.next(READY).await.unwrap()["type"], "ADDED");
    }
    // The label goes: the object leaves the selection, then comes back.
    let mut settings = json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "settings", "namespace": "a", "labels": {"app": "db"}},
        "data": {"k": "v"},
    });
    let left = fake.update(settings.clone()).unwrap();
    settings["metadata"]["labels"]["app"] = json!("web");
    fake.update(settings).unwrap();
    for stream in &mut streams {
        let gone = stream.next(READY).await.unwrap();
        assert_eq!(gone["type"], "DELETED", "{gone}");
        assert_eq!(gone["object"]["metadata"]["labels"]["app"], "web");
        assert_eq!(
            gone["object"]["metadata"]["resourceVersion"],
            left.to_string()
        );
        assert_eq!(stream.next(READY).await.unwrap()["type"], "ADDED");
    }
}
