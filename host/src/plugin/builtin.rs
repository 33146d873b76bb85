//! The shipped analyzers (`plugins/ownership`, `services`, `references`,
//! `istio-gateways`), compiled into GRW so that relationships work with no
//! plugin directory.
//!
//! They are the same crates the components are built from, called
//! natively through the SDK's traits: an analysis sees an
//! [`ObjectView`] over the stored object and a [`grw_sdk::Cache`] over the
//! call's [`CacheReader`], which records lookups and reads exactly as the
//! host side of a component's `object` handles does. Linked in rather than
//! embedded as components because the host then needs no wasm32 build of
//! its own, compiles nothing at start-up (the four components took 1.8 to
//! 2.5 s on first start, see BENCHMARKS.md), and calls cost a few µs less
//! each. What they do not get is the sandbox: no deadline or memory cap
//! applies, which is fine for code that ships with GRW, and a panic is
//! caught and counts as a trap, so the object's last edges are kept.
//!
//! A file of the same name in the plugin directory replaces a built-in
//! analyzer (see [`super::Plugins`]).

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;

use grw_plugin_istio_gateways::IstioGateways;
use grw_plugin_ownership::Ownership;
use grw_plugin_references::References;
use grw_plugin_services::Services;
use grw_sdk::{ObjectSource, ObjectView};

use super::analysis::{CacheReader, Found, Relationship};
use super::{CallFailed, Interest, PluginError};
use crate::gvk::Gvk;
use crate::store::{ChangeType, StoredObject};

/// One analyzer compiled into GRW.
pub struct BuiltIn {
    /// Its plugin name, as a file in the plugin directory would have it.
    pub name: &'static str,
    /// Its manifest, the one shipped beside the component.
    pub(super) manifest: &'static str,
    /// The kinds (group, kind) it makes GRW watch: those its interest
    /// names and those its lookups ask for (`grw rbac` grants them).
    pub follows: &'static [(&'static str, &'static str)],
    init: Init,
}

/// An analyzer's `init`, whatever its type: the analyzer and its interest.
type Init = fn(&str) -> Result<(Box<dyn Native>, grw_sdk::Interest), String>;

/// Every built-in analyzer, by name.
pub const BUILT_IN: [BuiltIn; 4] = [
    BuiltIn {
        name: "istio-gateways",
        manifest: include_str!("../../../plugins/istio-gateways/istio-gateways.json"),
        follows: &[
            ("networking.istio.io", "VirtualService"),
            ("networking.istio.io", "Gateway"),
        ],
        init: init::<IstioGateways>,
    },
    BuiltIn {
        name: "ownership",
        manifest: include_str!("../../../plugins/ownership/ownership.json"),
        // Every kind GRW watches anyway, and nothing more.
        follows: &[],
        init: init::<Ownership>,
    },
    BuiltIn {
        name: "references",
        manifest: include_str!("../../../plugins/references/references.json"),
        follows: &[
            ("", "Pod"),
            ("apps", "Deployment"),
            ("apps", "ReplicaSet"),
            ("apps", "StatefulSet"),
            ("apps", "DaemonSet"),
            ("batch", "Job"),
            ("batch", "CronJob"),
            ("", "PersistentVolumeClaim"),
            ("", "PersistentVolume"),
            ("networking.k8s.io", "Ingress"),
        ],
        init: init::<References>,
    },
    BuiltIn {
        name: "services",
        manifest: include_str!("../../../plugins/services/services.json"),
        follows: &[
            ("", "Service"),
            ("discovery.k8s.io", "EndpointSlice"),
            ("", "Pod"),
        ],
        init: init::<Services>,
    },
];

impl BuiltIn {
    /// The analyzer initialized with `config` (JSON text), and what it
    /// declared.
    pub(super) fn start(&self, config: &str) -> Result<(Box<dyn Native>, Interest), PluginError> {
        let (analyzer, interest) = catch_unwind(|| (self.init)(config))
            .map_err(|panic| PluginError::ConfigRejected(panic_message(&*panic)))?
            .map_err(PluginError::ConfigRejected)?;
        Ok((analyzer, host_interest(interest)))
    }
}

/// An analyzer's `analyze`, whatever its type.
pub(super) trait Native: Send + Sync {
    fn analyze(
        &self,
        object: &ObjectView,
        cache: &dyn grw_sdk::Cache,
    ) -> Vec<grw_sdk::Relationship>;
}

impl<A: grw_sdk::Analyzer + Send + Sync> Native for A {
    fn analyze(
        &self,
        object: &ObjectView,
        cache: &dyn grw_sdk::Cache,
    ) -> Vec<grw_sdk::Relationship> {
        grw_sdk::Analyzer::analyze(self, object, cache)
    }
}

