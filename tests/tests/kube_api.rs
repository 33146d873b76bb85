//! The Kubernetes API served from GRW's cache, tried with real clients: the
//! `kubectl` binary with a kubeconfig whose `server` is GRW, kube-rs's
//! watcher and reflector, and plain HTTP for the protocol's corners. Answers
//! are compared with the fake API server's (the same objects must come back)
//! and with recorded answers of a real API server (`tests/data/kube-api`:
//! the same shapes).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use grw_e2e::daemon::{Grw, bundled_recording, eventually};
use grw_e2e::fake_api::{FakeApiOptions, FakeApiServer};
use grw_e2e::kubectl::{Kubectl, PREFIX};
use serde_json::{Value, json};

const TOKEN: &str = "kube-api-token";

async fn cluster() -> FakeApiServer {
    let fake = FakeApiServer::start(FakeApiOptions {
        token: Some(TOKEN.into()),
        ..FakeApiOptions::default()
    })
    .await;
    fake.load_recording(&bundled_recording(), None).unwrap();
    fake
}

async fn grw_with(fake: &FakeApiServer, extra: Value) -> Grw {
    let mut config = json!({"builtinAnalyzers": false});
    for (key, value) in extra.as_object().unwrap() {
        config[key] = value.clone();
    }
    Grw::against(fake, TOKEN, config).await
}

async fn grw(fake: &FakeApiServer) -> Grw {
    grw_with(fake, json!({})).await
}

fn fixture(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("data/kube-api")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `GET` with headers, the body as JSON when it is JSON.
async fn get(grw: &Grw, path: &str, accept: Option<&str>) -> (u16, String, Value) {
    let mut request = reqwest::Client::new().get(format!("{}{PREFIX}{path}", grw.url));
    if let Some(accept) = accept {
        request = request.header("Accept", accept);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let text = response.text().await.unwrap();
    let body = serde_json::from_str(&text).unwrap_or(Value::String(text));
    (status, content_type, body)
}

fn names(items: &Value) -> BTreeSet<String> {
    items
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            format!(
                "{}/{}",
                o["metadata"]["namespace"].as_str().unwrap_or(""),
                o["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect()
}

fn fake_names(
    fake: &FakeApiServer,
    api_version: &str,
    kind: &str,
    namespace: Option<&str>,
) -> BTreeSet<String> {
    let objects = Value::Array(
        fake.objects(api_version, kind)
            .into_iter()
            .filter(|o| namespace.is_none_or(|ns| o["metadata"]["namespace"] == ns))
            .collect(),
    );
    names(&objects)
}

/// A watch stream read line by line.
struct Watch {
    response: reqwest::Response,
    buffer: Vec<u8>,
}

impl Watch {
    async fn open(grw: &Grw, path: &str) -> Watch {
        let response = reqwest::Client::new()
            .get(format!("{}{PREFIX}{path}", grw.url))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 200, "{path}");
        Watch {
            response,
            buffer: Vec::new(),
        }
    }

    /// The next event, or `None` at the end of the stream or after `wait`.
    async fn next(&mut self, wait: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            if let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                return Some(serde_json::from_slice(&line).unwrap());
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk())
                .await
                .ok()?
                .unwrap()?;
            self.buffer.extend_from_slice(&chunk);
        }
    }

    /// `TYPE namespace/name` of the next event that is not a bookmark.
    async fn next_change(&mut self, wait: Duration) -> Option<String> {
        loop {
            let event = self.next(wait).await?;
            if event["type"] != "BOOKMARK" {
                return Some(format!(
                    "{} {}/{}",
                    event["type"].as_str().unwrap(),
                    event["object"]["metadata"]["namespace"]
                        .as_str()
                        .unwrap_or(""),
                    event["object"]["metadata"]["name"].as_str().unwrap_or("")
                ));
            }
        }
    }
}

fn pod(namespace: &str, name: &str, labels: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"namespace": namespace, "name": name, "labels": labels},
        "spec": {"containers": [{"name": "app", "image": "shop:1"}]},
        "status": {"phase": "Running"}})
}

// ---- kubectl -------------------------------------------------------------

/// The first column of each line of a `kubectl get` table, the header
/// left out.
fn first_column(table: &str) -> BTreeSet<String> {
    table
        .lines()
        .skip(1)
        .filter_map(|line| line.split_whitespace().next().map(String::from))
        .collect()
}

