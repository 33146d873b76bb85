//! Runs the real `grw` binary for a test: writes its config file, starts it
//! on a free port, collects its logs, and talks to its HTTP API.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use serde_json::Value;

use crate::fake_api::FakeApiServer;

/// Path of the `grw` binary, built once per test process.
///
/// Cargo builds a test crate's own dependencies, not the binaries of other
/// packages, so the harness asks Cargo for it (a no-op when up to date).
/// `GRW_BIN` overrides this with a binary built elsewhere.
pub fn grw_binary() -> PathBuf {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        if let Ok(bin) = std::env::var("GRW_BIN") {
            return PathBuf::from(bin);
        }
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("workspace root");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        // Selected like the test run itself (`cargo test --workspace` or
        // `cargo nextest run --workspace`), so that Cargo unifies the
        // dependencies' features alike and links the binary from the
        // libraries that build already made: `-p grw` alone resolves other
        // features and would compile wasmtime, kube and axum a second time.
        let status = as_from_a_shell(&mut Command::new(cargo))
            .args(["build", "--quiet", "--workspace", "--tests", "--bins"])
            .current_dir(workspace)
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building grw failed");
        let target = std::env::var("CARGO_TARGET_DIR")
            .map_or_else(|_| workspace.join("target"), PathBuf::from);
        target.join("debug").join("grw")
    })
    .clone()
}

/// The daemon `bin` run with the config file at `config_path` and nothing
/// from this process's environment that would change what it reads
/// (`KUBECONFIG`, `RUST_LOG`); its log (stderr) piped, stdout dropped.
pub fn daemon_command(bin: &Path, config_path: &Path) -> Command {
    let mut command = Command::new(bin);
    command
        .env("CONFIG_FILE_PATH", config_path)
        .env_remove("KUBECONFIG")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    command
}

/// Takes out of `command`'s environment what Cargo sets for the test
/// process (`CARGO_MANIFEST_DIR`, `CARGO_PKG_NAME`...), so that a build it
/// runs sees what a build from a shell sees. Build scripts that track such
/// a variable (ring's tracks `CARGO_MANIFEST_DIR`) would otherwise run again
/// and rebuild everything above them, and once more in the next build
/// outside the tests.
pub fn as_from_a_shell(command: &mut Command) -> &mut Command {
    const SET_FOR_TESTS: [&str; 8] = [
        "CARGO_MANIFEST_DIR",
        "CARGO_MANIFEST_PATH",
        "CARGO_CRATE_NAME",
        "CARGO_BIN_NAME",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_TARGET_TMPDIR",
        "CARGO_RUSTC_CURRENT_DIR",
        "CARGO_MANIFEST_LINKS",
    ];
    for (name, _) in std::env::vars_os() {
        let Some(name) = name.to_str() else { continue };
        if SET_FOR_TESTS.contains(&name)
            || name.starts_with("CARGO_PKG_")
            || name.starts_with("CARGO_BIN_EXE_")
        {
            command.env_remove(name);
        }
    }
    command
}

/// The state the bundled recording ends in: `{"<resource>": <kubectl get
/// <resource> -A -o json>, ...}`, taken from the same API server right after
/// the last recorded event (`tests/data/cluster-snapshot.json`).
pub fn recorded_snapshot() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("data/cluster-snapshot.json")
}

/// The bundled example recording.
pub fn bundled_recording() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/cluster-recording.jsonl")
}

/// A running `grw`.
pub struct Grw {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    logs: Arc<Mutex<Vec<String>>>,
    http: reqwest::Client,
    /// Holds the config file and anything else the test put there.
    pub dir: tempfile::TempDir,
    token: Option<String>,
}

impl Grw {
    /// `grw` replaying the bundled recording with nothing else configured
    /// (the README's run command), ready.
    pub async fn replaying() -> Grw {
        Grw::replaying_in(
            tempfile::tempdir().expect("a temporary directory"),
            Value::Null,
        )
        .await
    }

