//! The real `grw` against the wire-level fake API server: sync, changes,
//! dropped watches, `410 Gone`, concurrent first queries, refusals, CRDs
//! appearing later and token rotation.

use std::collections::BTreeSet;
use std::time::Duration;

use grw_e2e::daemon::{EventStream, Grw, bundled_recording, eventually, summary};
use grw_e2e::fake_api::{FakeApiOptions, FakeApiServer, StreamingLists};
use serde_json::{Value, json};

const TOKEN: &str = "t0k3n";
const READY: Duration = Duration::from_secs(30);
const QUIET: Duration = Duration::from_millis(1500);

async fn cluster(recording: bool, istio: bool) -> FakeApiServer {
    let fake = FakeApiServer::start(FakeApiOptions {
        token: Some(TOKEN.into()),
        bookmark_interval: Duration::from_millis(500),
        istio_crds_installed: istio,
    })
    .await;
    if recording {
        fake.load_recording(&bundled_recording(), None).unwrap();
    }
    fake
}

/// Starts grw against `fake` with bearer-token auth and these initial kinds.
async fn grw(fake: &FakeApiServer, resources: Value, extra: Value) -> Grw {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let mut config = json!({
        "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": fake.url(), "tokenFilePath": token_file},
        "initialWatchingResources": resources,
        "apiGroupsSyncIntervalSecond": 3600,
    });
    for (k, v) in extra.as_object().into_iter().flatten() {
        config[k] = v.clone();
    }
    Grw::start_in(dir, config, &[]).await
}

fn kind(group: &str, version: &str, kind: &str) -> Value {
    json!({"group": group, "version": version, "kind": kind})
}

fn identities(items: &[Value]) -> BTreeSet<(String, String, String)> {
    items
        .iter()
        .map(|o| {
            let m = &o["metadata"];
            let s = |k: &str| m[k].as_str().unwrap_or("").to_string();
            (s("namespace"), s("name"), s("resourceVersion"))
        })
        .collect()
}

async fn kind_status(grw: &Grw, gvk: &str) -> Value {
    let (_, kinds) = grw.get("/api/v1/kinds").await;
    kinds["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["gvk"] == gvk)
        .cloned()
        .unwrap_or(Value::Null)
}

fn configmap(ns: &str, name: &str, data: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": ns, "name": name, "labels": {"team": "qa"}}, "data": {"k": data}})
}

/// A stream of pods in `shop` from the cache's current resourceVersion on.
async fn pod_stream(grw: &Grw) -> EventStream {
    let (_, list) = grw
        .get("/api/v1/namespaces/shop/objects/pods?limit=1")
        .await;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    grw.stream(&format!(
        "/api/v1/namespaces/shop/objects/pods?watch=true&resourceVersion={rv}"
    ))
    .await
}

#[tokio::test]
async fn initial_sync_mirrors_the_cluster() {
    let fake = cluster(true, true).await;
    let grw = grw(
        &fake,
        json!([
            kind("core", "v1", "Pod"),
            kind("apps", "v1", "Deployment"),
            kind("networking.istio.io", "v1beta1", "VirtualService")
        ]),
        json!({}),
    )
    .await;
    grw.wait_ready(READY).await;
    for (path, api_version, kind_name) in [
        ("/api/v1/objects/pods", "v1", "Pod"),
        ("/api/v1/objects/deployments.apps", "apps/v1", "Deployment"),
        (
            "/api/v1/objects/VirtualService.v1beta1.networking.istio.io",
            "networking.istio.io/v1beta1",
            "VirtualService",
        ),
    ] {
        let (status, body) = grw.get(path).await;
        assert_eq!(status, 200, "{path}: {body}");
        let want = identities(&fake.objects(api_version, kind_name));
        assert_eq!(
            identities(body["items"].as_array().unwrap()),
            want,
            "{path}"
        );
    }
    // 48 pods from the recording, in one streaming list that goes on as
    // the watch: no LIST, no second request.
    let (_, pods) = grw.get("/api/v1/objects/pods").await;
    assert_eq!(pods["items"].as_array().unwrap().len(), 48);
    let pod_requests: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path == "/api/v1/pods")
        .collect();
    assert_eq!(pod_requests.len(), 1, "{pod_requests:?}");
    assert_eq!(
        pod_requests[0].query,
        "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&timeoutSeconds=290"
    );
    let status = kind_status(&grw, "v1/Pod").await;
    assert_eq!(
        (status["status"]["phase"].clone(), status["objects"].clone()),
        (json!("ready"), json!(48))
    );
    // Discovery comes from the server.
    let (_, groups) = grw.get("/resources/apiGroups?forceUpdate=true").await;
    assert!(
        groups["data"]["groups"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["name"] == "networking.istio.io")
    );
    // A kind without version resolves to the group's preferred version (v1 here).
    let (status, body) = grw
        .get("/api/v1/namespaces/ingress/objects/gateways.networking.istio.io")
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["apiVersion"], "networking.istio.io/v1");
}

