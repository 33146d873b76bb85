//! Checks the fake Kubernetes API server over HTTP, the way a real client talks to it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use grw_e2e::daemon::{bundled_recording, recorded_snapshot};
use grw_e2e::fake_api::{FakeApiOptions, FakeApiServer, Pace, StreamingLists};
use serde_json::{Value, json};

// ---------------------------------------------------------------- helpers

fn recording_path() -> PathBuf {
    bundled_recording()
}

/// The recording as `(type, object)` pairs.
fn recording() -> Vec<(String, Value)> {
    std::fs::read_to_string(recording_path())
        .expect("reading the recording")
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let mut v: Value = serde_json::from_str(l).unwrap();
            (v["type"].as_str().unwrap().to_string(), v["object"].take())
        })
        .collect()
}

fn snapshot() -> BTreeMap<String, Value> {
    let text = std::fs::read_to_string(recorded_snapshot()).expect("reading the snapshot");
    serde_json::from_str(&text).unwrap()
}

fn rv_of(object: &Value) -> u64 {
    object["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

fn name_of(object: &Value) -> &str {
    object["metadata"]["name"].as_str().unwrap()
}

async fn start() -> FakeApiServer {
    FakeApiServer::start(FakeApiOptions::default()).await
}

async fn start_loaded() -> FakeApiServer {
    let server = start().await;
    let applied = server.load_recording(&recording_path(), None).unwrap();
    assert_eq!(applied, 1737);
    server
}

/// A GET with an optional bearer token and Accept header.
async fn request(
    server: &FakeApiServer,
    path: &str,
    token: Option<&str>,
    accept: Option<&str>,
) -> (u16, String, Value) {
    let mut req = reqwest::Client::new().get(format!("{}{path}", server.url()));
    if let Some(token) = token {
        req = req.bearer_auth(token);
    }
    if let Some(accept) = accept {
        req = req.header("Accept", accept);
    }
    let response = req.send().await.expect("sending request");
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let body = response.bytes().await.expect("reading body");
    let value =
        serde_json::from_slice(&body).unwrap_or_else(|_| json!(String::from_utf8_lossy(&body)));
    (status, content_type, value)
}

async fn get(server: &FakeApiServer, path: &str) -> (u16, Value) {
    let (status, _, body) = request(server, path, None, None).await;
    (status, body)
}

async fn get_ok(server: &FakeApiServer, path: &str) -> Value {
    let (status, body) = get(server, path).await;
    assert_eq!(status, 200, "GET {path}: {body}");
    body
}

fn assert_status(body: &Value, code: u16, reason: &str) {
    assert_eq!(body["kind"], "Status", "{body}");
    assert_eq!(body["apiVersion"], "v1", "{body}");
    assert_eq!(body["status"], "Failure", "{body}");
    assert_eq!(body["reason"], reason, "{body}");
    assert_eq!(body["code"], code, "{body}");
    assert!(
        body["message"].as_str().is_some_and(|m| !m.is_empty()),
        "{body}"
    );
}

/// What reading a watch stream produced.
#[derive(Debug)]
enum Next {
    Event(Value),
    /// The body ended cleanly.
    End,
    /// The body broke off (connection closed mid-stream).
    Broken(String),
    /// Nothing arrived in time.
    Quiet,
}

struct WatchStream {
    response: reqwest::Response,
    buffer: Vec<u8>,
}

impl WatchStream {
    async fn open(server: &FakeApiServer, path_and_query: &str) -> WatchStream {
        let response = reqwest::Client::new()
            .get(format!("{}{path_and_query}", server.url()))
            .send()
            .await
            .expect("opening watch");
        assert_eq!(response.status(), 200, "watch {path_and_query}");
        assert_eq!(response.headers()["content-type"], "application/json");
        WatchStream {
            response,
            buffer: Vec::new(),
        }
    }

    async fn next(&mut self, wait: Duration) -> Next {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(pos) = self.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=pos).collect();
                return Next::Event(serde_json::from_slice(&line).expect("watch line is JSON"));
            }
            match tokio::time::timeout_at(deadline, self.response.chunk()).await {
                Err(_) => return Next::Quiet,
                Ok(Ok(Some(chunk))) => self.buffer.extend_from_slice(&chunk),
                Ok(Ok(None)) => {
                    assert!(self.buffer.is_empty(), "partial line at end of stream");
                    return Next::End;
                }
                Ok(Err(e)) => return Next::Broken(e.to_string()),
            }
        }
    }

    /// The next event that is not a bookmark.
    async fn event(&mut self) -> Value {
        loop {
            match self.next(Duration::from_secs(5)).await {
                Next::Event(e) if e["type"] == "BOOKMARK" => continue,
                Next::Event(e) => return e,
                other => panic!("expected an event, got {other:?}"),
            }
        }
    }
}

async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn pod(namespace: &str, name: &str, labels: Value) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    })
}

// ---------------------------------------------------------------- discovery

