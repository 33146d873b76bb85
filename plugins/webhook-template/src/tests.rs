use grw_sdk::testing::RecordingHttp;
use grw_sdk::{EventType, HttpResponse, Origin};
use serde_json::{Value, json};

use super::*;

fn notifier(config: Value) -> WebhookTemplate {
    WebhookTemplate::init(&config.to_string())
        .unwrap_or_else(|e| panic!("{e}"))
        .0
}

fn deployment(replicas: u32, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "shop", "uid": "u-1", "resourceVersion": "42",
                     "labels": {"app.kubernetes.io/name": "web"}},
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [{"image": image}]}}},
    })
}

fn header<'r>(request: &'r HttpRequest, name: &str) -> Option<&'r str> {
    request
        .headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn every_placeholder_is_filled_in() {
    let n = notifier(json!({
        "url": "https://hooks.example.com/{{group}}/{{version}}/{{kind}}",
        "body": "{{type}}|{{origin}}|{{group}}|{{version}}|{{kind}}|{{namespace}}|{{name}}|{{uid}}|{{resourceVersion}}|{{ object.spec.replicas }}|{{oldObject.spec.replicas}}|{{object.spec.template.spec.containers.0.image}}|{{object/metadata/labels/app.kubernetes.io~1name}}|{{object.metadata.labels}}|{{object.spec.missing}}",
    }));
    let event = Event::new(EventType::Modified, deployment(3, "shop/web:1.5"))
        .with_old_object(deployment(2, "shop/web:1.4"))
        .with_origin(Origin::Relist);
    let request = n.request(&event).unwrap();
    assert_eq!(request.method, "POST");
    assert_eq!(request.url, "https://hooks.example.com/apps/v1/Deployment");
    assert_eq!(
        String::from_utf8(request.body).unwrap(),
        r#"MODIFIED|relist|apps|v1|Deployment|shop|web|u-1|42|3|2|shop/web:1.5|web|{"app.kubernetes.io/name":"web"}|"#
    );
}

#[test]
fn whole_objects_and_the_default_body() {
    let n = notifier(json!({"url": "http://receiver.internal/hook"}));
    let added = Event::new(EventType::Added, deployment(1, "a"));
    let request = n.request(&added).unwrap();
    assert_eq!(header(&request, "content-type"), Some("application/json"));
    let body: Value = serde_json::from_slice(&request.body).unwrap();
    assert_eq!(body, json!({"type": "ADDED", "object": deployment(1, "a")}));

    let n = notifier(
        json!({"url": "http://r/h", "body": "{\"old\": {{oldObject}}, \"new\": {{object}}}"}),
    );
    let body: Value = serde_json::from_slice(&n.request(&added).unwrap().body).unwrap();
    assert_eq!(body, json!({"old": null, "new": deployment(1, "a")}));
}

#[test]
fn url_values_are_percent_encoded_headers_are_not() {
    let n = notifier(json!({
        "url": "https://h/x/{{object.metadata.labels.team}}?obj={{name}}",
        "method": "put",
        "headers": {"x-team": "{{object.metadata.labels.team}}", "authorization": "Bearer t"},
    }));
    let mut object = deployment(1, "a");
    object["metadata"]["labels"]["team"] = json!("a b/c&d");
    let request = n.request(&Event::new(EventType::Added, object)).unwrap();
    assert_eq!(request.method, "PUT");
    assert_eq!(request.url, "https://h/x/a%20b%2Fc%26d?obj=web");
    assert_eq!(
        request.headers,
        [
            ("authorization".to_string(), "Bearer t".to_string()),
            ("x-team".to_string(), "a b/c&d".to_string()),
            ("content-type".to_string(), "application/json".to_string()),
        ]
    );
}