#[tokio::test]
async fn a_server_without_streaming_lists_is_listed_in_pages() {
    // Refused: Kubernetes 1.27 and later with the WatchList feature off.
    // Ignored: earlier versions, which send the objects and then plain
    // bookmarks (one a second here).
    for answer in [StreamingLists::Refused, StreamingLists::Ignored] {
        let fake = cluster(true, true).await;
        fake.set_streaming_lists(answer);
        let grw = grw(&fake, json!([kind("", "v1", "Pod")]), json!({})).await;
        grw.wait_ready(READY).await;
        let (_, pods) = grw.get("/api/v1/objects/pods").await;
        assert_eq!(
            identities(pods["items"].as_array().unwrap()),
            identities(&fake.objects("v1", "Pod")),
            "{answer:?}"
        );
        let requests = || {
            fake.requests()
                .into_iter()
                .filter(|r| r.path == "/api/v1/pods")
                .map(|r| r.query)
                .collect::<Vec<_>>()
        };
        let list = requests().into_iter().find(|q| q.contains("limit=500"));
        assert!(list.is_some(), "{answer:?}: {:?}", requests());
        // The watch starts just after the kind is ready, not before.
        assert!(
            eventually(Duration::from_secs(5), || async {
                requests().iter().any(|q| {
                    q.contains("watch=true&resourceVersion=")
                        && q.contains("allowWatchBookmarks=true")
                })
            })
            .await,
            "{answer:?}: {:?}",
            requests()
        );
        let reasons: Vec<String> = grw
            .log_events(
                "the API server does not offer streaming lists; listing in pages from now on",
            )
            .iter()
            .filter(|e| e["gvk"] == "v1/Pod")
            .map(|e| e["reason"].as_str().unwrap_or_default().to_string())
            .collect();
        let want = match answer {
            StreamingLists::Refused => {
                "API server answered 422 Invalid: ListOptions.meta.k8s.io \"\" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"
            }
            _ => {
                "a bookmark without the k8s.io/initial-events-end annotation came before the end of the initial events"
            }
        };
        assert_eq!(reasons, [want], "{answer:?}");

        // Changes flow, and a relist after 410 Gone goes straight to pages.
        let mut stream = pod_stream(&grw).await;
        let pod = |name: &str| json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"namespace": "shop", "name": name}});
        fake.create(pod("late")).unwrap();
        let events: Vec<String> = stream
            .drain(Duration::from_secs(2))
            .await
            .iter()
            .map(summary)
            .collect();
        assert_eq!(events, ["ADDED shop/late"], "{answer:?}");
        let (streamed, lists) = (
            fake.streaming_list_requests("/api/v1/pods"),
            fake.list_requests("/api/v1/pods"),
        );
        assert!(fake.cut_off(Duration::from_secs(10)).await, "{answer:?}");
        fake.create(pod("later")).unwrap();
        fake.compact();
        fake.clear_failures();
        assert!(
            eventually(Duration::from_secs(10), || async {
                kind_status(&grw, "v1/Pod").await["status"]["relists"] == 1
            })
            .await,
            "{answer:?}"
        );
        assert_eq!(
            fake.streaming_list_requests("/api/v1/pods"),
            streamed,
            "{answer:?}"
        );
        assert!(fake.list_requests("/api/v1/pods") > lists, "{answer:?}");
    }
}

