//! An analyzer of ConfigMaps: a ConfigMap labelled `mentions=NAME` has an
//! edge `mentions` to the ConfigMap `NAME` of its namespace. Labelled
//! `fault=trap` it panics (which traps the component), `fault=loop` it
//! never returns. Labelled `fault=keep` it looks the mentioned ConfigMap up
//! and keeps what the cache answered past the call, then reads it in its
//! next call, whatever that call analyzes, after a lookup of its own: an
//! object handle used after its call, which GRW must refuse. Labelled `fault=hoard` it lists the
//! ConfigMaps of its namespace over and over, dropping each answer, until a
//! list is refused: its edge `refused` to `refused-list` carries the error as
//! attribute `error`. The host's tests use it to check that an analyzer's
//! failures keep the object's last good edges, marked stale, and that a
//! call's lookups cannot hold more than the plugin's memory limit.
//!
//! Configuration: `{"delayMicros": N}` makes every analysis take at least
//! N µs (busy, on the WASI clock): a slow analyzer.

use std::cell::RefCell;
use std::time::{Duration, Instant};

use grw_sdk::{Analyzer, Cache, Gvk, Interest, KindPattern, ObjectRef, ObjectView, Relationship};

thread_local! {
    /// A lookup's answer kept by a `fault=keep` analysis for the next call.
    static KEPT: RefCell<Option<ObjectView>> = const { RefCell::new(None) };
}

/// See the crate documentation.
pub struct AnalyzerFault {
    /// How long each analysis takes at least.
    delay: Duration,
}

impl Analyzer for AnalyzerFault {
    fn init(config: &str) -> Result<(Self, Interest), String> {
        let config: grw_sdk::serde_json::Value =
            grw_sdk::serde_json::from_str(config).map_err(|e| e.to_string())?;
        let delay = match config.get("delayMicros") {
            None => 0,
            Some(micros) => micros
                .as_u64()
                .ok_or("`delayMicros`: expected a whole number of microseconds")?,
        };
        Ok((
            AnalyzerFault {
                delay: Duration::from_micros(delay),
            },
            Interest::all().kinds([KindPattern::group_kind("", "ConfigMap")]),
        ))
    }

    fn analyze(&self, object: &ObjectView, cache: &dyn Cache) -> Vec<Relationship> {
        let started = Instant::now();
        while started.elapsed() < self.delay {}
        // A handle of an earlier call: reading its name asks GRW for it now.
        if let Some(kept) = KEPT.with(|k| k.borrow_mut().take()) {
            // A lookup first, so this call has a found object of its own
            // where the kept handle would point if handles were numbered
            // from each call's start: only a handle that knows its call
            // can then tell the two apart.
            let own = cache.get(
                &Gvk::new("", "v1", "ConfigMap"),
                object.namespace(),
                object.name(),
            );
            let read = kept.name().to_string();
            drop(own);
            return vec![Relationship::outgoing(
                "read-kept",
                ObjectRef::new(Gvk::new("", "v1", "ConfigMap"), object.namespace(), read),
            )];
        }
        match object.label("fault").as_deref() {
            Some("trap") => panic!("ConfigMap {} asked for a trap", object.name()),
            Some("loop") =>
            {
                #[allow(clippy::empty_loop, reason = "never returning is the point")]
                loop {}
            }
            Some("hoard") => {
                let kind = Gvk::new("", "v1", "ConfigMap");
                // A million lists of even one small ConfigMap would hold
                // over 100 MB in the host if GRW did not refuse one.
                for _ in 0..1_000_000 {
                    if let Err(e) = cache.list(&kind, object.namespace(), "") {
                        let target =
                            ObjectRef::new(kind.clone(), object.namespace(), "refused-list");
                        return vec![Relationship::outgoing("refused", target).with("error", e)];
                    }
                }
                return Vec::new();
            }
            Some("keep") => {
                let mentioned = object.label("mentions").unwrap_or_default();
                let found = cache.get(
                    &Gvk::new("", "v1", "ConfigMap"),
                    object.namespace(),
                    &mentioned,
                );
                KEPT.with(|k| *k.borrow_mut() = found);
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