#[tokio::test]
async fn discovery_documents() {
    let server = start().await;

    let api = get_ok(&server, "/api").await;
    assert_eq!(api["kind"], "APIVersions");
    assert_eq!(api["versions"], json!(["v1"]));
    assert!(api["serverAddressByClientCIDRs"][0]["serverAddress"].is_string());

    let core = get_ok(&server, "/api/v1").await;
    assert_eq!(core["kind"], "APIResourceList");
    assert_eq!(core["groupVersion"], "v1");
    let resources = core["resources"].as_array().unwrap();
    let find = |list: &[Value], name: &str| {
        list.iter()
            .find(|r| r["name"] == name)
            .cloned()
            .unwrap_or(Value::Null)
    };
    let pods = find(resources, "pods");
    assert_eq!(pods["kind"], "Pod");
    assert_eq!(pods["singularName"], "pod");
    assert_eq!(pods["namespaced"], true);
    assert_eq!(pods["shortNames"], json!(["po"]));
    for verb in ["get", "list", "watch"] {
        assert!(pods["verbs"].as_array().unwrap().contains(&json!(verb)));
    }
    assert_eq!(find(resources, "nodes")["namespaced"], false);
    assert_eq!(find(resources, "secrets")["kind"], "Secret");
    assert_eq!(find(resources, "bindings")["verbs"], json!(["create"]));
    assert_eq!(find(resources, "pods/status")["kind"], "Pod");
    for name in [
        "namespaces",
        "configmaps",
        "services",
        "persistentvolumes",
        "persistentvolumeclaims",
    ] {
        assert!(
            find(resources, name).is_object(),
            "{name} missing from /api/v1"
        );
    }

    let apis = get_ok(&server, "/apis").await;
    assert_eq!(apis["kind"], "APIGroupList");
    let groups = apis["groups"].as_array().unwrap();
    let group = |name: &str| {
        groups
            .iter()
            .find(|g| g["name"] == name)
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(
        group("apps")["preferredVersion"],
        json!({"groupVersion": "apps/v1", "version": "v1"})
    );
    assert_eq!(group("batch")["versions"][0]["groupVersion"], "batch/v1");
    assert!(group("discovery.k8s.io").is_object());
    assert!(group("apiextensions.k8s.io").is_object());
    let istio = group("networking.istio.io");
    assert_eq!(istio["preferredVersion"]["version"], "v1");
    let versions: Vec<&str> = istio["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_str().unwrap())
        .collect();
    assert_eq!(versions, ["v1", "v1beta1"]);

    let apps = get_ok(&server, "/apis/apps/v1").await;
    assert_eq!(apps["groupVersion"], "apps/v1");
    let apps_resources = apps["resources"].as_array().unwrap();
    for (name, kind) in [
        ("deployments", "Deployment"),
        ("replicasets", "ReplicaSet"),
        ("statefulsets", "StatefulSet"),
        ("daemonsets", "DaemonSet"),
    ] {
        assert_eq!(find(apps_resources, name)["kind"], kind);
    }
    let scale = find(apps_resources, "deployments/scale");
    assert_eq!(
        (scale["group"].as_str(), scale["kind"].as_str()),
        (Some("autoscaling"), Some("Scale"))
    );
    let crds = get_ok(&server, "/apis/apiextensions.k8s.io/v1").await;
    assert_eq!(
        find(
            crds["resources"].as_array().unwrap(),
            "customresourcedefinitions"
        )["namespaced"],
        false
    );
    let beta = get_ok(&server, "/apis/networking.istio.io/v1beta1").await;
    let beta_resources = beta["resources"].as_array().unwrap();
    assert_eq!(find(beta_resources, "gateways")["kind"], "Gateway");
    assert_eq!(
        find(beta_resources, "virtualservices")["shortNames"],
        json!(["vs"])
    );
    let group_doc = get_ok(&server, "/apis/networking.istio.io").await;
    assert_eq!(group_doc["kind"], "APIGroup");

    for path in [
        "/apis/nope.example.com/v1",
        "/apis/apps/v2",
        "/api/v2",
        "/apis/nope.example.com",
        "/apis/apps/v1/widgets",
    ] {
        let (status, body) = get(&server, path).await;
        assert_eq!(status, 404, "{path}");
        assert_status(&body, 404, "NotFound");
    }

    let version = get_ok(&server, "/version").await;
    assert_eq!(version["major"], "1");
    assert!(version["gitVersion"].as_str().unwrap().starts_with("v1."));
    for field in [
        "minor",
        "gitCommit",
        "gitTreeState",
        "buildDate",
        "goVersion",
        "compiler",
        "platform",
    ] {
        assert!(version[field].is_string(), "{field}");
    }

    // Aggregated discovery is not served: the classic document comes back as plain JSON.
    let accept =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    let (status, content_type, body) = request(&server, "/apis", None, Some(accept)).await;
    assert_eq!(status, 200);
    assert_eq!(content_type, "application/json");
    assert_eq!(body["kind"], "APIGroupList");
}

// ---------------------------------------------------------------- recording and lists

#[tokio::test]
async fn recording_matches_snapshot() {
    let server = start_loaded().await;
    assert_eq!(server.current_rv(), 2588);

    let mut total = 0;
    for (key, list) in snapshot() {
        let (plural, group) = key.split_once('.').unwrap_or((key.as_str(), ""));
        let expected_items = list["items"].as_array().unwrap();
        let api_version = expected_items[0]["apiVersion"].as_str().unwrap();
        let path = if group.is_empty() {
            format!("/api/{api_version}/{plural}")
        } else {
            format!("/apis/{api_version}/{plural}")
        };
        let body = get_ok(&server, &path).await;
        let kind = expected_items[0]["kind"].as_str().unwrap();
        assert_eq!(body["kind"], format!("{kind}List"), "{path}");
        assert_eq!(body["apiVersion"], api_version, "{path}");
        assert_eq!(body["metadata"]["resourceVersion"], "2588", "{path}");
        assert!(body["metadata"].get("continue").is_none());
        let items = body["items"].as_array().unwrap();
        for item in items {
            assert!(
                item.get("kind").is_none() && item.get("apiVersion").is_none(),
                "{path}: item carries its type"
            );
        }
        let identity = |o: &Value| {
            let m = &o["metadata"];
            (
                m["namespace"].as_str().unwrap_or("").to_string(),
                m["name"].to_string(),
                m["resourceVersion"].to_string(),
                m["uid"].to_string(),
            )
        };
        let got: BTreeSet<_> = items.iter().map(identity).collect();
        let want: BTreeSet<_> = expected_items.iter().map(identity).collect();
        assert_eq!(got, want, "{path}");
        assert_eq!(server.objects(api_version, kind).len(), items.len());
        total += items.len();
    }
    assert_eq!(total, 184);
    assert_eq!(server.objects("v1", "Pod").len(), 48);
    assert_eq!(server.objects("apps/v1", "Deployment").len(), 18);
    assert_eq!(server.objects("apps/v1", "ReplicaSet").len(), 26);

    // The items are in namespace/name order, like etcd keys.
    let pods = get_ok(&server, "/api/v1/pods").await;
    let keys: Vec<(String, String)> = pods["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["metadata"]["namespace"].as_str().unwrap().into(),
                name_of(p).into(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);

    // The same Istio objects are served as v1, with the v1 apiVersion.
    let vs = get_ok(
        &server,
        "/apis/networking.istio.io/v1/namespaces/ingress/virtualservices",
    )
    .await;
    assert_eq!(vs["apiVersion"], "networking.istio.io/v1");
    assert_eq!(vs["items"].as_array().unwrap().len(), 2);

    // Namespaced lists.
    let shop = get_ok(&server, "/api/v1/namespaces/shop/pods").await;
    assert_eq!(shop["items"].as_array().unwrap().len(), 24);
    assert!(
        shop["items"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["metadata"]["namespace"] == "shop")
    );
    let (status, body) = get(&server, "/api/v1/namespaces/shop/nodes").await;
    assert_eq!(status, 404);
    assert_status(&body, 404, "NotFound");

    // Two CRD objects exist for the Istio kinds.
    let crds = get_ok(
        &server,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    )
    .await;
    let names: Vec<&str> = crds["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(name_of)
        .collect();
    assert_eq!(
        names,
        [
            "gateways.networking.istio.io",
            "virtualservices.networking.istio.io"
        ]
    );
}

#[tokio::test]
async fn single_objects() {
    let server = start_loaded().await;
    let ns = get_ok(&server, "/api/v1/namespaces/shop").await;
    assert_eq!(
        (ns["kind"].as_str(), ns["apiVersion"].as_str()),
        (Some("Namespace"), Some("v1"))
    );
    let node = get_ok(&server, "/api/v1/nodes/node-a").await;
    assert_eq!(node["kind"], "Node");
    let expected = server.get("v1", "Node", None, "node-a").unwrap();
    assert_eq!(node, expected);
    let (status, body) = get(&server, "/api/v1/namespaces/shop/pods/nope").await;
    assert_eq!(status, 404);
    assert_status(&body, 404, "NotFound");
    assert_eq!(body["message"], "pods \"nope\" not found");
    assert!(server.get("v1", "Pod", Some("shop"), "nope").is_none());
}

#[tokio::test]
async fn selectors_filter_lists() {
    let server = start_loaded().await;
    let snapshot = snapshot();
    let pods = snapshot["pods"]["items"].as_array().unwrap();
    let label = |p: &Value, k: &str| p["metadata"]["labels"][k].as_str().map(str::to_string);

    let count = |body: &Value| body["items"].as_array().unwrap().len();
    let want = pods
        .iter()
        .filter(|p| {
            label(p, "app.kubernetes.io/part-of").as_deref() == Some("shop")
                && label(p, "tier").as_deref() != Some("backend")
        })
        .count();
    assert!(want > 0);
    let body = get_ok(
        &server,
        "/api/v1/pods?labelSelector=app.kubernetes.io%2Fpart-of%3D%3Dshop%2Ctier%21%3Dbackend",
    )
    .await;
    assert_eq!(count(&body), want);

    let want = pods
        .iter()
        .filter(|p| label(p, "k8s-app").is_some())
        .count();
    assert_eq!(
        count(&get_ok(&server, "/api/v1/pods?labelSelector=k8s-app").await),
        want
    );
    let want = pods
        .iter()
        .filter(|p| label(p, "k8s-app").is_none())
        .count();
    assert_eq!(
        count(&get_ok(&server, "/api/v1/pods?labelSelector=%21k8s-app").await),
        want
    );
    let want = pods
        .iter()
        .filter(|p| label(p, "tier").as_deref() == Some("backend"))
        .count();
    assert_eq!(
        count(&get_ok(&server, "/api/v1/pods?labelSelector=tier%3Dbackend").await),
        want
    );

    let body = get_ok(
        &server,
        "/api/v1/pods?fieldSelector=metadata.namespace%3Dmonitoring",
    )
    .await;
    assert_eq!(count(&body), 8);
    let first = name_of(&pods[0]).to_string();
    let body = get_ok(
        &server,
        &format!("/api/v1/pods?fieldSelector=metadata.name%3D{first}"),
    )
    .await;
    assert_eq!(count(&body), 1);
    assert_eq!(name_of(&body["items"][0]), first);

    let (status, body) = get(&server, "/api/v1/pods?labelSelector=a%20b").await;
    assert_eq!(status, 400);
    assert_status(&body, 400, "BadRequest");
}

#[tokio::test]
async fn paging_returns_every_pod_once_from_one_snapshot() {
    let server = start_loaded().await;
    let mut names = Vec::new();
    let mut pages = 0;
    let mut path = "/api/v1/pods?limit=10".to_string();
    loop {
        let body = get_ok(&server, &path).await;
        pages += 1;
        assert_eq!(body["metadata"]["resourceVersion"], "2588");
        let items = body["items"].as_array().unwrap();
        names.extend(items.iter().map(|p| {
            format!(
                "{}/{}",
                p["metadata"]["namespace"].as_str().unwrap(),
                name_of(p)
            )
        }));
        if pages == 1 {
            // Changes after the first page do not show up in later pages.
            server.create(pod("shop", "zz-late", json!({}))).unwrap();
            server.delete("v1", "Pod", Some("shop"), "zz-late").unwrap();
            let last = server.objects("v1", "Pod").last().cloned().unwrap();
            server
                .delete(
                    "v1",
                    "Pod",
                    last["metadata"]["namespace"].as_str(),
                    name_of(&last),
                )
                .unwrap();
            server.create(pod("zzz", "newcomer", json!({}))).unwrap();
        }
        match body["metadata"]["continue"].as_str() {
            Some(token) => {
                assert_eq!(items.len(), 10);
                assert_eq!(body["metadata"]["remainingItemCount"], 48 - 10 * pages);
                path = format!("/api/v1/pods?limit=10&continue={token}");
            }
            None => {
                assert!(body["metadata"].get("remainingItemCount").is_none());
                break;
            }
        }
    }
    assert_eq!(pages, 5);
    assert_eq!(names.len(), 48);
    let unique: BTreeSet<_> = names.iter().collect();
    assert_eq!(unique.len(), 48);
    assert!(!names.iter().any(|n| n.starts_with("zzz/")));
    assert_eq!(
        server.objects("v1", "Pod").len(),
        48,
        "one deleted, one created"
    );
}

#[tokio::test]
async fn compacted_continue_token_is_expired() {
    let server = start_loaded().await;
    let body = get_ok(&server, "/api/v1/pods?limit=5").await;
    let token = body["metadata"]["continue"].as_str().unwrap().to_string();
    // Still valid while nothing is compacted, even after changes.
    server.create(pod("shop", "extra", json!({}))).unwrap();
    let (status, _) = get(&server, &format!("/api/v1/pods?limit=5&continue={token}")).await;
    assert_eq!(status, 200);
    server.compact();
    assert_eq!(server.compacted_rv(), server.current_rv());
    let (status, body) = get(&server, &format!("/api/v1/pods?limit=5&continue={token}")).await;
    assert_eq!(status, 410);
    assert_status(&body, 410, "Expired");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .starts_with("The provided continue parameter is too old")
    );
    let (status, body) = get(&server, "/api/v1/pods?limit=5&continue=garbage").await;
    assert_eq!(status, 400);
    assert_status(&body, 400, "BadRequest");
}

// ---------------------------------------------------------------- watches

#[tokio::test]
async fn watch_replays_from_resource_version_then_follows_live_changes() {
    let server = start_loaded().await;
    let recording = recording();
    let from = rv_of(&recording[900].1);
    let expected: Vec<(String, String, u64)> = recording
        .iter()
        .filter(|(_, o)| o["kind"] == "Pod" && rv_of(o) > from)
        .map(|(t, o)| (t.clone(), name_of(o).to_string(), rv_of(o)))
        .collect();
    assert!(expected.len() > 100);

    let mut stream = WatchStream::open(
        &server,
        &format!("/api/v1/pods?watch=true&resourceVersion={from}"),
    )
    .await;
    for (i, want) in expected.iter().enumerate() {
        let event = stream.event().await;
        assert_eq!(event["object"]["kind"], "Pod");
        assert_eq!(event["object"]["apiVersion"], "v1");
        let got = (
            event["type"].as_str().unwrap().to_string(),
            name_of(&event["object"]).to_string(),
            rv_of(&event["object"]),
        );
        assert_eq!(&got, want, "event {i}");
    }
    assert!(matches!(
        stream.next(Duration::from_millis(200)).await,
        Next::Quiet
    ));

    let rv = server
        .create(pod("shop", "live-1", json!({"app": "live"})))
        .unwrap();
    assert_eq!(rv, 2589);
    let event = stream.event().await;
    assert_eq!(event["type"], "ADDED");
    assert_eq!(name_of(&event["object"]), "live-1");
    assert_eq!(rv_of(&event["object"]), rv);
    assert!(event["object"]["metadata"]["uid"].is_string());

    let mut changed = server.get("v1", "Pod", Some("shop"), "live-1").unwrap();
    changed["status"] = json!({"phase": "Running"});
    server.update(changed).unwrap();
    let event = stream.event().await;
    assert_eq!(event["type"], "MODIFIED");
    assert_eq!(event["object"]["status"]["phase"], "Running");

    // Other kinds and other namespaces do not leak in.
    server.create(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "namespace": "shop"}})).unwrap();
    server.delete("v1", "Pod", Some("shop"), "live-1").unwrap();
    let event = stream.event().await;
    assert_eq!(
        (event["type"].as_str(), name_of(&event["object"])),
        (Some("DELETED"), "live-1")
    );
    assert_eq!(server.watch_requests("/api/v1/pods"), 1);
    assert_eq!(server.list_requests("/api/v1/pods"), 0);
    assert_eq!(server.open_watches(), 1);
    let recorded = server.requests();
    assert!(
        recorded
            .iter()
            .any(|r| r.watch && r.query == format!("watch=true&resourceVersion={from}"))
    );
}

