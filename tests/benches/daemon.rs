//! GRW as it runs, at 10,000, 100,000 and (on request) 1,000,000 Pods: how
//! long the daemon takes to be ready, the memory it holds per Pod, and how
//! fast it answers exact GETs and 1% label lists. It syncs from the test
//! suite's fake API server running as a process of its own
//! (`fake-apiserver`), loaded with the Pods of the cache benchmark
//! (`grw_e2e::pods`: real Pods of the recording, ~6.8 KB of JSON each with
//! managedFields).
//!
//! Run:
//!
//! ```text
//! cargo build --release -p grw
//! cargo bench -p grw-e2e --bench daemon
//! ```
//!
//! - `GRW_BIN` names the daemon; by default the release `grw` of this
//!   workspace, which this benchmark does not build: build it first, as
//!   above, so the figures are of the code you meant.
//! - `GRW_BENCH_SIZES`: comma-separated Pod counts, default `10000,100000`.
//!   At 100,000 the fake API server holds ~1.1 GiB and GRW ~0.8 GiB, so
//!   `1000000` needs ~11 and ~8 GiB: most of a 24 GiB machine.
//! - `GRW_BENCH_STREAMING_LIST=false` syncs GRW by LIST pages
//!   (`streamingList: false`) instead of the streaming list, to compare.
//! - `GRW_BENCH_LIST_PACE=N` has the fake hand out lists (the raw list and
//!   GRW's sync alike) no faster than N Pods a second, as a real API server
//!   does: kube-apiserver v1.32 on 2 cores handed 10,000 Pods to curl at
//!   about 7,300 a second, where the fake copies bytes it keeps made at
//!   some 300,000 a second. Unset, it serves as fast as it can.
//! - `wrk` (`/usr/bin/wrk`; Debian: `apt-get install wrk`) and `curl` make
//!   the requests; without `wrk`, or with `GRW_BENCH_WRK=false` (memory and
//!   sync alone), the throughput columns stay empty.
//!
//! For each size: the fake starts with N Pods; its unpaged list
//! (`GET /api/v1/pods`, read to the end by curl: the wire's floor) is timed
//! 3 times, the median reported. GRW starts with a config watching v1 Pods,
//! everything else at its default, the built-in relationship analyzers
//! included, as a user gets it; ready time runs from spawn to `/readyz`
//! answering 200 (polled every 20 ms). Resident memory (`VmRSS`) is read at
//! ready: the same daemon against a fake with no Pods gives the idle
//! figure, and (RSS − idle) / N is compared with the mean size of what GRW
//! keeps of a Pod: its compact JSON without managedFields. The analyzers
//! start on the Pods as they arrive and go on after ready, so that figure
//! holds some of their work, more or less from run to run. So, first, GRW
//! runs once with `builtinAnalyzers: false` (unless
//! `GRW_BENCH_CACHE_ALONE=false`), idle and with N Pods: its RSS at ready
//! is the cache's cost alone. The daemon with the analyzers goes on: their
//! edges are counted (`/api/v1/plugins`) once the counts stay put for 2 s,
//! and `VmRSS` is read again then, the whole daemon with its relationship
//! index; what it holds above the cache alone, per edge, is the
//! analyzers' cost. The peak (`VmHWM`) is read last, after the `wrk`
//! runs. Then `wrk -t2 -c16 -d10s`
//! measures an exact GET rotating
//! over 1,000 Pods, and a list by `app=<one app>` (1% of the Pods), on the
//! native API and on the Kubernetes API (`/kube`), and the native list
//! once more from a single connection (`-t1 -c1`: its service time, without
//! the queueing of 16 connections on two cores) and from 16 connections
//! pausing between requests for 1,000 a second in all (the latency sixteen
//! polling clients see, where 16 connections that never pause measure the
//! queue in front of two saturated cores). Processes are killed between
//! sizes, and on a panic.

#[path = "../../host/benches/common/mod.rs"]
mod common;
#[path = "daemon/procs.rs"]
#[allow(dead_code, reason = "shared with the backlog benchmark")]
mod procs;
#[path = "daemon/wrk.rs"]
mod wrk;

use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{cpu_model, grouped};
use grw_e2e::pods::{APPS, PodFactory, Rng, compact_len};
use procs::{
    Daemon, cpu_seconds, curl, grw_binary, peak_rss_bytes, rss_bytes, start_fake, start_grw,
    timed_download,
};
use serde_json::Value;
use wrk::{Load, Throughput};

