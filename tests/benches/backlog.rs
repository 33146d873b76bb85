//! GRW as it runs, with a subscription whose destination is down: its
//! resident memory and its outbox on disk while the backlog grows to a
//! million pending deliveries. One run per sink: a Kafka broker that is
//! down, then a webhook receiver that is down, in the same run for
//! comparison. GRW is a process of its own, as a user runs it, watching
//! the test suite's fake API server (`fake-apiserver`, a process too),
//! which makes the changes on command: 1,000 ConfigMaps of ~1 KB, changed
//! in turn.
//!
//! Run:
//!
//! ```text
//! cargo build --release -p grw
//! cargo bench -p grw-e2e --bench backlog            # kafka, then webhook
//! cargo bench -p grw-e2e --bench backlog -- kafka   # only the sinks named
//! ```
//!
//! - `GRW_BIN` names the daemon; by default the release `grw` of this
//!   workspace, which this benchmark does not build.
//! - `GRW_BENCH_BACKLOG`: pending deliveries at the last step, default
//!   1,000,000 (`--quick`: 100,000). Rows are printed at a quarter, half
//!   and all of it. A million changes leave ~1.3 GiB in the fake (it keeps
//!   every version) and ~4 GiB of outbox in a temporary directory.
//!
//! For each sink, GRW starts with a `dataDir` in a temporary directory
//! (the outbox on disk, so that deliveries outlive a restart), v1
//! ConfigMaps watched, and one subscription of every ConfigMap change in
//! `watch-event` bodies to a port nothing listens on; every other setting
//! at its default, the built-in relationship analyzers included. Once it
//! is ready and has been left alone for 5 s, its `VmRSS` is the first row.
//! Then the fake makes the changes 10,000 at a time; after each batch the
//! benchmark polls the subscription's status (`/api/v1/subscriptions`,
//! every 200 ms) until its `pending` count holds them all, so that what
//! grows is the backlog and not changes in flight. At each row: `pending`,
//! `VmRSS` (`/proc/PID/status`), the size of the files in `dataDir`, and the
//! time the step took. Last, the peak (`VmHWM`), the CPU time GRW used and
//! the subscription's failed attempts and last error.

#[path = "../../host/benches/common/mod.rs"]
mod common;
#[path = "daemon/procs.rs"]
#[allow(
    dead_code,
    reason = "shared with the daemon benchmark, which uses all of it"
)]
mod procs;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use common::{Args, cpu_model, grouped};
use procs::{
    Daemon, cpu_seconds, curl, free_port, grw_binary, peak_rss_bytes, rss_bytes,
    start_commanded_fake, start_grw_with,
};
use serde_json::{Value, json};

/// Pending deliveries at the last step, unless `GRW_BENCH_BACKLOG` says.
const DEFAULT_BACKLOG: u64 = 1_000_000;
/// Changes the fake makes at a time.
const BATCH: u64 = 10_000;
/// Time GRW is left alone after ready before its memory is read.
const SETTLE: Duration = Duration::from_secs(5);
const READY_TIMEOUT: Duration = Duration::from_secs(120);
/// Longest wait for one batch to be queued.
const QUEUE_TIMEOUT: Duration = Duration::from_secs(300);
const SUBSCRIPTION: &str = "backlog";