#[tokio::test]
async fn namespaced_selected_watch_sees_objects_enter_and_leave() {
    let server = start_loaded().await;
    let now = server.current_rv();
    let mut stream = WatchStream::open(
        &server,
        &format!(
            "/api/v1/namespaces/shop/pods?watch=1&resourceVersion={now}&labelSelector=role%3Dprobe"
        ),
    )
    .await;
    server
        .create(pod("monitoring", "elsewhere", json!({"role": "probe"})))
        .unwrap();
    server
        .create(pod("shop", "p", json!({"role": "probe"})))
        .unwrap();
    let event = stream.event().await;
    assert_eq!(
        (event["type"].as_str(), name_of(&event["object"])),
        (Some("ADDED"), "p")
    );

    let mut relabelled = server.get("v1", "Pod", Some("shop"), "p").unwrap();
    relabelled["metadata"]["labels"] = json!({"role": "other"});
    let rv = server.update(relabelled.clone()).unwrap();
    let event = stream.event().await;
    assert_eq!(event["type"], "DELETED");
    assert_eq!(
        event["object"]["metadata"]["labels"]["role"], "probe",
        "the last matching state"
    );
    assert_eq!(rv_of(&event["object"]), rv);

    relabelled["metadata"]["labels"] = json!({"role": "probe"});
    server.update(relabelled).unwrap();
    assert_eq!(stream.event().await["type"], "ADDED");
}

