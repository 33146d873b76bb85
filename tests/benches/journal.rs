//! The journal in the running daemon: what it costs to sync with it on,
//! the bytes it keeps per change, and how it holds up under a steady stream
//! of changes while timelines and `asOf` are asked.
//!
//! Run:
//!
//! ```text
//! cargo build --release -p grw
//! cargo bench -p grw-e2e --bench journal                 # every part
//! cargo bench -p grw-e2e --bench journal -- ingest       # one part: ingest, bytes, churn
//! ```
//!
//! - `GRW_BIN` names the daemon (default: this workspace's release `grw`).
//! - `GRW_BENCH_SIZES` (default `10000,100000`): the Pod counts of the
//!   ingest part.
//! - `GRW_BENCH_CHURN_SECONDS` (default 600) and `GRW_BENCH_RATE` (default
//!   200 changes a second): the churn part.
//!
//! The fake API server runs as a process of its own (`fake-apiserver
//! --pods N`), with the Pods of the daemon benchmark (`grw_e2e::pods`,
//! ~6.8 KB of JSON each with managedFields). It makes the changes itself
//! on command (`grw_e2e::churn`): kubelet status updates (a container
//! restarted: restart count, last and current state, two conditions),
//! label changes by `kubectl-label`, and `events.k8s.io/v1` Events about
//! Pods. GRW watches v1 Pods (and, for the journal, Events), with the
//! built-in analyzers, as a user gets it.
//!
//! - **ingest**: for each size, GRW with the journal off, on in memory (no
//!   `dataDir`) and on disk (`dataDir`): time from spawn to `/readyz`, CPU
//!   seconds to then, resident memory then; the time and CPU until the
//!   journal holds the first list of every Pod (`/api/v1/journal`
//!   `counts.written`); then, once the daemon has settled (under 5% of a
//!   core over half a second: the relations engine analyses the first
//!   list after ready, for tens of seconds with 100,000 Pods), the CPU it
//!   uses over 30 s of status updates at the churn rate (steady CPU).
//! - **bytes**: 10,000 Pods, journal on disk; 2,000 changes of each sort,
//!   paced at the churn rate. The journal's own count of the bytes it
//!   holds per kind (compressed entries, their index rows, bases), and the
//!   growth of `journal.redb`, each divided by the changes, against the
//!   mean compact JSON of the object (as served, with managedFields).
//! - **churn**: 10,000 Pods and a Deployment owning 50 of them through a
//!   ReplicaSet, journal on disk; status updates at the rate for the
//!   duration. Every 10 s, GRW's `VmRSS`; every 60 s, the writer's lag
//!   over its last 10,000 entries (p50, p99, longest). Meanwhile one
//!   client asks, one request at a time, 5 a second each, the
//!   Deployment's `timeline?depth=2&since=1h` and one of its Pods'
//!   `objects/...?asOf=` a random time of the last minute.

#[path = "../../host/benches/common/mod.rs"]
mod common;
#[path = "daemon/procs.rs"]
#[allow(
    dead_code,
    reason = "shared with the daemon benchmark, which uses all of it"
)]
mod procs;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{Args, cpu_model, env_number, grouped};
use grw_e2e::pods::{PodFactory, compact_len};
use procs::{
    Daemon, FakeCommands, cpu_seconds, grw_binary, rss_bytes, start_fake_with_pods, start_grw_with,
    thread_cpu_seconds, wait_settled,
};
use serde_json::{Value, json};

const READY_TIMEOUT: Duration = Duration::from_secs(300);
/// Changes of each sort the bytes part makes.
const MEASURED_CHANGES: u64 = 2_000;
/// How often the churn sends a command to the fake.
const TICK: Duration = Duration::from_millis(100);

