//! The processes the daemon benchmark runs: the fake API server and GRW,
//! each killed when its handle is dropped (a panic included), and what is
//! read of them: readiness, resident memory, CPU time, logs.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use grw_e2e::daemon::daemon_command;
use parking_lot::Mutex;
use serde_json::{Value, json};

/// A child process, killed (SIGKILL) and reaped when dropped, so that no
/// run of the benchmark, however it ends, leaves one behind.
pub struct Process {
    child: Child,
}

impl Process {
    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it has exited.
    fn exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `fake-apiserver --pods N` and waits for the URL it prints once
/// the Pods are loaded. Its progress goes to this process's stderr.
pub fn start_fake(bin: &Path, pods: usize, list_pace: Option<u32>) -> (Process, String) {
    let (process, url, _) = spawn_fake(bin, pods, list_pace);
    (process, url)
}

/// Starts `fake-apiserver` with no Pods, taking commands.
pub fn start_commanded_fake(bin: &Path) -> (Process, String, FakeCommands) {
    spawn_fake(bin, 0, None)
}

/// Starts `fake-apiserver --pods N`, taking commands.
pub fn start_fake_with_pods(bin: &Path, pods: usize) -> (Process, String, FakeCommands) {
    spawn_fake(bin, pods, None)
}

fn spawn_fake(bin: &Path, pods: usize, list_pace: Option<u32>) -> (Process, String, FakeCommands) {
    let mut command = Command::new(bin);
    command.args(["--pods", &pods.to_string()]);
    if let Some(pace) = list_pace {
        command.args(["--list-pace", &pace.to_string()]);
    }
    let child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", bin.display()));
    let mut process = Process { child };
    let mut commands = FakeCommands {
        stdin: process.child.stdin.take().expect("piped stdin"),
        stdout: BufReader::new(process.child.stdout.take().expect("piped stdout")),
    };
    let url = commands.answer();
    assert!(
        !url.is_empty(),
        "fake-apiserver exited before printing its URL"
    );
    (process, url, commands)
}

/// The command line of a `fake-apiserver`: its standard input and output.
pub struct FakeCommands {
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl FakeCommands {
    /// Has the fake make `count` changes to its churned ConfigMaps and
    /// waits until they are stored.
    pub fn modify(&mut self, count: u64) {
        assert_eq!(
            self.send(&format!("modify {count}")),
            format!("modified {count}"),
            "fake-apiserver's answer"
        );
    }

    /// Sends one command and returns its answer.
    pub fn send(&mut self, line: &str) -> String {
        writeln!(self.stdin, "{line}").expect("writing to fake-apiserver");
        self.answer()
    }

    /// The next line of its standard output, trimmed; empty at its end.
    fn answer(&mut self) -> String {
        let mut line = String::new();
        self.stdout
            .read_line(&mut line)
            .expect("reading fake-apiserver's output");
        line.trim().to_string()
    }
}

/// A running GRW and its log lines, each with when it arrived.
pub struct Daemon {
    process: Process,
    /// `127.0.0.1:PORT` of its HTTP API.
    pub addr: SocketAddr,
    /// When it was spawned.
    pub spawned: Instant,
    logs: Arc<Mutex<Vec<(Duration, String)>>>,
    _dir: tempfile::TempDir,
}

/// Starts GRW against the API server at `api_url` as a user would: a
/// kubeconfig naming the server, v1 Pods watched from the start, every other
/// setting (the built-in relationship analyzers among them) at its default
/// but `streamingList` when `streaming_list` is false, and
/// `builtinAnalyzers` when `analyzers` is false.
pub fn start_grw(bin: &Path, api_url: &str, streaming_list: bool, analyzers: bool) -> Daemon {
    start_grw_with(
        bin,
        api_url,
        json!({
            "initialWatchingResources": [{"group": "", "version": "v1", "kind": "Pod"}],
            "streamingList": streaming_list,
            "builtinAnalyzers": analyzers,
        }),
    )
}

/// Starts GRW against the API server at `api_url` with the settings of
/// `config` and a kubeconfig naming the server, its HTTP API on a free
/// port, and JSON logs at `info`.
pub fn start_grw_with(bin: &Path, api_url: &str, config: Value) -> Daemon {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let kubeconfig = dir.path().join("kubeconfig");
    std::fs::write(
        &kubeconfig,
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {api_url}\n\
             users:\n- name: bench\n  user:\n    token: bench\ncontexts:\n- name: fake\n  context:\n    \
             cluster: fake\n    user: bench\ncurrent-context: fake\n"
        ),
    )
    .expect("writing the kubeconfig");
    let port = free_port();
    let mut config = config;
    for (key, value) in [
        (
            "k8sClientConfig",
            json!({"authType": "KubeConfig", "kubeConfigFilePath": kubeconfig}),
        ),
        ("listenPort", json!(port)),
        ("logType", json!("json")),
        ("minLogLevel", json!("info")),
    ] {
        config[key] = value;
    }
    let config_path = dir.path().join("config.json");
    std::fs::write(&config_path, config.to_string()).expect("writing the config");

