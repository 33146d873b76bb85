//! The web console (`/ui/`) in a real headless Chromium, driven by
//! `host/console/test/browser.mjs` (playwright-core): over the bundled
//! recording, every page renders with no JavaScript error and no request
//! outside the daemon, and shows what the API says; over the fake API
//! server, changes appear live in a table and in the graph, a long table
//! is read as it scrolls, a delegated user (on the TLS listener) sees only
//! what RBAC grants, and a dead letter is opened and replayed. Each page's
//! screenshot is written to `target/console-screenshots/<scenario>/`.
//!
//! And the assets as HTTP: open to anyone, gzipped for who takes it, a
//! policy that keeps the page on the daemon's origin.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use grw_e2e::daemon::{Grw, eventually};
use grw_e2e::fake_api::{FakeApiOptions, FakeApiServer, Rule, Subject};
use grw_e2e::receiver::{Behaviour, Receiver};
use grw_e2e::tls::certificates;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const TOKEN: &str = "t0k3n";

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
}

fn screenshots(scenario: &str) -> PathBuf {
    let dir = workspace()
        .join("target/console-screenshots")
        .join(scenario);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// What a scenario saw: its facts, every error of the page, and the
/// addresses the daemon refused (401, 403).
struct Seen {
    facts: Value,
    errors: Vec<String>,
    refusals: Vec<String>,
}

/// Runs `scenario` of the browser script against `grw`, with `env`; each
/// `WAIT` it prints is answered by the next of `steps`, run first.
async fn browse<'a>(
    grw: &Grw,
    scenario: &str,
    env: &[(&str, &str)],
    steps: Vec<Box<dyn FnMut() + Send + 'a>>,
) -> Seen {
    browse_at(&grw.url, scenario, env, steps).await
}