fn without_namespace(names: &BTreeSet<String>) -> BTreeSet<String> {
    names
        .iter()
        .map(|n| {
            n.split_once('/')
                .map_or(n.as_str(), |(_, name)| name)
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn kubectl_reads_from_grw_what_the_api_server_has() {
    let fake = cluster().await;
    let grw = grw(&fake).await;
    let kubectl = Kubectl::for_grw(&grw);

    let shop_pods = fake_names(&fake, "v1", "Pod", Some("shop"));
    assert!(shop_pods.len() > 5, "{shop_pods:?}");
    let table = kubectl.run(&["get", "pods", "-n", "shop"]).await;
    assert!(table.starts_with("NAME"), "{table}");
    assert_eq!(
        first_column(&table),
        without_namespace(&shop_pods),
        "{table}"
    );

    // Across namespaces: a NAMESPACE column first.
    let all = kubectl.run(&["get", "pods", "-A"]).await;
    assert!(all.starts_with("NAMESPACE"), "{all}");
    assert_eq!(
        all.lines().count() - 1,
        fake_names(&fake, "v1", "Pod", None).len()
    );

    // -o json: the objects themselves, as the API server has them.
    let json: Value = serde_json::from_str(
        &kubectl
            .run(&["get", "pods", "-n", "shop", "-o", "json"])
            .await,
    )
    .unwrap();
    assert_eq!(names(&json["items"]), shop_pods);
    for item in json["items"].as_array().unwrap() {
        let name = item["metadata"]["name"].as_str().unwrap();
        let theirs = fake.get("v1", "Pod", Some("shop"), name).unwrap();
        assert_eq!(item["metadata"]["uid"], theirs["metadata"]["uid"]);
        assert_eq!(
            item["metadata"]["resourceVersion"],
            theirs["metadata"]["resourceVersion"]
        );
        assert_eq!(item["spec"], theirs["spec"]);
    }

    // A label selector, a field selector.
    let frontend = kubectl
        .run(&[
            "get",
            "pods",
            "-n",
            "shop",
            "-l",
            "app.kubernetes.io/name=frontend",
            "-o",
            "name",
        ])
        .await;
    let want: BTreeSet<String> = fake
        .objects("v1", "Pod")
        .iter()
        .filter(|p| {
            p["metadata"]["namespace"] == "shop"
                && p["metadata"]["labels"]["app.kubernetes.io/name"] == "frontend"
        })
        .map(|p| format!("pod/{}", p["metadata"]["name"].as_str().unwrap()))
        .collect();
    assert!(!want.is_empty());
    assert_eq!(
        frontend.lines().map(String::from).collect::<BTreeSet<_>>(),
        want
    );
    let running = kubectl
        .run(&[
            "get",
            "pods",
            "-A",
            "--field-selector",
            "status.phase=Running",
            "-o",
            "name",
        ])
        .await;
    let want = fake
        .objects("v1", "Pod")
        .iter()
        .filter(|p| p["status"]["phase"] == "Running")
        .count();
    assert_eq!(running.lines().count(), want);

    // Pages of two, as `--chunk-size` asks: the same objects.
    let chunked = kubectl
        .run(&["get", "pods", "-n", "shop", "--chunk-size=2"])
        .await;
    assert_eq!(first_column(&chunked), without_namespace(&shop_pods));

    // Discovery: short names work, api-resources lists what GRW serves.
    let deployments = kubectl
        .run(&["get", "deploy", "-n", "shop", "-o", "name"])
        .await;
    assert_eq!(
        deployments.lines().count(),
        fake_names(&fake, "apps/v1", "Deployment", Some("shop")).len()
    );
    let resources = kubectl.run(&["api-resources"]).await;
    let pods_line = resources
        .lines()
        .find(|l| l.starts_with("pods "))
        .unwrap_or_else(|| panic!("{resources}"));
    assert!(
        pods_line.contains(" po ") && pods_line.contains("Pod"),
        "{pods_line}"
    );

    // Writes go to the API server.
    let refused = kubectl.fail(&["delete", "pod", "-n", "shop", "nope"]).await;
    assert!(refused.contains("GRW serves reads"), "{refused}");
    let missing = kubectl.fail(&["get", "pod", "-n", "shop", "nope"]).await;
    assert!(
        missing.contains("NotFound") && missing.contains("\"nope\" not found"),
        "{missing}"
    );
}

#[tokio::test]
async fn kubectl_get_watch_sees_a_change() {
    let fake = cluster().await;
    let grw = grw(&fake).await;
    let kubectl = Kubectl::for_grw(&grw);
    let mut watching = kubectl
        .command(&["get", "pods", "-n", "shop", "-w", "-o", "name"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = watching.stdout.take().unwrap();
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    // The current Pods first.
    let first = tokio::time::timeout(Duration::from_secs(20), lines.next_line())
        .await
        .unwrap()
        .unwrap();
    assert!(first.is_some_and(|l| l.starts_with("pod/")));
    fake.create(pod("shop", "watched-into-view", json!({"app": "new"})))
        .unwrap();
    let seen = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line == "pod/watched-into-view" {
                return true;
            }
        }
        false
    })
    .await;
    assert_eq!(seen, Ok(true));
    watching.kill().await.unwrap();
}

// ---- the protocol ----------------------------------------------------------

#[tokio::test]
async fn errors_are_status_objects_as_the_api_server_sends_them() {
    let fake = cluster().await;
    let grw = grw(&fake).await;

    let (status, content_type, body) = get(&grw, "/api/v1/namespaces/shop/pods/nope", None).await;
    assert_eq!((status, content_type.as_str()), (404, "application/json"));
    let mut want = fixture("status-404.json");
    assert_eq!(body, want);
    let (status, _, body) = get(&grw, "/apis/apps/v1/namespaces/shop/deployments/nope", None).await;
    assert_eq!(status, 404);
    want["message"] = json!("deployments.apps \"nope\" not found");
    want["details"] = json!({"name": "nope", "group": "apps", "kind": "deployments"});
    assert_eq!(body, want);

    // No such resource or group: the API server's plain 404.
    for path in [
        "/api/v1/nopes",
        "/apis/nope.example.com/v1/things",
        "/apis/apps/v9/deployments",
        "/openapi/v1",
        "/logs",
    ] {
        let (status, content_type, body) = get(&grw, path, None).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(content_type, "text/plain; charset=utf-8", "{path}");
        assert_eq!(body, json!("404 page not found\n"), "{path}");
    }
    // A cluster-scoped resource under a namespace has no route either.
    let (status, _, _) = get(&grw, "/api/v1/namespaces/shop/nodes", None).await;
    assert_eq!(status, 404);

    // Writes: 405, saying where to send them.
    let response = reqwest::Client::new()
        .post(format!("{}{PREFIX}/api/v1/namespaces/shop/pods", grw.url))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 405);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["reason"], "MethodNotAllowed");
    assert_eq!(body["kind"], "Status");

    // Protobuf only: 406.
    let (status, _, body) = get(
        &grw,
        "/api/v1/pods",
        Some("application/vnd.kubernetes.protobuf"),
    )
    .await;
    assert_eq!(status, 406);
    assert_eq!(body["reason"], "NotAcceptable");
    assert_eq!(
        body["message"],
        "only the following media types are accepted: application/json"
    );
    // Protobuf first, then JSON: JSON.
    let (status, _, body) = get(
        &grw,
        "/api/v1/namespaces/shop/pods",
        Some("application/vnd.kubernetes.protobuf, application/json"),
    )
    .await;
    assert_eq!((status, body["kind"].as_str()), (200, Some("PodList")));

    // Bad options: the reasons client libraries test for.
    let (status, _, body) = get(&grw, "/api/v1/pods?labelSelector=app+in+(web", None).await;
    assert_eq!((status, body["reason"].as_str()), (400, Some("BadRequest")));
    let (status, _, body) = get(&grw, "/api/v1/pods?resourceVersionMatch=NotOlderThan", None).await;
    assert_eq!((status, body["reason"].as_str()), (422, Some("Invalid")));
    assert_eq!(
        body["details"]["causes"][0]["field"],
        "resourceVersionMatch"
    );
    let (status, _, body) = get(&grw, "/api/v1/namespaces/shop/pods/x/log", None).await;
    assert_eq!(status, 404);
    assert!(
        body["message"].as_str().unwrap().contains("pods/log"),
        "{body}"
    );
}

