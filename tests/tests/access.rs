//! Who may read what: a real `grw` whose listeners check every caller with
//! the (fake) API server, as `delegated` access does, and its TLS listener.
//!
//! The fake API server answers TokenReviews and SubjectAccessReviews from
//! the RBAC the test grants: `jane` has a Role in namespace `a` (get, list,
//! watch pods), `admin` may do anything, and every authenticated user has
//! `system:discovery`, as in a real cluster.

use std::path::Path;
use std::time::Duration;

use grw_e2e::daemon::{EventStream, Grw, edge_line, eventually, run_to_exit};
use grw_e2e::fake_api::{FakeApiOptions, FakeApiServer, Rule, Subject};
use grw_e2e::kubectl::Kubectl;
use grw_e2e::tls::certificates;
use serde_json::{Value, json};

/// GRW's own token at the fake API server.
const GRW_TOKEN: &str = "grw-service-account";
const JANE: &str = "jane-token";
const ADMIN: &str = "admin-token";

fn pod(namespace: &str, name: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"name": "main", "image": "busybox"}]},
    })
}

/// The body of a real API server's answer in `tests/data/kube-api`.
fn recorded(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("data/kube-api/{name}.json"));
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// The API server's 403 `Status` with `message` and `details`.
fn forbidden(message: &str, details: Value) -> Value {
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": "Forbidden",
        "details": details,
        "code": 403,
    })
}

struct Cluster {
    fake: FakeApiServer,
    grw: Grw,
    http: reqwest::Client,
}

impl Cluster {
    /// The fake API server with pods `web-a` in `a` and `web-b` in `b`,
    /// `jane` and `admin`, and a `grw` watching pods whose API listener is
    /// `delegated`, with `extra` config keys.
    async fn start(extra: Value) -> Cluster {
        let fake = FakeApiServer::start(FakeApiOptions {
            token: Some(GRW_TOKEN.into()),
            ..FakeApiOptions::default()
        })
        .await;
        for namespace in ["a", "b"] {
            fake.create(
                json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}),
            )
            .unwrap();
            fake.create(pod(namespace, &format!("web-{namespace}")))
                .unwrap();
        }
        fake.add_token(JANE, "jane", &["developers"]);
        fake.add_token(ADMIN, "admin", &["admins"]);
        fake.grant(
            Subject::User("jane".into()),
            Rule::namespaced("a", &["get", "list", "watch"], "", &["pods"]),
        );
        fake.grant(
            Subject::Group("admins".into()),
            Rule::cluster(&["*"], "*", &["*"]),
        );
        fake.grant(
            Subject::Group("admins".into()),
            Rule::paths(&["get"], &["/metrics"]),
        );

        let dir = tempfile::tempdir().unwrap();
        let token_file = dir.path().join("token");
        std::fs::write(&token_file, GRW_TOKEN).unwrap();
        let mut config = json!({
            "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": fake.url(), "tokenFilePath": token_file},
            "initialWatchingResources": [{"group": "core", "version": "v1", "kind": "Pod"}],
            "builtinAnalyzers": false,
            "apiGroupsSyncIntervalSecond": 3600,
            "apiAuth": "delegated",
        });
        for (k, v) in extra.as_object().into_iter().flatten() {
            config[k] = v.clone();
        }
        let grw = Grw::start_in(dir, config, &[]).await;
        grw.wait_ready(Duration::from_secs(30)).await;
        Cluster {
            fake,
            grw,
            http: reqwest::Client::new(),
        }
    }

    async fn send(
        &self,
        method: reqwest::Method,
        token: Option<&str>,
        path: &str,
    ) -> (u16, reqwest::header::HeaderMap, Value) {
        let mut request = self.http.request(method, format!("{}{path}", self.grw.url));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        let headers = response.headers().clone();
        let body = response.bytes().await.expect("body");
        (
            status,
            headers,
            serde_json::from_slice(&body).unwrap_or(Value::Null),
        )
    }

    /// Opens a stream as the caller of `token`: its status, and the body
    /// of a refusal (an open stream is closed unread).
    async fn open(&self, token: Option<&str>, path: &str) -> (u16, Value) {
        let mut request = self.http.get(format!("{}{path}", self.grw.url));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.expect("request");
        let status = response.status().as_u16();
        if status == 200 {
            return (status, Value::Null);
        }
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// GET as the caller of `token`: status and body.
    async fn get(&self, token: Option<&str>, path: &str) -> (u16, Value) {
        let (status, _, body) = self.send(reqwest::Method::GET, token, path).await;
        (status, body)
    }

    /// The SubjectAccessReviews the fake API server received for `user`.
    fn reviews_of(&self, user: &str) -> Vec<Value> {
        self.fake
            .access_reviews()
            .into_iter()
            .filter(|spec| spec["user"] == user)
            .collect()
    }
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {list}"))
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_role_in_one_namespace_reads_that_namespace_only() {
    let cluster = Cluster::start(json!({})).await;

    let (status, body) = cluster
        .get(Some(JANE), "/api/v1/namespaces/a/objects/pods")
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(names(&body), ["web-a"]);
    let (status, body) = cluster
        .get(Some(JANE), "/api/v1/namespaces/a/objects/Pod/web-a")
        .await;
    assert_eq!((status, &body["metadata"]["name"]), (200, &json!("web-a")));

    // The cluster: the API server's answer, word for word (the recorded
    // one is of a user named `acceptance-limited`).
    let (status, headers, body) = cluster
        .send(reqwest::Method::GET, Some(JANE), "/api/v1/objects/pods")
        .await;
    assert_eq!(status, 403);
    let mut want = recorded("status-403");
    want["message"] = want["message"]
        .as_str()
        .unwrap()
        .replace("acceptance-limited", "jane")
        .into();
    assert_eq!(body, want);
    assert_eq!(headers["content-type"], "application/json");
    assert_eq!(headers["x-content-type-options"], "nosniff");

    // Another namespace, and one object there.
    let (status, body) = cluster
        .get(Some(JANE), "/api/v1/namespaces/b/objects/pods")
        .await;
    assert_eq!(status, 403);
    assert_eq!(
        body,
        forbidden(
            r#"pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "b""#,
            json!({"kind": "pods"})
        )
    );
    let (status, body) = cluster
        .get(Some(JANE), "/api/v1/namespaces/b/objects/pods/web-b")
        .await;
    assert_eq!(status, 403);
    assert_eq!(
        body,
        forbidden(
            r#"pods "web-b" is forbidden: User "jane" cannot get resource "pods" in API group "" in the namespace "b""#,
            json!({"name": "web-b", "kind": "pods"})
        )
    );

    // A kind discovery does not know is authorized as named: 403 before 404.
    let (status, body) = cluster
        .get(Some(JANE), "/api/v1/objects/widgets.example.com")
        .await;
    assert_eq!(status, 403);
    assert_eq!(
        body["message"],
        r#"widgets.example.com is forbidden: User "jane" cannot list resource "widgets" in API group "example.com" at the cluster scope"#
    );
    let (status, _) = cluster
        .get(Some(ADMIN), "/api/v1/objects/widgets.example.com")
        .await;
    assert_eq!(status, 404);

    // The Kubernetes API below its prefix: the same decisions, and the
    // review names what the API server would name.
    let (status, body) = cluster.get(Some(JANE), "/kube/api/v1/pods").await;
    assert_eq!(status, 403);
    assert_eq!(
        body["message"],
        r#"pods is forbidden: User "jane" cannot list resource "pods" in API group "" at the cluster scope"#
    );
    let (status, body) = cluster
        .get(Some(JANE), "/kube/api/v1/namespaces/b/pods/web-b")
        .await;
    assert_eq!(status, 403);
    assert_eq!(body["details"], json!({"name": "web-b", "kind": "pods"}));
    let (status, body) = cluster
        .get(Some(JANE), "/kube/api/v1/namespaces/a/pods")
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(names(&body), ["web-a"]);
    let (status, body) = cluster.get(Some(JANE), "/kube/apis/apps/v1").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["groupVersion"], "apps/v1", "{body}");
    let reviews = cluster.reviews_of("jane");
    let review_of = |attributes: &str, value: Value| {
        assert!(
            reviews.iter().any(|spec| spec[attributes] == value),
            "no review of {value} in {reviews:#?}"
        );
    };
    review_of(
        "resourceAttributes",
        json!({"verb": "list", "version": "v1", "resource": "pods", "namespace": "a"}),
    );
    review_of(
        "nonResourceAttributes",
        json!({"verb": "get", "path": "/apis/apps/v1"}),
    );
    // Who asks is who the TokenReview said, groups and uid included.
    assert_eq!(reviews[0]["uid"], "uid-jane");
    assert_eq!(
        reviews[0]["groups"],
        json!(["developers", "system:authenticated"])
    );

    // Refusals are logged: who, what, and the authorizer's reason.
    let refusals = cluster.grw.log_events("request refused: not allowed");
    assert!(
        refusals.iter().any(|e| e["user"] == "jane"
            && e["namespace"] == "b"
            && e["name"] == "web-b"
            && e["verb"] == "get"),
        "{refusals:#?}"
    );
}

