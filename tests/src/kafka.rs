//! A real Kafka-protocol broker on loopback (`tansu`, in memory), that a
//! test can stop and start again on the same port, and a real Kafka
//! consumer (kafka-python, `tests/clients/kafka_consume.py`) to read back
//! what GRW produced; and, for what tansu does not do, fronts that speak
//! the protocol's part themselves: TLS ([`TlsProxy`]), SASL/PLAIN
//! ([`PlainFront`]), and a broker that refuses every message
//! ([`RefusingBroker`]).

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde::Deserialize;

mod plain;
mod wire;

pub use plain::PlainFront;

/// How long a starting broker may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// The tansu version `tests/setup.sh` installs.
const TANSU_VERSION: &str = "0.6.0";

/// Path of `tansu`: `$TANSU`, else where `tests/setup.sh` installs it
/// (`~/.cargo/grw-tansu-VERSION/bin`, built with SQLite storage), else
/// `PATH`. Panics with installation advice when there is none.
pub fn tansu_binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("TANSU") {
        return PathBuf::from(bin);
    }
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")));
    let installed = cargo_home.map(|home| home.join(format!("grw-tansu-{TANSU_VERSION}/bin")));
    installed
        .into_iter()
        .chain(
            std::env::var_os("PATH")
                .into_iter()
                .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>()),
        )
        .map(|dir| dir.join("tansu"))
        .find(|path| path.is_file())
        .unwrap_or_else(|| {
            panic!(
                "tansu not found (looked at $TANSU, ~/.cargo/grw-tansu-{TANSU_VERSION}/bin and PATH); \
                 run tests/setup.sh, which builds it"
            )
        })
}

/// A running (or stopped) tansu broker on `127.0.0.1`; killed on drop. It
/// stores in memory (a restart starts empty, like a cluster that lost its
/// disks) or, [`Broker::start_persistent`], in an SQLite file, kept across
/// restarts.
pub struct Broker {
    port: u16,
    /// The port clients are told to connect to: `port`, or a proxy's.
    advertised: u16,
    /// Whether clients must authenticate (SASL SCRAM).
    authenticating: bool,
    /// `memory://tansu/` or `sqlite://tansu.db` (in `dir`).
    storage: &'static str,
    /// Holds `broker.log` and the SQLite store; the broker runs in it.
    dir: tempfile::TempDir,
    child: Option<Child>,
}

/// (mechanism as tansu's `user create` names it, or `plain` for a
/// [`PlainFront`]; user, password).
pub type ScramUser<'a> = (&'a str, &'a str, &'a str);

impl Broker {
    /// Starts a broker in memory on a free port and waits until it accepts
    /// connections.
    pub async fn start() -> Broker {
        let port = free_port();
        Broker::start_on(port, port).await
    }

    /// Starts a broker in memory on `port` (see [`free_port`]) that tells
    /// clients to connect to `advertised` (a [`TlsProxy`] in front of it).
    pub async fn start_on(port: u16, advertised: u16) -> Broker {
        let mut broker = Broker::new(port, advertised, "memory://tansu/");
        broker.start_again().await;
        broker
    }

    /// Starts a broker that keeps its topics, messages and users across
    /// [`Broker::stop`] and [`Broker::start_again`].
    pub async fn start_persistent() -> Broker {
        let port = free_port();
        let mut broker = Broker::new(port, port, "sqlite://tansu.db");
        broker.start_again().await;
        broker
    }

