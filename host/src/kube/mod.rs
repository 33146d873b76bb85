//! The one module that talks to the Kubernetes API server: building the
//! client from the configuration, discovery, and the raw LIST/WATCH calls the
//! watch loops use. The loops ask for those calls through [`ListWatch`], so
//! their tests answer from a script instead of a server.

mod client;
mod connect;
mod discovery;
mod list_watch;

pub use client::{ApiError, KubeClient, ListMeta, ListPage, WatchLine};
pub use connect::ConnectError;
pub use discovery::{
    Catalog, CrdFollowing, Discovery, DiscoveryError, ResolveError, ResourceEntry,
};
pub use list_watch::{ListWatch, WatchStream};