#[tokio::test]
async fn watch_without_resource_version_starts_with_current_objects() {
    let server = start_loaded().await;
    let mut stream =
        WatchStream::open(&server, "/api/v1/namespaces/monitoring/pods?watch=true").await;
    let mut names = BTreeSet::new();
    for _ in 0..8 {
        let event = stream.event().await;
        assert_eq!(event["type"], "ADDED");
        names.insert(name_of(&event["object"]).to_string());
    }
    assert_eq!(names.len(), 8);
    assert!(matches!(
        stream.next(Duration::from_millis(200)).await,
        Next::Quiet
    ));
    server
        .create(pod("monitoring", "after", json!({})))
        .unwrap();
    assert_eq!(name_of(&stream.event().await["object"]), "after");
}

#[tokio::test]
async fn streaming_lists_as_servers_of_each_version_answer_them() {
    let server = start_loaded().await;
    let path = "/api/v1/namespaces/monitoring/pods?watch=true&sendInitialEvents=true&allowWatchBookmarks=true";
    // The objects as ADDED, then the bookmark that ends them at the current
    // resourceVersion, then live changes.
    let mut stream = WatchStream::open(
        &server,
        &format!("{path}&resourceVersionMatch=NotOlderThan"),
    )
    .await;
    let mut names = BTreeSet::new();
    for _ in 0..8 {
        let event = stream.event().await;
        assert_eq!(event["type"], "ADDED", "{event}");
        names.insert(name_of(&event["object"]).to_string());
    }
    assert_eq!(names.len(), 8);
    let Next::Event(end) = stream.next(Duration::from_secs(5)).await else {
        panic!("no bookmark after the initial events");
    };
    assert_eq!(end["type"], "BOOKMARK", "{end}");
    assert_eq!(
        end["object"]["metadata"]["annotations"],
        json!({"k8s.io/initial-events-end": "true"})
    );
    assert_eq!(rv_of(&end["object"]), server.current_rv());
    server
        .create(pod("monitoring", "after", json!({})))
        .unwrap();
    assert_eq!(name_of(&stream.event().await["object"]), "after");

    // resourceVersionMatch=NotOlderThan is required, as the API server checks.
    let (code, body) = get(&server, path).await;
    assert_eq!(code, 422);
    assert_eq!(
        body["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"
    );

    // With the WatchList feature off.
    server.set_streaming_lists(StreamingLists::Refused);
    let (code, body) = get(
        &server,
        &format!("{path}&resourceVersionMatch=NotOlderThan"),
    )
    .await;
    assert_status(&body, 422, "Invalid");
    assert_eq!(code, 422);
    assert!(
        body["message"].as_str().unwrap().ends_with(
            "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"
        ),
        "{body}"
    );

    // Before 1.27: a plain watch from now, the objects without the end bookmark.
    server.set_streaming_lists(StreamingLists::Ignored);
    let mut stream = WatchStream::open(
        &server,
        &format!("{path}&resourceVersionMatch=NotOlderThan"),
    )
    .await;
    for _ in 0..9 {
        assert_eq!(stream.event().await["type"], "ADDED");
    }
    assert!(matches!(
        stream.next(Duration::from_millis(300)).await,
        Next::Quiet
    ));
}

#[tokio::test]
async fn bookmarks_and_timeout() {
    let server = FakeApiServer::start(FakeApiOptions {
        bookmark_interval: Duration::from_millis(100),
        ..FakeApiOptions::default()
    })
    .await;
    server.load_recording(&recording_path(), Some(100)).unwrap();
    let now = server.current_rv();
    let started = Instant::now();
    let mut stream = WatchStream::open(
        &server,
        &format!("/apis/apps/v1/deployments?watch=true&resourceVersion={now}&allowWatchBookmarks=true&timeoutSeconds=1"),
    )
    .await;
    let mut bookmarks = 0;
    loop {
        match stream.next(Duration::from_secs(5)).await {
            Next::Event(event) => {
                assert_eq!(event["type"], "BOOKMARK", "{event}");
                let object = &event["object"];
                assert_eq!(
                    (object["kind"].as_str(), object["apiVersion"].as_str()),
                    (Some("Deployment"), Some("apps/v1"))
                );
                assert_eq!(rv_of(object), server.current_rv());
                assert!(object["metadata"]["annotations"].is_object());
                bookmarks += 1;
            }
            Next::End => break,
            other => panic!("expected bookmarks then a clean end, got {other:?}"),
        }
    }
    let elapsed = started.elapsed();
    assert!(
        elapsed >= Duration::from_millis(900) && elapsed < Duration::from_secs(3),
        "{elapsed:?}"
    );
    assert!(bookmarks >= 3, "{bookmarks} bookmarks");
    eventually("the watch to close", || server.open_watches() == 0).await;

    // Without allowWatchBookmarks there are none.
    let mut quiet = WatchStream::open(
        &server,
        &format!("/apis/apps/v1/deployments?watch=true&resourceVersion={now}"),
    )
    .await;
    assert!(matches!(
        quiet.next(Duration::from_millis(400)).await,
        Next::Quiet
    ));
}

#[tokio::test]
async fn compaction_expires_old_watch_resource_versions() {
    let server = start_loaded().await;
    server.create(pod("shop", "x", json!({}))).unwrap();
    server.compact();
    let compacted = server.current_rv();
    let mut stream =
        WatchStream::open(&server, "/api/v1/pods?watch=true&resourceVersion=1000").await;
    let event = stream.event().await;
    assert_eq!(event["type"], "ERROR");
    assert_eq!(
        event["object"],
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": format!("too old resource version: 1000 ({compacted})"),
            "reason": "Expired", "code": 410,
        })
    );
    assert!(matches!(
        stream.next(Duration::from_secs(2)).await,
        Next::End
    ));

    // From the compaction point itself it still works.
    let mut ok = WatchStream::open(
        &server,
        &format!("/api/v1/pods?watch=true&resourceVersion={compacted}"),
    )
    .await;
    server.delete("v1", "Pod", Some("shop"), "x").unwrap();
    assert_eq!(ok.event().await["type"], "DELETED");
}

