//! Test support: a wire-level fake Kubernetes API server, a harness that
//! runs the real `grw` binary and talks to it, a real NATS server, a real
//! Kafka-protocol broker with a real Kafka consumer, and a
//! generator of realistic Pods and their changes for benchmarks.

pub mod churn;
pub mod daemon;
pub mod fake_api;
pub mod kafka;
pub mod kubectl;
pub mod nats;
pub mod plugins;
pub mod pods;
pub mod receiver;
pub mod tls;
