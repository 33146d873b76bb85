use serde_json::json;

use super::*;
use crate::config::{NotifierConfig, WatchedResource};

fn compile(value: Value) -> Result<Subscription, String> {
    Spec::from_json(&value, "request body")?.compile(Source::Api)
}

#[test]
fn native_subscription_compiles() {
    let sub = compile(json!({
        "name": "shop-deployments",
        "kind": "apps/v1/Deployment",
        "namespace": "shop",
        "labelSelector": "tier in (web, api)",
        "eventTypes": ["MODIFIED", "DELETED"],
        "webhook": {
            "url": "https://hooks.example.com/grw",
            "payload": "cloudevents",
            "headers": {"Authorization": "Bearer t"},
            "secret": "s3cret",
            "timeoutSeconds": 2.5
        },
        "retry": {"initialDelayMs": 100, "maxDelaySeconds": 5}
    }))
    .unwrap();
    assert_eq!(sub.name, "shop-deployments");
    assert_eq!(sub.kind.to_string(), "apps/v1/Deployment");
    assert_eq!(
        sub.event_types,
        vec![ChangeType::Modified, ChangeType::Deleted]
    );
    assert_eq!(sub.payload, PayloadFormat::CloudEvents);
    assert_eq!(sub.query.namespace.as_deref(), Some("shop"));
    assert_eq!(
        sub.retry,
        (Duration::from_millis(100), Duration::from_secs(5))
    );
    assert_eq!(
        sub.sink,
        SinkSpec::Webhook {
            url: "https://hooks.example.com/grw".into(),
            headers: vec![("Authorization".into(), "Bearer t".into())],
            secret: Some("s3cret".into()),
            timeout: Duration::from_millis(2500),
        }
    );
    // The definition shown by the API is what was written.
    assert_eq!(sub.definition["webhook"]["payload"], "cloudevents");
}

#[test]
fn bad_subscriptions_say_what_is_wrong() {
    let base = json!({"name": "a", "kind": "Pod", "webhook": {"url": "http://127.0.0.1:9/x"}});
    let with = |patch: Value| {
        let mut v = base.clone();
        for (k, val) in patch.as_object().unwrap() {
            v[k] = val.clone();
        }
        v
    };
    let cases = [
        (json!([1]), "request body: expected a JSON object, got [1]"),
        (
            json!({"kind": "Pod", "webhook": {"url": "http://a"}}),
            "request body: missing field `name`",
        ),
        (
            with(json!({"colour": "red"})),
            "request body: unknown field `colour`",
        ),
        (
            with(json!({"name": "Has Spaces"})),
            r#"subscription name "Has Spaces" is invalid: use 1 to 63 lowercase letters, digits, `-` or `.`, starting and ending with a letter or digit"#,
        ),
        (
            with(json!({"kind": "apps//Deployment"})),
            "subscription `a`: `kind`: `apps//Deployment` is not a kind",
        ),
        (
            with(json!({"webhook": {"url": "ftp://files.example.com/x"}})),
            r#"subscription `a`: `webhook`: `url` must be an http:// or https:// URL with a host, got "ftp://files.example.com/x""#,
        ),
        (
            with(json!({"webhook": {"url": "not a url"}})),
            r#"subscription `a`: `webhook`: `url` must be an http:// or https:// URL with a host, got "not a url""#,
        ),
        (
            with(json!({"webhook": {"url": "http://a", "payload": "xml"}})),
            r#"`payload` must be one of grw, watch-event, cloudevents, got "xml""#,
        ),
        (
            with(json!({"webhook": {"url": "http://a", "headers": {"bad header": "x"}}})),
            r#"`headers`: "bad header" is not a valid header name"#,
        ),
        (
            with(json!({"webhook": {"url": "http://a", "secret": ""}})),
            "`secret` cannot be empty",
        ),
        (
            with(json!({"labelSelector": "app in (a"})),
            "subscription `a`: `labelSelector`: ",
        ),
        (
            with(json!({"fieldSelector": "spec..x=1"})),
            "subscription `a`: `fieldSelector`: ",
        ),
        (
            with(json!({"eventTypes": ["CREATED"]})),
            r#"subscription `a`: `eventTypes`: expected ADDED, MODIFIED or DELETED, got "CREATED""#,
        ),
        (
            with(json!({"nats": {"url": "nats://127.0.0.1:4222"}})),
            "subscription `a`: needs exactly one destination: `webhook`, `nats` or `plugin`",
        ),
        (
            json!({"name": "a", "kind": "Pod"}),
            "subscription `a`: needs exactly one destination: `webhook`, `nats` or `plugin`",
        ),
        (
            with(json!({"retry": {"initialDelayMs": 0}})),
            "subscription `a`: `retry`: `initialDelayMs` must be at least 1",
        ),
        (
            with(json!({"filters": [""]})),
            "subscription `a`: `filters`: plugin names cannot be empty",
        ),
    ];
    for (value, expected) in cases {
        let error = compile(value.clone()).expect_err(&value.to_string());
        assert!(
            error.contains(expected),
            "for {value}:\n  got      {error}\n  expected {expected}"
        );
    }
}