fn main() {
    let args = Args::from_env();
    let grw = grw_binary();
    let fake = PathBuf::from(env!("CARGO_BIN_EXE_fake-apiserver"));
    let rate: u64 = env_number("GRW_BENCH_RATE", 200);
    println!(
        "# The journal in the daemon\n\n{}, {} logical CPUs; grw {}; {}",
        cpu_model(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        grw.display(),
        grw::time::rfc3339(SystemTime::now().duration_since(UNIX_EPOCH).unwrap())
    );
    if args.wants("ingest") {
        let sizes: Vec<usize> = std::env::var("GRW_BENCH_SIZES")
            .unwrap_or_else(|_| "10000,100000".into())
            .split(',')
            .map(|s| s.trim().parse().expect("GRW_BENCH_SIZES: Pod counts"))
            .collect();
        ingest(&fake, &grw, &sizes, rate);
    }
    if args.wants("bytes") {
        bytes(&fake, &grw, rate);
    }
    if args.wants("churn") {
        let seconds = env_number("GRW_BENCH_CHURN_SECONDS", 600);
        churn(&fake, &grw, rate, Duration::from_secs(seconds));
    }
}

/// How the journal is set up.
#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Off,
    Memory,
    Disk,
}

impl Mode {
    fn name(self) -> &'static str {
        match self {
            Mode::Off => "off",
            Mode::Memory => "in memory",
            Mode::Disk => "on disk",
        }
    }
}

/// GRW watching v1 Pods against `api_url`, its journal as `mode` says
/// (on disk under `data`).
fn start(grw: &Path, api_url: &str, mode: Mode, data: &Path) -> Daemon {
    let mut config = json!({
        "initialWatchingResources": [{"group": "", "version": "v1", "kind": "Pod"}],
        "journal": {"enabled": mode != Mode::Off},
    });
    if mode == Mode::Disk {
        config["dataDir"] = json!(data);
    }
    start_grw_with(grw, api_url, config)
}

/// `GET` of `path` on GRW, as JSON.
fn get(daemon: &Daemon, path: &str) -> Value {
    let body = procs::curl(&format!("{}{path}", daemon.url()))
        .unwrap_or_else(|e| panic!("GET {path}: {e}"));
    serde_json::from_slice(&body).unwrap_or_else(|e| panic!("GET {path}: {e}"))
}

/// The journal's status.
fn journal(daemon: &Daemon) -> Value {
    get(daemon, "/api/v1/journal")
}

/// Bytes the journal holds for `kind` (`/Pod`, `events.k8s.io/Event`).
fn kind_bytes(status: &Value, kind: &str) -> u64 {
    status["kinds"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|k| k["kind"] == kind)
        .and_then(|k| k["bytes"].as_u64())
        .unwrap_or(0)
}

