//! Several replicas of the real `grw` against the fake API server: one
//! delivers, chosen by a `coordination.k8s.io/v1` Lease; when it dies,
//! another takes over without losing a change, repeating only deliveries
//! with the ids the receiver already saw.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use grw_e2e::daemon::{Grw, eventually};
use grw_e2e::fake_api::{FakeApiOptions, FakeApiServer};
use grw_e2e::receiver::{Received, Receiver};
use serde_json::{Value, json};

const TOKEN: &str = "t0k3n";
const READY: Duration = Duration::from_secs(30);
const WAIT: Duration = Duration::from_secs(30);

async fn cluster() -> FakeApiServer {
    let fake = FakeApiServer::start(FakeApiOptions {
        token: Some(TOKEN.into()),
        bookmark_interval: Duration::from_millis(500),
        istio_crds_installed: false,
    })
    .await;
    fake.create(configmap("counter", "start")).unwrap();
    fake
}

fn configmap(name: &str, data: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"namespace": "shop", "name": name},
           "data": {"k": data}})
}

/// A replica named `identity`, delivering ConfigMap changes to `url`.
async fn replica(fake: &FakeApiServer, identity: &str, url: &str, lease_seconds: f64) -> Grw {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let config = json!({
        "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": fake.url(), "tokenFilePath": token_file},
        "initialWatchingResources": [{"version": "v1", "kind": "ConfigMap"}],
        "apiGroupsSyncIntervalSecond": 3600,
        "dataDir": dir.path().join("data"),
        "leaderElection": {
            "leaseName": "grw", "leaseNamespace": "grw", "identity": identity,
            "leaseDurationSeconds": lease_seconds,
            "renewDeadlineSeconds": lease_seconds * 0.75,
            "retryPeriodSeconds": 0.2,
        },
        "subscriptions": [{
            "name": "changes", "kind": "ConfigMap", "namespace": "shop",
            "webhook": {"url": url, "payload": "watch-event"},
            "retry": {"initialDelayMs": 50, "maxDelaySeconds": 0.3}
        }],
    });
    let grw = Grw::start_in(dir, config, &[]).await;
    grw.wait_ready(READY).await;
    grw
}

async fn leads(grw: &Grw) -> bool {
    let metrics = grw
        .get_raw("/metrics")
        .await
        .text()
        .await
        .unwrap_or_default();
    metrics.lines().any(|l| l == "grw_leader 1")
}

fn holder(fake: &FakeApiServer) -> Value {
    fake.get("coordination.k8s.io/v1", "Lease", Some("grw"), "grw")
        .map_or(Value::Null, |lease| lease["spec"].clone())
}

/// The value each delivery carries, in order of first arrival, after
/// checking that a repeated delivery id always carries the same change.
fn values_once(received: &[Received]) -> Vec<String> {
    let mut by_id: BTreeMap<String, Value> = BTreeMap::new();
    let mut values = Vec::new();
    for r in received {
        let id = r.header("grw-delivery-id").to_string();
        match by_id.get(&id) {
            Some(first) => assert_eq!(first, &r.body, "delivery {id} came twice, differently"),
            None => {
                by_id.insert(id, r.body.clone());
                values.push(
                    r.body["object"]["data"]["k"]
                        .as_str()
                        .unwrap_or("?")
                        .to_string(),
                );
            }
        }
    }
    values
}