    /// Starts a persistent broker with these topics (one partition each)
    /// and SCRAM users (`scram256` or `scram512`), that then serves only
    /// clients that authenticated as one of them. (Users and topics are
    /// made before authentication is required, then the broker restarts.)
    pub async fn start_with_users(topics: &[&str], users: &[ScramUser<'_>]) -> Broker {
        let mut broker = Broker::start_persistent().await;
        for topic in topics {
            broker.create_topic(topic, 1);
        }
        for (mechanism, user, password) in users {
            broker.tansu(&["user", "create", user, password, "--mechanism", mechanism]);
        }
        broker.stop();
        broker.authenticating = true;
        broker.start_again().await;
        broker
    }

    fn new(port: u16, advertised: u16, storage: &'static str) -> Broker {
        Broker {
            port,
            advertised,
            authenticating: false,
            storage,
            dir: tempfile::tempdir().expect("tempdir"),
            child: None,
        }
    }

    /// `127.0.0.1:PORT`, for `bootstrapServers`.
    pub fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// Kills the broker (like a crash) and waits for it to exit.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the broker again on the same port (empty, unless persistent).
    pub async fn start_again(&mut self) {
        assert!(self.child.is_none(), "tansu is already running");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("log file");
        let url = format!("tcp://127.0.0.1:{}", self.port);
        let advertised = format!("tcp://127.0.0.1:{}", self.advertised);
        let binary = tansu_binary();
        let child = Command::new(&binary)
            .args(["broker", "--storage-engine", self.storage])
            .current_dir(self.dir.path())
            .args([
                "--listener-url",
                &url,
                "--advertised-listener-url",
                &advertised,
            ])
            .args(self.authenticating.then_some("--authentication"))
            .env(
                "RUST_LOG",
                std::env::var("TANSU_LOG").unwrap_or("warn".into()),
            )
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log file"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", binary.display()));
        self.child = Some(child);
        let deadline = Instant::now() + START_TIMEOUT;
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            let exited = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if exited.is_some() || Instant::now() > deadline {
                panic!("tansu did not start ({exited:?}); its log:\n{}", self.log());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Creates a topic with this many partitions, with tansu's own tool.
    pub fn create_topic(&self, topic: &str, partitions: u32) {
        self.tansu(&[
            "topic",
            "create",
            topic,
            "--partitions",
            &partitions.to_string(),
        ]);
    }

    /// Runs a tansu command against this broker (`--broker` added).
    fn tansu(&self, args: &[&str]) {
        let output = Command::new(tansu_binary())
            .args(args)
            .args(["--broker", &format!("tcp://127.0.0.1:{}", self.port)])
            .output()
            .expect("tansu runs");
        assert!(
            output.status.success(),
            "tansu {args:?} failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// What the broker logged.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("broker.log")
    }
}

impl Drop for Broker {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One message as the consumer read it.
#[derive(Debug, Clone, Deserialize)]
pub struct Message {
    /// Partition.
    pub partition: i32,
    /// Offset in the partition.
    pub offset: i64,
    /// Key, as text.
    pub key: Option<String>,
    /// Value, as text.
    pub value: Option<String>,
    /// Headers in order, values as text.
    pub headers: Vec<(String, Option<String>)>,
}

impl Message {
    /// The value of the first header of this name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, v)| v.as_deref())
    }

    /// The value, parsed as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(self.value.as_deref().unwrap_or("null")).expect("a JSON value")
    }
}

/// A loopback port nothing listens on (until someone binds it).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port()
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Where `tests/setup.sh` put the Python toolchain.
fn python() -> PathBuf {
    std::env::var_os("GRW_TOOLCHAINS")
        .map_or_else(|| workspace().join("target/toolchains"), PathBuf::from)
        .join("python/bin/python")
}

/// Reads `topic` from its beginning with kafka-python until `count`
/// messages came, or none for `idle`; every partition, in offset order
/// within each.
pub async fn consume(bootstrap: &str, topic: &str, count: usize, idle: Duration) -> Vec<Message> {
    consume_as(bootstrap, topic, count, idle, None).await
}

/// As [`consume`], authenticated with SASL as `user`.
pub async fn consume_as(
    bootstrap: &str,
    topic: &str,
    count: usize,
    idle: Duration,
    user: Option<ScramUser<'_>>,
) -> Vec<Message> {
    let output = kafka_python(
        &[
            bootstrap,
            topic,
            &count.to_string(),
            &idle.as_secs_f64().to_string(),
        ],
        user,
    )
    .await;
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("consumer line {line:?}: {e}"))
        })
        .collect()
}

/// A Kafka broker that knows every topic and refuses every message with one
/// error code, speaking just enough of the Kafka protocol for a producer
/// (ApiVersions, Metadata, InitProducerId, Produce), to show what GRW does
/// with answers tansu never gives (tansu has no ACLs and no size limit):
/// `TOPIC_AUTHORIZATION_FAILED` (29) and `MESSAGE_TOO_LARGE` (10).
pub struct RefusingBroker {
    port: u16,
    server: tokio::task::JoinHandle<()>,
}

/// Kafka's error code for a topic the client may not write.
pub const TOPIC_AUTHORIZATION_FAILED: i16 = 29;

/// Kafka's error code for a message over the broker's or the topic's size
/// limit.
pub const MESSAGE_TOO_LARGE: i16 = 10;

