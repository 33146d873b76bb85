use grw_sdk::testing::RecordingHttp;
use grw_sdk::{HttpResponse, Notifier};
use serde_json::{Value, json};

use super::*;

fn notifier(config: Value) -> ChatNotifier {
    ChatNotifier::init(&config.to_string())
        .unwrap_or_else(|e| panic!("{e}"))
        .0
}

fn plain() -> ChatNotifier {
    notifier(json!({"url": "https://hooks.slack.com/services/T0"}))
}

fn deployment(replicas: u32, labels: Value, rv: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "resourceVersion": rv, "generation": 4, "labels": labels},
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"name": "web", "image": "shop/web:1.4"}]}}},
        "status": {"readyReplicas": replicas},
    })
}

fn modified(old: Value, new: Value) -> Event {
    Event::new(EventType::Modified, new).with_old_object(old)
}

fn body(request: &HttpRequest) -> Value {
    serde_json::from_slice(&request.body).unwrap()
}

#[test]
fn posts_a_summary_of_the_changed_fields() {
    let n = notifier(json!({
        "url": "https://hooks.slack.com/services/T0",
        "channel": "#ops",
        "username": "grw",
        "iconEmoji": ":eyes:",
    }));
    let event = modified(
        deployment(2, json!({"app": "web"}), "10"),
        deployment(3, json!({"app": "web", "tier": "front"}), "11"),
    );
    let http = RecordingHttp::new();
    n.deliver(&event, &http).unwrap();
    let requests = http.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].method, "POST");
    assert_eq!(requests[0].url, "https://hooks.slack.com/services/T0");
    assert_eq!(
        requests[0].headers,
        [("content-type".to_string(), "application/json".to_string())]
    );
    assert_eq!(
        body(&requests[0]),
        json!({
            "text": "*Deployment* `shop/web` modified: spec.replicas 2 → 3; metadata.labels.tier added",
            "channel": "#ops",
            "username": "grw",
            "icon_emoji": ":eyes:",
        })
    );
}

#[test]
fn added_deleted_and_cluster_scoped_objects() {
    let n = plain();
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "namespace": "default"}});
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "b", "namespace": "a"}});
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}});
    assert_eq!(
        n.summary(&Event::new(EventType::Added, pod)).unwrap(),
        "*Pod* `default/x` added"
    );
    assert_eq!(
        n.summary(&Event::new(EventType::Deleted, cm)).unwrap(),
        "*ConfigMap* `a/b` deleted"
    );
    assert_eq!(
        n.summary(&Event::new(EventType::Added, ns)).unwrap(),
        "*Namespace* `shop` added"
    );
    // No body: only the default fields.
    let http = RecordingHttp::new();
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "namespace": "default"}});
    n.deliver(&Event::new(EventType::Added, pod), &http)
        .unwrap();
    assert_eq!(
        body(&http.requests()[0]),
        json!({"text": "*Pod* `default/x` added"})
    );
}

#[test]
fn removed_fields_list_items_and_long_values() {
    let n = plain();
    let mut old = deployment(1, json!({"app": "web", "tier": "front"}), "1");
    let mut new = deployment(1, json!({"app": "web"}), "2");
    old["spec"]["template"]["spec"]["containers"][0]["image"] = json!("shop/web:1.4");
    new["spec"]["template"]["spec"]["containers"][0]["image"] = json!("shop/web:1.5");
    new["spec"]["template"]["spec"]["containers"]
        .as_array_mut()
        .unwrap()
        .push(json!({"name": "sidecar"}));
    new["spec"]["note"] = json!("x".repeat(60));
    let text = n.summary(&modified(old, new)).unwrap();
    assert_eq!(
        text,
        format!(
            "*Deployment* `shop/web` modified: spec.note added; \
             spec.template.spec.containers.0.image shop/web:1.4 → shop/web:1.5; \
             spec.template.spec.containers.1 added; metadata.labels.tier removed"
        )
    );
    let mut old = deployment(1, json!({}), "1");
    let mut new = old.clone();
    old["spec"]["strategy"] = json!("a");
    new["spec"]["strategy"] = json!("y".repeat(60));
    let text = n.summary(&modified(old, new)).unwrap();
    assert!(
        text.ends_with(&format!("spec.strategy a → {}…", "y".repeat(39))),
        "{text}"
    );
}

