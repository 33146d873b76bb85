//! Plugins end to end: the real `grw` loading real components from a plugin
//! directory, filtering queries and event streams, reloading on change, and
//! surviving plugins that misbehave.

use std::path::Path;
use std::time::Duration;

use grw_e2e::daemon::{Grw, bundled_recording, eventually, run_to_exit, summary};
use grw_e2e::plugins::{install, plugin_wasm, write_atomically};
use serde_json::{Value, json};

/// Starts grw on `recording` with `plugins` as its plugin directory.
async fn grw_with_plugins(plugins: &Path, recording: &Path) -> Grw {
    let grw = Grw::start(
        json!({"pluginDir": plugins, "pluginCacheDir": plugins.join(".cache")}),
        &["--replay", recording.to_str().unwrap()],
    )
    .await;
    grw.wait_ready(Duration::from_secs(60)).await;
    grw
}

async fn plugin_status(grw: &Grw, name: &str) -> Value {
    grw.get(&format!("/api/v1/plugins/{name}")).await.1
}

fn names(body: &Value) -> Vec<String> {
    body["items"]
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

/// A small recording: two pods, one named to make the trap plugin panic.
fn small_recording(dir: &Path) -> std::path::PathBuf {
    let pod = |name: &str, rv: u32| {
        json!({"type": "ADDED", "object": {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"namespace": "lab", "name": name, "uid": format!("uid-{name}"), "resourceVersion": rv.to_string(), "labels": {"app": name}}}})
    };
    let path = dir.join("small.jsonl");
    std::fs::write(
        &path,
        format!("{}\n{}\n", pod("calm-1", 10), pod("boom-1", 11)),
    )
    .unwrap();
    path
}

/// The small recording plus an empty plugin directory, both in `dir`.
fn lab(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let plugins = dir.join("plugins");
    std::fs::create_dir(&plugins).unwrap();
    (small_recording(dir), plugins)
}

#[tokio::test]
async fn shipped_filters_decide_on_real_events() {
    let dir = tempfile::tempdir().unwrap();
    install(
        dir.path(),
        "shop-only",
        "grw-plugin-namespace-filter",
        Some(json!({"kind": "filter", "config": {"include": ["shop"]}})),
    );
    install(
        dir.path(),
        "frontend",
        "grw-plugin-label-filter",
        Some(json!({"config": {"selector": "app.kubernetes.io/name in (frontend)"}})),
    );
    install(
        dir.path(),
        "replicas",
        "grw-plugin-changed-fields",
        Some(json!({"config": {"paths": ["spec.replicas"], "passOtherTypes": false}})),
    );
    let grw = grw_with_plugins(dir.path(), &bundled_recording()).await;

    let (status, body) = grw.get("/api/v1/objects/pods?filter=shop-only").await;
    assert_eq!(status, 200, "{body}");
    let shop = names(&body);
    let (_, all_shop) = grw.get("/api/v1/namespaces/shop/objects/pods").await;
    assert_eq!(shop, names(&all_shop));
    assert!(!shop.is_empty());

    let (_, both) = grw
        .get("/api/v1/objects/pods?filter=shop-only,frontend")
        .await;
    let (_, selected) = grw
        .get("/api/v1/namespaces/shop/objects/pods?labelSelector=app.kubernetes.io/name%3Dfrontend")
        .await;
    assert_eq!(names(&both), names(&selected));

    // Paging through a filter still covers every match once.
    let (_, page) = grw
        .get("/api/v1/objects/pods?filter=shop-only&limit=5")
        .await;
    assert_eq!(page["items"].as_array().unwrap().len(), 5);
    let token = page["metadata"]["continue"].as_str().unwrap();
    let (_, rest) = grw
        .get(&format!(
            "/api/v1/objects/pods?filter=shop-only&continue={token}"
        ))
        .await;
    assert_eq!(names(&page).len() + names(&rest).len(), shop.len());

    // changed-fields: only MODIFIED events whose spec.replicas changed.
    let mut stream = grw.stream("/api/v1/namespaces/shop/objects/deployments?watch=true&resourceVersion=1&filter=replicas").await;
    let events = stream.drain(Duration::from_secs(2)).await;
    assert!(!events.is_empty());
    assert!(
        events.iter().all(|e| e["type"] == "MODIFIED"),
        "{:?}",
        events.iter().map(summary).collect::<Vec<_>>()
    );
    // frontend was scaled 3→5→2: both changes are there.
    let frontend = events
        .iter()
        .filter(|e| e["object"]["metadata"]["name"] == "frontend")
        .count();
    assert!(frontend >= 2, "{frontend}");

    let status = plugin_status(&grw, "shop-only").await;
    assert_eq!(status["state"], "ready");
    assert_eq!(status["kind"], "filter");
    assert_eq!(status["witVersion"], "0.2.0");
    assert!(status["stats"]["calls"].as_u64().unwrap() >= 48);
    assert_eq!(status["hash"].as_str().unwrap().len(), 64);

    // Bad filter names are 400s that say what exists.
    let (status, body) = grw.get("/api/v1/objects/pods?filter=nope").await;
    assert_eq!(status, 400);
    assert!(
        body["message"].as_str().unwrap().contains(
            "unknown filter plugin `nope`; loaded plugins: frontend, istio-gateways, ownership, references, replicas, services, shop-only"
        ),
        "{body}"
    );
}