#[tokio::test]
async fn drop_watches_breaks_open_streams() {
    let server = start_loaded().await;
    let now = server.current_rv();
    let mut a = WatchStream::open(
        &server,
        &format!("/api/v1/pods?watch=true&resourceVersion={now}"),
    )
    .await;
    let mut b = WatchStream::open(
        &server,
        &format!("/api/v1/nodes?watch=true&resourceVersion={now}&allowWatchBookmarks=true"),
    )
    .await;
    eventually("two open watches", || server.open_watches() == 2).await;
    server.drop_watches();
    for stream in [&mut a, &mut b] {
        match stream.next(Duration::from_secs(2)).await {
            Next::Broken(reason) => assert!(!reason.is_empty()),
            other => panic!("expected a broken stream, got {other:?}"),
        }
    }
    eventually("no open watches", || server.open_watches() == 0).await;
    // New watches work again.
    let mut c = WatchStream::open(
        &server,
        &format!("/api/v1/pods?watch=true&resourceVersion={now}"),
    )
    .await;
    server.create(pod("shop", "again", json!({}))).unwrap();
    assert_eq!(name_of(&c.event().await["object"]), "again");
}

// ---------------------------------------------------------------- faults and auth

#[tokio::test]
async fn injected_failures_then_recovery() {
    let server = start().await;
    server.fail_requests("/api/v1/pods", 403, 2);
    for _ in 0..2 {
        let (status, body) = get(&server, "/api/v1/pods").await;
        assert_eq!(status, 403);
        assert_status(&body, 403, "Forbidden");
    }
    let (status, _) = get(&server, "/api/v1/namespaces/x/pods").await;
    assert_eq!(status, 200, "other paths are unaffected");
    assert_eq!(get_ok(&server, "/api/v1/pods").await["kind"], "PodList");

    server.fail_requests("watch=true", 500, usize::MAX);
    for _ in 0..3 {
        let (status, body) = get(&server, "/api/v1/pods?watch=true").await;
        assert_eq!(status, 500);
        assert_status(&body, 500, "InternalError");
    }
    assert_eq!(
        get(&server, "/api/v1/pods").await.0,
        200,
        "lists are unaffected"
    );
    server.clear_failures();
    WatchStream::open(&server, "/api/v1/pods?watch=true").await;

    server.fail_requests("/apis", 401, 1);
    let (status, body) = get(&server, "/apis").await;
    assert_eq!(status, 401);
    assert_status(&body, 401, "Unauthorized");
    assert_eq!(get(&server, "/apis").await.0, 200);
    assert_eq!(server.list_requests("/apis"), 2);
}