const DEFAULT_SIZES: &str = "10000,100000";

/// Whether GRW syncs by a streaming list (its default), or by LIST pages
/// with `GRW_BENCH_STREAMING_LIST=false`.
/// Whether each size also runs GRW without its analyzers, from
/// `GRW_BENCH_CACHE_ALONE`.
fn cache_alone() -> bool {
    std::env::var("GRW_BENCH_CACHE_ALONE").map_or(true, |v| v != "false")
}

fn streaming_list() -> bool {
    std::env::var("GRW_BENCH_STREAMING_LIST").map_or(true, |v| v != "false")
}

/// Pods a second the fake hands out lists at, from `GRW_BENCH_LIST_PACE`.
fn list_pace() -> Option<u32> {
    let text = std::env::var("GRW_BENCH_LIST_PACE").ok()?;
    Some(
        text.trim()
            .parse()
            .ok()
            .filter(|n| *n > 0)
            .unwrap_or_else(|| {
                panic!("GRW_BENCH_LIST_PACE: expected Pods a second, such as 7300; got {text:?}")
            }),
    )
}
/// Time GRW is left alone after ready before its memory is read.
const SETTLE: Duration = Duration::from_secs(5);
/// Longest wait for ready: a million Pods take minutes.
const READY_TIMEOUT: Duration = Duration::from_secs(1800);
/// Different Pods the GET runs rotate over.
const GET_TARGETS: usize = 1_000;
/// Requests a second of the 1% list's paced run: sixteen clients each
/// listing about 60 times a second.
const PACED_LISTS: u32 = 1_000;
/// The app whose Pods the 1% list selects.
const LISTED_APP: usize = 7;
/// Pods whose stripped size is averaged: the generator repeats its 100
/// apps' templates, so the mean hardly moves with the count (4,267 bytes
/// over 10,000 Pods, 4,268 over 100,000).
const SIZE_SAMPLE: usize = 100_000;
/// How long the analyzers' counts must stay put to call their work done,
/// and the longest wait for that.
const ANALYSIS_QUIET: Duration = Duration::from_secs(2);
const ANALYSIS_TIMEOUT: Duration = Duration::from_secs(1800);
const MIB: f64 = 1024.0 * 1024.0;

fn main() {
    let sizes = sizes();
    let grw = grw_binary();
    let fake = PathBuf::from(env!("CARGO_BIN_EXE_fake-apiserver"));
    let wrk = wrk::available() && std::env::var("GRW_BENCH_WRK").map_or(true, |v| v != "false");
    if wrk {
        wrk::check_parser();
    } else if !wrk::available() {
        eprintln!(
            "{} not found (Debian: apt-get install wrk): no throughput figures",
            wrk::WRK
        );
    }
    let pods = PodFactory::load();
    eprintln!("grw: {}", grw.display());

    eprintln!("idle: grw against an API server with no Pods");
    let idle = {
        let (_fake, url) = start_fake(&fake, 0, list_pace());
        let idle = |analyzers| {
            let mut daemon = start_grw(&grw, &url, streaming_list(), analyzers);
            daemon.wait_ready(READY_TIMEOUT);
            std::thread::sleep(SETTLE);
            rss_bytes(daemon.pid())
        };
        Idle {
            with_analyzers: idle(true),
            alone: cache_alone().then(|| idle(false)),
        }
    };

    let mut rows = Vec::new();
    for &n in &sizes {
        eprintln!("{n} Pods:");
        rows.push(measure(n, &pods, &fake, &grw, &idle, wrk));
    }
    report(&rows, &idle);
}

/// Pod counts from `GRW_BENCH_SIZES`.
fn sizes() -> Vec<usize> {
    let text = std::env::var("GRW_BENCH_SIZES").unwrap_or_else(|_| DEFAULT_SIZES.into());
    text.split(',')
        .map(|s| {
            s.trim()
                .parse::<usize>()
                .ok()
                .filter(|n| *n >= APPS)
                .unwrap_or_else(|| {
                    panic!(
                        "GRW_BENCH_SIZES: expected comma-separated Pod counts of at least {APPS}, \
                         such as 10000,100000; got {text:?}"
                    )
                })
        })
        .collect()
}

