//! One heavy query must not stall everyone: other callers' exact GETs and
//! the cache's freshness while four clients loop a list whose field
//! selector reads every Pod, beside the same figures without them; and
//! lists by an indexed field (`spec.nodeName`, as `kubectl describe node`
//! sends) through GRW against the API server (the test suite's fake); and
//! exact GETs while GRW relists every Pod after a `410 Gone`, 1% of them
//! changed.
//!
//! Run: `cargo bench -p grw-e2e --bench contention` (builds the release
//! `grw` first; `GRW_BIN` names another one, e.g. an older build to compare
//! with). `-- --quick` uses 20,000 Pods instead of 100,000 and shorter
//! rounds.

#[path = "../../host/benches/common/mod.rs"]
mod common;
mod shared;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{Args, grouped};
use grw_e2e::daemon::Grw;
use grw_e2e::fake_api::{FakeApiOptions, FakeApiServer};
use parking_lot::Mutex;
use serde_json::json;
use shared::{Spread, percentile, pod, release_grw_for_report};

/// 100 Pods per node, as in a cluster at its default Pod limit.
const SPREAD: Spread = Spread {
    namespaces: 100,
    apps: 100,
    nodes: 1000,
};
/// Clients looping exact GETs, as other callers do.
const GETTERS: usize = 2;
/// Clients looping the costly list.
const HEAVY: usize = 4;
/// A field no index holds, which no Pod has: every Pod is read and the
/// answer is empty, so it measures the reading alone.
const FULL_SCAN: &str = "/api/v1/pods?fieldSelector=spec.schedulerName%3Dnobody";

fn main() {
    let args = Args::from_env();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run(args));
}

async fn run(args: Args) {
    let pods = if args.quick { 20_000 } else { 100_000 };
    let round = Duration::from_secs(if args.quick { 5 } else { 15 });
    release_grw_for_report();
    let fake = FakeApiServer::start(FakeApiOptions::default()).await;
    for i in 0..pods {
        fake.create(pod(i, SPREAD)).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "bench").unwrap();
    let config = json!({
        "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": fake.url(), "tokenFilePath": token},
        "initialWatchingResources": [{"group": "", "version": "v1", "kind": "Pod"}],
        "builtinAnalyzers": false,
        "minLogLevel": "info",
    });
    let started = Instant::now();
    let grw = Grw::start_in(dir, config, &[]).await;
    grw.wait_ready(Duration::from_secs(600)).await;
    println!(
        "\n{} Pods on {} nodes; GRW ready after {:.1} s\n",
        grouped(pods as f64),
        grouped(SPREAD.nodes as f64),
        started.elapsed().as_secs_f64()
    );
    let base = format!("{}/kube", grw.url);

    println!(
        "| load | exact GETs per second ({GETTERS} clients) | GET p50 ms | GET p99 ms | GET max ms | full-scan lists answered (200 / 429 / 504) | change visible in GRW after, ms: median / max |"
    );
    println!("|---|---:|---:|---:|---:|---|---|");
    for heavy in [0, HEAVY] {
        let figures = contend(&fake, &base, pods, heavy, round).await;
        println!(
            "| {} | {} | {:.2} | {:.2} | {:.2} | {} | {:.0} / {:.0} |",
            if heavy == 0 {
                "quiet".to_string()
            } else {
                format!("{heavy} clients looping a full-scan field selector")
            },
            grouped(figures.gets_per_second),
            figures.get_ms[0],
            figures.get_ms[1],
            figures.get_ms[2],
            if heavy == 0 {
                "–".to_string()
            } else {
                format!(
                    "{} / {} / {}",
                    figures.heavy[0], figures.heavy[1], figures.heavy[2]
                )
            },
            figures.fresh_ms[0],
            figures.fresh_ms[1],
        );
    }

    let changed = pods / 100;
    let ([p50, p99, max], took) = relist(&fake, &base, pods, changed).await;
    println!(
        "\n| a relist of {} Pods, {} changed while the watch was down ({GETTERS} clients looping exact GETs) | GET p50 ms | GET p99 ms | GET max ms | API server back until the last change shows, s |",
        grouped(pods as f64),
        grouped(changed as f64)
    );
    println!("|---|---:|---:|---:|---:|");
    println!("| during the relist | {p50:.2} | {p99:.2} | {max:.2} | {took:.1} |");

    println!(
        "\n| list by `spec.nodeName` ({HEAVY} clients, {} Pods each) | lists per second |",
        pods / SPREAD.nodes
    );
    println!("|---|---:|");
    for (target, base) in [
        ("straight to the API server (the fake)", fake.url()),
        ("through GRW (indexed)", base.clone()),
    ] {
        let rate = node_lists(&base, round).await;
        println!("| {target} | {} |", grouped(rate));
    }
}

