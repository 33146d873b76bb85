//! CEL `match=` end to end, against the fake API server: on the native
//! lists, their event streams and the Kubernetes routes, combined with the
//! other conditions, and every bad expression's message.

use std::time::Duration;

use grw_e2e::daemon::{Grw, keys};
use grw_e2e::fake_api::{FakeApiOptions, FakeApiServer};
use grw_e2e::kubectl::{Kubectl, PREFIX};
use serde_json::{Value, json};

const TOKEN: &str = "c3l";
const CHANGE: Duration = Duration::from_secs(10);

/// A Pod; its address is in 10.1.0.0/16 in `shop`, 10.2.0.0/16 elsewhere.
fn pod(ns: &str, name: &str, app: &str, restarts: i64) -> Value {
    let ip = format!("10.{}.0.{restarts}", if ns == "shop" { 1 } else { 2 });
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"namespace": ns, "name": name, "labels": {"app": app}},
        "spec": {"containers": [{"name": "main", "image": format!("{app}:1.{restarts}.0")}]},
        "status": {"phase": "Running", "podIP": ip,
                   "containerStatuses": [{"name": "main", "restartCount": restarts, "ready": true}]}})
}

/// Pods of two namespaces, some restarting often.
async fn cluster() -> FakeApiServer {
    let fake = FakeApiServer::start(FakeApiOptions {
        token: Some(TOKEN.into()),
        ..FakeApiOptions::default()
    })
    .await;
    for (ns, name, app, restarts) in [
        ("shop", "web-1", "web", 0),
        ("shop", "web-2", "web", 9),
        ("shop", "cart-1", "cart", 12),
        ("ads", "web-1", "web", 7),
        ("ads", "banner-1", "banner", 1),
    ] {
        fake.create(pod(ns, name, app, restarts)).unwrap();
    }
    fake
}

async fn grw(fake: &FakeApiServer) -> Grw {
    Grw::against(
        fake,
        TOKEN,
        json!({"initialWatchingResources": [{"version": "v1", "kind": "Pod"}]}),
    )
    .await
}

/// The query string `match=<expression>`, percent-encoded.
fn matching(expression: &str) -> String {
    let encoded: String = expression
        .bytes()
        .map(|b| match b {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect();
    format!("match={encoded}")
}

const RESTARTING: &str = "object.status.containerStatuses.exists(c, c.restartCount > 5)";

#[tokio::test]
async fn match_selects_what_the_expression_is_true_for_with_the_other_conditions() {
    let fake = cluster().await;
    let grw = grw(&fake).await;
    let (status, body) = grw
        .get(&format!("/api/v1/objects/pods?{}", matching(RESTARTING)))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(keys(&body), ["ads/web-1", "shop/cart-1", "shop/web-2"]);
    // With a namespace and a label selector, which narrow first, and pages.
    let (_, body) = grw
        .get(&format!(
            "/api/v1/namespaces/shop/objects/pods?labelSelector=app%3Dweb&{}",
            matching(RESTARTING)
        ))
        .await;
    assert_eq!(keys(&body), ["shop/web-2"]);
    let (_, first) = grw
        .get(&format!(
            "/api/v1/objects/pods?limit=2&{}",
            matching(RESTARTING)
        ))
        .await;
    assert_eq!(keys(&first), ["ads/web-1", "shop/cart-1"]);
    let token = first["metadata"]["continue"].as_str().expect("a next page");
    let (_, next) = grw
        .get(&format!(
            "/api/v1/objects/pods?limit=2&continue={token}&{}",
            matching(RESTARTING)
        ))
        .await;
    assert_eq!(keys(&next), ["shop/web-2"]);
    // A field read without `has()` fails on the Pods without it, which
    // then do not match; the others still do.
    fake.create(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"namespace": "shop", "name": "bare", "labels": {"app": "bare"}}}))
        .unwrap();
    let (status, body) = grw
        .get(&format!(
            "/api/v1/namespaces/shop/objects/pods?{}",
            matching("object.status.phase == 'Running'")
        ))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(keys(&body), ["shop/cart-1", "shop/web-1", "shop/web-2"]);
}

