use grw_sdk::testing::MemoryCache;
use grw_sdk::{Direction, ObjectView};
use serde_json::json;

use super::*;

fn analyze(object: serde_json::Value) -> Vec<Relationship> {
    let (ownership, _) = Ownership::init("{}").unwrap();
    ownership.analyze(&ObjectView::new(object), &MemoryCache::new())
}

#[test]
fn every_owner_reference_is_an_incoming_owns_edge() {
    let edges = analyze(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"namespace": "shop", "name": "web-7d9f-x2k4p", "ownerReferences": [
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d9f", "uid": "u1", "controller": true},
            {"apiVersion": "example.com/v1", "kind": "Audit", "name": "nightly", "uid": "u2"},
        ]},
    }));
    assert_eq!(edges.len(), 2);
    assert_eq!(edges[0].relation, "owns");
    assert_eq!(edges[0].direction, Direction::Incoming);
    assert_eq!(
        edges[0].target,
        ObjectRef::new(Gvk::new("apps", "v1", "ReplicaSet"), "shop", "web-7d9f")
    );
    assert_eq!(edges[0].attributes, [("controller".into(), "true".into())]);
    assert_eq!(edges[1].target.gvk, Gvk::new("example.com", "v1", "Audit"));
    assert_eq!(edges[1].attributes, [("controller".into(), "false".into())]);
}

#[test]
fn no_or_unreadable_owner_references_give_no_edges() {
    assert!(
        analyze(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "a"}})).is_empty()
    );
    assert!(
        analyze(json!({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": "a", "ownerReferences": "nonsense"}}))
        .is_empty()
    );
}

#[test]
fn configuration_narrows_the_kinds_and_names_bad_keys() {
    let (_, interest) = Ownership::init(r#"{"kinds": [{"group": "", "kind": "Pod"}]}"#).unwrap();
    assert_eq!(
        interest.kinds,
        [KindPattern {
            group: Some(String::new()),
            version: None,
            kind: Some("Pod".into())
        }]
    );
    let error = Ownership::init(r#"{"kind": "Pod"}"#).err().unwrap();
    assert!(error.contains("kind"), "{error}");
}