    let spawned = Instant::now();
    let mut child = daemon_command(bin, &config_path)
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", bin.display()));
    let stderr = child.stderr.take().expect("piped stderr");
    let logs = Arc::new(Mutex::new(Vec::new()));
    let sink = logs.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            sink.lock().push((spawned.elapsed(), line));
        }
    });
    Daemon {
        process: Process { child },
        addr: SocketAddr::from(([127, 0, 0, 1], port)),
        spawned,
        logs,
        _dir: dir,
    }
}

impl Daemon {
    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.process.pid()
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Polls `/readyz` every 20 ms until it answers 200; returns the time
    /// since spawn.
    ///
    /// # Panics
    /// If GRW exits or is not ready within `timeout`, with its last log lines.
    pub fn wait_ready(&mut self, timeout: Duration) -> Duration {
        loop {
            if http_status(self.addr, "/readyz") == Some(200) {
                return self.spawned.elapsed();
            }
            assert!(
                !self.process.exited(),
                "grw exited before it was ready; its last log lines:\n{}",
                self.log_tail(20)
            );
            assert!(
                self.spawned.elapsed() < timeout,
                "grw not ready after {timeout:?}; its last log lines:\n{}",
                self.log_tail(20)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// When (since spawn) the first log line with this `message`, whose
    /// fields all equal those of `fields`, arrived.
    pub fn logged_at(&self, message: &str, fields: &[(&str, &str)]) -> Option<Duration> {
        let logs = self.logs.lock();
        logs.iter().find_map(|(at, line)| {
            let event: Value = serde_json::from_str(line).ok()?;
            (event["message"] == message && fields.iter().all(|(k, v)| event[*k] == *v))
                .then_some(*at)
        })
    }

    fn log_tail(&self, lines: usize) -> String {
        let logs = self.logs.lock();
        let start = logs.len().saturating_sub(lines);
        logs[start..]
            .iter()
            .map(|(_, l)| l.as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// `GRW_BIN`, else this workspace's release `grw`.
pub fn grw_binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("GRW_BIN") {
        return PathBuf::from(bin);
    }
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let target =
        std::env::var("CARGO_TARGET_DIR").map_or_else(|_| workspace.join("target"), PathBuf::from);
    let bin = target.join("release").join("grw");
    assert!(
        bin.exists(),
        "{} does not exist: run `cargo build --release -p grw` first, or name a grw in GRW_BIN",
        bin.display()
    );
    bin
}

/// A port nobody listens on now: bound and released again.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free local port")
}

/// The status code of `GET path`, or `None` when nothing answers: one
/// connection per request, no HTTP client, so that polling costs the
/// measured daemon as little CPU as it can.
fn http_status(addr: SocketAddr, path: &str) -> Option<u16> {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(1)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut head = [0u8; 12];
    stream.read_exact(&mut head).ok()?;
    // "HTTP/1.1 200"
    std::str::from_utf8(&head[9..12]).ok()?.parse().ok()
}

/// `GET url` with curl: the body, or the reason it failed.
pub fn curl(url: &str) -> Result<Vec<u8>, String> {
    let output = Command::new("curl")
        .args(["-sS", "--fail", "--max-time", "600", url])
        .output()
        .map_err(|e| format!("running curl: {e}"))?;
    if !output.status.success() {
        return Err(String::from_utf8_lossy(&output.stderr).trim().to_string());
    }
    Ok(output.stdout)
}

/// Seconds and bytes of one `GET url` read to the end by curl, whose
/// body goes to `/dev/null`.
pub fn timed_download(url: &str) -> (f64, u64) {
    let output = Command::new("curl")
        .args([
            "-sS",
            "--fail",
            "-o",
            "/dev/null",
            "-w",
            "%{time_total} %{size_download}",
            url,
        ])
        .output()
        .expect("running curl (Debian: apt-get install curl)");
    assert!(
        output.status.success(),
        "GET {url}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8_lossy(&output.stdout);
    let mut fields = text.split_whitespace();
    let seconds = fields.next().and_then(|s| s.parse().ok());
    let bytes = fields.next().and_then(|s| s.parse().ok());
    seconds
        .zip(bytes)
        .unwrap_or_else(|| panic!("curl printed {text:?}, not `seconds bytes`"))
}

/// Resident memory of a process: `VmRSS` of `/proc/PID/status`, in bytes.
pub fn rss_bytes(pid: u32) -> u64 {
    status_bytes(pid, "VmRSS")
}

/// The most resident memory a process has held so far (`VmHWM`), in bytes.
pub fn peak_rss_bytes(pid: u32) -> u64 {
    status_bytes(pid, "VmHWM")
}

/// A `kB` field of `/proc/<pid>/status`, in bytes.
fn status_bytes(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_else(|e| panic!("reading /proc/{pid}/status: {e}"));
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or_else(|| panic!("{field} in kB in /proc/{pid}/status"))
}

/// Waits until the daemon is done with what it does once ready (the
/// relations engine analysing the first list takes the other core for a
/// few seconds with 10,000 Pods): until it used less than 5% of a core
/// over half a second, for at most a minute. How long that took.
pub fn wait_settled(pid: u32) -> Duration {
    const WINDOW: Duration = Duration::from_millis(500);
    let started = Instant::now();
    loop {
        let before = cpu_seconds(pid);
        std::thread::sleep(WINDOW);
        let used = cpu_seconds(pid) - before;
        if used < 0.05 * WINDOW.as_secs_f64() || started.elapsed() > Duration::from_secs(60) {
            return started.elapsed();
        }
    }
}

/// CPU time a process used so far (user and system), in seconds.
pub fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .unwrap_or_else(|e| panic!("reading /proc/{pid}/stat: {e}"));
    stat_cpu_seconds(&stat)
}

/// CPU seconds (user and system) the threads of process `pid` named
/// `name` (as `/proc/<pid>/task/<tid>/comm` says) used so far.
pub fn thread_cpu_seconds(pid: u32, name: &str) -> f64 {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return 0.0;
    };
    tasks
        .flatten()
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm")).is_ok_and(|comm| comm.trim() == name)
        })
        .filter_map(|task| std::fs::read_to_string(task.path().join("stat")).ok())
        .map(|stat| stat_cpu_seconds(&stat))
        .sum()
}

/// The user and system time a `/proc/.../stat` line says, in seconds.
fn stat_cpu_seconds(stat: &str) -> f64 {
    // The command name (field 2) may hold spaces; fields after its `)`
    // start at field 3, so utime and stime (14 and 15) are the 12th and 13th.
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: u64 = after_name
        .split_whitespace()
        .skip(11)
        .take(2)
        .filter_map(|t| t.parse::<u64>().ok())
        .sum();
    // SAFETY: sysconf reads a constant of the system and has no preconditions.
    let per_second = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1);
    ticks as f64 / per_second as f64
}