#[tokio::test]
async fn changes_reach_the_cache_and_the_event_stream() {
    let fake = cluster(false, true).await;
    let grw = grw(&fake, json!([kind("", "v1", "ConfigMap")]), json!({})).await;
    grw.wait_ready(READY).await;
    let mut stream = grw
        .stream("/api/v1/namespaces/team/objects/configmaps?watch=true&labelSelector=team%3Dqa")
        .await;
    fake.create(configmap("team", "settings", "1")).unwrap();
    fake.create(configmap("other", "ignored", "1")).unwrap();
    fake.update(configmap("team", "settings", "2")).unwrap();
    fake.delete("v1", "ConfigMap", Some("team"), "settings")
        .unwrap();
    fake.create(configmap("team", "kept", "1")).unwrap();
    let events = stream.drain(QUIET).await;
    let summaries: Vec<String> = events.iter().map(summary).collect();
    assert_eq!(
        summaries,
        [
            "ADDED team/settings",
            "MODIFIED team/settings",
            "DELETED team/settings",
            "ADDED team/kept"
        ]
    );
    assert_eq!(events[1]["object"]["data"]["k"], "2");
    let (status, kept) = grw
        .get("/api/v1/namespaces/team/objects/configmaps/kept")
        .await;
    assert_eq!((status, kept["data"]["k"].clone()), (200, json!("1")));
    let (status, _) = grw
        .get("/api/v1/namespaces/team/objects/configmaps/settings")
        .await;
    assert_eq!(status, 404);
    let status = kind_status(&grw, "v1/ConfigMap").await;
    assert_eq!(status["status"]["events"], 5);
}

#[tokio::test]
async fn a_deletion_while_disconnected_gives_exactly_one_deleted() {
    let fake = cluster(true, true).await;
    let grw = grw(&fake, json!([kind("", "v1", "Pod")]), json!({})).await;
    grw.wait_ready(READY).await;
    let mut stream = pod_stream(&grw).await;
    let victim = fake
        .objects("v1", "Pod")
        .into_iter()
        .find(|p| p["metadata"]["namespace"] == "shop")
        .unwrap();
    let name = victim["metadata"]["name"].as_str().unwrap().to_string();
    // Hold GRW off while the pod goes away: its watch drops and reconnecting fails for a while.
    assert!(fake.cut_off(Duration::from_secs(10)).await);
    fake.delete("v1", "Pod", Some("shop"), &name).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    fake.clear_failures();
    let events: Vec<String> = stream
        .drain(Duration::from_secs(3))
        .await
        .iter()
        .map(summary)
        .collect();
    assert_eq!(events, [format!("DELETED shop/{name}")]);
    let status = kind_status(&grw, "v1/Pod").await;
    assert_eq!(
        status["status"]["relists"], 0,
        "resumed from the resourceVersion, no relist"
    );
    assert!(status["status"]["watchRestarts"].as_u64().unwrap() >= 1);
    assert_eq!(fake.sync_requests("/api/v1/pods"), 1);
    assert_eq!(status["objects"], 47);
}

