//! Configuration errors as a user meets them: the real binary, a bad config
//! file, and the message it prints before exiting.

use std::time::Duration;

use grw_e2e::daemon::{Grw, bundled_recording, run_to_exit};
use serde_json::json;

#[test]
fn bad_config_files_stop_startup_with_a_message_naming_the_key() {
    let cases = [
        (
            r#"{"listenPort": "abc"}"#,
            r#"config key `listenPort`: expected a number from 1 to 65535, got "abc""#,
        ),
        (r#"{"minLogLevel": "loud"}"#, "config key `minLogLevel`"),
        (
            r#"{"initialWatchingResources": [{"group": "apps", "kind": "Deployment"}]}"#,
            "config key `initialWatchingResources[0].version`",
        ),
        (
            r#"{"initialWatchingResources": [{"group": "", "version": "v1", "kind": "Pod", "notifiers": [{"webhookUrls": ["ftp://x"]}]}]}"#,
            "config key `initialWatchingResources[0].notifiers[0].webhookUrls",
        ),
        (
            r#"{"k8sClientConfig": {"authType": "BearerToken"}}"#,
            "config key `k8sClientConfig",
        ),
        (
            r#"{"k8sClientConfig": {"caCertDataPemBase64": "%%%"}}"#,
            "not valid base64",
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "watchOptions": {"labelSelector": "app in (web"}}]}"#,
            "config key `initialWatchingResources[0].watchOptions.labelSelector`: label selector `app in (web`: ",
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "watchOptions": {"fieldSelector": "status.phase>1"}}]}"#,
            "config key `initialWatchingResources[0].watchOptions.fieldSelector`: field selector `status.phase>1`: ",
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{"webhookUrls": ["http://a"], "eventTypes": ["CREATED"]}]}]}"#,
            r#"config key `initialWatchingResources[0].notifiers[0].eventTypes[0]`: expected one of ADDED, MODIFIED, DELETED, got "CREATED""#,
        ),
        (
            r#"{"subscriptions": [{"name": "a", "kind": "Pod", "webhook": {"url": "http://a"}, "filters": ["../x"]}]}"#,
            "config key `subscriptions[0].filters[0]`: expected a plugin name",
        ),
        (
            r#"{"pluginAllowedHosts": ["hooks.slack.com", "https://x.io/hook"]}"#,
            "config key `pluginAllowedHosts[1]`: `https://x.io/hook` is a URL; write the host alone, e.g. `x.io`",
        ),
        (
            r#"{"builtinAnalyzers": ["ownership", "owner-refs"]}"#,
            r#"config key `builtinAnalyzers[1]`: GRW has no built-in analyzer "owner-refs"; it has istio-gateways, ownership, references, services"#,
        ),
        (
            r#"{"pluginCacheMaxBytes": "1G"}"#,
            r#"config key `pluginCacheMaxBytes`: expected a whole number from 1 up, got "1G""#,
        ),
        ("{\"listenPort\": 3000,}", "line 1"),
        ("[1]", "must hold a JSON object at the top level, got [1]"),
    ];
    for (text, want) in cases {
        let (code, output) = run_to_exit(Some(text), &[], Duration::from_secs(30));
        assert_eq!(code, Some(2), "{text}: {output}");
        assert!(output.contains(want), "{text}: {output}");
        assert!(!output.contains("panicked"), "{text}: {output}");
    }
}

#[test]
fn a_named_config_file_that_is_missing_is_an_error() {
    let (code, output) = run_to_exit(
        None,
        &["--config", "/nonexistent/grw.json"],
        Duration::from_secs(30),
    );
    assert_eq!(code, Some(2), "{output}");
    assert!(output.contains("/nonexistent/grw.json"), "{output}");
}

#[test]
fn help_lists_the_flags() {
    let (code, output) = run_to_exit(None, &["--help"], Duration::from_secs(30));
    assert_eq!(code, Some(0), "{output}");
    for flag in [
        "--config",
        "--listen-port",
        "--replay",
        "--kubeconfig",
        "--log-level",
        "--watch",
    ] {
        assert!(output.contains(flag), "{flag}: {output}");
    }
}

#[test]
fn an_unreadable_recording_is_reported() {
    let (code, output) = run_to_exit(
        None,
        &["--replay", "/nonexistent.jsonl", "--listen-port", "0"],
        Duration::from_secs(30),
    );
    assert_eq!(code, Some(1), "{output}");
    assert!(
        output.contains(
            "cannot read the recording /nonexistent.jsonl: No such file or directory (os error 2)"
        ),
        "{output}"
    );
}

