//! Notifier plugins end to end: the real components of `plugins/` (and a
//! fault plugin) loaded by GRW's plugin runtime, delivering real changes to
//! a real HTTP receiver on loopback through the host's allow-listed
//! outbound HTTP.

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use grw::config::AllowedHosts;
use grw::gvk::Gvk;
use grw::metrics::Metrics;
use grw::plugin::{DeliveryError, Limits, Manifest, Plugin, PluginEngine};
use grw::store::{Change, ChangeType, Origin, StoredObject};
use grw_e2e::daemon::run_to_exit;
use grw_e2e::plugins::plugin_wasm;
use grw_e2e::receiver::{Behaviour, Receiver};
use serde_json::{Value, json};

/// One engine for the whole test process, as in the daemon.
fn engine() -> &'static PluginEngine {
    static ENGINE: OnceLock<Arc<PluginEngine>> = OnceLock::new();
    ENGINE.get_or_init(|| PluginEngine::new(None).expect("engine"))
}

/// Loads `package` as plugin `name` with `manifest`, under an operator who
/// allows `operator_hosts`.
fn load(name: &str, package: &str, manifest: Value, operator_hosts: &[&str]) -> Arc<Plugin> {
    let wasm = std::fs::read(plugin_wasm(package)).expect("plugin built");
    let manifest = Manifest::parse(&manifest.to_string(), Limits::default()).expect("manifest");
    let operator = AllowedHosts::parse("pluginAllowedHosts", operator_hosts).expect("hosts");
    let plugin = Plugin::load(
        engine(),
        name,
        &wasm,
        manifest,
        &operator,
        Arc::new(Metrics::new()),
    );
    Arc::new(plugin.unwrap_or_else(|e| panic!("{name} does not load: {e}")))
}

/// A change of `object` (its kind from `apiVersion` and `kind`).
fn change(kind: ChangeType, object: Value, old: Option<Value>) -> (Gvk, Change) {
    let (group, version) = object["apiVersion"]
        .as_str()
        .unwrap()
        .split_once('/')
        .unwrap_or(("", object["apiVersion"].as_str().unwrap()));
    let gvk = Gvk::new(group, version, object["kind"].as_str().unwrap());
    let stored = |v: Value| Arc::new(StoredObject::from_value(v, &gvk, false).unwrap());
    let change = Change {
        kind,
        object: stored(object),
        old: old.map(stored),
        origin: Origin::Watch,
        position: 0,
    };
    (gvk, change)
}

/// Delivers as the notification engine does: on a blocking thread.
async fn deliver(plugin: &Arc<Plugin>, (gvk, change): (Gvk, Change)) -> Result<(), DeliveryError> {
    let plugin = plugin.clone();
    tokio::task::spawn_blocking(move || plugin.deliver(&gvk, &change))
        .await
        .expect("deliver does not panic")
}

fn deployment(replicas: u32, labels: Value, rv: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "d-1", "resourceVersion": rv, "labels": labels},
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "web", "image": "shop/web:1.5"}]}}},
        "status": {"readyReplicas": replicas},
    })
}