#[tokio::test]
async fn gone_relists_and_emits_only_the_difference() {
    let fake = cluster(true, true).await;
    let grw = grw(&fake, json!([kind("", "v1", "Pod")]), json!({})).await;
    grw.wait_ready(READY).await;
    let mut stream = pod_stream(&grw).await;
    let shop: Vec<Value> = fake
        .objects("v1", "Pod")
        .into_iter()
        .filter(|p| p["metadata"]["namespace"] == "shop")
        .collect();
    let (changed, deleted) = (&shop[0], &shop[1]);
    let deleted_rv = deleted["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(fake.cut_off(Duration::from_secs(10)).await);
    let mut modified = changed.clone();
    modified["metadata"]["labels"]["relabelled"] = json!("yes");
    fake.update(modified).unwrap();
    fake.delete(
        "v1",
        "Pod",
        Some("shop"),
        deleted["metadata"]["name"].as_str().unwrap(),
    )
    .unwrap();
    let mut added = deleted.clone();
    added["metadata"]["name"] = json!("newcomer");
    added["metadata"].as_object_mut().unwrap().remove("uid");
    fake.create(added).unwrap();
    // The server forgets those events: resuming is impossible.
    fake.compact();
    fake.clear_failures();
    let events = stream.drain(Duration::from_secs(4)).await;
    let mut summaries: Vec<String> = events.iter().map(summary).collect();
    summaries.sort();
    let mut want = vec![
        format!(
            "MODIFIED shop/{}",
            changed["metadata"]["name"].as_str().unwrap()
        ),
        format!(
            "DELETED shop/{}",
            deleted["metadata"]["name"].as_str().unwrap()
        ),
        "ADDED shop/newcomer".to_string(),
    ];
    want.sort();
    assert_eq!(summaries, want);
    // The DELETED carries the last state GRW knew.
    let gone = events.iter().find(|e| e["type"] == "DELETED").unwrap();
    assert_eq!(
        gone["object"]["metadata"]["resourceVersion"],
        deleted_rv.as_str()
    );
    let status = kind_status(&grw, "v1/Pod").await;
    assert_eq!(status["status"]["relists"], 1);
    assert_eq!(fake.sync_requests("/api/v1/pods"), 2);
    let (_, pods) = grw.get("/api/v1/objects/pods").await;
    assert_eq!(
        identities(pods["items"].as_array().unwrap()),
        identities(&fake.objects("v1", "Pod"))
    );
}

#[tokio::test]
async fn concurrent_first_queries_open_exactly_one_watch() {
    let fake = cluster(true, true).await;
    fake.set_list_delay(Duration::from_millis(300));
    let grw = grw(&fake, json!([]), json!({})).await;
    grw.wait_ready(READY).await;
    let queries = (0..16).map(|i| {
        let grw = &grw;
        async move {
            if i % 2 == 0 {
                grw.get("/api/v1/objects/configmaps").await
            } else {
                grw.get("/resources/k8sObjects?group=core&version=v1&kind=ConfigMap")
                    .await
            }
        }
    });
    let answers = futures::future::join_all(queries).await;
    for (status, body) in &answers {
        assert_eq!(*status, 200, "{body}");
    }
    assert_eq!(answers[0].1["items"].as_array().unwrap().len(), 18);
    assert_eq!(answers[1].1["data"].as_array().unwrap().len(), 18);
    assert!(
        eventually(Duration::from_secs(5), || async {
            fake.watch_requests("/api/v1/configmaps") == 1
        })
        .await
    );
    assert_eq!(fake.sync_requests("/api/v1/configmaps"), 1);
    let status = kind_status(&grw, "v1/ConfigMap").await;
    assert_eq!(status["onDemand"], true);
}

#[tokio::test]
async fn secrets_are_not_watched_on_demand() {
    let fake = cluster(false, true).await;
    let grw = grw(&fake, json!([]), json!({})).await;
    grw.wait_ready(READY).await;
    let (status, body) = grw.get("/api/v1/namespaces/shop/objects/secrets").await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("allowOnDemandSecrets")
    );
    assert_eq!(fake.sync_requests("/api/v1/secrets"), 0);
    let (status, body) = grw
        .get("/resources/k8sObjects?group=core&version=v1&kind=Secret")
        .await;
    assert_eq!((status, body["code"].clone()), (403, json!(403)));
}