/// GRW's resident memory against a fake with no Pods.
struct Idle {
    with_analyzers: u64,
    /// With `builtinAnalyzers: false`, unless `GRW_BENCH_CACHE_ALONE=false`.
    alone: Option<u64>,
}

/// GRW without its analyzers (`builtinAnalyzers: false`): the cache alone.
struct Alone {
    ready_secs: f64,
    rss_at_ready: u64,
    cpu_at_ready: f64,
}

/// One size's figures.
struct Row {
    pods: usize,
    fake_load_secs: f64,
    raw_list_secs: f64,
    raw_list_bytes: u64,
    ready_secs: f64,
    rss_at_ready: u64,
    /// `VmHWM` at the end, after the `wrk` runs.
    peak_rss: u64,
    fake_rss: u64,
    cpu_at_ready: f64,
    stripped_mean: f64,
    /// Edges and analyzed objects at ready and after settling.
    analysis_at_ready: (u64, u64),
    analysis_settled: (u64, u64),
    analyzed: Analyzed,
    alone: Option<Alone>,
    /// Seconds after spawn of: API listening, Pod watch started, Pods listed.
    milestones: [Option<f64>; 3],
    native: Option<(Throughput, Throughput)>,
    kube: Option<(Throughput, Throughput)>,
    /// The native 1% list from one connection, and from 16 paced ones.
    native_lists: Option<(Throughput, Throughput)>,
}

fn measure(
    n: usize,
    pods: &PodFactory,
    fake_bin: &std::path::Path,
    grw_bin: &std::path::Path,
    idle: &Idle,
    wrk: bool,
) -> Row {
    let stripped_mean = stripped_mean(pods, n);
    let load_started = std::time::Instant::now();
    let (fake, url) = start_fake(fake_bin, n, list_pace());
    let fake_load_secs = load_started.elapsed().as_secs_f64();

    let mut lists: Vec<(f64, u64)> = (0..3)
        .map(|_| timed_download(&format!("{url}/api/v1/pods")))
        .collect();
    lists.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (raw_list_secs, raw_list_bytes) = lists[1];
    eprintln!("  raw list: {raw_list_secs:.2} s, {raw_list_bytes} bytes");

    let alone = cache_alone().then(|| {
        let mut daemon = start_grw(grw_bin, &url, streaming_list(), false);
        let ready = daemon.wait_ready(READY_TIMEOUT);
        let alone = Alone {
            ready_secs: ready.as_secs_f64(),
            rss_at_ready: rss_bytes(daemon.pid()),
            cpu_at_ready: cpu_seconds(daemon.pid()),
        };
        eprintln!(
            "  without analyzers: ready in {:.2} s, RSS {:.0} MiB",
            alone.ready_secs,
            alone.rss_at_ready as f64 / MIB
        );
        alone
    });

    let mut daemon = start_grw(grw_bin, &url, streaming_list(), true);
    let ready = daemon.wait_ready(READY_TIMEOUT);
    let rss_at_ready = rss_bytes(daemon.pid());
    let cpu_at_ready = cpu_seconds(daemon.pid());
    let analysis_at_ready = analysis(&daemon);
    eprintln!(
        "  ready in {:.2} s, RSS {:.0} MiB",
        ready.as_secs_f64(),
        rss_at_ready as f64 / MIB
    );
    std::thread::sleep(SETTLE);
    let analysis_settled = analysis(&daemon);
    let analyzed = wait_analyzed(&daemon);
    let fake_rss = rss_bytes(fake.pid());
    let secs = |d: Option<Duration>| d.map(|d| d.as_secs_f64());
    let milestones = [
        secs(daemon.logged_at("API listening", &[])),
        secs(daemon.logged_at("watch started", &[("gvk", "v1/Pod")])),
        secs(daemon.logged_at("listed", &[("gvk", "v1/Pod")])),
    ];

    let (native, kube, native_lists) = if wrk {
        let routes = Routes::new(pods, n);
        routes.check(&daemon, n);
        eprintln!("  wrk: native GET, native 1% list, Kubernetes GET, Kubernetes 1% list");
        let base = daemon.url();
        let native = (
            wrk::run(&base, &routes.native_gets, Load::Loaded),
            wrk::run(
                &base,
                std::slice::from_ref(&routes.native_list),
                Load::Loaded,
            ),
        );
        let kube = (
            wrk::run(&base, &routes.kube_gets, Load::Loaded),
            wrk::run(&base, std::slice::from_ref(&routes.kube_list), Load::Loaded),
        );
        eprintln!("  wrk: native 1% list, one connection");
        let list_alone = wrk::run(&base, std::slice::from_ref(&routes.native_list), Load::One);
        eprintln!("  wrk: native 1% list, 16 connections at {PACED_LISTS} a second");
        let list_paced = wrk::run(
            &base,
            std::slice::from_ref(&routes.native_list),
            Load::Paced(PACED_LISTS),
        );
        (Some(native), Some(kube), Some((list_alone, list_paced)))
    } else {
        (None, None, None)
    };
    let peak_rss = peak_rss_bytes(daemon.pid());
    drop(daemon);
    drop(fake);
    let row = Row {
        pods: n,
        fake_load_secs,
        raw_list_secs,
        raw_list_bytes,
        ready_secs: ready.as_secs_f64(),
        rss_at_ready,
        peak_rss,
        fake_rss,
        cpu_at_ready,
        stripped_mean,
        analysis_at_ready,
        analysis_settled,
        analyzed,
        alone,
        milestones,
        native,
        kube,
        native_lists,
    };
    eprintln!(
        "  RSS {:.0} MiB at ready, {} bytes/Pod above idle; {:.0} MiB with the analyzers' edges; peak {:.0} MiB",
        row.rss_at_ready as f64 / MIB,
        grouped(per_pod(row.rss_at_ready, idle.with_analyzers, n)),
        row.analyzed.rss as f64 / MIB,
        row.peak_rss as f64 / MIB,
    );
    row
}

