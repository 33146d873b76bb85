//! Building the `kube` client from `k8sClientConfig`, and the raw calls the
//! rest of GRW needs. Nothing outside this module sees `kube` types.

use std::path::Path;
use std::sync::Arc;

use futures::{Stream, StreamExt};
use kube::config::{KubeConfigOptions, Kubeconfig};
use parking_lot::RwLock;
use serde::Deserialize;
use serde_json::Value;

use crate::config::{AuthType, ClientConfig, WatchOptions};
use crate::gvk::ResourceInfo;

/// An error from the API server or on the way to it.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// The configuration does not describe a usable connection.
    #[error("cannot configure the Kubernetes client: {0}")]
    Config(String),
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
    #[error("cannot reach the API server: {0}")]
    Transport(String),
    /// The server's answer was not what the protocol says.
    #[error("unexpected answer from the API server: {0}")]
    Protocol(String),
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

    fn from_kube(e: kube::Error) -> ApiError {
        match e {
            kube::Error::Api(status) => ApiError::Status {
                code: status.code,
                reason: status.reason,
                message: status.message,
            },
            kube::Error::SerdeError(e) => ApiError::Protocol(e.to_string()),
            other => ApiError::Transport(error_chain(&other)),
        }
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// One page of a LIST.
#[derive(Debug, Deserialize)]
pub struct ListPage {
    /// Page metadata.
    #[serde(default)]
    pub metadata: ListMeta,
    /// The objects (without `kind`/`apiVersion`, as the server sends them).
    #[serde(default)]
    pub items: Vec<Value>,
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

/// One line of a watch stream.
#[derive(Debug)]
pub enum WatchLine {
    /// ADDED, MODIFIED or DELETED with the object.
    Change(crate::store::ChangeType, Value),
    /// The server reached this resourceVersion.
    Bookmark(String),
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

    fn get(&self) -> kube::Client {
        self.client.read().clone()
    }

    /// GETs a JSON document (discovery).
    pub async fn get_json(&self, path: &str) -> Result<Value, ApiError> {
        let request = http::Request::get(path)
            .body(Vec::new())
            .map_err(|e| ApiError::Protocol(e.to_string()))?;
        self.get()
            .request(request)
            .await
            .map_err(ApiError::from_kube)
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
        let request = self.collection_request(resource, options, params)?;
        let events = self
            .get()
            .request_events::<Value>(request)
            .await
            .map_err(ApiError::from_kube)?;
        Ok(events.map(|event| {
            use crate::store::ChangeType;
            use kube::core::WatchEvent;
            Ok(match event.map_err(ApiError::from_kube)? {
                WatchEvent::Added(o) => WatchLine::Change(ChangeType::Added, o),
                WatchEvent::Modified(o) => WatchLine::Change(ChangeType::Modified, o),
                WatchEvent::Deleted(o) => WatchLine::Change(ChangeType::Deleted, o),
                WatchEvent::Bookmark(b) => WatchLine::Bookmark(b.metadata.resource_version),
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
            serde_urlencoded::to_string(&params).map_err(|e| ApiError::Protocol(e.to_string()))?;
        let path = resource.collection_path(options.namespace.as_deref());
        http::Request::get(format!("{path}?{query}"))
            .body(Vec::new())
            .map_err(|e| ApiError::Protocol(e.to_string()))
    }
}

async fn build(config: &ClientConfig) -> Result<kube::Client, ApiError> {
    let kube_config = kube_config(config).await?;
    kube::Client::try_from(kube_config).map_err(|e| ApiError::Config(error_chain(&e)))
}

async fn kube_config(config: &ClientConfig) -> Result<kube::Config, ApiError> {
    let fail = |what: &str, e: &dyn std::error::Error| {
        ApiError::Config(format!("{what}: {}", error_chain(e)))
    };
    if config.in_cluster {
        return kube::Config::incluster().map_err(|e| fail("in-cluster configuration", &e));
    }
    match config.auth_type.unwrap_or(AuthType::KubeConfig) {
        AuthType::KubeConfig => {
            let path = config.kubeconfig_path.as_deref().ok_or_else(|| {
                ApiError::Config(
                    "no kubeconfig: set KUBECONFIG or k8sClientConfig.kubeConfigFilePath, or create ~/.kube/config"
                        .into(),
                )
            })?;
            let kubeconfig = Kubeconfig::read_from(path)
                .map_err(|e| fail(&format!("kubeconfig {}", path.display()), &e))?;
            kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                .await
                .map_err(|e| fail(&format!("kubeconfig {}", path.display()), &e))
        }
        AuthType::BearerToken | AuthType::ClientCertificate => {
            let url = config.api_server_url.as_deref().unwrap_or_default();
            let uri: http::Uri = url
                .parse()
                .map_err(|e| fail(&format!("apiServerUrl `{url}`"), &e))?;
            let mut kc = kube::Config::new(uri);
            kc.root_cert = root_certs(config)?;
            let auth = &mut kc.auth_info;
            if let Some(token_file) = &config.token_file {
                auth.token_file = Some(path_string(token_file));
            }
            auth.client_certificate = config.client_cert_path.as_deref().map(path_string);
            auth.client_key = config.client_key_path.as_deref().map(path_string);
            auth.client_certificate_data = config.client_cert_pem.as_ref().map(pem_base64);
            auth.client_key_data = config.client_key_pem.as_ref().map(|k| pem_base64(k).into());
            Ok(kc)
        }
    }
}

fn root_certs(config: &ClientConfig) -> Result<Option<Vec<Vec<u8>>>, ApiError> {
    let pem = match (&config.ca_cert_pem, &config.ca_cert_path) {
        (Some(pem), _) => pem.clone(),
        (None, Some(path)) => std::fs::read(path)
            .map_err(|e| ApiError::Config(format!("caCertPath {}: {e}", path.display())))?,
        (None, None) => return Ok(None),
    };
    let certs = pem_certificates(&pem);
    if certs.is_empty() {
        return Err(ApiError::Config(
            "the CA certificate holds no PEM `CERTIFICATE` block".into(),
        ));
    }
    Ok(Some(certs))
}

/// DER bytes of every `CERTIFICATE` block of a PEM bundle.
fn pem_certificates(pem: &[u8]) -> Vec<Vec<u8>> {
    use base64::Engine;
    let text = String::from_utf8_lossy(pem);
    let mut certs = Vec::new();
    let mut body: Option<String> = None;
    for line in text.lines().map(str::trim) {
        match (line, &mut body) {
            ("-----BEGIN CERTIFICATE-----", _) => body = Some(String::new()),
            ("-----END CERTIFICATE-----", Some(b)) => {
                if let Ok(der) = base64::engine::general_purpose::STANDARD.decode(&*b) {
                    certs.push(der);
                }
                body = None;
            }
            (l, Some(b)) => b.push_str(l),
            _ => {}
        }
    }
    certs
}

fn pem_base64(pem: &Vec<u8>) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(pem)
}

fn path_string(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pem_bundle_yields_each_certificate() {
        let pem = b"junk\n-----BEGIN CERTIFICATE-----\nAAEC\nAw==\n-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\nBAU=\n-----END CERTIFICATE-----\n";
        assert_eq!(pem_certificates(pem), vec![vec![0, 1, 2, 3], vec![4, 5]]);
        assert!(pem_certificates(b"not pem").is_empty());
    }

    #[tokio::test]
    async fn missing_kubeconfig_is_a_clear_error() {
        let config = ClientConfig {
            kubeconfig_path: Some("/nonexistent/kubeconfig".into()),
            ..Default::default()
        };
        let err = KubeClient::connect(&config)
            .await
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("kubeconfig /nonexistent/kubeconfig"), "{err}");
    }

    #[tokio::test]
    async fn bearer_token_and_client_certificate_configs_build() {
        let dir = tempfile::tempdir().unwrap();
        let token = dir.path().join("token");
        std::fs::write(&token, "secret").unwrap();
        let bearer = ClientConfig {
            auth_type: Some(AuthType::BearerToken),
            api_server_url: Some("http://127.0.0.1:1".into()),
            token_file: Some(token),
            ..Default::default()
        };
        let kc = kube_config(&bearer).await.unwrap();
        assert_eq!(kc.cluster_url.to_string(), "http://127.0.0.1:1/");
        assert!(kc.auth_info.token_file.is_some());

        let bad_ca = ClientConfig {
            ca_cert_pem: Some(b"nothing".to_vec()),
            ..bearer.clone()
        };
        let err = kube_config(&bad_ca).await.err().unwrap().to_string();
        assert!(err.contains("no PEM `CERTIFICATE` block"), "{err}");

        let cert = ClientConfig {
            auth_type: Some(AuthType::ClientCertificate),
            api_server_url: Some("https://127.0.0.1:6443".into()),
            client_cert_pem: Some(b"CERT".to_vec()),
            client_key_pem: Some(b"KEY".to_vec()),
            ..Default::default()
        };
        let kc = kube_config(&cert).await.unwrap();
        assert_eq!(
            kc.auth_info.client_certificate_data.as_deref(),
            Some("Q0VSVA==")
        );
    }
}