#[tokio::test]
async fn forbidden_is_retried_slowly_and_then_recovers() {
    let fake = cluster(true, true).await;
    fake.fail_requests("/api/v1/pods", 403, usize::MAX);
    let grw = grw(&fake, json!([kind("", "v1", "Pod")]), json!({})).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    // Denied requests back off from 5 s: in 3 s at most the first attempt went out.
    assert_eq!(
        fake.sync_requests("/api/v1/pods"),
        1,
        "{:?}",
        fake.requests()
    );
    let status = kind_status(&grw, "v1/Pod").await;
    assert_eq!(status["status"]["phase"], "failed");
    assert!(
        status["status"]["lastError"]
            .as_str()
            .unwrap()
            .contains("403"),
        "{status}"
    );
    assert_eq!(grw.get_raw("/readyz").await.status(), 503);
    fake.clear_failures();
    grw.wait_ready(Duration::from_secs(20)).await;
    let status = kind_status(&grw, "v1/Pod").await;
    assert_eq!(
        (status["status"]["phase"].clone(), status["objects"].clone()),
        (json!("ready"), json!(48))
    );
}

#[tokio::test]
async fn a_kind_whose_crd_appears_later_is_watched_when_it_does() {
    let fake = cluster(false, false).await;
    let grw = grw(
        &fake,
        json!([kind("networking.istio.io", "v1beta1", "Gateway")]),
        json!({}),
    )
    .await;
    grw.wait_ready(READY).await;
    let (_, kinds) = grw.get("/api/v1/kinds").await;
    let pending = kinds["pending"].as_array().unwrap();
    assert_eq!(pending.len(), 1, "{kinds}");
    assert!(
        pending[0]["reason"]
            .as_str()
            .unwrap()
            .contains("not served"),
        "{kinds}"
    );
    fake.add_istio_crds();
    let gateway = json!({"apiVersion": "networking.istio.io/v1beta1", "kind": "Gateway",
        "metadata": {"namespace": "ingress", "name": "edge"}, "spec": {"servers": []}});
    fake.create(gateway).unwrap();
    // The CRD's ADDED event triggers discovery at once (the periodic re-read is an hour away).
    let found = grw
        .wait_for_status(
            "/api/v1/namespaces/ingress/objects/Gateway.v1beta1.networking.istio.io/edge",
            200,
            Duration::from_secs(10),
        )
        .await;
    assert!(found, "logs:\n{}", grw.logs());
    let (_, kinds) = grw.get("/api/v1/kinds").await;
    assert_eq!(kinds["pending"], json!([]));
    let watched = kind_status(&grw, "networking.istio.io/v1beta1/Gateway").await;
    assert_eq!(watched["onDemand"], false, "{kinds}");
}

#[tokio::test]
async fn a_rotated_token_is_read_again_after_401() {
    let fake = cluster(false, true).await;
    let grw = grw(&fake, json!([kind("", "v1", "ConfigMap")]), json!({})).await;
    grw.wait_ready(READY).await;
    fake.set_token(Some("rotated".into()));
    std::fs::write(grw.dir.path().join("token"), "rotated").unwrap();
    fake.drop_watches();
    fake.create(configmap("team", "after-rotation", "1"))
        .unwrap();
    let found = grw
        .wait_for_status(
            "/api/v1/namespaces/team/objects/configmaps/after-rotation",
            200,
            Duration::from_secs(20),
        )
        .await;
    assert!(found, "logs:\n{}", grw.logs());
}

#[tokio::test]
async fn an_unreachable_api_server_does_not_stop_grw() {
    let fake = cluster(false, true).await;
    let url = fake.url();
    fake.shutdown().await;
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let config = json!({
        "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": url, "tokenFilePath": token_file},
        "initialWatchingResources": [kind("", "v1", "Pod")],
    });
    let grw = Grw::start_in(dir, config, &[]).await;
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(grw.get_raw("/healthz").await.status(), 200);
    let readyz = grw.get_raw("/readyz").await;
    assert_eq!(readyz.status(), 503);
    assert_eq!(readyz.text().await.unwrap(), "waiting for discovery");
    assert!(grw.logs().contains("discovery failed"), "{}", grw.logs());
}

