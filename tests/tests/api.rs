//! The HTTP API of a real `grw` serving the bundled recording: the native
//! routes, every route of the earlier GRW, and bad input.

use std::collections::BTreeSet;
use std::time::Duration;

use grw_e2e::daemon::{Grw, recorded_snapshot, summary};
use serde_json::{Value, json};

fn snapshot() -> Value {
    serde_json::from_slice(&std::fs::read(recorded_snapshot()).unwrap()).unwrap()
}

fn identities(items: &[Value]) -> BTreeSet<(String, String, String, String)> {
    items
        .iter()
        .map(|o| {
            let m = &o["metadata"];
            let s = |k: &str| m[k].as_str().unwrap_or("").to_string();
            (s("namespace"), s("name"), s("resourceVersion"), s("uid"))
        })
        .collect()
}

#[tokio::test]
async fn replay_reproduces_the_recorded_final_state() {
    let grw = Grw::replaying().await;
    let snapshot = snapshot();
    let snapshot = snapshot.as_object().unwrap();
    assert_eq!(snapshot.len(), 15);
    for (resource, list) in snapshot {
        let (status, body) = grw.get(&format!("/api/v1/objects/{resource}")).await;
        assert_eq!(status, 200, "{resource}: {body}");
        let items = body["items"].as_array().unwrap();
        let want = identities(list["items"].as_array().unwrap());
        assert_eq!(identities(items), want, "{resource}");
        for item in items {
            assert!(
                item["kind"].is_string() && item["apiVersion"].is_string(),
                "{resource}"
            );
            assert!(
                item["metadata"].get("managedFields").is_none(),
                "managedFields are stripped"
            );
        }
        assert_eq!(body["metadata"]["ready"], true);
    }
}

