use super::*;
use std::net::Ipv6Addr;

use crate::config::de::SHOWN_VALUE_CHARS;
use crate::config::values::is_http_url;
use crate::event::ChangeType;
use serde_json::json;

fn no_env(_: &str) -> Option<String> {
    None
}

fn env_of<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    move |name| {
        pairs
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.to_string())
    }
}

fn parse_ok(text: &str) -> (Config, Vec<String>) {
    parse(text, &no_env).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn parse_err(text: &str) -> String {
    match parse(text, &no_env) {
        Ok((config, _)) => panic!("{text}: accepted as {config:?}"),
        Err(e) => e.to_string(),
    }
}

const FULL: &str = r#"{
  "minLogLevel": "debug",
  "logType": "pretty",
  "listenAddress": "0.0.0.0",
  "listenPort": 8080,
  "consoleUrl": "https://grw.example.com/",
  "initialWatchingResources": [
    {
      "group": "core", "version": "v1", "kind": "Pod",
      "watchOptions": {
        "namespace": "shop",
        "labelSelector": "app=web",
        "fieldSelector": "status.phase=Running",
        "additionalK8sApiQueryParams": {"timeoutSeconds": 300, "pretty": false, "limit": "500", "skipped": null}
      },
      "notifiers": [{
        "webhookUrls": ["http://hooks.local:8080/pods", "https://[::1]/pods"],
        "eventTypes": ["DELETED", "ADDED", "DELETED"],
        "filter": {"namespace": "shop", "labelSelectors": ["app", "web"]}
      }]
    },
    {"group": "apps", "version": "v1", "kind": "Deployment"},
    {"group": "", "version": "v1", "kind": "ConfigMap",
     "notifiers": [{"webhookUrls": ["https://example.com/cm"]}]}
  ],
  "globalWebhookUrls": ["https://user:pw@example.com/all?x=1"],
  "enableSyncApiGroups": false,
  "apiGroupsSyncIntervalSecond": 2.5,
  "k8sClientConfig": {
    "autoInClusterConfig": true,
    "authType": "ClientCertificate",
    "kubeConfigFilePath": "~/kube/cfg",
    "apiServerUrl": "https://10.0.0.1:6443",
    "tokenFilePath": "/var/run/token",
    "caCertPath": "~/ca.crt",
    "caCertDataPemBase64": "Y2EtcGVt",
    "clientCertPath": "/pki/c.crt",
    "clientKeyPath": "/pki/c.key",
    "clientCertDataPemBase64": "Y2VydC1wZW0=",
    "clientKeyDataPemBase64": "a2V5LXBlbQ",
    "autoKeepAlive": true,
    "autoReconnect": false
  },
  "keepManagedFields": true,
  "streamingList": false,
  "onDemandWatch": false,
  "onDemandIdleSeconds": 90,
  "maxOnDemandWatches": 7,
  "watchStreamMaxSeconds": 120,
  "allowOnDemandSecrets": true,
  "syncTimeoutSecond": 12,
  "apiTokenFile": "~/grw.token",
  "apiAuth": "token",
  "delegatedAuth": {"cacheAllowedSeconds": 30, "cacheDeniedSeconds": 0.5, "tokenCacheSeconds": 60, "cacheMaxEntries": 100, "widen": false, "maxConcurrentReviews": 4, "maxQueuedReviews": 0},
  "tlsListener": {"address": "::", "port": 9443, "certFile": "~/tls.crt", "keyFile": "/tls/tls.key", "auth": "token"},
  "replayFile": "/data/events.jsonl",
  "pluginDir": "/plugins",
  "builtinAnalyzers": ["services", "ownership"],
  "pluginCacheDir": "/cache",
  "pluginCacheMaxBytes": 200000000,
  "pluginAllowedHosts": ["hooks.slack.com", "*.example.com:8443"],
  "dataDir": "~/grw-data",
  "subscriptions": [{"name": "a", "kind": "Pod", "webhook": {"url": "http://x"}}],
  "eventHistorySize": 0,
  "eventHistoryBytes": 1000,
  "maxRequestBodyBytes": 4096,
  "notificationBufferBytes": 1000000,
  "subscriptionPendingBytes": 5000000,
  "subscriptionDeadLetterBytes": 0,
  "journal": {"enabled": false, "maxAgeSeconds": 3600, "maxBytes": 5000, "events": false,
    "kinds": [{"group": "coordination.k8s.io", "kind": "Lease", "journal": true, "maxAgeSeconds": 60, "maxBytes": 100}]}
}"#;

#[test]
fn full_config_sets_every_key() {
    let env = env_of(&[("HOME", "/home/u")]);
    let (config, warnings) = parse(FULL, &env).unwrap();
    assert_eq!(warnings, Vec::<String>::new());
    let want = Config {
        log_level: LogLevel::Debug,
        log_type: LogType::Pretty,
        listen_address: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        listen_port: 8080,
        kube_api_path_prefix: "/kube".into(),
        console_url: Some("https://grw.example.com".into()),
        initial_resources: vec![
            WatchedResource {
                gvk: Gvk::new("", "v1", "Pod"),
                options: WatchOptions {
                    namespace: Some("shop".into()),
                    label_selector: Some("app=web".parse().unwrap()),
                    field_selector: Some("status.phase=Running".parse().unwrap()),
                    extra_params: vec![
                        ("limit".into(), "500".into()),
                        ("pretty".into(), "false".into()),
                        ("timeoutSeconds".into(), "300".into()),
                    ],
                },
                notifiers: vec![NotifierConfig {
                    webhook_urls: vec![
                        "http://hooks.local:8080/pods".into(),
                        "https://[::1]/pods".into(),
                    ],
                    event_types: vec![ChangeType::Deleted, ChangeType::Added],
                    filter: Some(
                        NotifierFilter::from_json(
                            serde_json::json!({"namespace": "shop", "labelSelectors": ["app", "web"]}),
                        )
                        .unwrap(),
                    ),
                    match_conditions: vec![],
                }],
            },
            WatchedResource {
                gvk: Gvk::new("apps", "v1", "Deployment"),
                options: WatchOptions::default(),
                notifiers: vec![],
            },
            WatchedResource {
                gvk: Gvk::new("", "v1", "ConfigMap"),
                options: WatchOptions::default(),
                notifiers: vec![NotifierConfig {
                    webhook_urls: vec!["https://example.com/cm".into()],
                    event_types: vec![],
                    filter: None,
                    match_conditions: vec![],
                }],
            },
        ],
        global_webhook_urls: vec!["https://user:pw@example.com/all?x=1".into()],
        sync_api_groups: false,
        api_groups_sync_interval: Duration::from_millis(2500),
        client: ClientConfig {
            in_cluster: true,
            auth_type: Some(AuthType::ClientCertificate),
            kubeconfig_path: Some(PathBuf::from("/home/u/kube/cfg")),
            api_server_url: Some("https://10.0.0.1:6443".into()),
            token_file: Some(PathBuf::from("/var/run/token")),
            ca_cert_path: Some(PathBuf::from("/home/u/ca.crt")),
            ca_cert_pem: Some(b"ca-pem".to_vec()),
            client_cert_path: Some(PathBuf::from("/pki/c.crt")),
            client_key_path: Some(PathBuf::from("/pki/c.key")),
            client_cert_pem: Some(b"cert-pem".to_vec()),
            client_key_pem: Some(b"key-pem".to_vec()),
        },
        keep_managed_fields: true,
        streaming_list: false,
        on_demand_watch: false,
        allow_on_demand_secrets: true,
        sync_timeout: Duration::from_secs(12),
        on_demand_idle: Duration::from_secs(90),
        max_on_demand_watches: 7,
        watch_stream_max: Duration::from_secs(120),
        api_token_file: Some(PathBuf::from("/home/u/grw.token")),
        api_auth: Some(ApiAuth::Token),
        delegated_auth: DelegatedAuth {
            cache_allowed: Duration::from_secs(30),
            cache_denied: Duration::from_millis(500),
            token_cache: Duration::from_secs(60),
            cache_max_entries: 100,
            widen: false,
            max_concurrent_reviews: 4,
            max_queued_reviews: 0,
        },
        tls_listener: Some(TlsListener {
            address: IpAddr::V6(Ipv6Addr::UNSPECIFIED),
            port: 9443,
            cert_file: PathBuf::from("/home/u/tls.crt"),
            key_file: PathBuf::from("/tls/tls.key"),
            auth: ApiAuth::Token,
        }),
        replay_file: Some(PathBuf::from("/data/events.jsonl")),
        plugin_dir: Some(PathBuf::from("/plugins")),
        plugin_cache_max_bytes: 200_000_000,
        builtin_analyzers: vec!["services".into(), "ownership".into()],
        plugin_cache_dir: Some(PathBuf::from("/cache")),
        plugin_allowed_hosts: AllowedHosts::parse(
            "pluginAllowedHosts",
            &["hooks.slack.com", "*.example.com:8443"],
        )
        .unwrap(),
        data_dir: Some(PathBuf::from("/home/u/grw-data")),
        subscriptions: vec![
            SubscriptionConfig::from_json(&serde_json::json!(
                {"name": "a", "kind": "Pod", "webhook": {"url": "http://x"}}
            ))
            .unwrap(),
        ],
        event_history_size: 0,
        event_history_bytes: 1000,
        max_request_body_bytes: 4096,
        notification_buffer_bytes: 1_000_000,
        subscription_pending_bytes: 5_000_000,
        subscription_dead_letter_bytes: 0,
        leader_election: None,
        queries: Queries::default(),
        journal: JournalConfig {
            enabled: false,
            max_age: Duration::from_secs(3600),
            max_bytes: Some(5000),
            events: false,
            kinds: vec![JournalKind {
                group: "coordination.k8s.io".into(),
                kind: "Lease".into(),
                journal: Some(true),
                max_age: Some(Duration::from_secs(60)),
                max_bytes: Some(100),
            }],
        },
    };
    assert_eq!(config, want);
    assert_eq!(config.initial_resources[0].gvk.group_or_core(), "core");
}

