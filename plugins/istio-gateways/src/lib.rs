//! # istio-gateways
//!
//! A GRW analyzer for Istio's `networking.istio.io` VirtualServices:
//!
//! - VirtualService `attached-to` Gateway, for each entry of
//!   `spec.gateways`: `name` (in the VirtualService's namespace) or
//!   `namespace/name`; `mesh` (the sidecars, not a Gateway) is left out;
//! - Gateway `exposes` VirtualService, attribute `host`: each host of the
//!   VirtualService (a port, `:8080`, left out) that a server of the
//!   attached Gateway accepts. A server host is `pattern` or
//!   `namespace/pattern`, where the namespace part says whose
//!   VirtualServices it takes (`*` anyone's, `.` the Gateway's own
//!   namespace's); the pattern is a host, `*`, or `*.domain`, which matches
//!   any host ending in `.domain` and nothing else (`*.example.com` matches
//!   `a.example.com` and `a.b.example.com`, never `example.com` or
//!   `a.example.com.evil.org`).
//!
//! The Gateway is looked up in GRW's cache, so a Gateway that appears, or
//! whose servers change, changes the edges of the VirtualServices attached
//! to it. No configuration.

use grw_sdk::{
    Analyzer, Cache, FieldPath, Gvk, Interest, KindPattern, ObjectRef, ObjectView, Relationship,
};
use serde::Deserialize;

/// The analyzer; it has no state.
pub struct IstioGateways {
    gateways: FieldPath,
    hosts: FieldPath,
    servers: FieldPath,
}

/// Istio's group.
const GROUP: &str = "networking.istio.io";

#[derive(Deserialize, Default)]
#[serde(default)]
struct Server {
    hosts: Vec<String>,
}

/// Whether a server host pattern (`*`, `*.domain` or a host) matches `host`.
pub fn host_matches(pattern: &str, host: &str) -> bool {
    match pattern.strip_prefix('*') {
        Some("") => true,
        Some(suffix) if suffix.starts_with('.') => {
            host.len() > suffix.len() && host.ends_with(suffix)
        }
        _ => pattern == host,
    }
}

/// A host without its port: `shop.example.com:8080` → `shop.example.com`.
fn without_port(host: &str) -> &str {
    match host.rsplit_once(':') {
        Some((name, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

impl Analyzer for IstioGateways {
    fn init(config: &str) -> Result<(Self, Interest), String> {
        let _: serde::de::IgnoredAny = grw_sdk::parse_config(config)?;
        let path = |p: &str| p.parse::<FieldPath>().map_err(|e| e.to_string());
        Ok((
            IstioGateways {
                gateways: path("spec.gateways")?,
                hosts: path("spec.hosts")?,
                servers: path("spec.servers")?,
            },
            Interest::all().kinds([KindPattern::group_kind(GROUP, "VirtualService")]),
        ))
    }

    fn analyze(&self, service: &ObjectView, cache: &dyn Cache) -> Vec<Relationship> {
        let strings = |path: &FieldPath| -> Vec<String> {
            service
                .field(path)
                .and_then(|v| serde_json::from_value(v).ok())
                .unwrap_or_default()
        };
        let namespace = service.namespace();
        let hosts = strings(&self.hosts);
        let mut edges = Vec::new();
        for gateway in strings(&self.gateways) {
            if gateway == "mesh" {
                continue;
            }
            let (gateway_namespace, name) = gateway
                .split_once('/')
                .unwrap_or((namespace, gateway.as_str()));
            // The version the VirtualService's own apiVersion uses.
            let gvk = Gvk::new(GROUP, service.gvk().version.clone(), "Gateway");
            let reference = ObjectRef::new(gvk.clone(), gateway_namespace, name);
            edges.push(Relationship::outgoing("attached-to", reference.clone()));
            let Some(found) = cache.get(&gvk, gateway_namespace, name) else {
                continue;
            };
            let servers: Vec<Server> = found
                .field(&self.servers)
                .and_then(|v| serde_json::from_value(v).ok())
                .unwrap_or_default();
            let patterns: Vec<&str> = servers
                .iter()
                .flat_map(|s| &s.hosts)
                .filter_map(|h| {
                    let (allowed, pattern) = h.split_once('/').unwrap_or(("*", h.as_str()));
                    let admits = allowed == "*"
                        || (allowed == "." && namespace == gateway_namespace)
                        || allowed == namespace;
                    admits.then_some(pattern)
                })
                .collect();
            let mut exposed: Vec<&str> = hosts
                .iter()
                .map(|h| without_port(h))
                .filter(|h| patterns.iter().any(|p| host_matches(p, h)))
                .collect();
            exposed.sort_unstable();
            exposed.dedup();
            edges.extend(exposed.into_iter().map(|host| {
                Relationship::incoming("exposes", reference.clone()).with("host", host)
            }));
        }
        edges
    }
}

grw_sdk::export_analyzer!(IstioGateways);

#[cfg(test)]
mod tests;
