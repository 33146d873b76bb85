//! Searching lists of the native API, end to end against the fake API
//! server: `nameContains` (following creations and deletions), owners by
//! uid or by kind and name, at one level or any depth, kinds named by
//! group and kind alone answered in the group's preferred version, and
//! every bad parameter's message.

use std::collections::BTreeSet;
use std::time::Duration;

use grw_e2e::daemon::{Grw, eventually, keys};
use grw_e2e::fake_api::{FakeApiOptions, FakeApiServer};
use serde_json::{Value, json};

const TOKEN: &str = "s3arch";
const READY: Duration = Duration::from_secs(30);
const CHANGE: Duration = Duration::from_secs(10);

fn owner(api_version: &str, kind: &str, name: &str, uid: &str) -> Value {
    json!([{"apiVersion": api_version, "kind": kind, "name": name, "uid": uid, "controller": true}])
}

fn object(api_version: &str, kind: &str, ns: Option<&str>, name: &str, uid: &str) -> Value {
    let mut o = json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"name": name, "uid": uid, "labels": {"app": name.split('-').next().unwrap()}}});
    if let Some(ns) = ns {
        o["metadata"]["namespace"] = json!(ns);
    }
    o
}

fn owned(mut o: Value, references: Value) -> Value {
    o["metadata"]["ownerReferences"] = references;
    o
}

fn pod(ns: &str, name: &str, rs: Option<(&str, &str)>) -> Value {
    let o = object("v1", "Pod", Some(ns), name, &format!("pod-{ns}-{name}"));
    match rs {
        Some((rs_name, rs_uid)) => owned(o, owner("apps/v1", "ReplicaSet", rs_name, rs_uid)),
        None => o,
    }
}

/// Two namespaces, each with a Deployment `web` (two ReplicaSets in
/// `shop`, one in `ads`) and its Pods, a Pod no one owns, a mirror Pod
/// owned by a Node, and a ConfigMap whose name is not ASCII (the fake
/// checks no name; some kinds, RBAC's among them, take any name without
/// `/` or `%`).
async fn cluster() -> FakeApiServer {
    let fake = FakeApiServer::start(FakeApiOptions {
        token: Some(TOKEN.into()),
        ..FakeApiOptions::default()
    })
    .await;
    let objects = [
        object("apps/v1", "Deployment", Some("shop"), "web", "dep-shop-web"),
        object("apps/v1", "Deployment", Some("ads"), "web", "dep-ads-web"),
        owned(
            object(
                "apps/v1",
                "ReplicaSet",
                Some("shop"),
                "web-7d9f8c6b5",
                "rs-1",
            ),
            owner("apps/v1", "Deployment", "web", "dep-shop-web"),
        ),
        owned(
            object("apps/v1", "ReplicaSet", Some("shop"), "web-59c7d", "rs-2"),
            owner("apps/v1", "Deployment", "web", "dep-shop-web"),
        ),
        owned(
            object("apps/v1", "ReplicaSet", Some("ads"), "web-6b8f4", "rs-3"),
            owner("apps/v1", "Deployment", "web", "dep-ads-web"),
        ),
        pod(
            "shop",
            "web-7d9f8c6b5-x2k4q",
            Some(("web-7d9f8c6b5", "rs-1")),
        ),
        pod(
            "shop",
            "web-7d9f8c6b5-a8b2c",
            Some(("web-7d9f8c6b5", "rs-1")),
        ),
        pod("shop", "web-59c7d-zq9wt", Some(("web-59c7d", "rs-2"))),
        pod("ads", "web-6b8f4-x2k4q", Some(("web-6b8f4", "rs-3"))),
        pod("shop", "cart-0", None),
        object("v1", "Node", None, "node-a", "node-a-uid"),
        owned(
            object(
                "v1",
                "Pod",
                Some("kube-system"),
                "kube-proxy-node-a",
                "mirror",
            ),
            owner("v1", "Node", "node-a", "node-a-uid"),
        ),
        object("v1", "ConfigMap", Some("shop"), "Système-Ünïcode", "cm-1"),
        object(
            "networking.istio.io/v1beta1",
            "Gateway",
            Some("ingress"),
            "shop-gateway",
            "gw-1",
        ),
    ];
    for o in objects {
        fake.create(o).unwrap();
    }
    fake
}

