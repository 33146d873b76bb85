//! GRW, the Generic Resources Watcher.
//!
//! Data flows one way: [`kube`] (client, discovery) → [`watch`] (list/watch
//! loops, relist diff, replay) → [`store`] (objects, indexes, change history)
//! → [`query`] (planning, paging) → [`api`] (HTTP). Beside them,
//! [`notify`] delivers changes, [`plugin`] runs WebAssembly plugins (and
//! the analyzers built in), and [`relations`] keeps the relationship index
//! the analyzers find; with several replicas, [`leader`] picks the one that
//! delivers, driving [`notify`] through a trait of its own. [`app`] wires
//! them together, [`cli`] is the command line.
//!
//! At the bottom, used by all and using nothing above them: [`config`]
//! (every setting, checked), and the vocabulary it is written in: [`gvk`]
//! (kinds), [`event`] (watch event types) and [`selectors`] (label and
//! field selectors).
#![warn(missing_docs)]

pub mod api;
pub mod app;
pub mod backoff;
pub mod cel;
pub mod cli;
pub mod config;
pub mod error;
pub mod event;
pub mod gvk;
pub mod journal;
pub(crate) mod json_text;
pub mod kube;
pub mod leader;
pub mod memory_file;
pub mod metrics;
pub mod notify;
pub mod plugin;
pub mod query;
pub mod relations;
pub mod selectors;
pub mod store;
pub mod time;
pub mod watch;

#[cfg(test)]
mod layering;
#[cfg(test)]
mod recorded;
