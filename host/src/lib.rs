//! GRW, the Generic Resources Watcher.
//!
//! Data flows one way: [`kube`] (client, discovery) → [`watch`] (list/watch
//! loops, relist diff, replay) → [`store`] (objects + indexes + event
//! history) → [`query`] (selectors, planning) → [`api`] (HTTP).
#![warn(missing_docs)]

pub mod config;
pub mod gvk;
pub mod query;
