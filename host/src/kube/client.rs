//! Building the `kube` client from `k8sClientConfig`, and the raw calls the
//! rest of GRW needs. Nothing outside this module sees `kube` types.

use std::sync::Arc;

use futures::{Stream, StreamExt};
use k8s_openapi::api::coordination::v1::Lease;
use parking_lot::RwLock;
use serde::Deserialize;
use serde_json::Value;
use serde_json::value::RawValue;

use super::connect::{ConnectError, build};
use crate::config::{ClientConfig, WatchOptions};
use crate::gvk::ResourceInfo;

/// An error from the API server or on the way to it.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The configuration does not describe a usable connection.
    #[error(transparent)]
    Connect(#[from] ConnectError),
    /// The server answered with an error status.
    #[error("API server answered {code} {reason}: {message}")]
    Status {
        /// HTTP status code.
        code: u16,
        /// Kubernetes reason, e.g. `Forbidden`, `Expired`.
        reason: String,
        /// Server's message.
        message: String,
    },
    /// The server could not be reached or the connection broke.
    #[error("cannot reach the API server")]
    Transport(#[source] kube::Error),
    /// The server's answer was not what the protocol says.
    #[error("unexpected answer from the API server")]
    Protocol(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl ApiError {
    /// HTTP status code of a server error.
    pub fn code(&self) -> Option<u16> {
        match self {
            ApiError::Status { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// `410 Gone`: the resourceVersion or continue token is too old.
    pub fn is_gone(&self) -> bool {
        self.code() == Some(410)
    }

    /// 401 or 403: retrying quickly will not help.
    pub fn is_denied(&self) -> bool {
        matches!(self.code(), Some(401 | 403))
    }

    pub(super) fn from_kube(e: kube::Error) -> ApiError {
        match e {
            kube::Error::Api(status) => ApiError::Status {
                code: status.code,
                reason: status.reason,
                message: status.message,
            },
            kube::Error::SerdeError(e) => ApiError::Protocol(Box::new(e)),
            other => ApiError::Transport(other),
        }
    }

    /// The error of a watch stream whose connection broke, as `kube`
    /// reports it: for the tests of other modules, which do not see `kube`.
    #[cfg(test)]
    pub(crate) fn broken_connection() -> ApiError {
        let reset = std::io::Error::from(std::io::ErrorKind::ConnectionReset);
        ApiError::Transport(kube::Error::ReadEvents(reset))
    }
}

/// One page of a LIST.
#[derive(Debug, Deserialize)]
pub struct ListPage {
    /// Page metadata.
    #[serde(default)]
    pub metadata: ListMeta,
    /// The objects (without `kind`/`apiVersion`, as the server sends them),
    /// as the text received: they are stored from it, never parsed whole.
    #[serde(default)]
    pub items: Vec<Box<RawValue>>,
}

/// Metadata of a list page.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListMeta {
    /// resourceVersion of the list.
    #[serde(default)]
    pub resource_version: String,
    /// Token of the next page; empty on the last one.
    #[serde(default, rename = "continue")]
    pub continue_token: Option<String>,
}

/// The annotation of the bookmark that ends a streaming list's initial events.
pub const INITIAL_EVENTS_END: &str = "k8s.io/initial-events-end";

/// One line of a watch stream.
#[derive(Debug)]
pub enum WatchLine {
    /// ADDED, MODIFIED or DELETED with the object, as the text received.
    Change(crate::event::ChangeType, Box<RawValue>),
    /// The server reached `resource_version`.
    Bookmark {
        /// Where a watch resumes from.
        resource_version: String,
        /// The bookmark ends the initial events of a streaming list
        /// ([`KubeClient::watch_list`]): annotation
        /// `k8s.io/initial-events-end: "true"`.
        initial_events_end: bool,
    },
    /// An ERROR event (410 when the resourceVersion is too old).
    Error(ApiError),
}

/// The Kubernetes client. Cheap to clone; rebuilt from the configuration when
/// the server says 401 so a rotated token file is read at once (kube itself
/// re-reads token files only once a minute).
#[derive(Clone)]
pub struct KubeClient {
    config: Arc<ClientConfig>,
    client: Arc<RwLock<kube::Client>>,
}

impl KubeClient {
    /// Builds the client as `k8sClientConfig` says.
    pub async fn connect(config: &ClientConfig) -> Result<KubeClient, ApiError> {
        let client = build(config).await?;
        Ok(KubeClient {
            config: Arc::new(config.clone()),
            client: Arc::new(RwLock::new(client)),
        })
    }

    /// Rebuilds the client, re-reading token and certificate files.
    pub async fn reconnect(&self) -> Result<(), ApiError> {
        let fresh = build(&self.config).await?;
        *self.client.write() = fresh;
        Ok(())
    }

    /// The Lease `name` in `namespace`, if there is one.
    pub async fn get_lease(&self, namespace: &str, name: &str) -> Result<Option<Lease>, ApiError> {
        self.leases(namespace)
            .get_opt(name)
            .await
            .map_err(ApiError::from_kube)
    }

    /// Creates a Lease; 409 when another replica created it first.
    pub async fn create_lease(&self, namespace: &str, lease: &Lease) -> Result<Lease, ApiError> {
        self.leases(namespace)
            .create(&kube::api::PostParams::default(), lease)
            .await
            .map_err(ApiError::from_kube)
    }

    /// Replaces a Lease read before; 409 when it changed since (its
    /// `metadata.resourceVersion` is sent along).
    pub async fn replace_lease(&self, namespace: &str, lease: &Lease) -> Result<Lease, ApiError> {
        let name = lease.metadata.name.clone().unwrap_or_default();
        self.leases(namespace)
            .replace(&name, &kube::api::PostParams::default(), lease)
            .await
            .map_err(ApiError::from_kube)
    }

    fn leases(&self, namespace: &str) -> kube::Api<Lease> {
        kube::Api::namespaced(self.get(), namespace)
    }

    pub(super) fn get(&self) -> kube::Client {
        self.client.read().clone()
    }

    /// GETs a JSON document (discovery).
    pub async fn get_json(&self, path: &str) -> Result<Value, ApiError> {
        let request = http::Request::get(path)
            .body(Vec::new())
            .map_err(|e| ApiError::Protocol(Box::new(e)))?;
        self.get()
            .request(request)
            .await
            .map_err(ApiError::from_kube)
    }

    /// GETs `path_and_query` as it is, with `accept`: the answer's status,
    /// headers and body, whatever the status (OpenAPI documents, passed on).
    pub async fn get_raw(
        &self,
        path_and_query: &str,
        accept: &str,
        if_none_match: Option<&str>,
    ) -> Result<(http::StatusCode, http::HeaderMap, bytes::Bytes), ApiError> {
        let mut request = http::Request::get(path_and_query).header(http::header::ACCEPT, accept);
        if let Some(etag) = if_none_match {
            request = request.header(http::header::IF_NONE_MATCH, etag);
        }
        let request = request
            .body(kube::client::Body::empty())
            .map_err(|e| ApiError::Protocol(Box::new(e)))?;
        let response = self
            .get()
            .send(request)
            .await
            .map_err(ApiError::from_kube)?;
        let (parts, body) = response.into_parts();
        let body = body.collect_bytes().await.map_err(ApiError::from_kube)?;
        Ok((parts.status, parts.headers, body))
    }

    /// One page of a LIST.
    pub async fn list_page(
        &self,
        resource: &ResourceInfo,
        options: &WatchOptions,
        limit: u32,
        continue_token: Option<&str>,
    ) -> Result<ListPage, ApiError> {
        let mut params = vec![("limit", limit.to_string())];
        if let Some(token) = continue_token {
            params.push(("continue", token.to_string()));
        }
        let request = self.collection_request(resource, options, params)?;
        self.get()
            .request(request)
            .await
            .map_err(ApiError::from_kube)
    }

    /// A WATCH from `resource_version`, with bookmarks, ending after `timeout_seconds`.
    pub async fn watch(
        &self,
        resource: &ResourceInfo,
        options: &WatchOptions,
        resource_version: &str,
        timeout_seconds: u32,
    ) -> Result<impl Stream<Item = Result<WatchLine, ApiError>> + use<>, ApiError> {
        let params = vec![
            ("watch", "true".to_string()),
            ("resourceVersion", resource_version.to_string()),
            ("allowWatchBookmarks", "true".to_string()),
            ("timeoutSeconds", timeout_seconds.to_string()),
        ];
        self.watch_with(resource, options, params).await
    }

    /// A streaming list: a WATCH that first sends every object as it is
    /// now (a consistent read, as an unpaged LIST without resourceVersion
    /// would be) as `ADDED` events, then a bookmark that ends them
    /// ([`WatchLine::Bookmark`] with `initial_events_end`), then the changes
    /// after it, until `timeout_seconds` (counted from the start).
    ///
    /// Servers from Kubernetes 1.27 with the `WatchList` feature accept it.
    /// Others refuse it (422 while the feature is off) or, before 1.27,
    /// ignore the parameters and send the objects without that bookmark.
    pub async fn watch_list(
        &self,
        resource: &ResourceInfo,
        options: &WatchOptions,
        timeout_seconds: u32,
    ) -> Result<impl Stream<Item = Result<WatchLine, ApiError>> + use<>, ApiError> {
        let params = vec![
            ("watch", "true".to_string()),
            ("sendInitialEvents", "true".to_string()),
            ("resourceVersionMatch", "NotOlderThan".to_string()),
            ("allowWatchBookmarks", "true".to_string()),
            ("timeoutSeconds", timeout_seconds.to_string()),
        ];
        self.watch_with(resource, options, params).await
    }

    async fn watch_with(
        &self,
        resource: &ResourceInfo,
        options: &WatchOptions,
        params: Vec<(&str, String)>,
    ) -> Result<impl Stream<Item = Result<WatchLine, ApiError>> + use<>, ApiError> {
        let request = self.collection_request(resource, options, params)?;
        let events = self
            .get()
            // The object as the text received, stored from it: the API
            // server writes `type` before `object` (as metav1.WatchEvent
            // orders its fields), so serde hands the object's text over
            // without buffering it.
            .request_events::<Box<RawValue>>(request)
            .await
            .map_err(ApiError::from_kube)?;
        Ok(events.map(|event| {
            use crate::event::ChangeType;
            use kube::core::WatchEvent;
            Ok(match event.map_err(ApiError::from_kube)? {
                WatchEvent::Added(o) => WatchLine::Change(ChangeType::Added, o),
                WatchEvent::Modified(o) => WatchLine::Change(ChangeType::Modified, o),
                WatchEvent::Deleted(o) => WatchLine::Change(ChangeType::Deleted, o),
                WatchEvent::Bookmark(b) => WatchLine::Bookmark {
                    initial_events_end: b
                        .metadata
                        .annotations
                        .get(INITIAL_EVENTS_END)
                        .is_some_and(|v| v == "true"),
                    resource_version: b.metadata.resource_version,
                },
                WatchEvent::Error(status) => WatchLine::Error(ApiError::Status {
                    code: status.code,
                    reason: status.reason,
                    message: status.message,
                }),
            })
        }))
    }

    fn collection_request<'a>(
        &self,
        resource: &ResourceInfo,
        options: &'a WatchOptions,
        mut params: Vec<(&'a str, String)>,
    ) -> Result<http::Request<Vec<u8>>, ApiError> {
        if let Some(s) = &options.label_selector {
            params.push(("labelSelector", s.to_string()));
        }
        if let Some(s) = &options.field_selector {
            params.push(("fieldSelector", s.to_string()));
        }
        for (k, v) in &options.extra_params {
            params.push((k.as_str(), v.clone()));
        }
        let query =
            serde_urlencoded::to_string(&params).map_err(|e| ApiError::Protocol(Box::new(e)))?;
        let path = resource.collection_path(options.namespace.as_deref());
        http::Request::get(format!("{path}?{query}"))
            .body(Vec::new())
            .map_err(|e| ApiError::Protocol(Box::new(e)))
    }
}
