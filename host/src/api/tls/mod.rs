//! The TLS listener (`tlsListener`): connections accepted and their
//! handshakes made here, then served by the same router as the API
//! listener, through [`axum::serve`].
//!
//! Handshakes run in tasks of their own, so that one slow client does not
//! hold up the others; at most [`MAX_HANDSHAKES`] at once, each for at
//! most [`HANDSHAKE_TIMEOUT`]. Connections past that wait in the kernel's
//! backlog.

mod certificate;

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use rustls::ServerConfig;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

pub use certificate::{CertificateError, ReloadingCertificate};

/// Handshakes under way at once: enough for a burst of reconnecting
/// clients, few enough that idle connections cannot tie up the process.
const MAX_HANDSHAKES: usize = 256;

/// How long a client has to finish its handshake.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);

/// The TLS settings: the certificate of `certificate`, HTTP/1.1 (what the
/// API's server speaks) offered by ALPN, and the process's crypto provider.
pub fn server_config(
    certificate: Arc<ReloadingCertificate>,
    provider: Arc<rustls::crypto::CryptoProvider>,
) -> Result<ServerConfig, rustls::Error> {
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_cert_resolver(certificate);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

/// The crypto provider of the TLS listener: the one GRW's Kubernetes
/// client uses too.
pub fn crypto_provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// Accepted connections whose handshake is done.
pub struct TlsListener {
    ready: mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
    local: SocketAddr,
    accepting: JoinHandle<()>,
}

impl TlsListener {
    /// Starts accepting on `listener`.
    pub fn new(listener: TcpListener, config: ServerConfig) -> io::Result<TlsListener> {
        let local = listener.local_addr()?;
        let (tx, ready) = mpsc::channel(MAX_HANDSHAKES);
        let acceptor = TlsAcceptor::from(Arc::new(config));
        let accepting = tokio::spawn(accept(listener, acceptor, tx));
        Ok(TlsListener {
            ready,
            local,
            accepting,
        })
    }
}

impl Drop for TlsListener {
    fn drop(&mut self) {
        self.accepting.abort();
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(connection) => connection,
            // The accepting task ended: nothing more will come.
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.local)
    }
}

async fn accept(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    ready: mpsc::Sender<(TlsStream<TcpStream>, SocketAddr)>,
) {
    let handshakes = Arc::new(Semaphore::new(MAX_HANDSHAKES));
    loop {
        let Ok(permit) = handshakes.clone().acquire_owned().await else {
            return;
        };
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                // Out of file descriptors, most likely: wait for some to close.
                tracing::warn!(error = %e, "TLS listener cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        // As on the plain listener (app.rs): answers go out as written.
        let _ = stream.set_nodelay(true);
        let acceptor = acceptor.clone();
        let ready = ready.clone();
        tokio::spawn(async move {
            let handshake = tokio::time::timeout(HANDSHAKE_TIMEOUT, acceptor.accept(stream)).await;
            drop(permit);
            match handshake {
                Ok(Ok(stream)) => {
                    let _ = ready.send((stream, peer)).await;
                }
                Ok(Err(e)) => tracing::debug!(peer = %peer, error = %e, "TLS handshake failed"),
                Err(_) => tracing::debug!(peer = %peer, "TLS handshake timed out"),
            }
        });
    }
}
