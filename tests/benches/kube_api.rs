//! The Kubernetes API through GRW against straight to the API server (the
//! test suite's fake, which serves every request from memory), in one run:
//! get and list latency and throughput at 10,000 Pods (also through a GRW
//! checking each caller with `delegated` access, whose decisions are
//! cached), and what 100 concurrent watchers cost GRW and what the API
//! server sees of them.
//!
//! Run: `cargo bench -p grw-e2e --bench kube_api` (builds the release `grw`
//! first; `GRW_BIN` names another one). `-- --quick` uses fewer requests;
//! `-- read watch` names the parts to run.

#[path = "../../host/benches/common/mod.rs"]
mod common;
mod shared;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::{Args, grouped};
use grw_e2e::daemon::Grw;
use grw_e2e::fake_api::{FakeApiOptions, FakeApiServer, Rule, Subject};
use serde_json::{Value, json};
use shared::{percentile, pod, release_grw_for_report};

const PODS: usize = 10_000;
const NAMESPACES: usize = 50;
/// `app` label values: one selects 1% of the Pods.
const APPS: usize = 100;
const WATCHERS: usize = 100;
const SPREAD: shared::Spread = shared::Spread {
    namespaces: NAMESPACES,
    apps: APPS,
    nodes: 40,
};
const BURST: usize = 1_000;

fn main() {
    let args = Args::from_env();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(run(args));
}

async fn run(args: Args) {
    release_grw_for_report();
    let fake = FakeApiServer::start(FakeApiOptions::default()).await;
    let started = Instant::now();
    for i in 0..PODS {
        fake.create(pod(i, SPREAD)).unwrap();
    }
    let bytes: usize = fake
        .objects("v1", "Pod")
        .iter()
        .map(|p| p.to_string().len())
        .sum();
    println!(
        "\n{} Pods in {NAMESPACES} namespaces, mean JSON {} bytes, created in {:.1} s",
        grouped(PODS as f64),
        grouped((bytes / PODS) as f64),
        started.elapsed().as_secs_f64()
    );
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "bench").unwrap();
    let config = json!({
        "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": fake.url(), "tokenFilePath": token},
        "initialWatchingResources": [{"group": "", "version": "v1", "kind": "Pod"}],
        "builtinAnalyzers": false,
        "minLogLevel": "info",
    });
    let mut delegated_config = config.clone();
    let grw = Grw::start_in(dir, config, &[]).await;
    grw.wait_ready(Duration::from_secs(120)).await;
    let targets = [
        ("straight to the API server", fake.url()),
        ("through GRW", format!("{}/kube", grw.url)),
    ];
    if args.wants("read") {
        // A second GRW checks each caller with the API server (`delegated`),
        // whose answers it caches: after the first request, each one pays
        // for a cached decision only. The caller's token is as long as a
        // service account's (a JWT of about 950 bytes), since GRW hashes it.
        let caller_token = format!("bench.{}", "x".repeat(944));
        fake.add_token(&caller_token, "bench-reader", &[]);
        fake.grant(
            Subject::User("bench-reader".into()),
            Rule::cluster(&["get", "list", "watch"], "", &["pods"]),
        );
        let dir = tempfile::tempdir().unwrap();
        let token = dir.path().join("token");
        std::fs::write(&token, "bench").unwrap();
        delegated_config["k8sClientConfig"]["tokenFilePath"] = json!(token);
        delegated_config["apiAuth"] = json!("delegated");
        let delegated = Grw::start_in(dir, delegated_config, &[]).await;
        delegated.wait_ready(Duration::from_secs(120)).await;
        let readers = [
            Reader::new(targets[0].0, &targets[0].1, None),
            Reader::new(targets[1].0, &targets[1].1, None),
            Reader::new(
                "through GRW, delegated",
                &format!("{}/kube", delegated.url),
                Some(&caller_token),
            ),
        ];
        read(&readers, args.quick).await;
    }
    if args.wants("watch") {
        watch(&fake, &grw, &targets).await;
    }
}

/// Where requests go, and with which token.
struct Reader {
    name: &'static str,
    base: String,
    token: Option<String>,
}