#[tokio::test]
async fn without_the_discovery_binding_discovery_is_refused_as_the_api_server_refuses_it() {
    let cluster = Cluster::start(json!({})).await;
    // As in every cluster, an authenticated user may discover.
    assert_eq!(cluster.get(Some(JANE), "/kube/api").await.0, 200);
    cluster.fake.unbind_discovery();
    for (path, asked) in [
        ("/kube/apis", "/apis"),
        ("/kube/api/v1", "/api/v1"),
        ("/kube/apis/apps/v1", "/apis/apps/v1"),
    ] {
        let (status, body) = cluster.get(Some(JANE), path).await;
        assert_eq!(status, 403, "{path}: {body}");
        assert_eq!(body["kind"], "Status", "{path}");
        assert_eq!(body["reason"], "Forbidden", "{path}");
        assert_eq!(
            body["message"],
            format!(r#"forbidden: User "jane" cannot get path "{asked}""#),
            "{path}"
        );
    }
    // What RBAC grants by resource is still read; discovery, granted by
    // a rule of its own, is again.
    let (status, pods) = cluster
        .get(Some(JANE), "/kube/api/v1/namespaces/a/pods")
        .await;
    assert_eq!(status, 200, "{pods}");
    cluster.fake.grant(
        Subject::Group("developers".into()),
        Rule::paths(&["get"], &["/apis", "/apis/*"]),
    );
    assert_eq!(cluster.get(Some(JANE), "/kube/apis/batch/v1").await.0, 200);
}

/// What `kubectl` prints of a `Status` the server refused a request with.
fn kubectl_forbidden(message: &str) -> String {
    format!("Error from server (Forbidden): {message}")
}

#[tokio::test]
async fn kubectl_with_a_user_token_reads_what_its_role_allows() {
    // Decisions kept 1 s, so that a revocation shows soon; kubectl sends
    // its token only over TLS, so it reads from the TLS listener.
    let files = tempfile::tempdir().unwrap();
    let (ca, cert, key) = certificates("a CA");
    let (cert_file, key_file) = (files.path().join("tls.crt"), files.path().join("tls.key"));
    std::fs::write(&cert_file, &cert).unwrap();
    std::fs::write(&key_file, &key).unwrap();
    let port = free_port();
    let cluster = Cluster::start(json!({
        "delegatedAuth": {"cacheAllowedSeconds": 1, "cacheDeniedSeconds": 1},
        "tlsListener": {"address": "127.0.0.1", "port": port, "certFile": cert_file, "keyFile": key_file},
    }))
    .await;
    let server = format!("https://localhost:{port}/kube");
    let jane = Kubectl::new(&server, Some(JANE), Some(&ca));

    // Its namespace: discovery first (paths every authenticated user may
    // get), then the list.
    let listed = jane.run(&["get", "pods", "-n", "a", "-o", "name"]).await;
    assert_eq!(listed.trim(), "pod/web-a");
    let reviews = cluster.reviews_of("jane");
    for path in ["/api", "/apis"] {
        assert!(
            reviews
                .iter()
                .any(|spec| spec["nonResourceAttributes"] == json!({"verb": "get", "path": path})),
            "no review of {path} in {reviews:#?}"
        );
    }
    let one = jane
        .run(&[
            "get",
            "pod",
            "web-a",
            "-n",
            "a",
            "-o",
            "jsonpath={.metadata.name}",
        ])
        .await;
    assert_eq!(one, "web-a");

    // Another namespace, every namespace: the API server's refusal.
    let refused = jane.fail(&["get", "pods", "-n", "b"]).await;
    assert!(
        refused.contains(&kubectl_forbidden(
            r#"pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "b""#
        )),
        "{refused}"
    );
    let refused = jane.fail(&["get", "pods", "-A"]).await;
    assert!(
        refused.contains(&kubectl_forbidden(
            r#"pods is forbidden: User "jane" cannot list resource "pods" in API group "" at the cluster scope"#
        )),
        "{refused}"
    );
    let refused = jane.fail(&["get", "pod", "web-b", "-n", "b"]).await;
    assert!(
        refused.contains(&kubectl_forbidden(
            r#"pods "web-b" is forbidden: User "jane" cannot get resource "pods" in API group "" in the namespace "b""#
        )),
        "{refused}"
    );

    // The native API and the event stream ask the same question, so they
    // share the decision kubectl's list got.
    let native = "/api/v1/namespaces/a/objects/pods";
    let (status, body) = cluster.get(Some(JANE), native).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(names(&body), ["web-a"]);
    let stream = format!("{native}?watch=true");
    let response = cluster
        .http
        .get(format!("{}{stream}", cluster.grw.url))
        .bearer_auth(JANE)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    drop(response);
    let (status, _) = cluster
        .get(Some(JANE), "/api/v1/namespaces/b/objects/pods")
        .await;
    assert_eq!(status, 403);
    let lists_in_a: std::collections::BTreeSet<String> = cluster
        .reviews_of("jane")
        .iter()
        .map(|spec| &spec["resourceAttributes"])
        .filter(|r| r["verb"] == "list" && r["namespace"] == "a")
        .map(Value::to_string)
        .collect();
    assert_eq!(
        lists_in_a.into_iter().collect::<Vec<_>>(),
        [
            json!({"verb": "list", "version": "v1", "resource": "pods", "namespace": "a"})
                .to_string()
        ]
    );

    // Revoked: within the cache period, kubectl, the native API and the
    // event stream are all refused.
    cluster.fake.revoke(&Subject::User("jane".into()));
    let started = std::time::Instant::now();
    let refused = eventually(Duration::from_secs(10), || async {
        let output = jane
            .command(&["get", "pods", "-n", "a"])
            .output()
            .await
            .unwrap();
        !output.status.success()
    })
    .await;
    assert!(
        refused,
        "kubectl still reads namespace a 10 s after the revocation"
    );
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
    let refused = jane.fail(&["get", "pods", "-n", "a"]).await;
    assert!(
        refused.contains(&kubectl_forbidden(
            r#"pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "a""#
        )),
        "{refused}"
    );
    assert_eq!(cluster.get(Some(JANE), native).await.0, 403);
    // The stream's own decision (`watch`) was made later, and expires later.
    let refused = eventually(Duration::from_secs(5), || async {
        cluster.open(Some(JANE), &stream).await.0 == 403
    })
    .await;
    assert!(refused, "the event stream still opens after the revocation");
    let (_, body) = cluster.open(Some(JANE), &stream).await;
    assert_eq!(
        body["message"],
        r#"pods is forbidden: User "jane" cannot watch resource "pods" in API group "" in the namespace "a""#
    );
    // Discovery needs only the token, which is still valid.
    let (status, _) = cluster.get(Some(JANE), "/kube/api").await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn the_kubernetes_api_without_a_token_is_401_and_unknown_paths_404() {
    let cluster = Cluster::start(json!({})).await;
    let anonymous = Kubectl::for_grw(&cluster.grw);
    let refused = anonymous.fail(&["get", "pods", "-n", "a"]).await;
    assert!(
        refused.contains("Unauthorized") || refused.contains("provide credentials"),
        "{refused}"
    );
    for path in [
        "/kube/api",
        "/kube/version",
        "/kube/api/v1/namespaces/a/pods",
        "/kube/openapi/v2",
    ] {
        let (status, headers, body) = cluster.send(reqwest::Method::GET, None, path).await;
        assert_eq!(status, 401, "{path}");
        assert_eq!(headers["content-type"], "application/json", "{path}");
        assert_eq!(body, recorded("status-401"), "{path}");
    }
    // Known: discovery, the version and the OpenAPI documents are open to
    // every authenticated user, and a path the API does not serve is its
    // own 404.
    for path in [
        "/kube/api",
        "/kube/apis",
        "/kube/api/v1",
        "/kube/version",
        "/kube/openapi/v2",
    ] {
        assert_eq!(cluster.get(Some(JANE), path).await.0, 200, "{path}");
    }
    let response = cluster
        .http
        .get(format!("{}/kube/logs", cluster.grw.url))
        .bearer_auth(JANE)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 404);
    assert_eq!(response.text().await.unwrap(), "404 page not found\n");
    // Writes are refused by RBAC before GRW says it serves none.
    let (status, _, body) = cluster
        .send(
            reqwest::Method::POST,
            Some(JANE),
            "/kube/api/v1/namespaces/a/pods",
        )
        .await;
    assert_eq!(status, 403);
    assert_eq!(
        body["message"],
        r#"pods is forbidden: User "jane" cannot create resource "pods" in API group "" in the namespace "a""#
    );
    let (status, _, _) = cluster
        .send(
            reqwest::Method::POST,
            Some(ADMIN),
            "/kube/api/v1/namespaces/a/pods",
        )
        .await;
    assert_eq!(status, 405);
}

#[tokio::test]
async fn watches_are_authorized_when_they_open() {
    // Decisions kept 1 s, so that a revocation shows soon.
    let cluster = Cluster::start(
        json!({"delegatedAuth": {"cacheAllowedSeconds": 1, "cacheDeniedSeconds": 1}}),
    )
    .await;
    let (status, body) = cluster
        .get(Some(JANE), "/api/v1/objects/pods?watch=true")
        .await;
    assert_eq!(status, 403);
    assert_eq!(
        body["message"],
        r#"pods is forbidden: User "jane" cannot watch resource "pods" in API group "" at the cluster scope"#
    );
    let (status, body) = cluster
        .get(Some(JANE), "/kube/api/v1/watch/namespaces/b/pods")
        .await;
    assert_eq!(status, 403);
    assert_eq!(
        body["message"],
        r#"pods is forbidden: User "jane" cannot watch resource "pods" in API group "" in the namespace "b""#
    );

    let response = cluster
        .http
        .get(format!(
            "{}/api/v1/namespaces/a/objects/pods?watch=true",
            cluster.grw.url
        ))
        .bearer_auth(JANE)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let mut stream = EventStream::new(response);
    let first = stream.next(Duration::from_secs(10)).await.unwrap();
    assert_eq!(first["object"]["metadata"]["name"], "web-a");

    // A stream once open goes on after the permission is revoked; a new
    // one is refused once the decision expired.
    cluster.fake.revoke(&Subject::User("jane".into()));
    cluster.fake.create(pod("a", "web-a2")).unwrap();
    let next = stream.next(Duration::from_secs(10)).await.unwrap();
    assert_eq!(next["object"]["metadata"]["name"], "web-a2");
    let refused = eventually(Duration::from_secs(10), || async {
        cluster
            .open(Some(JANE), "/api/v1/namespaces/a/objects/pods?watch=true")
            .await
            .0
            == 403
    })
    .await;
    assert!(refused, "a new watch is still allowed after the revocation");
}

#[tokio::test]
async fn grw_s_own_routes_are_resources_of_grw_io_and_metrics_a_path() {
    let cluster = Cluster::start(json!({})).await;
    // Every authenticated user may get `/api/*` (system:discovery): GRW's
    // routes there must be refused all the same.
    let cases = [
        (
            "/api/v1/plugins",
            r#"plugins.grw.io is forbidden: User "jane" cannot list resource "plugins" in API group "grw.io" at the cluster scope"#,
        ),
        (
            "/api/v1/kinds",
            r#"kinds.grw.io is forbidden: User "jane" cannot list resource "kinds" in API group "grw.io" at the cluster scope"#,
        ),
        (
            "/api/v1/subscriptions/s1",
            r#"subscriptions.grw.io "s1" is forbidden: User "jane" cannot get resource "subscriptions" in API group "grw.io" at the cluster scope"#,
        ),
        (
            "/api/v1/relations?namespace=a",
            r#"relations.relations.grw.io is forbidden: User "jane" cannot list resource "relations" in API group "relations.grw.io" in the namespace "a""#,
        ),
        (
            "/resources/apiGroups",
            r#"compat.grw.io is forbidden: User "jane" cannot get resource "compat" in API group "grw.io" at the cluster scope"#,
        ),
        (
            "/metrics",
            r#"forbidden: User "jane" cannot get path "/metrics""#,
        ),
    ];
    for (path, message) in cases {
        let (status, body) = cluster.get(Some(JANE), path).await;
        assert_eq!(status, 403, "{path}: {body}");
        assert_eq!(body["message"], message, "{path}");
    }
    let (_, body) = cluster.get(Some(JANE), "/metrics").await;
    assert_eq!(body["details"], json!({}));
    let (status, _, body) = cluster
        .send(reqwest::Method::POST, Some(JANE), "/api/v1/subscriptions")
        .await;
    assert_eq!(status, 403);
    assert_eq!(
        body["message"],
        r#"subscriptions.grw.io is forbidden: User "jane" cannot create resource "subscriptions" in API group "grw.io" at the cluster scope"#
    );

    // Whoever may, reads them.
    for path in [
        "/api/v1/plugins",
        "/api/v1/kinds",
        "/api/v1/relations",
        "/resources/apiGroups",
    ] {
        let (status, body) = cluster.get(Some(ADMIN), path).await;
        assert_eq!(status, 200, "{path}: {body}");
    }
    // A route nobody serves is 404 for whoever is authenticated, 401 for others.
    assert_eq!(cluster.get(Some(JANE), "/api/v1/nothing").await.0, 404);
    assert_eq!(cluster.get(None, "/api/v1/nothing").await.0, 401);
    // Probes are open.
    for path in ["/healthz", "/readyz"] {
        let (status, headers, _) = cluster.send(reqwest::Method::GET, None, path).await;
        assert_eq!(status, 200, "{path}");
        assert!(!headers.contains_key("www-authenticate"));
    }

    let response = cluster
        .http
        .get(format!("{}/metrics", cluster.grw.url))
        .bearer_auth(ADMIN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let metrics = response.text().await.unwrap();
    for line in [
        r#"grw_access_refused_requests_total{code="403"} 8"#,
        r#"grw_access_refused_requests_total{code="401"} 1"#,
        r#"grw_access_reviews_total{review="TokenReview",result="authenticated"} 2"#,
        // Seven refused requests, two of which (`subscriptions/s1`,
        // relations in `a`) were first asked more widely, and denied.
        r#"grw_access_reviews_total{review="SubjectAccessReview",result="denied"} 9"#,
    ] {
        assert!(metrics.contains(line), "no `{line}` in:\n{metrics}");
    }
    assert!(
        metrics.contains(r#"grw_access_cache_hits_total{review="TokenReview"}"#),
        "{metrics}"
    );
}

/// A native route asked with a method it does not serve is checked with
/// that method's verb first, as the API server answers 403 before 405.
#[tokio::test]
async fn a_method_a_route_does_not_serve_is_checked_then_405() {
    let cluster = Cluster::start(json!({})).await;
    let path = "/api/v1/namespaces/a/objects/pods/web-a";
    let (status, _, body) = cluster
        .send(reqwest::Method::DELETE, Some(JANE), path)
        .await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains(
            r#"User "jane" cannot delete resource "pods" in API group "" in the namespace "a""#
        ),
        "{body}"
    );
    let (status, _, body) = cluster.send(reqwest::Method::DELETE, None, path).await;
    assert_eq!(status, 401, "{body}");
    let (status, _, body) = cluster
        .send(reqwest::Method::DELETE, Some(ADMIN), path)
        .await;
    assert_eq!(status, 405, "{body}");
    assert_eq!(body["reason"], "MethodNotAllowed", "{body}");
}

#[tokio::test]
async fn no_token_or_a_bad_one_is_401() {
    let cluster = Cluster::start(json!({})).await;
    for authorization in [
        None,
        Some("Bearer not-a-token"),
        Some("Basic amFuZTpwdw=="),
        Some("Bearer "),
    ] {
        let mut request = cluster.http.get(format!(
            "{}/api/v1/namespaces/a/objects/pods",
            cluster.grw.url
        ));
        if let Some(value) = authorization {
            request = request.header("authorization", value);
        }
        let response = request.send().await.unwrap();
        assert_eq!(response.status(), 401, "{authorization:?}");
        assert_eq!(response.headers()["content-type"], "application/json");
        assert_eq!(response.headers()["cache-control"], "no-cache, private");
        let body: Value = response.json().await.unwrap();
        assert_eq!(body, recorded("status-401"), "{authorization:?}");
    }
    // One review for the bad token; the next tries are answered from the cache.
    assert_eq!(cluster.fake.token_reviews(), [None]);
    assert_eq!(
        cluster.get(Some("not-a-token"), "/api/v1/kinds").await.0,
        401
    );
    assert_eq!(cluster.fake.token_reviews(), [None]);
    // The scheme is read in any case, as by the API server.
    let response = cluster
        .http
        .get(format!(
            "{}/api/v1/namespaces/a/objects/pods",
            cluster.grw.url
        ))
        .header("authorization", format!("bearer {JANE}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    // Tokens are never logged.
    assert!(!cluster.grw.logs().contains(JANE));
    assert!(!cluster.grw.logs().contains("not-a-token"));
}

#[tokio::test]
async fn a_revoked_permission_stops_within_cache_allowed_seconds() {
    let cluster = Cluster::start(json!({"delegatedAuth": {"cacheAllowedSeconds": 1}})).await;
    let path = "/api/v1/namespaces/a/objects/pods";
    assert_eq!(cluster.get(Some(JANE), path).await.0, 200);
    cluster.fake.revoke(&Subject::User("jane".into()));
    let started = std::time::Instant::now();
    let refused = eventually(Duration::from_secs(10), || async {
        cluster.get(Some(JANE), path).await.0 == 403
    })
    .await;
    assert!(refused, "still allowed 10 s after the revocation");
    // Within the period and a little more: the decision is asked again
    // once it expired, not later.
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let (_, body) = cluster.get(Some(JANE), path).await;
    assert_eq!(
        body["message"],
        r#"pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "a""#
    );
}

#[tokio::test]
async fn a_role_naming_objects_allows_those_objects_only() {
    let cluster = Cluster::start(json!({})).await;
    cluster.fake.add_token("ann-token", "ann", &[]);
    cluster.fake.grant(
        Subject::User("ann".into()),
        Rule {
            resource_names: vec!["web-a".into()],
            ..Rule::namespaced("a", &["get"], "", &["pods"])
        },
    );
    let path = |name: &str| format!("/api/v1/namespaces/a/objects/pods/{name}");
    // Asked more widely first (everywhere, all of `a`: no), then exactly.
    assert_eq!(cluster.get(Some("ann-token"), &path("web-a")).await.0, 200);
    let (status, body) = cluster.get(Some("ann-token"), &path("web-b")).await;
    assert_eq!(status, 403);
    assert_eq!(
        body["message"],
        r#"pods "web-b" is forbidden: User "ann" cannot get resource "pods" in API group "" in the namespace "a""#
    );
    assert_eq!(
        cluster
            .get(Some("ann-token"), "/api/v1/namespaces/a/objects/pods")
            .await
            .0,
        403
    );
}

/// A caller that may read a kind everywhere but in namespace `b`, which a
/// webhook authorizer in front of RBAC denies it: only asking exactly
/// (`widen: false`) honours the denial.
#[tokio::test]
async fn widening_is_an_option_that_a_denying_webhook_needs_off() {
    for widen in [true, false] {
        let cluster = Cluster::start(json!({"delegatedAuth": {"widen": widen}})).await;
        cluster.fake.add_token("ann-token", "ann", &[]);
        let ann = Subject::User("ann".into());
        cluster
            .fake
            .grant(ann.clone(), Rule::cluster(&["get", "list"], "", &["pods"]));
        cluster
            .fake
            .deny(ann, Rule::namespaced("b", &["*"], "*", &["*"]));
        let get = |path: &'static str| cluster.get(Some("ann-token"), path);

        assert_eq!(get("/api/v1/namespaces/a/objects/pods").await.0, 200);
        let (status, body) = get("/api/v1/namespaces/b/objects/pods/web-b").await;
        let list_b = get("/kube/api/v1/namespaces/b/pods").await.0;
        let questions: Vec<String> = cluster
            .reviews_of("ann")
            .iter()
            .map(|spec| {
                let r = &spec["resourceAttributes"];
                let s = |key: &str| r[key].as_str().unwrap_or_default();
                format!("{} {}/{}", s("verb"), s("namespace"), s("name"))
            })
            .collect();
        if widen {
            // RBAC's shortcut: the cluster-wide allow answers for `b` too.
            assert_eq!((status, list_b), (200, 200), "{body}");
            assert_eq!(questions, ["list /", "get /"]);
        } else {
            assert_eq!((status, list_b), (403, 403));
            assert_eq!(
                body["message"],
                r#"pods "web-b" is forbidden: User "ann" cannot get resource "pods" in API group "" in the namespace "b": denied by the fake API server's webhook"#
            );
            // Each request asked exactly as written, nothing wider.
            assert_eq!(questions, ["list a/", "get b/web-b", "list b/"]);
        }
    }
}

/// A cluster where `jane` may list `widgets.example.com` in `a`.
async fn jane_may_list_widgets_in_a() -> Cluster {
    let cluster = Cluster::start(json!({})).await;
    cluster.fake.grant(
        Subject::User("jane".into()),
        Rule::namespaced("a", &["list"], "example.com", &["widgets"]),
    );
    cluster
}

/// A kind named as written (`Widget`), installed after discovery was last
/// read: the check reads discovery again, as the route does, and asks
/// about the resource it is (`widgets.example.com`), which the Role names.
#[tokio::test]
async fn a_kind_installed_since_discovery_is_checked_as_the_resource_it_is() {
    let cluster = jane_may_list_widgets_in_a().await;
    // Without a watch of CRDs to notice the new one (their reads refused
    // from now on), only the read on a miss does; and that at most every
    // 5 s after the last one, which the watch's end makes within a second.
    cluster
        .fake
        .fail_requests("customresourcedefinitions", 403, usize::MAX);
    cluster.fake.drop_watches();
    tokio::time::sleep(Duration::from_secs(7)).await;
    cluster
        .fake
        .add_crd("example.com", "v1", "Widget", "widgets", true);
    let (status, body) = cluster
        .get(Some(JANE), "/api/v1/namespaces/a/objects/Widget")
        .await;
    assert_eq!(status, 200, "{body}");
    let asked: Vec<String> = cluster
        .reviews_of("jane")
        .iter()
        .map(|spec| spec["resourceAttributes"]["resource"].to_string())
        .collect();
    assert_eq!(
        asked,
        [r#""widgets""#, r#""widgets""#],
        "cluster-wide, then in `a`"
    );
}

/// The resource the check asked about is the one the route serves, even
/// when discovery changes while the review is under way: a second group
/// gets a `Widget` kind meanwhile, which makes the name ambiguous to a
/// route resolving it again (400) instead of serving what was allowed.
#[tokio::test]
async fn the_resource_checked_is_the_resource_served() {
    let cluster = jane_may_list_widgets_in_a().await;
    cluster
        .fake
        .add_crd("example.com", "v1", "Widget", "widgets", true);
    // The admin's question for the second group's discovery document is
    // answered (and kept 10 s) before reviews slow down, so that it shows
    // at once when GRW's discovery has the group; jane's token is known.
    let other = "/kube/apis/other.example.org/v1";
    assert_eq!(cluster.get(Some(ADMIN), other).await.0, 404);
    let widgets = "/kube/apis/example.com/v1";
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while cluster.get(Some(ADMIN), widgets).await.0 != 200 {
        assert!(tokio::time::Instant::now() < deadline, "no {widgets}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let pods = "/api/v1/namespaces/a/objects/pods";
    assert_eq!(cluster.get(Some(JANE), pods).await.0, 200);

    // Each of jane's two questions (cluster-wide, then in `a`) takes 2 s.
    cluster.fake.set_review_delay(Duration::from_secs(2));
    let jane = cluster.send(
        reqwest::Method::GET,
        Some(JANE),
        "/api/v1/namespaces/a/objects/Widget",
    );
    let meanwhile = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        cluster
            .fake
            .add_crd("other.example.org", "v1", "Widget", "widgets", true);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
        while cluster.get(Some(ADMIN), other).await.0 != 200 {
            assert!(
                tokio::time::Instant::now() < deadline,
                "GRW's discovery did not get {other} while jane's review was under way"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let ((status, headers, body), ()) = tokio::join!(jane, meanwhile);
    assert_eq!(status, 200, "{body}");
    assert_eq!(headers["grw-gvk"], "example.com/v1/Widget");
    // A request made now names two kinds.
    cluster.fake.set_review_delay(Duration::ZERO);
    let (status, body) = cluster
        .get(Some(ADMIN), "/api/v1/namespaces/a/objects/Widget")
        .await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(body["reason"], "AmbiguousKind", "{body}");
}

const JOE: &str = "joe-token";

/// A Gateway in `a` that `a/web` and `b/secret` attach to, and Pod
/// `a/placed` on Node `n1`; `jane` may list relations in `a`, `joe` in `a`
/// and `b`. Waits until the admin sees all five edges.
async fn gateway_across_namespaces() -> Cluster {
    let cluster =
        Cluster::start(json!({"builtinAnalyzers": ["istio-gateways", "references"]})).await;
    let fake = &cluster.fake;
    let istio = "networking.istio.io/v1beta1";
    fake.create(json!({"apiVersion": istio, "kind": "Gateway",
        "metadata": {"name": "gw", "namespace": "a"},
        "spec": {"servers": [{"hosts": ["*/*.example.com"], "port": {"number": 80, "name": "http", "protocol": "HTTP"}}]}}))
        .unwrap();
    for (namespace, name, gateway) in [("a", "web", "gw"), ("b", "secret", "a/gw")] {
        fake.create(json!({"apiVersion": istio, "kind": "VirtualService",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"gateways": [gateway], "hosts": [format!("{name}.example.com")]}}))
            .unwrap();
    }
    let mut placed = pod("a", "placed");
    placed["spec"]["nodeName"] = json!("n1");
    fake.create(placed).unwrap();
    let relations = |namespace: &str| {
        Rule::namespaced(namespace, &["list"], "relations.grw.io", &["relations"])
    };
    fake.grant(Subject::User("jane".into()), relations("a"));
    fake.add_token(JOE, "joe", &[]);
    for namespace in ["a", "b"] {
        fake.grant(Subject::User("joe".into()), relations(namespace));
    }
    let all_found = eventually(Duration::from_secs(60), || async {
        let (_, body) = cluster.get(Some(ADMIN), "/api/v1/relations").await;
        let found = match body["items"].is_array() {
            true => edge_lines(&body),
            false => Vec::new(),
        };
        let mut want = OWN.iter().chain(&ACROSS).chain([&ON_NODE]);
        want.all(|line| found.iter().any(|f| f == line))
    })
    .await;
    let (_, body) = cluster.get(Some(ADMIN), "/api/v1/relations").await;
    assert!(all_found, "{body:#}");
    cluster
}

/// The edges within `a`.
const OWN: [&str; 2] = [
    "networking.istio.io/Gateway a/gw exposes networking.istio.io/VirtualService a/web web.example.com",
    "networking.istio.io/VirtualService a/web attached-to networking.istio.io/Gateway a/gw",
];
/// The edges between `a` and `b`.
const ACROSS: [&str; 2] = [
    "networking.istio.io/Gateway a/gw exposes networking.istio.io/VirtualService b/secret secret.example.com",
    "networking.istio.io/VirtualService b/secret attached-to networking.istio.io/Gateway a/gw",
];
/// The edge to a cluster-scoped object.
const ON_NODE: &str = "core/Pod a/placed runs-on core/Node -/n1";

/// `from relation to [host]` of each edge of an answer (`items` or `edges`).
fn edge_lines(body: &Value) -> Vec<String> {
    let edges = body
        .get("items")
        .or(body.get("edges"))
        .and_then(Value::as_array)
        .unwrap_or_else(|| panic!("no edges: {body}"));
    edges
        .iter()
        .map(|e| {
            let host = e["attributes"]["host"].as_str().unwrap_or_default();
            format!("{} {host}", edge_line(e)).trim_end().to_string()
        })
        .collect()
}

fn node_ids(body: &Value) -> Vec<&str> {
    body["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn relations_show_edges_into_other_namespaces_only_to_callers_who_may_list_them_there() {
    let cluster = gateway_across_namespaces().await;
    let gateway = "/api/v1/namespaces/a/relations/gateways.networking.istio.io/gw";
    let (own, across) = (OWN, ACROSS);

    // `jane`, allowed in `a` only: the edges within `a`, nothing of `b`'s
    // VirtualService (its name, its host) or of the Node, at any depth.
    for path in [
        "/api/v1/relations?namespace=a".to_string(),
        gateway.to_string(),
        format!("{gateway}?depth=3"),
        "/api/v1/namespaces/a/relations/pods/placed".to_string(),
    ] {
        let (status, body) = cluster.get(Some(JANE), &path).await;
        assert_eq!(status, 200, "{path}: {body}");
        let text = body.to_string();
        assert!(
            !text.contains("secret") && !text.contains("n1"),
            "{path}: {body:#}"
        );
        if path.contains("placed") {
            assert_eq!(edge_lines(&body), Vec::<String>::new(), "{path}");
        } else {
            assert_eq!(edge_lines(&body), own, "{path}");
        }
    }
    let (_, deep) = cluster.get(Some(JANE), &format!("{gateway}?depth=3")).await;
    assert_eq!(
        node_ids(&deep),
        [
            "networking.istio.io/Gateway a/gw",
            "networking.istio.io/VirtualService a/web"
        ]
    );
    // Namespace `b` itself stays refused.
    let (status, _) = cluster
        .get(
            Some(JANE),
            "/api/v1/namespaces/b/relations/virtualservices.networking.istio.io/secret",
        )
        .await;
    assert_eq!(status, 403);
    // One question per other namespace and period, however many answers:
    // `b` and the cluster scope (asked first, as the widest form).
    let asked: Vec<String> = cluster
        .reviews_of("jane")
        .iter()
        .filter(|spec| spec["resourceAttributes"]["resource"] == "relations")
        .map(|spec| {
            spec["resourceAttributes"]["namespace"]
                .as_str()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert_eq!(
        asked,
        ["", "a", "b"],
        "the cluster scope (widest, once), `a`, `b`"
    );

    // `joe`, allowed in `a` and `b`: the edges across, not the Node.
    let (_, body) = cluster
        .get(Some(JOE), "/api/v1/relations?namespace=a")
        .await;
    let mut want: Vec<&str> = own.iter().chain(&across).copied().collect();
    want.sort();
    assert_eq!(edge_lines(&body), want);
    let (_, body) = cluster.get(Some(JOE), gateway).await;
    assert_eq!(edge_lines(&body), want);
    let (_, body) = cluster
        .get(Some(JOE), "/api/v1/namespaces/a/relations/pods/placed")
        .await;
    assert_eq!(edge_lines(&body), Vec::<String>::new());

    // Whoever may list relations cluster-wide sees the Node too.
    let (_, body) = cluster
        .get(Some(ADMIN), "/api/v1/namespaces/a/relations/pods/placed")
        .await;
    assert_eq!(edge_lines(&body), [ON_NODE]);
}

#[tokio::test]
async fn many_requests_of_one_caller_cost_one_review() {
    let cluster = Cluster::start(json!({})).await;
    let path = "/api/v1/namespaces/a/objects/pods";
    for _ in 0..50 {
        assert_eq!(cluster.get(Some(JANE), path).await.0, 200);
    }
    assert_eq!(cluster.fake.token_reviews(), [Some("jane".to_string())]);
    // Jane's Role is in `a`: whether she may list pods everywhere (no),
    // then in `a` (yes).
    assert_eq!(cluster.reviews_of("jane").len(), 2);

    // Concurrent requests for a decision not yet made share one review
    // per question: get pods everywhere (no), in `a` (yes).
    let requests =
        (0..20).map(|_| cluster.get(Some(JANE), "/api/v1/namespaces/a/objects/pods/web-a"));
    let answers = futures::future::join_all(requests).await;
    assert!(answers.iter().all(|(status, _)| *status == 200));
    assert_eq!(cluster.reviews_of("jane").len(), 4);
    // Other pods of `a` by name are answered from the namespace's decision:
    // a client reading many objects costs no review per object.
    // (None of them is in `a`: allowed, then not found.)
    for name in ["web-b", "web-c", "no-such-pod"] {
        let path = format!("/api/v1/namespaces/a/objects/pods/{name}");
        assert_eq!(cluster.get(Some(JANE), &path).await.0, 404, "{path}");
    }
    assert_eq!(cluster.reviews_of("jane").len(), 4);
    assert_eq!(cluster.fake.token_reviews().len(), 1);
}

#[tokio::test]
async fn the_caches_hold_at_most_cache_max_entries() {
    let cluster = Cluster::start(json!({"delegatedAuth": {"cacheMaxEntries": 3}})).await;
    for i in 0..6 {
        let user = format!("user-{i}");
        let token = format!("token-{i}");
        cluster.fake.add_token(&token, &user, &[]);
        cluster.fake.grant(
            Subject::User(user),
            Rule::namespaced("a", &["list"], "", &["pods"]),
        );
        assert_eq!(
            cluster
                .get(Some(&token), "/api/v1/namespaces/a/objects/pods")
                .await
                .0,
            200
        );
    }
    let metrics = cluster.get_metrics().await;
    for review in ["TokenReview", "SubjectAccessReview"] {
        let entries = gauge(
            &metrics,
            &format!(r#"grw_access_cache_entries{{review="{review}"}}"#),
        );
        assert!(entries <= 3, "{review}: {entries} entries\n{metrics}");
    }
    // The first users were evicted: asking again costs a review again.
    assert_eq!(
        cluster
            .get(Some("token-0"), "/api/v1/namespaces/a/objects/pods")
            .await
            .0,
        200
    );
    let reviews_of_user_0 = cluster
        .fake
        .token_reviews()
        .iter()
        .filter(|u| u.as_deref() == Some("user-0"))
        .count();
    assert_eq!(reviews_of_user_0, 2);
}

impl Cluster {
    /// `/metrics`, read as `admin`.
    async fn get_metrics(&self) -> String {
        self.http
            .get(format!("{}/metrics", self.grw.url))
            .bearer_auth(ADMIN)
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    }
}

fn gauge(metrics: &str, series: &str) -> i64 {
    metrics
        .lines()
        .find_map(|line| line.strip_prefix(series))
        .and_then(|value| value.trim().parse().ok())
        .unwrap_or_else(|| panic!("no {series} in:\n{metrics}"))
}

#[tokio::test]
async fn a_review_that_fails_is_503_never_an_allow() {
    let cluster = Cluster::start(json!({})).await;
    let path = "/api/v1/namespaces/a/objects/pods";
    // 500: the Kubernetes client GRW uses retries a 503 for up to the
    // review's 10 s, which then ends the same way, more slowly.
    cluster
        .fake
        .fail_requests("subjectaccessreviews", 500, usize::MAX);
    let (status, headers, body) = cluster.send(reqwest::Method::GET, Some(JANE), path).await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(headers["retry-after"], "1");
    assert_eq!(body["reason"], "ServiceUnavailable");
    let message = body["message"].as_str().unwrap();
    assert!(
        message.starts_with("GRW cannot check with the API server what the caller may read: the API server refused GRW's SubjectAccessReview (500)"),
        "{message}"
    );
    // Failures are not kept: once the API server answers, so does GRW.
    cluster.fake.clear_failures();
    assert_eq!(cluster.get(Some(JANE), path).await.0, 200);

    cluster.fake.fail_requests("tokenreviews", 500, usize::MAX);
    let (status, body) = cluster.get(Some(ADMIN), path).await;
    assert_eq!(status, 503);
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .starts_with("GRW cannot check the caller's token with the API server: "),
        "{body}"
    );
    cluster.fake.clear_failures();
    assert_eq!(cluster.get(Some(ADMIN), path).await.0, 200);
}

/// A client trusting only `ca`, on a new connection each time it is made.
fn client_trusting(ca: &str) -> reqwest::Client {
    reqwest::Client::builder()
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(ca.as_bytes()).unwrap())
        .build()
        .unwrap()
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[tokio::test]
async fn the_tls_listener_serves_the_same_api_and_follows_certificate_rotation() {
    let files = tempfile::tempdir().unwrap();
    let (cert_file, key_file) = (files.path().join("tls.crt"), files.path().join("tls.key"));
    let (ca, cert, key) = certificates("first CA");
    std::fs::write(&cert_file, &cert).unwrap();
    std::fs::write(&key_file, &key).unwrap();
    let port = free_port();
    // The loopback listener open, the TLS one delegated (its default).
    let cluster = Cluster::start(json!({
        "apiAuth": "none",
        "tlsListener": {"address": "127.0.0.1", "port": port, "certFile": cert_file, "keyFile": key_file},
    }))
    .await;
    let tls_url = format!("https://localhost:{port}");
    let listening = cluster.grw.log_events("TLS API listening");
    assert_eq!(listening[0]["address"], format!("127.0.0.1:{port}"));

    let client = client_trusting(&ca);
    let get = |client: &reqwest::Client, path: &str, token: Option<&str>| {
        let mut request = client.get(format!("{tls_url}{path}"));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        request.send()
    };
    let response = get(&client, "/api/v1/namespaces/a/objects/pods", Some(JANE))
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    assert_eq!(names(&body), ["web-a"]);
    let response = get(&client, "/api/v1/objects/pods", Some(JANE))
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
    let response = get(&client, "/api/v1/objects/pods", None).await.unwrap();
    assert_eq!(response.status(), 401);
    // The same router: the Kubernetes API's prefix is checked there too.
    let response = get(&client, "/kube/api/v1/pods", Some(JANE)).await.unwrap();
    assert_eq!(response.status(), 403);
    // The loopback listener answers anyone.
    assert_eq!(cluster.get(None, "/api/v1/objects/pods").await.0, 200);

    // A new certificate from another authority: new connections see it.
    let (new_ca, new_cert, new_key) = certificates("second CA");
    std::fs::write(&key_file, &new_key).unwrap();
    std::fs::write(&cert_file, &new_cert).unwrap();
    let rotated = eventually(Duration::from_secs(10), || async {
        get(&client_trusting(&new_ca), "/readyz", None)
            .await
            .is_ok_and(|r| r.status() == 200)
    })
    .await;
    assert!(
        rotated,
        "the new certificate is not served; logs:\n{}",
        cluster.grw.logs()
    );
    assert!(get(&client_trusting(&ca), "/readyz", None).await.is_err());

    // A broken file keeps the previous certificate, and says why.
    std::fs::write(&cert_file, "not a certificate").unwrap();
    let response = get(&client_trusting(&new_ca), "/readyz", None)
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let warned = eventually(Duration::from_secs(5), || async {
        !cluster
            .grw
            .log_events("the TLS certificate files changed but cannot be used; the previous certificate stays")
            .is_empty()
    })
    .await;
    assert!(warned, "{}", cluster.grw.logs());
}

#[test]
fn certificate_files_that_cannot_be_used_stop_grw_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "t").unwrap();
    let (_, cert, _) = certificates("a CA");
    let (_, _, other_key) = certificates("another CA");
    let cert_file = dir.path().join("tls.crt");
    let key_file = dir.path().join("tls.key");
    std::fs::write(&cert_file, &cert).unwrap();
    let config = |key: &Path| {
        json!({
            "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": "http://127.0.0.1:9", "tokenFilePath": token},
            "builtinAnalyzers": false,
            "apiGroupsSyncIntervalSecond": 3600,
            "tlsListener": {"address": "127.0.0.1", "port": free_port(), "certFile": cert_file, "keyFile": key},
        })
        .to_string()
    };
    let cases = [
        (
            "not a key",
            format!(
                "tlsListener.keyFile {} holds no PEM private key (`PRIVATE KEY`, `RSA PRIVATE KEY` or `EC PRIVATE KEY`)",
                key_file.display()
            ),
        ),
        (
            other_key.as_str(),
            format!(
                "the key of tlsListener.keyFile {} cannot serve the certificate of tlsListener.certFile {}; check that they belong together",
                key_file.display(),
                cert_file.display()
            ),
        ),
    ];
    for (key, want) in cases {
        std::fs::write(&key_file, key).unwrap();
        let (code, output) = run_to_exit(Some(&config(&key_file)), &[], Duration::from_secs(30));
        assert_ne!(code, Some(0), "{output}");
        assert!(output.contains(&want), "no `{want}` in:\n{output}");
    }
    let missing = dir.path().join("absent.key");
    let (code, output) = run_to_exit(Some(&config(&missing)), &[], Duration::from_secs(30));
    assert_ne!(code, Some(0), "{output}");
    assert!(
        output.contains(&format!(
            "cannot read tlsListener.keyFile {}",
            missing.display()
        )),
        "{output}"
    );
}

#[test]
fn access_modes_that_cannot_work_stop_grw_before_it_starts() {
    let (code, output) = run_to_exit(
        Some(r#"{"apiAuth": "token"}"#),
        &[],
        Duration::from_secs(30),
    );
    assert_eq!(code, Some(2), "{output}");
    assert!(
        output.contains("config key `apiAuth`: `token` checks the shared bearer token of `apiTokenFile`, which is not set"),
        "{output}"
    );
    let (code, output) = run_to_exit(
        Some(r#"{"apiAuth": "delegated"}"#),
        &["--replay", "/nonexistent.jsonl"],
        Duration::from_secs(30),
    );
    assert_eq!(code, Some(2), "{output}");
    assert!(
        output.contains("config key `apiAuth`: `delegated` asks the API server who each caller is and what it may read, and a replayed recording (`replayFile`, --replay) has no API server"),
        "{output}"
    );
}

#[tokio::test]
async fn unique_bad_tokens_past_the_review_bound_are_429() {
    let cluster = Cluster::start(
        json!({"delegatedAuth": {"maxConcurrentReviews": 2, "maxQueuedReviews": 1}}),
    )
    .await;
    // Each review takes a second: ten callers with tokens never seen before
    // find two places in flight and one waiting.
    cluster.fake.set_review_delay(Duration::from_secs(1));
    let path = "/api/v1/namespaces/a/objects/pods";
    let answers = futures::future::join_all((0..10).map(|i| {
        let token = format!("bad-token-{i}");
        let cluster = &cluster;
        async move { cluster.send(reqwest::Method::GET, Some(&token), path).await }
    }))
    .await;
    let statuses: Vec<u16> = answers.iter().map(|(status, _, _)| *status).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 401).count(),
        3,
        "{statuses:?}"
    );
    assert_eq!(
        statuses.iter().filter(|s| **s == 429).count(),
        7,
        "{statuses:?}"
    );
    assert_eq!(cluster.fake.token_reviews().len(), 3);
    let (_, headers, body) = answers.iter().find(|(s, _, _)| *s == 429).unwrap();
    assert_eq!(headers["retry-after"], "1");
    assert_eq!(body["kind"], "Status");
    assert_eq!(body["reason"], "TooManyRequests");
    assert_eq!(body["code"], 429);
    assert_eq!(body["details"]["retryAfterSeconds"], 1);
    assert_eq!(
        body["message"],
        "GRW cannot check the caller's token now: 2 reviews are under way with the API server and 1 more wait (delegatedAuth.maxConcurrentReviews, maxQueuedReviews); try again later"
    );

    // Once the reviews are answered, callers are checked again.
    cluster.fake.set_review_delay(Duration::ZERO);
    assert_eq!(cluster.get(Some(JANE), path).await.0, 200);
    let metrics = cluster.get_metrics().await;
    assert_eq!(
        gauge(&metrics, r#"grw_access_refused_requests_total{code="429"}"#),
        7
    );
    assert_eq!(gauge(&metrics, "grw_access_reviews_in_flight"), 0);
    assert_eq!(gauge(&metrics, "grw_access_reviews_queued"), 0);
}
