//! Selectors as the API server parses them, parsed once at the edge (the
//! configuration, a query's parameters) and matched inside: label selectors
//! from the `grw-selector` crate (shared with the plugin SDK and the test
//! fake), field selectors here. A leaf of the module graph.

pub mod field;

pub use field::{FieldSelector, FieldSelectorError};
/// Label selectors: the Kubernetes API server's grammar, shared with the
/// plugin SDK.
pub use grw_selector::{LabelSelector, Requirement, SelectorError};