/// Waits until the journal has written at least `entries` since the start;
/// how long that took.
fn written(daemon: &Daemon, entries: u64, timeout: Duration) -> Duration {
    let started = Instant::now();
    loop {
        let count = journal(daemon)["counts"]["written"].as_u64().unwrap_or(0);
        if count >= entries {
            return started.elapsed();
        }
        assert!(
            started.elapsed() < timeout,
            "the journal wrote {count} of {entries} entries in {timeout:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Sends `command COUNT` to the fake at `rate` changes a second, for
/// `total` changes (`None`: until `stop`).
fn paced(fake: &mut FakeCommands, command: &str, rate: u64, total: Option<u64>, stop: &AtomicBool) {
    let per_tick = (rate * TICK.as_millis() as u64 / 1000).max(1);
    let started = Instant::now();
    let mut sent = 0u64;
    while total.is_none_or(|t| sent < t) && !stop.load(Ordering::Relaxed) {
        let count = total.map_or(per_tick, |t| per_tick.min(t - sent));
        let answer = fake.send(&format!("{command} {count}"));
        assert_eq!(answer, "done", "fake-apiserver: {command} {count}");
        sent += count;
        let due = started + TICK * (sent / per_tick) as u32;
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
    }
}

fn ingest(fake_bin: &Path, grw: &Path, sizes: &[usize], rate: u64) {
    println!("\n## Sync with the journal off, in memory and on disk\n");
    println!(
        "| Pods | journal | ready s | CPU s to ready | RSS MiB at ready | journal caught up s (CPU s) | RSS MiB then | journal file MiB then | steady CPU % at {rate}/s | of which the journal's writer % |"
    );
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for &pods in sizes {
        let (_fake, url, mut commands) = start_fake_with_pods(fake_bin, pods);
        for mode in [Mode::Off, Mode::Memory, Mode::Disk] {
            let data = tempfile::tempdir().expect("a temporary directory");
            let mut daemon = start(grw, &url, mode, data.path());
            let ready = daemon.wait_ready(READY_TIMEOUT);
            let pid = daemon.pid();
            let (cpu_ready, rss_ready) = (cpu_seconds(pid), rss_bytes(pid));
            let caught_up = (mode != Mode::Off).then(|| {
                let took = written(&daemon, pods as u64, READY_TIMEOUT);
                (
                    ready + took,
                    cpu_seconds(pid),
                    rss_bytes(pid) as f64 / 1048576.0,
                    journal(&daemon)["fileBytes"].as_f64().unwrap_or(0.0) / 1048576.0,
                )
            });
            wait_settled(pid);
            let stop = AtomicBool::new(false);
            let cpu_before = cpu_seconds(pid);
            let writer_before = thread_cpu_seconds(pid, "grw-journal");
            let steady_started = Instant::now();
            paced(&mut commands, "pod-status", rate, Some(rate * 30), &stop);
            let elapsed = steady_started.elapsed().as_secs_f64();
            let steady = (cpu_seconds(pid) - cpu_before) / elapsed;
            let writer = match mode {
                Mode::Off => "–".to_string(),
                _ => format!(
                    "{:.1}",
                    (thread_cpu_seconds(pid, "grw-journal") - writer_before) / elapsed * 100.0
                ),
            };
            let (caught, rss_then, file_then) = match caught_up {
                Some((at, cpu, rss, file)) => (
                    format!("{:.2} ({cpu:.2})", at.as_secs_f64()),
                    format!("{rss:.0}"),
                    format!("{file:.0}"),
                ),
                None => ("–".into(), "–".into(), "–".into()),
            };
            println!(
                "| {} | {} | {:.2} | {cpu_ready:.2} | {:.0} | {caught} | {rss_then} | {file_then} | {:.1} | {writer} |",
                grouped(pods as f64),
                mode.name(),
                ready.as_secs_f64(),
                rss_ready as f64 / 1048576.0,
                steady * 100.0
            );
        }
    }
}

fn bytes(fake_bin: &Path, grw: &Path, rate: u64) {
    const PODS: usize = 10_000;
    let (_fake, url, mut commands) = start_fake_with_pods(fake_bin, PODS);
    let data = tempfile::tempdir().expect("a temporary directory");
    let mut daemon = start(grw, &url, Mode::Disk, data.path());
    daemon.wait_ready(READY_TIMEOUT);
    written(&daemon, PODS as u64, READY_TIMEOUT);
    let file = data.path().join("journal.redb");
    let file_size = || std::fs::metadata(&file).map_or(0, |m| m.len());
    let factory = PodFactory::load();
    let pod_json = (0..PODS)
        .map(|i| compact_len(&factory.pod(i)))
        .sum::<usize>() as f64
        / PODS as f64;
    // The sorts of change, the kind their entries are counted under, and
    // the mean JSON of what changed.
    println!(
        "\n## Bytes per change, {} Pods, journal on disk\n",
        grouped(PODS as f64)
    );
    println!(
        "| change | entries | journal bytes/change | × the object's JSON | file growth bytes/change | object JSON bytes |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    let stop = AtomicBool::new(false);
    for (command, kind, what) in [
        ("pod-status", "/Pod", "Pod status update (kubelet)"),
        ("pod-label", "/Pod", "Pod label change (kubectl label)"),
        ("events", "events.k8s.io/Event", "Event (new, about a Pod)"),
    ] {
        let before = journal(&daemon);
        let (entries_before, bytes_before, file_before) = (
            before["counts"]["written"].as_u64().unwrap_or(0),
            kind_bytes(&before, kind),
            file_size(),
        );
        paced(&mut commands, command, rate, Some(MEASURED_CHANGES), &stop);
        written(&daemon, entries_before + MEASURED_CHANGES, READY_TIMEOUT);
        let after = journal(&daemon);
        let per_change = (kind_bytes(&after, kind) - bytes_before) as f64 / MEASURED_CHANGES as f64;
        let file_per_change =
            file_size().saturating_sub(file_before) as f64 / MEASURED_CHANGES as f64;
        let object_json = if kind == "/Pod" {
            pod_json
        } else {
            event_json(&daemon)
        };
        println!(
            "| {what} | {} | {} | {:.3} | {} | {} |",
            grouped(MEASURED_CHANGES as f64),
            grouped(per_change),
            per_change / object_json,
            grouped(file_per_change),
            grouped(object_json)
        );
    }
    println!(
        "\njournal.redb: {} bytes for {} entries; the journal counts {} bytes",
        grouped(file_size() as f64),
        grouped(
            journal(&daemon)["counts"]["written"]
                .as_f64()
                .unwrap_or(0.0)
        ),
        grouped(journal(&daemon)["counts"]["bytes"].as_f64().unwrap_or(0.0)),
    );
}

/// The mean compact JSON of the Events GRW holds.
fn event_json(daemon: &Daemon) -> f64 {
    let list = get(daemon, "/api/v1/objects/events.events.k8s.io?limit=500");
    let items = list["items"].as_array().cloned().unwrap_or_default();
    items
        .iter()
        .map(|e| e.to_string().len() as f64)
        .sum::<f64>()
        / items.len().max(1) as f64
}

fn churn(fake_bin: &Path, grw: &Path, rate: u64, duration: Duration) {
    const PODS: usize = 10_000;
    let (_fake, url, mut commands) = start_fake_with_pods(fake_bin, PODS);
    let workload = commands.send("workload");
    let mut parts = workload.split_whitespace();
    let (namespace, name, owned) = (
        parts.next().expect("a namespace").to_string(),
        parts.next().expect("a name").to_string(),
        parts.next().expect("a Pod count").to_string(),
    );
    let data = tempfile::tempdir().expect("a temporary directory");
    let mut daemon = start(grw, &url, Mode::Disk, data.path());
    daemon.wait_ready(READY_TIMEOUT);
    written(&daemon, PODS as u64, READY_TIMEOUT);
    // One of the Deployment's Pods, for `asOf`.
    let pod = get(
        &daemon,
        &format!("/api/v1/namespaces/{namespace}/objects/pods?labelSelector=app={name}&limit=1"),
    )["items"][0]["metadata"]["name"]
        .as_str()
        .expect("a Pod of the Deployment")
        .to_string();
    let timeline =
        format!("/api/v1/namespaces/{namespace}/timeline/deployments/{name}?depth=2&since=1h");
    let first = get(&daemon, &timeline);
    println!(
        "\n## {} s of {rate} status updates a second, {} Pods, journal on disk\n\nDeployment {namespace}/{name} owns {owned} Pods; its timeline at depth 2 reaches {} objects.\n",
        duration.as_secs(),
        grouped(PODS as f64),
        first["related"].as_array().map_or(0, Vec::len)
    );

    let stop = Arc::new(AtomicBool::new(false));
    let changes = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            paced(&mut commands, "pod-status", rate, None, &stop);
            commands
        })
    };
    let readers = {
        let stop = stop.clone();
        let url = daemon.url();
        let pod_path = format!("/api/v1/namespaces/{namespace}/objects/pods/{pod}");
        std::thread::spawn(move || read_while(&url, &timeline, &pod_path, &stop))
    };
    let started = Instant::now();
    let pid = daemon.pid();
    let mut rss = Vec::new();
    let mut lags = Vec::new();
    let file = data.path().join("journal.redb");
    println!(
        "| minute | RSS MiB (min–max) | write lag ms p50 / p99 / longest (last 10,000) | journal MB counted | journal.redb MB |"
    );
    println!("|---:|---:|---:|---:|---:|");
    let mut minute_rss = Vec::new();
    while started.elapsed() < duration {
        std::thread::sleep(Duration::from_secs(10));
        let now = rss_bytes(pid) as f64 / 1048576.0;
        rss.push(now);
        minute_rss.push(now);
        if minute_rss.len() == 6 || started.elapsed() >= duration {
            let status = journal(&daemon);
            let lag = status["writeLag"].clone();
            lags.push(lag["p99Ms"].as_f64().unwrap_or(f64::NAN));
            let (low, high) = minute_rss
                .iter()
                .fold((f64::MAX, 0f64), |(l, h), r| (l.min(*r), h.max(*r)));
            println!(
                "| {} | {low:.0}–{high:.0} | {:.1} / {:.1} / {:.1} | {:.1} | {:.1} |",
                (started.elapsed().as_secs() + 30) / 60,
                lag["p50Ms"].as_f64().unwrap_or(f64::NAN),
                lag["p99Ms"].as_f64().unwrap_or(f64::NAN),
                lag["maxMs"].as_f64().unwrap_or(f64::NAN),
                status["counts"]["bytes"].as_f64().unwrap_or(0.0) / 1e6,
                std::fs::metadata(&file).map_or(0.0, |m| m.len() as f64 / 1e6)
            );
            minute_rss.clear();
        }
    }
    stop.store(true, Ordering::Relaxed);
    let _commands = changes.join().expect("the change thread");
    let (timelines, as_ofs) = readers.join().expect("the reading thread");
    let sorted = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v
    };
    let (timelines, as_ofs) = (sorted(timelines), sorted(as_ofs));
    let q = shared_percentile;
    println!(
        "\nRSS first/last sample: {:.0} / {:.0} MiB; the highest per-minute write-lag p99: {:.1} ms",
        rss.first().copied().unwrap_or(0.0),
        rss.last().copied().unwrap_or(0.0),
        lags.iter().copied().fold(0f64, f64::max)
    );
    println!(
        "timeline depth=2 since=1h: {} requests, p50 {:.1} ms, p99 {:.1} ms; asOf: {} requests, p50 {:.2} ms, p99 {:.2} ms",
        timelines.len(),
        q(&timelines, 0.5),
        q(&timelines, 0.99),
        as_ofs.len(),
        q(&as_ofs, 0.5),
        q(&as_ofs, 0.99)
    );
}

