//! # services
//!
//! A GRW analyzer for what a Service routes to:
//!
//! - Service `selects` Pod: the Pods of the Service's namespace whose
//!   labels hold its `spec.selector`. A Service without a selector selects
//!   nothing (its endpoints are managed by hand). The Pods are looked up in
//!   GRW's cache, so a Pod that appears, is relabelled or goes away changes
//!   the Service's edges;
//! - EndpointSlice `endpoint-of` Service: the slice's
//!   `kubernetes.io/service-name` label;
//! - EndpointSlice `targets` Pod: each endpoint's `targetRef` of kind Pod.
//!
//! No configuration.

use std::collections::BTreeMap;

use grw_sdk::{
    Analyzer, Cache, FieldPath, Gvk, Interest, KindPattern, ObjectRef, ObjectView, Relationship,
};
use serde::Deserialize;

/// The analyzer; it has no state.
pub struct Services {
    selector: FieldPath,
    endpoints: FieldPath,
}

/// The label EndpointSlices name their Service with.
const SERVICE_NAME: &str = "kubernetes.io/service-name";

fn pod() -> Gvk {
    Gvk::new("", "v1", "Pod")
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Endpoint {
    target_ref: Option<TargetRef>,
}

#[derive(Deserialize)]
struct TargetRef {
    kind: Option<String>,
    namespace: Option<String>,
    name: Option<String>,
}

impl Analyzer for Services {
    fn init(config: &str) -> Result<(Self, Interest), String> {
        let _: serde::de::IgnoredAny = grw_sdk::parse_config(config)?;
        let path = |p: &str| p.parse::<FieldPath>().map_err(|e| e.to_string());
        Ok((
            Services {
                selector: path("spec.selector")?,
                endpoints: path("endpoints")?,
            },
            Interest::all().kinds([
                KindPattern::group_kind("", "Service"),
                KindPattern::group_kind("discovery.k8s.io", "EndpointSlice"),
            ]),
        ))
    }

    fn analyze(&self, object: &ObjectView, cache: &dyn Cache) -> Vec<Relationship> {
        match (object.gvk().group.as_str(), object.gvk().kind.as_str()) {
            ("", "Service") => self.service(object, cache),
            ("discovery.k8s.io", "EndpointSlice") => self.endpoint_slice(object),
            _ => Vec::new(),
        }
    }
}

impl Services {
    fn service(&self, service: &ObjectView, cache: &dyn Cache) -> Vec<Relationship> {
        let selector: BTreeMap<String, String> = service
            .field(&self.selector)
            .and_then(|s| serde_json::from_value(s).ok())
            .unwrap_or_default();
        if selector.is_empty() {
            return Vec::new();
        }
        let selector = selector
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(",");
        match cache.list(&pod(), service.namespace(), &selector) {
            Ok(pods) => pods
                .iter()
                .map(|p| Relationship::outgoing("selects", p.to_ref()))
                .collect(),
            Err(e) => {
                grw_sdk::log::warn(format!(
                    "Service {}/{}: selector `{selector}` cannot be listed: {e}",
                    service.namespace(),
                    service.name()
                ));
                Vec::new()
            }
        }
    }

    fn endpoint_slice(&self, slice: &ObjectView) -> Vec<Relationship> {
        let namespace = slice.namespace();
        let mut edges = Vec::new();
        if let Some(service) = slice.label(SERVICE_NAME) {
            edges.push(Relationship::outgoing(
                "endpoint-of",
                ObjectRef::new(Gvk::new("", "v1", "Service"), namespace, service),
            ));
        }
        let endpoints: Vec<Endpoint> = slice
            .field(&self.endpoints)
            .and_then(|e| serde_json::from_value(e).ok())
            .unwrap_or_default();
        for target in endpoints.into_iter().filter_map(|e| e.target_ref) {
            if let (Some("Pod"), Some(name)) = (target.kind.as_deref(), target.name) {
                let namespace = target.namespace.unwrap_or_else(|| namespace.to_string());
                edges.push(Relationship::outgoing(
                    "targets",
                    ObjectRef::new(pod(), namespace, name),
                ));
            }
        }
        edges
    }
}

grw_sdk::export_analyzer!(Services);

#[cfg(test)]
mod tests;