async fn deployments(grw: &Grw) -> Vec<String> {
    names(
        &grw.get("/api/v1/namespaces/shop/objects/deployments?filter=sel")
            .await
            .1,
    )
}

fn loads(grw: &Grw) -> usize {
    grw.log_events("plugin loaded").len()
}

#[tokio::test]
async fn plugins_reload_when_their_files_change() {
    let dir = tempfile::tempdir().unwrap();
    install(
        dir.path(),
        "sel",
        "grw-plugin-label-filter",
        Some(json!({"config": {"selector": "app.kubernetes.io/name=cart"}})),
    );
    let grw = grw_with_plugins(dir.path(), &bundled_recording()).await;
    assert_eq!(deployments(&grw).await, ["shop/cart"]);
    let first_hash = plugin_status(&grw, "sel").await["hash"].clone();

    // A new manifest: new behaviour within a second or so.
    write_atomically(
        &dir.path().join("sel.json"),
        json!({"config": {"selector": "app.kubernetes.io/name=catalog"}})
            .to_string()
            .as_bytes(),
    );
    assert!(
        eventually(Duration::from_secs(5), || async {
            deployments(&grw).await == ["shop/catalog"]
        })
        .await
    );

    // Identical content again: a no-op (no new load attempt).
    let before = loads(&grw);
    write_atomically(
        &dir.path().join("sel.json"),
        json!({"config": {"selector": "app.kubernetes.io/name=catalog"}})
            .to_string()
            .as_bytes(),
    );
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(loads(&grw), before);

    // A corrupt file: the previous version keeps serving, the error is visible.
    write_atomically(&dir.path().join("sel.wasm"), b"\0asm garbage");
    assert!(
        eventually(Duration::from_secs(5), || async {
            plugin_status(&grw, "sel").await["state"] == "stale"
        })
        .await
    );
    let status = plugin_status(&grw, "sel").await;
    assert!(
        status["lastError"]
            .as_str()
            .unwrap()
            .contains("not a valid WebAssembly component"),
        "{status}"
    );
    assert_eq!(status["hash"], first_hash);
    assert_eq!(deployments(&grw).await, ["shop/catalog"]);

    // A good file again, written in place (not by rename).
    std::fs::write(
        dir.path().join("sel.wasm"),
        std::fs::read(plugin_wasm("grw-plugin-label-filter")).unwrap(),
    )
    .unwrap();
    assert!(
        eventually(Duration::from_secs(5), || async {
            plugin_status(&grw, "sel").await["state"] == "ready"
        })
        .await
    );

    // Removed: unloaded.
    std::fs::remove_file(dir.path().join("sel.wasm")).unwrap();
    assert!(
        grw.wait_for_status("/api/v1/plugins/sel", 404, Duration::from_secs(5))
            .await
    );
    // Each load, failure and removal is in the history, newest first.
    let (_, all) = grw.get("/api/v1/plugins").await;
    let sel: Vec<&Value> = all["reloads"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["plugin"] == "sel")
        .collect();
    let history: Vec<&str> = sel.iter().map(|r| r["outcome"].as_str().unwrap()).collect();
    assert_eq!(
        history,
        ["removed", "loaded", "failed", "loaded", "loaded"],
        "{all}"
    );
    let failed = sel[2];
    assert!(
        failed["error"]
            .as_str()
            .unwrap()
            .contains("not a valid WebAssembly component"),
        "{failed}"
    );
    assert_eq!(sel[4]["hash"], first_hash);
    assert!(sel[4]["loadMillis"].is_u64(), "{}", sel[4]);
    let (status, _) = grw
        .get("/api/v1/namespaces/shop/objects/deployments?filter=sel")
        .await;
    assert_eq!(status, 400);
}