#[tokio::test]
async fn a_kubeconfig_with_a_token_user_reaches_the_server() {
    let fake = cluster(true, true).await;
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {}\nusers:\n- name: robot\n  user:\n    token: {TOKEN}\ncontexts:\n- name: fake\n  context:\n    cluster: fake\n    user: robot\ncurrent-context: fake\n",
        fake.url()
    );
    std::fs::write(&kubeconfig, text).unwrap();
    let config = json!({
        "k8sClientConfig": {"authType": "KubeConfig", "kubeConfigFilePath": kubeconfig},
        "initialWatchingResources": [kind("core", "v1", "Node")],
    });
    let grw = Grw::start_in(dir, config, &[]).await;
    grw.wait_ready(READY).await;
    let (_, nodes) = grw.get("/api/v1/objects/nodes").await;
    assert_eq!(nodes["items"].as_array().unwrap().len(), 3);
}

#[tokio::test]
async fn on_demand_watches_can_be_turned_off() {
    let fake = cluster(true, true).await;
    let grw = grw(&fake, json!([]), json!({"onDemandWatch": false})).await;
    grw.wait_ready(READY).await;
    // ConfigMaps: a kind nothing watches (the built-in analyzers follow
    // Pods, Services and others, not what Pods refer to).
    let (status, body) = grw.get("/api/v1/objects/configmaps").await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["reason"], "NotWatched");
    assert!(body["message"].as_str().unwrap().contains("onDemandWatch"));
    assert_eq!(fake.sync_requests("/api/v1/configmaps"), 0);
}

#[tokio::test]
async fn a_sync_slower_than_the_timeout_answers_504_then_serves() {
    let fake = cluster(true, true).await;
    fake.set_list_delay(Duration::from_secs(3));
    let grw = grw(&fake, json!([]), json!({"syncTimeoutSecond": 1})).await;
    grw.wait_ready(READY).await;
    let (status, body) = grw.get("/api/v1/objects/configmaps").await;
    assert_eq!(status, 504, "{body}");
    assert_eq!(body["reason"], "SyncTimeout");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("did not sync within 1 s"),
        "{body}"
    );
    let served = grw
        .wait_for_status("/api/v1/objects/configmaps", 200, Duration::from_secs(10))
        .await;
    assert!(served);
    assert_eq!(
        fake.sync_requests("/api/v1/configmaps"),
        1,
        "the timed-out query's watch went on syncing"
    );
}

#[tokio::test]
async fn compat_query_for_an_unserved_version_lists_the_served_ones() {
    let fake = cluster(true, true).await;
    let grw = grw(&fake, json!([kind("apps", "v1", "Deployment")]), json!({})).await;
    grw.wait_ready(READY).await;
    let (status, body) = grw
        .get("/resources/k8sObjects?group=apps&version=v2&kind=Deployment")
        .await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(
        body["message"],
        "GVK not found, possible GVKs in 'data' field."
    );
    assert_eq!(
        body["data"],
        json!([{"group": "apps", "version": "v1", "kind": "Deployment",
                "gvk": "apps/v1/Deployment", "resource": "deployments"}])
    );
}