impl Reader {
    fn new(name: &'static str, base: &str, token: Option<&str>) -> Reader {
        Reader {
            name,
            base: base.to_string(),
            token: token.map(String::from),
        }
    }

    /// A client sending the reader's token with every request.
    fn client(&self) -> reqwest::Client {
        let mut headers = reqwest::header::HeaderMap::new();
        if let Some(token) = &self.token {
            headers.insert(
                reqwest::header::AUTHORIZATION,
                format!("Bearer {token}").parse().unwrap(),
            );
        }
        reqwest::Client::builder()
            .default_headers(headers)
            .build()
            .unwrap()
    }
}

/// Latencies of `requests` sequential GETs of `path(i)`, in µs, sorted.
async fn latencies(
    client: &reqwest::Client,
    base: &str,
    requests: usize,
    path: impl Fn(usize) -> String,
) -> Vec<f64> {
    let mut times = Vec::with_capacity(requests);
    for i in 0..requests {
        let url = format!("{base}{}", path(i));
        let started = Instant::now();
        let response = client.get(&url).send().await.unwrap();
        assert!(
            response.status().is_success(),
            "{url}: {}",
            response.status()
        );
        response.bytes().await.unwrap();
        times.push(started.elapsed().as_secs_f64() * 1e6);
    }
    times.sort_by(f64::total_cmp);
    times
}