#[test]
fn ignored_fields_only_send_nothing() {
    let n = plain();
    let old = deployment(2, json!({"app": "web"}), "10");
    let mut new = deployment(2, json!({"app": "web"}), "11");
    new["status"]["readyReplicas"] = json!(0);
    new["metadata"]["generation"] = json!(5);
    new["metadata"]["managedFields"] = json!([{"manager": "kubectl"}]);
    let http = RecordingHttp::new();
    n.deliver(&modified(old, new), &http).unwrap();
    assert!(http.requests().is_empty());
}

#[test]
fn ignore_and_max_fields_are_configurable() {
    let n = notifier(json!({
        "url": "http://chat.internal/hooks/x",
        "ignore": ["spec.replicas", "/metadata/labels/app.kubernetes.io~1version"],
        "maxFields": 2,
    }));
    let old = deployment(1, json!({"app.kubernetes.io/version": "1"}), "1");
    let mut new = deployment(
        2,
        json!({"app.kubernetes.io/version": "2", "a": "1", "b": "2", "c": "3"}),
        "2",
    );
    new["status"]["readyReplicas"] = json!(7);
    let text = n.summary(&modified(old, new)).unwrap();
    // The list replaces the defaults: status and resourceVersion count now,
    // replicas and the version label do not.
    assert_eq!(
        text,
        "*Deployment* `shop/web` modified: status.readyReplicas 1 → 7; metadata.labels.a added; and 3 more"
    );
}

#[test]
fn a_modification_without_its_old_state_is_still_announced() {
    let event = Event::new(EventType::Modified, deployment(1, json!({}), "1"));
    assert_eq!(
        plain().summary(&event).unwrap(),
        "*Deployment* `shop/web` modified"
    );
}

#[test]
fn text_is_escaped_for_slack() {
    let old = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c", "namespace": "n"}, "data": {"k": "a<b"}});
    let new = json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c", "namespace": "n"}, "data": {"k": "a&b>"}});
    assert_eq!(
        plain().summary(&modified(old, new)).unwrap(),
        "*ConfigMap* `n/c` modified: data.k a&lt;b → a&amp;b&gt;"
    );
}

#[test]
fn receiver_answers_decide_retry_or_give_up() {
    let n = plain();
    let event = Event::new(EventType::Added, deployment(1, json!({}), "1"));
    let http = RecordingHttp::new()
        .respond(HttpResponse::new(500).with_body("oops"))
        .respond(HttpResponse::new(429))
        .fail("cannot connect: connection refused")
        .respond(HttpResponse::new(400).with_body("invalid_payload"))
        .respond(HttpResponse::new(404).with_body("no_service"));
    let outcomes: Vec<_> = (0..5).map(|_| n.deliver(&event, &http)).collect();
    assert_eq!(
        outcomes,
        [
            Err(DeliveryError::Retry("receiver answered 500: oops".into())),
            Err(DeliveryError::Retry("receiver answered 429".into())),
            Err(DeliveryError::Retry(
                "cannot connect: connection refused".into()
            )),
            Err(DeliveryError::GiveUp(
                "receiver answered 400: invalid_payload".into()
            )),
            Err(DeliveryError::GiveUp(
                "receiver answered 404: no_service".into()
            )),
        ]
    );
    assert_eq!(n.deliver(&event, &http), Ok(()));
}

#[test]
fn bad_configuration_is_rejected_with_the_key() {
    let cases = [
        (json!({}), "config is not valid: missing field `url`"),
        (
            json!({"url": "hooks.slack.com/services/T0"}),
            "config key `url`: expected the webhook's http:// or https:// URL, got \"hooks.slack.com/services/T0\"",
        ),
        (
            json!({"url": "https://x", "maxFields": 0}),
            "config key `maxFields`: must be at least 1",
        ),
        (
            json!({"url": "https://x", "icon": ":x:"}),
            "unknown field `icon`",
        ),
        (
            json!({"url": "https://x", "ignore": ["a..b"]}),
            "config key `ignore[0]`",
        ),
        (
            json!({"url": "https://x", "channel": 5}),
            "config key `channel`",
        ),
    ];
    for (config, want) in cases {
        let err = ChatNotifier::init(&config.to_string()).unwrap_err();
        assert!(err.contains(want), "{config}: {err}");
    }
}