fn compat_config(filter: Option<Value>) -> Config {
    Config {
        initial_resources: vec![WatchedResource {
            gvk: Gvk::new("", "v1", "Pod"),
            options: WatchOptions::default(),
            notifiers: vec![NotifierConfig {
                webhook_urls: vec!["http://a/pods".into(), "http://b/pods".into()],
                event_types: vec!["DELETED".into()],
                filter,
            }],
        }],
        global_webhook_urls: vec!["http://all/".into()],
        ..Config::default()
    }
}

#[test]
fn compat_notifiers_become_one_subscription_per_url() {
    let subs = from_compat_config(&compat_config(Some(json!({
        "namespace": "shop",
        "labelSelectors": ["app", "web"],
        "fieldMatches": ["spec.nodeName", "n1"]
    }))))
    .unwrap();
    assert_eq!(subs.len(), 3);
    let urls: Vec<String> = subs.iter().map(Subscription::destination).collect();
    assert_eq!(urls, ["http://a/pods", "http://b/pods", "http://all/"]);
    assert!(
        subs.iter()
            .all(|s| s.payload == PayloadFormat::Grw && s.source == Source::Config)
    );
    assert_eq!(subs[0].event_types, vec![ChangeType::Deleted]);
    assert_eq!(subs[0].query.namespace.as_deref(), Some("shop"));
    assert!(subs[2].event_types.is_empty());
    // Names are stable across runs and distinct.
    let again = from_compat_config(&compat_config(Some(json!({
        "namespace": "shop",
        "labelSelectors": ["app", "web"],
        "fieldMatches": ["spec.nodeName", "n1"]
    }))))
    .unwrap();
    assert_eq!(
        subs.iter().map(|s| &s.name).collect::<Vec<_>>(),
        again.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    assert!(subs[0].name.starts_with("config-pod-"));
    assert_ne!(subs[0].name, subs[1].name);
}

#[test]
fn compat_filter_errors_name_the_config_key() {
    for (filter, expected) in [
        (
            json!({"labelSelectors": ["app"]}),
            "config key `initialWatchingResources[0].notifiers[0].filter`: `labelSelectors` must be a flat array of key, value pairs",
        ),
        (
            json!({"colour": "red"}),
            "config key `initialWatchingResources[0].notifiers[0].filter`: unknown member `colour`",
        ),
        (
            json!({"namespace": 3}),
            "`namespace` must be a string, got 3",
        ),
    ] {
        let error = from_compat_config(&compat_config(Some(filter)))
            .err()
            .unwrap();
        assert!(error.contains(expected), "got {error}");
    }
}

#[test]
fn wants_checks_types_and_conditions() {
    let sub = compile(json!({
        "name": "a", "kind": "Pod", "namespace": "shop", "labelSelector": "app=web",
        "eventTypes": ["ADDED"], "webhook": {"url": "http://a"}
    }))
    .unwrap();
    let pod = |ns: &str, app: &str| {
        StoredObject::from_value(
            json!({"metadata": {"name": "p", "namespace": ns, "labels": {"app": app}}}),
            &Gvk::new("", "v1", "Pod"),
            false,
        )
        .unwrap()
    };
    assert!(sub.wants(ChangeType::Added, &pod("shop", "web")));
    assert!(!sub.wants(ChangeType::Modified, &pod("shop", "web")));
    assert!(!sub.wants(ChangeType::Added, &pod("other", "web")));
    assert!(!sub.wants(ChangeType::Added, &pod("shop", "db")));
}
