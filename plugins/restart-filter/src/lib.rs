//! # restart-filter
//!
//! A GRW filter that passes events of Pods whose containers restarted at
//! least `minRestarts` times in all: the `restartCount`s of
//! `status.containerStatuses` and `status.initContainerStatuses`, added up.
//! The same filter ships in Python (`py-restart-filter`) and JavaScript
//! (`js-restart-filter`); the three decide alike on every event.
//!
//! ## Configuration
//!
//! ```json
//! {"minRestarts": 3}
//! ```
//!
//! - `minRestarts` (integer ≥ 0, default 1): the least number of restarts
//!   that passes.
//!
//! Its interest is Pods only, and it reads the two status lists, never the
//! rest of the object.

use grw_sdk::{Event, FieldPath, Filter, Interest, KindPattern};
use serde::Deserialize;

/// The filter, configured.
pub struct RestartFilter {
    min_restarts: u64,
    paths: [FieldPath; 2],
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct Config {
    #[serde(default = "one")]
    min_restarts: u64,
}

fn one() -> u64 {
    1
}

impl RestartFilter {
    /// Restarts of all the Pod's containers, init containers included.
    pub fn restarts(&self, event: &Event) -> u64 {
        self.paths
            .iter()
            .filter_map(|path| event.field(path))
            .filter_map(|statuses| statuses.as_array().cloned())
            .flatten()
            .filter_map(|status| status.get("restartCount").and_then(|n| n.as_u64()))
            .sum()
    }
}

impl Filter for RestartFilter {
    fn init(config: &str) -> Result<(Self, Interest), String> {
        let config: Config = grw_sdk::parse_config(config)?;
        let paths = ["status.containerStatuses", "status.initContainerStatuses"]
            .map(|p| FieldPath::parse(p).expect("the paths are valid"));
        let filter = RestartFilter {
            min_restarts: config.min_restarts,
            paths,
        };
        Ok((filter, Interest::all().kinds([KindPattern::kind("Pod")])))
    }

    fn decide(&self, event: &Event) -> bool {
        self.restarts(event) >= self.min_restarts
    }
}

grw_sdk::export_filter!(RestartFilter);

#[cfg(test)]
mod tests {
    use grw_sdk::EventType;
    use serde_json::json;

    use super::*;

    fn pod(restarts: &[u64], init_restarts: &[u64]) -> Event {
        let statuses = |counts: &[u64]| {
            counts
                .iter()
                .map(|n| json!({"name": "c", "restartCount": n}))
                .collect::<Vec<_>>()
        };
        Event::new(
            EventType::Modified,
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "shop"},
                   "status": {"containerStatuses": statuses(restarts),
                              "initContainerStatuses": statuses(init_restarts)}}),
        )
    }

    #[test]
    fn restarts_of_every_container_add_up() {
        let (filter, interest) = RestartFilter::init(r#"{"minRestarts": 3}"#).unwrap();
        assert!(!filter.decide(&pod(&[1, 1], &[])));
        assert!(filter.decide(&pod(&[1, 1], &[1])));
        assert!(filter.decide(&pod(&[5], &[])));
        assert_eq!(filter.restarts(&pod(&[2, 3], &[4])), 9);
        assert!(interest.matches(&grw_sdk::Gvk::new("", "v1", "Pod"), EventType::Added));
        assert!(!interest.matches(
            &grw_sdk::Gvk::new("apps", "v1", "Deployment"),
            EventType::Added
        ));
    }

    #[test]
    fn a_pod_without_statuses_has_no_restarts() {
        let (filter, _) = RestartFilter::init("{}").unwrap();
        let pending = Event::new(
            EventType::Added,
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}),
        );
        assert!(!filter.decide(&pending));
        assert!(filter.decide(&pod(&[1], &[])));
    }

    #[test]
    fn config_errors_name_the_key() {
        let error = RestartFilter::init(r#"{"minRestarts": -1}"#).err().unwrap();
        assert!(error.contains("minRestarts"), "{error}");
        let error = RestartFilter::init(r#"{"min": 1}"#).err().unwrap();
        assert!(error.contains("unknown field `min`"), "{error}");
    }
}
