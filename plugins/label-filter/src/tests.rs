use grw_sdk::{Event, EventType, Filter, Interest};
use serde_json::json;

fn event(labels: serde_json::Value) -> Event {
    Event::new(
        EventType::Added,
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ns", "labels": labels}}),
    )
}

fn filter(config: &str) -> super::LabelFilter {
    let (filter, interest) = super::LabelFilter::init(config).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(interest, Interest::all());
    filter
}

#[test]
fn passes_matching_labels_only() {
    let f = filter(r#"{"selector": "app in (web,api),tier!=cache"}"#);
    assert!(f.decide(&event(json!({"app": "web"}))));
    assert!(f.decide(&event(json!({"app": "api", "tier": "front"}))));
    assert!(!f.decide(&event(json!({"app": "api", "tier": "cache"}))));
    assert!(!f.decide(&event(json!({"app": "db"}))));
    assert!(!f.decide(&event(json!({}))));
}

#[test]
fn empty_selector_passes_everything() {
    let f = filter(r#"{"selector": ""}"#);
    assert!(f.decide(&event(json!({}))));
}

#[test]
fn deleted_events_use_the_last_labels() {
    let f = filter(r#"{"selector": "app=web"}"#);
    let deleted = Event::new(
        EventType::Deleted,
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "web"}}}),
    );
    assert!(f.decide(&deleted));
}

#[test]
fn bad_config_is_rejected_with_the_key() {
    let error = |config: &str| super::LabelFilter::init(config).err().unwrap();
    let e = error(r#"{"selector": "app in web"}"#);
    assert!(
        e.contains("`selector`") && e.contains("invalid label selector"),
        "{e}"
    );
    assert!(error("{}").contains("missing field `selector`"));
    assert!(error("").contains("missing field `selector`"));
    assert!(error(r#"{"selector": 3}"#).contains("`selector`"));
    assert!(error(r#"{"selector": "a", "extra": 1}"#).contains("unknown field `extra`"));
    assert!(error("not json").contains("not valid JSON"));
}
