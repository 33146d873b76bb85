//! The `grw` command's tools besides the daemon: `grw plugin check` and
//! `grw plugin test` ([`plugin`]), `grw plugin new` ([`new`]).

pub mod new;
pub mod plugin;