async fn grw(fake: &FakeApiServer) -> Grw {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let kind = |group: &str, version: &str, kind: &str| json!({"group": group, "version": version, "kind": kind});
    let config = json!({
        "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": fake.url(), "tokenFilePath": token_file},
        "initialWatchingResources": [
            kind("", "v1", "Pod"),
            kind("apps", "v1", "ReplicaSet"),
            kind("apps", "v1", "Deployment"),
            kind("", "v1", "Node"),
            kind("", "v1", "ConfigMap"),
            kind("networking.istio.io", "v1beta1", "Gateway"),
        ],
        "apiGroupsSyncIntervalSecond": 3600,
        "builtinAnalyzers": false,
    });
    let grw = Grw::start_in(dir, config, &[]).await;
    grw.wait_ready(READY).await;
    grw
}

async fn list(grw: &Grw, path: &str) -> Vec<String> {
    let (status, body) = grw.get(path).await;
    assert_eq!(status, 200, "{path}: {body}");
    keys(&body)
}

#[tokio::test]
async fn name_search_ignores_case_and_follows_changes() {
    let fake = cluster().await;
    let grw = grw(&fake).await;

    assert_eq!(
        list(&grw, "/api/v1/objects/pods?nameContains=X2K4Q").await,
        ["ads/web-6b8f4-x2k4q", "shop/web-7d9f8c6b5-x2k4q"]
    );
    assert_eq!(
        list(
            &grw,
            "/api/v1/namespaces/shop/objects/pods?nameContains=Web-"
        )
        .await,
        [
            "shop/web-59c7d-zq9wt",
            "shop/web-7d9f8c6b5-a8b2c",
            "shop/web-7d9f8c6b5-x2k4q"
        ]
    );
    // Two characters: no trigram to look up, every object is checked.
    assert_eq!(
        list(&grw, "/api/v1/objects/pods?nameContains=-0").await,
        ["shop/cart-0"]
    );
    // With the other conditions: all must hold.
    assert_eq!(
        list(
            &grw,
            "/api/v1/objects/pods?nameContains=x2k4q&fieldSelector=metadata.namespace%3Dads"
        )
        .await,
        ["ads/web-6b8f4-x2k4q"]
    );
    assert_eq!(
        list(
            &grw,
            "/api/v1/objects/pods?nameContains=proxy&labelSelector=app%3Dweb"
        )
        .await,
        Vec::<String>::new()
    );
    assert!(
        list(&grw, "/api/v1/objects/pods?nameContains=nothing-like-it")
            .await
            .is_empty()
    );
    // Not ASCII: folded per character, sent percent-encoded.
    for text in ["%C3%9CN%C3%8F", "syst%C3%88me-%C3%BC"] {
        assert_eq!(
            list(
                &grw,
                &format!("/api/v1/objects/configmaps?nameContains={text}")
            )
            .await,
            ["shop/Système-Ünïcode"],
            "{text}"
        );
    }

    // Pages of a name search cover each match once, in key order.
    let mut seen = Vec::new();
    let mut path = "/api/v1/objects/pods?nameContains=WEB&limit=1".to_string();
    loop {
        let (status, body) = grw.get(&path).await;
        assert_eq!(status, 200, "{body}");
        seen.extend(keys(&body));
        match body["metadata"]["continue"].as_str() {
            Some(token) => {
                path = format!("/api/v1/objects/pods?nameContains=WEB&limit=1&continue={token}")
            }
            None => break,
        }
    }
    assert_eq!(seen.len(), 4, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");

    // Created, updated and deleted objects: the index follows.
    fake.create(pod(
        "shop",
        "web-7d9f8c6b5-newpd",
        Some(("web-7d9f8c6b5", "rs-1")),
    ))
    .unwrap();
    let search = "/api/v1/namespaces/shop/objects/pods?nameContains=NEWPD";
    assert!(
        eventually(CHANGE, || async {
            list(&grw, search).await == ["shop/web-7d9f8c6b5-newpd"]
        })
        .await
    );
    let mut updated = pod(
        "shop",
        "web-7d9f8c6b5-newpd",
        Some(("web-7d9f8c6b5", "rs-1")),
    );
    updated["metadata"]["labels"]["tier"] = json!("front");
    fake.update(updated).unwrap();
    assert!(
        eventually(CHANGE, || async {
            list(&grw, &format!("{search}&labelSelector=tier%3Dfront")).await
                == ["shop/web-7d9f8c6b5-newpd"]
        })
        .await
    );
    fake.delete("v1", "Pod", Some("shop"), "web-7d9f8c6b5-x2k4q")
        .unwrap();
    assert!(
        eventually(CHANGE, || async {
            list(&grw, "/api/v1/objects/pods?nameContains=x2k4q").await == ["ads/web-6b8f4-x2k4q"]
        })
        .await
    );
    // Re-created under the same name: found again.
    fake.create(pod("shop", "web-7d9f8c6b5-x2k4q", None))
        .unwrap();
    assert!(
        eventually(CHANGE, || async {
            list(&grw, "/api/v1/objects/pods?nameContains=x2k4q")
                .await
                .len()
                == 2
        })
        .await
    );

    // A stream with a name text shows the matching changes only.
    let mut stream = grw
        .stream("/api/v1/namespaces/shop/objects/pods?watch=true&nameContains=CART")
        .await;
    let first = stream.next(CHANGE).await.expect("the snapshot's ADDED");
    assert_eq!(first["object"]["metadata"]["name"], "cart-0");
    fake.create(pod("shop", "cart-1", None)).unwrap();
    fake.create(pod("shop", "other-1", None)).unwrap();
    let next = stream.next(CHANGE).await.expect("the new cart Pod");
    assert_eq!(
        (
            next["type"].as_str(),
            next["object"]["metadata"]["name"].as_str()
        ),
        (Some("ADDED"), Some("cart-1"))
    );
    assert!(stream.next(Duration::from_millis(1500)).await.is_none());
}

#[tokio::test]
async fn owners_by_uid_by_kind_and_name_and_at_any_depth() {
    let fake = cluster().await;
    let grw = grw(&fake).await;
    let shop_pods = "/api/v1/namespaces/shop/objects/pods";

    // One level: the ownerReferences name the owner.
    assert_eq!(
        list(&grw, &format!("{shop_pods}?ownerUid=rs-1")).await,
        ["shop/web-7d9f8c6b5-a8b2c", "shop/web-7d9f8c6b5-x2k4q"]
    );
    assert_eq!(
        list(
            &grw,
            &format!("{shop_pods}?ownerKind=ReplicaSet&ownerName=web-59c7d")
        )
        .await,
        ["shop/web-59c7d-zq9wt"]
    );
    // A Deployment owns ReplicaSets, not Pods...
    assert!(
        list(
            &grw,
            &format!("{shop_pods}?ownerKind=deployments.apps&ownerName=web")
        )
        .await
        .is_empty()
    );
    // ...but is their ancestor.
    let all_shop = [
        "shop/web-59c7d-zq9wt",
        "shop/web-7d9f8c6b5-a8b2c",
        "shop/web-7d9f8c6b5-x2k4q",
    ];
    assert_eq!(
        list(
            &grw,
            &format!("{shop_pods}?ownerKind=Deployment&ownerName=web&ownerDepth=all")
        )
        .await,
        all_shop
    );
    assert_eq!(
        list(
            &grw,
            &format!("{shop_pods}?ownerUid=dep-shop-web&ownerDepth=all")
        )
        .await,
        all_shop
    );
    assert_eq!(
        list(
            &grw,
            "/api/v1/namespaces/shop/objects/replicasets?ownerUid=dep-shop-web&ownerDepth=all"
        )
        .await,
        ["shop/web-59c7d", "shop/web-7d9f8c6b5"]
    );
    // All namespaces: each namespace's `web`.
    let everywhere = list(
        &grw,
        "/api/v1/objects/pods?ownerKind=Deployment&ownerName=web&ownerDepth=all",
    )
    .await;
    assert_eq!(everywhere.len(), 4, "{everywhere:?}");
    assert_eq!(everywhere[0], "ads/web-6b8f4-x2k4q");
    // With a name text and a page size.
    let (status, page) = grw
        .get(&format!(
            "{shop_pods}?ownerKind=Deployment&ownerName=web&ownerDepth=all&nameContains=7D9F&limit=1"
        ))
        .await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(keys(&page), ["shop/web-7d9f8c6b5-a8b2c"]);
    assert!(page["metadata"]["continue"].is_string());

    // A cluster-scoped owner of namespaced objects: a Node's mirror Pod.
    assert_eq!(
        list(
            &grw,
            "/api/v1/namespaces/kube-system/objects/pods?ownerKind=Node&ownerName=node-a"
        )
        .await,
        ["kube-system/kube-proxy-node-a"]
    );
    assert_eq!(
        list(
            &grw,
            "/api/v1/objects/pods?ownerKind=nodes&ownerName=node-a&ownerDepth=all"
        )
        .await,
        ["kube-system/kube-proxy-node-a"]
    );
    // An owner the cache does not hold owns nothing.
    assert!(
        list(
            &grw,
            &format!("{shop_pods}?ownerKind=ReplicaSet&ownerName=gone")
        )
        .await
        .is_empty()
    );
    assert!(
        list(
            &grw,
            "/api/v1/namespaces/ads/objects/pods?ownerKind=ReplicaSet&ownerName=web-7d9f8c6b5"
        )
        .await
        .is_empty(),
        "owners are looked up in the query's namespace"
    );

    // A new ReplicaSet and its Pod join the Deployment's descendants.
    fake.create(owned(
        object("apps/v1", "ReplicaSet", Some("shop"), "web-11111", "rs-4"),
        owner("apps/v1", "Deployment", "web", "dep-shop-web"),
    ))
    .unwrap();
    fake.create(pod("shop", "web-11111-aaaaa", Some(("web-11111", "rs-4"))))
        .unwrap();
    let path = format!("{shop_pods}?ownerKind=Deployment&ownerName=web&ownerDepth=all");
    assert!(
        eventually(CHANGE, || async { list(&grw, &path).await.len() == 4 }).await,
        "{:?}",
        list(&grw, &path).await
    );

    // A stream of one owner's objects, looked up when it starts.
    let mut stream = grw
        .stream(&format!(
            "{shop_pods}?watch=true&ownerKind=ReplicaSet&ownerName=web-59c7d"
        ))
        .await;
    let first = stream.next(CHANGE).await.expect("the snapshot's ADDED");
    assert_eq!(first["object"]["metadata"]["name"], "web-59c7d-zq9wt");
    fake.create(pod("shop", "web-59c7d-bbbbb", Some(("web-59c7d", "rs-2"))))
        .unwrap();
    fake.create(pod("shop", "web-11111-ccccc", Some(("web-11111", "rs-4"))))
        .unwrap();
    let next = stream.next(CHANGE).await.expect("the new Pod of web-59c7d");
    assert_eq!(next["object"]["metadata"]["name"], "web-59c7d-bbbbb");
    assert!(stream.next(Duration::from_millis(1500)).await.is_none());
}

#[tokio::test]
async fn group_and_kind_alone_answer_in_the_preferred_version() {
    let fake = cluster().await;
    let grw = grw(&fake).await;
    // The Istio CRDs serve v1beta1 and v1; v1 is preferred.
    for kind in [
        "Gateway.networking.istio.io",
        "gateways.networking.istio.io",
        "networking.istio.io%2FGateway",
    ] {
        let response = grw
            .get_raw(&format!(
                "/api/v1/namespaces/ingress/objects/{kind}/shop-gateway"
            ))
            .await;
        assert_eq!(response.status(), 200, "{kind}");
        assert_eq!(
            response.headers()["grw-gvk"],
            "networking.istio.io/v1/Gateway"
        );
        let object: Value = response.json().await.unwrap();
        assert_eq!(object["apiVersion"], "networking.istio.io/v1", "{kind}");

        let response = grw
            .get_raw(&format!("/api/v1/objects/{kind}?nameContains=shop"))
            .await;
        assert_eq!(
            response.headers()["grw-gvk"],
            "networking.istio.io/v1/Gateway"
        );
        let body: Value = response.json().await.unwrap();
        assert_eq!(body["metadata"]["gvk"], "networking.istio.io/v1/Gateway");
        assert_eq!(body["apiVersion"], "networking.istio.io/v1");
        assert_eq!(keys(&body), ["ingress/shop-gateway"]);
    }
    // A version named is the version answered: the configured watch.
    let response = grw
        .get_raw(
            "/api/v1/namespaces/ingress/objects/Gateway.v1beta1.networking.istio.io/shop-gateway",
        )
        .await;
    assert_eq!(
        response.headers()["grw-gvk"],
        "networking.istio.io/v1beta1/Gateway"
    );
    let object: Value = response.json().await.unwrap();
    assert_eq!(object["apiVersion"], "networking.istio.io/v1beta1");
    // Core kinds say theirs too.
    let response = grw.get_raw("/api/v1/objects/nodes/node-a").await;
    assert_eq!(response.headers()["grw-gvk"], "v1/Node");
    let (_, kinds) = grw.get("/api/v1/kinds").await;
    let gateways: BTreeSet<&str> = kinds["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|k| k["gvk"].as_str())
        .filter(|gvk| gvk.ends_with("/Gateway"))
        .collect();
    assert_eq!(
        gateways,
        BTreeSet::from([
            "networking.istio.io/v1/Gateway",
            "networking.istio.io/v1beta1/Gateway"
        ])
    );
}

#[tokio::test]
async fn bad_search_parameters_say_what_is_wrong() {
    let fake = cluster().await;
    let grw = grw(&fake).await;
    let long = "a".repeat(254);
    let cases: Vec<(String, u16, &str, String)> = vec![
        (
            "/api/v1/objects/pods?nameContains=".into(),
            400,
            "InvalidParameter",
            "query parameter `nameContains`: must not be empty".into(),
        ),
        (
            format!("/api/v1/objects/pods?nameContains={long}"),
            400,
            "InvalidParameter",
            "query parameter `nameContains`: the text has 254 characters; no name has more than 253"
                .into(),
        ),
        (
            "/api/v1/objects/pods?nameContains=shop%2Fweb".into(),
            400,
            "InvalidParameter",
            "query parameter `nameContains`: the text holds `/`, which no object name can; it searches names alone, not `namespace/name`".into(),
        ),
        (
            "/api/v1/objects/pods?ownerDepth=all".into(),
            400,
            "InvalidParameter",
            "query parameter `ownerDepth`: needs an owner: `ownerUid`, or `ownerKind` and `ownerName`".into(),
        ),
        (
            "/api/v1/objects/pods?ownerUid=rs-1&ownerDepth=2".into(),
            400,
            "InvalidParameter",
            "query parameter `ownerDepth`: must be `1` (an ownerReference names the owner, the default) or `all` (the owner or anything under it does), got `2`".into(),
        ),
        (
            "/api/v1/objects/pods?ownerKind=Deployment".into(),
            400,
            "InvalidParameter",
            "query parameter `ownerName`: `ownerKind` needs `ownerName`".into(),
        ),
        (
            "/api/v1/objects/pods?ownerName=web".into(),
            400,
            "InvalidParameter",
            "query parameter `ownerKind`: `ownerName` needs `ownerKind` (e.g. `ownerKind=Deployment`)".into(),
        ),
        (
            "/api/v1/objects/pods?ownerUid=x&ownerKind=Deployment&ownerName=web".into(),
            400,
            "InvalidParameter",
            "query parameter `ownerUid`: name the owner by `ownerUid` or by `ownerKind` and `ownerName`, not both".into(),
        ),
        (
            "/api/v1/objects/pods?ownerUid=".into(),
            400,
            "InvalidParameter",
            "query parameter `ownerUid`: must not be empty".into(),
        ),
        (
            "/api/v1/objects/pods?ownerKind=a/b/c/d&ownerName=web".into(),
            400,
            "InvalidParameter",
            "query parameter `ownerKind`: `a/b/c/d` is not a kind: expected `Kind`, `resource.group`, `Kind.version.group` or `group/version/Kind`".into(),
        ),
        (
            "/api/v1/objects/nodes?ownerKind=Deployment&ownerName=web".into(),
            400,
            "InvalidParameter",
            "query parameter `ownerKind`: `apps/v1/Deployment` is namespaced and `v1/Node` is cluster-scoped: a cluster-scoped object's owners are cluster-scoped".into(),
        ),
        (
            "/api/v1/objects/pods?watch=true&ownerUid=rs-1&ownerDepth=all".into(),
            400,
            "InvalidParameter",
            "query parameter `ownerDepth`: `all` cannot be combined with `watch`: the descendants are found when a list is read, and a stream would miss later ones; list again instead, or watch with `ownerDepth=1`".into(),
        ),
    ];
    for (path, status, reason, message) in cases {
        let (got, body) = grw.get(&path).await;
        assert_eq!(
            (got, body["reason"].as_str()),
            (status, Some(reason)),
            "{path}: {body}"
        );
        assert_eq!(body["message"], message, "{path}");
    }
    // An owner kind nobody serves: the kind's own 404, naming the parameter.
    let (status, body) = grw
        .get("/api/v1/objects/pods?ownerKind=Frobnicator&ownerName=x")
        .await;
    assert_eq!(status, 404, "{body}");
    let message = body["message"].as_str().unwrap();
    assert!(
        message.starts_with("query parameter `ownerKind`: ") && message.contains("Frobnicator"),
        "{message}"
    );
    // The parameters are listed where an unknown one is refused.
    let (status, body) = grw.get("/api/v1/objects/pods?nameLike=web").await;
    assert_eq!(status, 400);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("nameContains, ownerUid, ownerKind, ownerName, ownerDepth"),
        "{body}"
    );
}

#[tokio::test]
async fn the_kubernetes_routes_take_the_search_parameters() {
    let fake = cluster().await;
    let grw = grw(&fake).await;
    let shop_pods = "/kube/api/v1/namespaces/shop/pods";

    let (status, body) = grw.get(&format!("{shop_pods}?nameContains=X2K4Q")).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["kind"], "PodList");
    assert_eq!(keys(&body), ["shop/web-7d9f8c6b5-x2k4q"]);
    // With the Kubernetes parameters: a selector and pages.
    let (status, body) = grw
        .get(&format!(
            "{shop_pods}?nameContains=web&labelSelector=app%3Dweb&limit=2"
        ))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        keys(&body),
        ["shop/web-59c7d-zq9wt", "shop/web-7d9f8c6b5-a8b2c"]
    );
    let token = body["metadata"]["continue"].as_str().expect("a next page");
    let (_, next) = grw
        .get(&format!(
            "{shop_pods}?nameContains=web&labelSelector=app%3Dweb&limit=2&continue={token}"
        ))
        .await;
    assert_eq!(keys(&next), ["shop/web-7d9f8c6b5-x2k4q"]);
    // Owners, by uid and by kind and name, in the path's namespace.
    let (_, body) = grw.get(&format!("{shop_pods}?ownerUid=rs-1")).await;
    assert_eq!(
        keys(&body),
        ["shop/web-7d9f8c6b5-a8b2c", "shop/web-7d9f8c6b5-x2k4q"]
    );
    let (_, body) = grw
        .get(&format!(
            "{shop_pods}?ownerKind=ReplicaSet&ownerName=web-59c7d"
        ))
        .await;
    assert_eq!(keys(&body), ["shop/web-59c7d-zq9wt"]);
    let (_, body) = grw
        .get("/kube/api/v1/pods?ownerKind=Deployment&ownerName=web&ownerDepth=all")
        .await;
    assert_eq!(keys(&body).len(), 4, "{body}");

    // A watch with a name text: only matching changes.
    let mut stream = grw
        .stream(&format!("{shop_pods}?watch=true&nameContains=CART"))
        .await;
    let first = stream.next(CHANGE).await.expect("the initial ADDED");
    assert_eq!(first["object"]["metadata"]["name"], "cart-0");
    fake.create(pod("shop", "other-2", None)).unwrap();
    fake.create(pod("shop", "cart-2", None)).unwrap();
    let next = stream.next(CHANGE).await.expect("the new cart Pod");
    assert_eq!(
        (
            next["type"].as_str(),
            next["object"]["metadata"]["name"].as_str()
        ),
        (Some("ADDED"), Some("cart-2"))
    );

    // Bad values: the API server's `Status` of a bad request.
    for (query, message) in [
        (
            "nameContains=shop%2Fweb",
            "query parameter `nameContains`: the text holds `/`, which no object name can; it searches names alone, not `namespace/name`",
        ),
        (
            "ownerKind=Deployment",
            "query parameter `ownerName`: `ownerKind` needs `ownerName`",
        ),
        (
            "watch=true&ownerUid=rs-1&ownerDepth=all",
            "query parameter `ownerDepth`: `all` cannot be combined with `watch`: the descendants are found when a list is read, and a stream would miss later ones; list again instead, or watch with `ownerDepth=1`",
        ),
    ] {
        let (status, body) = grw.get(&format!("{shop_pods}?{query}")).await;
        assert_eq!(status, 400, "{query}: {body}");
        assert_eq!(
            (body["kind"].as_str(), body["reason"].as_str()),
            (Some("Status"), Some("BadRequest")),
            "{query}: {body}"
        );
        assert_eq!(body["message"], message, "{query}");
    }
    // Unknown parameters are still ignored, as the API server ignores them.
    let (status, _) = grw.get(&format!("{shop_pods}?nameLike=web")).await;
    assert_eq!(status, 200);
}