#[tokio::test]
async fn bearer_token_is_required_and_can_change() {
    let server = FakeApiServer::start(FakeApiOptions {
        token: Some("first".to_string()),
        ..FakeApiOptions::default()
    })
    .await;
    let unauthorized = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "Unauthorized", "reason": "Unauthorized", "code": 401,
    });
    for token in [None, Some("wrong")] {
        let (status, _, body) = request(&server, "/api/v1/pods", token, None).await;
        assert_eq!(status, 401);
        assert_eq!(body, unauthorized);
    }
    assert_eq!(
        request(&server, "/api/v1/pods", Some("first"), None)
            .await
            .0,
        200
    );

    server.set_token(Some("second".to_string()));
    assert_eq!(request(&server, "/api", Some("first"), None).await.0, 401);
    assert_eq!(request(&server, "/api", Some("second"), None).await.0, 200);
    server.set_token(None);
    assert_eq!(request(&server, "/api", None, None).await.0, 200);
    assert_eq!(
        server.requests().len(),
        6,
        "rejected requests are recorded too"
    );
}

#[tokio::test]
async fn slow_lists() {
    let server = start().await;
    server.set_list_delay(Duration::from_millis(300));
    let started = Instant::now();
    get_ok(&server, "/api/v1/pods").await;
    assert!(started.elapsed() >= Duration::from_millis(300));
    let started = Instant::now();
    get_ok(&server, "/api/v1").await;
    assert!(
        started.elapsed() < Duration::from_millis(300),
        "discovery is not delayed"
    );
}

