use grw_sdk::ObjectView;
use grw_sdk::testing::MemoryCache;
use serde_json::{Value, json};

use super::*;

#[test]
fn wildcards_match_like_istio() {
    assert!(host_matches("*.example.com", "a.example.com"));
    assert!(host_matches("*.example.com", "a.b.example.com"));
    assert!(!host_matches("*.example.com", "example.com"));
    assert!(!host_matches("*.example.com", "a.example.com.evil.org"));
    assert!(!host_matches("*.example.com", "aexample.com"));
    assert!(host_matches("*", "anything.at.all"));
    assert!(host_matches("shop.example.com", "shop.example.com"));
    assert!(!host_matches("shop.example.com", "www.shop.example.com"));
    assert_eq!(without_port("shop.example.com:8080"), "shop.example.com");
    assert_eq!(without_port("shop.example.com"), "shop.example.com");
}

fn gateway(ns: &str, name: &str, hosts: Value) -> Value {
    json!({"apiVersion": "networking.istio.io/v1", "kind": "Gateway",
           "metadata": {"namespace": ns, "name": name},
           "spec": {"servers": [{"port": {"number": 443}, "hosts": hosts}]}})
}

fn edges(service: Value, cache: &MemoryCache) -> Vec<String> {
    let (analyzer, _) = IstioGateways::init("{}").unwrap();
    analyzer
        .analyze(&ObjectView::new(service), cache)
        .iter()
        .map(|e| {
            let attributes: Vec<String> = e
                .attributes
                .iter()
                .map(|(k, v)| format!(" {k}={v}"))
                .collect();
            format!(
                "{:?} {} {}/{}{}",
                e.direction,
                e.relation,
                e.target.namespace,
                e.target.name,
                attributes.concat()
            )
        })
        .collect()
}

#[test]
fn a_virtual_service_attaches_to_its_gateways_which_expose_its_matching_hosts() {
    let cache = MemoryCache::new()
        .with(gateway(
            "istio-system",
            "public",
            json!(["*.example.com", "./internal.example.org"]),
        ))
        .with(gateway("shop", "private", json!(["shop/*"])));
    let service = json!({
        "apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
        "metadata": {"namespace": "shop", "name": "web"},
        "spec": {
            "hosts": ["web.example.com:8443", "internal.example.org", "web.example.com.evil.org"],
            "gateways": ["istio-system/public", "private", "mesh", "missing"],
        },
    });
    assert_eq!(
        edges(service, &cache),
        [
            "Outgoing attached-to istio-system/public",
            // `./internal.example.org` takes only istio-system's own services.
            "Incoming exposes istio-system/public host=web.example.com",
            "Outgoing attached-to shop/private",
            "Incoming exposes shop/private host=internal.example.org",
            "Incoming exposes shop/private host=web.example.com",
            "Incoming exposes shop/private host=web.example.com.evil.org",
            "Outgoing attached-to shop/missing",
        ]
    );
}