#[tokio::test]
async fn unknown_keys_are_warned_about_and_startup_goes_on() {
    let recording = bundled_recording();
    let grw = Grw::start(
        json!({"listenPortt": 1, "k8sClientConfig": {"autoReconnect": true, "colour": "blue"}}),
        &["--replay", recording.to_str().unwrap()],
    )
    .await;
    grw.wait_ready(Duration::from_secs(30)).await;
    let logs = grw.logs();
    assert!(
        logs.contains("config key `listenPortt` is not known and is ignored"),
        "{logs}"
    );
    assert!(logs.contains("`k8sClientConfig.colour`"), "{logs}");
    assert!(!logs.contains("autoReconnect"), "{logs}");
}

#[test]
fn a_client_certificate_tls_refuses_is_explained_once() {
    let dir = tempfile::tempdir().unwrap();
    let material =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../host/src/kube/connect");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: ctx\n\
             clusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:6443'}}}}]\n\
             users: [{{name: old-admin, user: {{client-certificate: {m}/v1-cert.pem, client-key: {m}/v1-key.pem}}}}]\n\
             contexts: [{{name: ctx, context: {{cluster: c, user: old-admin}}}}]\n",
            m = material.display()
        ),
    )
    .unwrap();
    for log_type in ["json", "hidden"] {
        let (code, output) = run_to_exit(
            None,
            &[
                "--kubeconfig",
                kubeconfig.to_str().unwrap(),
                "--watch",
                "v1/Pod",
                "--log-type",
                log_type,
            ],
            Duration::from_secs(30),
        );
        assert_eq!(code, Some(1), "{output}");
        assert_eq!(
            output.matches("is an X.509 version 1 certificate").count(),
            1,
            "said once ({log_type}): {output}"
        );
        assert!(
            output.contains("of user `old-admin` in the kubeconfig"),
            "{output}"
        );
        assert!(
            output.contains("issue it again as a version 3 certificate"),
            "{output}"
        );
    }
}

/// An outbox written by a newer GRW is refused at start-up, with what to
/// do, and left as it is (a newer GRW started on it later delivers it).
#[test]
fn an_outbox_of_a_newer_format_stops_start_up_and_is_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    drop(grw::notify::Outbox::open(Some(&data)).unwrap());
    let file = data.join(grw::notify::outbox::FILE_NAME);
    let newer = grw::notify::outbox::FORMAT + 1;
    let set_format = |format: u32| {
        let db = redb::Database::create(&file).unwrap();
        let txn = db.begin_write().unwrap();
        let meta: redb::TableDefinition<&str, u32> = redb::TableDefinition::new("meta");
        txn.open_table(meta)
            .unwrap()
            .insert("format", format)
            .unwrap();
        txn.commit().unwrap();
    };
    set_format(newer);
    let config = json!({
        "logType": "hidden",
        "replayFile": bundled_recording(),
        "dataDir": data,
        "subscriptions": [{"name": "a", "kind": "Pod", "webhook": {"url": "http://127.0.0.1:9/"}}],
    });
    let (code, output) = run_to_exit(Some(&config.to_string()), &[], Duration::from_secs(30));
    assert_eq!(code, Some(1), "{output}");
    assert!(
        output.contains(&format!(
            "grw: the outbox {} has format {newer}, written by a newer GRW; this GRW reads format {} and older. Run a GRW at least as new as the one that wrote it, or move the file away",
            file.display(),
            newer - 1
        )),
        "{output}"
    );
    assert!(!output.contains("panicked"), "{output}");
    // Still the newer format, with what it held: the newer GRW goes on.
    use redb::ReadableDatabase;
    let db = redb::Database::create(&file).unwrap();
    let txn = db.begin_read().unwrap();
    let meta: redb::TableDefinition<&str, u32> = redb::TableDefinition::new("meta");
    let format = txn
        .open_table(meta)
        .unwrap()
        .get("format")
        .unwrap()
        .map(|f| f.value());
    assert_eq!(format, Some(newer));
    let subscriptions: redb::TableDefinition<&str, &[u8]> =
        redb::TableDefinition::new("subscriptions");
    assert!(txn.open_table(subscriptions).is_ok());
}
