//! # changed-fields
//!
//! A GRW filter that passes a `MODIFIED` event only when at least one of the
//! configured fields differs between the object's old and new state. It
//! turns the stream of status heartbeats and `resourceVersion` bumps into
//! the changes someone cares about.
//!
//! ## Configuration
//!
//! ```json
//! {"paths": ["spec", "metadata.labels", "status.phase"], "passOtherTypes": true}
//! ```
//!
//! - `paths` (list, required, at least one): the fields to compare. Each is
//!   either dotted (`spec.replicas`, `spec.containers.0.image`; a number
//!   indexes a list) or a JSON pointer starting with `/`, needed for keys
//!   that contain dots or slashes:
//!   `/metadata/labels/app.kubernetes.io~1name` (`~1` is `/`, `~0` is `~`).
//!   A field that appears or disappears counts as changed; a whole subtree
//!   (`spec`) changes when anything inside it does. Avoid `metadata` as a
//!   whole: its `resourceVersion` changes on every update.
//! - `passOtherTypes` (bool, default `true`): whether `ADDED` and `DELETED`
//!   events pass. When `false`, the plugin tells GRW it only wants
//!   `MODIFIED` events, so the others never reach it.
//!
//! Only the configured fields are read from GRW, never the whole object.
//! A `MODIFIED` event without its old state passes, with a warning in the
//! log: dropping a change that cannot be checked would hide it.
//!
//! Malformed configuration (empty path, `a..b`, a bad `~` escape, unknown
//! keys, wrong types) is rejected at load with a message naming the key.

use grw_sdk::{Event, EventType, FieldPath, Filter, Interest};
use serde::Deserialize;

/// The changed-fields filter, configured.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ChangedFields {
    paths: Vec<FieldPath>,
    #[serde(default = "pass_other_types")]
    pass_other_types: bool,
}

fn pass_other_types() -> bool {
    true
}

impl Filter for ChangedFields {
    fn init(config: &str) -> Result<(Self, Interest), String> {
        let filter: ChangedFields = grw_sdk::parse_config(config)?;
        if filter.paths.is_empty() {
            return Err("config key `paths`: name at least one field; with none, no MODIFIED event could pass".into());
        }
        let interest = if filter.pass_other_types {
            Interest::all()
        } else {
            Interest::all().event_types([EventType::Modified])
        };
        Ok((filter, interest))
    }

    fn decide(&self, event: &Event) -> bool {
        if event.event_type != EventType::Modified {
            return self.pass_other_types;
        }
        if !event.has_old_object() {
            grw_sdk::log::warn(format!(
                "MODIFIED event for {}/{} has no old object; passing it unchecked",
                event.namespace(),
                event.name()
            ));
            return true;
        }
        self.paths
            .iter()
            .any(|path| event.old_field(path) != event.field(path))
    }
}