#[tokio::test]
async fn a_match_asked_again_answers_for_the_objects_as_they_are_now() {
    let fake = cluster().await;
    let grw = grw(&fake).await;
    let ask = || async {
        let (status, body) = grw
            .get(&format!("/api/v1/objects/pods?{}", matching(RESTARTING)))
            .await;
        assert_eq!(status, 200, "{body}");
        keys(&body)
    };
    assert_eq!(ask().await, ["ads/web-1", "shop/cart-1", "shop/web-2"]);
    // What it answered for each of the five Pods is kept...
    assert_eq!(grw.metric("grw_query_match_answers_kept").await, 5);
    assert_eq!(ask().await, ["ads/web-1", "shop/cart-1", "shop/web-2"]);
    assert_eq!(grw.metric("grw_query_match_answers_kept").await, 5);
    // ...and is not taken for their next versions: one Pod starts to
    // restart, another has its count back at 0.
    fake.update(pod("shop", "web-1", "web", 8)).unwrap();
    fake.update(pod("shop", "web-2", "web", 0)).unwrap();
    let want = ["ads/web-1", "shop/cart-1", "shop/web-1"];
    let deadline = tokio::time::Instant::now() + CHANGE;
    let mut got = ask().await;
    while got != want && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        got = ask().await;
    }
    assert_eq!(got, want);
    assert_eq!(grw.metric("grw_query_match_answers_kept").await, 7);
}

#[tokio::test]
async fn match_speaks_kubernetes_ip_cidr_semver_url_and_regex_libraries() {
    let fake = cluster().await;
    let grw = grw(&fake).await;
    for (expression, want) in [
        (
            "cidr('10.1.0.0/16').containsIP(object.status.podIP)",
            vec!["shop/cart-1", "shop/web-1", "shop/web-2"],
        ),
        (
            "ip(object.status.podIP).family() == 4 && cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16')",
            vec![
                "ads/banner-1",
                "ads/web-1",
                "shop/cart-1",
                "shop/web-1",
                "shop/web-2",
            ],
        ),
        (
            "object.spec.containers.exists(c, \
             semver(c.image.find('[0-9]+[.][0-9]+[.][0-9]+')).isGreaterThan(semver('1.8.0')))",
            vec!["shop/cart-1", "shop/web-2"],
        ),
        (
            "url('https://registry.example.com:5000/' + object.metadata.name).getPort() == '5000' \
             && object.metadata.name.findAll('[0-9]').size() == 1 && object.metadata.namespace == 'ads'",
            vec!["ads/banner-1", "ads/web-1"],
        ),
    ] {
        let (status, body) = grw
            .get(&format!("/api/v1/objects/pods?{}", matching(expression)))
            .await;
        assert_eq!(status, 200, "{expression}: {body}");
        assert_eq!(keys(&body), want, "{expression}");
    }
}

