//! An analyzer of ConfigMaps: a ConfigMap labelled `mentions=NAME` has an
//! edge `mentions` to the ConfigMap `NAME` of its namespace. Labelled
//! `fault=trap` it panics (which traps the component), `fault=loop` it
//! never returns. The host's tests use it to check that an analyzer's
//! failures keep the object's last good edges, marked stale.

use grw_sdk::{Analyzer, Cache, Gvk, Interest, KindPattern, ObjectRef, ObjectView, Relationship};

/// See the crate documentation.
pub struct AnalyzerFault;

impl Analyzer for AnalyzerFault {
    fn init(_config: &str) -> Result<(Self, Interest), String> {
        Ok((
            AnalyzerFault,
            Interest::all().kinds([KindPattern::group_kind("", "ConfigMap")]),
        ))
    }

    fn analyze(&self, object: &ObjectView, _cache: &dyn Cache) -> Vec<Relationship> {
        match object.label("fault").as_deref() {
            Some("trap") => panic!("ConfigMap {} asked for a trap", object.name()),
            Some("loop") =>
            {
                #[allow(clippy::empty_loop, reason = "never returning is the point")]
                loop {}
            }
            _ => {}
        }
        object
            .label("mentions")
            .map(|name| {
                Relationship::outgoing(
                    "mentions",
                    ObjectRef::new(Gvk::new("", "v1", "ConfigMap"), object.namespace(), &*name),
                )
            })
            .into_iter()
            .collect()
    }
}

grw_sdk::export_analyzer!(AnalyzerFault);

#[cfg(test)]
mod tests {
    use super::*;
    use grw_sdk::serde_json::json;
    use grw_sdk::testing::MemoryCache;

    fn config_map(labels: grw_sdk::serde_json::Value) -> ObjectView {
        ObjectView::new(json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "a", "namespace": "shop", "labels": labels},
        }))
    }

    #[test]
    fn a_mention_is_an_edge() {
        let (analyzer, _) = AnalyzerFault::init("{}").unwrap();
        let edges = analyzer.analyze(
            &config_map(json!({"mentions": "b"})),
            &MemoryCache::default(),
        );
        assert_eq!(edges.len(), 1);
        assert_eq!(edges[0].target.name, "b");
        assert_eq!(edges[0].target.namespace, "shop");
    }

    #[test]
    #[should_panic(expected = "asked for a trap")]
    fn a_trap_label_panics() {
        let (analyzer, _) = AnalyzerFault::init("{}").unwrap();
        analyzer.analyze(
            &config_map(json!({"fault": "trap"})),
            &MemoryCache::default(),
        );
    }
}