#[tokio::test]
async fn native_queries() {
    let grw = Grw::replaying().await;
    let names = |body: &Value| -> Vec<String> {
        body["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    // Exact get, namespaced and cluster-scoped, and by any form of kind.
    for path in [
        "/api/v1/namespaces/ingress/objects/gateways/shop-gateway",
        "/api/v1/namespaces/ingress/objects/Gateway.v1beta1.networking.istio.io/shop-gateway",
        "/api/v1/namespaces/ingress/objects/gateways.networking.istio.io/shop-gateway",
    ] {
        let response = grw.get_raw(path).await;
        assert_eq!(response.status(), 200, "{path}");
        assert_eq!(response.headers()["grw-ready"], "true");
        assert!(response.headers().contains_key("grw-resource-version"));
        let object: Value = response.json().await.unwrap();
        assert_eq!(
            object["spec"]["servers"][0]["hosts"][0],
            "*.shop.example.com"
        );
    }
    let (status, node) = grw.get("/api/v1/objects/nodes/node-c").await;
    assert_eq!(status, 200);
    assert_eq!(node["kind"], "Node");

    // Label selectors, full syntax.
    let (_, body) = grw.get("/api/v1/namespaces/shop/objects/deployments?labelSelector=app.kubernetes.io/name%20in%20(cart,catalog)").await;
    assert_eq!(names(&body), ["cart", "catalog"]);
    let (_, body) = grw
        .get("/api/v1/objects/pods?labelSelector=debug%3Dtrue")
        .await;
    assert_eq!(body["items"].as_array().unwrap().len(), 1);
    let (_, all) = grw.get("/api/v1/objects/nodes").await;
    let (_, labelled) = grw
        .get("/api/v1/objects/nodes?labelSelector=!topology.kubernetes.io/zone")
        .await;
    assert_eq!(all["items"].as_array().unwrap().len(), 3);
    assert_eq!(labelled["items"].as_array().unwrap().len(), 0);

    // Integer comparisons: only labels present with an integer value match.
    let snapshot = snapshot();
    let recorded = |label: &str, keep: fn(i64) -> bool| -> BTreeSet<String> {
        snapshot["pods"]["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| {
                p["metadata"]["labels"][label]
                    .as_str()
                    .and_then(|v| v.parse::<i64>().ok())
                    .is_some_and(keep)
            })
            .map(|p| p["metadata"]["name"].as_str().unwrap().to_string())
            .collect()
    };
    let served = |body: &Value| names(body).into_iter().collect::<BTreeSet<_>>();
    let (status, newer) = grw
        .get("/api/v1/objects/pods?labelSelector=pod-template-generation%3E1")
        .await;
    assert_eq!(status, 200, "{newer}");
    let want = recorded("pod-template-generation", |g| g > 1);
    assert!(!want.is_empty());
    assert_eq!(served(&newer), want);
    let (_, first) = grw
        .get("/api/v1/objects/pods?labelSelector=apps.kubernetes.io/pod-index%20%3C%201,pod-template-generation%3C2")
        .await;
    let mut want = recorded("apps.kubernetes.io/pod-index", |i| i < 1);
    want.retain(|name| recorded("pod-template-generation", |g| g < 2).contains(name));
    assert_eq!(served(&first), want);
    // `controller-revision-hash` is sometimes a number, sometimes not.
    let (_, hashes) = grw
        .get("/api/v1/objects/pods?labelSelector=controller-revision-hash%3E0")
        .await;
    let want = recorded("controller-revision-hash", |h| h > 0);
    assert!(!want.is_empty());
    assert_eq!(served(&hashes), want);

    // Field selectors on any path, strings and numbers.
    let (_, pending) = grw
        .get("/api/v1/objects/pods?fieldSelector=status.phase%3DPending")
        .await;
    let mut pending = names(&pending);
    pending.sort();
    assert_eq!(pending.len(), 3, "{pending:?}");
    assert!(pending.iter().any(|n| n == "loki-0"));
    let (_, frontend) = grw.get("/api/v1/namespaces/shop/objects/deployments?fieldSelector=spec.replicas%3D2,metadata.name%3Dfrontend").await;
    assert_eq!(names(&frontend), ["frontend"]);
    let (_, not_pending) = grw
        .get("/api/v1/objects/pods?fieldSelector=status.phase!%3DPending")
        .await;
    assert_eq!(not_pending["items"].as_array().unwrap().len(), 45);

    // Paging covers everything exactly once.
    let mut seen = Vec::new();
    let mut path = "/api/v1/objects/pods?limit=7".to_string();
    loop {
        let (status, body) = grw.get(&path).await;
        assert_eq!(status, 200);
        assert!(body["items"].as_array().unwrap().len() <= 7);
        seen.extend(names(&body));
        match body["metadata"]["continue"].as_str() {
            Some(token) => path = format!("/api/v1/objects/pods?limit=7&continue={token}"),
            None => break,
        }
    }
    assert_eq!(seen.len(), 48);
    assert_eq!(seen.iter().collect::<BTreeSet<_>>().len(), 48);

    // Kind states.
    let (_, kinds) = grw.get("/api/v1/kinds").await;
    let pods = kinds["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["gvk"] == "v1/Pod")
        .unwrap();
    assert_eq!(pods["objects"], 48);
    assert_eq!(pods["status"]["phase"], "ready");
    assert_eq!(pods["status"]["events"], 844);
}

#[tokio::test]
async fn event_stream_replays_from_a_resource_version_and_filters() {
    let grw = Grw::replaying().await;
    // From the start of the recording: every VirtualService event.
    let mut stream = grw
        .stream("/api/v1/objects/virtualservices?watch=true&resourceVersion=1")
        .await;
    let events: Vec<String> = stream
        .drain(Duration::from_millis(500))
        .await
        .iter()
        .map(summary)
        .collect();
    assert_eq!(
        events,
        [
            "ADDED ingress/frontend",
            "ADDED ingress/payments-api",
            "ADDED ingress/catalog-mesh",
            "MODIFIED ingress/frontend",
            "DELETED ingress/catalog-mesh"
        ]
    );
    // Without a resourceVersion: the current objects as ADDED, filtered.
    let mut stream = grw.stream("/api/v1/namespaces/shop/objects/deployments?watch=true&labelSelector=app.kubernetes.io/name%3Dcart").await;
    let events: Vec<String> = stream
        .drain(Duration::from_millis(500))
        .await
        .iter()
        .map(summary)
        .collect();
    assert_eq!(events, ["ADDED shop/cart"]);
    // A stream ends at its timeout.
    let mut stream = grw
        .stream("/api/v1/objects/nodes?watch=true&timeoutSeconds=1")
        .await;
    assert_eq!(stream.drain(Duration::from_secs(3)).await.len(), 3);
}

#[tokio::test]
async fn compatibility_routes() {
    let grw = Grw::replaying().await;
    let response = grw.get_raw("/").await;
    assert_eq!(
        response.text().await.unwrap(),
        "Hello, this is Watcher Server"
    );

    // /resources/k8sObjects, GET and POST.
    let (status, body) = grw
        .get("/resources/k8sObjects?group=apps&version=v1&kind=Deployment&namespace=shop")
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["code"], 200);
    assert_eq!(body["message"], "11 resource(s) founded");
    assert_eq!(body["data"][0]["kind"], "Deployment");
    let (_, body) = grw
        .get("/resources/k8sObjects?group=core&version=v1&kind=Pod&namespace=shop&name=nope")
        .await;
    assert_eq!(
        (body["code"].clone(), body["data"].clone()),
        (json!(200), json!([]))
    );
    let (_, body) = grw
        .get("/resources/k8sObjects?group=&version=v1&kind=Node")
        .await;
    assert_eq!(body["message"], "3 resource(s) founded");
    let node_uid = body["data"][0]["metadata"]["uid"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, body) = grw
        .get(&format!(
            "/resources/k8sObjects?group=core&version=v1&kind=Node&uid={node_uid}"
        ))
        .await;
    assert_eq!(body["message"], "1 resource(s) founded");

    let query = "/resources/k8sObjects?group=core&version=v1&kind=Pod";
    let (status, body) = grw
        .post(query, json!({"namespace": "monitoring", "labelSelectors": ["app.kubernetes.io/name", "loki"], "fieldMatches": ["status.phase", "Pending"]}).to_string())
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["message"], "1 resource(s) founded");
    // Field matches are type-sensitive: a number is not a string.
    let (_, number) = grw
        .post("/resources/k8sObjects", json!({"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "shop", "fieldMatches": ["spec.replicas", 3]}).to_string())
        .await;
    let (_, text) = grw
        .post("/resources/k8sObjects", json!({"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "shop", "fieldMatches": ["spec.replicas", "3"]}).to_string())
        .await;
    assert!(!number["data"].as_array().unwrap().is_empty(), "{number}");
    assert_eq!(text["data"], json!([]));
    // Annotations, and a body member overriding the query only when non-empty.
    let (_, body) = grw
        .post(
            "/resources/k8sObjects?group=core&version=v1&kind=Service&namespace=payments",
            json!({"namespace": "shop", "name": "", "annotationSelectors": ["prometheus.io/scrape", "true"]}).to_string(),
        )
        .await;
    for service in body["data"].as_array().unwrap() {
        assert_eq!(service["metadata"]["namespace"], "shop");
    }

    // Missing GVK members.
    let (status, body) = grw
        .get("/resources/k8sObjects?group=apps&kind=Deployment")
        .await;
    assert_eq!(status, 416);
    assert_eq!(body["message"], "illegal GVK in query parameters");
    assert_eq!(body["data"], json!({"group": "apps", "kind": "Deployment"}));
    // Unknown GVK: candidates of the same kind.
    let (status, body) = grw
        .get("/resources/k8sObjects?group=apps&version=v2&kind=Deployment")
        .await;
    assert_eq!(status, 404);
    assert_eq!(
        body["message"],
        "GVK not found, possible GVKs in 'data' field."
    );
    assert_eq!(body["data"][0]["gvk"], "apps/v1/Deployment");
    assert_eq!(body["data"][0]["resource"], "deployments");
    let (status, body) = grw
        .get("/resources/k8sObjects?group=x&version=v1&kind=Nothing")
        .await;
    assert_eq!((status, body["data"].clone()), (404, Value::Null));

    // Discovery routes.
    let (status, body) = grw.get("/resources/apiGroups").await;
    assert_eq!(
        (status, body["message"].clone()),
        (200, json!("api groups"))
    );
    assert_eq!(body["data"]["kind"], "APIGroupList");
    let (status, body) = grw
        .get("/resources/apiGroupResources?group=apps&version=v1")
        .await;
    assert_eq!(
        (status, body["message"].clone()),
        (200, json!("resource list"))
    );
    assert!(
        body["data"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "deployments")
    );
    let (_, body) = grw
        .get("/resources/apiGroupResources?group=core&version=v1")
        .await;
    assert!(
        body["data"]["resources"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["name"] == "pods")
    );
    let (status, body) = grw
        .get("/resources/apiGroupResources?group=nope&version=v9")
        .await;
    assert_eq!(
        (status, body["message"].clone(), body["data"].clone()),
        (500, json!("error get resources list"), json!("nope/v9"))
    );
    let (status, body) = grw.get("/resources/apiGroupResources?group=apps").await;
    assert_eq!(
        (status, body["message"].clone()),
        (416, json!("group or version not specified"))
    );

    // Management routes.
    let (_, body) = grw.get("/manage/cachedResourcesList").await;
    let gvks = body["data"].as_array().unwrap();
    assert_eq!(body["message"], "resources");
    assert_eq!(gvks.len(), 15);
    assert!(gvks.contains(&json!("networking.istio.io/v1beta1/VirtualService")));
    let (_, body) = grw
        .get("/manage/cacheSize?group=core&version=v1&kind=Pod")
        .await;
    assert_eq!(
        (body["message"].clone(), body["data"].clone()),
        (json!("cached objecs count"), json!(48))
    );
    let (_, body) = grw
        .get("/manage/cacheSize?group=apps&version=v1&kind=Nothing")
        .await;
    assert_eq!(body["data"], 0);
    let (status, body) = grw.get("/manage/cacheSize?group=apps&version=v1").await;
    assert_eq!(
        (status, body["message"].clone(), body["data"].clone()),
        (
            400,
            json!("missing required parameters"),
            json!("group;version;kind")
        )
    );
}

/// Every bad request gets a 4xx with a message that says what was wrong.
#[tokio::test]
async fn bad_input_is_a_clear_4xx() {
    let grw = Grw::replaying().await;
    let gets: [(&str, u16, &str); 23] = [
        (
            "/api/v1/objects/pods?labelSelector=app%20in%20web",
            400,
            "label selector `app in web`: expected `(` after `in`",
        ),
        (
            "/api/v1/objects/pods?labelSelector=a%3Ex",
            400,
            "label selector `a>x`: value `x` of `a` after `>` (at position 2) is not a number: \
             for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            "/api/v1/objects/pods?labelSelector=a%20gt%201",
            400,
            "label selector `a gt 1`: `gt` at position 2 is not an operator",
        ),
        (
            "/api/v1/objects/pods?labelSelector=a%3D1,",
            400,
            "label selector `a=1,`: trailing `,` at position 3",
        ),
        (
            "/api/v1/objects/pods?labelSelector=a%3D%3D%3Db",
            400,
            "label selector",
        ),
        (
            "/api/v1/objects/pods?fieldSelector=spec.replicas%3E3",
            400,
            "field selectors allow only `=`, `==` and `!=`",
        ),
        (
            "/api/v1/objects/pods?fieldSelector=a..b%3Dc",
            400,
            "field selector",
        ),
        (
            "/api/v1/objects/pods?filter=../shop",
            400,
            "`filter`: expected a plugin name: 1 to 63 ASCII letters, digits, `-`, `_` or `.`, starting with a letter or digit, got \"../shop\"",
        ),
        (
            "/api/v1/objects/pods?filter=shop-only",
            400,
            "unknown filter plugin `shop-only`",
        ),
        (
            "/api/v1/objects/pods?nope=1",
            400,
            "unknown query parameter `nope`",
        ),
        (
            "/api/v1/objects/pods?limit=1&limit=2",
            400,
            "query parameter `limit` is given more than once",
        ),
        (
            "/api/v1/objects/pods?limit=0",
            400,
            "`limit` must be a whole number from 1 to",
        ),
        (
            "/api/v1/objects/pods?limit=abc",
            400,
            "`limit` must be a whole number",
        ),
        (
            "/api/v1/objects/pods?continue=garbage",
            400,
            "`continue` token is not valid",
        ),
        (
            "/api/v1/objects/pods?watch=true&limit=3",
            400,
            "`limit` cannot be combined with `watch`",
        ),
        (
            "/api/v1/objects/pods?watch=maybe",
            400,
            "`watch` must be `true` or `false`",
        ),
        (
            "/api/v1/objects/pods?watch=true&resourceVersion=abc",
            400,
            "`resourceVersion` must be",
        ),
        (
            "/api/v1/objects/pods?resourceVersion=5",
            400,
            "`resourceVersion` only applies with `watch=true`",
        ),
        (
            "/api/v1/objects/Nothing",
            404,
            "kind `Nothing` is not served",
        ),
        ("/api/v1/objects/a..b", 400, "`a..b` is not a kind"),
        ("/api/v1/objects/pods/x", 400, "kind `v1/Pod` is namespaced"),
        (
            "/api/v1/namespaces/shop/objects/nodes",
            400,
            "is cluster-scoped",
        ),
        (
            "/api/v1/namespaces/shop/objects/pods/nope",
            404,
            "Pod `shop/nope` is not in the cache",
        ),
    ];
    for (path, want_status, want_message) in gets {
        let (status, body) = grw.get(path).await;
        assert_eq!(status, want_status, "{path}: {body}");
        let message = body["message"].as_str().unwrap_or_default();
        assert!(message.contains(want_message), "{path}: {message}");
        assert_eq!(body["code"], want_status);
        assert!(body["reason"].is_string(), "{path}: {body}");
    }
    let (status, body) = grw.get("/no/such/route").await;
    assert_eq!((status, body["code"].clone()), (404, json!(404)));
    let (status, body) = grw.post("/api/v1/objects/pods", "{}").await;
    assert_eq!(status, 405, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("method POST is not allowed")
    );

    let posts: [(&str, u16, &str); 7] = [
        ("{not json", 400, "request body is not valid JSON"),
        ("[1,2]", 400, "request body must be a JSON object"),
        (
            r#"{"group":"","version":"v1","kind":"Pod","labelSelectors":["a"]}"#,
            400,
            "`labelSelectors` must be a flat array of key, value pairs",
        ),
        (
            r#"{"group":"","version":"v1","kind":"Pod","labelSelectors":["bad key!","x"]}"#,
            400,
            "`labelSelectors`: label selector",
        ),
        (
            r#"{"group":"","version":"v1","kind":"Pod","fieldMatches":["a..b",1]}"#,
            400,
            "is not a dotted path",
        ),
        (
            r#"{"group":"","version":"v1","kind":"Pod","extra":1}"#,
            400,
            "unknown body member `extra`",
        ),
        (
            r#"{"group":"","version":1,"kind":"Pod"}"#,
            400,
            "body member `version` must be a string",
        ),
    ];
    for (body_text, want_status, want_message) in posts {
        let (status, body) = grw.post("/resources/k8sObjects", body_text).await;
        assert_eq!(status, want_status, "{body_text}: {body}");
        assert!(
            body["message"]
                .as_str()
                .unwrap_or_default()
                .contains(want_message),
            "{body_text}: {body}"
        );
    }
    // Oversized bodies are refused before they are read whole.
    let big = format!(
        r#"{{"group":"","version":"v1","kind":"Pod","name":"{}"}}"#,
        "x".repeat(2 << 20)
    );
    let (status, body) = grw.post("/resources/k8sObjects", big).await;
    assert_eq!(status, 413, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("request body cannot be read")
    );
    // The daemon still answers. On a new connection: the server closes the
    // one whose body it refused to read, and a pooled client could pick it
    // up again before noticing.
    let health = reqwest::get(format!("{}/healthz", grw.url)).await.unwrap();
    assert_eq!(health.status(), 200);
}

#[tokio::test]
async fn bad_subscriptions_are_refused_naming_the_member() {
    let grw = Grw::replaying().await;
    let ok = json!({"name": "x", "kind": "ConfigMap", "webhook": {"url": "http://127.0.0.1:9/x"}});
    let with = |member: &str, value: Value| {
        let mut body = ok.clone();
        body[member] = value;
        body
    };
    let cases = [
        (
            with("labelSelector", json!("tier in (web")),
            "subscription `x`: `labelSelector`: label selector `tier in (web`: missing `)` to close the `(` at position 8",
        ),
        (
            with("fieldSelector", json!("status.phase>1")),
            "subscription `x`: `fieldSelector`: field selector `status.phase>1`: unsupported operator `>` at position 12: field selectors allow only `=`, `==` and `!=`",
        ),
        (
            with("eventTypes", json!(["ADDED", "UPDATED"])),
            "subscription `x`: `eventTypes[1]`: expected one of ADDED, MODIFIED, DELETED, got \"UPDATED\"",
        ),
        (
            with("filters", json!(["shop-only", "no/slashes"])),
            "subscription `x`: `filters[1]`: expected a plugin name: 1 to 63 ASCII letters, digits, `-`, `_` or `.`, starting with a letter or digit, got \"no/slashes\"",
        ),
        (
            with("webhook", json!({"url": "ftp://x"})),
            "subscription `x`: `webhook.url`: expected an http:// or https:// URL with a host, got \"ftp://x\"",
        ),
        (
            json!({"name": "x", "kind": "ConfigMap", "plugin": {"name": ".hidden"}}),
            "subscription `x`: `plugin.name`: expected a plugin name: 1 to 63 ASCII letters, digits, `-`, `_` or `.`, starting with a letter or digit, got \".hidden\"",
        ),
        (
            with("name", json!("Not A Name")),
            "request body: `name`: expected a subscription name: 1 to 63 lowercase letters, digits, `-` or `.`, starting and ending with a letter or digit, got \"Not A Name\"",
        ),
    ];
    for (body, message) in cases {
        let (status, answer) = grw.post("/api/v1/subscriptions", body.to_string()).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(answer["message"], message, "{body}");
        assert_eq!(answer["reason"], "InvalidSubscription", "{body}");
    }
}

#[tokio::test]
async fn operations_endpoints() {
    let grw = Grw::replaying().await;
    assert_eq!(grw.get_raw("/healthz").await.status(), 200);
    assert_eq!(grw.get_raw("/readyz").await.status(), 200);
    grw.get("/api/v1/objects/pods").await;
    let metrics = grw.get_raw("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains(r#"grw_cached_objects{gvk="v1/Pod"} 48"#),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"grw_watch_events_total{gvk="v1/Pod",type="DELETED"} 72"#),
        "{metrics}"
    );
    assert!(metrics.contains(r#"grw_http_request_duration_seconds_count{route="/api/v1/objects/{kind}",status="200"} 1"#), "{metrics}");
}

#[tokio::test]
async fn bearer_token_protects_everything_but_probes() {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("api-token");
    std::fs::write(&token_file, "s3cret\n").unwrap();
    let grw = Grw::replaying_in(dir, json!({"apiTokenFile": token_file})).await;
    let anonymous = reqwest::Client::new();
    for path in [
        "/api/v1/objects/pods",
        "/",
        "/metrics",
        "/manage/cachedResourcesList",
    ] {
        let response = anonymous
            .get(format!("{}{path}", grw.url))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401, "{path}");
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
        let body: Value = response.json().await.unwrap();
        assert!(
            body["message"]
                .as_str()
                .unwrap()
                .contains("Authorization: Bearer")
        );
    }
    let wrong = anonymous
        .get(format!("{}/api/v1/objects/pods", grw.url))
        .bearer_auth("nope")
        .send()
        .await
        .unwrap();
    assert_eq!(wrong.status(), 401);
    for probe in ["/healthz", "/readyz"] {
        assert_eq!(
            anonymous
                .get(format!("{}{probe}", grw.url))
                .send()
                .await
                .unwrap()
                .status(),
            200
        );
    }
    let (status, _) = grw.get("/api/v1/objects/pods").await;
    assert_eq!(status, 200, "the harness sends the token");
}

#[tokio::test]
async fn sigterm_stops_gracefully() {
    let mut grw = Grw::replaying().await;
    let status = grw
        .terminate(Duration::from_secs(10))
        .expect("grw exits after SIGTERM");
    assert!(status.success(), "{status:?}");
    assert!(grw.logs().contains("stopping"));
}