#[test]
fn a_configured_content_type_wins_and_delete_sends_no_body() {
    let n = notifier(
        json!({"url": "http://h/", "headers": {"Content-Type": "text/plain"}, "body": "{{name}}"}),
    );
    let request = n
        .request(&Event::new(EventType::Added, deployment(1, "a")))
        .unwrap();
    assert_eq!(
        request.headers,
        [("Content-Type".to_string(), "text/plain".to_string())]
    );
    assert_eq!(request.body, b"web");

    let n = notifier(json!({"url": "http://h/{{name}}", "method": "DELETE"}));
    let request = n
        .request(&Event::new(EventType::Deleted, deployment(1, "a")))
        .unwrap();
    assert_eq!(
        (request.method.as_str(), request.url.as_str()),
        ("DELETE", "http://h/web")
    );
    assert!(request.headers.is_empty());
    assert!(request.body.is_empty());
}

#[test]
fn a_header_with_a_line_break_is_given_up() {
    let n = notifier(json!({"url": "http://h/", "headers": {"x-note": "{{object.spec.note}}"}}));
    let mut object = deployment(1, "a");
    object["spec"]["note"] = json!("a\r\nx-injected: 1");
    let event = Event::new(EventType::Added, object);
    let http = RecordingHttp::new();
    let err = n.deliver(&event, &http).unwrap_err();
    assert_eq!(
        err,
        DeliveryError::GiveUp(
            "header `x-note` would contain a line break or another control character once filled in".into()
        )
    );
    assert!(http.requests().is_empty());
}

#[test]
fn receiver_answers_decide_retry_or_give_up() {
    let n = notifier(json!({"url": "http://h/"}));
    let event = Event::new(EventType::Added, deployment(1, "a"));
    let http = RecordingHttp::new()
        .respond(HttpResponse::new(503))
        .respond(HttpResponse::new(429))
        .fail("POST http://h/: cannot connect: connection refused")
        .respond(HttpResponse::new(422).with_body("bad"))
        .respond(HttpResponse::new(201));
    let outcomes: Vec<_> = (0..5).map(|_| n.deliver(&event, &http)).collect();
    assert_eq!(
        outcomes,
        [
            Err(DeliveryError::Retry("receiver answered 503".into())),
            Err(DeliveryError::Retry("receiver answered 429".into())),
            Err(DeliveryError::Retry(
                "POST http://h/: cannot connect: connection refused".into()
            )),
            Err(DeliveryError::GiveUp("receiver answered 422: bad".into())),
            Ok(()),
        ]
    );
    assert_eq!(http.requests().len(), 5);
}

#[test]
fn bad_templates_are_rejected_at_init() {
    let cases = [
        (json!({}), "missing field `url`"),
        (
            json!({"url": "http://h/", "body": "{{nmae}}"}),
            "config key `body`: unknown placeholder `{{nmae}}`; known: {{type}}, {{origin}}, {{group}}",
        ),
        (
            json!({"url": "http://h/{{objectx}}"}),
            "config key `url`: unknown placeholder `{{objectx}}`",
        ),
        (
            json!({"url": "http://h/", "headers": {"x-a": "{{kind}"}}),
            "config key `headers.x-a`: `{{` at position 0 is never closed with `}}`",
        ),
        (
            json!({"url": "http://h/", "body": "{{object.}}"}),
            "config key `body`: placeholder `{{object.}}`: field path is empty",
        ),
        (
            json!({"url": "http://h/", "body": "{{object.a..b}}"}),
            "config key `body`: placeholder `{{object.a..b}}`: field path `a..b` has an empty segment",
        ),
        (
            json!({"url": "http://h/", "method": "TRACE"}),
            "config key `method`: expected one of GET, POST, PUT, PATCH, DELETE, got \"TRACE\"",
        ),
        (
            json!({"url": "h/{{name}}"}),
            "config key `url`: expected an http:// or https:// URL, got \"h/{{name}}\"",
        ),
        (
            json!({"url": "http://h/", "headers": {"a": 1}}),
            "config key `headers.a`",
        ),
        (
            json!({"url": "http://h/", "bdy": ""}),
            "unknown field `bdy`",
        ),
    ];
    for (config, want) in cases {
        let err = WebhookTemplate::init(&config.to_string()).unwrap_err();
        assert!(err.contains(want), "{config}: {err}");
    }
}
