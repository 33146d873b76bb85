//! Field selectors.