impl RefusingBroker {
    /// Starts answering on a free loopback port; every Produce gets `error`.
    pub async fn start(error: i16) -> RefusingBroker {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a free port");
        let port = listener.local_addr().expect("its address").port();
        let server = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(refusing::serve(stream, port, error));
            }
        });
        RefusingBroker { port, server }
    }

    /// `127.0.0.1:PORT`, for `bootstrapServers`.
    pub fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }
}

impl Drop for RefusingBroker {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// The wire format of the [`RefusingBroker`]: requests are read only as far
/// as needed, responses use versions without tagged fields but ApiVersions
/// v3 (which every current client asks first).
mod refusing {
    use tokio::net::TcpStream;

    use super::wire::{Reader, read_frame, string, write_frame};

    const PRODUCE: i16 = 0;
    const METADATA: i16 = 3;
    const API_VERSIONS: i16 = 18;
    const INIT_PRODUCER_ID: i16 = 22;
    /// (api, min, max) this broker speaks: versions without tagged fields.
    const APIS: [(i16, i16, i16); 4] = [
        (PRODUCE, 3, 7),
        (METADATA, 1, 1),
        (API_VERSIONS, 0, 3),
        (INIT_PRODUCER_ID, 0, 1),
    ];

    pub(super) async fn serve(mut stream: TcpStream, port: u16, error: i16) {
        while let Some(request) = read_frame(&mut stream).await {
            let Some(body) = answer(&request, port, error) else {
                return;
            };
            if write_frame(&mut stream, &body).await.is_err() {
                return;
            }
        }
    }

