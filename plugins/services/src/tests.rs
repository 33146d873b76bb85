use grw_sdk::ObjectView;
use grw_sdk::testing::MemoryCache;
use serde_json::{Value, json};

use super::*;

fn pod(ns: &str, name: &str, app: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"namespace": ns, "name": name, "labels": {"app": app, "tier": "web"}}})
}

fn names(edges: &[Relationship]) -> Vec<String> {
    edges
        .iter()
        .map(|e| format!("{} {}/{}", e.relation, e.target.namespace, e.target.name))
        .collect()
}

#[test]
fn a_service_selects_the_pods_of_its_namespace_that_hold_its_selector() {
    let (services, _) = Services::init("{}").unwrap();
    let cache = MemoryCache::new()
        .with(pod("shop", "web-1", "web"))
        .with(pod("shop", "api-1", "api"))
        .with(pod("other", "web-2", "web"));
    let service = |selector: Value| {
        ObjectView::new(json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"namespace": "shop", "name": "web"}, "spec": {"selector": selector}}))
    };
    let edges = services.analyze(&service(json!({"app": "web", "tier": "web"})), &cache);
    assert_eq!(names(&edges), ["selects shop/web-1"]);
    assert!(services.analyze(&service(json!({})), &cache).is_empty());
    assert!(services.analyze(&service(Value::Null), &cache).is_empty());
}

#[test]
fn an_endpoint_slice_names_its_service_and_target_pods() {
    let (services, _) = Services::init("{}").unwrap();
    let slice = ObjectView::new(json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"namespace": "shop", "name": "web-abcde",
                     "labels": {"kubernetes.io/service-name": "web"}},
        "endpoints": [
            {"addresses": ["10.0.0.1"], "targetRef": {"kind": "Pod", "name": "web-1", "namespace": "shop"}},
            {"addresses": ["10.0.0.2"], "targetRef": {"kind": "Pod", "name": "web-2"}},
            {"addresses": ["10.0.0.3"], "targetRef": {"kind": "Node", "name": "n1"}},
            {"addresses": ["10.0.0.4"]},
        ],
    }));
    let edges = services.analyze(&slice, &MemoryCache::new());
    assert_eq!(
        names(&edges),
        [
            "endpoint-of shop/web",
            "targets shop/web-1",
            "targets shop/web-2"
        ]
    );
    assert_eq!(edges[0].target.gvk, Gvk::new("", "v1", "Service"));
}
