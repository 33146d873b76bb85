//! Building the `kube` client from `k8sClientConfig`: in-cluster, a
//! kubeconfig, a bearer token or a client certificate. A configuration that
//! cannot work is refused here with a message that says what to change.

use std::path::{Path, PathBuf};

use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::config::{AuthType, ClientConfig};

/// Why the configuration does not describe a usable connection. Each
/// message names the setting or file at fault and what to do.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    /// No kubeconfig to read.
    #[error(
        "no kubeconfig: set KUBECONFIG or k8sClientConfig.kubeConfigFilePath, or create ~/.kube/config"
    )]
    NoKubeconfig,
    /// The kubeconfig cannot be read or used.
    #[error("cannot use the kubeconfig {}", .path.display())]
    Kubeconfig {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: kube::config::KubeconfigError,
    },
    /// The pod's service account cannot be used.
    #[error(
        "cannot use the in-cluster configuration (autoInClusterConfig): is GRW running in a pod with a service account token mounted?"
    )]
    InCluster(#[source] kube::config::InClusterError),
    /// `apiServerUrl` is not a URL.
    #[error("k8sClientConfig.apiServerUrl `{url}` is not a URL")]
    ServerUrl {
        /// What was written.
        url: String,
        /// Why.
        #[source]
        source: http::uri::InvalidUri,
    },
    /// A file the configuration names cannot be read.
    #[error("cannot read {what} {}", .path.display())]
    ReadFile {
        /// The setting, e.g. `k8sClientConfig.caCertPath`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The CA bundle has no certificate.
    #[error(
        "the CA certificate ({what}) holds no PEM `CERTIFICATE` block; give the API server's CA in PEM form"
    )]
    NoCaCertificate {
        /// Where it came from.
        what: &'static str,
    },
    /// The client certificate is X.509 version 1, which TLS refuses.
    #[error(
        "{identity} is an X.509 version 1 certificate, which TLS does not accept for client authentication; \
         issue it again as a version 3 certificate (for example `openssl x509 -req ... -extfile <(printf 'extendedKeyUsage=clientAuth')`, \
         or `kubectl certificate approve` on a new CertificateSigningRequest) and point GRW at the new one"
    )]
    CertificateVersion {
        /// Which certificate: the setting or the kubeconfig user, and its file.
        identity: String,
    },
    /// The client certificate and key cannot be used together.
    #[error(
        "{identity} cannot be used for TLS client authentication; check that the key belongs to the certificate and that both are PEM"
    )]
    Identity {
        /// Which certificate and key.
        identity: String,
        /// What the TLS library said.
        #[source]
        source: kube::Error,
    },
    /// The client cannot be built for another reason.
    #[error("cannot build the Kubernetes client")]
    Client(#[source] kube::Error),
}

/// Builds the client as `k8sClientConfig` says.
pub(super) async fn build(config: &ClientConfig) -> Result<kube::Client, ConnectError> {
    let (kube_config, identity) = kube_config(config).await?;
    if let Some(identity) = &identity
        && let Some(pem) = client_certificate(&kube_config)
        && certificates(&pem)
            .first()
            .is_some_and(|der| x509_version_1(der))
    {
        return Err(ConnectError::CertificateVersion {
            identity: identity.clone(),
        });
    }
    kube::Client::try_from(kube_config).map_err(|source| match (source, identity) {
        (source @ kube::Error::RustlsTls(_), Some(identity)) => {
            ConnectError::Identity { identity, source }
        }
        (source, _) => ConnectError::Client(source),
    })
}

