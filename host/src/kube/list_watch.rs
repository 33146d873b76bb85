//! The calls a list+watch loop makes, as a trait: [`KubeClient`] answers
//! them from the API server, and the loop's tests from a script.

use std::future::Future;

use futures::StreamExt;
use futures::stream::BoxStream;

use super::client::{ApiError, KubeClient, ListPage, WatchLine};
use crate::config::WatchOptions;
use crate::gvk::ResourceInfo;

/// The lines of one WATCH, until the server ends it or the connection breaks.
pub type WatchStream = BoxStream<'static, Result<WatchLine, ApiError>>;

/// LIST pages, WATCH streams and a fresh client after a 401: all that
/// [`crate::watch`]'s loop asks of the API server.
pub trait ListWatch: Send + Sync {
    /// One page of a LIST of at most `limit` objects; the first page
    /// without `continue_token`, the next ones with the token the previous
    /// page gave.
    fn list_page(
        &self,
        resource: &ResourceInfo,
        options: &WatchOptions,
        limit: u32,
        continue_token: Option<&str>,
    ) -> impl Future<Output = Result<ListPage, ApiError>> + Send;

    /// A WATCH from `resource_version`, with bookmarks, that the server
    /// ends after `timeout_seconds`.
    fn watch(
        &self,
        resource: &ResourceInfo,
        options: &WatchOptions,
        resource_version: &str,
        timeout_seconds: u32,
    ) -> impl Future<Output = Result<WatchStream, ApiError>> + Send;

    /// A streaming list (see [`KubeClient::watch_list`]) that the server
    /// ends after `timeout_seconds`.
    fn watch_list(
        &self,
        resource: &ResourceInfo,
        options: &WatchOptions,
        timeout_seconds: u32,
    ) -> impl Future<Output = Result<WatchStream, ApiError>> + Send;

    /// Rebuilds the credentials (after a 401: a rotated token).
    fn reconnect(&self) -> impl Future<Output = Result<(), ApiError>> + Send;
}

impl ListWatch for KubeClient {
    async fn list_page(
        &self,
        resource: &ResourceInfo,
        options: &WatchOptions,
        limit: u32,
        continue_token: Option<&str>,
    ) -> Result<ListPage, ApiError> {
        KubeClient::list_page(self, resource, options, limit, continue_token).await
    }

    async fn watch(
        &self,
        resource: &ResourceInfo,
        options: &WatchOptions,
        resource_version: &str,
        timeout_seconds: u32,
    ) -> Result<WatchStream, ApiError> {
        let lines =
            KubeClient::watch(self, resource, options, resource_version, timeout_seconds).await?;
        Ok(lines.boxed())
    }

    async fn watch_list(
        &self,
        resource: &ResourceInfo,
        options: &WatchOptions,
        timeout_seconds: u32,
    ) -> Result<WatchStream, ApiError> {
        let lines = KubeClient::watch_list(self, resource, options, timeout_seconds).await?;
        Ok(lines.boxed())
    }

    async fn reconnect(&self) -> Result<(), ApiError> {
        KubeClient::reconnect(self).await
    }
}