#[tokio::test]
async fn a_query_for_a_kind_installed_since_the_last_discovery_finds_it() {
    let fake = cluster(false, false).await;
    // Without a CRD watch (its list is refused) and with the periodic
    // re-read an hour away, only the query itself can notice the new kind.
    fake.fail_requests("customresourcedefinitions", 403, usize::MAX);
    let grw = grw(&fake, json!([]), json!({})).await;
    assert!(
        eventually(READY, || async {
            grw.get("/api/v1/kinds").await.1["discovery"]["crds"]["watched"] == false
        })
        .await
    );
    fake.add_istio_crds();
    let gateway = json!({"apiVersion": "networking.istio.io/v1beta1", "kind": "Gateway",
        "metadata": {"namespace": "ingress", "name": "edge"}, "spec": {"servers": []}});
    fake.create(gateway).unwrap();
    // Queries read discovery again at most every 5 s; the start-up read was just now.
    tokio::time::sleep(Duration::from_millis(5500)).await;
    let (status, body) = grw
        .get("/api/v1/namespaces/ingress/objects/gateways.networking.istio.io/edge")
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["metadata"]["name"], "edge");
}

/// A sidecar whose credentials may only read its own namespace (a Role in
/// `shop`): it becomes ready on its configured watch, follows CRDs by
/// periodic discovery instead of a watch it may not have (saying so once),
/// answers a query that would need the whole cluster 403 at once naming
/// the permission, and answers a query of its namespace from a watch of
/// that namespace, started on demand and shared by later queries.
#[tokio::test]
async fn a_namespaced_role_is_enough_to_run_and_refusals_are_explained_at_once() {
    const USER: &str = "system:serviceaccount:shop:shop";
    let fake = cluster(true, false).await;
    fake.grant_only_namespace(Some(("shop", USER)));
    let pods_in_shop = json!([{"group": "core", "version": "v1", "kind": "Pod",
        "watchOptions": {"namespace": "shop"}}]);
    let grw = grw(
        &fake,
        pods_in_shop,
        json!({"apiGroupsSyncIntervalSecond": 2}),
    )
    .await;
    grw.wait_ready(READY).await;

    let (_, kinds) = grw.get("/api/v1/kinds").await;
    let crds = &kinds["discovery"]["crds"];
    assert_eq!(crds["watched"], false, "{kinds}");
    assert_eq!(crds["refreshSeconds"], 2, "{kinds}");
    let warning = format!(
        "GRW may not list CustomResourceDefinitions (customresourcedefinitions.apiextensions.k8s.io is forbidden: User \"{USER}\" cannot list resource \"customresourcedefinitions\" in API group \"apiextensions.k8s.io\" at the cluster scope): CRDs installed or removed are noticed by reading discovery every 2 s (apiGroupsSyncIntervalSecond), and when a query names a kind discovery does not know; grant `list` and `watch` on customresourcedefinitions.apiextensions.k8s.io cluster-wide to notice them at once"
    );
    assert_eq!(crds["warning"], warning);
    assert_eq!(grw.log_events(&warning).len(), 1, "{}", grw.logs());
    assert_eq!(
        fake.watch_requests("/apis/apiextensions.k8s.io/v1/customresourcedefinitions"),
        0
    );

    let (status, pods) = grw.get("/api/v1/namespaces/shop/objects/pods").await;
    assert_eq!(status, 200, "{pods}");
    assert_eq!(
        pods["items"].as_array().unwrap().len(),
        fake.objects("v1", "Pod")
            .iter()
            .filter(|p| p["metadata"]["namespace"] == "shop")
            .count()
    );

    // All namespaces: refused at once, naming what to grant.
    let asked = std::time::Instant::now();
    let (status, body) = grw.get("/api/v1/objects/pods").await;
    assert_eq!(status, 403, "{body}");
    assert!(asked.elapsed() < Duration::from_secs(5));
    assert_eq!(
        body["message"],
        format!(
            "GRW may not list `pods` (group core) in the whole cluster, which this query needs: grant `list` and `watch` on pods cluster-wide (a ClusterRole and ClusterRoleBinding) to GRW's service account, or ask one namespace it may list (/api/v1/namespaces/NAMESPACE/objects/pods); the API server said: pods is forbidden: User \"{USER}\" cannot watch resource \"pods\" in API group \"\" at the cluster scope"
        )
    );
    // Asked again, GRW answers from the refused watch instead of asking the server.
    let lists = fake.sync_requests("/api/v1/pods");
    assert_eq!(grw.get("/api/v1/objects/pods").await.0, 403);
    assert_eq!(fake.sync_requests("/api/v1/pods"), lists);

    // A kind nobody configured, in the namespace it may read: a watch of
    // that namespace, started on demand and shared.
    let (status, maps) = grw.get("/api/v1/namespaces/shop/objects/configmaps").await;
    assert_eq!(status, 200, "{maps}");
    let (status, _) = grw
        .get("/api/v1/namespaces/shop/objects/configmaps?labelSelector=team")
        .await;
    assert_eq!(status, 200);
    assert_eq!(fake.watch_requests("/api/v1/namespaces/shop/configmaps"), 1);
    let (_, kinds) = grw.get("/api/v1/kinds").await;
    let maps: Vec<&Value> = kinds["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["gvk"] == "v1/ConfigMap")
        .collect();
    // The cluster-wide one it tried, refused and retrying slowly (a grant
    // made later is noticed), and the one of the namespace that serves.
    assert_eq!(maps.len(), 2, "{kinds}");
    assert_eq!(
        maps.iter()
            .filter(|k| k["namespace"] == "shop" && k["synced"] == true && k["onDemand"] == true)
            .count(),
        1,
        "{kinds}"
    );
    assert_eq!(
        maps.iter()
            .filter(|k| k["namespace"].is_null() && k["status"]["phase"] == "failed")
            .count(),
        1,
        "{kinds}"
    );

    // Another namespace: refused, naming it.
    let (status, body) = grw
        .get("/api/v1/namespaces/payments/objects/configmaps")
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["message"].as_str().unwrap().starts_with(
            "GRW may not list `configmaps` (group core) in namespace `payments`, which this query needs: grant `list` and `watch` on configmaps in namespace `payments` (a Role and RoleBinding there)"
        ),
        "{body}"
    );

    // A dedicated cache for one query's namespace and selector: the API
    // server filters, identical queries share it.
    let dedicated =
        "/api/v1/namespaces/shop/objects/pods?labelSelector=tier%3Dbackend&dedicated=true";
    let (status, backend) = grw.get(dedicated).await;
    assert_eq!(status, 200, "{backend}");
    let (_, expected) = grw
        .get("/api/v1/namespaces/shop/objects/pods?labelSelector=tier%3Dbackend")
        .await;
    assert!(!expected["items"].as_array().unwrap().is_empty());
    assert_eq!(
        identities(backend["items"].as_array().unwrap()),
        identities(expected["items"].as_array().unwrap())
    );
    assert_eq!(grw.get(dedicated).await.0, 200);
    let selected_watches = fake
        .requests()
        .iter()
        .filter(|r| {
            r.watch
                && r.path == "/api/v1/namespaces/shop/pods"
                && r.query.contains("labelSelector=tier%3Dbackend")
        })
        .count();
    assert_eq!(selected_watches, 1);
    let (_, kinds) = grw.get("/api/v1/kinds").await;
    let scoped: Vec<&Value> = kinds["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["gvk"] == "v1/Pod" && k["labelSelector"] == "tier=backend")
        .collect();
    assert_eq!(scoped.len(), 1, "{kinds}");
    assert_eq!(scoped[0]["namespace"], "shop");
    assert_eq!(scoped[0]["onDemand"], true);
    // ... but not beyond what the Role allows.
    let (status, body) = grw
        .get("/api/v1/objects/pods?labelSelector=tier%3Dbackend&dedicated=true")
        .await;
    assert_eq!(status, 403, "{body}");

    // Readiness never waited for what the Role does not allow.
    assert_eq!(grw.get_raw("/readyz").await.status(), 200);
    let metrics = grw.get_raw("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains("grw_watch_ready{gvk=\"v1/Pod\",namespace=\"shop\"} 1"),
        "{metrics}"
    );
}
