//! A real `nats-server` with JetStream on loopback, that a test can stop and
//! start again (same port, same store), and read-back helpers.

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use async_nats::jetstream::{self, message::StreamMessage};

/// How long a starting server may take to accept connections.
const START_TIMEOUT: Duration = Duration::from_secs(30);

/// Path of `nats-server`: `$NATS_SERVER`, else `PATH`, else `/usr/sbin`.
/// Panics with installation advice when there is none.
pub fn nats_server_binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("NATS_SERVER") {
        return PathBuf::from(bin);
    }
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .map(|dir| dir.join("nats-server"));
    on_path
        .chain([PathBuf::from("/usr/sbin/nats-server")])
        .find(|path| path.is_file())
        .unwrap_or_else(|| {
            panic!(
                "nats-server not found (looked at $NATS_SERVER, PATH and /usr/sbin); \
                 install it with `apt-get install nats-server` or set NATS_SERVER to its path"
            )
        })
}

/// A running (or stopped) `nats-server -js` on `127.0.0.1`; killed on drop.
pub struct NatsServer {
    port: u16,
    /// Holds `jetstream/` (the store, kept across restarts) and `server.log`.
    dir: tempfile::TempDir,
    child: Option<Child>,
}

impl NatsServer {
    /// Starts a server on a free port and waits until it accepts connections.
    pub async fn start() -> NatsServer {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let mut server = NatsServer {
            port,
            dir: tempfile::tempdir().expect("tempdir"),
            child: None,
        };
        server.start_again().await;
        server
    }

    /// `nats://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("nats://127.0.0.1:{}", self.port)
    }

    /// Kills the server (like a crash) and waits for it to exit.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the server again on the same port with the same store.
    pub async fn start_again(&mut self) {
        assert!(self.child.is_none(), "nats-server is already running");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.log_path())
            .expect("log file");
        let binary = nats_server_binary();
        let child = Command::new(&binary)
            .args([
                "-a",
                "127.0.0.1",
                "-p",
                &self.port.to_string(),
                "-js",
                "-sd",
            ])
            .arg(self.dir.path().join("jetstream"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().expect("log file"))
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run {}: {e}; install nats-server with `apt-get install nats-server` \
                     or set NATS_SERVER to its path",
                    binary.display()
                )
            });
        self.child = Some(child);
        let deadline = Instant::now() + START_TIMEOUT;
        while TcpStream::connect(("127.0.0.1", self.port)).is_err() {
            let exited = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten());
            if exited.is_some() || Instant::now() > deadline {
                panic!(
                    "nats-server did not start ({exited:?}); its log:\n{}",
                    std::fs::read_to_string(self.log_path()).unwrap_or_default()
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The server's log so far (every start appends to it).
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.log_path()).unwrap_or_default()
    }

    fn log_path(&self) -> PathBuf {
        self.dir.path().join("server.log")
    }

    /// A JetStream context of a fresh client connection, for setting up and
    /// inspecting streams.
    pub async fn jetstream(&self) -> jetstream::Context {
        let client = async_nats::connect(self.url())
            .await
            .expect("connects to nats-server");
        jetstream::new(client)
    }

    /// Every message of `stream`, in order.
    pub async fn stream_messages(&self, stream: &str) -> Vec<StreamMessage> {
        let stream = self
            .jetstream()
            .await
            .get_stream(stream)
            .await
            .expect("stream exists");
        let state = &stream.cached_info().state;
        let mut messages = Vec::new();
        if state.messages == 0 {
            return messages;
        }
        for sequence in state.first_sequence..=state.last_sequence {
            messages.push(
                stream
                    .get_raw_message(sequence)
                    .await
                    .expect("message readable"),
            );
        }
        messages
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        self.stop();
    }
}
