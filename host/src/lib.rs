//! GRW, the Generic Resources Watcher.
//!
//! Data flows one way: [`kube`] (client, discovery) → [`watch`] (list/watch
//! loops, relist diff, replay) → [`store`] (objects, indexes, change history)
//! → [`query`] (selectors, planning, paging) → [`api`] (HTTP). Beside
//! them, [`notify`] delivers changes, [`plugin`] runs WebAssembly plugins,
//! and [`relations`] keeps the relationship index analyzer plugins find;
//! with several replicas, [`leader`] picks the one that delivers.
//! [`app`] wires them together.
#![warn(missing_docs)]

pub mod api;
pub mod app;
pub mod backoff;
pub mod cli;
pub mod config;
pub mod error;
pub mod gvk;
pub mod kube;
pub mod leader;
pub mod metrics;
pub mod notify;
pub mod plugin;
pub mod query;
pub mod relations;
pub mod store;
pub mod time;
pub mod watch;
