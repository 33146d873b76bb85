//! The one module that talks to the Kubernetes API server: building the
//! client from the configuration, discovery, and the raw LIST/WATCH calls the
//! watch loops use.

mod client;
mod connect;
mod discovery;

pub use client::{ApiError, KubeClient, ListPage, WatchLine};
pub use connect::ConnectError;
pub use discovery::{
    Catalog, CrdFollowing, Discovery, DiscoveryError, ResolveError, ResourceEntry,
};
