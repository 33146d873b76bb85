//! The web console in headless Chromium against the release daemon and the
//! fake API server with 10,000 Pods (`cargo bench -p grw-e2e --bench
//! console`; `GRW_BENCH_PODS` and `GRW_BENCH_RUNS` change the setting):
//!
//! - time to first render of the overview (navigation to its watches table
//!   drawn), and what it transfers (the console's code, gzipped, and the
//!   API's answers);
//! - time to first render of the relationship graph of the workload
//!   Deployment at depth 1 and 2 (the second reaches some 500 objects);
//! - the table of every Pod: its first rows, then scrolled to the end a
//!   screen a frame, reading 500 rows at a time: how long, and the time of
//!   each frame.
//!
//! It needs `host/console/node_modules` (tests/setup.sh) and Chromium.

#[path = "../../host/benches/common/mod.rs"]
mod common;
#[path = "daemon/procs.rs"]
#[allow(
    dead_code,
    reason = "shared with the daemon benchmark, which uses all of it"
)]
mod procs;

use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{cpu_model, env_number};
use procs::{grw_binary, rss_bytes, start_fake_with_pods, start_grw_with};
use serde_json::{Value, json};

fn median(values: &Value) -> f64 {
    let mut v: Vec<f64> = values
        .as_array()
        .expect("a list of figures")
        .iter()
        .filter_map(Value::as_f64)
        .collect();
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

fn main() {
    let pods = env_number("GRW_BENCH_PODS", 10_000) as usize;
    let runs = env_number("GRW_BENCH_RUNS", 5) as usize;
    let grw = grw_binary();
    let fake = PathBuf::from(env!("CARGO_BIN_EXE_fake-apiserver"));
    println!(
        "# The web console\n\n{}, {} logical CPUs; grw {}; {}; {pods} Pods, {runs} runs each, medians",
        cpu_model(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        grw.display(),
        grw::time::rfc3339(SystemTime::now().duration_since(UNIX_EPOCH).unwrap())
    );
    let (_fake, url, mut commands) = start_fake_with_pods(&fake, pods);
    let workload = commands.send("workload");
    let mut parts = workload.split_whitespace();
    let (namespace, name) = (
        parts.next().expect("a namespace").to_string(),
        parts.next().expect("a name").to_string(),
    );
    let mut daemon = start_grw_with(
        &grw,
        &url,
        json!({"initialWatchingResources": [
            {"group": "", "version": "v1", "kind": "Pod"},
            {"group": "apps", "version": "v1", "kind": "ReplicaSet"},
            {"group": "apps", "version": "v1", "kind": "Deployment"},
        ]}),
    );
    daemon.wait_ready(Duration::from_secs(300));
    // The analyzers' first pass over every Pod.
    std::thread::sleep(Duration::from_secs(10));
    let graphs = [1, 2]
        .map(|depth| format!("kind=deployments&namespace={namespace}&name={name}&depth={depth}"));
    let console = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../host/console");
    let output = Command::new("node")
        .arg("test/bench.mjs")
        .arg(daemon.url())
        .arg(runs.to_string())
        .args(&graphs)
        .current_dir(&console)
        .output()
        .expect("node runs");
    assert!(
        output.status.success(),
        "the browser benchmark failed:\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let figures: Value = serde_json::from_slice(&output.stdout).expect("the figures, as JSON");
    let kib = |v: &Value| median(v) / 1024.0;
    println!(
        "\n| what | median |\n|---|---:|\n\
         | overview: navigation to its watches drawn | {:.0} ms |\n\
         | the console's code, as sent (gzip) | {:.1} KiB |\n\
         | the overview's API answers | {:.1} KiB |",
        median(&figures["overviewMs"]),
        kib(&figures["transferredAssets"]),
        kib(&figures["transferredOverviewApi"]),
    );
    for graph in &graphs {
        let g = &figures["graphs"][graph];
        println!(
            "| graph `{graph}` ({} objects, {} edges): navigation to drawn | {:.0} ms |",
            g["nodes"],
            g["edges"],
            median(&g["ms"])
        );
    }
    println!(
        "| table of {pods} Pods: navigation to its first rows | {:.0} ms |\n\
         | scrolled to its end, a screen a frame, 500 rows read at a time | {:.0} ms |\n\
         | a frame while scrolling: p50 / p99 / longest | {:.1} / {:.1} / {:.1} ms |",
        median(&figures["tableLoadMs"]),
        median(&figures["tableScrollMs"]),
        median(&figures["frameP50Ms"]),
        median(&figures["frameP99Ms"]),
        median(&figures["frameMaxMs"]),
    );
    println!(
        "\nLast row reached: {}; GRW's resident memory after: {} MiB",
        figures["tableRows"],
        rss_bytes(daemon.pid()) / (1 << 20)
    );
}
