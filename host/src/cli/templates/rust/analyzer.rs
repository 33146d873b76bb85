//! # {{name}}
//!
//! A GRW analyzer: each Pod `uses` the ConfigMaps its volumes name, found
//! in GRW's cache (an edge to a missing ConfigMap is kept, shown as
//! missing). Change `analyze` to find other relationships.

use grw_sdk::{Analyzer, Cache, Gvk, Interest, KindPattern, ObjectRef, ObjectView, Relationship};

/// The analyzer; it has no configuration.
pub struct Plugin;

impl Analyzer for Plugin {
    fn init(config: &str) -> Result<(Self, Interest), String> {
        let _: serde_json::Map<String, serde_json::Value> = grw_sdk::parse_config(config)?;
        Ok((Plugin, Interest::all().kinds([KindPattern::kind("Pod")])))
    }

    fn analyze(&self, pod: &ObjectView, _cache: &dyn Cache) -> Vec<Relationship> {
        let Ok(object) = pod.object() else {
            return Vec::new();
        };
        let volumes = object.value()["spec"]["volumes"].as_array().cloned().unwrap_or_default();
        volumes
            .iter()
            .filter_map(|v| v["configMap"]["name"].as_str())
            .map(|name| {
                let target = ObjectRef::new(Gvk::new("", "v1", "ConfigMap"), pod.namespace(), name);
                Relationship::outgoing("uses", target)
            })
            .collect()
    }
}

grw_sdk::export_analyzer!(Plugin);

#[cfg(test)]
mod tests {
    use grw_sdk::testing::MemoryCache;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_pod_uses_the_config_maps_its_volumes_name() {
        let (analyzer, _) = Plugin::init("{}").unwrap();
        let pod = ObjectView::new(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "namespace": "shop"},
            "spec": {"volumes": [{"name": "c", "configMap": {"name": "settings"}}, {"name": "e", "emptyDir": {}}]}}));
        let found = analyzer.analyze(&pod, &MemoryCache::new());
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].relation, "uses");
        assert_eq!(found[0].target.name, "settings");
    }
}