#[tokio::test]
async fn lists_and_objects_have_the_api_servers_shape() {
    let fake = cluster().await;
    let grw = grw(&fake).await;
    let (status, content_type, list) = get(&grw, "/api/v1/namespaces/shop/pods", None).await;
    assert_eq!((status, content_type.as_str()), (200, "application/json"));
    let recorded = fixture("pods-list.json");
    assert_eq!(list["kind"], recorded["kind"]);
    assert_eq!(list["apiVersion"], recorded["apiVersion"]);
    assert!(
        list["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .is_ok()
    );
    assert_eq!(
        names(&list["items"]),
        fake_names(&fake, "v1", "Pod", Some("shop"))
    );

    let name = list["items"][0]["metadata"]["name"].as_str().unwrap();
    let (status, _, one) = get(&grw, &format!("/api/v1/namespaces/shop/pods/{name}"), None).await;
    assert_eq!(status, 200);
    assert_eq!(one, list["items"][0]);
    let recorded = fixture("pod-get.json");
    assert_eq!(one["kind"], recorded["kind"]);

    // Metadata only, as metadata informers ask.
    let accept =
        "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
    let (_, _, partial) = get(&grw, "/api/v1/namespaces/shop/pods", Some(accept)).await;
    assert_eq!(partial["kind"], "PartialObjectMetadataList");
    assert_eq!(partial["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(partial["items"][0]["kind"], "PartialObjectMetadata");
    assert_eq!(
        partial["items"][0]["metadata"],
        list["items"][0]["metadata"]
    );
    assert!(partial["items"][0].get("spec").is_none());

    // Cluster-scoped, and Namespaces themselves.
    let (status, _, node) = get(&grw, "/api/v1/nodes", None).await;
    assert_eq!((status, node["kind"].as_str()), (200, Some("NodeList")));
    let (status, _, shop) = get(&grw, "/api/v1/namespaces/shop", None).await;
    assert_eq!(
        (status, shop["metadata"]["name"].as_str()),
        (200, Some("shop"))
    );

    // A kind nothing watched yet: its watch starts, as for any query.
    let (status, _, configmaps) = get(&grw, "/api/v1/namespaces/shop/configmaps", None).await;
    assert_eq!(status, 200, "{configmaps}");
    assert_eq!(
        names(&configmaps["items"]),
        fake_names(&fake, "v1", "ConfigMap", Some("shop"))
    );
    let (_, kinds) = grw.get("/api/v1/kinds").await;
    let started = kinds["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["gvk"] == "v1/ConfigMap")
        .unwrap();
    assert_eq!(started["onDemand"], true);
}

#[tokio::test]
async fn pages_report_the_first_pages_resource_version_and_miss_nothing() {
    let fake = cluster().await;
    let grw = grw_with(&fake, json!({"eventHistorySize": 5})).await;
    let all = fake_names(&fake, "v1", "Pod", None);
    let (_, _, first) = get(&grw, "/api/v1/pods?limit=3", None).await;
    let rv = first["metadata"]["resourceVersion"].clone();
    let mut seen = names(&first["items"]);
    let mut token = first["metadata"]["continue"].as_str().unwrap().to_string();
    // A change between pages: the list still holds every object once, at
    // the first page's resourceVersion.
    let moved = fake.objects("v1", "Pod").into_iter().last().unwrap();
    let mut changed = moved.clone();
    changed["metadata"]["labels"]["between"] = json!("pages");
    fake.update(changed).unwrap();
    let mut pages = 1;
    loop {
        let (status, _, page) = get(
            &grw,
            &format!("/api/v1/pods?limit=3&continue={token}"),
            None,
        )
        .await;
        assert_eq!(status, 200, "{page}");
        assert_eq!(page["metadata"]["resourceVersion"], rv);
        let names = names(&page["items"]);
        assert!(seen.is_disjoint(&names), "seen twice: {names:?}");
        seen.extend(names);
        pages += 1;
        match page["metadata"]["continue"].as_str() {
            Some(next) => token = next.to_string(),
            None => break,
        }
    }
    assert_eq!(seen, all);
    assert!(pages > 2);

    // Once the history no longer reaches the first page, its token is 410.
    let (_, _, first) = get(&grw, "/api/v1/pods?limit=1", None).await;
    let token = first["metadata"]["continue"].as_str().unwrap().to_string();
    for i in 0..8 {
        let mut changed = moved.clone();
        changed["metadata"]["labels"]["turn"] = json!(i.to_string());
        fake.update(changed).unwrap();
    }
    assert!(
        eventually(Duration::from_secs(10), || async {
            get(
                &grw,
                &format!("/api/v1/pods?limit=1&continue={token}"),
                None,
            )
            .await
            .0 == 410
        })
        .await
    );
    let (_, _, body) = get(
        &grw,
        &format!("/api/v1/pods?limit=1&continue={token}"),
        None,
    )
    .await;
    assert_eq!(body["reason"], "Expired");
}

#[tokio::test]
async fn resource_versions_mean_what_they_mean_on_the_api_server() {
    let fake = cluster().await;
    let grw = grw(&fake).await;
    let (_, _, list) = get(&grw, "/api/v1/namespaces/shop/pods", None).await;
    let rv: u64 = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();

    for query in [
        format!("resourceVersion={rv}"),
        format!("resourceVersion={rv}&resourceVersionMatch=NotOlderThan"),
        "resourceVersion=0".into(),
        format!("resourceVersion={rv}&resourceVersionMatch=Exact"),
    ] {
        let (status, _, body) =
            get(&grw, &format!("/api/v1/namespaces/shop/pods?{query}"), None).await;
        assert_eq!(status, 200, "{query}: {body}");
    }
    // Newer than the cache: waits, then the API server's 504.
    let started = std::time::Instant::now();
    let (status, _, body) = get(
        &grw,
        &format!("/api/v1/namespaces/shop/pods?resourceVersion={}", rv + 1000),
        None,
    )
    .await;
    assert_eq!(status, 504, "{body}");
    assert!(started.elapsed() >= Duration::from_secs(3));
    assert_eq!(
        body["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
    // Exactly a past state: a cache keeps none.
    fake.create(pod("shop", "later", json!({}))).unwrap();
    assert!(
        eventually(Duration::from_secs(10), || async {
            get(&grw, "/api/v1/namespaces/shop/pods/later", None)
                .await
                .0
                == 200
        })
        .await
    );
    let (status, _, body) = get(
        &grw,
        &format!("/api/v1/namespaces/shop/pods?resourceVersion={rv}&resourceVersionMatch=Exact"),
        None,
    )
    .await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (410, Some("Expired")),
        "{body}"
    );
    // A get not older than the Pod's creation sees it.
    let created = fake.get("v1", "Pod", Some("shop"), "later").unwrap();
    let at = created["metadata"]["resourceVersion"].as_str().unwrap();
    let (status, _, _) = get(
        &grw,
        &format!("/api/v1/namespaces/shop/pods/later?resourceVersion={at}"),
        None,
    )
    .await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn watches_start_where_the_client_asks() {
    let fake = cluster().await;
    let grw = grw(&fake).await;
    let (_, _, list) = get(&grw, "/api/v1/namespaces/shop/pods", None).await;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();

    // From the list's resourceVersion: only what changed since.
    let mut from_list = Watch::open(
        &grw,
        &format!(
            "/api/v1/namespaces/shop/pods?watch=true&resourceVersion={rv}&allowWatchBookmarks=true"
        ),
    )
    .await;
    fake.create(pod("shop", "w1", json!({"app": "a"}))).unwrap();
    assert_eq!(
        from_list
            .next_change(Duration::from_secs(10))
            .await
            .as_deref(),
        Some("ADDED shop/w1")
    );
    // The legacy `/watch/` path is the same watch.
    let mut legacy = Watch::open(
        &grw,
        &format!("/api/v1/watch/namespaces/shop/pods?resourceVersion={rv}"),
    )
    .await;
    assert_eq!(
        legacy.next_change(Duration::from_secs(10)).await.as_deref(),
        Some("ADDED shop/w1")
    );

    // With a label selector: objects entering and leaving it.
    let mut selected = Watch::open(
        &grw,
        &format!(
            "/api/v1/namespaces/shop/pods?watch=true&labelSelector=app%3Da&resourceVersion={rv}"
        ),
    )
    .await;
    assert_eq!(
        selected
            .next_change(Duration::from_secs(10))
            .await
            .as_deref(),
        Some("ADDED shop/w1")
    );
    fake.update(pod("shop", "w1", json!({"app": "b"}))).unwrap();
    let left = selected.next(Duration::from_secs(10)).await.unwrap();
    assert_eq!(left["type"], "DELETED");
    let current = fake.get("v1", "Pod", Some("shop"), "w1").unwrap();
    assert_eq!(
        left["object"]["metadata"]["resourceVersion"],
        current["metadata"]["resourceVersion"]
    );
    assert_eq!(left["object"]["metadata"]["labels"]["app"], "a");
    fake.update(pod("shop", "w1", json!({"app": "a"}))).unwrap();
    assert_eq!(
        selected
            .next_change(Duration::from_secs(10))
            .await
            .as_deref(),
        Some("ADDED shop/w1")
    );
    assert_eq!(
        from_list
            .next_change(Duration::from_secs(10))
            .await
            .as_deref(),
        Some("MODIFIED shop/w1")
    );

    // The streaming list: every object, then the bookmark that ends them.
    let mut streaming = Watch::open(&grw, "/api/v1/namespaces/shop/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true").await;
    let mut initial = BTreeSet::new();
    let end = loop {
        let event = streaming.next(Duration::from_secs(10)).await.unwrap();
        if event["type"] == "BOOKMARK" {
            break event;
        }
        assert_eq!(event["type"], "ADDED");
        initial.insert(format!(
            "shop/{}",
            event["object"]["metadata"]["name"].as_str().unwrap()
        ));
    };
    assert_eq!(initial, fake_names(&fake, "v1", "Pod", Some("shop")));
    let recorded = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("data/kube-api/watch-list.jsonl"),
    )
    .unwrap();
    let recorded_end: Value = serde_json::from_str(recorded.lines().last().unwrap()).unwrap();
    assert_eq!(end["object"]["kind"], recorded_end["object"]["kind"]);
    assert_eq!(
        end["object"]["apiVersion"],
        recorded_end["object"]["apiVersion"]
    );
    let annotations = |e: &Value| -> BTreeSet<String> {
        e["object"]["metadata"]["annotations"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect()
    };
    assert_eq!(annotations(&end), annotations(&recorded_end));
    assert_eq!(
        end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    fake.delete("v1", "Pod", Some("shop"), "w1").unwrap();
    assert_eq!(
        streaming
            .next_change(Duration::from_secs(10))
            .await
            .as_deref(),
        Some("DELETED shop/w1")
    );

    // Too old: one ERROR event, 410 Expired, as the API server sends it.
    let mut too_old = Watch::open(
        &grw,
        "/api/v1/namespaces/shop/pods?watch=true&resourceVersion=1",
    )
    .await;
    let error = too_old.next(Duration::from_secs(10)).await.unwrap();
    assert_eq!(error["type"], "ERROR");
    assert_eq!(error["object"]["kind"], "Status");
    assert_eq!(error["object"]["code"], 410);
    assert_eq!(error["object"]["reason"], "Expired");
    assert!(
        error["object"]["message"]
            .as_str()
            .unwrap()
            .starts_with("too old resource version: 1 ("),
        "{error}"
    );
    assert_eq!(too_old.next(Duration::from_secs(2)).await, None);

    // timeoutSeconds ends the stream.
    let mut short = Watch::open(
        &grw,
        "/api/v1/namespaces/shop/pods?watch=true&resourceVersion=0&timeoutSeconds=1",
    )
    .await;
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        while short.next(Duration::from_secs(10)).await.is_some() {}
    })
    .await;
    assert!(ended.is_ok());
}

#[tokio::test]
async fn discovery_lists_what_grw_serves_and_follows_crds() {
    let fake = cluster().await;
    let grw = grw(&fake).await;
    let kubectl_accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
    let (status, content_type, apis) = get(&grw, "/apis", Some(kubectl_accept)).await;
    assert_eq!(status, 200);
    assert_eq!(
        content_type,
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
    let recorded = fixture("apis-aggregated.json");
    assert_eq!(apis["kind"], recorded["kind"]);
    assert_eq!(apis["apiVersion"], recorded["apiVersion"]);
    let groups = |doc: &Value| -> BTreeSet<String> {
        doc["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(groups(&apis).contains("apps"));
    assert!(!groups(&apis).contains("example.com"));
    let (_, _, version) = get(&grw, "/version", None).await;
    assert!(version["gitVersion"].is_string(), "{version}");

    // ETags let kubectl's cache revalidate.
    let response = reqwest::Client::new()
        .get(format!("{}{PREFIX}/apis", grw.url))
        .send()
        .await
        .unwrap();
    let etag = response.headers()["etag"].to_str().unwrap().to_string();
    let again = reqwest::Client::new()
        .get(format!("{}{PREFIX}/apis", grw.url))
        .header("If-None-Match", &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);

    // A CRD installed appears (its watch makes discovery be read again)...
    fake.add_crd("example.com", "v1", "Widget", "widgets", true);
    assert!(
        eventually(Duration::from_secs(20), || async {
            let (_, _, apis) = get(&grw, "/apis", Some(kubectl_accept)).await;
            groups(&apis).contains("example.com")
        })
        .await
    );
    let (status, _, list) = get(&grw, "/apis/example.com/v1/widgets", None).await;
    assert_eq!((status, list["kind"].as_str()), (200, Some("WidgetList")));
    let (_, _, resources) = get(&grw, "/apis/example.com/v1", None).await;
    assert_eq!(resources["resources"][0]["name"], "widgets");
    assert_eq!(
        resources["resources"][0]["verbs"],
        json!(["get", "list", "watch"])
    );
    // ... and one removed disappears.
    fake.remove_crd("example.com", "widgets");
    assert!(
        eventually(Duration::from_secs(20), || async {
            let (_, _, apis) = get(&grw, "/apis", Some(kubectl_accept)).await;
            !groups(&apis).contains("example.com")
        })
        .await
    );
    let (status, _, _) = get(&grw, "/apis/example.com/v1", None).await;
    assert_eq!(status, 404);
}

// ---- tables ------------------------------------------------------------------

/// A `kubectl get` table: its headers, and each row's cells by header.
/// Columns are cut where the header's begin (kubectl aligns every line on
/// them), so cells with spaces (`3 (5m ago)`) stay whole.
fn kubectl_table(output: &str) -> (Vec<String>, Vec<BTreeMap<String, String>>) {
    let mut lines = output.lines();
    let header = lines
        .next()
        .unwrap_or_else(|| panic!("no header: {output:?}"));
    let mut starts = Vec::new();
    let mut previous = ' ';
    let mut spaces = 2;
    for (i, c) in header.char_indices() {
        // A header starts after two spaces or more (names such as
        // `NOMINATED NODE` hold one).
        if c != ' ' && (previous == ' ' && spaces >= 2 || i == 0) {
            starts.push(i);
        }
        spaces = if c == ' ' { spaces + 1 } else { 0 };
        previous = c;
    }
    let cut = |line: &str| -> Vec<String> {
        starts
            .iter()
            .enumerate()
            .map(|(n, &start)| {
                let end = starts
                    .get(n + 1)
                    .copied()
                    .unwrap_or(line.len())
                    .min(line.len());
                line.get(start.min(line.len())..end)
                    .unwrap_or("")
                    .trim()
                    .to_string()
            })
            .collect()
    };
    let headers = cut(header);
    let rows = lines
        .map(|line| headers.iter().cloned().zip(cut(line)).collect())
        .collect();
    (headers, rows)
}

/// The row of `table` whose NAME is `name`.
fn row<'t>(rows: &'t [BTreeMap<String, String>], name: &str) -> &'t BTreeMap<String, String> {
    rows.iter()
        .find(|r| r["NAME"] == name)
        .unwrap_or_else(|| panic!("no row {name}: {rows:?}"))
}

/// Cells of `row`, by header.
fn cells(row: &BTreeMap<String, String>, headers: &[&str]) -> Vec<String> {
    headers.iter().map(|h| row[*h].clone()).collect()
}

/// Two pods and a Deployment of namespace `tables`, with what their
/// columns show set.
fn workloads(fake: &FakeApiServer) {
    let started = "2026-11-26T06:00:00Z";
    fake.create(json!({"apiVersion": "v1", "kind": "Pod",
    "metadata": {"namespace": "tables", "name": "web-1", "labels": {"app": "web"}},
    "spec": {"nodeName": "node-a", "containers": [
        {"name": "app", "image": "shop:1"}, {"name": "side", "image": "side:1"}]},
    "status": {"phase": "Running", "podIP": "10.1.2.3", "podIPs": [{"ip": "10.1.2.3"}],
        "conditions": [{"type": "Ready", "status": "False"}],
        "containerStatuses": [
            {"name": "app", "ready": true, "restartCount": 0, "image": "shop:1", "imageID": "",
                "state": {"running": {"startedAt": started}}},
            {"name": "side", "ready": false, "restartCount": 2, "image": "side:1", "imageID": "",
                "state": {"waiting": {"reason": "CrashLoopBackOff"}}},
        ]}}))
    .unwrap();
    fake.create(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"namespace": "tables", "name": "web-2", "labels": {"app": "web"}},
        "spec": {"containers": [{"name": "app", "image": "shop:1"}]},
        "status": {"phase": "Pending"}}))
        .unwrap();
    fake.create(json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"namespace": "tables", "name": "web"},
        "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "shop:1"}]}}},
        "status": {"replicas": 3, "readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}}))
    .unwrap();
}

#[tokio::test]
async fn kubectl_prints_the_api_servers_columns_of_pods_and_deployments() {
    let fake = cluster().await;
    workloads(&fake);
    let grw = grw(&fake).await;
    let kubectl = Kubectl::for_grw(&grw);

    let (headers, rows) = kubectl_table(&kubectl.run(&["get", "pods", "-n", "tables"]).await);
    assert_eq!(headers, ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]);
    assert_eq!(rows.len(), 2, "{rows:?}");
    let shown = ["READY", "STATUS", "RESTARTS"];
    assert_eq!(
        cells(row(&rows, "web-1"), &shown),
        ["1/2", "CrashLoopBackOff", "2"]
    );
    assert_eq!(cells(row(&rows, "web-2"), &shown), ["0/1", "Pending", "0"]);

    // -o wide: the priority-1 columns too.
    let wide = kubectl
        .run(&["get", "pods", "-n", "tables", "-o", "wide"])
        .await;
    let (headers, rows) = kubectl_table(&wide);
    assert_eq!(
        headers,
        [
            "NAME",
            "READY",
            "STATUS",
            "RESTARTS",
            "AGE",
            "IP",
            "NODE",
            "NOMINATED NODE",
            "READINESS GATES"
        ],
        "{wide}"
    );
    let placed = ["IP", "NODE", "NOMINATED NODE", "READINESS GATES"];
    assert_eq!(
        cells(row(&rows, "web-1"), &placed),
        ["10.1.2.3", "node-a", "<none>", "<none>"]
    );
    assert_eq!(
        cells(row(&rows, "web-2"), &placed),
        ["<none>", "<none>", "<none>", "<none>"]
    );
    for r in &rows {
        let age = &r["AGE"];
        assert!(
            age.ends_with('s') || age.ends_with('m'),
            "{age:?} in {wide}"
        );
    }

    // One object: a one-row table.
    let one = kubectl
        .run(&["get", "pod", "web-1", "-n", "tables", "-o", "wide"])
        .await;
    let (_, rows) = kubectl_table(&one);
    assert_eq!(rows.len(), 1, "{one}");
    assert_eq!(
        cells(&rows[0], &["STATUS", "NODE"]),
        ["CrashLoopBackOff", "node-a"]
    );

    let (headers, rows) =
        kubectl_table(&kubectl.run(&["get", "deployments", "-n", "tables"]).await);
    assert_eq!(headers, ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]);
    assert_eq!(
        cells(row(&rows, "web"), &["READY", "UP-TO-DATE", "AVAILABLE"]),
        ["2/3", "3", "2"]
    );
    let (headers, rows) = kubectl_table(
        &kubectl
            .run(&["get", "deployments", "-n", "tables", "-o", "wide"])
            .await,
    );
    assert_eq!(
        headers,
        [
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ]
    );
    assert_eq!(
        cells(row(&rows, "web"), &["CONTAINERS", "IMAGES", "SELECTOR"]),
        ["app", "shop:1", "app=web"]
    );
}

#[tokio::test]
async fn kubectl_prints_a_crds_printer_columns() {
    let fake = cluster().await;
    fake.add_crd_with_columns(
        "example.com",
        "v1",
        "Gizmo",
        "gizmos",
        json!([
            {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
            {"name": "Color", "type": "string", "jsonPath": ".spec.color", "priority": 1},
            {"name": "Ready", "type": "boolean", "jsonPath": ".status.ready"},
            {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        ]),
    );
    for (name, size, color, ready) in [("g1", 3, "blue", true), ("g2", 5, "red", false)] {
        fake.create(json!({"apiVersion": "example.com/v1", "kind": "Gizmo",
            "metadata": {"namespace": "tables", "name": name},
            "spec": {"size": size, "color": color}, "status": {"ready": ready}}))
            .unwrap();
    }
    let grw = grw(&fake).await;
    let kubectl = Kubectl::for_grw(&grw);

    let output = kubectl.run(&["get", "gizmos", "-n", "tables"]).await;
    let (headers, rows) = kubectl_table(&output);
    assert_eq!(headers, ["NAME", "SIZE", "READY", "AGE"], "{output}");
    assert_eq!(cells(row(&rows, "g1"), &["SIZE", "READY"]), ["3", "true"]);
    assert_eq!(cells(row(&rows, "g2"), &["SIZE", "READY"]), ["5", "false"]);
    let wide = kubectl
        .run(&["get", "gizmos", "-n", "tables", "-o", "wide"])
        .await;
    let (headers, rows) = kubectl_table(&wide);
    assert_eq!(headers, ["NAME", "SIZE", "COLOR", "READY", "AGE"], "{wide}");
    assert_eq!(cells(row(&rows, "g1"), &["COLOR"]), ["blue"]);

    // The Table itself: the CRD's column definitions, typed cells.
    let accept = "application/json;as=Table;v=v1;g=meta.k8s.io";
    let (status, _, table) = get(
        &grw,
        "/apis/example.com/v1/namespaces/tables/gizmos?includeObject=None",
        Some(accept),
    )
    .await;
    assert_eq!(status, 200, "{table}");
    let definitions: Vec<(&str, &str, i64)> = table["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["name"].as_str().unwrap(),
                d["type"].as_str().unwrap(),
                d["priority"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        definitions,
        [
            ("Name", "string", 0),
            ("Size", "integer", 0),
            ("Color", "string", 1),
            ("Ready", "boolean", 0),
            ("Age", "date", 0)
        ]
    );
    let g1 = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["cells"][0] == "g1")
        .unwrap();
    assert_eq!(
        g1["cells"].as_array().unwrap()[..4],
        [json!("g1"), json!(3), json!("blue"), json!(true)]
    );
    assert_eq!(g1["object"], Value::Null);
}

#[tokio::test]
async fn a_crd_of_one_of_the_api_servers_groups_prints_its_columns_as_they_change() {
    let fake = cluster().await;
    // A custom resource of `storage.k8s.io` (approved for it).
    fake.add_crd_with_columns(
        "storage.k8s.io",
        "v1",
        "Snapshot",
        "snapshots",
        json!([{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]),
    );
    fake.create(
        json!({"apiVersion": "storage.k8s.io/v1", "kind": "Snapshot",
        "metadata": {"namespace": "tables", "name": "s1"}, "spec": {"size": 3, "class": "fast"}}),
    )
    .unwrap();
    let grw = grw(&fake).await;
    let kubectl = Kubectl::for_grw(&grw);
    let output = kubectl.run(&["get", "snapshots", "-n", "tables"]).await;
    let (headers, rows) = kubectl_table(&output);
    assert_eq!(headers, ["NAME", "SIZE"], "{output}");
    assert_eq!(cells(row(&rows, "s1"), &["SIZE"]), ["3"]);

    // Its CRD gets another column: the next Table has it.
    let mut crd = fake
        .get(
            "apiextensions.k8s.io/v1",
            "CustomResourceDefinition",
            None,
            "snapshots.storage.k8s.io",
        )
        .unwrap();
    crd["spec"]["versions"][0]["additionalPrinterColumns"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "Class", "type": "string", "jsonPath": ".spec.class"}));
    fake.update(crd).unwrap();
    let shown = eventually(Duration::from_secs(10), || async {
        let output = kubectl.run(&["get", "snapshots", "-n", "tables"]).await;
        kubectl_table(&output).0 == ["NAME", "SIZE", "CLASS"]
    })
    .await;
    assert!(shown, "the CRD's new column never showed");
}

#[tokio::test]
async fn kubectl_explain_reads_the_api_servers_openapi_documents_through_grw() {
    let fake = cluster().await;
    let grw = grw(&fake).await;
    let kubectl = Kubectl::for_grw(&grw);
    let pods = kubectl.run(&["explain", "pods"]).await;
    assert!(pods.contains("KIND:"), "{pods}");
    assert!(
        pods.contains("Pod is a collection of containers that can run on a host."),
        "{pods}"
    );
    let replicas = kubectl.run(&["explain", "deployments.spec.replicas"]).await;
    assert!(replicas.contains("Number of desired pods."), "{replicas}");

    // Kept: asked again, GRW does not ask the API server again.
    let fetched = |path: &str| fake.requests().iter().filter(|r| r.path == path).count();
    let (status, _, index) = get(&grw, "/openapi/v3", None).await;
    assert_eq!(status, 200, "{index}");
    let url = index["paths"]["api/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(url.starts_with("/openapi/v3/api/v1?hash="), "{url}");
    let response = reqwest::Client::new()
        .get(format!("{}{PREFIX}{url}", grw.url))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let etag = response.headers()["etag"].clone();
    let document: Value = response.json().await.unwrap();
    assert_eq!(document["openapi"], "3.0.0");
    let asked = fetched("/openapi/v3/api/v1");
    assert!(asked >= 1);
    // The client's own copy: not sent again.
    let again = reqwest::Client::new()
        .get(format!("{}{PREFIX}{url}", grw.url))
        .header("If-None-Match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);
    assert_eq!(fetched("/openapi/v3/api/v1"), asked);
    // A query a caller makes up is the same document, not another copy.
    for made_up in ["hash=0000", "x=1", "hash=0000&y=2"] {
        let (status, _, _) = get(&grw, &format!("/openapi/v3/api/v1?{made_up}"), None).await;
        assert_eq!(status, 200);
    }
    assert_eq!(fetched("/openapi/v3/api/v1"), asked);
    let (status, _, v2) = get(&grw, "/openapi/v2", Some("application/json")).await;
    assert_eq!((status, &v2["swagger"]), (200, &json!("2.0")));
    // A group version the API server does not document: its answer.
    let (status, _, _) = get(&grw, "/openapi/v3/apis/nowhere.example.com/v1", None).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn a_replay_has_no_openapi_documents_and_says_so() {
    let grw = Grw::replaying().await;
    let (status, _, body) = get(&grw, "/openapi/v3", None).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(
        body["message"],
        "GRW serves the API server's OpenAPI documents, and a replay has no API server"
    );
}

#[tokio::test]
async fn a_crd_grw_cannot_read_prints_name_and_age() {
    let fake = cluster().await;
    fake.add_crd_with_columns(
        "example.com",
        "v1",
        "Gizmo",
        "gizmos",
        json!([{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}]),
    );
    fake.create(json!({"apiVersion": "example.com/v1", "kind": "Gizmo",
        "metadata": {"namespace": "tables", "name": "g1"}, "spec": {"size": 3}}))
        .unwrap();
    // GRW may not list CustomResourceDefinitions.
    fake.fail_requests("customresourcedefinitions", 403, usize::MAX);
    let grw = grw(&fake).await;
    let kubectl = Kubectl::for_grw(&grw);
    let output = kubectl.run(&["get", "gizmos", "-n", "tables"]).await;
    let (headers, rows) = kubectl_table(&output);
    assert_eq!(headers, ["NAME", "AGE"], "{output}");
    assert_eq!(rows.len(), 1, "{output}");
    assert_eq!(rows[0]["NAME"], "g1");
}

#[tokio::test]
async fn tables_follow_the_api_servers_protocol() {
    let fake = cluster().await;
    workloads(&fake);
    let grw = grw(&fake).await;
    let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
    let recorded = fixture("table-pods.json");

    // A list: the recorded Table's shape, kubectl's columns.
    let (status, content_type, table) =
        get(&grw, "/api/v1/namespaces/tables/pods", Some(accept)).await;
    assert_eq!((status, content_type.as_str()), (200, "application/json"));
    let keys = |v: &Value| {
        v.as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<BTreeSet<_>>()
    };
    assert_eq!(keys(&table), keys(&recorded));
    // The same columns (descriptions are GRW's own words).
    let names = |t: &Value| -> Vec<(String, String, String, i64)> {
        t["columnDefinitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| {
                let text = |key: &str| d[key].as_str().unwrap().to_string();
                (
                    text("name"),
                    text("type"),
                    text("format"),
                    d["priority"].as_i64().unwrap(),
                )
            })
            .collect()
    };
    assert_eq!(names(&table), names(&recorded));
    assert_eq!(keys(&table["rows"][0]), keys(&recorded["rows"][0]));
    assert_eq!(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");

    // includeObject=Object: the objects; a bad value: the API server's 400.
    let (_, _, whole) = get(
        &grw,
        "/api/v1/namespaces/tables/pods?includeObject=Object",
        Some(accept),
    )
    .await;
    assert_eq!(whole["rows"][0]["object"]["kind"], "Pod");
    assert!(whole["rows"][0]["object"]["spec"].is_object(), "{whole}");
    let (status, _, refused) = get(
        &grw,
        "/api/v1/namespaces/tables/pods?includeObject=All",
        Some(accept),
    )
    .await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["reason"], "BadRequest");
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("includeObject"),
        "{refused}"
    );

    // Pages: each Table carries the list's metadata.
    let (_, _, page) = get(&grw, "/api/v1/namespaces/tables/pods?limit=1", Some(accept)).await;
    assert_eq!(page["rows"].as_array().unwrap().len(), 1);
    assert!(page["metadata"]["continue"].is_string(), "{page}");
    assert!(page["metadata"]["resourceVersion"].is_string(), "{page}");
    assert_eq!(page["metadata"]["remainingItemCount"], 1, "{page}");
    // A selector leaves the count out, as the API server does.
    let (_, _, selected) = get(
        &grw,
        "/api/v1/namespaces/tables/pods?limit=1&labelSelector=app%3Dweb",
        Some(accept),
    )
    .await;
    assert!(selected["metadata"]["continue"].is_string(), "{selected}");
    assert!(
        selected["metadata"].get("remainingItemCount").is_none(),
        "{selected}"
    );

    // v1beta1 Tables, when asked.
    let (_, _, beta) = get(
        &grw,
        "/api/v1/namespaces/tables/pods/web-1",
        Some("application/json;as=Table;v=v1beta1;g=meta.k8s.io"),
    )
    .await;
    assert_eq!(beta["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(
        beta["rows"][0]["object"]["apiVersion"],
        "meta.k8s.io/v1beta1"
    );

    // A watch: one Table per event, the columns with the first only.
    let response = reqwest::Client::new()
        .get(format!(
            "{}{PREFIX}/api/v1/namespaces/tables/pods?watch=1",
            grw.url
        ))
        .header("Accept", accept)
        .send()
        .await
        .unwrap();
    let mut watch = Watch {
        response,
        buffer: Vec::new(),
    };
    let first = watch.next(Duration::from_secs(10)).await.unwrap();
    let second = watch.next(Duration::from_secs(10)).await.unwrap();
    assert_eq!(first["object"]["kind"], "Table");
    assert_eq!(names(&first["object"]), names(&recorded));
    assert_eq!(second["object"]["columnDefinitions"], Value::Null);
    fake.create(pod("tables", "web-3", json!({"app": "web"})))
        .unwrap();
    let added = loop {
        let event = watch
            .next(Duration::from_secs(10))
            .await
            .expect("the new pod's event");
        if event["type"] == "ADDED" && event["object"]["rows"][0]["cells"][0] == "web-3" {
            break event;
        }
    };
    assert_eq!(added["object"]["columnDefinitions"], Value::Null);
    assert_eq!(added["object"]["rows"][0]["cells"][2], "Running");

    // A streaming list: its closing bookmark is a Table too, whose row
    // keeps the bookmark's metadata whatever includeObject says.
    let response = reqwest::Client::new()
        .get(format!(
            "{}{PREFIX}/api/v1/namespaces/tables/pods?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&includeObject=None",
            grw.url
        ))
        .header("Accept", accept)
        .send()
        .await
        .unwrap();
    let mut watch = Watch {
        response,
        buffer: Vec::new(),
    };
    let bookmark = loop {
        let event = watch
            .next(Duration::from_secs(10))
            .await
            .expect("the closing bookmark");
        assert_eq!(event["object"]["kind"], "Table", "{event}");
        if event["type"] == "BOOKMARK" {
            break event;
        }
        assert_eq!(event["object"]["rows"][0]["object"], Value::Null, "{event}");
    };
    let row_object = &bookmark["object"]["rows"][0]["object"];
    assert_eq!(row_object["kind"], "PartialObjectMetadata", "{bookmark}");
    assert_eq!(
        row_object["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
}

// ---- kube-rs ----------------------------------------------------------------

mod reflector {
    use std::sync::Arc;

    use futures::StreamExt;
    use k8s_openapi::api::core::v1::Pod;
    use kube::runtime::reflector::{self, Store};
    use kube::runtime::{WatchStreamExt, watcher};
    use kube::{Api, Client, Config};
    use tokio::net::{TcpListener, TcpStream};

    use super::*;

    /// A TCP forwarder whose target can change: clients keep one address
    /// while the daemon behind it restarts on another port.
    struct Forwarder {
        address: String,
        target: Arc<parking_lot::Mutex<String>>,
    }

    impl Forwarder {
        async fn to(target: &str) -> Forwarder {
            let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
            let address = listener.local_addr().unwrap().to_string();
            let target = Arc::new(parking_lot::Mutex::new(target.to_string()));
            let shared = target.clone();
            tokio::spawn(async move {
                while let Ok((mut inbound, _)) = listener.accept().await {
                    let to = shared.lock().clone();
                    tokio::spawn(async move {
                        if let Ok(mut outbound) = TcpStream::connect(to).await {
                            let _ =
                                tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                        }
                    });
                }
            });
            Forwarder { address, target }
        }

        fn retarget(&self, target: &str) {
            *self.target.lock() = target.to_string();
        }
    }

    fn host_of(url: &str) -> String {
        url.trim_start_matches("http://").to_string()
    }

    fn client(url: &str, token: Option<&str>) -> Client {
        let mut config = Config::new(url.parse().unwrap());
        if let Some(token) = token {
            config.auth_info.token = Some(token.to_string().into());
        }
        Client::try_from(config).unwrap()
    }

    /// A reflector of every Pod through `client`, with `config`'s strategy.
    fn reflect(client: Client, config: watcher::Config) -> Store<Pod> {
        let (reader, writer) = reflector::store();
        let stream = reflector::reflector(writer, watcher(Api::<Pod>::all(client), config))
            .default_backoff()
            .applied_objects();
        tokio::spawn(async move {
            let mut stream = std::pin::pin!(stream);
            while stream.next().await.is_some() {}
        });
        reader
    }

    fn state(store: &Store<Pod>) -> BTreeSet<(String, String, String)> {
        store
            .state()
            .iter()
            .map(|p| {
                let m = &p.metadata;
                (
                    m.namespace.clone().unwrap_or_default(),
                    m.name.clone().unwrap_or_default(),
                    m.resource_version.clone().unwrap_or_default(),
                )
            })
            .collect()
    }

    /// The API server's Pods, as a store holds them.
    fn truth(fake: &FakeApiServer) -> BTreeSet<(String, String, String)> {
        fake.objects("v1", "Pod")
            .iter()
            .map(|p| {
                let m = &p["metadata"];
                let s = |k: &str| m[k].as_str().unwrap_or("").to_string();
                (s("namespace"), s("name"), s("resourceVersion"))
            })
            .collect()
    }

    /// Waits until both stores hold exactly the API server's Pods.
    async fn converge(fake: &FakeApiServer, through_grw: &Store<Pod>, direct: &Store<Pod>) {
        let equal = eventually(Duration::from_secs(30), || async {
            let truth = truth(fake);
            state(through_grw) == truth && state(direct) == truth
        })
        .await;
        let truth = truth(fake);
        assert!(
            equal,
            "through GRW, missing: {:?}, extra: {:?}; direct equal: {}",
            truth.difference(&state(through_grw)).collect::<Vec<_>>(),
            state(through_grw).difference(&truth).collect::<Vec<_>>(),
            state(direct) == truth
        );
    }

    async fn kube_rs_reflectors_converge_through_grw(config: watcher::Config) {
        let fake = cluster().await;
        let mut daemon = grw(&fake).await;
        let forwarder = Forwarder::to(&host_of(&daemon.url)).await;
        let through_grw = reflect(
            client(&format!("http://{}{PREFIX}", forwarder.address), None),
            config.clone(),
        );
        let direct = reflect(client(&fake.url(), Some(TOKEN)), config.clone());
        converge(&fake, &through_grw, &direct).await;

        // Changes, including a deletion.
        fake.create(pod("shop", "r1", json!({}))).unwrap();
        let some = fake
            .objects("v1", "Pod")
            .into_iter()
            .find(|p| p["metadata"]["name"] != "r1")
            .unwrap();
        fake.delete(
            "v1",
            "Pod",
            some["metadata"]["namespace"].as_str(),
            some["metadata"]["name"].as_str().unwrap(),
        )
        .unwrap();
        converge(&fake, &through_grw, &direct).await;

        // The API server answers GRW's watch 410: GRW lists again, and its
        // clients see the difference as changes.
        fake.compact();
        fake.drop_watches();
        fake.create(pod("shop", "r2", json!({}))).unwrap();
        converge(&fake, &through_grw, &direct).await;

        // GRW restarts; while it is down, things change.
        let dir = daemon.kill();
        drop(dir);
        fake.create(pod("shop", "r3", json!({}))).unwrap();
        fake.delete("v1", "Pod", Some("shop"), "r1").unwrap();
        daemon = grw(&fake).await;
        forwarder.retarget(&host_of(&daemon.url));
        converge(&fake, &through_grw, &direct).await;
        assert!(state(&through_grw).iter().any(|(_, name, _)| name == "r3"));
        assert!(!state(&through_grw).iter().any(|(_, name, _)| name == "r1"));
        drop(daemon);
    }

    #[tokio::test]
    async fn a_list_then_watch_reflector_converges_through_grw() {
        kube_rs_reflectors_converge_through_grw(watcher::Config::default()).await;
    }

    #[tokio::test]
    async fn a_streaming_list_reflector_converges_through_grw() {
        kube_rs_reflectors_converge_through_grw(watcher::Config::default().streaming_lists()).await;
    }
}
