//! # label-filter
//!
//! A GRW filter that passes events for objects whose labels match a
//! Kubernetes label selector.
//!
//! ## Configuration
//!
//! ```json
//! {"selector": "app in (web,api),tier!=cache"}
//! ```
//!
//! - `selector` (string, required): the selector, in the syntax `kubectl -l`
//!   takes: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`,
//!   `k>n`, `k<n`, comma-separated, all of which must hold. `""` passes
//!   everything. A malformed selector is rejected at load, with the position
//!   where parsing failed.
//!
//! Labels come from the event itself, so the object's JSON is never parsed.
//! For `DELETED` events they are the object's last labels.

use grw_sdk::{Event, Filter, Interest, LabelSelector};

/// The filter: its configuration is all its state.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LabelFilter {
    selector: LabelSelector,
}

impl Filter for LabelFilter {
    fn init(config: &str) -> Result<(Self, Interest), String> {
        Ok((grw_sdk::parse_config(config)?, Interest::all()))
    }

    fn decide(&self, event: &Event) -> bool {
        self.selector.matches(event)
    }
}

grw_sdk::export_filter!(LabelFilter);

#[cfg(test)]
mod tests;