/// Mean compact JSON size of the Pods without managedFields: what GRW
/// keeps by default (`keepManagedFields: false`).
fn stripped_mean(pods: &PodFactory, n: usize) -> f64 {
    let count = n.min(SIZE_SAMPLE);
    let total: usize = (0..count)
        .map(|i| {
            let mut pod = pods.pod(i);
            if let Some(meta) = pod["metadata"].as_object_mut() {
                meta.remove("managedFields");
            }
            compact_len(&pod)
        })
        .sum();
    total as f64 / count as f64
}

/// Edges and analyzed objects of every analyzer, from `/api/v1/plugins`.
fn analysis(daemon: &Daemon) -> (u64, u64) {
    let body = curl(&format!("{}/api/v1/plugins", daemon.url()))
        .unwrap_or_else(|e| panic!("GET /api/v1/plugins: {e}"));
    let status: Value = serde_json::from_slice(&body).expect("/api/v1/plugins answers JSON");
    let mut totals = (0, 0);
    sum_analysis(&status, &mut totals);
    totals
}

/// The analyzers' work done: their counts stopped moving.
struct Analyzed {
    /// Seconds after spawn of the last change of the counts; `None` if
    /// they still moved after `ANALYSIS_TIMEOUT`.
    at: Option<f64>,
    /// Edges and analyzed objects then.
    counts: (u64, u64),
    /// GRW's resident memory then.
    rss: u64,
}

/// Polls the analyzers' counts every 500 ms until they stay the same for
/// `ANALYSIS_QUIET`.
fn wait_analyzed(daemon: &Daemon) -> Analyzed {
    let mut counts = analysis(daemon);
    let mut changed = daemon.spawned.elapsed();
    loop {
        std::thread::sleep(Duration::from_millis(500));
        let now = analysis(daemon);
        let elapsed = daemon.spawned.elapsed();
        if now != counts {
            counts = now;
            changed = elapsed;
        } else if elapsed - changed >= ANALYSIS_QUIET || elapsed > ANALYSIS_TIMEOUT {
            return Analyzed {
                at: (elapsed <= ANALYSIS_TIMEOUT).then_some(changed.as_secs_f64()),
                counts,
                rss: rss_bytes(daemon.pid()),
            };
        }
    }
}

fn sum_analysis(value: &Value, totals: &mut (u64, u64)) {
    match value {
        Value::Object(map) => {
            if let Some(analysis) = map.get("analysis") {
                totals.0 += analysis["edges"].as_u64().unwrap_or(0);
                totals.1 += analysis["objects"].as_u64().unwrap_or(0);
            }
            map.values().for_each(|v| sum_analysis(v, totals));
        }
        Value::Array(items) => items.iter().for_each(|v| sum_analysis(v, totals)),
        _ => {}
    }
}

/// The paths `wrk` requests at one size.
struct Routes {
    native_gets: Vec<String>,
    native_list: String,
    kube_gets: Vec<String>,
    kube_list: String,
}