fn pod(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "default", "uid": format!("uid-{name}"), "resourceVersion": "7"}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_notifier_posts_readable_summaries() {
    let receiver = Receiver::start().await;
    let chat = load(
        "chat",
        "grw-plugin-chat-notifier",
        json!({
            "kind": "notifier",
            "config": {"url": receiver.url("/services/T0/B0"), "channel": "#ops", "username": "grw", "iconEmoji": ":eyes:"},
            "allowedHosts": ["127.0.0.1"],
        }),
        &["127.0.0.1", "hooks.slack.com"],
    );
    let modified = change(
        ChangeType::Modified,
        deployment(3, json!({"app": "web", "tier": "front"}), "11"),
        Some(deployment(2, json!({"app": "web"}), "10")),
    );
    assert_eq!(deliver(&chat, modified).await, Ok(()));
    assert_eq!(
        deliver(&chat, change(ChangeType::Added, pod("x"), None)).await,
        Ok(())
    );
    let config_map = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "a"}});
    assert_eq!(
        deliver(&chat, change(ChangeType::Deleted, config_map, None)).await,
        Ok(())
    );
    // Only ignored fields changed: delivered without a message.
    let mut heartbeat = deployment(3, json!({"app": "web", "tier": "front"}), "12");
    heartbeat["status"]["readyReplicas"] = json!(2);
    let unchanged = change(
        ChangeType::Modified,
        heartbeat,
        Some(deployment(3, json!({"app": "web", "tier": "front"}), "11")),
    );
    assert_eq!(deliver(&chat, unchanged).await, Ok(()));

    let received = receiver.requests();
    let texts: Vec<&Value> = received.iter().map(|r| &r.body["text"]).collect();
    assert_eq!(
        texts,
        [
            "*Deployment* `shop/web` modified: spec.replicas 2 → 3; metadata.labels.tier added",
            "*Pod* `default/x` added",
            "*ConfigMap* `a/b` deleted",
        ]
    );
    let first = &received[0];
    assert_eq!(first.path, "/services/T0/B0");
    assert_eq!(first.header("content-type"), "application/json");
    assert_eq!(first.header("user-agent"), "grw/0.1.0");
    assert_eq!(
        first.body,
        json!({
            "text": "*Deployment* `shop/web` modified: spec.replicas 2 → 3; metadata.labels.tier added",
            "channel": "#ops",
            "username": "grw",
            "icon_emoji": ":eyes:",
        })
    );
    let stats = chat.stats().snapshot();
    assert_eq!((stats.calls, stats.failures.trap), (4, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhook_template_sends_the_rendered_request() {
    let receiver = Receiver::start().await;
    let body = r#"{"event": "{{type}}", "kind": "{{group}}/{{version}}/{{kind}}", "uid": "{{uid}}", "rv": "{{resourceVersion}}", "replicas": {{object.spec.replicas}}, "was": {{oldObject.spec.replicas}}, "image": "{{object.spec.template.spec.containers.0.image}}", "labels": {{object.metadata.labels}}}"#;
    let hook = load(
        "hook",
        "grw-plugin-webhook-template",
        json!({
            "config": {
                "url": receiver.url("/hooks/{{namespace}}/{{name}}"),
                "method": "PUT",
                "headers": {"authorization": "Bearer t0ken", "x-grw-event": "{{type}}"},
                "body": body,
            },
            "allowedHosts": [format!("127.0.0.1:{}", receiver.addr.port())],
        }),
        &["127.0.0.1"],
    );
    let modified = change(
        ChangeType::Modified,
        deployment(3, json!({"app": "web"}), "11"),
        Some(deployment(2, json!({"app": "web"}), "10")),
    );
    assert_eq!(deliver(&hook, modified).await, Ok(()));
    let received = receiver.requests();
    assert_eq!(received.len(), 1);
    let request = &received[0];
    assert_eq!(request.path, "/hooks/shop/web");
    assert_eq!(request.header("authorization"), "Bearer t0ken");
    assert_eq!(request.header("x-grw-event"), "MODIFIED");
    assert_eq!(request.header("content-type"), "application/json");
    assert_eq!(
        std::str::from_utf8(&request.raw).unwrap(),
        r#"{"event": "MODIFIED", "kind": "apps/v1/Deployment", "uid": "d-1", "rv": "11", "replicas": 3, "was": 2, "image": "shop/web:1.5", "labels": {"app":"web"}}"#
    );

    // The default body is the change as a watch event, the object as stored.
    let plain = load(
        "plain",
        "grw-plugin-webhook-template",
        json!({"config": {"url": receiver.url("/plain")}, "allowedHosts": ["127.0.0.1"]}),
        &["127.0.0.1"],
    );
    assert_eq!(
        deliver(&plain, change(ChangeType::Added, pod("p"), None)).await,
        Ok(())
    );
    let received = receiver.requests();
    assert_eq!(received[1].path, "/plain");
    assert_eq!(
        received[1].body,
        json!({"type": "ADDED", "object": pod("p")})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hosts_outside_either_allow_list_are_refused() {
    let receiver = Receiver::start().await;
    let port = receiver.addr.port();
    let hook = |name: &str, plugin_hosts: Value, operator_hosts: &[&str]| {
        load(
            name,
            "grw-plugin-webhook-template",
            json!({"config": {"url": receiver.url("/hook")}, "allowedHosts": plugin_hosts}),
            operator_hosts,
        )
    };
    let cases = [
        (
            hook("operator-says-no", json!(["127.0.0.1"]), &["localhost"]),
            format!(
                "host 127.0.0.1:{port} is not allowed: GRW's configuration does not list it in `pluginAllowedHosts` (localhost)"
            ),
        ),
        (
            hook("manifest-says-no", json!(["*.example.com"]), &["127.0.0.1"]),
            format!(
                "host 127.0.0.1:{port} is not allowed: the plugin's manifest does not list it in `allowedHosts` (*.example.com)"
            ),
        ),
        (
            hook("other-port", json!(["127.0.0.1:1"]), &[]),
            format!(
                "host 127.0.0.1:{port} is not allowed: neither the plugin's manifest (`allowedHosts`: 127.0.0.1:1) nor GRW's configuration (`pluginAllowedHosts`: empty) lists it"
            ),
        ),
    ];
    for (plugin, reason) in cases {
        let outcome = deliver(&plugin, change(ChangeType::Added, pod("x"), None)).await;
        assert_eq!(
            outcome,
            Err(DeliveryError::retry(reason)),
            "{}",
            plugin.name
        );
        // The plugin answered (retry); it did not fail.
        assert_eq!(plugin.stats().snapshot().failures.trap, 0);
    }
    assert!(receiver.requests().is_empty(), "{:?}", receiver.requests());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn receiver_failures_become_retry_or_reject() {
    let receiver = Receiver::start().await;
    let manifest = |url: String| json!({"config": {"url": url}, "allowedHosts": ["127.0.0.1"]});
    let hook = load(
        "hook",
        "grw-plugin-webhook-template",
        manifest(receiver.url("/hook")),
        &["127.0.0.1"],
    );
    let chat = load(
        "chat",
        "grw-plugin-chat-notifier",
        manifest(receiver.url("/chat")),
        &["127.0.0.1"],
    );
    let added = || change(ChangeType::Added, pod("x"), None);
    for (behaviour, want) in [
        (
            Behaviour::Status(500, None, "down"),
            DeliveryError::retry("receiver answered 500: down"),
        ),
        (
            Behaviour::Status(429, Some(30), ""),
            DeliveryError::retry("receiver answered 429"),
        ),
        (
            Behaviour::Status(400, None, "invalid_payload"),
            DeliveryError::GiveUp("receiver answered 400: invalid_payload".into()),
        ),
        (
            Behaviour::Status(301, None, ""),
            DeliveryError::GiveUp(
                "receiver answered 301; GRW does not follow redirects, so point the plugin at the final URL".into(),
            ),
        ),
    ] {
        receiver.set(behaviour.clone());
        assert_eq!(deliver(&hook, added()).await, Err(want.clone()), "{behaviour:?}");
        assert_eq!(deliver(&chat, added()).await, Err(want), "{behaviour:?}");
    }
    assert_eq!(receiver.requests().len(), 8);

    let stats = hook.stats().snapshot();
    assert_eq!(
        (stats.calls, stats.failures.trap, stats.failures.timeout),
        (4, 0, 0)
    );

    // Nobody listening: a retry that says so.
    let gone = Receiver::start().await;
    let url = gone.url("/hook");
    gone.stop();
    let nobody = load(
        "nobody",
        "grw-plugin-webhook-template",
        manifest(url.clone()),
        &["127.0.0.1"],
    );
    let outcome = deliver(&nobody, added()).await;
    assert!(
        matches!(&outcome, Err(DeliveryError::Retry { reason, .. }) if reason.starts_with(&format!("POST {url}: cannot connect"))),
        "{outcome:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_receiver_slower_than_the_budget_is_a_retry_not_a_timeout() {
    let receiver = Receiver::start().await;
    receiver.set(Behaviour::Hang);
    let hook = load(
        "hook",
        "grw-plugin-webhook-template",
        json!({
            "config": {"url": receiver.url("/slow")},
            "allowedHosts": ["127.0.0.1"],
            "limits": {"timeoutMs": 300},
        }),
        &["127.0.0.1"],
    );
    let outcome = deliver(&hook, change(ChangeType::Added, pod("x"), None)).await;
    let url = receiver.url("/slow");
    assert!(
        matches!(&outcome, Err(DeliveryError::Retry { reason, .. })
            if reason.starts_with(&format!("POST {url}: no answer within ")) && reason.ends_with("ms left of the call's budget (limits.timeoutMs)")),
        "{outcome:?}"
    );
    // The plugin turned the host's timeout into its own answer: no trap, no
    // timeout failure, and its instance serves the next delivery.
    let stats = hook.stats().snapshot();
    assert_eq!((stats.failures.timeout, stats.failures.trap), (0, 0));
    receiver.set(Behaviour::Accept);
    assert_eq!(
        deliver(&hook, change(ChangeType::Added, pod("y"), None)).await,
        Ok(())
    );
    assert_eq!(receiver.accepted().len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trapping_or_stuck_notifier_is_retried_and_recovers() {
    let fault = load(
        "fault",
        "grw-test-plugin-notifier-fault",
        json!({"limits": {"timeoutMs": 100, "breakerFailures": 3, "breakerWindowMs": 60000}}),
        &[],
    );
    let outcome = deliver(&fault, change(ChangeType::Added, pod("boom-1"), None)).await;
    assert!(
        matches!(&outcome, Err(DeliveryError::Retry { reason, after: None })
            if reason.starts_with("notifier plugin `fault` trapped:")),
        "{outcome:?}"
    );
    assert_eq!(
        deliver(&fault, change(ChangeType::Added, pod("spin-1"), None)).await,
        Err(DeliveryError::retry(
            "notifier plugin `fault` did not answer before its deadline (limits.timeoutMs)"
        ))
    );
    // A fresh instance takes the next change.
    assert_eq!(
        deliver(&fault, change(ChangeType::Added, pod("calm-1"), None)).await,
        Ok(())
    );
    let stats = fault.stats().snapshot();
    assert_eq!(
        (stats.calls, stats.failures.trap, stats.failures.timeout),
        (3, 1, 1)
    );

    // A third failure within the window rests the plugin: retries say for how long.
    assert!(
        deliver(&fault, change(ChangeType::Added, pod("boom-2"), None))
            .await
            .is_err()
    );
    assert!(fault.breaker_open());
    let outcome = deliver(&fault, change(ChangeType::Added, pod("calm-2"), None)).await;
    assert!(
        matches!(&outcome, Err(DeliveryError::Retry { reason, after: Some(_) })
            if reason.starts_with("notifier plugin `fault` keeps failing and is resting (crash-loop breaker open); last error: trapped:")),
        "{outcome:?}"
    );
    assert_eq!(fault.stats().snapshot().skipped, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_and_notifiers_asked_the_wrong_question_answer_safely() {
    let filter = load(
        "labels",
        "grw-plugin-label-filter",
        json!({"config": {"selector": "app=web"}}),
        &[],
    );
    assert_eq!(
        deliver(&filter, change(ChangeType::Added, pod("x"), None)).await,
        Err(DeliveryError::GiveUp(
            "plugin `labels` is a filter plugin, not a notifier".into()
        ))
    );
    let notifier = load(
        "fault",
        "grw-test-plugin-notifier-fault",
        json!({"failMode": "closed"}),
        &[],
    );
    let (gvk, boom) = change(ChangeType::Added, pod("boom-1"), None);
    // Not called: a notifier cannot decide, so its fail mode does.
    assert!(!notifier.decide(&gvk, &boom));
    assert_eq!(notifier.stats().snapshot().calls, 0);
    // Notifiers default to a budget that has room for HTTP.
    assert_eq!(notifier.manifest.limits.timeout, Duration::from_secs(10));
    assert_eq!(filter.manifest.limits.timeout, Duration::from_millis(100));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grw_plugin_check_and_test_work_for_notifiers() {
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let wasm = plugin_wasm("grw-plugin-webhook-template");
    let manifest = |dir: &Path, name: &str, hosts: Value| {
        let path = dir.join(name);
        let text =
            json!({"config": {"url": receiver.url("/tool/{{name}}")}, "allowedHosts": hosts});
        std::fs::write(&path, text.to_string()).unwrap();
        path
    };
    let allowed = manifest(dir.path(), "allowed.json", json!(["127.0.0.1"]));
    let refused = manifest(dir.path(), "refused.json", json!([]));
    let events = dir.path().join("events.jsonl");
    std::fs::write(
        &events,
        format!(
            "{}\n{}\n",
            json!({"type": "ADDED", "object": pod("a")}),
            json!({"type": "DELETED", "object": pod("a")})
        ),
    )
    .unwrap();
    let run = |args: Vec<String>| {
        tokio::task::spawn_blocking(move || {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            run_to_exit(None, &args, Duration::from_secs(120))
        })
    };
    let wasm = wasm.to_str().unwrap().to_string();
    let arg = |p: &Path| p.to_str().unwrap().to_string();

    let (code, out) = run(vec![
        "plugin".into(),
        "check".into(),
        wasm.clone(),
        "--manifest".into(),
        arg(&allowed),
    ])
    .await
    .unwrap();
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("world:     notifier-plugin, grw:plugin@0.2.0"),
        "{out}"
    );
    assert!(out.contains("hosts:     127.0.0.1 (allowedHosts;"), "{out}");
    assert!(out.contains("timeout:   10000 ms per delivery"), "{out}");

    let test = |manifest: &Path| {
        vec![
            "plugin".into(),
            "test".into(),
            wasm.clone(),
            "--manifest".into(),
            arg(manifest),
            "--events".into(),
            arg(&events),
        ]
    };
    let (code, out) = run(test(&allowed)).await.unwrap();
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("OK ADDED    v1/Pod default/a"), "{out}");
    assert!(out.contains("OK DELETED  v1/Pod default/a"), "{out}");
    assert!(
        out.contains("2 delivered, 0 to retry, 0 given up, 0 skipped, 0 failed calls"),
        "{out}"
    );
    let paths: Vec<String> = receiver.requests().iter().map(|r| r.path.clone()).collect();
    assert_eq!(paths, ["/tool/a", "/tool/a"]);

    let (code, out) = run(test(&refused)).await.unwrap();
    assert_eq!(code, Some(0), "{out}");
    let port = receiver.addr.port();
    assert!(
        out.contains(&format!("RETRY ADDED    v1/Pod default/a: host 127.0.0.1:{port} is not allowed: neither the plugin's manifest (`allowedHosts`: empty) nor GRW's configuration (`pluginAllowedHosts`: empty) lists it")),
        "{out}"
    );
    assert!(out.contains("0 delivered, 2 to retry, 0 given up"), "{out}");
    assert_eq!(receiver.requests().len(), 2);
}
