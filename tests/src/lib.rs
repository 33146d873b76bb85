//! Test support: a wire-level fake Kubernetes API server, and a harness that
//! runs the real `grw` binary and talks to it.

pub mod daemon;
pub mod fake_api;
pub mod plugins;