#[tokio::test]
async fn misbehaving_plugins_never_take_the_daemon_down() {
    let dir = tempfile::tempdir().unwrap();
    let (recording, plugins) = lab(dir.path());
    install(
        &plugins,
        "spin",
        "grw-test-plugin-loop-forever",
        Some(json!({"limits": {"timeoutMs": 50}})),
    );
    install(
        &plugins,
        "hog",
        "grw-test-plugin-memory-hog",
        Some(json!({"limits": {"memoryMb": 8}, "failMode": "closed"})),
    );
    install(&plugins, "boom", "grw-test-plugin-trap", None);
    install(
        &plugins,
        "picky",
        "grw-test-plugin-reject-config",
        Some(json!({"config": {}})),
    );
    install(
        &plugins,
        "notifier",
        "grw-test-plugin-wrong-world",
        Some(json!({"kind": "filter"})),
    );
    install(&plugins, "escape", "grw-test-plugin-forbidden-import", None);
    install(&plugins, "newer", "grw-test-plugin-newer-patch", None);
    install(&plugins, "future", "grw-test-plugin-incompatible", None);
    install(&plugins, "legacy", "grw-test-plugin-legacy-filter", None);
    install(
        &plugins,
        "good",
        "grw-plugin-namespace-filter",
        Some(json!({"config": {"include": ["lab"]}})),
    );
    let grw = grw_with_plugins(&plugins, &recording).await;

    // Deadline: fail open (the default), the daemon answers.
    let (status, body) = grw.get("/api/v1/objects/pods?filter=spin").await;
    assert_eq!((status, names(&body).len()), (200, 2), "{body}");
    let spin = plugin_status(&grw, "spin").await;
    assert_eq!(spin["stats"]["failures"]["timeout"], 2, "{spin}");
    assert!(
        spin["lastError"].as_str().unwrap().contains("deadline"),
        "{spin}"
    );

    // Memory cap: fail closed drops everything.
    let (status, body) = grw.get("/api/v1/objects/pods?filter=hog").await;
    assert_eq!((status, names(&body).len()), (200, 0), "{body}");
    let hog = plugin_status(&grw, "hog").await;
    assert!(
        hog["stats"]["failures"]["memory"].as_u64().unwrap() >= 1,
        "{hog}"
    );

    // A trap on one object: that one fails open, the instance is replaced, the next call works.
    let (_, body) = grw.get("/api/v1/objects/pods?filter=boom").await;
    assert_eq!(names(&body), ["lab/boom-1", "lab/calm-1"]);
    let boom = plugin_status(&grw, "boom").await;
    assert_eq!(
        (
            boom["stats"]["calls"].clone(),
            boom["stats"]["failures"]["trap"].clone()
        ),
        (json!(2), json!(1)),
        "{boom}"
    );
    assert!(
        boom["lastError"].as_str().unwrap().contains("trapped"),
        "{boom}"
    );

    // Load failures: state + message.
    for (name, want) in [
        (
            "picky",
            "rejected its configuration: config needs `threshold`",
        ),
        ("notifier", "the component is a notifier plugin"),
        (
            "escape",
            "the component imports `evil:escape/exec@0.1.0`, which GRW does not grant",
        ),
        (
            "future",
            "built against grw:plugin@0.3.0, which this GRW cannot load",
        ),
    ] {
        let status = plugin_status(&grw, name).await;
        assert_eq!(status["state"], "failed", "{name}: {status}");
        assert!(
            status["lastError"].as_str().unwrap().contains(want),
            "{name}: {status}"
        );
        let (code, body) = grw
            .get(&format!("/api/v1/objects/pods?filter={name}"))
            .await;
        assert_eq!(code, 400, "{body}");
    }
    // Those refused for their world or imports were refused before they
    // were compiled: the artifact cache holds none of theirs.
    let artifacts: Vec<String> = std::fs::read_dir(plugins.join(".cache"))
        .unwrap()
        .flatten()
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .collect();
    let compiled = |package: &str| {
        let hash = grw::plugin::component_hash(&std::fs::read(plugin_wasm(package)).unwrap());
        artifacts.iter().any(|name| name.starts_with(&hash))
    };
    assert!(compiled("grw-plugin-namespace-filter"), "{artifacts:?}");
    for refused in [
        "grw-test-plugin-wrong-world",
        "grw-test-plugin-forbidden-import",
        "grw-test-plugin-incompatible",
    ] {
        assert!(!compiled(refused), "{refused} was compiled: {artifacts:?}");
    }
    // A newer patch version of the contract loads.
    let newer = plugin_status(&grw, "newer").await;
    assert_eq!(
        (newer["state"].clone(), newer["witVersion"].clone()),
        (json!("ready"), json!("0.2.1")),
        "{newer}"
    );
    // So does a filter built against the frozen 0.1 contract, and it
    // decides as it did: labels and JSON text arrive as 0.1 has them.
    let legacy = plugin_status(&grw, "legacy").await;
    assert_eq!(
        (legacy["state"].clone(), legacy["witVersion"].clone()),
        (json!("ready"), json!("0.1.0")),
        "{legacy}"
    );
    let (_, body) = grw.get("/api/v1/objects/pods?filter=legacy").await;
    assert_eq!(names(&body), ["lab/calm-1"]);

    // Others are unaffected.
    let (_, body) = grw.get("/api/v1/objects/pods?filter=good").await;
    assert_eq!(names(&body).len(), 2);
    assert_eq!(grw.get("/healthz").await.0, 200);
    let metrics = grw.get_raw("/metrics").await.text().await.unwrap();
    assert!(
        metrics.contains(r#"grw_plugin_calls_total{plugin="spin",result="timeout"} 2"#),
        "{metrics}"
    );
    assert!(
        metrics.contains(r#"grw_plugin_loads_total{plugin="escape",result="error"} 1"#),
        "{metrics}"
    );
}

#[tokio::test]
async fn a_crash_looping_plugin_is_rested() {
    let dir = tempfile::tempdir().unwrap();
    let (recording, plugins) = lab(dir.path());
    install(
        &plugins,
        "spin",
        "grw-test-plugin-loop-forever",
        Some(json!({"limits": {"timeoutMs": 20, "breakerFailures": 3, "breakerWindowMs": 60000}})),
    );
    let grw = grw_with_plugins(&plugins, &recording).await;
    for _ in 0..3 {
        grw.get("/api/v1/objects/pods?filter=spin").await;
    }
    let status = plugin_status(&grw, "spin").await;
    assert_eq!(status["state"], "broken", "{status}");
    assert_eq!(status["stats"]["failures"]["timeout"], 3, "{status}");
    assert!(
        status["stats"]["skipped"].as_u64().unwrap() >= 3,
        "{status}"
    );
}

#[tokio::test]
async fn guest_output_lands_in_the_log_with_the_plugin_name() {
    let dir = tempfile::tempdir().unwrap();
    let (recording, plugins) = lab(dir.path());
    install(&plugins, "chatty", "grw-test-plugin-logger", None);
    let grw = grw_with_plugins(&plugins, &recording).await;
    grw.get("/api/v1/objects/pods?filter=chatty").await;
    let logs = grw.logs();
    let lines: Vec<Value> = logs
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .filter(|e: &Value| e["plugin"] == "chatty")
        .collect();
    assert!(lines.iter().any(|e| e["stream"] == "stdout"), "{logs}");
    assert!(lines.iter().any(|e| e["stream"] == "stderr"), "{logs}");
    assert!(
        lines
            .iter()
            .any(|e| e["stream"].is_null() && e["message"].is_string()),
        "log import: {logs}"
    );
}

#[tokio::test]
async fn compiled_plugins_are_cached_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    install(
        dir.path(),
        "shop-only",
        "grw-plugin-namespace-filter",
        Some(json!({"config": {"include": ["shop"]}})),
    );
    let first = grw_with_plugins(dir.path(), &bundled_recording()).await;
    assert_eq!(plugin_status(&first, "shop-only").await["fromCache"], false);
    drop(first);
    let second = grw_with_plugins(dir.path(), &bundled_recording()).await;
    let status = plugin_status(&second, "shop-only").await;
    assert_eq!(status["fromCache"], true, "{status}");
    assert_eq!(status["state"], "ready");
}

#[test]
fn plugin_check_and_test_commands() {
    let dir = tempfile::tempdir().unwrap();
    let wasm = plugin_wasm("grw-plugin-namespace-filter");
    let (code, out) = run_to_exit(
        None,
        &[
            "plugin",
            "check",
            wasm.to_str().unwrap(),
            "--config",
            r#"{"include":["shop"]}"#,
        ],
        Duration::from_secs(120),
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("world:     filter-plugin, grw:plugin@0.2.0"),
        "{out}"
    );
    assert!(out.contains("config:    accepted"), "{out}");
    let (code, out) = run_to_exit(
        None,
        &[
            "plugin",
            "check",
            wasm.to_str().unwrap(),
            "--config",
            r#"{"include": 5}"#,
        ],
        Duration::from_secs(120),
    );
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains("rejected its configuration"), "{out}");

    let recording = small_recording(dir.path());
    let (code, out) = run_to_exit(
        None,
        &[
            "plugin",
            "test",
            wasm.to_str().unwrap(),
            "--config",
            r#"{"include":["elsewhere"]}"#,
            "--events",
            recording.to_str().unwrap(),
        ],
        Duration::from_secs(120),
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("DROP ADDED    v1/Pod lab/calm-1"), "{out}");
    assert!(out.contains("0 passed, 2 dropped, 0 failed calls"), "{out}");

    let (code, out) = run_to_exit(
        None,
        &["plugin", "check", "/nonexistent.wasm"],
        Duration::from_secs(60),
    );
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("cannot read /nonexistent.wasm: No such file or directory"),
        "{out}"
    );
}