/// [`browse`] at `base`, the daemon's address on one of its listeners.
async fn browse_at<'a>(
    base: &str,
    scenario: &str,
    env: &[(&str, &str)],
    mut steps: Vec<Box<dyn FnMut() + Send + 'a>>,
) -> Seen {
    let console = workspace().join("host/console");
    assert!(
        console.join("node_modules/playwright-core").is_dir(),
        "playwright-core is not installed in host/console: run tests/setup.sh"
    );
    let mut child = tokio::process::Command::new("node")
        .arg("test/browser.mjs")
        .arg(base)
        .arg(scenario)
        .arg(screenshots(scenario))
        .current_dir(&console)
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs");
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut steps = steps.iter_mut();
    let seen = tokio::time::timeout(Duration::from_secs(180), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if let Some(what) = line.strip_prefix("WAIT ") {
                let step = steps
                    .next()
                    .unwrap_or_else(|| panic!("no step for `{what}`"));
                step();
                stdin.write_all(b"go\n").await.unwrap();
            } else if line.starts_with('{') {
                let seen: Value = serde_json::from_str(&line).unwrap();
                return seen;
            }
        }
        panic!("the browser script ended without saying what it saw")
    })
    .await
    .expect("the browser script finished within 3 minutes");
    let _ = child.wait().await;
    Seen {
        facts: seen["facts"].clone(),
        errors: serde_json::from_value(seen["errors"].clone()).unwrap(),
        refusals: serde_json::from_value(seen["refusals"].clone()).unwrap(),
    }
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {value}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn every_page_shows_the_recording_with_no_error_and_nothing_from_outside() {
    let grw = Grw::replaying().await;
    let seen = browse(&grw, "replay", &[], Vec::new()).await;
    assert!(seen.errors.is_empty(), "{:#?}", seen.errors);
    assert!(seen.refusals.is_empty(), "{:#?}", seen.refusals);
    let f = &seen.facts;

    // The overview lists every watched kind, and no problem.
    let (_, kinds) = grw.get("/api/v1/kinds").await;
    let watched: Vec<String> = kinds["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["gvk"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(strings(&f["overviewKinds"]), watched);
    assert!(f["problems"].as_str().unwrap().contains("None"), "{f}");

    // The table of shop's Pods: every one, with kubectl's columns.
    let (_, pods) = grw.get("/api/v1/namespaces/shop/objects/pods").await;
    assert_eq!(f["podRows"], json!(pods["items"].as_array().unwrap().len()));
    assert_eq!(
        strings(&f["podColumns"]),
        ["Name", "Ready", "Status", "Restarts", "Age"]
    );

    let options = strings(&f["kindOptions"]);
    for want in [
        "deployments.apps = Deployment (apps/v1) · deploy",
        "pods = Pod (v1) · po",
        "gateways.networking.istio.io = Gateway (networking.istio.io/v1beta1)",
    ] {
        assert!(
            options.iter().any(|o| o.starts_with(want)),
            "{want} not in {options:?}"
        );
    }
    assert!(
        f["deployUrl"]
            .as_str()
            .unwrap()
            .ends_with("/ui/objects?kind=deploy&namespace=shop"),
        "{f}"
    );
    let (_, deployments) = grw.get("/api/v1/namespaces/shop/objects/deployments").await;
    assert_eq!(
        f["deployRows"],
        json!(deployments["items"].as_array().unwrap().len())
    );

    // The deep link opens the Deployment's page, its YAML first.
    assert_eq!(
        strings(&f["yaml"]),
        ["apiVersion: apps/v1", "kind: Deployment", "metadata:"]
    );
    assert!(f["relations"].as_u64().unwrap() >= 3, "{f}");

    // Its timeline at depth 2, with who made each change.
    let (_, timeline) = grw
        .get("/api/v1/namespaces/shop/timeline/deployments/frontend?depth=2&since=7d&limit=200")
        .await;
    assert_eq!(
        f["timelineEntries"],
        json!(timeline["items"].as_array().unwrap().len())
    );
    let text = f["timelineText"].as_str().unwrap();
    assert!(
        text.contains(" by kube-controller-manager (Update"),
        "{text}"
    );

    // The graph holds its ReplicaSets and their Pods; the relation filter
    // keeps only what it owns, and says so in the URL.
    let nodes = strings(&f["graphNodes"]);
    for want in [
        "apps/Deployment shop/frontend",
        "apps/ReplicaSet shop/frontend-579b4b68d7",
        "core/Pod shop/frontend-579b4b68d7-6wdxs",
        "core/ConfigMap shop/frontend-nginx",
    ] {
        assert!(nodes.iter().any(|n| n == want), "{want} not in {nodes:?}");
    }
    let owns = strings(&f["ownsNodes"]);
    assert!(owns.len() < nodes.len(), "{owns:?}");
    assert!(owns.iter().all(|n| n.contains("shop/frontend")), "{owns:?}");
    assert!(!owns.iter().any(|n| n.contains("ConfigMap")), "{owns:?}");
    assert!(f["ownsUrl"].as_str().unwrap().ends_with("&relation=owns"));

    let (_, plugins) = grw.get("/api/v1/plugins").await;
    let names: Vec<String> = plugins["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(strings(&f["plugins"]), names);

    // Light and dark, as the system says; the "Loading" line is gone.
    assert_eq!(f["lightBackground"], "rgb(255, 255, 255)");
    assert_eq!(f["darkBackground"], "rgb(22, 23, 26)");
    assert_eq!(f["loadingLeft"], 0);

    // Reached with the keyboard alone, each control outlined when focused.
    for (reached, url, want) in [
        ("keyboardObjects", "keyboardObjectsUrl", "/ui/objects"),
        ("keyboardTimeline", "keyboardTimelineUrl", "tab=timeline"),
    ] {
        assert_eq!(f[reached]["outline"], "solid", "{reached}: {f}");
        assert!(f[url].as_str().unwrap().contains(want), "{url}: {f}");
    }
}

fn config_map(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"namespace": "shop", "name": name}, "data": {"k": "v"}})
}

