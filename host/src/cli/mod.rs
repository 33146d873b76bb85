//! The `grw` command's tools besides the daemon: `grw plugin check` and
//! `grw plugin test` ([`plugin`]).

pub mod plugin;