/// `grw plugin check` on FILE with an optional manifest; exit code and output.
fn check(package: &str, manifest: Option<Value>) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().unwrap();
    let wasm = plugin_wasm(package);
    let mut args = vec![
        "plugin".to_string(),
        "check".to_string(),
        wasm.to_str().unwrap().to_string(),
    ];
    if let Some(manifest) = manifest {
        let path = dir.path().join("manifest.json");
        std::fs::write(&path, manifest.to_string()).unwrap();
        args.extend(["--manifest".to_string(), path.to_str().unwrap().to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    run_to_exit(None, &args, Duration::from_secs(120))
}

#[test]
fn init_gets_two_seconds_whatever_the_call_timeout() {
    // An init that takes 400 ms, four times a call's limit: it loads (a
    // busy machine stretches a big component's init like this).
    let manifest = |init_millis: u64| {
        json!({"kind": "filter", "config": {"initMillis": init_millis, "millis": 0},
               "limits": {"timeoutMs": 100}})
    };
    let (code, out) = check("grw-test-plugin-slow", Some(manifest(400)));
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("config:    accepted"), "{out}");
    // An init that would take a minute is stopped after about two seconds.
    let started = std::time::Instant::now();
    let (code, out) = check("grw-test-plugin-slow", Some(manifest(60_000)));
    let took = started.elapsed();
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("did not answer before its deadline (limits.timeoutMs)"),
        "{out}"
    );
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(30),
        "stopped after {took:?}"
    );
}