    fn answer(request: &[u8], port: u16, error: i16) -> Option<Vec<u8>> {
        let mut r = Reader(request);
        let api = r.i16()?;
        let version = r.i16()?;
        let correlation = r.i32()?;
        let mut out = correlation.to_be_bytes().to_vec();
        if api == API_VERSIONS {
            // The response header has no tagged fields, whatever the version.
            if version >= 3 {
                out.extend(0i16.to_be_bytes());
                out.push(APIS.len() as u8 + 1);
                for (key, min, max) in APIS {
                    out.extend(key.to_be_bytes());
                    out.extend(min.to_be_bytes());
                    out.extend(max.to_be_bytes());
                    out.push(0);
                }
                out.extend(0i32.to_be_bytes());
                out.push(0);
            } else {
                out.extend(0i16.to_be_bytes());
                out.extend((APIS.len() as i32).to_be_bytes());
                for (key, min, max) in APIS {
                    out.extend(key.to_be_bytes());
                    out.extend(min.to_be_bytes());
                    out.extend(max.to_be_bytes());
                }
                if version >= 1 {
                    out.extend(0i32.to_be_bytes());
                }
            }
            return Some(out);
        }
        let supported = APIS
            .iter()
            .any(|&(key, min, max)| key == api && (min..=max).contains(&version));
        if !supported {
            // Not part of the exchange a producer starts with: close.
            return None;
        }
        // Header v1: the client id.
        r.string()?;
        match api {
            METADATA => {
                let count = r.i32()?;
                let mut topics = Vec::new();
                for _ in 0..count.max(0) {
                    topics.push(r.string()?.unwrap_or_default());
                }
                // brokers: this one, node 1
                out.extend(1i32.to_be_bytes());
                out.extend(1i32.to_be_bytes());
                string(&mut out, "127.0.0.1");
                out.extend(i32::from(port).to_be_bytes());
                out.extend((-1i16).to_be_bytes()); // rack: null
                out.extend(1i32.to_be_bytes()); // controller
                out.extend((topics.len() as i32).to_be_bytes());
                for topic in &topics {
                    out.extend(0i16.to_be_bytes());
                    string(&mut out, topic);
                    out.push(0); // not internal
                    out.extend(1i32.to_be_bytes()); // one partition
                    out.extend(0i16.to_be_bytes());
                    out.extend(0i32.to_be_bytes()); // partition 0
                    out.extend(1i32.to_be_bytes()); // leader: node 1
                    for _ in 0..2 {
                        // replicas, in-sync replicas: node 1
                        out.extend(1i32.to_be_bytes());
                        out.extend(1i32.to_be_bytes());
                    }
                }
            }
            INIT_PRODUCER_ID => {
                out.extend(0i32.to_be_bytes()); // throttle
                out.extend(0i16.to_be_bytes());
                out.extend(1000i64.to_be_bytes()); // producer id
                out.extend(0i16.to_be_bytes()); // epoch
            }
            PRODUCE => {
                r.string()?; // transactional id
                r.i16()?; // acks
                r.i32()?; // timeout
                let topics = r.i32()?;
                let mut answers = Vec::new();
                for _ in 0..topics.max(0) {
                    let topic = r.string()?.unwrap_or_default();
                    let partitions = r.i32()?;
                    let mut indexes = Vec::new();
                    for _ in 0..partitions.max(0) {
                        indexes.push(r.i32()?);
                        r.bytes()?;
                    }
                    answers.push((topic, indexes));
                }
                out.extend((answers.len() as i32).to_be_bytes());
                for (topic, indexes) in &answers {
                    string(&mut out, topic);
                    out.extend((indexes.len() as i32).to_be_bytes());
                    for index in indexes {
                        out.extend(index.to_be_bytes());
                        out.extend(error.to_be_bytes());
                        out.extend((-1i64).to_be_bytes()); // base offset
                        out.extend((-1i64).to_be_bytes()); // log append time
                        if version >= 5 {
                            out.extend((-1i64).to_be_bytes()); // log start offset
                        }
                    }
                }
                out.extend(0i32.to_be_bytes()); // throttle
            }
            _ => return None,
        }
        Some(out)
    }
}

/// A TLS front for a [`Broker`] (tansu speaks plain TCP): terminates TLS
/// with a server certificate, asks for a client certificate signed by
/// `client_ca` when one is given, and relays the bytes to the broker. The
/// broker advertises the proxy's address ([`Broker::start_behind`]), so a
/// client reaches it only through TLS.
pub struct TlsProxy {
    port: u16,
    server: tokio::task::JoinHandle<()>,
}

impl TlsProxy {
    /// Listens on a free loopback port, relaying to `127.0.0.1:upstream`
    /// (certificate and key as PEM).
    pub async fn start(cert: &str, key: &str, client_ca: Option<&str>, upstream: u16) -> TlsProxy {
        use rustls::pki_types::pem::PemObject;
        use rustls::pki_types::{CertificateDer, PrivateKeyDer};
        let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert.as_bytes())
            .collect::<Result<_, _>>()
            .expect("a PEM certificate");
        let key = PrivateKeyDer::from_pem_slice(key.as_bytes()).expect("a PEM key");
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
            .with_safe_default_protocol_versions()
            .expect("TLS versions");
        let builder = match client_ca {
            Some(ca) => {
                let mut roots = rustls::RootCertStore::empty();
                for ca in CertificateDer::pem_slice_iter(ca.as_bytes()) {
                    roots.add(ca.expect("a PEM CA")).expect("a CA certificate");
                }
                let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
                    std::sync::Arc::new(roots),
                    provider,
                )
                .build()
                .expect("a client verifier");
                builder.with_client_cert_verifier(verifier)
            }
            None => builder.with_no_client_auth(),
        };
        let config = builder
            .with_single_cert(chain, key)
            .expect("the certificate and its key");
        let acceptor = tokio_rustls::TlsAcceptor::from(std::sync::Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("a free port");
        let port = listener.local_addr().expect("its address").port();
        let server = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    // A refused handshake just closes the connection.
                    let Ok(mut client) = acceptor.accept(client).await else {
                        return;
                    };
                    let Ok(mut broker) =
                        tokio::net::TcpStream::connect(("127.0.0.1", upstream)).await
                    else {
                        return;
                    };
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut broker).await;
                });
            }
        });
        TlsProxy { port, server }
    }

    /// `127.0.0.1:PORT`, for `bootstrapServers`.
    pub fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }
}

impl Drop for TlsProxy {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// Runs `tests/clients/kafka_consume.py` with `args`; panics with its
/// output when it fails.
async fn kafka_python(args: &[&str], user: Option<ScramUser<'_>>) -> std::process::Output {
    let mut command = tokio::process::Command::new(python());
    command
        .arg(workspace().join("tests/clients/kafka_consume.py"))
        .args(args);
    if let Some((mechanism, user, password)) = user {
        let mechanism = match mechanism {
            "scram256" => "SCRAM-SHA-256",
            "plain" => "PLAIN",
            _ => "SCRAM-SHA-512",
        };
        command.env("KAFKA_SASL", format!("{mechanism}:{user}:{password}"));
    }
    let output = command
        .output()
        .await
        .expect("the Kafka consumer runs (run tests/setup.sh for its toolchain)");
    assert!(
        output.status.success(),
        "kafka-python failed: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}
