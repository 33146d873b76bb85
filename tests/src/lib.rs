//! Test support: a wire-level fake Kubernetes API server and helpers to run the real `grw`.
pub mod fake_api;