#[tokio::test]
async fn a_change_on_the_api_server_shows_live_in_a_table_and_in_the_graph() {
    let fake = fake_cluster().await;
    fake.create(config_map("first")).unwrap();
    fake.create(json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"namespace": "shop", "name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "shop:1"}],
                         "volumes": [{"name": "settings", "configMap": {"name": "settings"}}]}}}}))
        .unwrap();
    for i in 0..1_200 {
        let mut bulk = config_map(&format!("cm-{i:04}"));
        bulk["metadata"]["namespace"] = json!("bulk");
        fake.create(bulk).unwrap();
    }
    let grw = against(
        &fake,
        json!({
            "initialWatchingResources": [
                {"group": "apps", "version": "v1", "kind": "Deployment"},
                {"group": "", "version": "v1", "kind": "ConfigMap"},
                {"group": "events.k8s.io", "version": "v1", "kind": "Event"},
            ],
            "builtinAnalyzers": ["references"],
        }),
    )
    .await;

    let steps: Vec<Box<dyn FnMut() + Send + '_>> = vec![
        Box::new(|| {
            fake.create(config_map("added-live")).unwrap();
        }),
        Box::new(|| {
            fake.create(config_map("settings")).unwrap();
        }),
    ];
    // An Event about `first`, and one about another ConfigMap.
    for (name, about) in [("first.1", "first"), ("other.1", "other")] {
        fake.create(json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"namespace": "shop", "name": name},
            "eventTime": "2026-11-29T10:03:00.000000Z",
            "reportingController": "config-checker", "reportingInstance": "checker-1",
            "action": "Check", "reason": "Stale", "note": format!("{about} is a day old"),
            "type": "Warning", "series": {"count": 3, "lastObservedTime": "2026-11-29T10:05:00.000000Z"},
            "regarding": {"apiVersion": "v1", "kind": "ConfigMap", "namespace": "shop", "name": about}}))
            .unwrap();
    }
    let seen = browse(&grw, "live", &[], steps).await;
    assert!(seen.errors.is_empty(), "{:#?}", seen.errors);
    let f = &seen.facts;
    assert_eq!(strings(&f["rowsBefore"]), ["first"]);
    assert_eq!(strings(&f["rowsAfter"]), ["added-live", "first"]);
    // Its Events, read from events.k8s.io/v1 as GRW watches it: only the
    // one about it, no watch of core v1 Events started.
    assert_eq!(
        strings(&f["events"]),
        ["Warning\tStale\tconfig-checker\tfirst is a day old (×3)"]
    );
    let (_, kinds) = grw.get("/api/v1/kinds").await;
    assert!(
        !kinds["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|k| k["gvk"] == "v1/Event"),
        "{kinds}"
    );
    // The ConfigMap the template mounts is drawn missing, then there.
    assert_eq!(
        strings(&f["missingBefore"]),
        ["core/ConfigMap shop/settings"]
    );
    assert_eq!(strings(&f["missingAfter"]), Vec::<String>::new());
    assert!(
        strings(&f["nodesAfter"]).contains(&"core/ConfigMap shop/settings".to_string()),
        "{f}"
    );
    // 1,200 rows: 500 read first, the rest as it scrolls; a window drawn.
    assert!(
        f["longFirst"]
            .as_str()
            .unwrap()
            .contains("500 rows read so far, more as you scroll"),
        "{f}"
    );
    assert!(f["longDrawn"].as_u64().unwrap() < 200, "{f}");
    let last = f["longLast"].as_str().unwrap();
    assert!(
        last.contains("1,200 rows") && !last.contains("more"),
        "{last}"
    );
    assert_eq!(f["longLastRow"], "cm-1199");
}

async fn fake_cluster() -> FakeApiServer {
    FakeApiServer::start(FakeApiOptions {
        token: Some(TOKEN.into()),
        bookmark_interval: Duration::from_millis(500),
        istio_crds_installed: false,
    })
    .await
}

/// GRW against `fake`, watching ConfigMaps, with `extra` config.
async fn against(fake: &FakeApiServer, extra: Value) -> Grw {
    let mut config =
        json!({"initialWatchingResources": [{"group": "", "version": "v1", "kind": "ConfigMap"}]});
    for (key, value) in extra.as_object().unwrap() {
        config[key] = value.clone();
    }
    Grw::against(fake, TOKEN, config).await
}