#[test]
fn empty_object_gives_every_default() {
    let (config, warnings) = parse_ok("{}");
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(config.log_level, LogLevel::Info);
    assert_eq!(config.log_type, LogType::Json);
    assert_eq!(
        config.listen_address,
        "127.0.0.1".parse::<IpAddr>().unwrap()
    );
    assert_eq!(config.listen_port, 3000);
    assert_eq!(config.kube_api_path_prefix, "/kube");
    assert_eq!(config.console_url, None);
    assert!(config.initial_resources.is_empty());
    assert!(config.global_webhook_urls.is_empty());
    assert!(config.sync_api_groups);
    assert_eq!(config.api_groups_sync_interval, Duration::from_secs(30));
    assert_eq!(config.client, ClientConfig::default());
    assert!(!config.client.in_cluster);
    assert_eq!(config.client.auth_type, None);
    assert_eq!(config.client.kubeconfig_path, None);
    assert!(!config.keep_managed_fields);
    assert!(config.on_demand_watch);
    assert!(!config.allow_on_demand_secrets);
    assert_eq!(config.sync_timeout, Duration::from_secs(30));
    assert_eq!(config.on_demand_idle, Duration::from_secs(600));
    assert_eq!(config.max_on_demand_watches, 100);
    assert_eq!(config.watch_stream_max, Duration::from_secs(3600));
    assert_eq!(config.api_token_file, None);
    assert_eq!(config.api_auth, None);
    assert_eq!(config.api_auth(), ApiAuth::None);
    assert_eq!(
        config.delegated_auth,
        DelegatedAuth {
            cache_allowed: Duration::from_secs(10),
            cache_denied: Duration::from_secs(10),
            token_cache: Duration::from_secs(10),
            cache_max_entries: 8192,
            widen: true,
            max_concurrent_reviews: 32,
            max_queued_reviews: 256,
        }
    );
    assert_eq!(config.tls_listener, None);
    assert!(!config.delegates_access());
    assert_eq!(config.replay_file, None);
    assert_eq!(config.event_history_size, 10_000);
    assert_eq!(config.event_history_bytes, 64 << 20);
    assert_eq!(config.max_request_body_bytes, 1_048_576);
    assert_eq!(config.notification_buffer_bytes, 64 << 20);
    assert_eq!(config.subscription_pending_bytes, 256 << 20);
    assert_eq!(config.subscription_dead_letter_bytes, 64 << 20);
    assert_eq!(
        config.builtin_analyzers,
        ["istio-gateways", "ownership", "references", "services"]
    );
    assert_eq!(config, Config::default());
    let (off, _) = parse_ok(r#"{"builtinAnalyzers": false}"#);
    assert!(off.builtin_analyzers.is_empty());
    let (on, _) = parse_ok(r#"{"builtinAnalyzers": true}"#);
    assert_eq!(on.builtin_analyzers, config.builtin_analyzers);
}

#[test]
fn listeners_choose_how_callers_are_checked() {
    // The default follows apiTokenFile.
    let (config, warnings) = parse_ok(r#"{"apiTokenFile": "/t"}"#);
    assert_eq!((config.api_auth(), warnings.len()), (ApiAuth::Token, 0));
    let (config, _) = parse_ok(r#"{"apiAuth": "delegated"}"#);
    assert_eq!(config.api_auth(), ApiAuth::Delegated);
    assert!(config.delegates_access());
    let (config, warnings) = parse_ok(r#"{"apiAuth": "none", "apiTokenFile": "/t"}"#);
    assert_eq!(config.api_auth(), ApiAuth::None);
    assert_eq!(
        warnings,
        [
            "config key `apiTokenFile` is set but no listener checks it (`apiAuth` and `tlsListener.auth` are not `token`); it is ignored"
        ]
    );

    // The TLS listener: everywhere, port 8443, delegated, unless told otherwise.
    let (config, _) =
        parse_ok(r#"{"tlsListener": {"certFile": "/tls/tls.crt", "keyFile": "/tls/tls.key"}}"#);
    assert_eq!(
        config.tls_listener,
        Some(TlsListener {
            address: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            port: 8443,
            cert_file: PathBuf::from("/tls/tls.crt"),
            key_file: PathBuf::from("/tls/tls.key"),
            auth: ApiAuth::Delegated,
        })
    );
    assert_eq!(config.api_auth(), ApiAuth::None);
    assert!(config.delegates_access());
    let (config, warnings) = parse_ok(
        r#"{"apiTokenFile": "/t", "apiAuth": "none", "tlsListener": {"address": "127.0.0.1:9000", "certFile": "/c", "keyFile": "/k", "auth": "token"}}"#,
    );
    assert!(warnings.is_empty(), "{warnings:?}");
    let tls = config.tls_listener.unwrap();
    assert_eq!(
        (tls.address.to_string(), tls.port),
        ("127.0.0.1".into(), 9000)
    );
}

#[test]
fn access_settings_that_cannot_work_are_refused() {
    let cases = [
        (
            r#"{"apiAuth": "token"}"#,
            "config key `apiAuth`: `token` checks the shared bearer token of `apiTokenFile`, which is not set; set `apiTokenFile` (or --api-token-file), or choose `none` or `delegated`",
        ),
        (
            r#"{"apiAuth": "delegated", "replayFile": "/r.jsonl"}"#,
            "config key `apiAuth`: `delegated` asks the API server who each caller is and what it may read, and a replayed recording (`replayFile`, --replay) has no API server; choose `none` or `token`",
        ),
        (
            r#"{"replayFile": "/r.jsonl", "tlsListener": {"certFile": "/c", "keyFile": "/k"}}"#,
            "config key `tlsListener.auth`: `delegated` asks the API server who each caller is and what it may read, and a replayed recording (`replayFile`, --replay) has no API server; choose `none` or `token`",
        ),
        (
            r#"{"tlsListener": {"certFile": "/c", "keyFile": "/k", "auth": "token"}}"#,
            "config key `tlsListener.auth`: `token` checks the shared bearer token of `apiTokenFile`, which is not set; set `apiTokenFile` (or --api-token-file), or choose `none` or `delegated`",
        ),
        (
            r#"{"apiAuth": "basic"}"#,
            "config key `apiAuth`: expected one of none, token, delegated, got \"basic\"",
        ),
        (
            r#"{"tlsListener": {"keyFile": "/k"}}"#,
            "config key `tlsListener.certFile`: required: the path of the certificate chain the listener presents (PEM); the key is missing",
        ),
        (
            r#"{"tlsListener": {"certFile": "/c", "keyFile": ""}}"#,
            "config key `tlsListener.keyFile`: required: the path of the certificate's private key (PEM); the key is missing",
        ),
        (
            r#"{"tlsListener": {"certFile": "/c", "keyFile": "/k", "port": 3000}}"#,
            "config key `tlsListener.port`: 3000 is the port of the API listener too (`listenPort`); choose another",
        ),
        (
            r#"{"tlsListener": {"certFile": "/c", "keyFile": "/k", "port": 0}}"#,
            "config key `tlsListener.port`: expected a number from 1 to 65535, got 0",
        ),
        (
            r#"{"tlsListener": "on"}"#,
            "config key `tlsListener`: expected an object, got \"on\"",
        ),
        (
            r#"{"delegatedAuth": {"cacheAllowedSeconds": 0}}"#,
            "config key `delegatedAuth.cacheAllowedSeconds`: expected a positive number of seconds, got 0",
        ),
        (
            r#"{"delegatedAuth": {"cacheMaxEntries": 0}}"#,
            "config key `delegatedAuth.cacheMaxEntries`: expected a whole number from 1 up, got 0",
        ),
        (
            r#"{"delegatedAuth": {"widen": "no"}}"#,
            r#"config key `delegatedAuth.widen`: expected true or false, got "no""#,
        ),
        (
            r#"{"delegatedAuth": {"maxConcurrentReviews": 0}}"#,
            "config key `delegatedAuth.maxConcurrentReviews`: expected a whole number from 1 up, got 0",
        ),
        (
            r#"{"delegatedAuth": {"maxQueuedReviews": -1}}"#,
            "config key `delegatedAuth.maxQueuedReviews`: expected a whole number from 0 up, got -1",
        ),
    ];
    for (text, want) in cases {
        assert_eq!(parse_err(text), want, "{text}");
    }
    // Two listeners on one port of different addresses are fine.
    let (config, _) = parse_ok(
        r#"{"listenAddress": "127.0.0.1", "tlsListener": {"address": "10.0.0.1", "port": 3000, "certFile": "/c", "keyFile": "/k"}}"#,
    );
    assert_eq!(config.tls_listener.unwrap().port, 3000);
}

#[test]
fn example_of_the_earlier_grw_parses_without_warnings() {
    let text = r#"{
      "minLogLevel": "trace",
      "logType": "json",
      "listenPort": 3000,
      "initialWatchingResources": [
        {
          "group": "core", "version": "v1", "kind": "Pod",
          "watchOptions": null,
          "notifiers": [{
            "webhookUrls": ["http://localhost:8080/PodUpdated"],
            "filter": {"namespace": "default"},
            "eventTypes": ["ADDED", "MODIFIED", "DELETED"]
          }]
        },
        {"group": "apps", "version": "v1", "kind": "Deployment"}
      ],
      "globalWebhookUrls": ["http://localhost:8080/k8sResourceUpdated"],
      "enableSyncApiGroups": true,
      "apiGroupsSyncIntervalSecond": 30,
      "k8sClientConfig": {
        "apiServerUrl": "https://kubernetes.default",
        "authType": "KubeConfig",
        "kubeConfigFilePath": "",
        "autoInClusterConfig": false,
        "autoKeepAlive": true,
        "autoReconnect": false,
        "caCertDataPemBase64": "",
        "caCertPath": "/var/run/secrets/kubernetes.io/serviceaccount/ca.crt",
        "clientCertDataPemBase64": "",
        "clientCertPath": "/etc/kubernetes/pki/apiserver.crt",
        "clientKeyDataPemBase64": "",
        "clientKeyPath": "/etc/kubernetes/pki/apiserver.key",
        "tokenFilePath": "/var/run/secrets/kubernetes.io/serviceaccount/token"
      }
    }"#;
    let (config, warnings) = parse_ok(text);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(config.log_level, LogLevel::Trace);
    let kinds: Vec<String> = config
        .initial_resources
        .iter()
        .map(|r| r.gvk.to_string())
        .collect();
    assert_eq!(kinds, ["v1/Pod", "apps/v1/Deployment"]);
    assert_eq!(config.initial_resources[0].options, WatchOptions::default());
    assert_eq!(
        config.initial_resources[0].notifiers[0].event_types,
        [ChangeType::Added, ChangeType::Modified, ChangeType::Deleted]
    );
    assert_eq!(config.client.auth_type, Some(AuthType::KubeConfig));
    assert_eq!(config.client.kubeconfig_path, None);
    assert_eq!(config.client.ca_cert_pem, None);
    assert_eq!(config.client.client_key_pem, None);
}

#[test]
fn the_kubernetes_api_prefix_may_be_deeper() {
    let (config, _) = parse_ok(r#"{"kubeApiPathPrefix": "/grw-1/kube.v1"}"#);
    assert_eq!(config.kube_api_path_prefix, "/grw-1/kube.v1");
}

#[test]
fn the_console_url_is_an_absolute_http_url_kept_without_trailing_slash() {
    for (written, kept) in [
        ("https://grw.example.com", "https://grw.example.com"),
        ("https://grw.example.com/", "https://grw.example.com"),
        (
            "http://10.0.0.7:3000/tools/grw/",
            "http://10.0.0.7:3000/tools/grw",
        ),
        ("HTTPS://GRW.Example.COM//", "https://grw.example.com"),
    ] {
        let (config, warnings) = parse_ok(&json!({ "consoleUrl": written }).to_string());
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(config.console_url.as_deref(), Some(kept), "{written}");
    }
    for (value, message) in [
        (
            json!("grw.example.com"),
            r#"config key `consoleUrl`: "grw.example.com" is not an absolute http(s) URL; give the console's base URL as users reach it, e.g. https://grw.example.com"#,
        ),
        (
            json!("ftp://grw.example.com"),
            r#"config key `consoleUrl`: "ftp://grw.example.com" is not an absolute http(s) URL;"#,
        ),
        (
            json!("/ui/"),
            r#"config key `consoleUrl`: "/ui/" is not an absolute http(s) URL;"#,
        ),
        (
            json!(""),
            r#"config key `consoleUrl`: "" is not an absolute http(s) URL;"#,
        ),
        (
            json!("https://grw.example.com/?team=a"),
            r#"config key `consoleUrl`: "https://grw.example.com/?team=a" has a query (`?...`); give the base URL only: GRW appends `/ui/open?kind=...`"#,
        ),
        (
            json!("https://grw.example.com/#top"),
            r#"config key `consoleUrl`: "https://grw.example.com/#top" has a fragment (`#...`); give the base URL only: GRW appends `/ui/open?kind=...`"#,
        ),
        (
            json!(8080),
            "config key `consoleUrl`: expected an absolute http(s) URL, got 8080",
        ),
    ] {
        let error = parse_err(&json!({ "consoleUrl": value }).to_string());
        assert!(error.starts_with(message), "{value}: {error}");
    }
}

#[test]
fn bad_values_are_errors_naming_the_key() {
    let pod = r#"{"version": "v1", "kind": "Pod"}"#;
    let cases: Vec<(String, &str)> = vec![
        (
            r#"{"listenPort": "abc"}"#.into(),
            r#"config key `listenPort`: expected a number from 1 to 65535, got "abc""#,
        ),
        (r#"{"listenPort": 0}"#.into(), "config key `listenPort`: expected a number from 1 to 65535, got 0"),
        (r#"{"listenPort": 70000}"#.into(), "expected a number from 1 to 65535, got 70000"),
        (r#"{"listenPort": 80.5}"#.into(), "expected a number from 1 to 65535, got 80.5"),
        (
            r#"{"kubeApiPathPrefix": "kube"}"#.into(),
            r#"config key `kubeApiPathPrefix`: expected a path such as /kube: segments of letters, digits, `-`, `.` or `_` after each `/`, no `/` at the end, got "kube""#,
        ),
        (
            r#"{"kubeApiPathPrefix": "/kube/"}"#.into(),
            r#"config key `kubeApiPathPrefix`: expected a path such as /kube: segments of letters, digits, `-`, `.` or `_` after each `/`, no `/` at the end, got "/kube/""#,
        ),
        (
            r#"{"kubeApiPathPrefix": "/api/kube"}"#.into(),
            r#"config key `kubeApiPathPrefix`: "/api/kube" begins like GRW's own routes (/api/...); choose another first segment, such as /kube"#,
        ),
        (
            r#"{"minLogLevel": "verbose"}"#.into(),
            r#"config key `minLogLevel`: expected one of silly, trace, debug, info, warn, error, fatal, got "verbose""#,
        ),
        (r#"{"minLogLevel": "INFO"}"#.into(), r#"config key `minLogLevel`: expected one of"#),
        (
            r#"{"builtinAnalyzers": "all"}"#.into(),
            r#"config key `builtinAnalyzers`: expected true, false, or an array of built-in analyzer names, got "all""#,
        ),
        (
            r#"{"builtinAnalyzers": ["ownership", "owners"]}"#.into(),
            r#"config key `builtinAnalyzers[1]`: GRW has no built-in analyzer "owners"; it has istio-gateways, ownership, references, services"#,
        ),
        (
            r#"{"builtinAnalyzers": ["services", "services"]}"#.into(),
            "config key `builtinAnalyzers`: names `services` twice",
        ),
        (r#"{"minLogLevel": 3}"#.into(), "got 3"),
        (
            r#"{"logType": "xml"}"#.into(),
            r#"config key `logType`: expected one of json, pretty, hidden, got "xml""#,
        ),
        (
            r#"{"listenAddress": "localhost"}"#.into(),
            r#"config key `listenAddress`: expected an IP address such as 127.0.0.1 or ::, got "localhost""#,
        ),
        (r#"{"listenAddress": "0.0.0.0:0"}"#.into(), "config key `listenAddress`: expected an IP address"),
        (r#"{"listenAddress": 127}"#.into(), "config key `listenAddress`: expected an IP address"),
        (
            r#"{"initialWatchingResources": {}}"#.into(),
            "config key `initialWatchingResources`: expected an array of resources to watch, got {}",
        ),
        (
            r#"{"initialWatchingResources": ["v1/Pod"]}"#.into(),
            r#"config key `initialWatchingResources[0]`: expected an object with `group`, `version` and `kind`, got "v1/Pod""#,
        ),
        (
            format!(r#"{{"initialWatchingResources": [{pod}, {pod}, {{"version": "v1", "kind": ""}}]}}"#),
            r#"config key `initialWatchingResources[2].kind`: expected a non-empty string, got """#,
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1"}]}"#.into(),
            "config key `initialWatchingResources[0].kind`: expected a non-empty string; the key is missing",
        ),
        (
            r#"{"initialWatchingResources": [{"kind": "Pod"}]}"#.into(),
            "config key `initialWatchingResources[0].version`: expected a non-empty string; the key is missing",
        ),
        (
            r#"{"initialWatchingResources": [{"version": "", "kind": "Pod"}]}"#.into(),
            "config key `initialWatchingResources[0].version`: expected a non-empty string",
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": 5}]}"#.into(),
            "config key `initialWatchingResources[0].kind`: expected a non-empty string, got 5",
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod s"}]}"#.into(),
            "config key `initialWatchingResources[0].kind`: expected a name without spaces or `/`",
        ),
        (
            r#"{"initialWatchingResources": [{"group": 1, "version": "v1", "kind": "Pod"}]}"#.into(),
            "config key `initialWatchingResources[0].group`: expected an API group name",
        ),
        (
            r#"{"initialWatchingResources": [{"group": "apps/v1", "version": "v1", "kind": "Pod"}]}"#.into(),
            "config key `initialWatchingResources[0].group`: expected an API group name",
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "watchOptions": "shop"}]}"#.into(),
            r#"config key `initialWatchingResources[0].watchOptions`: expected an object, got "shop""#,
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "watchOptions": {"namespace": 3}}]}"#.into(),
            "config key `initialWatchingResources[0].watchOptions.namespace`: expected a string, got 3",
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "watchOptions": {"namespace": "a/b"}}]}"#.into(),
            "config key `initialWatchingResources[0].watchOptions.namespace`: expected a namespace name",
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "watchOptions": {"labelSelector": true}}]}"#.into(),
            "config key `initialWatchingResources[0].watchOptions.labelSelector`: expected a string, got true",
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "watchOptions": {"additionalK8sApiQueryParams": []}}]}"#.into(),
            "config key `initialWatchingResources[0].watchOptions.additionalK8sApiQueryParams`: expected an object whose values are strings, numbers or booleans, got []",
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "watchOptions": {"additionalK8sApiQueryParams": {"a": [1]}}}]}"#.into(),
            "config key `initialWatchingResources[0].watchOptions.additionalK8sApiQueryParams.a`: expected a string, number or boolean, got [1]",
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": {}}]}"#.into(),
            "config key `initialWatchingResources[0].notifiers`: expected an array of notifiers, got {}",
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{}]}]}"#.into(),
            "config key `initialWatchingResources[0].notifiers[0].webhookUrls`: expected a non-empty array of http(s) URLs; the key is missing",
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{"webhookUrls": []}]}]}"#.into(),
            "config key `initialWatchingResources[0].notifiers[0].webhookUrls`: expected a non-empty array of http(s) URLs, got []",
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{"webhookUrls": "http://a"}]}]}"#.into(),
            r#"config key `initialWatchingResources[0].notifiers[0].webhookUrls`: expected a non-empty array of http(s) URLs, got "http://a""#,
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{"webhookUrls": ["http://a", "ftp://b"]}]}]}"#.into(),
            r#"config key `initialWatchingResources[0].notifiers[0].webhookUrls[1]`: expected an http:// or https:// URL with a host, got "ftp://b""#,
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{"webhookUrls": ["http://"]}]}]}"#.into(),
            "`initialWatchingResources[0].notifiers[0].webhookUrls[0]`: expected an http:// or https:// URL with a host",
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{"webhookUrls": ["http://a"], "eventTypes": ["ADDED", "CREATED"]}]}]}"#.into(),
            r#"config key `initialWatchingResources[0].notifiers[0].eventTypes[1]`: expected one of ADDED, MODIFIED, DELETED, got "CREATED""#,
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{"webhookUrls": ["http://a"], "eventTypes": "ADDED"}]}]}"#.into(),
            "config key `initialWatchingResources[0].notifiers[0].eventTypes`: expected an array",
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{"webhookUrls": ["http://a"], "filter": "ns=a"}]}]}"#.into(),
            r#"config key `initialWatchingResources[0].notifiers[0].filter`: expected an object (the same shape as a query body), got "ns=a""#,
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{"webhookUrls": ["http://a"], "matchConditions": [{"name": "a", "expression": "objet.spec"}]}]}]}"#.into(),
            "config key `initialWatchingResources[0].notifiers[0].matchConditions[0].expression`: undeclared reference to 'objet' (line 1, column 1)",
        ),
        (
            r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod", "notifiers": [{"webhookUrls": ["http://a"], "matchConditions": [{"name": "a", "expression": "true"}, {"name": "a", "expression": "false"}]}]}]}"#.into(),
            "config key `initialWatchingResources[0].notifiers[0].matchConditions`: the name `a` is used twice; each condition needs its own",
        ),
        (
            r#"{"pluginAllowedHosts": ["ok", ""]}"#.into(),
            r#"config key `pluginAllowedHosts[1]`: expected a non-empty string, got """#,
        ),
        (
            r#"{"subscriptions": {"name": "a"}}"#.into(),
            r#"config key `subscriptions`: expected an array of subscriptions, got {"name":"a"}"#,
        ),
        (
            r#"{"globalWebhookUrls": ["hooks.local/x"]}"#.into(),
            r#"config key `globalWebhookUrls[0]`: expected an http:// or https:// URL with a host, got "hooks.local/x""#,
        ),
        (r#"{"globalWebhookUrls": "http://a"}"#.into(), "config key `globalWebhookUrls`: expected an array of http(s) URLs"),
        (
            r#"{"enableSyncApiGroups": "yes"}"#.into(),
            r#"config key `enableSyncApiGroups`: expected true or false, got "yes""#,
        ),
        (
            r#"{"apiGroupsSyncIntervalSecond": 0}"#.into(),
            "config key `apiGroupsSyncIntervalSecond`: expected a positive number of seconds, got 0",
        ),
        (r#"{"apiGroupsSyncIntervalSecond": -5}"#.into(), "expected a positive number of seconds, got -5"),
        (r#"{"apiGroupsSyncIntervalSecond": "30"}"#.into(), r#"expected a positive number of seconds, got "30""#),
        (r#"{"apiGroupsSyncIntervalSecond": 1e300}"#.into(), "expected a positive number of seconds"),
        (r#"{"k8sClientConfig": []}"#.into(), "config key `k8sClientConfig`: expected an object, got []"),
        (
            r#"{"k8sClientConfig": {"authType": "Token"}}"#.into(),
            r#"config key `k8sClientConfig.authType`: expected one of KubeConfig, BearerToken, ClientCertificate, got "Token""#,
        ),
        (
            r#"{"k8sClientConfig": {"authType": "BearerToken", "tokenFilePath": "/t"}}"#.into(),
            "config key `k8sClientConfig.apiServerUrl`: required when `authType` is BearerToken; the key is missing",
        ),
        (
            r#"{"k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": "https://k"}}"#.into(),
            "config key `k8sClientConfig.tokenFilePath`: required when `authType` is BearerToken; the key is missing",
        ),
        (
            r#"{"k8sClientConfig": {"authType": "ClientCertificate", "clientCertPath": "/c", "clientKeyPath": "/k"}}"#.into(),
            "config key `k8sClientConfig.apiServerUrl`: required when `authType` is ClientCertificate",
        ),
        (
            r#"{"k8sClientConfig": {"authType": "ClientCertificate", "apiServerUrl": "https://k"}}"#.into(),
            "config key `k8sClientConfig`: `authType` ClientCertificate needs `clientCertPath` and `clientKeyPath`, or `clientCertDataPemBase64` and `clientKeyDataPemBase64`",
        ),
        (
            r#"{"k8sClientConfig": {"authType": "ClientCertificate", "apiServerUrl": "https://k", "clientCertPath": "/c"}}"#.into(),
            "config key `k8sClientConfig.clientKeyPath`: required when `authType` is ClientCertificate",
        ),
        (
            r#"{"k8sClientConfig": {"authType": "ClientCertificate", "apiServerUrl": "https://k", "clientKeyDataPemBase64": "a2V5"}}"#.into(),
            "config key `k8sClientConfig.clientCertDataPemBase64`: required when `authType` is ClientCertificate",
        ),
        (
            r#"{"k8sClientConfig": {"apiServerUrl": "ftp://k"}}"#.into(),
            r#"config key `k8sClientConfig.apiServerUrl`: expected an http:// or https:// URL with a host, got "ftp://k""#,
        ),
        (
            r#"{"k8sClientConfig": {"apiServerUrl": "kubernetes.default"}}"#.into(),
            "config key `k8sClientConfig.apiServerUrl`: expected an http:// or https:// URL",
        ),
        (
            r#"{"k8sClientConfig": {"caCertDataPemBase64": "not base64!"}}"#.into(),
            "config key `k8sClientConfig.caCertDataPemBase64`: expected base64-encoded PEM data, but the value is not valid base64",
        ),
        (
            r#"{"k8sClientConfig": {"clientCertDataPemBase64": 12}}"#.into(),
            "config key `k8sClientConfig.clientCertDataPemBase64`: expected a string, got 12",
        ),
        (
            r#"{"k8sClientConfig": {"autoKeepAlive": "yes"}}"#.into(),
            r#"config key `k8sClientConfig.autoKeepAlive`: expected true or false, got "yes""#,
        ),
        (
            r#"{"k8sClientConfig": {"autoInClusterConfig": 1}}"#.into(),
            "config key `k8sClientConfig.autoInClusterConfig`: expected true or false, got 1",
        ),
        (r#"{"k8sClientConfig": {"tokenFilePath": []}}"#.into(), "config key `k8sClientConfig.tokenFilePath`: expected a string, got []"),
        (r#"{"keepManagedFields": 1}"#.into(), "config key `keepManagedFields`: expected true or false, got 1"),
        (r#"{"streamingList": "yes"}"#.into(), r#"config key `streamingList`: expected true or false, got "yes""#),
        (r#"{"onDemandWatch": "false"}"#.into(), "config key `onDemandWatch`: expected true or false"),
        (r#"{"allowOnDemandSecrets": 0}"#.into(), "config key `allowOnDemandSecrets`: expected true or false"),
        (r#"{"syncTimeoutSecond": "x"}"#.into(), r#"config key `syncTimeoutSecond`: expected a positive number of seconds, got "x""#),
        (r#"{"onDemandIdleSeconds": 0}"#.into(), "config key `onDemandIdleSeconds`: expected a number of seconds above 0 and at most 604800, got 0"),
        (r#"{"maxOnDemandWatches": 0}"#.into(), "config key `maxOnDemandWatches`: expected a whole number from 1 up, got 0"),
        (
            r#"{"watchStreamMaxSeconds": 100000}"#.into(),
            "config key `watchStreamMaxSeconds`: expected a number of seconds above 0 and at most 86400, got 100000",
        ),
        (r#"{"apiTokenFile": 5}"#.into(), "config key `apiTokenFile`: expected a string, got 5"),
        (r#"{"replayFile": {}}"#.into(), "config key `replayFile`: expected a string, got {}"),
        (
            r#"{"eventHistorySize": -1}"#.into(),
            "config key `eventHistorySize`: expected a whole number from 0 up, got -1",
        ),
        (r#"{"eventHistorySize": 1.5}"#.into(), "expected a whole number from 0 up, got 1.5"),
        (
            r#"{"eventHistoryBytes": "64Mi"}"#.into(),
            r#"config key `eventHistoryBytes`: expected a whole number from 0 up, got "64Mi""#,
        ),
        (
            r#"{"maxRequestBodyBytes": 0}"#.into(),
            "config key `maxRequestBodyBytes`: expected a whole number from 1 up, got 0",
        ),
        (
            r#"{"notificationBufferBytes": "64Mi"}"#.into(),
            "config key `notificationBufferBytes`: expected a whole number from 1 up, got \"64Mi\"",
        ),
        (
            r#"{"queries": {"threads": 0}}"#.into(),
            "config key `queries.threads`: expected a whole number from 1 up, got 0",
        ),
        (
            r#"{"queries": {"scanHelpers": -1}}"#.into(),
            "config key `queries.scanHelpers`: expected a whole number from 0 up, got -1",
        ),
        (
            r#"{"queries": {"budgetMillis": "10s"}}"#.into(),
            "config key `queries.budgetMillis`: expected a whole number from 1 up, got \"10s\"",
        ),
        (
            r#"{"queries": {"indexedFields": [{"kind": "Deployment", "fields": ["spec..x"]}]}}"#.into(),
            "config key `queries.indexedFields[0].fields[0]`: empty segment in field path at position 5",
        ),
        (
            r#"{"queries": {"indexedFields": [{"kind": "Deployment"}]}}"#.into(),
            "config key `queries.indexedFields[0].fields`: expected a value; the key is missing",
        ),
        (
            r#"{"subscriptionPendingBytes": 0}"#.into(),
            "config key `subscriptionPendingBytes`: expected a whole number from 1 up, got 0",
        ),
        (
            r#"{"subscriptionDeadLetterBytes": "1Gi"}"#.into(),
            "config key `subscriptionDeadLetterBytes`: expected a whole number from 0 up, got \"1Gi\"",
        ),
        ("[]".into(), "the config file must hold a JSON object at the top level, got []"),
        (r#""text""#.into(), r#"the config file must hold a JSON object at the top level, got "text""#),
        ("null".into(), "must hold a JSON object at the top level, got null"),
    ];
    for (input, want) in &cases {
        let message = parse_err(input);
        assert!(
            message.contains(want),
            "input: {input}\n  got: {message}\n want: {want}"
        );
    }
    // The first case must match exactly, not only as a part.
    assert_eq!(parse_err(&cases[0].0), cases[0].1);
}

#[test]
fn base64_errors_do_not_repeat_the_secret() {
    let message =
        parse_err(r#"{"k8sClientConfig": {"clientKeyDataPemBase64": "c2VjcmV0LWtleQ*="}}"#);
    assert!(
        message.contains("`k8sClientConfig.clientKeyDataPemBase64`"),
        "{message}"
    );
    assert!(message.contains("not valid base64"), "{message}");
    assert!(!message.contains("c2VjcmV0LWtleQ"), "{message}");
}

#[test]
fn long_values_are_shortened_in_messages() {
    let long = "x".repeat(200);
    let message = parse_err(&format!(r#"{{"listenPort": "{long}"}}"#));
    let got = message.split("got ").nth(1).unwrap();
    assert!(got.ends_with('…'), "{message}");
    assert_eq!(got.chars().count(), SHOWN_VALUE_CHARS + 1);
}

#[test]
fn invalid_json_reports_line_and_column() {
    let cases = [
        ("{\n  \"listenPort\": 3000,\n}", 3, 1),
        ("{\"listenPort\": 3000} x", 1, 22),
        ("{\n  // a comment\n}", 2, 3),
        ("", 1, 0),
    ];
    for (input, line, column) in cases {
        match parse(input, &no_env) {
            Err(ConfigError::Syntax {
                line: l,
                column: c,
                ref message,
                ..
            }) => {
                assert_eq!((l, c), (line, column), "{input:?}: {message}");
                assert!(!message.contains(" at line "), "{message}");
            }
            other => panic!("{input:?}: {other:?}"),
        }
    }
    let message = parse_err("{\n  \"listenPort\": 3000,\n}");
    assert_eq!(
        message,
        "the config file is not valid JSON: trailing comma at line 3, column 1"
    );
}

#[test]
fn unknown_keys_warn_with_full_paths() {
    let text = r#"{
      "listenPort": 3000,
      "pluginsDir": "/x",
      "initialWebHookUrls": [],
      "initialWatchingResources": [
        {"version": "v1", "kind": "Pod", "watchOption": {},
         "watchOptions": {"namespace": "a", "resync": 5},
         "notifiers": [{"webhookUrls": ["http://a"]}, {"webhookUrls": ["http://b"], "retries": 3}]}
      ],
      "k8sClientConfig": {"autoKeepAlive": true, "autoReconnect": true, "proxyUrl": "http://p"}
    }"#;
    let (config, warnings) = parse_ok(text);
    assert_eq!(
        warnings,
        [
            "config key `initialWebHookUrls` is not known and is ignored",
            "config key `pluginsDir` is not known and is ignored",
            "config key `initialWatchingResources[0].watchOption` is not known and is ignored",
            "config key `initialWatchingResources[0].watchOptions.resync` is not known and is ignored",
            "config key `initialWatchingResources[0].notifiers[1].retries` is not known and is ignored",
            "config key `k8sClientConfig.proxyUrl` is not known and is ignored",
        ]
    );
    assert_eq!(
        config.initial_resources[0].options.namespace.as_deref(),
        Some("a")
    );
    assert_eq!(config.initial_resources[0].notifiers.len(), 2);
}

#[test]
fn repeated_kinds_are_kept_with_a_warning() {
    let text = r#"{"initialWatchingResources": [
        {"group": "apps", "version": "v1", "kind": "Deployment"},
        {"version": "v1", "kind": "Pod"},
        {"group": "apps", "version": "v1", "kind": "Deployment"}
    ]}"#;
    let (config, warnings) = parse_ok(text);
    assert_eq!(config.initial_resources.len(), 3);
    assert_eq!(
        warnings,
        [
            "config key `initialWatchingResources[2]` repeats apps/v1/Deployment of `initialWatchingResources[0]`"
        ]
    );
}

#[test]
fn environment_overrides() {
    struct Case {
        env: &'static [(&'static str, &'static str)],
        file: &'static str,
        kubeconfig: Option<&'static str>,
        in_cluster: bool,
        warning: Option<&'static str>,
    }
    let file_path = r#"{"k8sClientConfig": {"kubeConfigFilePath": "/etc/kc"}}"#;
    let cases = [
        Case {
            env: &[],
            file: "{}",
            kubeconfig: None,
            in_cluster: false,
            warning: None,
        },
        Case {
            env: &[("HOME", "/home/u")],
            file: "{}",
            kubeconfig: Some("/home/u/.kube/config"),
            in_cluster: false,
            warning: None,
        },
        Case {
            env: &[("HOME", "")],
            file: "{}",
            kubeconfig: None,
            in_cluster: false,
            warning: None,
        },
        Case {
            env: &[("HOME", "/home/u")],
            file: file_path,
            kubeconfig: Some("/etc/kc"),
            in_cluster: false,
            warning: None,
        },
        Case {
            env: &[("HOME", "/home/u"), ("KUBECONFIG", "/k1")],
            file: file_path,
            kubeconfig: Some("/k1"),
            in_cluster: false,
            warning: None,
        },
        Case {
            env: &[("KUBECONFIG", "/k1:/k2")],
            file: file_path,
            kubeconfig: Some("/k1"),
            in_cluster: false,
            warning: Some(
                "environment variable KUBECONFIG names 2 files; only the first, `/k1`, is used",
            ),
        },
        Case {
            env: &[("KUBECONFIG", ":/k2")],
            file: "{}",
            kubeconfig: Some("/k2"),
            in_cluster: false,
            warning: None,
        },
        Case {
            env: &[("KUBECONFIG", ""), ("HOME", "/home/u")],
            file: file_path,
            kubeconfig: Some("/etc/kc"),
            in_cluster: false,
            warning: None,
        },
        Case {
            env: &[("KUBECONFIG", "~/k"), ("HOME", "/home/u")],
            file: "{}",
            kubeconfig: Some("/home/u/k"),
            in_cluster: false,
            warning: None,
        },
        Case {
            env: &[("AUTO_INCLUSTER_CONFIG", "true")],
            file: r#"{"k8sClientConfig": {"autoInClusterConfig": false}}"#,
            kubeconfig: None,
            in_cluster: true,
            warning: None,
        },
        Case {
            env: &[("AUTO_INCLUSTER_CONFIG", "TRUE")],
            file: "{}",
            kubeconfig: None,
            in_cluster: true,
            warning: None,
        },
        Case {
            env: &[("AUTO_INCLUSTER_CONFIG", "false")],
            file: r#"{"k8sClientConfig": {"autoInClusterConfig": true}}"#,
            kubeconfig: None,
            in_cluster: true,
            warning: None,
        },
        Case {
            env: &[("AUTO_INCLUSTER_CONFIG", "yes")],
            file: "{}",
            kubeconfig: None,
            in_cluster: false,
            warning: Some(
                "environment variable AUTO_INCLUSTER_CONFIG is \"yes\", neither `true` nor `false`; it is ignored",
            ),
        },
        Case {
            env: &[],
            file: r#"{"k8sClientConfig": {"kubeConfigFilePath": "~/kc"}}"#,
            kubeconfig: Some("~/kc"),
            in_cluster: false,
            warning: Some(
                "config key `k8sClientConfig.kubeConfigFilePath` starts with `~` but HOME is not set; the path is used as written",
            ),
        },
    ];
    for (i, case) in cases.iter().enumerate() {
        let env = env_of(case.env);
        let (config, warnings) = parse(case.file, &env).unwrap_or_else(|e| panic!("case {i}: {e}"));
        assert_eq!(
            config.client.kubeconfig_path,
            case.kubeconfig.map(PathBuf::from),
            "case {i}"
        );
        assert_eq!(config.client.in_cluster, case.in_cluster, "case {i}");
        assert_eq!(
            warnings,
            case.warning.into_iter().collect::<Vec<_>>(),
            "case {i}"
        );
    }
}

#[test]
fn accepted_forms() {
    let (config, warnings) = parse_ok(r#"{"listenAddress": "0.0.0.0:9000"}"#);
    assert_eq!(config.listen_address, IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    assert_eq!(config.listen_port, 9000);
    assert!(warnings.is_empty());

    let (config, warnings) = parse_ok(r#"{"listenAddress": "[::1]:9000", "listenPort": 3001}"#);
    assert_eq!(config.listen_address, IpAddr::V6(Ipv6Addr::LOCALHOST));
    assert_eq!(config.listen_port, 3001);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("port 3001 is used"), "{warnings:?}");

    let (config, _) =
        parse_ok(r#"{"listenAddress": "::", "listenPort": 3000.0, "eventHistorySize": 5e3}"#);
    assert_eq!(config.listen_address, IpAddr::V6(Ipv6Addr::UNSPECIFIED));
    assert_eq!(config.listen_port, 3000);
    assert_eq!(config.event_history_size, 5000);

    let (config, _) = parse_ok(r#"{"apiGroupsSyncIntervalSecond": 0.25, "syncTimeoutSecond": 90}"#);
    assert_eq!(config.api_groups_sync_interval, Duration::from_millis(250));
    assert_eq!(config.sync_timeout, Duration::from_secs(90));

    // `null` and "" count as absent.
    let (config, _) = parse_ok(
        r#"{"listenPort": null, "apiTokenFile": "", "initialWatchingResources": [
            {"group": null, "version": "v1", "kind": "Pod", "notifiers": null,
             "watchOptions": {"namespace": "", "labelSelector": null}}]}"#,
    );
    assert_eq!(config.listen_port, 3000);
    assert_eq!(config.api_token_file, None);
    assert_eq!(config.initial_resources[0].gvk, Gvk::new("", "v1", "Pod"));
    assert_eq!(config.initial_resources[0].options, WatchOptions::default());
    assert!(config.initial_resources[0].notifiers.is_empty());

    // Base64 with line breaks and without padding.
    let (config, _) = parse_ok(
        r#"{"k8sClientConfig": {"caCertDataPemBase64": "Y2Et\ncGVt", "clientCertDataPemBase64": "Y2VydC1wZW0"}}"#,
    );
    assert_eq!(config.client.ca_cert_pem.as_deref(), Some(&b"ca-pem"[..]));
    assert_eq!(
        config.client.client_cert_pem.as_deref(),
        Some(&b"cert-pem"[..])
    );

    // BearerToken with what it needs.
    let (config, _) = parse_ok(
        r#"{"k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": "http://127.0.0.1:8001", "tokenFilePath": "/t"}}"#,
    );
    assert_eq!(config.client.auth_type, Some(AuthType::BearerToken));
    assert_eq!(config.client.token_file, Some(PathBuf::from("/t")));
}

#[test]
fn http_url_check() {
    let good = [
        "http://a",
        "https://a.example.com/x?y#z",
        "HTTPS://Example.COM",
        "http://a:8080",
        "http://user:pw@a/x",
        "http://[::1]:80/x",
        "http://[fe80::1]",
        "http://10.0.0.1:6443",
    ];
    let bad = [
        "",
        "a.example.com",
        "ftp://a",
        "http://",
        "http:///x",
        "http://:80",
        "http://a b",
        "http://a:port",
        "http://a:70000",
        "http://[::1",
        "http://[zz]/",
        "http://[::1]x",
        "https//a",
    ];
    for url in good {
        assert!(is_http_url(url), "{url} should be accepted");
    }
    for url in bad {
        assert!(!is_http_url(url), "{url} should be refused");
    }
}

#[test]
fn home_expansion() {
    let cases = [
        ("~", Some("/h"), Some("/h")),
        ("~/a/b", Some("/h"), Some("/h/a/b")),
        ("~user/a", Some("/h"), Some("~user/a")),
        ("/a/~/b", Some("/h"), Some("/a/~/b")),
        ("a", None, Some("a")),
        ("~/a", None, None),
        ("~/a", Some(""), None),
    ];
    for (path, home, want) in cases {
        assert_eq!(
            expand_home(Path::new(path), home),
            want.map(PathBuf::from),
            "{path} with HOME={home:?}"
        );
    }
}

/// Values the daemon used to take as text and check later (or send to the
/// API server unchecked) are refused at load, naming the key.
#[test]
fn checked_values_are_errors_naming_the_key() {
    let resource = |extra: &str| {
        format!(r#"{{"initialWatchingResources": [{{"version": "v1", "kind": "Pod", {extra}}}]}}"#)
    };
    let notifier = |extra: &str| {
        resource(&format!(
            r#""notifiers": [{{"webhookUrls": ["http://a"], {extra}}}]"#
        ))
    };
    let subscription = |extra: &str| {
        format!(
            r#"{{"subscriptions": [{{"name": "a", "kind": "Pod", "webhook": {{"url": "http://a"}}}}, {{"name": "b", "kind": "Pod", {extra}}}]}}"#
        )
    };
    let cases: Vec<(String, &str)> = vec![
        (
            resource(r#""watchOptions": {"labelSelector": "app in (web"}"#),
            "config key `initialWatchingResources[0].watchOptions.labelSelector`: label selector `app in (web`: missing `)` to close the `(` at position 7",
        ),
        (
            resource(r#""watchOptions": {"labelSelector": "app=web,"}"#),
            "config key `initialWatchingResources[0].watchOptions.labelSelector`: label selector `app=web,`: trailing `,` at position 7",
        ),
        (
            resource(r#""watchOptions": {"fieldSelector": "status.phase>Running"}"#),
            "config key `initialWatchingResources[0].watchOptions.fieldSelector`: field selector `status.phase>Running`: unsupported operator `>` at position 12: field selectors allow only `=`, `==` and `!=`",
        ),
        (
            notifier(r#""eventTypes": ["ADDED", "CREATED"]"#),
            r#"config key `initialWatchingResources[0].notifiers[0].eventTypes[1]`: expected one of ADDED, MODIFIED, DELETED, got "CREATED""#,
        ),
        (
            notifier(r#""filter": {"labelSelectors": ["app"]}"#),
            "config key `initialWatchingResources[0].notifiers[0].filter`: `labelSelectors` must be a flat array of key, value pairs: [key1, value1, key2, value2, ...]",
        ),
        (
            notifier(r#""filter": {"colour": "red"}"#),
            "config key `initialWatchingResources[0].notifiers[0].filter`: unknown member `colour`; accepted: name, namespace, uid, labelSelectors, annotationSelectors, fieldMatches, group, version, kind",
        ),
        (
            notifier(r#""filter": {"namespace": 3}"#),
            "config key `initialWatchingResources[0].notifiers[0].filter`: `namespace` must be a string, got 3",
        ),
        (
            r#"{"pluginAllowedHosts": ["hooks.slack.com", "https://x.io/hook"]}"#.into(),
            "config key `pluginAllowedHosts[1]`: `https://x.io/hook` is a URL; write the host alone, e.g. `x.io`",
        ),
        (
            r#"{"pluginAllowedHosts": ["*"]}"#.into(),
            "config key `pluginAllowedHosts[0]`: `*` would allow every host; name the hosts, or use `*.domain` for the subdomains of one domain",
        ),
        (
            subscription(r#""webhook": {"url": "http://a"}, "filters": ["shop", "a/b"]"#),
            r#"config key `subscriptions[1].filters[1]`: expected a plugin name: 1 to 63 ASCII letters, digits, `-`, `_` or `.`, starting with a letter or digit, got "a/b""#,
        ),
        (
            subscription(r#""plugin": {"name": ""}"#),
            r#"config key `subscriptions[1].plugin.name`: expected a plugin name: 1 to 63 ASCII letters, digits, `-`, `_` or `.`, starting with a letter or digit, got """#,
        ),
        (
            subscription(r#""webhook": {"url": "http://a"}, "eventTypes": ["UPDATED"]"#),
            r#"config key `subscriptions[1].eventTypes[0]`: expected one of ADDED, MODIFIED, DELETED, got "UPDATED""#,
        ),
        (
            subscription(r#""webhook": {"url": "http://a"}, "labelSelector": "!""#),
            "config key `subscriptions[1].labelSelector`: label selector `!`: ",
        ),
        (
            subscription(r#""webhook": {"url": "http://a"}, "fieldSelector": "a""#),
            "config key `subscriptions[1].fieldSelector`: field selector `a`: ",
        ),
        (
            subscription(r#""webhook": {"url": "gopher://a"}"#),
            r#"config key `subscriptions[1].webhook.url`: expected an http:// or https:// URL with a host, got "gopher://a""#,
        ),
        (
            subscription(r#""webhook": {"url": "http://a"}, "retry": {"initialDelayMs": 90000, "maxDelaySeconds": 60}"#),
            "config key `subscriptions[1].retry`: `initialDelayMs` must be at least 1 and at most `maxDelaySeconds`, got 90000 ms",
        ),
        (
            subscription(r#""webhook": {"url": "http://a"}, "nats": {"url": "nats://n"}"#),
            "config key `subscriptions[1]`: needs exactly one destination: `webhook`, `nats`, `kafka` or `plugin`",
        ),
        (
            subscription(r#""nats": {"url": "nats://n", "stream": "a.b"}"#),
            "config key `subscriptions[1].nats`: `stream`: `a.b` is not a valid stream name",
        ),
        (
            r#"{"subscriptions": [{"name": "a", "kind": "Pod", "webhook": {"url": "http://a"}}, {"name": "a", "kind": "Pod", "plugin": {"name": "p"}}]}"#.into(),
            "config key `subscriptions[1].name`: `a` is already the name of `subscriptions[0]`; names must be unique",
        ),
    ];
    let wrong: Vec<String> = cases
        .iter()
        .filter_map(|(input, want)| {
            let message = parse_err(input);
            (!message.starts_with(want))
                .then(|| format!("input: {input}\n  got: {message}\n want: {want}"))
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn checked_values_keep_what_was_written() {
    let (config, _) = parse_ok(
        r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod",
            "watchOptions": {"labelSelector": "tier in (web, api)", "fieldSelector": "status.phase=Running"}}],
            "pluginAllowedHosts": ["Hooks.Slack.com"]}"#,
    );
    let options = &config.initial_resources[0].options;
    let labels = options.label_selector.as_ref().unwrap();
    assert_eq!(labels.as_str(), "tier in (web, api)");
    assert_eq!(labels.value().requirements().len(), 1);
    let fields = options.field_selector.as_ref().unwrap();
    assert_eq!(fields.as_str(), "status.phase=Running");
    assert_eq!(fields.value().requirements().len(), 1);
    assert!(config.plugin_allowed_hosts.allows("hooks.slack.com", 443));
}

#[test]
fn leader_election_takes_client_go_defaults_and_checks_its_periods() {
    let (config, _) = parse(r#"{"leaderElection": {}}"#, &no_env).unwrap();
    assert_eq!(config.leader_election, Some(LeaderElection::default()));
    let (config, _) = parse(
        r#"{"leaderElection": {"leaseName": "shop-grw", "leaseNamespace": "ops", "identity": "grw-0",
            "leaseDurationSeconds": 4, "renewDeadlineSeconds": 3, "retryPeriodSeconds": 0.5}}"#,
        &no_env,
    )
    .unwrap();
    let election = config.leader_election.unwrap();
    assert_eq!(
        (
            election.lease_name.as_str(),
            election.lease_namespace.as_deref(),
            election.identity.as_deref()
        ),
        ("shop-grw", Some("ops"), Some("grw-0"))
    );
    assert_eq!(election.retry_period, Duration::from_millis(500));

    assert_eq!(
        parse_err(r#"{"leaderElection": {"leaseDurationSeconds": 10}}"#),
        "config key `leaderElection.renewDeadlineSeconds`: must be shorter than leaseDurationSeconds (10), so that a leader that cannot renew stops delivering before another may take over"
    );
    assert_eq!(
        parse_err(r#"{"leaderElection": {"renewDeadlineSeconds": 2}}"#),
        "config key `leaderElection.retryPeriodSeconds`: must be shorter than renewDeadlineSeconds (2), so that the leader tries to renew more than once"
    );
    assert_eq!(
        parse_err(r#"{"leaderElection": {}, "replayFile": "r.jsonl"}"#),
        "config key `leaderElection`: a replayed recording has no API server to hold a Lease on; remove `leaderElection` or `replayFile`"
    );
    assert!(
        parse_err(r#"{"leaderElection": {"leaseName": "a b"}}"#)
            .starts_with("config key `leaderElection.leaseName`:")
    );
}

#[test]
fn queries_size_the_pool_and_add_indexed_fields() {
    let (config, warnings) = parse_ok(
        r#"{"queries": {"threads": 3, "queue": 9, "budgetMillis": 250, "scanHelpers": 0, "indexedFields": [
            {"group": "apps", "kind": "Deployment", "fields": ["spec.template.spec.serviceAccountName"]},
            {"group": "core", "kind": "Pod", "fields": ["spec.schedulerName", "spec.nodeName"]}
        ]}}"#,
    );
    assert!(warnings.is_empty(), "{warnings:?}");
    let queries = &config.queries;
    assert_eq!(
        (
            queries.threads,
            queries.queue,
            queries.budget,
            queries.scan_helpers
        ),
        (Some(3), 9, Duration::from_millis(250), Some(0))
    );
    let of = |group: &str, kind: &str| -> Vec<String> {
        queries
            .indexed_fields_of(&Gvk::new(group, "v1", kind))
            .iter()
            .map(|p| p.join("."))
            .collect()
    };
    assert_eq!(
        of("apps", "Deployment"),
        ["spec.template.spec.serviceAccountName"]
    );
    // Pods keep their two, and repeat none (the cache takes each once).
    assert_eq!(
        of("", "Pod"),
        [
            "spec.nodeName",
            "status.phase",
            "spec.schedulerName",
            "spec.nodeName"
        ]
    );
    assert!(of("", "Service").is_empty());
    let defaults = parse_ok("{}").0.queries;
    assert_eq!(
        (defaults.threads, defaults.queue, defaults.budget),
        (None, 64, Duration::from_secs(10))
    );
    assert_eq!(
        defaults.indexed_fields_of(&Gvk::new("", "v1", "Pod")).len(),
        2
    );
}

#[test]
fn events_are_watched_where_every_configured_watch_is() {
    let scope = |json: serde_json::Value| parse_ok(&json.to_string()).0.journal_events();
    let pod = |namespace: Option<&str>| {
        let mut pod = serde_json::json!({"group": "core", "version": "v1", "kind": "Pod"});
        if let Some(ns) = namespace {
            pod["watchOptions"] = serde_json::json!({"namespace": ns});
        }
        pod
    };
    assert_eq!(scope(serde_json::json!({})), Some(None));
    assert_eq!(
        scope(
            serde_json::json!({"initialWatchingResources": [pod(Some("shop")), pod(Some("shop"))]})
        ),
        Some(Some("shop".to_string()))
    );
    assert_eq!(
        scope(
            serde_json::json!({"initialWatchingResources": [pod(Some("shop")), pod(Some("web"))]})
        ),
        Some(None)
    );
    assert_eq!(
        scope(serde_json::json!({"initialWatchingResources": [pod(Some("shop")), pod(None)]})),
        Some(None)
    );
    assert_eq!(
        scope(serde_json::json!({"journal": {"events": false}})),
        None
    );
    assert_eq!(
        scope(serde_json::json!({"journal": {"enabled": false}})),
        None
    );
}