/// The `kube` configuration, and a description of the client certificate
/// it uses, if any (for messages).
async fn kube_config(
    config: &ClientConfig,
) -> Result<(kube::Config, Option<String>), ConnectError> {
    if config.in_cluster {
        return Ok((
            kube::Config::incluster().map_err(ConnectError::InCluster)?,
            None,
        ));
    }
    match config.auth_type.unwrap_or(AuthType::KubeConfig) {
        AuthType::KubeConfig => {
            let path = config
                .kubeconfig_path
                .as_deref()
                .ok_or(ConnectError::NoKubeconfig)?;
            let failed = |source| ConnectError::Kubeconfig {
                path: path.to_path_buf(),
                source,
            };
            let kubeconfig = Kubeconfig::read_from(path).map_err(failed)?;
            let user = current_user(&kubeconfig);
            let kc =
                kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
                    .await
                    .map_err(failed)?;
            let auth = &kc.auth_info;
            let identity = (auth.client_certificate.is_some()
                || auth.client_certificate_data.is_some())
            .then(|| {
                let user = user.as_deref().unwrap_or("(unnamed)");
                match &auth.client_certificate {
                    Some(file) => format!(
                        "the client certificate {file} of user `{user}` in the kubeconfig {}",
                        path.display()
                    ),
                    None => format!(
                        "the client certificate of user `{user}` in the kubeconfig {}",
                        path.display()
                    ),
                }
            });
            Ok((kc, identity))
        }
        AuthType::BearerToken | AuthType::ClientCertificate => {
            let url = config.api_server_url.as_deref().unwrap_or_default();
            let uri: http::Uri = url.parse().map_err(|source| ConnectError::ServerUrl {
                url: url.to_string(),
                source,
            })?;
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
            let identity = match (&config.client_cert_path, &config.client_cert_pem) {
                (Some(path), _) => Some(format!(
                    "the client certificate {} (k8sClientConfig.clientCertPath)",
                    path.display()
                )),
                (None, Some(_)) => Some(
                    "the client certificate of k8sClientConfig.clientCertDataPemBase64".to_string(),
                ),
                (None, None) => None,
            };
            Ok((kc, identity))
        }
    }
}

/// The user of the kubeconfig's current context.
fn current_user(kubeconfig: &Kubeconfig) -> Option<String> {
    let context = kubeconfig.current_context.as_deref()?;
    kubeconfig
        .contexts
        .iter()
        .find(|c| c.name == context)?
        .context
        .as_ref()?
        .user
        .clone()
}

/// The PEM of the client certificate a configuration uses, if it can be read.
fn client_certificate(kc: &kube::Config) -> Option<Vec<u8>> {
    use base64::Engine;
    let auth = &kc.auth_info;
    match (&auth.client_certificate_data, &auth.client_certificate) {
        (Some(data), _) => base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .ok(),
        (None, Some(path)) => std::fs::read(path).ok(),
        (None, None) => None,
    }
}

/// Whether a DER certificate is X.509 version 1: its `TBSCertificate`
/// (RFC 5280, 4.1) starts without the `[0] EXPLICIT Version` field, which
/// versions 2 and 3 carry.
fn x509_version_1(der: &[u8]) -> bool {
    /// The contents of the DER element at the start of `bytes` with this
    /// tag, and what follows it.
    fn element(bytes: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
        let (&first, rest) = bytes.split_first()?;
        if first != tag {
            return None;
        }
        let (&len, rest) = rest.split_first()?;
        let (len, rest) = if len < 0x80 {
            (usize::from(len), rest)
        } else {
            let count = usize::from(len & 0x7f);
            if count == 0 || count > 4 || rest.len() < count {
                return None;
            }
            let len = rest[..count]
                .iter()
                .fold(0usize, |n, b| (n << 8) | usize::from(*b));
            (len, &rest[count..])
        };
        (rest.len() >= len).then(|| rest.split_at(len))
    }
    const SEQUENCE: u8 = 0x30;
    const VERSION: u8 = 0xa0;
    element(der, SEQUENCE)
        .and_then(|(certificate, _)| element(certificate, SEQUENCE))
        .and_then(|(tbs, _)| tbs.first().copied())
        .is_some_and(|first| first != VERSION)
}

fn root_certs(config: &ClientConfig) -> Result<Option<Vec<Vec<u8>>>, ConnectError> {
    let (pem, what) = match (&config.ca_cert_pem, &config.ca_cert_path) {
        (Some(pem), _) => (pem.clone(), "k8sClientConfig.caCertDataPemBase64"),
        (None, Some(path)) => (
            std::fs::read(path).map_err(|source| ConnectError::ReadFile {
                what: "k8sClientConfig.caCertPath",
                path: path.clone(),
                source,
            })?,
            "k8sClientConfig.caCertPath",
        ),
        (None, None) => return Ok(None),
    };
    let certs = certificates(&pem);
    if certs.is_empty() {
        return Err(ConnectError::NoCaCertificate { what });
    }
    Ok(Some(certs))
}

/// DER bytes of every `CERTIFICATE` block of a PEM bundle.
fn certificates(pem: &[u8]) -> Vec<Vec<u8>> {
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
mod tests;