struct Figures {
    gets_per_second: f64,
    /// p50, p99, max.
    get_ms: [f64; 3],
    /// Answered 200, 429, 504.
    heavy: [u64; 3],
    /// Median, max.
    fresh_ms: [f64; 2],
}

/// `GETTERS` clients looping exact GETs and `heavy` clients looping the
/// full scan for `during`, while a Pod changes at the API server once a
/// second and the time until GRW shows it is measured.
async fn contend(
    fake: &FakeApiServer,
    base: &str,
    pods: usize,
    heavy: usize,
    during: Duration,
) -> Figures {
    let stop = Arc::new(AtomicBool::new(false));
    let answered: Arc<[AtomicU64; 3]> = Arc::new(Default::default());
    let mut heavy_tasks = Vec::new();
    for _ in 0..heavy {
        let (stop, answered, url) = (stop.clone(), answered.clone(), format!("{base}{FULL_SCAN}"));
        heavy_tasks.push(tokio::spawn(async move {
            let client = reqwest::Client::new();
            while !stop.load(Ordering::Relaxed) {
                let response = client.get(&url).send().await.unwrap();
                let slot = match response.status().as_u16() {
                    200 => 0,
                    429 => 1,
                    504 => 2,
                    other => panic!("the full scan answered {other}"),
                };
                response.bytes().await.unwrap();
                answered[slot].fetch_add(1, Ordering::Relaxed);
            }
        }));
    }
    // Let the heavy clients fill the query threads first.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let deadline = Instant::now() + during;
    let getting = Getters::start(base, pods);
    let mut fresh = Vec::new();
    let client = reqwest::Client::new();
    let mut n = 0;
    while Instant::now() + Duration::from_secs(1) < deadline {
        n += 1;
        let target = (n * 104_729) % pods;
        let mut changed = pod(target, SPREAD);
        let mark = format!("fresh-{heavy}-{n}");
        changed["metadata"]["labels"]["mark"] = json!(mark);
        let url = format!("{base}{}", pod_path(target));
        let changed_at = Instant::now();
        fake.update(changed).unwrap();
        loop {
            let body: serde_json::Value =
                client.get(&url).send().await.unwrap().json().await.unwrap();
            if body["metadata"]["labels"]["mark"] == mark.as_str() {
                break;
            }
            assert!(
                changed_at.elapsed() < Duration::from_secs(30),
                "the change did not reach GRW"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        fresh.push(changed_at.elapsed().as_secs_f64() * 1e3);
        tokio::time::sleep(Duration::from_millis(1000)).await;
    }
    tokio::time::sleep_until(deadline.into()).await;
    let mut times = getting.stop().await;
    times.sort_by(f64::total_cmp);
    stop.store(true, Ordering::Relaxed);
    for task in heavy_tasks {
        task.await.unwrap();
    }
    fresh.sort_by(f64::total_cmp);
    Figures {
        gets_per_second: times.len() as f64 / during.as_secs_f64(),
        get_ms: [
            percentile(&times, 0.5),
            percentile(&times, 0.99),
            times.last().copied().unwrap_or(f64::NAN),
        ],
        heavy: [0, 1, 2].map(|i| answered[i].load(Ordering::Relaxed)),
        fresh_ms: [
            percentile(&fresh, 0.5),
            fresh.last().copied().unwrap_or(f64::NAN),
        ],
    }
}

/// `GETTERS` clients looping exact GETs of the Pods until stopped.
struct Getters {
    stop: Arc<AtomicBool>,
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// When each GET was sent, and how long it took in ms.
    times: Arc<Mutex<Vec<(Instant, f64)>>>,
}

impl Getters {
    fn start(base: &str, pods: usize) -> Getters {
        let stop = Arc::new(AtomicBool::new(false));
        let times = Arc::new(Mutex::new(Vec::new()));
        let tasks = (0..GETTERS)
            .map(|c| {
                let (stop, times, base) = (stop.clone(), times.clone(), base.to_string());
                tokio::spawn(async move {
                    let client = reqwest::Client::new();
                    let mut i = c * 7919;
                    while !stop.load(Ordering::Relaxed) {
                        let url = format!("{base}{}", pod_path(i % pods));
                        let started = Instant::now();
                        let response = client.get(&url).send().await.unwrap();
                        assert!(response.status().is_success(), "{url}");
                        response.bytes().await.unwrap();
                        times
                            .lock()
                            .push((started, started.elapsed().as_secs_f64() * 1e3));
                        i += 1;
                    }
                })
            })
            .collect();
        Getters { stop, tasks, times }
    }

    /// Stops the clients; how long each GET took, in ms.
    async fn stop(self) -> Vec<f64> {
        self.stop_within(..).await
    }

    /// Stops the clients; how long each GET sent within `window` took.
    async fn stop_within(self, window: impl std::ops::RangeBounds<Instant>) -> Vec<f64> {
        self.stop.store(true, Ordering::Relaxed);
        for task in self.tasks {
            task.await.unwrap();
        }
        let times = self.times.lock();
        times
            .iter()
            .filter(|(sent, _)| window.contains(sent))
            .map(|(_, ms)| *ms)
            .collect()
    }
}

/// Exact GETs while GRW relists `pods` Pods of which `changed` changed
/// while its watch was down (the fake cut off, then compacted, so that
/// resuming gets `410 Gone`): the GETs' p50, p99 and max in ms from the
/// moment the API server is back until the last change is visible, and
/// that time in seconds.
async fn relist(fake: &FakeApiServer, base: &str, pods: usize, changed: usize) -> ([f64; 3], f64) {
    let getting = Getters::start(base, pods);
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        fake.cut_off(Duration::from_secs(30)).await,
        "GRW's watch stays open"
    );
    let mut last = String::new();
    for n in 0..changed {
        let target = n * (pods / changed);
        let mut pod = pod(target, SPREAD);
        pod["metadata"]["labels"]["mark"] = json!("relisted");
        fake.update(pod).unwrap();
        last = pod_path(target);
    }
    fake.compact();
    let back = Instant::now();
    fake.clear_failures();
    let client = reqwest::Client::new();
    loop {
        let body: serde_json::Value = client
            .get(format!("{base}{last}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        if body["metadata"]["labels"]["mark"] == "relisted" {
            break;
        }
        assert!(
            back.elapsed() < Duration::from_secs(300),
            "the relist did not end"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let done = Instant::now();
    let mut times = getting.stop_within(back..done).await;
    times.sort_by(f64::total_cmp);
    (
        [
            percentile(&times, 0.5),
            percentile(&times, 0.99),
            times.last().copied().unwrap_or(f64::NAN),
        ],
        (done - back).as_secs_f64(),
    )
}

/// Lists per second of `HEAVY` clients looping `spec.nodeName=node-N`.
async fn node_lists(base: &str, during: Duration) -> f64 {
    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + during;
    let mut tasks = Vec::new();
    for c in 0..HEAVY {
        let (done, base) = (done.clone(), base.to_string());
        tasks.push(tokio::spawn(async move {
            let client = reqwest::Client::new();
            let mut i = c * 7919;
            while Instant::now() < deadline {
                let url = format!(
                    "{base}/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-{}",
                    i % SPREAD.nodes
                );
                let response = client.get(&url).send().await.unwrap();
                assert!(response.status().is_success(), "{url}");
                response.bytes().await.unwrap();
                done.fetch_add(1, Ordering::Relaxed);
                i += 1;
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    done.load(Ordering::Relaxed) as f64 / during.as_secs_f64()
}

fn pod_path(i: usize) -> String {
    let pod = pod(i, SPREAD);
    format!(
        "/api/v1/namespaces/{}/pods/{}",
        pod["metadata"]["namespace"].as_str().unwrap(),
        pod["metadata"]["name"].as_str().unwrap()
    )
}