impl Routes {
    fn new(pods: &PodFactory, n: usize) -> Routes {
        let mut rng = Rng::new(0x6765_7473);
        let targets: Vec<(String, String)> = (0..GET_TARGETS)
            .map(|_| {
                let shape = pods.shape(rng.below(n));
                (shape.namespace, shape.name)
            })
            .collect();
        // Pod i belongs to app i % APPS: one app is 1% of the Pods.
        let selector = format!("app%3D{}", pods.app_name(LISTED_APP));
        Routes {
            native_gets: targets
                .iter()
                .map(|(ns, name)| format!("/api/v1/namespaces/{ns}/objects/pods/{name}"))
                .collect(),
            native_list: format!("/api/v1/objects/pods?labelSelector={selector}"),
            kube_gets: targets
                .iter()
                .map(|(ns, name)| format!("/kube/api/v1/namespaces/{ns}/pods/{name}"))
                .collect(),
            kube_list: format!("/kube/api/v1/pods?labelSelector={selector}"),
        }
    }

    /// Each kind of request once: it answers, and a list holds 1% of the Pods.
    fn check(&self, daemon: &Daemon, n: usize) {
        let base = daemon.url();
        for path in [&self.native_gets[0], &self.kube_gets[0]] {
            let body = curl(&format!("{base}{path}")).unwrap_or_else(|e| panic!("GET {path}: {e}"));
            let pod: Value = serde_json::from_slice(&body).expect("a Pod as JSON");
            assert!(pod["metadata"]["name"].is_string(), "GET {path}: {pod}");
        }
        for path in [&self.native_list, &self.kube_list] {
            let body = curl(&format!("{base}{path}")).unwrap_or_else(|e| panic!("GET {path}: {e}"));
            let list: Value = serde_json::from_slice(&body).expect("a list as JSON");
            let items = list["items"].as_array().map_or(0, Vec::len);
            let expected = n / APPS + usize::from(n % APPS > LISTED_APP);
            assert_eq!(items, expected, "GET {path} lists 1% of the Pods");
        }
    }
}

/// Resident bytes per Pod above the idle daemon's.
fn per_pod(rss: u64, idle: u64, pods: usize) -> f64 {
    (rss as f64 - idle as f64) / pods as f64
}