#[tokio::test]
async fn one_replica_delivers_and_another_takes_over_when_it_is_killed() {
    let fake = cluster().await;
    let receiver = Receiver::start().await;
    let url = receiver.url("/hook");
    let a = replica(&fake, "grw-a", &url, 2.0).await;
    let b = replica(&fake, "grw-b", &url, 2.0).await;
    assert!(
        eventually(WAIT, || async { leads(&a).await != leads(&b).await }).await,
        "exactly one replica leads; logs of a:\n{}\nlogs of b:\n{}",
        a.logs(),
        b.logs()
    );
    let (leader, follower, follower_id) = if leads(&a).await {
        (a, b, "grw-b")
    } else {
        (b, a, "grw-a")
    };
    let lease = holder(&fake);
    assert_ne!(lease["holderIdentity"], follower_id, "{lease}");
    assert_eq!(lease["leaseDurationSeconds"], 2, "{lease}");

    // Subscriptions live in the config every replica reads.
    let (status, body) = follower
        .post(
            "/api/v1/subscriptions",
            json!({"name": "x", "kind": "ConfigMap", "webhook": {"url": url}}).to_string(),
        )
        .await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (409, Some("Replicated")),
        "{body}"
    );
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("declared in the config file that every replica reads"),
        "{body}"
    );

    for i in 0..10 {
        fake.update(configmap("counter", &format!("v{i}"))).unwrap();
    }
    receiver.wait_accepted(10, WAIT).await;
    // The follower queued the same changes, sent none, and dropped them once
    // the leader's Lease said they were delivered.
    assert!(
        eventually(WAIT, || async {
            follower.get("/api/v1/subscriptions/changes").await.1["pending"] == 0
        })
        .await,
        "{}",
        follower.get("/api/v1/subscriptions/changes").await.1
    );
    let (_, status) = follower.get("/api/v1/subscriptions/changes").await;
    assert_eq!(status["deliveries"], 0, "{status}");

    // The leader dies mid-stream; changes go on.
    let mut killed_at = None;
    let mut leader = Some(leader);
    for i in 10..40 {
        fake.update(configmap("counter", &format!("v{i}"))).unwrap();
        if i == 20 {
            drop(leader.take().map(Grw::kill));
            killed_at = Some(Instant::now());
        }
        tokio::time::sleep(Duration::from_millis(30)).await;
    }
    let killed_at = killed_at.unwrap();
    assert!(
        eventually(WAIT, || async { leads(&follower).await }).await,
        "the survivor takes over; logs:\n{}",
        follower.logs()
    );
    let took_over = killed_at.elapsed();
    let expected: Vec<String> = (0..40).map(|i| format!("v{i}")).collect();
    assert!(
        eventually(WAIT, || async {
            values_once(&receiver.accepted()).len() >= expected.len()
        })
        .await,
        "{:?}; logs of the survivor:\n{}",
        values_once(&receiver.accepted()),
        follower.logs()
    );
    // Anything extra (a flood, a change sent under a new id) would come now.
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let received = receiver.accepted();
    assert_eq!(values_once(&received), expected);
    let repeated = received.len() - expected.len();
    eprintln!("takeover after the kill: {took_over:?}; deliveries repeated: {repeated}");
    // The lease lasts 2 s from the last renewal the survivor saw.
    assert!(took_over < Duration::from_secs(6), "{took_over:?}");
    let lease = holder(&fake);
    assert_eq!(lease["holderIdentity"], follower_id, "{lease}");
    assert_eq!(lease["leaseTransitions"], 1, "{lease}");
    let progress: Value = serde_json::from_str(
        fake.get("coordination.k8s.io/v1", "Lease", Some("grw"), "grw")
            .unwrap()["metadata"]["annotations"]["grw.io/delivered"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        progress["changes"]["id"],
        received.last().unwrap().header("grw-delivery-id"),
        "the Lease records the last delivery"
    );
}

// Several threads: the fake API server answers while the test waits for
// the stopping replica in a blocking call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_replica_that_stops_cleanly_hands_over_at_once() {
    let fake = cluster().await;
    let receiver = Receiver::start().await;
    let url = receiver.url("/hook");
    // A long lease: only a release explains a quick takeover.
    let mut a = replica(&fake, "grw-a", &url, 20.0).await;
    assert!(eventually(WAIT, || async { leads(&a).await }).await);
    let b = replica(&fake, "grw-b", &url, 20.0).await;
    assert!(!leads(&b).await);
    let stopping = Instant::now();
    let stopped = a.terminate(Duration::from_secs(10));
    assert!(
        stopped.is_some_and(|s| s.success()),
        "{stopped:?}; logs:\n{}",
        a.logs()
    );
    assert!(
        eventually(Duration::from_secs(5), || async { leads(&b).await }).await,
        "the lease was released; logs of a:\n{}\nlogs of b:\n{}",
        a.logs(),
        b.logs()
    );
    assert!(stopping.elapsed() < Duration::from_secs(10));
    assert!(a.logs().contains("lease released"), "{}", a.logs());
    fake.update(configmap("counter", "after")).unwrap();
    let got = receiver.wait_accepted(1, WAIT).await;
    assert_eq!(got[0].body["object"]["data"]["k"], "after");
}
