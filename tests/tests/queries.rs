//! Queries that cost, end to end against the fake API server: field
//! selectors on indexed fields answered from the index (no object read),
//! others read on the query threads within their budget, and the answers a
//! caller gets when the threads are busy (429) or a query spends its budget
//! (504), on the native and the Kubernetes routes alike.

use std::time::Duration;

use grw_e2e::daemon::Grw;
use grw_e2e::fake_api::{FakeApiOptions, FakeApiServer};
use serde_json::{Value, json};

const TOKEN: &str = "qu3ries";
const READY: Duration = Duration::from_secs(60);
const PODS: usize = 3000;
const NODES: usize = 10;

fn pod(i: usize) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"namespace": format!("ns-{}", i % 7), "name": format!("pod-{i}"),
            "uid": format!("uid-{i}"), "labels": {"app": format!("app-{}", i % 5)},
            "annotations": {"note": "x".repeat(200)}},
        "spec": {"nodeName": format!("node-{}", i % NODES),
            "schedulerName": if i.is_multiple_of(100) { "special" } else { "default-scheduler" },
            "containers": [{"name": "app", "image": format!("registry.example/app:{i}")}]},
        "status": {"phase": if i.is_multiple_of(3) { "Pending" } else { "Running" }}})
}

async fn cluster() -> FakeApiServer {
    let fake = FakeApiServer::start(FakeApiOptions {
        token: Some(TOKEN.into()),
        ..FakeApiOptions::default()
    })
    .await;
    for i in 0..PODS {
        fake.create(pod(i)).unwrap();
    }
    fake
}

async fn grw(fake: &FakeApiServer, queries: Value) -> Grw {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let config = json!({
        "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": fake.url(), "tokenFilePath": token_file},
        "initialWatchingResources": [{"group": "", "version": "v1", "kind": "Pod"}],
        "apiGroupsSyncIntervalSecond": 3600,
        "builtinAnalyzers": false,
        "queries": queries,
    });
    let grw = Grw::start_in(dir, config, &[]).await;
    grw.wait_ready(READY).await;
    grw
}

fn names(body: &Value) -> Vec<String> {
    let mut names: Vec<String> = body["items"]
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {body}"))
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    names.sort();
    names
}

fn expected(keep: impl Fn(usize) -> bool) -> Vec<String> {
    let mut names: Vec<String> = (0..PODS)
        .filter(|i| keep(*i))
        .map(|i| format!("pod-{i}"))
        .collect();
    names.sort();
    names
}

/// `grw_query_examined_objects_total`.
async fn examined(grw: &Grw) -> u64 {
    grw.metric("grw_query_examined_objects_total").await
}

#[tokio::test]
async fn indexed_fields_are_answered_without_reading_objects_and_others_on_the_query_threads() {
    let fake = cluster().await;
    let grw = grw(&fake, json!({"threads": 1})).await;
    let before = examined(&grw).await;
    for path in [
        "/api/v1/objects/pods?fieldSelector=spec.nodeName%3Dnode-3",
        "/kube/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-3",
    ] {
        let (status, body) = grw.get(path).await;
        assert_eq!(status, 200, "{path}: {body}");
        assert_eq!(names(&body), expected(|i| i % NODES == 3), "{path}");
    }
    let (status, body) = grw
        .get("/kube/api/v1/namespaces/ns-2/pods?fieldSelector=status.phase%3DPending,spec.nodeName%3Dnode-1")
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        names(&body),
        expected(|i| i % 7 == 2 && i.is_multiple_of(3) && i % NODES == 1)
    );
    // Neither read an object: both fields are indexed for Pods.
    assert_eq!(examined(&grw).await, before);

    // A field no index holds: every Pod is read, on the query thread.
    let (status, body) = grw
        .get("/api/v1/objects/pods?fieldSelector=spec.schedulerName%3Dspecial")
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(names(&body), expected(|i| i.is_multiple_of(100)));
    assert_eq!(examined(&grw).await, before + PODS as u64);

    // The index follows changes.
    let mut moved = pod(3);
    moved["spec"]["nodeName"] = json!("node-4");
    fake.update(moved).unwrap();
    let gone = grw_e2e::daemon::eventually(Duration::from_secs(10), || async {
        let (_, body) = grw
            .get("/api/v1/objects/pods?fieldSelector=spec.nodeName%3Dnode-3")
            .await;
        !names(&body).contains(&"pod-3".to_string())
    })
    .await;
    assert!(gone, "pod-3 left node-3 in the index");
    let (_, body) = grw
        .get("/api/v1/objects/pods?fieldSelector=spec.nodeName%3Dnode-4")
        .await;
    assert!(names(&body).contains(&"pod-3".to_string()));
}