    /// [`Grw::replaying`] with `config` (`null`: none), in `dir`, where
    /// the files it names may be; ready.
    pub async fn replaying_in(dir: tempfile::TempDir, config: Value) -> Grw {
        let config = match config {
            Value::Null => serde_json::json!({}),
            config => config,
        };
        let recording = bundled_recording();
        let grw = Grw::start_in(
            dir,
            config,
            &["--replay", recording.to_str().expect("a UTF-8 path")],
        )
        .await;
        grw.wait_ready(Duration::from_secs(60)).await;
        grw
    }

    /// `grw` against `fake`, with `token` as its bearer token (in a file
    /// beside its config), discovery refreshed hourly, and `extra`'s keys
    /// over those; ready.
    pub async fn against(fake: &FakeApiServer, token: &str, extra: Value) -> Grw {
        let dir = tempfile::tempdir().expect("a temporary directory");
        let token_file = dir.path().join("token");
        std::fs::write(&token_file, token).expect("writing the token");
        let mut config = serde_json::json!({
            "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": fake.url(), "tokenFilePath": token_file},
            "apiGroupsSyncIntervalSecond": 3600,
        });
        for (key, value) in extra.as_object().into_iter().flatten() {
            config[key] = value.clone();
        }
        let grw = Grw::start_in(dir, config, &[]).await;
        grw.wait_ready(Duration::from_secs(60)).await;
        grw
    }

    /// Starts `grw` with this config (the `listenPort` is chosen here) and
    /// extra command-line arguments; waits until it listens.
    pub async fn start(config: Value, args: &[&str]) -> Grw {
        let dir = tempfile::tempdir().expect("tempdir");
        Self::start_in(dir, config, args).await
    }

    /// Like [`Grw::start`], in a directory the test prepared.
    pub async fn start_in(dir: tempfile::TempDir, mut config: Value, args: &[&str]) -> Grw {
        config["logType"] = "json".into();
        if config.get("minLogLevel").is_none() {
            config["minLogLevel"] = "debug".into();
        }
        let config_path = dir.path().join("config.json");
        std::fs::write(&config_path, serde_json::to_vec_pretty(&config).unwrap()).unwrap();
        let mut child = daemon_command(&grw_binary(), &config_path)
            .args(["--listen-port", "0"])
            .args(args)
            .spawn()
            .expect("grw starts");
        let logs = Arc::new(Mutex::new(Vec::new()));
        let (address_tx, address_rx) = std::sync::mpsc::channel();
        let stderr = child.stderr.take().expect("stderr");
        let sink = logs.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Ok(event) = serde_json::from_str::<Value>(&line)
                    && event["message"] == "API listening"
                    && let Some(address) = event["address"].as_str()
                {
                    let _ = address_tx.send(address.to_string());
                }
                sink.lock().push(line);
            }
        });
        let address = address_rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| {
                panic!(
                    "grw did not start listening; logs:\n{}",
                    logs.lock().join("\n")
                )
            });
        let token = config["apiTokenFile"]
            .as_str()
            .and_then(|p| std::fs::read_to_string(p).ok())
            .map(|t| t.trim().to_string());
        Grw {
            child,
            url: format!("http://{address}"),
            logs,
            http: reqwest::Client::new(),
            dir,
            token,
        }
    }

    /// The process id of the daemon.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Everything `grw` logged so far, one JSON object per line.
    pub fn logs(&self) -> String {
        self.logs.lock().join("\n")
    }

    /// The log lines whose `message` equals `message`.
    pub fn log_events(&self, message: &str) -> Vec<Value> {
        self.logs
            .lock()
            .iter()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|e| e["message"] == message)
            .collect()
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let request = self.http.request(method, format!("{}{path}", self.url));
        match &self.token {
            Some(t) => request.bearer_auth(t),
            None => request,
        }
    }

    /// GET, answer parsed as JSON (`Value::Null` if it is not JSON).
    pub async fn get(&self, path: &str) -> (u16, Value) {
        let response = self
            .request(reqwest::Method::GET, path)
            .send()
            .await
            .expect("GET");
        let status = response.status().as_u16();
        let body = response.bytes().await.expect("body");
        (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
    }

    /// GET, the raw response.
    pub async fn get_raw(&self, path: &str) -> reqwest::Response {
        self.request(reqwest::Method::GET, path)
            .send()
            .await
            .expect("GET")
    }

    /// The value of an unlabelled metric of `/metrics`, e.g.
    /// `grw_query_examined_objects_total`; panics with the text if absent.
    pub async fn metric(&self, name: &str) -> u64 {
        let text = self.get_raw("/metrics").await.text().await.unwrap();
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .and_then(|n| n.trim().parse().ok())
            .unwrap_or_else(|| panic!("no {name} in\n{text}"))
    }

    /// POST a body, answer parsed as JSON.
    pub async fn post(&self, path: &str, body: impl Into<reqwest::Body>) -> (u16, Value) {
        let response = self
            .request(reqwest::Method::POST, path)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .expect("POST");
        let status = response.status().as_u16();
        let body = response.bytes().await.expect("body");
        (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
    }

    /// DELETE, answer parsed as JSON.
    pub async fn delete(&self, path: &str) -> (u16, Value) {
        let response = self
            .request(reqwest::Method::DELETE, path)
            .send()
            .await
            .expect("DELETE");
        let status = response.status().as_u16();
        let body = response.bytes().await.expect("body");
        (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
    }

    /// Opens an event stream (`?watch=true` route) and returns its lines as they come.
    pub async fn stream(&self, path: &str) -> EventStream {
        let response = self
            .request(reqwest::Method::GET, path)
            .send()
            .await
            .expect("stream");
        assert_eq!(response.status().as_u16(), 200, "stream {path}");
        EventStream {
            response,
            buffer: Vec::new(),
        }
    }

    /// Polls `path` until it answers `status`; `false` if `timeout` passed first.
    pub async fn wait_for_status(&self, path: &str, status: u16, timeout: Duration) -> bool {
        eventually(timeout, || async {
            self.get_raw(path).await.status().as_u16() == status
        })
        .await
    }

    /// The kinds `/api/v1/kinds` lists a watch of, as `group/version/Kind`
    /// (`v1/Kind` for the core group).
    pub async fn watched_kinds(&self) -> Vec<String> {
        let (_, kinds) = self.get("/api/v1/kinds").await;
        kinds["items"]
            .as_array()
            .unwrap_or_else(|| panic!("no kinds: {kinds}"))
            .iter()
            .filter_map(|k| k["gvk"].as_str().map(str::to_string))
            .collect()
    }

    /// Waits until `/readyz` answers 200.
    pub async fn wait_ready(&self, timeout: Duration) {
        let ok = self.wait_for_status("/readyz", 200, timeout).await;
        assert!(ok, "grw not ready in {timeout:?}; logs:\n{}", self.logs());
    }

    /// Kills the process at once (SIGKILL), as a crash or an OOM kill would,
    /// and hands back its directory so a new `grw` can start in it.
    pub fn kill(mut self) -> tempfile::TempDir {
        let _ = self.child.kill();
        let _ = self.child.wait();
        std::mem::replace(&mut self.dir, tempfile::tempdir().expect("tempdir"))
    }

    /// Sends SIGTERM and waits for the exit.
    pub fn terminate(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        None
    }
}

impl Drop for Grw {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Lines of an event stream.
pub struct EventStream {
    response: reqwest::Response,
    buffer: Vec<u8>,
}

impl EventStream {
    /// The lines of a response the test requested itself.
    pub fn new(response: reqwest::Response) -> EventStream {
        EventStream {
            response,
            buffer: Vec::new(),
        }
    }

    /// The next line as JSON, or `None` when the stream ended or `timeout` passed.
    pub async fn next(&mut self, timeout: Duration) -> Option<Value> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(end) = self.buffer.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                return Some(serde_json::from_slice(&line).expect("stream lines are JSON"));
            }
            match tokio::time::timeout_at(deadline, self.response.chunk()).await {
                Ok(Ok(Some(chunk))) => self.buffer.extend_from_slice(&chunk),
                _ => return None,
            }
        }
    }

    /// Every line arriving within `quiet` of the previous one (skipping bookmarks).
    pub async fn drain(&mut self, quiet: Duration) -> Vec<Value> {
        let mut lines = Vec::new();
        while let Some(line) = self.next(quiet).await {
            if line["type"] != "BOOKMARK" {
                lines.push(line);
            }
        }
        lines
    }
}