fn init<A: grw_sdk::Analyzer + Send + Sync + 'static>(
    config: &str,
) -> Result<(Box<dyn Native>, grw_sdk::Interest), String> {
    let (analyzer, interest) = A::init(config)?;
    Ok((Box::new(analyzer), interest))
}

/// Runs one analysis of a `gvk` object, its lookups answered by `reader`.
/// A panic is the analysis's failure, with the panic's message.
pub(super) fn analyze(
    analyzer: &dyn Native,
    gvk: &Gvk,
    object: &Arc<StoredObject>,
    reader: Arc<dyn CacheReader>,
) -> Result<Vec<Relationship>, CallFailed> {
    let view = ObjectView::from_source(Box::new(HostObject {
        gvk: gvk.clone(),
        object: object.clone(),
        reader: None,
    }));
    let cache = HostCache(reader);
    catch_unwind(AssertUnwindSafe(|| analyzer.analyze(&view, &cache)))
        .map(|found| found.into_iter().map(host_relationship).collect())
        .map_err(|panic| CallFailed::Panic(panic_message(&*panic)))
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

fn host_interest(interest: grw_sdk::Interest) -> Interest {
    Interest::new(
        interest
            .kinds
            .into_iter()
            .map(|k| (k.group, k.version, k.kind))
            .collect(),
        interest
            .event_types
            .into_iter()
            .map(|t| match t {
                grw_sdk::EventType::Added => ChangeType::Added,
                grw_sdk::EventType::Modified => ChangeType::Modified,
                grw_sdk::EventType::Deleted => ChangeType::Deleted,
            })
            .collect(),
    )
}

fn host_relationship(r: grw_sdk::Relationship) -> Relationship {
    let gvk = r.target.gvk;
    Relationship {
        relation: r.relation,
        outgoing: r.direction == grw_sdk::Direction::Outgoing,
        gvk: Gvk::new(&gvk.group, &gvk.version, &gvk.kind),
        namespace: r.target.namespace,
        name: r.target.name,
        attributes: r.attributes,
    }
}

/// The SDK's cache interface over the call's reader.
struct HostCache(Arc<dyn CacheReader>);

impl HostCache {
    fn view(&self, (gvk, object): Found) -> ObjectView {
        ObjectView::from_source(Box::new(HostObject {
            gvk,
            object,
            reader: Some(self.0.clone()),
        }))
    }
}

fn host_gvk(gvk: &grw_sdk::Gvk) -> Gvk {
    Gvk::new(&gvk.group, &gvk.version, &gvk.kind)
}

impl grw_sdk::Cache for HostCache {
    fn get(&self, gvk: &grw_sdk::Gvk, namespace: &str, name: &str) -> Option<ObjectView> {
        let found = self.0.get(&host_gvk(gvk), namespace, name)?;
        Some(self.view(found))
    }

    fn list(
        &self,
        gvk: &grw_sdk::Gvk,
        namespace: &str,
        label_selector: &str,
    ) -> Result<Vec<ObjectView>, String> {
        let found = self.0.list(&host_gvk(gvk), namespace, label_selector)?;
        Ok(found.into_iter().map(|f| self.view(f)).collect())
    }

    fn owned_by(&self, gvk: &grw_sdk::Gvk, owner_uid: &str) -> Vec<ObjectView> {
        self.0
            .owned_by(&host_gvk(gvk), owner_uid)
            .into_iter()
            .map(|f| self.view(f))
            .collect()
    }
}

/// A stored object, read as a component reads it through its handle: the
/// identity (kind, namespace, name, uid) freely, anything more of an
/// object a lookup found told to the reader, since the answer now depends
/// on it.
struct HostObject {
    gvk: Gvk,
    object: Arc<StoredObject>,
    /// The call's reader, for objects a lookup found; `None` for the
    /// analyzed object itself.
    reader: Option<Arc<dyn CacheReader>>,
}

impl HostObject {
    fn content(&self) -> &StoredObject {
        if let Some(reader) = &self.reader {
            reader.read(&self.gvk, &self.object);
        }
        &self.object
    }
}

impl ObjectSource for HostObject {
    fn json(&self) -> String {
        self.content().json_string()
    }

    fn get(&self, path: &[String]) -> Option<String> {
        Some(String::from_utf8_lossy(&self.content().get(path)?).into_owned())
    }

    fn labels(&self) -> Vec<(String, String)> {
        self.content()
            .labels()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn annotations(&self) -> Vec<(String, String)> {
        self.content().annotations()
    }

    fn label(&self, key: &str) -> Option<String> {
        self.content().label(key).map(str::to_string)
    }

    fn gvk(&self) -> grw_sdk::Gvk {
        grw_sdk::Gvk::new(&self.gvk.group, &self.gvk.version, &self.gvk.kind)
    }

    fn namespace(&self) -> String {
        self.object.namespace().to_string()
    }

    fn name(&self) -> String {
        self.object.name().to_string()
    }

    fn uid(&self) -> String {
        self.object.uid().to_string()
    }

    fn resource_version(&self) -> String {
        self.content().resource_version().to_string()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;
    use std::path::Path;

    use parking_lot::Mutex;

    use super::*;
    use crate::watch::Recording;

    #[test]
    fn the_config_names_every_built_in_analyzer() {
        let names: Vec<&str> = BUILT_IN.iter().map(|b| b.name).collect();
        assert_eq!(names, crate::config::BUILT_IN_ANALYZERS);
    }

    /// Records the kinds looked up; finds nothing.
    #[derive(Default)]
    struct Kinds(Mutex<BTreeSet<(String, String)>>);

    impl Kinds {
        fn note(&self, gvk: &Gvk) {
            self.0.lock().insert((gvk.group.clone(), gvk.kind.clone()));
        }
    }

    impl CacheReader for Kinds {
        fn get(&self, gvk: &Gvk, _: &str, _: &str) -> Option<Found> {
            self.note(gvk);
            None
        }
        fn list(&self, gvk: &Gvk, _: &str, _: &str) -> Result<Vec<Found>, String> {
            self.note(gvk);
            Ok(Vec::new())
        }
        fn owned_by(&self, gvk: &Gvk, _: &str) -> Vec<Found> {
            self.note(gvk);
            Vec::new()
        }
        fn read(&self, _: &Gvk, _: &StoredObject) {}
    }

    /// `follows` is what `grw rbac` grants: every kind an analyzer's
    /// interest names or its lookups ask for must be in it, here over
    /// every object of the bundled recording.
    #[test]
    fn follows_names_every_kind_an_analyzer_watches() {
        let recording = Recording::read(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/cluster-recording.jsonl"),
        )
        .unwrap();
        for built_in in &BUILT_IN {
            let follows: BTreeSet<(String, String)> = built_in
                .follows
                .iter()
                .map(|(g, k)| (g.to_string(), k.to_string()))
                .collect();
            let (analyzer, interest) = built_in.start("{}").unwrap();
            for (group, _, kind) in &interest.kinds {
                if let (Some(group), Some(kind)) = (group, kind) {
                    assert!(
                        follows.contains(&(group.clone(), kind.clone())),
                        "{}: its interest names {group}/{kind}",
                        built_in.name
                    );
                }
            }
            let looked_up = Arc::new(Kinds::default());
            let mut analyzed = 0;
            for (gvk, _, value) in &recording.events {
                if !interest.wants_kind(gvk) {
                    continue;
                }
                let object = Arc::new(StoredObject::from_value(value.clone(), gvk, false).unwrap());
                analyze(analyzer.as_ref(), gvk, &object, looked_up.clone()).unwrap();
                analyzed += 1;
            }
            assert!(analyzed > 0, "{} analyzed nothing", built_in.name);
            for kind in looked_up.0.lock().iter() {
                assert!(
                    follows.contains(kind),
                    "{} looked up {kind:?}, which `follows` does not name",
                    built_in.name
                );
            }
        }
    }

    struct Panics;

    impl Native for Panics {
        fn analyze(&self, _: &ObjectView, _: &dyn grw_sdk::Cache) -> Vec<grw_sdk::Relationship> {
            panic!("index out of bounds: the len is 0 but the index is 3")
        }
    }

    #[test]
    fn a_panic_is_a_failed_analysis_with_its_message() {
        let gvk = Gvk::new("", "v1", "Pod");
        let object = Arc::new(
            StoredObject::from_value(
                serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"}}),
                &gvk,
                false,
            )
            .unwrap(),
        );
        let error = analyze(&Panics, &gvk, &object, Arc::new(Kinds::default())).unwrap_err();
        assert_eq!(
            error.to_string(),
            "panicked: index out of bounds: the len is 0 but the index is 3"
        );
    }

    #[test]
    fn a_built_in_analyzer_reads_the_stored_object() {
        let ownership = BUILT_IN.iter().find(|b| b.name == "ownership").unwrap();
        let (analyzer, _) = ownership.start("{}").unwrap();
        let gvk = Gvk::new("", "v1", "Pod");
        let object = Arc::new(
            StoredObject::from_value(
                serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {
                    "name": "web-1", "namespace": "shop", "uid": "u1",
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                        "name": "web-7d9f", "uid": "u0", "controller": true}]}}),
                &gvk,
                false,
            )
            .unwrap(),
        );
        let found = analyze(analyzer.as_ref(), &gvk, &object, Arc::new(Kinds::default())).unwrap();
        assert_eq!(
            found,
            [Relationship {
                relation: "owns".into(),
                outgoing: false,
                gvk: Gvk::new("apps", "v1", "ReplicaSet"),
                namespace: "shop".into(),
                name: "web-7d9f".into(),
                attributes: vec![("controller".into(), "true".into())],
            }]
        );
    }
}