#[tokio::test]
async fn a_delegated_user_of_one_namespace_sees_it_and_a_clear_refusal_elsewhere() {
    // Over the TLS listener, as in a cluster: the browser sends the token
    // only there.
    const JANE: &str = "jane-token";
    let fake = fake_cluster().await;
    fake.add_token(JANE, "jane", &["developers"]);
    fake.grant(
        Subject::User("jane".into()),
        Rule::namespaced("shop", &["get", "list", "watch"], "", &["configmaps"]),
    );
    fake.create(config_map("app")).unwrap();
    let mut other = config_map("elsewhere");
    other["metadata"]["namespace"] = json!("other");
    fake.create(other).unwrap();
    let files = tempfile::tempdir().unwrap();
    let (_, cert, key) = certificates("a CA");
    let (cert_file, key_file) = (files.path().join("tls.crt"), files.path().join("tls.key"));
    std::fs::write(&cert_file, &cert).unwrap();
    std::fs::write(&key_file, &key).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _grw = against(
        &fake,
        json!({"apiAuth": "delegated",
            "tlsListener": {"address": "127.0.0.1", "port": port, "certFile": cert_file, "keyFile": key_file}}),
    )
    .await;
    let base = format!("https://localhost:{port}");

    let seen = browse_at(&base, "delegated", &[("GRW_TOKEN", JANE)], Vec::new()).await;
    assert!(seen.errors.is_empty(), "{:#?}", seen.errors);
    let f = &seen.facts;
    assert_eq!(f["tokenKept"], true);
    // The overview reads what jane may not: it says so, and renders.
    let overview = f["overview"].as_str().unwrap();
    assert!(
        overview.contains("Not allowed to read the watches (403 Forbidden)"),
        "{overview}"
    );
    assert!(overview.contains("Process"), "{overview}");
    // What it could not read is not said to be without problems.
    assert!(!overview.contains("None: every watch"), "{overview}");
    assert_eq!(strings(&f["allowedRows"]), ["app"]);
    for refused in [&f["refusedAll"], &f["refusedOther"]] {
        let text = refused.as_str().unwrap();
        assert!(
            text.starts_with("Not allowed to read configmaps (403 Forbidden)"),
            "{text}"
        );
        assert!(text.contains("jane"), "{text}");
    }
    assert_eq!(f["yaml"], true);
    // The refusals were the daemon's answers, not the browser's.
    assert!(!seen.refusals.is_empty());
    assert!(
        seen.refusals.iter().all(|url| url.starts_with(&base)),
        "{:?}",
        seen.refusals
    );
}

