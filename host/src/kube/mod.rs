//! The one module that talks to the Kubernetes API server: building the
//! client from the configuration, discovery, the raw LIST/WATCH calls the
//! watch loops use, and the reviews that check GRW's own callers. The loops ask for those calls through [`ListWatch`], so
//! their tests answer from a script instead of a server.

mod client;
mod connect;
mod discovery;
mod list_watch;
mod review;

pub use client::{ApiError, INITIAL_EVENTS_END, KubeClient, ListMeta, ListPage, WatchLine};
pub use connect::ConnectError;
pub use discovery::{
    Catalog, CrdFollowing, Discovery, DiscoveryError, ResolveError, ResourceEntry,
};
pub use list_watch::{ListWatch, WatchStream};
pub use review::{
    AccessAttributes, AccessVerdict, NonResourceAttributes, ResourceAttributes, ReviewError,
    TokenVerdict, UserInfo,
};
