//! The TLS listener's certificate, read from PEM files and read again when
//! either file changes, so that a rotation (cert-manager renewing a
//! Secret, which the kubelet swaps in atomically) needs no restart.
//!
//! Each handshake looks at the files' modification times and sizes (two
//! `stat` calls, a few microseconds, next to a handshake's milliseconds of
//! cryptography). Files that changed are read again; if they cannot be
//! used (a half-written rotation, a key that does not belong to the
//! certificate), the previous certificate stays and the problem is logged
//! once per change of the files.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use parking_lot::Mutex;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

/// Why the certificate files cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CertificateError {
    /// A file cannot be read.
    #[error("cannot read {key} {}", .path.display())]
    Read {
        /// `tlsListener.certFile` or `tlsListener.keyFile`.
        key: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A file is not PEM, or holds nothing of what it should.
    #[error("{key} {} holds no {what}", .path.display())]
    Pem {
        /// `tlsListener.certFile` or `tlsListener.keyFile`.
        key: &'static str,
        /// The file.
        path: PathBuf,
        /// What it should hold.
        what: &'static str,
        /// What the PEM reader said.
        #[source]
        source: rustls::pki_types::pem::Error,
    },
    /// The key cannot be used with the certificate.
    #[error(
        "the key of tlsListener.keyFile {} cannot serve the certificate of tlsListener.certFile {}; check that they belong together",
        .key.display(), .cert.display()
    )]
    Mismatch {
        /// The certificate file.
        cert: PathBuf,
        /// The key file.
        key: PathBuf,
        /// What TLS said.
        #[source]
        source: rustls::Error,
    },
}

/// When a file was last written, and how long it is; `None` if it cannot
/// be read (then it is tried again at the next handshake).
type Stamp = Option<(SystemTime, u64)>;

fn stamp(path: &Path) -> Stamp {
    let metadata = std::fs::metadata(path).ok()?;
    Some((metadata.modified().ok()?, metadata.len()))
}

/// The certificate and key of `tlsListener`, kept current.
#[derive(Debug)]
pub struct ReloadingCertificate {
    cert_file: PathBuf,
    key_file: PathBuf,
    provider: Arc<CryptoProvider>,
    /// The files' stamps when they were last read (or tried), and the
    /// certificate in use.
    current: Mutex<((Stamp, Stamp), Arc<CertifiedKey>)>,
}

impl ReloadingCertificate {
    /// Reads the files; at start-up, files that cannot be used are an error.
    pub fn load(
        cert_file: PathBuf,
        key_file: PathBuf,
        provider: Arc<CryptoProvider>,
    ) -> Result<ReloadingCertificate, CertificateError> {
        let stamps = (stamp(&cert_file), stamp(&key_file));
        let certified = read(&cert_file, &key_file, &provider)?;
        Ok(ReloadingCertificate {
            cert_file,
            key_file,
            provider,
            current: Mutex::new((stamps, Arc::new(certified))),
        })
    }

    /// The certificate to present, read again first if the files changed.
    pub fn current(&self) -> Arc<CertifiedKey> {
        let stamps = (stamp(&self.cert_file), stamp(&self.key_file));
        let mut current = self.current.lock();
        if stamps != current.0 {
            current.0 = stamps;
            match read(&self.cert_file, &self.key_file, &self.provider) {
                Ok(certified) => {
                    current.1 = Arc::new(certified);
                    tracing::info!(cert_file = %self.cert_file.display(), "TLS certificate read again");
                }
                Err(e) => tracing::warn!(
                    error = %crate::error::Report(&e),
                    "the TLS certificate files changed but cannot be used; the previous certificate stays"
                ),
            }
        }
        current.1.clone()
    }
}

impl ResolvesServerCert for ReloadingCertificate {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}

fn read(
    cert_file: &Path,
    key_file: &Path,
    provider: &CryptoProvider,
) -> Result<CertifiedKey, CertificateError> {
    let read = |key: &'static str, path: &Path| {
        std::fs::read(path).map_err(|source| CertificateError::Read {
            key,
            path: path.to_path_buf(),
            source,
        })
    };
    let cert_pem = read("tlsListener.certFile", cert_file)?;
    let key_pem = read("tlsListener.keyFile", key_file)?;
    let pem_error = |key, path: &Path, what| {
        let path = path.to_path_buf();
        move |source| CertificateError::Pem {
            key,
            path,
            what,
            source,
        }
    };
    let chain = CertificateDer::pem_slice_iter(&cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(pem_error(
            "tlsListener.certFile",
            cert_file,
            "PEM certificate",
        ))?;
    if chain.is_empty() {
        return Err(pem_error(
            "tlsListener.certFile",
            cert_file,
            "PEM certificate",
        )(rustls::pki_types::pem::Error::NoItemsFound));
    }
    let key = PrivateKeyDer::from_pem_slice(&key_pem).map_err(pem_error(
        "tlsListener.keyFile",
        key_file,
        "PEM private key (`PRIVATE KEY`, `RSA PRIVATE KEY` or `EC PRIVATE KEY`)",
    ))?;
    CertifiedKey::from_der(chain, key, provider).map_err(|source| CertificateError::Mismatch {
        cert: cert_file.to_path_buf(),
        key: key_file.to_path_buf(),
        source,
    })
}