#[test]
fn plugin_check_explains_what_keeps_a_component_from_loading() {
    let (code, out) = check("grw-test-plugin-incompatible", None);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("built against grw:plugin@0.3.0, which this GRW cannot load: it loads grw:plugin@0.2.x (current) and grw:plugin@0.1.x"),
        "{out}"
    );
    let (code, out) = check(
        "grw-test-plugin-wrong-world",
        Some(json!({"kind": "filter"})),
    );
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("the manifest says `filter` but the component is a notifier plugin (it exports grw:plugin/notifier@0.2.0)"),
        "{out}"
    );
    let (code, out) = check("grw-test-plugin-forbidden-import", None);
    assert_eq!(code, Some(1), "{out}");
    assert!(
        out.contains("the component imports `evil:escape/exec@0.1.0`, which GRW does not grant: a plugin may import grw:plugin/log, WASI 0.2"),
        "{out}"
    );
    // An earlier contract still loads, and check says so.
    let (code, out) = check("grw-test-plugin-legacy-filter", None);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains(
            "world:     filter-plugin, grw:plugin@0.1.0 (an earlier contract, still loaded"
        ),
        "{out}"
    );
    let (code, out) = check(
        "grw-plugin-field-filter",
        Some(json!({"config": {"path": "status.phase", "in": ["Failed"]}})),
    );
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("config:    accepted"), "{out}");
}

