//! Notifications end to end: the real `grw` against the fake API server,
//! delivering to real HTTP receivers on loopback.

use std::collections::BTreeSet;
use std::time::Duration;

use grw_e2e::daemon::{Grw, eventually, run_to_exit, stop_reason};
use grw_e2e::fake_api::{FakeApiOptions, FakeApiServer};
use grw_e2e::receiver::{Behaviour, Received, Receiver};
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
    fake.create(configmap("shop", "existing-1", "a")).unwrap();
    fake.create(configmap("shop", "existing-2", "a")).unwrap();
    fake
}

fn configmap(ns: &str, name: &str, data: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"namespace": ns, "name": name, "labels": {"team": "qa"}},
           "data": {"k": data}})
}

/// The config of a grw against `fake` in `dir`, watching ConfigMaps.
fn config(fake: &FakeApiServer, dir: &tempfile::TempDir, extra: Value) -> Value {
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let mut config = json!({
        "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": fake.url(), "tokenFilePath": token_file},
        "initialWatchingResources": [{"version": "v1", "kind": "ConfigMap"}],
        "apiGroupsSyncIntervalSecond": 3600,
    });
    for (k, v) in extra.as_object().into_iter().flatten() {
        config[k] = v.clone();
    }
    config
}

async fn grw(fake: &FakeApiServer, extra: Value) -> Grw {
    let dir = tempfile::tempdir().unwrap();
    let config = config(fake, &dir, extra);
    let grw = Grw::start_in(dir, config, &[]).await;
    grw.wait_ready(READY).await;
    grw
}