grw_sdk::export_filter!(ChangedFields);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn filter(config: &str) -> (ChangedFields, Interest) {
        ChangedFields::init(config).unwrap_or_else(|e| panic!("{e}"))
    }

    fn deployment(replicas: u32, labels: Value, phase: &str, rv: &str) -> Value {
        json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {
                "name": "web",
                "namespace": "shop",
                "resourceVersion": rv,
                "labels": labels,
                "annotations": {"app.kubernetes.io/version": "1"},
            },
            "spec": {"replicas": replicas},
            "status": {"phase": phase, "observedGeneration": rv},
        })
    }

    fn modified(old: Value, new: Value) -> Event {
        Event::new(EventType::Modified, new).with_old_object(old)
    }

    const EXAMPLE: &str =
        r#"{"paths": ["spec", "metadata.labels", "status.phase"], "passOtherTypes": true}"#;

    #[test]
    fn passes_only_when_a_configured_field_changed() {
        let (f, interest) = filter(EXAMPLE);
        assert_eq!(interest, Interest::all());
        let base = deployment(1, json!({"app": "web"}), "Running", "1");

        // Only resourceVersion and an unwatched status field moved.
        assert!(!f.decide(&modified(
            base.clone(),
            deployment(1, json!({"app": "web"}), "Running", "2")
        )));
        // A change inside `spec`.
        assert!(f.decide(&modified(
            base.clone(),
            deployment(2, json!({"app": "web"}), "Running", "2")
        )));
        // A label added.
        assert!(f.decide(&modified(
            base.clone(),
            deployment(1, json!({"app": "web", "tier": "front"}), "Running", "2")
        )));
        // A watched leaf.
        assert!(f.decide(&modified(
            base,
            deployment(1, json!({"app": "web"}), "Failed", "2")
        )));
    }

    #[test]
    fn appearing_and_disappearing_fields_count_as_changes() {
        let (f, _) = filter(r#"{"paths": ["spec.paused"]}"#);
        let old = deployment(1, json!({}), "Running", "1");
        let mut new = old.clone();
        new["spec"]["paused"] = json!(true);
        assert!(f.decide(&modified(old.clone(), new.clone())));
        assert!(f.decide(&modified(new, old.clone())));
        assert!(!f.decide(&modified(old.clone(), old)));
    }

    #[test]
    fn json_pointers_reach_keys_with_dots() {
        let (f, _) = filter(r#"{"paths": ["/metadata/annotations/app.kubernetes.io~1version"]}"#);
        let old = deployment(1, json!({}), "Running", "1");
        let mut new = old.clone();
        assert!(!f.decide(&modified(old.clone(), new.clone())));
        new["metadata"]["annotations"]["app.kubernetes.io/version"] = json!("2");
        assert!(f.decide(&modified(old, new)));
    }

    #[test]
    fn other_event_types_follow_pass_other_types() {
        let object = deployment(1, json!({}), "Running", "1");
        let (f, _) = filter(EXAMPLE);
        assert!(f.decide(&Event::new(EventType::Added, object.clone())));
        assert!(f.decide(&Event::new(EventType::Deleted, object.clone())));

        let (f, interest) = filter(r#"{"paths": ["spec"], "passOtherTypes": false}"#);
        assert_eq!(interest.event_types, vec![EventType::Modified]);
        assert!(!f.decide(&Event::new(EventType::Added, object.clone())));
        assert!(!f.decide(&Event::new(EventType::Deleted, object)));
    }

    #[test]
    fn unverifiable_modifications_pass() {
        let (f, _) = filter(r#"{"paths": ["spec"]}"#);
        let without_old = Event::new(
            EventType::Modified,
            deployment(1, json!({}), "Running", "1"),
        );
        assert!(f.decide(&without_old));
    }

    #[test]
    fn bad_config_names_the_key() {
        let error = |config: &str| ChangedFields::init(config).err().unwrap();
        let e = error(r#"{"paths": ["spec", "a..b"]}"#);
        assert!(
            e.starts_with("config key `paths[1]`") && e.contains("empty segment"),
            "{e}"
        );
        let e = error(r#"{"paths": ["/a/~2"]}"#);
        assert!(e.starts_with("config key `paths[0]`"), "{e}");
        let e = error(r#"{"paths": [""]}"#);
        assert!(e.starts_with("config key `paths[0]`"), "{e}");
        let e = error(r#"{"paths": []}"#);
        assert!(e.starts_with("config key `paths`"), "{e}");
        let e = error("{}");
        assert!(e.contains("missing field `paths`"), "{e}");
        let e = error(r#"{"paths": "spec"}"#);
        assert!(e.starts_with("config key `paths`"), "{e}");
        let e = error(r#"{"paths": ["spec"], "passOtherTypes": 1}"#);
        assert!(e.starts_with("config key `passOtherTypes`"), "{e}");
        let e = error(r#"{"paths": ["spec"], "pasOtherTypes": true}"#);
        assert!(e.contains("unknown field `pasOtherTypes`"), "{e}");
    }
}
