//! The certificates and keys here are throwaway test material made with
//! openssl: `v1-cert.pem` is an X.509 version 1 certificate (`openssl x509
//! -req` without extensions), `v3-cert.pem` a version 3 one with
//! `extendedKeyUsage=clientAuth`; each `*-key.pem` is its private key.

use super::*;

const V1_CERT: &str = include_str!("v1-cert.pem");
const V1_KEY: &str = include_str!("v1-key.pem");
const V3_CERT: &str = include_str!("v3-cert.pem");
const V3_KEY: &str = include_str!("v3-key.pem");

fn der(pem: &str) -> Vec<u8> {
    certificates(pem.as_bytes()).remove(0)
}

#[test]
fn pem_bundle_yields_each_certificate() {
    let pem = b"junk\n-----BEGIN CERTIFICATE-----\nAAEC\nAw==\n-----END CERTIFICATE-----\n-----BEGIN CERTIFICATE-----\nBAU=\n-----END CERTIFICATE-----\n";
    assert_eq!(certificates(pem), vec![vec![0, 1, 2, 3], vec![4, 5]]);
    assert!(certificates(b"not pem").is_empty());
}

#[test]
fn certificate_versions_are_read_from_the_der() {
    assert!(x509_version_1(&der(V1_CERT)));
    assert!(!x509_version_1(&der(V3_CERT)));
    // Not a certificate at all: not called version 1.
    assert!(!x509_version_1(b""));
    assert!(!x509_version_1(&[0x30, 0x82, 0xff]));
}

/// A kubeconfig in `dir` whose current user has this certificate and key.
fn kubeconfig(dir: &Path, cert: &str, key: &str) -> PathBuf {
    std::fs::write(dir.join("cert.pem"), cert).unwrap();
    std::fs::write(dir.join("key.pem"), key).unwrap();
    let path = dir.join("kubeconfig");
    std::fs::write(
        &path,
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: ctx\n\
             clusters: [{{name: c, cluster: {{server: 'https://127.0.0.1:6443', insecure-skip-tls-verify: true}}}}]\n\
             users: [{{name: old-admin, user: {{client-certificate: {d}/cert.pem, client-key: {d}/key.pem}}}}]\n\
             contexts: [{{name: ctx, context: {{cluster: c, user: old-admin}}}}]\n",
            d = dir.display()
        ),
    )
    .unwrap();
    path
}

fn kubeconfig_client(path: PathBuf) -> ClientConfig {
    ClientConfig {
        kubeconfig_path: Some(path),
        ..Default::default()
    }
}

#[tokio::test]
async fn a_version_1_client_certificate_is_refused_with_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let path = kubeconfig(dir.path(), V1_CERT, V1_KEY);
    let error = build(&kubeconfig_client(path.clone())).await.err().unwrap();
    assert!(
        matches!(error, ConnectError::CertificateVersion { .. }),
        "{error:?}"
    );
    assert_eq!(
        crate::error::Report(&error).to_string(),
        format!(
            "the client certificate {d}/cert.pem of user `old-admin` in the kubeconfig {} is an X.509 version 1 certificate, \
             which TLS does not accept for client authentication; issue it again as a version 3 certificate \
             (for example `openssl x509 -req ... -extfile <(printf 'extendedKeyUsage=clientAuth')`, or `kubectl certificate approve` \
             on a new CertificateSigningRequest) and point GRW at the new one",
            path.display(),
            d = dir.path().display()
        )
    );
}

#[tokio::test]
async fn a_key_that_does_not_fit_the_certificate_names_both() {
    let dir = tempfile::tempdir().unwrap();
    let config = ClientConfig {
        auth_type: Some(AuthType::ClientCertificate),
        api_server_url: Some("https://127.0.0.1:6443".into()),
        client_cert_pem: Some(V3_CERT.as_bytes().to_vec()),
        client_key_pem: Some(
            b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n".to_vec(),
        ),
        ..Default::default()
    };
    let error = build(&config).await.err().unwrap();
    let message = crate::error::Report(&error).to_string();
    assert!(
        message.starts_with(
            "the client certificate of k8sClientConfig.clientCertDataPemBase64 cannot be used for TLS client authentication; \
             check that the key belongs to the certificate and that both are PEM: "
        ),
        "{message}"
    );
    // A fitting pair builds.
    let path = kubeconfig(dir.path(), V3_CERT, V3_KEY);
    build(&kubeconfig_client(path)).await.unwrap();
}

#[tokio::test]
async fn missing_kubeconfig_is_a_clear_error() {
    let error = build(&kubeconfig_client("/nonexistent/kubeconfig".into()))
        .await
        .err()
        .unwrap();
    let message = crate::error::Report(&error).to_string();
    assert!(
        message.starts_with("cannot use the kubeconfig /nonexistent/kubeconfig: "),
        "{message}"
    );
    let error = build(&ClientConfig::default()).await.err().unwrap();
    assert!(matches!(error, ConnectError::NoKubeconfig), "{error:?}");
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
    let (kc, identity) = kube_config(&bearer).await.unwrap();
    assert_eq!(kc.cluster_url.to_string(), "http://127.0.0.1:1/");
    assert!(kc.auth_info.token_file.is_some());
    assert_eq!(identity, None);

    let bad_ca = ClientConfig {
        ca_cert_pem: Some(b"nothing".to_vec()),
        ..bearer.clone()
    };
    let error = kube_config(&bad_ca).await.err().unwrap().to_string();
    assert_eq!(
        error,
        "the CA certificate (k8sClientConfig.caCertDataPemBase64) holds no PEM `CERTIFICATE` block; give the API server's CA in PEM form"
    );

    let cert = ClientConfig {
        auth_type: Some(AuthType::ClientCertificate),
        api_server_url: Some("https://127.0.0.1:6443".into()),
        client_cert_pem: Some(b"CERT".to_vec()),
        client_key_pem: Some(b"KEY".to_vec()),
        ..Default::default()
    };
    let (kc, _) = kube_config(&cert).await.unwrap();
    assert_eq!(
        kc.auth_info.client_certificate_data.as_deref(),
        Some("Q0VSVA==")
    );
}
