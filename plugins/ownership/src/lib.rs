//! # ownership
//!
//! A GRW analyzer: each entry of an object's `metadata.ownerReferences` is
//! an edge `owner owns object`, with attribute `controller` = `true` for the
//! owner that manages the object (Deployment → ReplicaSet → Pod,
//! StatefulSet / DaemonSet / Job → Pod, CronJob → Job, and any other owner,
//! custom resources included) and `false` for the others.
//!
//! ## Configuration
//!
//! ```json
//! {"kinds": [{"group": "apps", "kind": "ReplicaSet"}, {"kind": "Pod"}]}
//! ```
//!
//! - `kinds` (array of kind patterns, default: every kind): the kinds whose
//!   owner references are read. Each pattern may name `group`, `version`
//!   and `kind`; a missing part matches anything.
//!
//! Reads only the owner references, never the rest of the object, and
//! looks nothing up: an owner that is not (yet) cached is an edge to a
//! missing object.

use grw_sdk::{
    Analyzer, Cache, FieldPath, Gvk, Interest, KindPattern, ObjectRef, ObjectView, Relationship,
};
use serde::Deserialize;

/// The analyzer: which kinds it reads.
pub struct Ownership {
    path: FieldPath,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Config {
    #[serde(default)]
    kinds: Vec<Pattern>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Pattern {
    group: Option<String>,
    version: Option<String>,
    kind: Option<String>,
}

/// One entry of `metadata.ownerReferences`; fields other objects may carry
/// are ignored.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct OwnerReference {
    api_version: String,
    kind: String,
    name: String,
    #[serde(default)]
    controller: Option<bool>,
}

impl Analyzer for Ownership {
    fn init(config: &str) -> Result<(Self, Interest), String> {
        let config: Config = grw_sdk::parse_config(config)?;
        let interest = Interest::all().kinds(config.kinds.into_iter().map(|p| KindPattern {
            group: p.group,
            version: p.version,
            kind: p.kind,
        }));
        let path = "metadata.ownerReferences"
            .parse()
            .map_err(|e| format!("{e}"))?;
        Ok((Ownership { path }, interest))
    }

    fn analyze(&self, object: &ObjectView, _cache: &dyn Cache) -> Vec<Relationship> {
        let Some(references) = object.field(&self.path) else {
            return Vec::new();
        };
        let references: Vec<OwnerReference> = match serde_json::from_value(references) {
            Ok(references) => references,
            Err(e) => {
                grw_sdk::log::warn(format!(
                    "{} {}/{}: unreadable ownerReferences ({e}); no ownership edges",
                    object.gvk().kind,
                    object.namespace(),
                    object.name()
                ));
                return Vec::new();
            }
        };
        references
            .into_iter()
            .map(|owner| {
                // Owners live in the object's namespace, or are cluster-scoped;
                // a namespaced object's owner is taken to be in its namespace.
                let gvk = Gvk::from_api_version(&owner.api_version, owner.kind);
                let source = ObjectRef::new(gvk, object.namespace(), owner.name);
                Relationship::incoming("owns", source)
                    .with("controller", owner.controller.unwrap_or(false).to_string())
            })
            .collect()
    }
}

grw_sdk::export_analyzer!(Ownership);

#[cfg(test)]
mod tests;