fn main() {
    let args = Args::from_env();
    let total = backlog(args.quick);
    let grw = grw_binary();
    let fake = PathBuf::from(env!("CARGO_BIN_EXE_fake-apiserver"));
    let date = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    println!(
        "# The daemon with a growing backlog\n\n{}, {} logical CPUs; grw {}; unix time {date}",
        cpu_model(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        grw.display()
    );
    let sinks = [
        (
            "kafka",
            "Kafka broker down",
            json!({"kafka": {
                "bootstrapServers": format!("127.0.0.1:{}", free_port()),
                "topic": "grw-down",
            }}),
        ),
        (
            "webhook",
            "webhook receiver down",
            json!({"webhook": {
                "url": format!("http://127.0.0.1:{}/", free_port()),
                "payload": "watch-event",
            }}),
        ),
    ];
    for (name, down, destination) in sinks {
        if args.wants(name) {
            measure(&fake, &grw, total, down, destination);
        }
    }
}

/// `GRW_BENCH_BACKLOG`, else the default (a tenth with `--quick`).
fn backlog(quick: bool) -> u64 {
    match std::env::var("GRW_BENCH_BACKLOG") {
        Ok(text) => text
            .trim()
            .parse()
            .ok()
            .filter(|n| *n >= 4 * BATCH)
            .unwrap_or_else(|| {
                panic!(
                    "GRW_BENCH_BACKLOG: expected a number of deliveries of at least {}, such as \
                     1000000; got {text:?}",
                    4 * BATCH
                )
            }),
        Err(_) if quick => DEFAULT_BACKLOG / 10,
        Err(_) => DEFAULT_BACKLOG,
    }
}

/// One daemon, one subscription to `destination`, the backlog grown to
/// `total`.
fn measure(fake: &Path, grw: &Path, total: u64, down: &str, destination: Value) {
    eprintln!("{down}:");
    let (_fake, url, mut commands) = start_commanded_fake(fake);
    let data = tempfile::tempdir().expect("a temporary directory");
    let mut subscription = json!({"name": SUBSCRIPTION, "kind": "ConfigMap"});
    for (key, value) in destination.as_object().into_iter().flatten() {
        subscription[key] = value.clone();
    }
    let mut daemon = start_grw_with(
        grw,
        &url,
        json!({
            "initialWatchingResources": [{"version": "v1", "kind": "ConfigMap"}],
            "dataDir": data.path(),
            "subscriptions": [subscription],
        }),
    );
    daemon.wait_ready(READY_TIMEOUT);
    std::thread::sleep(SETTLE);
    println!(
        "\n### {down}: 1,000 ConfigMaps of ~1 KB changed in turn, watch-event bodies\n\n\
         | pending deliveries | VmRSS MiB | dataDir MiB | time to queue this step s |\n\
         |---:|---:|---:|---:|\n\
         | 0 (ready, idle) | {:.1} | {:.1} | |",
        mib(rss_bytes(daemon.pid())),
        mib(dir_bytes(data.path())),
    );
    let mut queued = 0;
    for step in [total / 4, total / 2, total] {
        let started = Instant::now();
        while queued < step {
            let batch = BATCH.min(step - queued);
            commands.modify(batch);
            queued += batch;
            wait_pending(&daemon, queued);
        }
        println!(
            "| {} | {:.1} | {:.1} | {:.1} |",
            grouped(status(&daemon)["pending"].as_f64().unwrap_or(f64::NAN)),
            mib(rss_bytes(daemon.pid())),
            mib(dir_bytes(data.path())),
            started.elapsed().as_secs_f64()
        );
    }
    let status = status(&daemon);
    println!(
        "\nPeak VmHWM {:.1} MiB; CPU {:.1} s; failed attempts {}; last error: {}",
        mib(peak_rss_bytes(daemon.pid())),
        cpu_seconds(daemon.pid()),
        status["retries"],
        status["lastError"].as_str().unwrap_or_default()
    );
}

/// The subscription's status.
fn status(daemon: &Daemon) -> Value {
    let body = curl(&format!(
        "{}/api/v1/subscriptions/{SUBSCRIPTION}",
        daemon.url()
    ))
    .unwrap_or_else(|e| panic!("the subscription's status: {e}"));
    serde_json::from_slice(&body).expect("the status is JSON")
}

/// Polls the status until `pending` reaches `count`.
fn wait_pending(daemon: &Daemon, count: u64) {
    let started = Instant::now();
    loop {
        let status = status(daemon);
        if status["pending"].as_u64().unwrap_or(0) >= count {
            return;
        }
        assert!(
            started.elapsed() < QUEUE_TIMEOUT,
            "{count} deliveries not queued within {QUEUE_TIMEOUT:?}: {status}"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Bytes of the files in `dir` and below.
fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| match entry.metadata() {
            Ok(meta) if meta.is_dir() => dir_bytes(&entry.path()),
            Ok(meta) => meta.len(),
            Err(_) => 0,
        })
        .sum()
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
