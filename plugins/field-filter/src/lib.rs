//! # field-filter
//!
//! A GRW filter that passes events by the value of one field of the object:
//! Pods that are `Failed`, Deployments scaled to zero, Services of type
//! `LoadBalancer`.
//!
//! ## Configuration
//!
//! ```json
//! {"path": "status.phase", "in": ["Failed", "Unknown"]}
//! ```
//!
//! - `path` (string, required): the field, dotted (`spec.replicas`,
//!   `spec.containers.0.image`; a number indexes a list) or a JSON pointer
//!   starting with `/` for keys with dots or slashes
//!   (`/metadata/annotations/example.com~1owner`).
//! - `in` (list): the event passes when the field's value is one of these;
//!   or
//! - `notIn` (list): the event passes when it is none of these.
//!
//!   Exactly one of `in` and `notIn`. Values are JSON and compare as JSON:
//!   `"3"` is not `3`. A field that is absent counts as `null`, so
//!   `"in": [null]` passes objects without it and `"notIn": [null]` only
//!   objects that have it.
//! - `eventTypes` (list of `ADDED`, `MODIFIED`, `DELETED`, default all):
//!   the events to judge; GRW does not hand the others to the plugin, and
//!   they do not pass.
//!
//! The plugin reads only that one field from GRW, never the whole object,
//! so judging an event costs about the same for a small ConfigMap as for a
//! large Pod. For `DELETED` events the field is read from the object's last
//! state.

use grw_sdk::serde_json::Value;
use grw_sdk::{Event, EventType, FieldPath, Filter, Interest};
use serde::Deserialize;

/// The field filter, configured.
#[derive(Debug)]
pub struct FieldFilter {
    path: FieldPath,
    values: Vec<Value>,
    /// `true` for `in`, `false` for `notIn`.
    pass_if_listed: bool,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    path: FieldPath,
    #[serde(rename = "in")]
    is_in: Option<Vec<Value>>,
    not_in: Option<Vec<Value>>,
    #[serde(default)]
    event_types: Vec<EventTypeName>,
}

#[derive(Deserialize)]
#[serde(rename_all = "UPPERCASE")]
enum EventTypeName {
    Added,
    Modified,
    Deleted,
}

impl Filter for FieldFilter {
    fn init(config: &str) -> Result<(Self, Interest), String> {
        let config: Config = grw_sdk::parse_config(config)?;
        let (values, pass_if_listed) = match (config.is_in, config.not_in) {
            (Some(values), None) => (values, true),
            (None, Some(values)) => (values, false),
            (Some(_), Some(_)) => {
                return Err("config keys `in` and `notIn`: give one of them, not both".into());
            }
            (None, None) => {
                return Err(
                    "config key `in` (or `notIn`): list the values the field must (or must not) have"
                        .into(),
                );
            }
        };
        let interest =
            Interest::all().event_types(config.event_types.into_iter().map(|t| match t {
                EventTypeName::Added => EventType::Added,
                EventTypeName::Modified => EventType::Modified,
                EventTypeName::Deleted => EventType::Deleted,
            }));
        Ok((
            FieldFilter {
                path: config.path,
                values,
                pass_if_listed,
            },
            interest,
        ))
    }

    fn decide(&self, event: &Event) -> bool {
        let value = event.field(&self.path).unwrap_or(Value::Null);
        self.values.contains(&value) == self.pass_if_listed
    }
}

grw_sdk::export_filter!(FieldFilter);

#[cfg(test)]
mod tests {
    use super::*;
    use grw_sdk::serde_json::json;

    fn pod(phase: Option<&str>) -> Event {
        let mut pod = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-0", "namespace": "shop", "annotations": {"example.com/owner": "team-a"}},
            "spec": {"containers": [{"name": "web", "image": "web:1"}], "replicas": 0}});
        if let Some(phase) = phase {
            pod["status"] = json!({"phase": phase});
        }
        Event::new(EventType::Modified, pod)
    }

    fn filter(config: Value) -> (FieldFilter, Interest) {
        FieldFilter::init(&config.to_string()).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn in_passes_listed_values_only() {
        let (f, interest) = filter(json!({"path": "status.phase", "in": ["Failed", "Unknown"]}));
        assert_eq!(interest, Interest::all());
        assert!(f.decide(&pod(Some("Failed"))));
        assert!(f.decide(&pod(Some("Unknown"))));
        assert!(!f.decide(&pod(Some("Running"))));
        assert!(!f.decide(&pod(None)));
    }

    #[test]
    fn not_in_passes_everything_else() {
        let (f, _) = filter(json!({"path": "status.phase", "notIn": ["Running", "Succeeded"]}));
        assert!(f.decide(&pod(Some("Pending"))));
        assert!(!f.decide(&pod(Some("Running"))));
        // Absent is null, which is not listed.
        assert!(f.decide(&pod(None)));
    }

    #[test]
    fn absent_fields_are_null() {
        let (without, _) = filter(json!({"path": "status.phase", "in": [null]}));
        assert!(without.decide(&pod(None)));
        assert!(!without.decide(&pod(Some("Running"))));
        let (with, _) = filter(json!({"path": "status", "notIn": [null]}));
        assert!(with.decide(&pod(Some("Running"))));
        assert!(!with.decide(&pod(None)));
    }

    #[test]
    fn values_compare_as_json_at_any_path() {
        let (zero, _) = filter(json!({"path": "spec.replicas", "in": [0]}));
        assert!(zero.decide(&pod(None)));
        let (text, _) = filter(json!({"path": "spec.replicas", "in": ["0"]}));
        assert!(!text.decide(&pod(None)));
        let (image, _) = filter(json!({"path": "spec.containers.0.image", "in": ["web:1"]}));
        assert!(image.decide(&pod(None)));
        let (owner, _) =
            filter(json!({"path": "/metadata/annotations/example.com~1owner", "in": ["team-a"]}));
        assert!(owner.decide(&pod(None)));
        let (object, _) = filter(json!({"path": "status", "in": [{"phase": "Failed"}]}));
        assert!(object.decide(&pod(Some("Failed"))));
    }

    #[test]
    fn event_types_narrow_the_interest() {
        let (_, interest) = filter(
            json!({"path": "status.phase", "in": ["Failed"], "eventTypes": ["MODIFIED", "DELETED"]}),
        );
        assert_eq!(
            interest.event_types,
            vec![EventType::Modified, EventType::Deleted]
        );
        assert!(!interest.matches_event(&Event::new(
            EventType::Added,
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})
        )));
    }

    #[test]
    fn bad_config_names_the_key() {
        let error = |config: Value| FieldFilter::init(&config.to_string()).err().unwrap();
        let e = error(json!({"path": "status.phase"}));
        assert!(e.contains("config key `in` (or `notIn`)"), "{e}");
        let e = error(json!({"path": "a", "in": [1], "notIn": [2]}));
        assert!(e.contains("not both"), "{e}");
        let e = error(json!({"path": "a..b", "in": [1]}));
        assert!(e.starts_with("config key `path`"), "{e}");
        let e = error(json!({"in": [1]}));
        assert!(e.contains("missing field `path`"), "{e}");
        let e = error(json!({"path": "a", "in": "x"}));
        assert!(e.starts_with("config key `in`"), "{e}");
        let e = error(json!({"path": "a", "in": [1], "eventTypes": ["CHANGED"]}));
        assert!(e.starts_with("config key `eventTypes[0]`"), "{e}");
        let e = error(json!({"path": "a", "in": [1], "extra": true}));
        assert!(e.contains("unknown field `extra`"), "{e}");
    }
}