/// GETs per second of `clients` concurrent clients for `during`.
async fn throughput(
    reader: &Reader,
    clients: usize,
    during: Duration,
    path: impl Fn(usize) -> String + Send + Sync + 'static,
) -> f64 {
    let done = Arc::new(AtomicU64::new(0));
    let path = Arc::new(path);
    let deadline = Instant::now() + during;
    let mut tasks = Vec::new();
    for c in 0..clients {
        let (done, path, base) = (done.clone(), path.clone(), reader.base.clone());
        let client = reader.client();
        tasks.push(tokio::spawn(async move {
            let mut i = c * 7919;
            while Instant::now() < deadline {
                let response = client
                    .get(format!("{base}{}", path(i)))
                    .send()
                    .await
                    .unwrap();
                assert!(response.status().is_success());
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
    let i = (i * 7919) % PODS;
    let pod = pod(i, SPREAD);
    format!(
        "/api/v1/namespaces/{}/pods/{}",
        pod["metadata"]["namespace"].as_str().unwrap(),
        pod["metadata"]["name"].as_str().unwrap()
    )
}

async fn read(readers: &[Reader], quick: bool) {
    let scale = if quick { 4 } else { 1 };
    println!("\n| request | target | requests | median µs | p99 µs |");
    println!("|---|---|---:|---:|---:|");
    type Path = fn(usize) -> String;
    let cases: [(&str, usize, Path); 4] = [
        ("get one Pod", 2_000, pod_path),
        ("list a namespace (200 Pods)", 200, |i| {
            format!("/api/v1/namespaces/team-{}/pods", i % NAMESPACES)
        }),
        ("list 1% by label, all namespaces (100 Pods)", 200, |i| {
            format!("/api/v1/pods?labelSelector=app%3Dapp-{}", i % APPS)
        }),
        ("list all 10,000 Pods", 20, |_| "/api/v1/pods".to_string()),
    ];
    for (name, requests, path) in cases {
        for reader in readers {
            let client = reader.client();
            // Warm up: connections, caches.
            latencies(&client, &reader.base, 5, path).await;
            let times = latencies(&client, &reader.base, requests / scale, path).await;
            println!(
                "| {name} | {} | {} | {} | {} |",
                reader.name,
                grouped(times.len() as f64),
                grouped(percentile(&times, 0.5)),
                grouped(percentile(&times, 0.99))
            );
        }
    }
    println!("\n| request | target | concurrent clients | requests per second |");
    println!("|---|---|---:|---:|");
    for reader in readers {
        let rate = throughput(
            reader,
            16,
            Duration::from_secs(3 / scale.min(3) as u64 + 1),
            pod_path,
        )
        .await;
        println!("| get one Pod | {} | 16 | {} |", reader.name, grouped(rate));
    }
    for reader in readers {
        let rate = throughput(reader, 16, Duration::from_secs(3), |i| {
            format!("/api/v1/pods?labelSelector=app%3Dapp-{}", i % APPS)
        })
        .await;
        println!(
            "| list 1% by label | {} | 16 | {} |",
            reader.name,
            grouped(rate)
        );
    }
}

/// CPU seconds a process used so far (user + system).
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name, which is in parentheses.
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    let ticks: f64 = fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap();
    ticks / 100.0
}

fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kib: f64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0);
    kib / 1024.0
}

/// Opens `n` watches of every Pod from `rv` and returns, per watcher, a
/// task that ends when it has read `marker`.
async fn watchers(
    base: &str,
    rv: &str,
    n: usize,
    marker: &str,
) -> Vec<tokio::task::JoinHandle<usize>> {
    let mut tasks = Vec::new();
    for _ in 0..n {
        let url = format!("{base}/api/v1/pods?watch=true&resourceVersion={rv}");
        let response = reqwest::Client::new().get(url).send().await.unwrap();
        assert!(response.status().is_success());
        let marker = marker.as_bytes().to_vec();
        tasks.push(tokio::spawn(async move {
            let mut response = response;
            let mut events = 0;
            let mut tail: Vec<u8> = Vec::new();
            while let Some(chunk) = response.chunk().await.unwrap() {
                events += chunk.iter().filter(|b| **b == b'\n').count();
                tail.extend_from_slice(&chunk);
                if tail.windows(marker.len()).any(|w| w == marker.as_slice()) {
                    // The marked event is the last; its line may end in a
                    // later chunk.
                    return events + usize::from(!chunk.ends_with(b"\n"));
                }
                let keep = tail.len().saturating_sub(marker.len());
                tail.drain(..keep);
            }
            events
        }));
    }
    tasks
}

async fn watch(fake: &FakeApiServer, grw: &Grw, targets: &[(&str, String)]) {
    println!(
        "\n{WATCHERS} concurrent watchers of every Pod, then a burst of {BURST} Pod changes made at the API server as fast as it takes them:\n"
    );
    println!(
        "| target | watches the watchers add at the API server | events the API server sends for the burst | all watchers had the last change after s | GRW CPU s over the burst | GRW VmRSS MiB: before / with the watchers / after the burst |"
    );
    println!("|---|---:|---:|---:|---:|---|");
    let pid = grw.pid();
    for (round, (target, base)) in targets.iter().enumerate() {
        let (_, list) = get_json(&format!("{base}/api/v1/pods?limit=1")).await;
        let rv = list["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .to_string();
        let rss_before = rss_mib(pid);
        let before_watches = fake.open_watches();
        let sent_before = fake.watch_events_sent();
        let marker = format!("burst-{round}-last");
        let tasks = watchers(base, &rv, WATCHERS, &marker).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let added = fake.open_watches() - before_watches;
        let rss_with = rss_mib(pid);
        let cpu_before = cpu_seconds(pid);
        let started = Instant::now();
        for i in 0..BURST {
            let mut changed = pod(i * 7 % PODS, SPREAD);
            let label = if i == BURST - 1 {
                marker.clone()
            } else {
                format!("burst-{round}-{i}")
            };
            changed["metadata"]["labels"]["change"] = json!(label);
            fake.update(changed).unwrap();
        }
        let mut events = 0;
        for task in tasks {
            events += tokio::time::timeout(Duration::from_secs(120), task)
                .await
                .unwrap()
                .unwrap();
        }
        let elapsed = started.elapsed().as_secs_f64();
        let cpu = cpu_seconds(pid) - cpu_before;
        // GRW's own watch of Pods gets the burst too, in both rounds.
        let sent = fake.watch_events_sent() - sent_before;
        assert!(
            events >= WATCHERS * BURST,
            "every watcher had the burst: {events} events"
        );
        println!(
            "| {target} | {added} | {} | {elapsed:.2} | {cpu:.2} | {rss_before:.1} / {rss_with:.1} / {:.1} |",
            grouped(sent as f64),
            rss_mib(pid)
        );
    }
}

async fn get_json(url: &str) -> (u16, Value) {
    let response = reqwest::get(url).await.unwrap();
    (response.status().as_u16(), response.json().await.unwrap())
}
