//! Queries over the cache: label and field selectors, paging, planning.

pub mod field;
pub mod label;