/// `TYPE namespace/name data` of a GRW-body delivery.
fn grw_summary(r: &Received) -> String {
    let objects = r.body["eventObjects"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let new = objects.last().cloned().unwrap_or(Value::Null);
    format!(
        "{} {}/{} {}",
        r.body["eventType"].as_str().unwrap_or("?"),
        new["metadata"]["namespace"].as_str().unwrap_or(""),
        new["metadata"]["name"].as_str().unwrap_or("?"),
        new["data"]["k"].as_str().unwrap_or("")
    )
}

/// `TYPE namespace/name data` of a watch-event delivery.
fn watch_summary(r: &Received) -> String {
    let o = &r.body["object"];
    format!(
        "{} {}/{} {}",
        r.body["type"].as_str().unwrap_or("?"),
        o["metadata"]["namespace"].as_str().unwrap_or(""),
        o["metadata"]["name"].as_str().unwrap_or("?"),
        o["data"]["k"].as_str().unwrap_or("")
    )
}

/// Accepted deliveries with duplicates (same delivery id) dropped, as a
/// receiver de-duplicating by id would see them.
fn deduplicated(received: &[Received]) -> Vec<Received> {
    let mut seen = BTreeSet::new();
    received
        .iter()
        .filter(|r| seen.insert(r.header("grw-delivery-id").to_string()))
        .cloned()
        .collect()
}

/// The daemon answers queries from its cache (whatever its receivers do).
async fn assert_serving(grw: &Grw) {
    let (status, list) = grw.get("/api/v1/namespaces/shop/objects/configmaps").await;
    assert_eq!(status, 200, "{list}");
    assert!(!list["items"].as_array().unwrap().is_empty(), "{list}");
}

async fn subscribe(grw: &Grw, body: Value) -> (u16, Value) {
    grw.post("/api/v1/subscriptions", body.to_string()).await
}

#[tokio::test]
async fn compat_webhooks_get_each_change_once_in_order() {
    let fake = cluster().await;
    let all = Receiver::start().await;
    let filtered = Receiver::start().await;
    let conditioned = Receiver::start().await;
    let grw = grw(
        &fake,
        json!({
            "initialWatchingResources": [{
                "version": "v1", "kind": "ConfigMap",
                "notifiers": [{
                    "webhookUrls": [filtered.url("/cm")],
                    "eventTypes": ["ADDED", "DELETED"],
                    "filter": {"namespace": "shop", "labelSelectors": ["team", "qa"]}
                }, {
                    "webhookUrls": [conditioned.url("/cm")],
                    "matchConditions": [{
                        "name": "changed-k",
                        "expression": "type == 'MODIFIED' && object.data.k != oldObject.data.k"
                    }]
                }]
            }],
            "globalWebhookUrls": [all.url("/all")],
        }),
    )
    .await;

    fake.create(configmap("shop", "web", "1")).unwrap();
    fake.update(configmap("shop", "web", "2")).unwrap();
    fake.create(configmap("other", "elsewhere", "1")).unwrap();
    fake.delete("v1", "ConfigMap", Some("shop"), "web").unwrap();

    let got = all.wait_accepted(4, WAIT).await;
    let summaries: Vec<String> = got.iter().map(grw_summary).collect();
    assert_eq!(
        summaries,
        [
            "ADDED shop/web 1",
            "MODIFIED shop/web 2",
            "ADDED other/elsewhere 1",
            "DELETED shop/web 2"
        ],
        "objects existing at start-up are not announced; each change once, in order"
    );
    let modified = &got[1];
    assert_eq!(modified.body["gvk"], "v1/ConfigMap");
    assert_eq!(modified.body["group"], "core");
    assert_eq!(modified.body["kind"], "ConfigMap");
    assert_eq!(
        modified.body["eventObjects"][0]["data"]["k"], "1",
        "old first"
    );
    assert_eq!(
        modified.body["eventObjects"][1]["data"]["k"], "2",
        "then new"
    );
    assert_eq!(modified.header("content-type"), "application/json");
    assert_eq!(modified.header("grw-kind"), "ConfigMap");
    assert_eq!(modified.header("grw-event-type"), "MODIFIED");
    let id = modified.header("grw-delivery-id");
    let rv = modified.body["eventObjects"][1]["metadata"]["resourceVersion"]
        .as_str()
        .unwrap();
    let uid = modified.body["eventObjects"][1]["metadata"]["uid"]
        .as_str()
        .unwrap();
    assert_eq!(id, format!("{uid}/{rv}/MODIFIED"));

    let filtered_got = filtered.wait_accepted(2, WAIT).await;
    let summaries: Vec<String> = filtered_got.iter().map(grw_summary).collect();
    assert_eq!(summaries, ["ADDED shop/web 1", "DELETED shop/web 2"]);
    let conditioned_got = conditioned.wait_accepted(1, WAIT).await;
    assert_eq!(grw_summary(&conditioned_got[0]), "MODIFIED shop/web 2");

    // Nothing more arrives later.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(all.requests().len(), 4);
    assert_eq!(filtered.requests().len(), 2);
    assert_eq!(conditioned.requests().len(), 1);

    let (status, subs) = grw.get("/api/v1/subscriptions").await;
    assert_eq!(status, 200);
    let items = subs["items"].as_array().unwrap();
    assert_eq!(items.len(), 3);
    let with_conditions = items
        .iter()
        .find(|s| s["definition"]["matchConditions"].is_array())
        .expect("the notifier with conditions shows them");
    assert_eq!(with_conditions["filtered"], 3, "{with_conditions}");
    assert!(
        items
            .iter()
            .all(|s| s["source"] == "config" && s["pending"] == 0)
    );
    assert!(
        items.iter().all(|s| s["lastDeliveryTime"]
            .as_str()
            .is_some_and(|t| t.ends_with('Z'))),
        "{subs}"
    );
    assert_eq!(subs["persistent"], false);
    assert!(
        grw.logs().contains("no dataDir: pending deliveries"),
        "running in memory is announced"
    );
}

#[tokio::test]
async fn failures_are_retried_and_refusals_become_dead_letters() {
    let fake = cluster().await;
    let receiver = Receiver::start().await;
    let grw = grw(&fake, json!({})).await;
    let (status, created) = subscribe(
        &grw,
        json!({
            "name": "cm-events", "kind": "ConfigMap", "namespace": "shop",
            "webhook": {"url": receiver.url("/hook"), "payload": "watch-event", "secret": "s3cret"},
            "retry": {"initialDelayMs": 50, "maxDelaySeconds": 0.5}
        }),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["name"], "cm-events");
    assert_eq!(created["watching"], "v1/ConfigMap");

    // 500 with Retry-After 0, then 503: retried, the queue holds.
    receiver.set(Behaviour::Status(500, Some(0), "try later"));
    fake.create(configmap("shop", "a", "1")).unwrap();
    fake.update(configmap("shop", "a", "2")).unwrap();
    receiver.wait_requests(3, WAIT).await;
    let (_, status_now) = grw.get("/api/v1/subscriptions/cm-events").await;
    assert_eq!(status_now["pending"], 2, "{status_now}");
    assert!(status_now["retries"].as_u64().unwrap() >= 2);
    assert_eq!(
        status_now["lastError"],
        "the receiver answered 500 Internal Server Error: try later"
    );
    assert_serving(&grw).await;
    receiver.set(Behaviour::Accept);
    let got = receiver.wait_accepted(2, WAIT).await;
    let summaries: Vec<String> = got.iter().map(watch_summary).collect();
    assert_eq!(summaries, ["ADDED shop/a 1", "MODIFIED shop/a 2"]);
    assert_eq!(got[1].body["oldObject"]["data"]["k"], "1");
    // Signed: HMAC-SHA256 of "timestamp.body".
    let signature = got[0].header("grw-signature");
    let expected = grw::notify::sign(b"s3cret", got[0].header("grw-timestamp"), &got[0].raw);
    assert_eq!(signature, format!("sha256={expected}"));

    // 400: not retried, kept as a dead letter, and the queue goes on.
    receiver.set(Behaviour::Status(400, None, "bad payload"));
    fake.update(configmap("shop", "a", "3")).unwrap();
    let dead_path = "/api/v1/subscriptions/cm-events/dead-letters";
    assert!(
        eventually(WAIT, || async {
            grw.get(dead_path).await.1["items"]
                .as_array()
                .map_or(0, Vec::len)
                == 1
        })
        .await
    );
    let (_, dead) = grw.get(dead_path).await;
    let letter = &dead["items"][0];
    assert_eq!(letter["eventType"], "MODIFIED");
    assert_eq!(letter["name"], "a");
    assert_eq!(letter["attempts"], 1);
    assert_eq!(
        letter["reason"],
        "the receiver answered 400 Bad Request: bad payload"
    );
    assert_eq!(letter["payload"]["object"]["data"]["k"], "3");
    receiver.set(Behaviour::Accept);
    fake.update(configmap("shop", "a", "4")).unwrap();
    let got = receiver.wait_accepted(3, WAIT).await;
    assert_eq!(watch_summary(&got[2]), "MODIFIED shop/a 4");

    // Replaying the dead letter delivers it; then the list is empty.
    let (status, replayed) = grw.post(&format!("{dead_path}/replay"), "").await;
    assert_eq!((status, replayed["replayed"].as_u64()), (200, Some(1)));
    let got = receiver.wait_accepted(4, WAIT).await;
    assert_eq!(watch_summary(&got[3]), "MODIFIED shop/a 3");
    assert_eq!(grw.get(dead_path).await.1["items"], json!([]));

    // The receiver has the replayed letter a moment before the outbox lets it go.
    let metrics_path = "/metrics";
    let settled = "grw_subscription_pending_deliveries{subscription=\"cm-events\"} 0";
    assert!(
        eventually(WAIT, || async {
            let metrics = grw.get_raw(metrics_path).await.text().await.unwrap();
            metrics.contains(settled)
        })
        .await
    );
    let metrics = grw.get_raw(metrics_path).await.text().await.unwrap();
    for line in [
        "grw_subscription_deliveries_total{subscription=\"cm-events\"} 4",
        "grw_subscription_dead_lettered_total{subscription=\"cm-events\"} 1",
        "grw_subscription_pending_deliveries{subscription=\"cm-events\"} 0",
        "grw_subscription_dead_letters{subscription=\"cm-events\"} 0",
    ] {
        assert!(metrics.contains(line), "missing `{line}` in\n{metrics}");
    }
    assert!(metrics.contains("grw_subscription_retries_total{subscription=\"cm-events\"}"));
    assert!(
        metrics.contains("grw_subscription_oldest_pending_seconds{subscription=\"cm-events\"} 0")
    );
}

#[tokio::test]
async fn a_failing_receiver_is_tried_on_the_backoff_not_once_per_change() {
    let fake = cluster().await;
    let receiver = Receiver::start().await;
    receiver.set(Behaviour::Status(503, None, "down"));
    let grw = grw(&fake, json!({})).await;
    let (status, created) = subscribe(
        &grw,
        json!({
            "name": "backing-off", "kind": "ConfigMap", "namespace": "shop",
            "webhook": {"url": receiver.url("/hook"), "payload": "watch-event"},
            // The first retry 8 to 12 s after the failure (±20% jitter).
            "retry": {"initialDelayMs": 10000, "maxDelaySeconds": 10}
        }),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    fake.create(configmap("shop", "a", "0")).unwrap();
    receiver.wait_requests(1, WAIT).await;
    // Changes keep coming while the subscription waits out its backoff.
    for n in 1..=20 {
        fake.update(configmap("shop", "a", &n.to_string())).unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let queued = eventually(WAIT, || async {
        grw.get("/api/v1/subscriptions/backing-off").await.1["pending"] == 21
    })
    .await;
    let (_, status) = grw.get("/api/v1/subscriptions/backing-off").await;
    assert!(queued, "{status}");
    assert_eq!(
        receiver.requests().len(),
        1,
        "tried again before the backoff"
    );
    assert_eq!(status["retries"], 1, "{status}");

    receiver.set(Behaviour::Accept);
    let got = receiver.wait_accepted(21, WAIT).await;
    let data: Vec<&str> = got
        .iter()
        .map(|r| r.body["object"]["data"]["k"].as_str().unwrap_or_default())
        .collect();
    let expected: Vec<String> = (0..=20).map(|n| n.to_string()).collect();
    assert_eq!(data, expected);
}

#[tokio::test]
async fn refused_connections_and_hanging_receivers_lose_nothing() {
    let fake = cluster().await;
    // A port with nobody listening: connections are refused.
    let port = Receiver::start().await.stop();
    let grw = grw(&fake, json!({})).await;
    let (status, body) = subscribe(
        &grw,
        json!({
            "name": "late-receiver", "kind": "v1/ConfigMap",
            "webhook": {"url": format!("http://127.0.0.1:{port}/x"), "payload": "watch-event", "timeoutSeconds": 0.3},
            "retry": {"initialDelayMs": 50, "maxDelaySeconds": 0.3}
        }),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    for i in 0..5 {
        fake.update(configmap("shop", "existing-1", &format!("v{i}")))
            .unwrap();
    }
    assert!(
        eventually(WAIT, || async {
            let (_, s) = grw.get("/api/v1/subscriptions/late-receiver").await;
            s["pending"] == 5
                && s["lastError"]
                    .as_str()
                    .is_some_and(|e| e.starts_with("cannot connect to the receiver"))
        })
        .await,
        "{}",
        grw.get("/api/v1/subscriptions/late-receiver").await.1
    );
    assert_serving(&grw).await;

    // The receiver comes up but hangs: each attempt times out and is retried.
    let receiver = Receiver::start_on(port).await;
    receiver.set(Behaviour::Hang);
    receiver.wait_requests(2, WAIT).await;
    let (_, s) = grw.get("/api/v1/subscriptions/late-receiver").await;
    assert_eq!(s["lastError"], "the receiver did not answer in time");
    assert_eq!(s["pending"], 5);
    assert_serving(&grw).await;

    receiver.set(Behaviour::Accept);
    let got = receiver.wait_accepted(5, WAIT).await;
    let summaries: Vec<String> = deduplicated(&got).iter().map(watch_summary).collect();
    assert_eq!(
        summaries,
        (0..5)
            .map(|i| format!("MODIFIED shop/existing-1 v{i}"))
            .collect::<Vec<_>>()
    );
    assert!(
        eventually(WAIT, || async {
            grw.get("/api/v1/subscriptions/late-receiver").await.1["pending"] == 0
        })
        .await
    );
}

#[tokio::test]
async fn a_delivery_waiting_for_its_receiver_is_counted_in_flight() {
    let fake = cluster().await;
    let receiver = Receiver::start().await;
    receiver.set(Behaviour::Hang);
    let grw = grw(&fake, json!({})).await;
    let (status, created) = subscribe(
        &grw,
        json!({"name": "slow", "kind": "ConfigMap", "namespace": "shop",
            "webhook": {"url": receiver.url("/"), "payload": "watch-event", "timeoutSeconds": 2},
            "retry": {"initialDelayMs": 50, "maxDelaySeconds": 0.5}}),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["inFlight"], 0, "{created}");
    fake.create(configmap("shop", "a", "1")).unwrap();
    fake.create(configmap("shop", "b", "1")).unwrap();
    // One at a time to a webhook: the first is in flight, both pending.
    let in_flight = eventually(WAIT, || async {
        let (_, s) = grw.get("/api/v1/subscriptions/slow").await;
        s["inFlight"] == 1 && s["pending"] == 2
    })
    .await;
    assert!(
        in_flight,
        "{}",
        grw.get("/api/v1/subscriptions/slow").await.1
    );
    // The hanging request times out and is retried; then both go through,
    // and none is in flight.
    receiver.set(Behaviour::Accept);
    let done = eventually(WAIT, || async {
        let (_, s) = grw.get("/api/v1/subscriptions/slow").await;
        s["deliveries"] == 2 && s["inFlight"] == 0 && s["pending"] == 0
    })
    .await;
    assert!(done, "{}", grw.get("/api/v1/subscriptions/slow").await.1);
}

#[tokio::test]
async fn a_slow_receiver_does_not_hold_up_another_subscription() {
    let fake = cluster().await;
    let slow = Receiver::start().await;
    slow.set(Behaviour::Slow(Duration::from_millis(200)));
    let fast = Receiver::start().await;
    let grw = grw(&fake, json!({})).await;
    for (name, receiver) in [("slow", &slow), ("fast", &fast)] {
        let (status, body) = subscribe(
            &grw,
            json!({"name": name, "kind": "ConfigMap",
                   "webhook": {"url": receiver.url("/"), "payload": "watch-event"}}),
        )
        .await;
        assert_eq!(status, 201, "{body}");
    }
    for i in 0..30 {
        fake.update(configmap("shop", "existing-2", &i.to_string()))
            .unwrap();
    }
    let got = fast.wait_accepted(30, WAIT).await;
    assert_eq!(got.len(), 30);
    assert_serving(&grw).await;
    assert!(
        slow.accepted().len() < 30,
        "the slow receiver (200 ms each) cannot have taken 30 yet"
    );
    let got = slow.wait_accepted(30, Duration::from_secs(60)).await;
    let order: Vec<String> = got
        .iter()
        .map(|r| r.body["object"]["data"]["k"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(order, (0..30).map(|i| i.to_string()).collect::<Vec<_>>());
}

#[tokio::test]
async fn sigkill_with_a_backlog_and_changes_while_down_lose_nothing() {
    for compact_while_down in [false, true] {
        let fake = cluster().await;
        let port = Receiver::start().await.stop();
        let dir = tempfile::tempdir().unwrap();
        let data_dir = dir.path().join("data");
        let url = format!("http://127.0.0.1:{port}/hook");
        let extra = json!({
            "dataDir": data_dir,
            "subscriptions": [{
                "name": "durable", "kind": "ConfigMap",
                "webhook": {"url": url, "payload": "watch-event"},
                "retry": {"initialDelayMs": 50, "maxDelaySeconds": 0.3}
            }],
        });
        let config = config(&fake, &dir, extra.clone());
        let first = Grw::start_in(dir, config, &[]).await;
        first.wait_ready(READY).await;
        for i in 0..10 {
            fake.update(configmap("shop", "existing-1", &format!("before-{i}")))
                .unwrap();
        }
        assert!(
            eventually(WAIT, || async {
                first.get("/api/v1/subscriptions/durable").await.1["pending"] == 10
            })
            .await
        );
        let (_, status) = first.get("/api/v1/subscriptions").await;
        assert_eq!(status["persistent"], true);
        assert_serving(&first).await;
        let dir = first.kill();

        // While GRW is down: one change, one deletion, one creation.
        fake.update(configmap("shop", "existing-1", "while-down"))
            .unwrap();
        fake.delete("v1", "ConfigMap", Some("shop"), "existing-2")
            .unwrap();
        fake.create(configmap("shop", "new", "while-down")).unwrap();
        if compact_while_down {
            // The resume point is gone: GRW must relist and diff.
            fake.compact();
        }
        let receiver = Receiver::start_on(port).await;
        let config = self::config(&fake, &dir, extra);
        let second = Grw::start_in(dir, config, &[]).await;
        second.wait_ready(READY).await;

        receiver.wait_accepted(13, WAIT).await;
        // Anything extra (a flood, a duplicate) would arrive in this time.
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let accepted = deduplicated(&receiver.accepted());
        let summaries: Vec<String> = accepted.iter().map(watch_summary).collect();
        let backlog: Vec<String> = (0..10)
            .map(|i| format!("MODIFIED shop/existing-1 before-{i}"))
            .collect();
        let context = format!("compacted: {compact_while_down}; logs:\n{}", second.logs());
        assert_eq!(summaries.len(), 13, "{summaries:?}; {context}");
        assert_eq!(
            summaries[..10],
            backlog,
            "the backlog first, in order; {context}"
        );
        // Order holds per object; a relist diff announces changes of
        // different objects in its own order.
        let mut while_down = summaries[10..].to_vec();
        while_down.sort();
        assert_eq!(
            while_down,
            [
                "ADDED shop/new while-down",
                "DELETED shop/existing-2 a",
                "MODIFIED shop/existing-1 while-down",
            ],
            "{context}"
        );
        let modified = accepted
            .iter()
            .find(|r| watch_summary(r) == "MODIFIED shop/existing-1 while-down")
            .unwrap();
        assert_eq!(
            modified.body["oldObject"]["data"]["k"], "before-9",
            "the old state is the last one announced"
        );
        let relists = second.log_events("resume point lost, listing again").len();
        assert_eq!(
            relists > 0,
            compact_while_down,
            "relist only when the resume point is gone"
        );
    }
}

#[tokio::test]
async fn with_console_url_every_webhook_and_nats_delivery_links_to_the_object_page() {
    let fake = cluster().await;
    let nats = grw_e2e::nats::NatsServer::start().await;
    let linked = Receiver::start().await;
    let plain = Receiver::start().await;
    let webhook = |receiver: &Receiver, path: &str| json!({"name": path, "kind": "ConfigMap", "webhook": {"url": receiver.url(&format!("/{path}"))}});
    // The trailing `/` and a path before `/ui/` are kept as users reach
    // the console behind a proxy.
    let with_link = grw(
        &fake,
        json!({
            "consoleUrl": "https://grw.example.com/tools/",
            "globalWebhookUrls": [linked.url("/compat")],
            "subscriptions": [webhook(&linked, "native"), {
                "name": "to-nats", "kind": "ConfigMap",
                "nats": {"url": nats.url(), "subject": "grw.{kind}.{namespace}", "stream": "CHANGES"}}],
        }),
    )
    .await;
    let without = grw(&fake, json!({"subscriptions": [webhook(&plain, "native")]})).await;

    // `:` is not a Kubernetes name character, but the fake API server
    // takes it: it shows the name percent-encoded.
    fake.create(configmap("shop", "web:1", "1")).unwrap();

    let got = linked.wait_accepted(2, WAIT).await;
    let mut paths: Vec<&str> = got.iter().map(|r| r.path.as_str()).collect();
    paths.sort();
    assert_eq!(paths, ["/compat", "/native"]);
    for received in &got {
        assert_eq!(
            received.header("grw-console-link"),
            "https://grw.example.com/tools/ui/open?kind=ConfigMap&namespace=shop&name=web%3A1",
            "{}",
            received.path
        );
    }
    assert!(
        stored(&nats, 1).await,
        "{}",
        nats_trouble(&with_link, &nats).await
    );
    let messages = nats.stream_messages("CHANGES").await;
    assert_eq!(
        messages[0]
            .headers
            .get("GRW-Console-Link")
            .map(|v| v.as_str()),
        Some("https://grw.example.com/tools/ui/open?kind=ConfigMap&namespace=shop&name=web%3A1")
    );
    let got = plain.wait_accepted(1, WAIT).await;
    assert_eq!(got[0].header("grw-name"), "web:1");
    assert!(
        !got[0].headers.contains_key("grw-console-link"),
        "no consoleUrl, no link: {:?}",
        got[0].headers
    );
    drop((with_link, without));
}

#[tokio::test]
async fn snapshot_subscriptions_and_payload_forms() {
    let fake = cluster().await;
    let receiver = Receiver::start().await;
    let grw = grw(&fake, json!({})).await;
    let (status, body) = subscribe(
        &grw,
        json!({"name": "snap", "kind": "ConfigMap", "snapshot": true, "labelSelector": "team=qa",
               "webhook": {"url": receiver.url("/snap"), "payload": "cloudevents",
                           "headers": {"Authorization": "Bearer abc"}}}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    let got = receiver.wait_accepted(2, WAIT).await;
    let mut names: Vec<&str> = got
        .iter()
        .map(|r| r.body["subject"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["shop/existing-1", "shop/existing-2"]);
    let event = &got[0].body;
    assert_eq!(event["specversion"], "1.0");
    assert_eq!(event["type"], "io.k8s.configmap.core.added");
    assert_eq!(event["source"], "grw/snap");
    assert_eq!(event["data"]["object"]["kind"], "ConfigMap");
    assert_eq!(
        got[0].header("content-type"),
        "application/cloudevents+json"
    );
    assert_eq!(got[0].header("authorization"), "Bearer abc");
    assert_eq!(got[0].header("grw-subscription"), "snap");
}

#[tokio::test]
async fn invalid_subscriptions_are_refused_with_clear_messages() {
    let fake = cluster().await;
    let grw = grw(
        &fake,
        json!({"initialWatchingResources": [{"version": "v1", "kind": "ConfigMap",
               "notifiers": [{"webhookUrls": ["http://127.0.0.1:9/x"]}]}]}),
    )
    .await;
    let ok = json!({"name": "x", "kind": "ConfigMap", "webhook": {"url": "http://127.0.0.1:9/x"}});
    let with = |k: &str, v: Value| {
        let mut b = ok.clone();
        b[k] = v;
        b
    };
    let cases = [
        (
            with("webhook", json!({"url": "ftp://example.com/x"})),
            400,
            r#"subscription `x`: `webhook.url`: expected an http:// or https:// URL with a host, got "ftp://example.com/x""#,
        ),
        (
            with("webhook", json!({"url": "http//missing-colon"})),
            400,
            r#"subscription `x`: `webhook.url`: expected an http:// or https:// URL with a host, got "http//missing-colon""#,
        ),
        (
            with(
                "matchConditions",
                json!([{"name": "a", "expression": "object.metadata.name ==\n  oldObjet.metadata.name"}]),
            ),
            400,
            "subscription `x`: `matchConditions[0].expression`: undeclared reference to 'oldObjet' (line 2, column 3)",
        ),
        (
            with("filters", json!(["no-such-plugin"])),
            400,
            "subscription `x`: `filters`: unknown filter plugin `no-such-plugin`: no plugin directory is configured (pluginDir)",
        ),
        (
            with("labelSelector", json!("team in (qa")),
            400,
            "subscription `x`: `labelSelector`: ",
        ),
        (
            with("kind", json!("Gizmo")),
            400,
            "subscription `x`: `kind`: ",
        ),
        (
            with("name", json!("UPPER")),
            400,
            "request body: `name`: expected a subscription name",
        ),
    ];
    for (body, status, message) in cases {
        let (got_status, answer) = subscribe(&grw, body.clone()).await;
        assert_eq!(got_status, status, "{body} → {answer}");
        let text = answer["message"].as_str().unwrap_or_default();
        assert!(
            text.starts_with(message),
            "{body}:\n  got      {text}\n  expected {message}"
        );
    }
    let (status, answer) = grw.post("/api/v1/subscriptions", "{not json").await;
    assert_eq!(status, 400);
    assert!(
        answer["message"]
            .as_str()
            .unwrap()
            .starts_with("request body is not valid JSON")
    );

    assert_eq!(subscribe(&grw, ok.clone()).await.0, 201);
    let (status, answer) = subscribe(&grw, ok.clone()).await;
    assert_eq!(status, 409);
    assert_eq!(
        answer["message"],
        "subscription `x` already exists; delete it first or pick another name"
    );

    let (_, subs) = grw.get("/api/v1/subscriptions").await;
    let config_name = subs["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["source"] == "config")
        .unwrap()["name"]
        .as_str()
        .unwrap()
        .to_string();
    let response = grw
        .delete(&format!("/api/v1/subscriptions/{config_name}"))
        .await;
    assert_eq!(response.0, 409);
    assert_eq!(
        response.1["message"],
        format!("subscription `{config_name}` is defined in the config file; change it there")
    );
    assert_eq!(grw.delete("/api/v1/subscriptions/x").await.0, 200);
    let (status, answer) = grw.delete("/api/v1/subscriptions/x").await;
    assert_eq!(
        (status, answer["message"].as_str()),
        (404, Some("no subscription `x`"))
    );
    let (status, answer) = grw
        .post("/api/v1/subscriptions/nope/dead-letters/replay?seq=abc", "")
        .await;
    assert_eq!(status, 400);
    assert!(
        answer["message"]
            .as_str()
            .unwrap()
            .starts_with("`seq` must be")
    );
}

#[tokio::test]
async fn invalid_subscriptions_in_the_config_stop_start_up() {
    for (subscription, message) in [
        (
            json!({"name": "a", "kind": "Pod", "webhook": {"url": "gopher://x"}}),
            r#"config key `subscriptions[0].webhook.url`: expected an http:// or https:// URL with a host, got "gopher://x""#,
        ),
        (
            json!({"name": "a", "kind": "Pod", "plugin": {"name": "chat"}}),
            "config key `subscriptions[0]`: subscription `a`: `plugin`: unknown",
        ),
        (
            json!({"name": "a", "kind": "Pod", "webhook": {"url": "http://x"}, "wat": 1}),
            "config key `subscriptions[0]`: unknown field `wat`",
        ),
        (
            json!({"name": "a", "kind": "Pod", "webhook": {"url": "http://x"}, "labelSelector": "a in (b"}),
            "config key `subscriptions[0].labelSelector`: label selector `a in (b`: ",
        ),
        (
            json!({"name": "a", "kind": "Pod", "webhook": {"url": "http://x"}, "filters": ["a b"]}),
            "config key `subscriptions[0].filters[0]`: expected a plugin name",
        ),
        (
            json!({"name": "a", "kind": "Pod", "webhook": {"url": "http://x"},
                   "matchConditions": [{"name": "ok", "expression": "true"},
                                       {"name": "typo", "expression": "objet.status.phase == 'Running'"}]}),
            "config key `subscriptions[0].matchConditions[1].expression`: undeclared reference to 'objet' (line 1, column 1)",
        ),
    ] {
        let config = json!({
            "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": "http://127.0.0.1:9", "tokenFilePath": "/dev/null"},
            "subscriptions": [subscription],
        });
        let (code, stderr) = run_to_exit(Some(&config.to_string()), &[], Duration::from_secs(60));
        assert_ne!(code, Some(0));
        let reason = stop_reason(&stderr).unwrap_or_default();
        assert!(
            reason.contains(message),
            "expected `{message}` in:\n{stderr}"
        );
    }
}

/// Waits until the `CHANGES` stream holds at least `n` messages.
async fn stored(nats: &grw_e2e::nats::NatsServer, n: u64) -> bool {
    eventually(WAIT, || async {
        match nats.jetstream().await.get_stream("CHANGES").await {
            Ok(stream) => stream.cached_info().state.messages >= n,
            Err(_) => false,
        }
    })
    .await
}

/// Why a NATS delivery is missing, most telling first (a runner shows
/// the start and the end of a long message): the subscription's state,
/// the server's log, then GRW's.
async fn nats_trouble(grw: &Grw, nats: &grw_e2e::nats::NatsServer) -> String {
    let (_, subscription) = grw.get("/api/v1/subscriptions/to-nats").await;
    format!(
        "subscription: {subscription}\nnats-server's log:\n{}\nGRW's log:\n{}",
        nats.log(),
        grw.logs()
    )
}

#[tokio::test]
async fn nats_subscription_survives_a_server_restart() {
    let fake = cluster().await;
    let mut nats = grw_e2e::nats::NatsServer::start().await;
    let grw = grw(
        &fake,
        json!({"subscriptions": [{
            "name": "to-nats", "kind": "ConfigMap",
            "nats": {"url": nats.url(), "subject": "grw.{kind}.{namespace}", "stream": "CHANGES", "ackTimeoutSecond": 3},
            "retry": {"initialDelayMs": 50, "maxDelaySeconds": 0.5}
        }]}),
    )
    .await;
    for i in 0..5 {
        fake.update(configmap("shop", "existing-1", &format!("a{i}")))
            .unwrap();
    }
    assert!(
        stored(&nats, 5).await,
        "{}",
        nats_trouble(&grw, &nats).await
    );
    nats.stop();
    for i in 0..5 {
        fake.update(configmap("shop", "existing-1", &format!("b{i}")))
            .unwrap();
    }
    assert!(
        eventually(WAIT, || async {
            let (_, s) = grw.get("/api/v1/subscriptions/to-nats").await;
            s["pending"].as_u64().unwrap_or(0) >= 1 && s["retries"].as_u64().unwrap_or(0) >= 1
        })
        .await
    );
    nats.start_again().await;
    fake.delete("v1", "ConfigMap", Some("shop"), "existing-1")
        .unwrap();
    assert!(
        stored(&nats, 11).await,
        "{}",
        nats_trouble(&grw, &nats).await
    );
    assert!(
        eventually(WAIT, || async {
            grw.get("/api/v1/subscriptions/to-nats").await.1["pending"] == 0
        })
        .await
    );
    let messages = nats.stream_messages("CHANGES").await;
    let mut seen = BTreeSet::new();
    let mut summaries = Vec::new();
    for m in &messages {
        let id = m
            .headers
            .get("Nats-Msg-Id")
            .map(|v| v.as_str().to_string())
            .unwrap();
        assert!(seen.insert(id), "the stream de-duplicates by delivery id");
        assert_eq!(m.subject.as_str(), "grw.ConfigMap.shop");
        let body: Value = serde_json::from_slice(&m.payload).unwrap();
        summaries.push(format!(
            "{} {}",
            body["type"].as_str().unwrap(),
            body["object"]["data"]["k"].as_str().unwrap()
        ));
    }
    let mut expected: Vec<String> = (0..5).map(|i| format!("MODIFIED a{i}")).collect();
    expected.extend((0..5).map(|i| format!("MODIFIED b{i}")));
    expected.push("DELETED b4".into());
    assert_eq!(summaries, expected);
}

#[tokio::test]
async fn a_notifier_plugin_delivers_with_retries() {
    let fake = cluster().await;
    let receiver = Receiver::start().await;
    let host = receiver.addr.to_string();
    let plugin_dir = tempfile::tempdir().unwrap();
    grw_e2e::plugins::install(
        plugin_dir.path(),
        "chat",
        "grw-plugin-chat-notifier",
        Some(json!({
            "kind": "notifier",
            "config": {"url": receiver.url("/chat")},
            "allowedHosts": [host],
        })),
    );
    let grw = grw(
        &fake,
        json!({
            "pluginDir": plugin_dir.path(),
            "pluginAllowedHosts": [host],
            "subscriptions": [{
                "name": "chat", "kind": "ConfigMap", "namespace": "shop",
                "plugin": {"name": "chat"},
                "retry": {"initialDelayMs": 50, "maxDelaySeconds": 0.3}
            }],
        }),
    )
    .await;
    receiver.set(Behaviour::Status(503, None, "busy"));
    fake.create(configmap("shop", "web", "1")).unwrap();
    receiver.wait_requests(2, WAIT).await;
    receiver.set(Behaviour::Accept);
    fake.update(configmap("shop", "web", "2")).unwrap();
    let got = receiver.wait_accepted(2, WAIT).await;
    let texts: Vec<&str> = got
        .iter()
        .map(|r| r.body["text"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(texts.len(), 2, "{texts:?}");
    assert!(
        texts[0].contains("*ConfigMap* `shop/web` added"),
        "{texts:?}"
    );
    assert!(
        texts[1].contains("*ConfigMap* `shop/web` modified"),
        "{texts:?}"
    );
    assert!(
        texts[1].contains("data.k"),
        "names the changed field: {texts:?}"
    );
    // The receiver has the last message a moment before the outbox lets it go.
    assert!(
        eventually(WAIT, || async {
            grw.get("/api/v1/subscriptions/chat").await.1["pending"] == 0
        })
        .await
    );
    let (_, status) = grw.get("/api/v1/subscriptions/chat").await;
    assert!(status["retries"].as_u64().unwrap() >= 1, "{status}");
}

#[tokio::test]
async fn a_notifier_plugin_is_told_which_changes_a_relist_found() {
    let fake = cluster().await;
    let receiver = Receiver::start().await;
    let host = receiver.addr.to_string();
    let plugin_dir = tempfile::tempdir().unwrap();
    grw_e2e::plugins::install(
        plugin_dir.path(),
        "hook",
        "grw-plugin-webhook-template",
        Some(json!({
            "kind": "notifier",
            "config": {
                "url": receiver.url("/hook"),
                "body": "{\"type\": \"{{type}}\", \"origin\": \"{{origin}}\", \"name\": \"{{name}}\", \"k\": \"{{object.data.k}}\"}",
            },
            "allowedHosts": [host],
        })),
    );
    let grw = grw(
        &fake,
        json!({
            "pluginDir": plugin_dir.path(),
            "pluginAllowedHosts": [host],
            "subscriptions": [{
                "name": "hook", "kind": "ConfigMap", "namespace": "shop",
                "plugin": {"name": "hook"},
            }],
        }),
    )
    .await;
    let summary = |r: &Received| {
        format!(
            "{} {} {} {}",
            r.body["origin"].as_str().unwrap_or("?"),
            r.body["type"].as_str().unwrap_or("?"),
            r.body["name"].as_str().unwrap_or("?"),
            r.body["k"].as_str().unwrap_or("?"),
        )
    };
    fake.update(configmap("shop", "existing-1", "watched"))
        .unwrap();
    let got = receiver.wait_accepted(1, WAIT).await;
    assert_eq!(summary(&got[0]), "watch MODIFIED existing-1 watched");

    // The watch drops, changes happen that the server then forgets, and
    // GRW can only list again and diff.
    assert!(fake.cut_off(WAIT).await);
    fake.update(configmap("shop", "existing-1", "while-away"))
        .unwrap();
    fake.delete("v1", "ConfigMap", Some("shop"), "existing-2")
        .unwrap();
    fake.compact();
    fake.clear_failures();
    let got = receiver.wait_accepted(3, WAIT).await;
    let mut relisted: Vec<String> = got[1..].iter().map(summary).collect();
    relisted.sort();
    assert_eq!(
        relisted,
        [
            "relist DELETED existing-2 a",
            "relist MODIFIED existing-1 while-away"
        ],
        "logs:\n{}",
        grw.logs()
    );
    // Watching again, the next change is a watch event.
    fake.update(configmap("shop", "existing-1", "back"))
        .unwrap();
    let got = receiver.wait_accepted(4, WAIT).await;
    assert_eq!(summary(&got[3]), "watch MODIFIED existing-1 back");
}

#[tokio::test]
async fn api_subscriptions_survive_a_restart() {
    let fake = cluster().await;
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let extra = json!({"dataDir": dir.path().join("data")});
    let config = config(&fake, &dir, extra.clone());
    let mut first = Grw::start_in(dir, config, &[]).await;
    first.wait_ready(READY).await;
    let (status, body) = subscribe(
        &first,
        json!({"name": "kept", "kind": "ConfigMap",
               "webhook": {"url": receiver.url("/kept"), "payload": "watch-event"}}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    receiver.set(Behaviour::Status(400, None, "no"));
    fake.update(configmap("shop", "existing-1", "refused"))
        .unwrap();
    let dead_path = "/api/v1/subscriptions/kept/dead-letters";
    assert!(
        eventually(WAIT, || async {
            first.get(dead_path).await.1["items"]
                .as_array()
                .map_or(0, Vec::len)
                == 1
        })
        .await
    );
    assert!(
        first
            .terminate(Duration::from_secs(10))
            .is_some_and(|s| s.success())
    );
    let dir = std::mem::replace(&mut first.dir, tempfile::tempdir().unwrap());
    drop(first);

    receiver.set(Behaviour::Accept);
    let config = self::config(&fake, &dir, extra);
    let second = Grw::start_in(dir, config, &[]).await;
    second.wait_ready(READY).await;
    let (status, kept) = second.get("/api/v1/subscriptions/kept").await;
    assert_eq!(status, 200, "{kept}");
    assert_eq!(kept["source"], "api");
    assert_eq!(kept["deadLetters"], 1, "dead letters are kept too");
    fake.update(configmap("shop", "existing-1", "after-restart"))
        .unwrap();
    let got = receiver.wait_accepted(1, WAIT).await;
    assert_eq!(
        watch_summary(&got[0]),
        "MODIFIED shop/existing-1 after-restart"
    );
    let (status, dropped) = second.delete(dead_path).await;
    assert_eq!((status, dropped["dropped"].as_u64()), (200, Some(1)));
    assert_eq!(second.get(dead_path).await.1["items"], json!([]));
    let (status, deleted) = second.delete("/api/v1/subscriptions/kept").await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(second.get("/api/v1/subscriptions/kept").await.0, 404);
}

#[tokio::test]
async fn filter_plugins_decide_what_a_subscription_gets() {
    let fake = cluster().await;
    let receiver = Receiver::start().await;
    let plugin_dir = tempfile::tempdir().unwrap();
    grw_e2e::plugins::install(
        plugin_dir.path(),
        "only-shop",
        "grw-plugin-namespace-filter",
        Some(json!({"kind": "filter", "config": {"include": ["shop"]}})),
    );
    let grw = grw(&fake, json!({"pluginDir": plugin_dir.path()})).await;
    let (status, body) = subscribe(
        &grw,
        json!({"name": "filtered", "kind": "ConfigMap", "filters": ["only-shop"],
               "webhook": {"url": receiver.url("/f"), "payload": "watch-event"}}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    fake.create(configmap("other", "skipped", "1")).unwrap();
    fake.create(configmap("shop", "kept", "1")).unwrap();
    fake.create(configmap("elsewhere", "skipped-too", "1"))
        .unwrap();
    fake.update(configmap("shop", "kept", "2")).unwrap();
    let got = receiver.wait_accepted(2, WAIT).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let summaries: Vec<String> = receiver.accepted().iter().map(watch_summary).collect();
    assert_eq!(
        summaries,
        ["ADDED shop/kept 1", "MODIFIED shop/kept 2"],
        "{got:?}"
    );
}

#[tokio::test]
async fn match_conditions_decide_what_a_subscription_gets() {
    let fake = cluster().await;
    let receiver = Receiver::start().await;
    let grw = grw(&fake, json!({})).await;
    let conditions = json!([
        {"name": "in-shop", "expression": "object.metadata.namespace == 'shop'"},
        {"name": "data-changed",
         "expression": "type != 'MODIFIED' || object.data.k != oldObject.data.k"},
    ]);
    let (status, body) = subscribe(
        &grw,
        json!({"name": "conditions", "kind": "ConfigMap", "matchConditions": conditions,
               "webhook": {"url": receiver.url("/c"), "payload": "watch-event"}}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    // One that fails on every change: a field read without `has()`.
    let (status, body) = subscribe(
        &grw,
        json!({"name": "failing", "kind": "ConfigMap",
               "matchConditions": [{"name": "owner", "expression": "object.data.owner == 'qa'"}],
               "webhook": {"url": receiver.url("/failing")}}),
    )
    .await;
    assert_eq!(status, 201, "{body}");
    fake.create(configmap("other", "skipped", "1")).unwrap();
    fake.create(configmap("shop", "kept", "1")).unwrap();
    let mut relabelled = configmap("shop", "kept", "1");
    relabelled["metadata"]["labels"]["team"] = json!("web");
    fake.update(relabelled).unwrap();
    fake.update(configmap("shop", "kept", "2")).unwrap();
    fake.delete("v1", "ConfigMap", Some("shop"), "kept")
        .unwrap();
    receiver.wait_accepted(3, WAIT).await;
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let summaries: Vec<String> = receiver.accepted().iter().map(watch_summary).collect();
    assert_eq!(
        summaries,
        [
            "ADDED shop/kept 1",
            "MODIFIED shop/kept 2",
            "DELETED shop/kept 2"
        ]
    );
    assert!(receiver.accepted().iter().all(|r| r.path == "/c"));
    // Counted as filtered; the definition shows the expressions as written.
    let (_, status) = grw.get("/api/v1/subscriptions/conditions").await;
    assert_eq!(status["filtered"], 2, "{status}");
    assert_eq!(status["conditionErrors"], 0, "{status}");
    assert_eq!(status["definition"]["matchConditions"], conditions);
    let (_, status) = grw.get("/api/v1/subscriptions/failing").await;
    assert_eq!(status["conditionErrors"], 5, "{status}");
    assert_eq!(status["filtered"], 5, "{status}");
    assert_eq!(
        status["lastConditionError"],
        "matchConditions `owner` on shop/kept: no such key: owner"
    );
    let metrics = grw.get_raw("/metrics").await.text().await.unwrap();
    assert_eq!(
        metric(
            &metrics,
            "grw_subscription_condition_errors_total",
            "failing"
        ),
        Some(5),
        "{metrics}"
    );
    assert!(grw.logs().contains("a match condition failed on a change"));
}

#[tokio::test]
async fn webhook_answers_map_to_retry_or_refusal() {
    use grw::notify::{Delivery, PayloadFormat, SendError, Webhook};
    let receiver = Receiver::start().await;
    let webhook = Webhook::new(
        grw::notify::webhook_client(),
        "direct",
        &receiver.url("/direct"),
        &[],
        None,
        Duration::from_secs(5),
        PayloadFormat::WatchEvent,
    )
    .unwrap();
    let delivery = Delivery {
        seq: 1,
        id: "u/1/ADDED".into(),
        event_type: "ADDED".into(),
        gvk: grw::gvk::Gvk::new("", "v1", "ConfigMap"),
        namespace: "shop".into(),
        name: "a".into(),
        enqueued_ms: 0,
        payload: br#"{"type":"ADDED","object":{}}"#.to_vec(),
        attributes: Vec::new(),
    };
    /// A send's outcome, by its reason's text.
    #[derive(Debug, PartialEq)]
    enum Outcome {
        Retry(String, Option<Duration>),
        Refused(String),
    }
    use Outcome::{Refused, Retry};
    for (behaviour, expected) in [
        (
            Behaviour::Status(429, Some(2), "slow down"),
            Err(Retry("the receiver answered 429 Too Many Requests: slow down".into(), Some(Duration::from_secs(2)))),
        ),
        (
            Behaviour::Status(503, None, ""),
            Err(Retry("the receiver answered 503 Service Unavailable".into(), None)),
        ),
        (
            Behaviour::Status(408, None, ""),
            Err(Retry("the receiver answered 408 Request Timeout".into(), None)),
        ),
        (
            Behaviour::Status(404, None, "no such hook"),
            Err(Refused(
                "the receiver answered 404 Not Found: no such hook".into(),
            )),
        ),
        (
            Behaviour::Status(302, None, ""),
            Err(Refused(
                "the receiver answered 302 Found (redirects are not followed; configure the final URL)".into(),
            )),
        ),
        (Behaviour::Accept, Ok(())),
    ] {
        receiver.set(behaviour.clone());
        let got = webhook.send(&delivery).await.map_err(|e| match e {
            SendError::Retry { reason, after } => Retry(reason, after),
            SendError::Reject(why) => Refused(grw::error::Report(&why).to_string()),
        });
        assert_eq!(got, expected, "{behaviour:?}");
    }
    let last = receiver.requests().pop().unwrap();
    assert_eq!(last.header("grw-delivery-id"), "u/1/ADDED");
    assert_eq!(last.header("grw-group"), "core");
    assert_eq!(last.header("grw-namespace"), "shop");
    assert_eq!(last.header("grw-subscription"), "direct");
}

#[tokio::test]
async fn a_looping_filter_holds_up_only_the_subscription_that_uses_it() {
    let fake = cluster().await;
    let looped = Receiver::start().await;
    let plain = Receiver::start().await;
    let plugin_dir = tempfile::tempdir().unwrap();
    // Each decision takes the whole deadline, and the breaker never rests
    // the plugin: every change of `looped` costs a second.
    grw_e2e::plugins::install(
        plugin_dir.path(),
        "looper",
        "grw-test-plugin-loop-forever",
        Some(json!({"kind": "filter", "failMode": "open",
                    "limits": {"timeoutMs": 1000, "breakerFailures": 1000}})),
    );
    let grw = grw(&fake, json!({"pluginDir": plugin_dir.path()})).await;
    for (name, filters, receiver) in [
        ("looped", json!(["looper"]), &looped),
        ("plain", json!([]), &plain),
    ] {
        let (status, body) = subscribe(
            &grw,
            json!({"name": name, "kind": "ConfigMap", "filters": filters,
                   "webhook": {"url": receiver.url("/x"), "payload": "watch-event"}}),
        )
        .await;
        assert_eq!(status, 201, "{body}");
    }
    for i in 0..4 {
        fake.create(configmap("shop", &format!("cm-{i}"), "1"))
            .unwrap();
    }
    // Every change reaches the subscription without a filter while the
    // looping filter has decided one at most: they do not wait for it.
    let got = plain.wait_accepted(4, WAIT).await;
    let summaries: Vec<String> = got.iter().map(watch_summary).collect();
    assert_eq!(
        summaries,
        [
            "ADDED shop/cm-0 1",
            "ADDED shop/cm-1 1",
            "ADDED shop/cm-2 1",
            "ADDED shop/cm-3 1"
        ]
    );
    let (_, slow) = grw.get("/api/v1/subscriptions/looped").await;
    assert!(slow["pending"].as_u64().unwrap() >= 3, "{slow}");
    assert!(looped.accepted().len() <= 1);
    assert_serving(&grw).await;
    // Failing open, the looped subscription gets them all in the end.
    let got = looped.wait_accepted(4, WAIT).await;
    assert_eq!(got.len(), 4);
    let (_, plugin) = grw.get("/api/v1/plugins/looper").await;
    assert_eq!(plugin["stats"]["failures"]["timeout"], 4, "{plugin}");
}

#[tokio::test]
async fn a_filter_decides_each_change_once_for_every_subscription_using_it() {
    let fake = cluster().await;
    let first = Receiver::start().await;
    let second = Receiver::start().await;
    let plugin_dir = tempfile::tempdir().unwrap();
    grw_e2e::plugins::install(
        plugin_dir.path(),
        "only-shop",
        "grw-plugin-namespace-filter",
        Some(json!({"kind": "filter", "config": {"include": ["shop"]}})),
    );
    let grw = grw(&fake, json!({"pluginDir": plugin_dir.path()})).await;
    for (name, receiver) in [("first", &first), ("second", &second)] {
        let (status, body) = subscribe(
            &grw,
            json!({"name": name, "kind": "ConfigMap", "filters": ["only-shop"],
                   "webhook": {"url": receiver.url("/x"), "payload": "watch-event"}}),
        )
        .await;
        assert_eq!(status, 201, "{body}");
    }
    fake.create(configmap("shop", "kept", "1")).unwrap();
    fake.create(configmap("other", "skipped", "1")).unwrap();
    fake.update(configmap("shop", "kept", "2")).unwrap();
    fake.update(configmap("other", "skipped", "2")).unwrap();
    for receiver in [&first, &second] {
        let got = receiver.wait_accepted(2, WAIT).await;
        let summaries: Vec<String> = got.iter().map(watch_summary).collect();
        assert_eq!(summaries, ["ADDED shop/kept 1", "MODIFIED shop/kept 2"]);
    }
    assert!(
        eventually(WAIT, || async {
            let (_, s) = grw.get("/api/v1/subscriptions/second").await;
            s["filtered"] == 2 && s["pending"] == 0
        })
        .await
    );
    // Four changes, two subscriptions, one decision each.
    let (_, plugin) = grw.get("/api/v1/plugins/only-shop").await;
    assert_eq!(plugin["stats"]["calls"], 4, "{plugin}");
    let metrics = grw.get_raw("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("grw_subscription_filtered_total{subscription=\"first\"} 2"),
        "{metrics}"
    );
}

/// Sets the file size limit (`ulimit -f`) of a running process.
fn limit_file_size(pid: u32, bytes: Option<u64>) {
    let limit = libc::rlimit {
        rlim_cur: bytes.unwrap_or(libc::RLIM_INFINITY),
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: prlimit reads `limit` and writes nothing (null old limit).
    let result = unsafe {
        libc::prlimit(
            pid as libc::pid_t,
            libc::RLIMIT_FSIZE,
            &limit,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(result, 0, "prlimit: {}", std::io::Error::last_os_error());
}

#[tokio::test]
async fn a_data_dir_that_stops_taking_writes_bounds_memory_and_loses_no_final_state() {
    let fake = cluster().await;
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let data_dir = dir.path().join("data");
    let limit = 100_000;
    let config = config(
        &fake,
        &dir,
        json!({
            "dataDir": data_dir,
            "notificationBufferBytes": limit,
            "subscriptions": [{"name": "all", "kind": "ConfigMap",
                "webhook": {"url": receiver.url("/x"), "payload": "watch-event"}}],
        }),
    );
    let grw = Grw::start_in(dir, config, &[]).await;
    grw.wait_ready(READY).await;
    fake.create(configmap("shop", "before", "1")).unwrap();
    receiver.wait_accepted(1, WAIT).await;

    // The disk stops taking writes (a file size limit of 0 fails every write).
    limit_file_size(grw.pid(), Some(0));
    let big = "x".repeat(20_000);
    for round in 0..4 {
        for i in 0..10 {
            let object = configmap("shop", &format!("big-{i}"), &format!("{round}{big}"));
            if round == 0 {
                fake.create(object).unwrap();
            } else {
                fake.update(object).unwrap();
            }
        }
    }
    let feed_of = |kinds: &Value| -> Value {
        kinds["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|k| k["gvk"] == "v1/ConfigMap")
            .map(|k| k["notificationFeed"].clone())
            .unwrap_or(Value::Null)
    };
    assert!(
        eventually(WAIT, || async {
            feed_of(&grw.get("/api/v1/kinds").await.1)["behind"] == true
        })
        .await,
        "{}",
        grw.get("/api/v1/kinds").await.1
    );
    assert!(
        grw.logs()
            .contains("queueing the changes of watch v1/ConfigMap failed; trying again"),
        "the outbox really failed"
    );
    let feed = feed_of(&grw.get("/api/v1/kinds").await.1);
    assert_eq!(feed["limitBytes"], limit);
    assert!(feed["bufferedBytes"].as_u64().unwrap() <= limit, "{feed}");
    assert!(feed["overflows"].as_u64().unwrap() >= 1, "{feed}");
    let metrics = grw.get_raw("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("grw_notification_buffer_overflows_total{gvk=\"v1/ConfigMap\"}"),
        "{metrics}"
    );
    assert!(
        grw.logs()
            .contains("the notification feed does not keep up with this watch"),
        "the log says so"
    );
    // Queries are answered from the cache meanwhile.
    let (status, big_one) = grw
        .get("/api/v1/namespaces/shop/objects/configmaps/big-3")
        .await;
    assert_eq!(status, 200);
    assert!(big_one["data"]["k"].as_str().unwrap().starts_with('3'));

    // The disk recovers: the feed catches up, and every object's latest
    // state reaches the receiver.
    limit_file_size(grw.pid(), None);
    // `TYPE name round` of each delivery.
    let rounds = |received: &[Received]| -> Vec<String> {
        received
            .iter()
            .map(|r| {
                let o = &r.body["object"];
                let data = o["data"]["k"].as_str().unwrap_or("");
                format!(
                    "{} {} {}",
                    r.body["type"].as_str().unwrap_or("?"),
                    o["metadata"]["name"].as_str().unwrap_or("?"),
                    data.chars().next().unwrap_or('-')
                )
            })
            .collect()
    };
    assert!(
        eventually(Duration::from_secs(60), || async {
            let got = rounds(&deduplicated(&receiver.accepted()));
            (0..10).all(|i| got.iter().any(|r| r.ends_with(&format!(" big-{i} 3"))))
        })
        .await,
        "every object's last version is delivered; got {:?}",
        rounds(&receiver.accepted())
    );
    assert!(
        eventually(WAIT, || async {
            feed_of(&grw.get("/api/v1/kinds").await.1)["behind"] == false
        })
        .await
    );
    assert!(
        grw.logs()
            .contains("outbox opened again after a failed write")
    );
}

/// The value of a metric line `name{subscription="sub"} N`.
fn metric(metrics: &str, name: &str, subscription: &str) -> Option<u64> {
    let prefix = format!("{name}{{subscription=\"{subscription}\"}} ");
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(&prefix))
        .and_then(|v| v.parse().ok())
}

#[tokio::test]
async fn a_dead_receiver_fills_its_subscription_only_up_to_its_bounds() {
    let fake = cluster().await;
    let receiver = Receiver::start().await;
    receiver.set(Behaviour::Status(503, None, "down"));
    let (pending_bound, dead_bound) = (20_000, 30_000);
    let grw = grw(
        &fake,
        json!({"subscriptionPendingBytes": pending_bound, "subscriptionDeadLetterBytes": dead_bound}),
    )
    .await;
    let (status, created) = subscribe(
        &grw,
        json!({
            "name": "dead-end", "kind": "ConfigMap", "namespace": "shop",
            "webhook": {"url": receiver.url("/hook"), "payload": "watch-event"},
            "retry": {"initialDelayMs": 50, "maxDelaySeconds": 0.2}
        }),
    )
    .await;
    assert_eq!(status, 201, "{created}");
    // 60 changes of about 1.3 kB each: 78 kB, more than both bounds hold.
    let changes = 60;
    let data = "d".repeat(1000);
    for i in 0..changes {
        fake.create(configmap("shop", &format!("cm-{i:02}"), &data))
            .unwrap();
    }
    let path = "/api/v1/subscriptions/dead-end";
    // Every change is accounted for: pending, a dead letter, or dropped.
    let accounted = eventually(WAIT, || async {
        let (_, s) = grw.get(path).await;
        let metrics = grw.get_raw("/metrics").await.text().await.unwrap();
        let dropped = metric(
            &metrics,
            "grw_subscription_dead_letters_dropped_total",
            "dead-end",
        );
        s["pending"].as_u64().unwrap_or(0)
            + s["deadLetters"].as_u64().unwrap_or(0)
            + dropped.unwrap_or(0)
            == changes
    })
    .await;
    let (_, s) = grw.get(path).await;
    assert!(accounted, "{s}");
    let pending_bytes = s["pendingBytes"].as_u64().unwrap();
    let dead_bytes = s["deadLetterBytes"].as_u64().unwrap();
    assert!(pending_bytes > 0 && pending_bytes <= pending_bound, "{s}");
    assert!(dead_bytes > 0 && dead_bytes <= dead_bound, "{s}");
    let pending = s["pending"].as_u64().unwrap();
    let dead = s["deadLetters"].as_u64().unwrap();
    assert!(pending > 0 && pending < changes / 2, "{s}");

    let metrics = grw.get_raw("/metrics").await.text().await.unwrap();
    let evicted = metric(&metrics, "grw_subscription_evicted_total", "dead-end").unwrap();
    let dropped = metric(
        &metrics,
        "grw_subscription_dead_letters_dropped_total",
        "dead-end",
    )
    .unwrap();
    assert_eq!(evicted, changes - pending, "{metrics}");
    assert_eq!(dropped, evicted - dead, "{metrics}");
    assert!(dropped > 0, "{metrics}");
    assert_eq!(
        metric(&metrics, "grw_subscription_pending_bytes", "dead-end"),
        Some(pending_bytes),
        "{metrics}"
    );
    assert_eq!(
        metric(&metrics, "grw_subscription_dead_letter_bytes", "dead-end"),
        Some(dead_bytes),
        "{metrics}"
    );
    assert!(
        grw.logs()
            .contains("the subscription's lists reached their bound")
    );

    // The dead letters are the changes after the dropped ones, with the reason.
    let (_, letters) = grw.get(&format!("{path}/dead-letters")).await;
    let letters = letters["items"].as_array().unwrap().clone();
    assert_eq!(letters.len() as u64, dead);
    let first_dead = dropped as usize;
    for (i, letter) in letters.iter().enumerate() {
        assert_eq!(
            letter["name"],
            format!("cm-{:02}", first_dead + i),
            "{letter}"
        );
        assert_eq!(
            letter["reason"],
            format!(
                "not delivered: the subscription's pending deliveries exceeded {pending_bound} bytes (subscriptionPendingBytes), so the oldest became dead letters"
            )
        );
    }

    // The worker was retrying the oldest change: it moves on to what is
    // still queued, and once the receiver is back, only that arrives.
    let oldest_pending = format!("cm-{:02}", changes - pending);
    let tried = eventually(WAIT, || async {
        receiver
            .requests()
            .iter()
            .any(|r| r.body["object"]["metadata"]["name"] == oldest_pending.as_str())
    })
    .await;
    assert!(
        tried,
        "the worker still retries a change that became a dead letter"
    );
    receiver.set(Behaviour::Accept);
    let got = receiver.wait_accepted(pending as usize, WAIT).await;
    let names: Vec<String> = deduplicated(&got)
        .iter()
        .map(|r| {
            r.body["object"]["metadata"]["name"]
                .as_str()
                .unwrap_or("?")
                .to_string()
        })
        .collect();
    let expected: Vec<String> = ((changes - pending)..changes)
        .map(|i| format!("cm-{i:02}"))
        .collect();
    assert_eq!(names, expected);
    assert!(
        eventually(WAIT, || async {
            grw.get(path).await.1["pendingBytes"] == 0
        })
        .await
    );
}