#[tokio::test]
async fn the_kubernetes_routes_and_event_streams_take_match() {
    let fake = cluster().await;
    let grw = grw(&fake).await;
    let (status, body) = grw
        .get(&format!(
            "/kube/api/v1/namespaces/shop/pods?{}",
            matching(RESTARTING)
        ))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["kind"], "PodList");
    assert_eq!(keys(&body), ["shop/cart-1", "shop/web-2"]);

    // kubectl passes it through `--raw` (a path from the server's root,
    // which its kubeconfig's path does not prefix), as any client can add
    // a parameter.
    let path = format!(
        "{PREFIX}/api/v1/pods?{}",
        matching("object.metadata.name.startsWith('banner')")
    );
    let out = Kubectl::for_grw(&grw).run(&["get", "--raw", &path]).await;
    let listed: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(keys(&listed), ["ads/banner-1"]);

    // Streams: only changes whose object matches.
    for path in [
        "/api/v1/namespaces/shop/objects/pods?watch=true",
        "/kube/api/v1/namespaces/shop/pods?watch=true",
    ] {
        let (_, now) = grw
            .get(&format!(
                "/api/v1/namespaces/shop/objects/pods?{}",
                matching(RESTARTING)
            ))
            .await;
        let expected: Vec<String> = keys(&now).iter().map(|k| k[5..].to_string()).collect();
        let mut stream = grw
            .stream(&format!("{path}&{}", matching(RESTARTING)))
            .await;
        let mut first: Vec<String> = Vec::new();
        for _ in 0..expected.len() {
            let event = stream.next(CHANGE).await.expect("the initial ADDED");
            first.push(
                event["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            );
        }
        first.sort();
        assert_eq!(first, expected, "{path}");
        assert!(first.contains(&"cart-1".to_string()) && !first.contains(&"web-1".to_string()));
        let name = format!("crashing-{}", path.len());
        fake.create(pod("shop", "calm", "calm", 0)).ok();
        fake.create(pod("shop", &name, "crash", 30)).unwrap();
        let next = stream.next(CHANGE).await.expect("the crashing Pod");
        assert_eq!(next["object"]["metadata"]["name"], name.as_str(), "{path}");
    }
}

#[tokio::test]
async fn bad_expressions_say_what_and_where() {
    let fake = cluster().await;
    let grw = grw(&fake).await;
    for (expression, message) in [
        (
            "objet.status.phase == 'Running'",
            "query parameter `match`: undeclared reference to 'objet' (line 1, column 1)",
        ),
        (
            "object.metadata.name.lowerAscci() == 'a'",
            "query parameter `match`: undeclared reference to 'lowerAscci' (line 1, column 22)",
        ),
        (
            "oldObject == null",
            "query parameter `match`: undeclared reference to 'oldObject' (line 1, column 1)",
        ),
        ("", "query parameter `match`: must not be empty"),
        (
            "object.metadata.name.matches('web-(')",
            "query parameter `match`: 'web-(' is not a valid regex: unclosed group (line 1, column 30)",
        ),
        (
            "cidr('10.0.0.0/8').containsIp(object.status.podIP)",
            "query parameter `match`: undeclared reference to 'containsIp' (line 1, column 20)",
        ),
        (
            "object.spec.containers.all(a, object.spec.containers.all(b, object.spec.containers.all(c, a == c)))",
            "query parameter `match`: the expression's estimated cost is ",
        ),
    ] {
        for path in [
            "/api/v1/objects/pods",
            "/api/v1/objects/pods?watch=true",
            "/kube/api/v1/pods",
        ] {
            let separator = if path.contains('?') { '&' } else { '?' };
            let (status, body) = grw
                .get(&format!("{path}{separator}{}", matching(expression)))
                .await;
            assert_eq!(status, 400, "{path} {expression}: {body}");
            let said = body["message"].as_str().unwrap_or_default();
            assert!(said.starts_with(message), "{path}: {said}");
        }
    }
    let (_, body) = grw
        .get(&format!(
            "/api/v1/objects/pods?{}",
            matching("object.metadata.name ==")
        ))
        .await;
    let said = body["message"].as_str().unwrap();
    assert!(
        said.starts_with("query parameter `match`: Syntax error: ")
            && said.ends_with("(line 1, column 24)"),
        "{said}"
    );
}

#[tokio::test]
async fn an_expression_that_spends_its_cost_limit_is_refused_and_holds_no_one() {
    let fake = cluster().await;
    let items: Vec<i64> = (0..3000).collect();
    fake.create(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"namespace": "shop", "name": "big"},
        "data": {"list": "x"}, "binaryData": {}, "items": items}))
        .unwrap();
    let grw = Grw::against(
        &fake,
        TOKEN,
        json!({"initialWatchingResources": [{"version": "v1", "kind": "ConfigMap"}]}),
    )
    .await;
    let costly = "object.items.all(a, object.items.exists(b, b == a + 1) || a == 2999)";
    let started = std::time::Instant::now();
    let (status, body) = grw
        .get(&format!("/api/v1/objects/configmaps?{}", matching(costly)))
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        body["message"],
        "query parameter `match`: evaluating it on shop/big cost more than the limit of 1000000; iterate over fewer or smaller lists (`all`, `exists`, `map`, `filter`), or nest them less"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let (status, body) = grw
        .get(&format!("/kube/api/v1/configmaps?{}", matching(costly)))
        .await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (400, Some("BadRequest")),
        "{body}"
    );
    // Once over the list is within the limit.
    let (status, body) = grw
        .get(&format!(
            "/api/v1/objects/configmaps?{}",
            matching("object.items.all(a, a >= 0)")
        ))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(keys(&body), ["shop/big"]);
}
