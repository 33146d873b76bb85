use serde_json::json;

use super::*;
use crate::config::{NotifierConfig, NotifierFilter, WatchedResource};

fn compile(value: Value) -> Result<Subscription, String> {
    let definition = SubscriptionConfig::from_json(&value).map_err(|e| e.to_string())?;
    Ok(Subscription::new(&definition, Source::Api))
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

fn compat_config(filter: Option<Value>) -> Config {
    Config {
        initial_resources: vec![WatchedResource {
            gvk: Gvk::new("", "v1", "Pod"),
            options: WatchOptions::default(),
            notifiers: vec![NotifierConfig {
                webhook_urls: vec!["http://a/pods".into(), "http://b/pods".into()],
                event_types: vec![ChangeType::Deleted],
                filter: filter.map(|f| NotifierFilter::from_json(f).unwrap()),
                match_conditions: vec![],
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
    }))));
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
    }))));
    assert_eq!(
        subs.iter().map(|s| &s.name).collect::<Vec<_>>(),
        again.iter().map(|s| &s.name).collect::<Vec<_>>()
    );
    assert!(subs[0].name.starts_with("config-pod-"));
    assert_ne!(subs[0].name, subs[1].name);
}

#[test]
fn compat_names_do_not_change() {
    // The name of a compat subscription is derived from its definition: a
    // new version must derive the same, or the queue is not found again.
    let subs = from_compat_config(&compat_config(Some(json!({"namespace": "shop"}))));
    assert_eq!(
        subs[0].definition,
        json!({
            "configKey": "initialWatchingResources[0].notifiers[0]",
            "kind": "v1/Pod",
            "webhookUrl": "http://a/pods",
            "eventTypes": ["DELETED"],
            "filter": {"namespace": "shop"},
        })
    );
    let names: Vec<&str> = subs.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "config-pod-632317d8",
            "config-pod-5b502965",
            "config-pod-df09270d"
        ]
    );
}

#[test]
fn compat_notifiers_carry_their_match_conditions() {
    let mut config = compat_config(None);
    let without: Vec<String> = from_compat_config(&config)
        .into_iter()
        .map(|s| s.name)
        .collect();
    config.initial_resources[0].notifiers[0].match_conditions = serde_json::from_value(json!([
        {"name": "restarted", "expression": "object.status.containerStatuses.exists(c, c.restartCount > 3)"}
    ]))
    .unwrap();
    let subs = from_compat_config(&config);
    for sub in &subs[..2] {
        assert_eq!(sub.match_conditions.len(), 1);
        assert_eq!(sub.match_conditions[0].name, "restarted");
        assert_eq!(
            sub.definition["matchConditions"],
            json!([{"name": "restarted", "expression": "object.status.containerStatuses.exists(c, c.restartCount > 3)"}])
        );
    }
    // Other conditions, another subscription; the global URL's is the same.
    assert_ne!(subs[0].name, without[0]);
    assert_ne!(subs[1].name, without[1]);
    assert_eq!(subs[2].name, without[2]);
    assert!(subs[2].match_conditions.is_empty());
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
