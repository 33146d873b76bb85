//! The `grw` command's tools besides the daemon: `grw plugin check` and
//! `grw plugin test` ([`plugin`]), `grw plugin new` ([`new`]), `grw rbac`
//! ([`rbac`]), `grw probe` ([`probe`]).

pub mod new;
pub mod plugin;
pub mod probe;
pub mod rbac;