#[tokio::test]
async fn a_dead_letter_is_opened_and_replayed() {
    let fake = fake_cluster().await;
    let receiver = Receiver::start().await;
    receiver.set(Behaviour::Status(400, None, "no such tenant"));
    let grw = against(&fake, json!({})).await;
    let (status, created) = grw
        .post(
            "/api/v1/subscriptions",
            json!({"name": "to-billing", "kind": "ConfigMap", "namespace": "shop",
                "webhook": {"url": receiver.url("/hook"), "payload": "watch-event"}})
            .to_string(),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    fake.create(config_map("invoice")).unwrap();
    let dead = eventually(Duration::from_secs(20), || async {
        grw.get("/api/v1/subscriptions/to-billing").await.1["deadLetters"] == 1
    })
    .await;
    assert!(dead, "no dead letter");
    let (_, letters) = grw
        .get("/api/v1/subscriptions/to-billing/dead-letters")
        .await;
    let seq = letters["items"][0]["seq"].as_u64().unwrap();

    let steps: Vec<Box<dyn FnMut() + Send + '_>> =
        vec![Box::new(|| receiver.set(Behaviour::Accept))];
    let seen = browse(
        &grw,
        "deliveries",
        &[("GRW_SUBSCRIPTION", "to-billing")],
        steps,
    )
    .await;
    assert!(seen.errors.is_empty(), "{:#?}", seen.errors);
    let f = &seen.facts;
    assert_eq!(f["letters"], 1);
    assert!(
        f["subscriptionRow"]
            .as_str()
            .unwrap()
            .starts_with("to-billing"),
        "{f}"
    );
    let body: Value = serde_json::from_str(f["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["type"], "ADDED");
    assert_eq!(body["object"]["metadata"]["name"], "invoice");
    // Asked first; then replayed, and delivered.
    assert_eq!(
        strings(&f["dialogs"]),
        [format!("Replay dead letter {seq} of to-billing?")]
    );
    assert_eq!(f["result"], "1 replayed");
    let got = receiver.wait_accepted(1, Duration::from_secs(20)).await;
    assert_eq!(got[0].body["object"]["metadata"]["name"], "invoice");
}

#[tokio::test]
async fn the_assets_are_open_gzipped_on_request_and_kept_on_the_daemons_origin() {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("api-token");
    std::fs::write(&token_file, "s3cret\n").unwrap();
    let grw = Grw::replaying_in(dir, json!({"apiTokenFile": token_file})).await;
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let get = |path: &str| http.get(format!("{}{path}", grw.url));

    // The page needs no token; the data does.
    let page = get("/ui/").send().await.unwrap();
    assert_eq!(page.status(), 200);
    let policy = page.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(policy.contains("default-src 'none'"), "{policy}");
    assert!(policy.contains("script-src 'self'"), "{policy}");
    assert!(policy.contains("connect-src 'self'"), "{policy}");
    let etag = page.headers()["etag"].clone();
    let html = page.text().await.unwrap();
    assert!(
        html.contains(r#"<script type="module" src="/ui/app.js">"#),
        "{html}"
    );
    assert_eq!(get("/api/v1/kinds").send().await.unwrap().status(), 401);
    let (status, process) = grw.get("/api/v1/process").await;
    assert_eq!(status, 200, "{process}");
    assert_eq!(process["kubeApiPathPrefix"], "/kube");
    assert_eq!(process["replay"], true);
    assert!(
        process["cachedObjects"].as_u64().unwrap() > 100,
        "{process}"
    );
    assert!(
        process["residentBytes"].as_u64().unwrap() > 1 << 20,
        "{process}"
    );
    let (status, refused) = grw.get("/api/v1/process?verbose=true").await;
    assert_eq!(status, 400);
    assert!(
        refused["message"]
            .as_str()
            .unwrap()
            .contains("unknown query parameter `verbose`"),
        "{refused}"
    );

    // Any path under /ui/ is the page: its code reads the path.
    for path in [
        "/ui/open?kind=pods&namespace=shop&name=x",
        "/ui/graph",
        "/ui/a/b",
    ] {
        let answer = get(path).send().await.unwrap();
        assert_eq!(answer.status(), 200, "{path}");
        assert_eq!(answer.text().await.unwrap(), html, "{path}");
    }
    let bare = get("/ui").send().await.unwrap();
    assert_eq!(bare.status(), 308);
    assert_eq!(bare.headers()["location"], "/ui/");

    // Checked again with its tag: not sent twice.
    let again = get("/ui/")
        .header("if-none-match", etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), 304);

    // gzip only to who takes it; the same code either way.
    let plain = get("/ui/app.js").send().await.unwrap();
    assert_eq!(
        plain.headers()["content-type"],
        "text/javascript; charset=utf-8"
    );
    assert!(plain.headers().get("content-encoding").is_none());
    let plain = plain.bytes().await.unwrap();
    let zipped = get("/ui/app.js")
        .header("accept-encoding", "gzip, br")
        .send()
        .await
        .unwrap();
    assert_eq!(zipped.headers()["content-encoding"], "gzip");
    let zipped = zipped.bytes().await.unwrap();
    assert_eq!(&zipped[..2], b"\x1f\x8b");
    assert!(
        zipped.len() * 2 < plain.len(),
        "{} of {}",
        zipped.len(),
        plain.len()
    );
    let committed = std::fs::read(workspace().join("host/console/dist/app.js")).unwrap();
    assert_eq!(plain.as_ref(), committed.as_slice());
}