/// Waits for the first `count` event lines of `stream`, as JSON.
async fn first_events(stream: &mut grw_e2e::daemon::EventStream, count: usize) -> Vec<Value> {
    let mut events = Vec::new();
    while events.len() < count {
        match stream.next(Duration::from_secs(60)).await {
            Some(event) => events.push(event),
            None => break,
        }
    }
    events
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_streams_do_not_queue_behind_one_instance() {
    let dir = tempfile::tempdir().unwrap();
    let (recording, plugins) = lab(dir.path());
    // Each call takes a second; two instances (the default) serve two
    // streams side by side.
    install(
        &plugins,
        "slow",
        "grw-test-plugin-slow",
        Some(json!({"config": {"millis": 1000}, "limits": {"timeoutMs": 5000}})),
    );
    let grw = grw_with_plugins(&plugins, &recording).await;
    let status = plugin_status(&grw, "slow").await;
    assert_eq!(status["limits"]["instances"], 2, "{status}");
    assert_eq!(
        status["instances"], 1,
        "one instance is made at load: {status}"
    );

    let path = "/api/v1/objects/pods?watch=true&filter=slow";
    let (mut first, mut second) = tokio::join!(grw.stream(path), grw.stream(path));
    let (a, b) = tokio::join!(first_events(&mut first, 2), first_events(&mut second, 2));
    for events in [&a, &b] {
        let mut names: Vec<String> = events
            .iter()
            .map(|e| {
                e["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        names.sort();
        assert_eq!(names, ["boom-1", "calm-1"], "{events:?}");
    }
    // The streams' calls overlapped, so the pool made a second instance
    // rather than make one stream wait for the other's calls.
    let status = plugin_status(&grw, "slow").await;
    assert_eq!(status["instances"], 2, "{status}");
    assert_eq!(status["stats"]["calls"], 4, "{status}");
    assert_eq!(status["state"], "ready", "{status}");
}

/// `wasm` with a custom section appended: the same plugin, other bytes, as
/// successive builds of one plugin are.
fn with_custom_section(wasm: &[u8], name: &str) -> Vec<u8> {
    fn leb(mut n: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    let mut payload = Vec::new();
    leb(name.len(), &mut payload);
    payload.extend_from_slice(name.as_bytes());
    let mut out = wasm.to_vec();
    out.push(0);
    leb(payload.len(), &mut out);
    out.extend_from_slice(&payload);
    out
}

/// The pods that pass filter plugin `filter`.
async fn filtered(grw: &Grw, filter: &str) -> Vec<String> {
    names(
        &grw.get(&format!("/api/v1/objects/pods?filter={filter}"))
            .await
            .1,
    )
}

#[tokio::test]
async fn plugins_follow_writes_in_place_and_configmap_volumes() {
    let dir = tempfile::tempdir().unwrap();
    let (recording, plugins) = lab(dir.path());
    install(
        &plugins,
        "sel",
        "grw-plugin-label-filter",
        Some(json!({"config": {"selector": "app=calm-1"}})),
    );
    let grw = grw_with_plugins(&plugins, &recording).await;
    assert_eq!(filtered(&grw, "sel").await, ["lab/calm-1"]);
    let first_hash = plugin_status(&grw, "sel").await["hash"].clone();

    // A new version written in place, in two halves with a pause between:
    // the half-written file is never taken for a broken plugin.
    let new_version = with_custom_section(
        &std::fs::read(plugin_wasm("grw-plugin-label-filter")).unwrap(),
        "build-2",
    );
    let (head, tail) = new_version.split_at(new_version.len() / 2);
    {
        use std::io::Write;
        let mut file = std::fs::File::create(plugins.join("sel.wasm")).unwrap();
        file.write_all(head).unwrap();
        file.flush().unwrap();
        tokio::time::sleep(Duration::from_millis(1000)).await;
        let status = plugin_status(&grw, "sel").await;
        assert_eq!(status["state"], "ready", "{status}");
        assert_eq!(status["lastError"], Value::Null, "{status}");
        assert_eq!(status["hash"], first_hash, "{status}");
        file.write_all(tail).unwrap();
    }
    assert!(
        eventually(Duration::from_secs(10), || async {
            plugin_status(&grw, "sel").await["hash"] != first_hash
        })
        .await
    );
    let status = plugin_status(&grw, "sel").await;
    assert_eq!(status["state"], "ready", "{status}");
    assert_eq!(status["lastError"], Value::Null, "{status}");
    assert_eq!(filtered(&grw, "sel").await, ["lab/calm-1"]);

    // A ConfigMap volume: files are symlinks through `..data`, which is
    // swapped to a new directory in one rename.
    let volume = dir.path().join("volume");
    std::fs::create_dir(&volume).unwrap();
    let version = |name: &str, selector: &str| {
        let data = volume.join(name);
        std::fs::create_dir(&data).unwrap();
        std::fs::copy(plugin_wasm("grw-plugin-label-filter"), data.join("cm.wasm")).unwrap();
        std::fs::write(
            data.join("cm.json"),
            json!({"config": {"selector": selector}}).to_string(),
        )
        .unwrap();
    };
    version("..2026_11_23_01", "app=calm-1");
    std::os::unix::fs::symlink("..2026_11_23_01", volume.join("..data")).unwrap();
    for file in ["cm.wasm", "cm.json"] {
        std::os::unix::fs::symlink(format!("..data/{file}"), volume.join(file)).unwrap();
    }
    let grw2 = grw_with_plugins(&volume, &recording).await;
    assert_eq!(filtered(&grw2, "cm").await, ["lab/calm-1"]);
    version("..2026_11_23_02", "app=boom-1");
    std::os::unix::fs::symlink("..2026_11_23_02", volume.join("..data_tmp")).unwrap();
    std::fs::rename(volume.join("..data_tmp"), volume.join("..data")).unwrap();
    std::fs::remove_dir_all(volume.join("..2026_11_23_01")).unwrap();
    assert!(
        eventually(Duration::from_secs(10), || async {
            filtered(&grw2, "cm").await == ["lab/boom-1"]
        })
        .await
    );
    assert_eq!(plugin_status(&grw2, "cm").await["state"], "ready");
}