fn report(rows: &[Row], idle: &Idle) {
    let date = grw::time::rfc3339(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default(),
    );
    println!(
        "Machine: {}, {} logical CPUs; date {}.",
        cpu_model(),
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        date.get(..10).unwrap_or(&date)
    );
    println!(
        "GRW synced by {}.",
        if streaming_list() {
            "a streaming list"
        } else {
            "LIST pages (streamingList: false)"
        }
    );
    if let Some(pace) = list_pace() {
        println!(
            "The fake handed out lists at {pace} Pods a second at most (GRW_BENCH_LIST_PACE)."
        );
    }
    println!();
    println!(
        "| Pods | raw list s (MB) | ready s | ready / raw | idle RSS MiB | RSS MiB at ready | bytes/Pod above idle | × stripped JSON | edges | RSS MiB with edges | peak RSS MiB | GET req/s (p50 / p99 ms) | 1% list req/s (p50 / p99 ms) |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for row in rows {
        let per_pod = per_pod(row.rss_at_ready, idle.with_analyzers, row.pods);
        let (get, list) = throughput_cells(row.native.as_ref());
        println!(
            "| {} | {:.2} ({:.0}) | {:.2} | {:.1} | {:.0} | {:.0} | {} | {:.2} | {} | {:.0} | {:.0} | {get} | {list} |",
            grouped(row.pods as f64),
            row.raw_list_secs,
            row.raw_list_bytes as f64 / 1e6,
            row.ready_secs,
            row.ready_secs / row.raw_list_secs,
            idle.with_analyzers as f64 / MIB,
            row.rss_at_ready as f64 / MIB,
            grouped(per_pod),
            per_pod / row.stripped_mean,
            grouped(row.analyzed.counts.0 as f64),
            row.analyzed.rss as f64 / MIB,
            row.peak_rss as f64 / MIB,
        );
    }
    if let Some(idle_alone) = idle.alone {
        println!();
        println!(
            "The cache alone: GRW with `builtinAnalyzers: false`, at ready; and what the \
             analyzers add, per edge, once they are done (RSS with edges above the cache alone):"
        );
        println!();
        println!(
            "| Pods | ready s | ready / raw | CPU s | idle RSS MiB | RSS MiB at ready | bytes/Pod above idle | × stripped JSON | analyzers' bytes/edge |"
        );
        println!("|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
        for row in rows {
            let Some(alone) = &row.alone else { continue };
            let per_pod = per_pod(alone.rss_at_ready, idle_alone, row.pods);
            let edges = row.analyzed.counts.0;
            let per_edge = (edges > 0)
                .then(|| (row.analyzed.rss as f64 - alone.rss_at_ready as f64) / edges as f64);
            println!(
                "| {} | {:.2} | {:.1} | {:.1} | {:.0} | {:.0} | {} | {:.2} | {} |",
                grouped(row.pods as f64),
                alone.ready_secs,
                alone.ready_secs / row.raw_list_secs,
                alone.cpu_at_ready,
                idle_alone as f64 / MIB,
                alone.rss_at_ready as f64 / MIB,
                grouped(per_pod),
                per_pod / row.stripped_mean,
                per_edge.map_or("–".into(), grouped),
            );
        }
    }
    if rows.iter().any(|r| r.kube.is_some()) {
        println!();
        println!("The same two reads through the Kubernetes API (`/kube`):");
        println!();
        println!("| Pods | GET req/s (p50 / p99 ms) | 1% list req/s (p50 / p99 ms) |");
        println!("|---:|---:|---:|");
        for row in rows {
            let (get, list) = throughput_cells(row.kube.as_ref());
            println!("| {} | {get} | {list} |", grouped(row.pods as f64));
        }
        println!();
        println!(
            "The native 1% list from one connection (`wrk -t1 -c1`), one request at a time, \
             and from 16 connections each pausing between requests for {PACED_LISTS} a second in all:"
        );
        println!();
        println!(
            "| Pods | one connection: req/s (p50 / p99 ms) | 16 paced connections: req/s (p50 / p99 ms) |"
        );
        println!("|---:|---:|---:|");
        for row in rows {
            let (alone, paced) = throughput_cells(row.native_lists.as_ref());
            println!("| {} | {alone} | {paced} |", grouped(row.pods as f64));
        }
    }
    println!();
    println!("Details:");
    println!();
    for row in rows {
        let at = |m: Option<f64>| m.map_or("–".to_string(), |s| format!("{s:.2} s"));
        let errors: u64 = [row.native, row.kube]
            .iter()
            .flatten()
            .flat_map(|(a, b)| [a.errors, b.errors])
            .sum();
        println!(
            "- {} Pods: fake API server loaded in {:.1} s, RSS {:.0} MiB; mean stripped JSON {} bytes; \
             grw API listening at {}, Pod watch started at {}, Pods listed at {}, ready at {:.2} s \
             after {:.1} s of CPU, RSS {:.0} MiB at ready; analyzers: {} edges of {} objects at ready, \
             {} edges of {} objects 5 s later, final by {} with {} edges of {} objects and RSS {:.0} MiB; \
             wrk errors: {errors}",
            grouped(row.pods as f64),
            row.fake_load_secs,
            row.fake_rss as f64 / MIB,
            grouped(row.stripped_mean),
            at(row.milestones[0]),
            at(row.milestones[1]),
            at(row.milestones[2]),
            row.ready_secs,
            row.cpu_at_ready,
            row.rss_at_ready as f64 / MIB,
            grouped(row.analysis_at_ready.0 as f64),
            grouped(row.analysis_at_ready.1 as f64),
            grouped(row.analysis_settled.0 as f64),
            grouped(row.analysis_settled.1 as f64),
            at(row.analyzed.at),
            grouped(row.analyzed.counts.0 as f64),
            grouped(row.analyzed.counts.1 as f64),
            row.analyzed.rss as f64 / MIB,
        );
    }
}

/// `req/s (p50 / p99)` of two runs (a GET and a list, or a list alone and
/// paced), or dashes without wrk.
fn throughput_cells(runs: Option<&(Throughput, Throughput)>) -> (String, String) {
    let cell = |t: &Throughput| {
        format!(
            "{} ({:.2} / {:.2})",
            grouped(t.per_second),
            t.p50_ms,
            t.p99_ms
        )
    };
    match runs {
        Some((get, list)) => (cell(get), cell(list)),
        None => ("–".into(), "–".into()),
    }
}