/// `namespace/name` (or `name`) of each item of a list answer, in answer
/// order.
pub fn keys(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {body}"))
        .iter()
        .map(|o| {
            let m = &o["metadata"];
            match m["namespace"].as_str() {
                Some(ns) => format!("{ns}/{}", m["name"].as_str().unwrap()),
                None => m["name"].as_str().unwrap().to_string(),
            }
        })
        .collect()
}

/// `TYPE namespace/name` of a watch event, for readable assertions.
pub fn summary(event: &Value) -> String {
    let meta = &event["object"]["metadata"];
    match meta["namespace"].as_str() {
        Some(ns) => format!(
            "{} {ns}/{}",
            event["type"].as_str().unwrap_or("?"),
            meta["name"].as_str().unwrap_or("?")
        ),
        None => format!(
            "{} {}",
            event["type"].as_str().unwrap_or("?"),
            meta["name"].as_str().unwrap_or("?")
        ),
    }
}

/// `from relation to` of an edge the relations routes answer.
pub fn edge_line(edge: &Value) -> String {
    format!(
        "{} {} {}",
        edge["from"].as_str().unwrap_or("?"),
        edge["relation"].as_str().unwrap_or("?"),
        edge["to"].as_str().unwrap_or("?")
    )
}

/// Polls `check` every 50 ms until it holds or `timeout` passes.
pub async fn eventually<F, Fut>(timeout: Duration, mut check: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = Instant::now() + timeout;
    loop {
        if check().await {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Why a `grw` that stopped says it stopped: the `error` of its JSON
/// `grw stopped` log line, else what it printed after `grw: `.
pub fn stop_reason(output: &str) -> Option<String> {
    output
        .lines()
        .find_map(|line| match serde_json::from_str::<Value>(line) {
            Ok(event) if event["message"] == "grw stopped" => {
                event["error"].as_str().map(str::to_string)
            }
            Ok(_) => None,
            Err(_) => line.strip_prefix("grw: ").map(str::to_string),
        })
}

/// Runs `grw` with a config file and arguments, expecting it to exit; returns
/// the exit code and what it printed on stderr.
pub fn run_to_exit(
    config_text: Option<&str>,
    args: &[&str],
    timeout: Duration,
) -> (Option<i32>, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut command = Command::new(grw_binary());
    command
        .args(args)
        .env_remove("KUBECONFIG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(text) = config_text {
        let path = dir.path().join("config.json");
        std::fs::write(&path, text).unwrap();
        command.env("CONFIG_FILE_PATH", &path);
    } else {
        command
            .current_dir(dir.path())
            .env_remove("CONFIG_FILE_PATH");
    }
    let mut child = command.spawn().expect("grw starts");
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            let output = child.wait_with_output().expect("output");
            let mut text = String::from_utf8_lossy(&output.stderr).into_owned();
            text.push_str(&String::from_utf8_lossy(&output.stdout));
            return (status.code(), text);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let output = child.wait_with_output().expect("output");
            return (None, String::from_utf8_lossy(&output.stderr).into_owned());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