#[tokio::test]
async fn a_query_that_spends_its_budget_is_stopped_with_504_and_says_how_to_narrow_it() {
    let fake = cluster().await;
    let grw = grw(&fake, json!({"threads": 1, "budgetMillis": 1})).await;
    // Reading 3,000 Pods takes far more than a millisecond of CPU.
    let (status, body) = grw
        .get("/api/v1/objects/pods?fieldSelector=spec.schedulerName%3Dspecial")
        .await;
    assert_eq!(status, 504, "{body}");
    assert_eq!(body["reason"], "Timeout");
    let message = body["message"].as_str().unwrap();
    assert!(message.contains("queries.budgetMillis"), "{message}");
    assert!(message.contains("narrow it"), "{message}");

    let (status, body) = grw
        .get("/kube/api/v1/pods?fieldSelector=spec.schedulerName%3Dspecial")
        .await;
    assert_eq!(status, 504, "{body}");
    assert_eq!(
        (body["kind"].as_str(), body["reason"].as_str()),
        (Some("Status"), Some("Timeout"))
    );

    // A Table of every Pod reads every Pod too.
    let table = reqwest::Client::new()
        .get(format!("{}/kube/api/v1/pods", grw.url))
        .header("accept", "application/json;as=Table;v=v1;g=meta.k8s.io")
        .send()
        .await
        .unwrap();
    assert_eq!(table.status().as_u16(), 504);

    // What the indexes answer costs no budget.
    let (status, body) = grw
        .get("/kube/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-3")
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(names(&body).len(), PODS / NODES);
    let metrics = grw.get_raw("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("grw_query_refused_total{reason=\"budget\"} 3"),
        "{metrics}"
    );
}

#[tokio::test]
async fn callers_beyond_the_threads_and_queue_get_429_with_retry_after() {
    let fake = cluster().await;
    let grw = grw(&fake, json!({"threads": 1, "queue": 1})).await;
    let url = format!(
        "{}/kube/api/v1/pods?fieldSelector=spec.schedulerName%3Dspecial",
        grw.url
    );
    let client = reqwest::Client::new();
    let answers = futures::future::join_all((0..8).map(|_| {
        let (client, url) = (client.clone(), url.clone());
        async move {
            let response = client.get(&url).send().await.unwrap();
            let status = response.status().as_u16();
            let retry_after = response
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().to_string());
            let body: Value = response.json().await.unwrap();
            (status, retry_after, body)
        }
    }))
    .await;
    let served = answers.iter().filter(|(status, ..)| *status == 200).count();
    let refused: Vec<_> = answers
        .iter()
        .filter(|(status, ..)| *status == 429)
        .collect();
    // One runs, one may wait; of eight sent at once, the others are refused.
    assert!(served >= 1, "{answers:?}");
    assert!(!refused.is_empty(), "{answers:?}");
    assert_eq!(served + refused.len(), 8, "{answers:?}");
    for (_, retry_after, body) in refused {
        assert_eq!(retry_after.as_deref(), Some("1"));
        assert_eq!(body["reason"], "TooManyRequests");
        assert_eq!(body["details"]["retryAfterSeconds"], 1);
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("1 at a time, 1 waiting"),
            "{body}"
        );
    }
    // Exact GETs never wait for the query threads.
    let (status, body) = grw.get("/kube/api/v1/namespaces/ns-3/pods/pod-3").await;
    assert_eq!(status, 200, "{body}");
}
