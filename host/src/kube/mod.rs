//! The one module that talks to the Kubernetes API server: building the
//! client from the configuration, discovery, and the raw LIST/WATCH calls the
//! watch loops use.

mod client;
mod discovery;

pub use client::{ApiError, KubeClient, ListPage, WatchLine};
pub use discovery::{Catalog, Discovery, DiscoveryError, ResolveError, ResourceEntry};
