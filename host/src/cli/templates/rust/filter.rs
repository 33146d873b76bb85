//! # {{name}}
//!
//! A GRW filter: passes events of objects that carry the label named in its
//! configuration, `{"label": "team"}`. Change `decide` to decide otherwise.

use grw_sdk::{Event, Filter, Interest};
use serde::Deserialize;

/// The filter, configured.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Plugin {
    label: String,
}

impl Filter for Plugin {
    fn init(config: &str) -> Result<(Self, Interest), String> {
        Ok((grw_sdk::parse_config(config)?, Interest::all()))
    }

    fn decide(&self, event: &Event) -> bool {
        event.label(&self.label).is_some()
    }
}

grw_sdk::export_filter!(Plugin);

#[cfg(test)]
mod tests {
    use grw_sdk::EventType;
    use serde_json::json;

    use super::*;

    #[test]
    fn passes_objects_with_the_label() {
        let (filter, _) = Plugin::init(r#"{"label": "team"}"#).unwrap();
        let labelled = json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "a", "namespace": "shop", "labels": {"team": "web"}}});
        let plain = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}});
        assert!(filter.decide(&Event::new(EventType::Added, labelled)));
        assert!(!filter.decide(&Event::new(EventType::Added, plain)));
    }

    #[test]
    fn a_config_without_the_label_is_refused() {
        let error = Plugin::init("{}").err().unwrap();
        assert!(error.contains("label"), "{error}");
    }
}