#[tokio::test]
async fn paced_lists_hand_out_objects_no_faster_than_the_pace() {
    let server = start_loaded().await;
    let unpaced = Instant::now();
    let pods = get_ok(&server, "/api/v1/pods").await["items"]
        .as_array()
        .unwrap()
        .len();
    let unpaced = unpaced.elapsed();
    assert!(pods > 20, "{pods} Pods");
    // A pace that makes the list take half a second or more.
    let per_second = u32::try_from(pods * 2).unwrap();
    let floor = Duration::from_millis(500);
    assert!(unpaced < floor / 2, "unpaced, the list took {unpaced:?}");
    server.set_list_pace(Pace::new(per_second));

    let started = Instant::now();
    let listed = get_ok(&server, "/api/v1/pods").await;
    assert_eq!(listed["items"].as_array().unwrap().len(), pods);
    assert!(started.elapsed() >= floor, "{:?}", started.elapsed());

    let started = Instant::now();
    let mut stream = WatchStream::open(
        &server,
        "/api/v1/pods?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan",
    )
    .await;
    let mut added = 0;
    loop {
        match stream.next(Duration::from_secs(5)).await {
            Next::Event(e) if e["type"] == "BOOKMARK" => break,
            Next::Event(e) => {
                assert_eq!(e["type"], "ADDED", "{e}");
                added += 1;
            }
            other => panic!("expected an event, got {other:?}"),
        }
    }
    assert_eq!(added, pods);
    assert!(started.elapsed() >= floor, "{:?}", started.elapsed());

    server.set_list_pace(None);
    let started = Instant::now();
    get_ok(&server, "/api/v1/pods").await;
    assert!(started.elapsed() < floor / 2, "{:?}", started.elapsed());
}

// ---------------------------------------------------------------- CRDs