/// The `p` quantile of `sorted` (ascending); NaN when it is empty.
fn shared_percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Asks the timeline and an `asOf` in turn, 5 a second each, until `stop`;
/// their latencies in milliseconds.
fn read_while(url: &str, timeline: &str, pod: &str, stop: &AtomicBool) -> (Vec<f64>, Vec<f64>) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let client = reqwest::Client::new();
        let mut timelines = Vec::new();
        let mut as_ofs = Vec::new();
        let mut rng = grw_e2e::pods::Rng::new(7);
        let started = Instant::now();
        let ask = |path: String| {
            let request = client.get(format!("{url}{path}"));
            async move {
                let started = Instant::now();
                let response = request.send().await.expect("GRW answers");
                let status = response.status();
                let body = response.bytes().await.expect("a body");
                assert!(
                    status.is_success(),
                    "{path}: {status} {}",
                    String::from_utf8_lossy(&body)
                );
                started.elapsed().as_secs_f64() * 1000.0
            }
        };
        while !stop.load(Ordering::Relaxed) {
            timelines.push(ask(timeline.to_string()).await);
            let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap();
            // A time since the reads began (the journal has it all).
            let reach = (started.elapsed().as_millis() as usize).clamp(1, 60_000);
            let back = Duration::from_millis(rng.below(reach) as u64);
            let at = grw::time::rfc3339_millis(now - back);
            as_ofs.push(ask(format!("{pod}?asOf={at}")).await);
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        (timelines, as_ofs)
    })
}