#[tokio::test]
async fn crds_come_and_go() {
    let server = FakeApiServer::start(FakeApiOptions {
        istio_crds_installed: false,
        ..FakeApiOptions::default()
    })
    .await;
    let group_names = |apis: &Value| -> Vec<String> {
        apis["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        !group_names(&get_ok(&server, "/apis").await).contains(&"networking.istio.io".to_string())
    );
    assert_eq!(
        get(&server, "/apis/networking.istio.io/v1beta1/gateways")
            .await
            .0,
        404
    );
    // Without the CRDs the Istio events of the recording are skipped.
    assert_eq!(
        server.load_recording(&recording_path(), None).unwrap(),
        1737 - 6
    );
    assert!(
        server
            .objects("networking.istio.io/v1beta1", "Gateway")
            .is_empty()
    );

    let now = server.current_rv();
    let crd_path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    let mut crds = WatchStream::open(
        &server,
        &format!("{crd_path}?watch=true&resourceVersion={now}"),
    )
    .await;
    server.add_crd("example.com", "v1", "Widget", "widgets", true);
    let event = crds.event().await;
    assert_eq!(event["type"], "ADDED");
    let crd = &event["object"];
    assert_eq!(
        (crd["kind"].as_str(), crd["apiVersion"].as_str()),
        (
            Some("CustomResourceDefinition"),
            Some("apiextensions.k8s.io/v1")
        )
    );
    assert_eq!(name_of(crd), "widgets.example.com");
    assert_eq!(crd["spec"]["group"], "example.com");
    assert_eq!(crd["spec"]["scope"], "Namespaced");
    assert_eq!(
        crd["spec"]["names"],
        json!({"kind": "Widget", "listKind": "WidgetList", "plural": "widgets", "singular": "widget", "shortNames": [], "categories": []})
    );
    assert_eq!(crd["spec"]["versions"][0]["name"], "v1");
    assert_eq!(crd["spec"]["versions"][0]["served"], true);
    assert_eq!(crd["spec"]["versions"][0]["storage"], true);

    let apis = get_ok(&server, "/apis").await;
    assert!(group_names(&apis).contains(&"example.com".to_string()));
    let resources = get_ok(&server, "/apis/example.com/v1").await;
    assert_eq!(resources["resources"][0]["name"], "widgets");
    assert_eq!(resources["resources"][0]["kind"], "Widget");

    let now = server.current_rv();
    let mut widgets = WatchStream::open(
        &server,
        &format!("/apis/example.com/v1/widgets?watch=true&resourceVersion={now}"),
    )
    .await;
    server
        .create(json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "shop"}, "spec": {"size": 3}}))
        .unwrap();
    assert_eq!(widgets.event().await["object"]["spec"]["size"], 3);
    let list = get_ok(&server, "/apis/example.com/v1/namespaces/shop/widgets").await;
    assert_eq!(list["kind"], "WidgetList");
    assert_eq!(list["items"].as_array().unwrap().len(), 1);

    server.remove_crd("example.com", "widgets");
    let event = widgets.event().await;
    assert_eq!(
        (event["type"].as_str(), name_of(&event["object"])),
        (Some("DELETED"), "w")
    );
    assert!(
        matches!(widgets.next(Duration::from_secs(2)).await, Next::End),
        "the watch of a removed resource ends"
    );
    let event = crds.event().await;
    assert_eq!(
        (event["type"].as_str(), name_of(&event["object"])),
        (Some("DELETED"), "widgets.example.com")
    );
    assert_eq!(get(&server, "/apis/example.com/v1").await.0, 404);
    assert_eq!(get(&server, "/apis/example.com/v1/widgets").await.0, 404);
    assert!(!group_names(&get_ok(&server, "/apis").await).contains(&"example.com".to_string()));

    // Installing Istio later shows both versions and ADDs both CRDs.
    server.add_istio_crds();
    for _ in 0..2 {
        let event = crds.event().await;
        assert_eq!(event["type"], "ADDED");
        assert!(name_of(&event["object"]).ends_with(".networking.istio.io"));
    }
    let beta = get_ok(&server, "/apis/networking.istio.io/v1beta1").await;
    assert_eq!(beta["resources"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn shutdown_stops_serving() {
    let server = start().await;
    let url = server.url();
    let mut stream = WatchStream::open(&server, "/api/v1/pods?watch=true").await;
    server.shutdown().await;
    assert!(matches!(
        stream.next(Duration::from_secs(2)).await,
        Next::End | Next::Broken(_)
    ));
    assert!(reqwest::get(format!("{url}/api")).await.is_err());
}

/// A POST or PUT of a JSON body.
async fn write(server: &FakeApiServer, put: bool, path: &str, body: &Value) -> (u16, Value) {
    let url = format!("{}{path}", server.url());
    let client = reqwest::Client::new();
    let request = if put {
        client.put(url)
    } else {
        client.post(url)
    };
    let response = request.json(body).send().await.expect("sending request");
    let status = response.status().as_u16();
    (status, response.json().await.expect("a JSON answer"))
}

#[tokio::test]
async fn leases_are_created_and_replaced_with_optimistic_concurrency() {
    let server = start().await;
    let collection = "/apis/coordination.k8s.io/v1/namespaces/grw/leases";
    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": "grw"}, "spec": {"holderIdentity": "a", "leaseDurationSeconds": 15}});
    let (status, created) = write(&server, false, collection, &lease).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["metadata"]["namespace"], "grw");
    assert_eq!(created["spec"]["holderIdentity"], "a");
    let (status, again) = write(&server, false, collection, &lease).await;
    assert_eq!(status, 409);
    assert_status(&again, 409, "AlreadyExists");
    assert_eq!(
        again["message"],
        "leases.coordination.k8s.io \"grw\" already exists"
    );

    let path = format!("{collection}/grw");
    let mut taken = created.clone();
    taken["spec"]["holderIdentity"] = json!("b");
    let (status, replaced) = write(&server, true, &path, &taken).await;
    assert_eq!(status, 200, "{replaced}");
    assert_ne!(
        replaced["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
    // A replace based on the old read loses.
    let (status, stale) = write(&server, true, &path, &created).await;
    assert_eq!(status, 409);
    assert_status(&stale, 409, "Conflict");
    assert_eq!(
        stale["message"],
        "Operation cannot be fulfilled on leases.coordination.k8s.io \"grw\": the object has been modified; please apply your changes to the latest version and try again"
    );
    assert_eq!(get_ok(&server, &path).await["spec"]["holderIdentity"], "b");

    let (status, missing) = write(&server, true, &format!("{collection}/other"), &lease).await;
    assert_eq!(status, 400, "{missing}");
    let (status, wrong) = write(&server, false, collection, &json!({"kind": "Pod"})).await;
    assert_eq!(status, 400);
    assert_status(&wrong, 400, "BadRequest");
    let (status, _) = write(&server, true, "/api/v1/namespaces/grw/configmaps", &lease).await;
    assert_eq!(status, 405);
}

// ---------------------------------------------------------------- the binary

const USAGE: &str = "usage: fake-apiserver [--listen ADDR] [--pods N] [--list-pace N]";

/// The binary itself, as a user runs it, with backtraces asked for.
fn fake_apiserver(args: &[&str]) -> std::process::Output {
    std::process::Command::new(env!("CARGO_BIN_EXE_fake-apiserver"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .output()
        .unwrap()
}

#[test]
fn help_is_printed_and_a_bad_argument_is_one_line_without_a_backtrace() {
    for help in ["--help", "-h"] {
        let out = fake_apiserver(&[help]);
        assert!(out.status.success(), "{out:?}");
        assert!(out.stderr.is_empty(), "{out:?}");
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(text.starts_with(USAGE), "{text}");
        assert!(text.contains("pod-status N"), "{text}");
    }
    let out = fake_apiserver(&["--verbose"]);
    assert_eq!(out.status.code(), Some(2));
    let text = String::from_utf8(out.stderr).unwrap();
    assert_eq!(
        text,
        format!("fake-apiserver: unknown argument \"--verbose\"; {USAGE}\n")
    );
}
