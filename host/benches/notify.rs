//! Notification delivery: latency from a watch event to the webhook at a
//! steady rate, backlog drain rate, resident memory with a million pending
//! deliveries, NATS JetStream throughput, and the three network sinks side
//! by side (webhook, NATS JetStream, Kafka): change → acknowledged at a
//! steady rate, the ceiling of one subscription, and memory with a
//! million-delivery backlog while the Kafka broker is down.
//!
//! Run: `cargo bench -p grw --bench notify` (about two minutes after the
//! build, and about 4 GB of temporary disk for the million-delivery outbox).
//! `-- --quick` divides every count by 10; naming parts (`-- latency drain
//! memory nats bytes announced sinks kafka-memory`) runs only those. The
//! Kafka rows need `tansu`: tests/setup.sh installs a debug build, whose
//! latencies are several times a release build's, so name a release build
//! with `$TANSU` for figures (BENCHMARKS.md says how).
//!
//! Everything runs in this process, on a multi-thread tokio runtime: the
//! engine ([`Notifications`] with its outbox, `grw.redb`, in a temporary
//! `dataDir`, so every commit is fsynced as in production), one replay-mode
//! watch of ConfigMaps whose cache the benchmark feeds with `Cache::apply`,
//! exactly what the watch loop does for one watch event, and an axum
//! receiver on loopback answering 200. The subscription sends `watch-event`
//! bodies (`{type, object, oldObject}`). The clock starts when the change is
//! made (the send time is written into the object's `data.sent_ns` and the
//! object goes into the cache), so the API server's network hop is not in
//! the figures.

mod common;

use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::post;
use grw::config::{Config, SubscriptionConfig, WatchOptions};
use grw::gvk::{Gvk, ResourceInfo};
use grw::kube::{Catalog, Discovery};
use grw::metrics::Metrics;
use grw::notify::{Notifications, SubscriptionStatus};
use grw::plugin::Plugins;

use common::{Args, cpu_model, grouped};
use grw::store::{Cache, ChangeType, Origin, StoredObject};
use grw::watch::{WatchSettings, Watches};
use parking_lot::Mutex;
use serde_json::{Value, json};
use tempfile::TempDir;

const SUBSCRIPTION: &str = "bench";
/// Compact JSON size of each ConfigMap, about.
const OBJECT_BYTES: usize = 1_000;
/// Objects modified round-robin by the latency runs.
const LATENCY_OBJECTS: usize = 300;
/// (events per second, seconds) of the latency runs.
const RATES: [(u64, u64); 2] = [(100, 10), (5_000, 5)];
/// Objects of the backlog runs: few, so the cache stays small and what
/// grows is the queue.
const BACKLOG_OBJECTS: usize = 1_000;
const DRAIN_CHANGES: u64 = 100_000;
/// Pending deliveries at which the memory run reads the resident set.
const MEMORY_STEPS: [u64; 3] = [250_000, 500_000, 1_000_000];
/// The memory run applies changes in chunks of this many and waits for the
/// feed to queue them, so that changes waiting in the cache's tap (in
/// memory) stay few and what is measured is the outbox's backlog.
const MEMORY_CHUNK: u64 = 5_000;
const NATS_CHANGES: u64 = 20_000;
/// Changes queued by the outbox-size run, for each number of subscriptions.
const BYTES_CHANGES: u64 = 20_000;
/// Subscriptions on the same watch in the outbox-size runs.
const BYTES_SUBSCRIPTIONS: [usize; 2] = [1, 5];
/// Objects of the watch whose announced state the in-memory run measures,
/// and their size (a Pod's JSON is typically 4 to 8 KB).
const ANNOUNCED_OBJECTS: usize = 20_000;
const ANNOUNCED_OBJECT_BYTES: usize = 5_000;
const NATS_SERVER: &str = "/usr/sbin/nats-server";
/// Retry fast while the receiver is down, so the drain starts within a
/// second of the receiver coming up rather than after a long backoff.
const FAST_RETRY: &str = r#"{"initialDelayMs": 50, "maxDelaySeconds": 1}"#;

fn main() {
    let args = Args::from_env();
    let quick = args.quick;
    let wants = |part: &str| args.wants(part);
    let scale = if quick { 10 } else { 1 };

    println!(
        "machine: {}, {} logical CPUs (nproc)",
        cpu_model(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "date: {}{}",
        grw::time::rfc3339(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap_or_default()
        ),
        if quick { " (quick: counts / 10)" } else { "" }
    );
    println!(
        "ConfigMap JSON: {} bytes",
        Objects::new(1).next_object().json().len()
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        // First, so that the peak resident set (VmHWM) is its own.
        if wants("memory") {
            memory(scale).await;
        }
        // Its own process would be fairer for the peak; VmRSS is read as it goes.
        if wants("kafka-memory") {
            kafka_memory(scale).await;
        }
        if wants("latency") {
            latency(scale).await;
        }
        if wants("drain") {
            drain(scale).await;
        }
        if wants("nats") {
            nats(scale).await;
        }
        if wants("bytes") {
            bytes(scale).await;
        }
        if wants("announced") {
            announced(scale).await;
        }
        if wants("sinks") {
            sinks(scale).await;
        }
    });
}

// ---------------------------------------------------------------------------
// The four measurements

/// Paced watch events, each timed from the cache apply to its arrival.
async fn latency(scale: u64) {
    println!(
        "\n### Latency, watch event to webhook received ({LATENCY_OBJECTS} ConfigMaps of ~{OBJECT_BYTES} B modified round-robin)\n"
    );
    println!(
        "| rate/s | seconds | sent | received by the end / sent | backlog at the end | p50 ms | p99 ms | max ms |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (rate, seconds) in RATES {
        let count = rate * seconds / scale;
        let port = free_port();
        let receiver = Receiver::serve(port).await;
        let engine = Engine::start(webhook(port, None), LATENCY_OBJECTS).await;
        engine.apply(count, Some(rate)).await;
        let received_at_end = receiver.count();
        let backlog = engine.pending();
        let all_in = receiver
            .wait_for(count as usize, Duration::from_secs(120))
            .await;
        let latencies = receiver.latencies_ms();
        println!(
            "| {} | {} | {} | {:.3} | {} | {:.2} | {:.2} | {:.2} |{}",
            grouped(rate as f64),
            seconds as f64 / scale as f64,
            grouped(count as f64),
            received_at_end as f64 / count as f64,
            grouped(backlog as f64),
            percentile(&latencies, 50.0),
            percentile(&latencies, 99.0),
            latencies.last().copied().unwrap_or(f64::NAN),
            if all_in {
                String::new()
            } else {
                format!(
                    " only {} of {} arrived within 2 minutes",
                    receiver.count(),
                    count
                )
            }
        );
        receiver.stop();
    }
}

/// A backlog queued while the receiver refuses connections, then sent.
async fn drain(scale: u64) {
    let count = DRAIN_CHANGES / scale;
    let port = free_port();
    let engine = Engine::start(webhook(port, Some(FAST_RETRY)), BACKLOG_OBJECTS).await;
    let started = Instant::now();
    engine.apply(count, None).await;
    let applied = started.elapsed();
    engine.wait_pending(|p| p >= count).await;
    let queued = started.elapsed();
    let pending = engine.pending();

    let receiver = Receiver::serve(port).await;
    let up = Instant::now();
    let up_ns = now_ns();
    engine.wait_pending(|p| p == 0).await;
    let emptied = up.elapsed();
    let (first_ns, last_ns) = receiver.first_and_last();
    let drain_secs = (last_ns - first_ns) as f64 / 1e9;
    println!(
        "\n### Backlog drain (webhook; receiver refusing connections while {} changes are queued)\n",
        grouped(count as f64)
    );
    println!(
        "| changes | applied in s | queued (pending = {}) in s | queued/s | receiver up → first delivery s | first → last delivery s | deliveries/s | receiver up → pending 0 s |",
        grouped(count as f64)
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {} | {:.2} | {:.2} | {} | {:.2} | {:.2} | {} | {:.2} |",
        grouped(pending as f64),
        applied.as_secs_f64(),
        queued.as_secs_f64(),
        grouped(count as f64 / queued.as_secs_f64()),
        first_ns.saturating_sub(up_ns) as f64 / 1e9,
        drain_secs,
        grouped(receiver.count() as f64 / drain_secs),
        emptied.as_secs_f64(),
    );
    receiver.stop();
}

/// Resident memory while the backlog grows to a million deliveries.
async fn memory(scale: u64) {
    let destination = webhook(free_port(), None);
    backlog_memory(scale, destination, "receiver down").await;
}

/// Resident memory while the backlog of a subscription to `destination`,
/// which takes nothing (`down` says why), grows to a million deliveries.
async fn backlog_memory(scale: u64, destination: Value, down: &str) {
    let engine = Engine::start(destination, BACKLOG_OBJECTS).await;
    let before = ProcMemory::read();
    println!(
        "\n### Memory with a growing backlog ({down}, {} ConfigMaps of ~{OBJECT_BYTES} B, watch-event bodies with oldObject)\n",
        grouped(BACKLOG_OBJECTS as f64)
    );
    println!("| pending deliveries | VmRSS MiB | outbox file MiB | time to queue this step s |");
    println!("|---:|---:|---:|---:|");
    println!(
        "| 0 (engine started) | {:.1} | {:.1} | |",
        mib(before.rss),
        mib(engine.outbox_bytes())
    );
    let mut queued = 0;
    for target in MEMORY_STEPS.map(|s| s / scale) {
        let started = Instant::now();
        while queued < target {
            let chunk = MEMORY_CHUNK.min(target - queued);
            engine.apply(chunk, None).await;
            queued += chunk;
            engine.wait_pending(|p| p >= queued).await;
        }
        let now = ProcMemory::read();
        println!(
            "| {} | {:.1} | {:.1} | {:.1} |",
            grouped(engine.pending() as f64),
            mib(now.rss),
            mib(engine.outbox_bytes()),
            started.elapsed().as_secs_f64()
        );
    }
    let after = ProcMemory::read();
    let status = engine.status();
    println!(
        "\nVmRSS before {:.1} MiB, after {:.1} MiB; peak VmHWM {:.1} MiB; failed attempts {}, last error: {}",
        mib(before.rss),
        mib(after.rss),
        mib(after.peak),
        status.retries,
        status.last_error.unwrap_or_default()
    );
}

/// A backlog published to a local JetStream server, one ack per publish.
async fn nats(scale: u64) {
    let count = NATS_CHANGES / scale;
    let Some(server) = NatsServer::start() else {
        println!("\n### NATS JetStream\n\nskipped: {NATS_SERVER} is not installed");
        return;
    };
    let destination = json!({"nats": {
        "url": format!("nats://127.0.0.1:{}", server.port),
        "subject": "grw.{kind}.{namespace}",
        "stream": "GRWBENCH",
    }});
    let engine = Engine::start(destination, BACKLOG_OBJECTS).await;
    let started = Instant::now();
    engine.apply(count, None).await;
    let applied = started.elapsed();
    engine.wait_delivered(count).await;
    let done = started.elapsed();
    let status = engine.status();
    assert_eq!(
        (status.pending, status.dead_letters),
        (0, 0),
        "every change published once"
    );
    println!(
        "\n### NATS JetStream ({}, file storage, one server on loopback)\n",
        server.version
    );
    println!("| changes | applied in s | first apply → all acked, pending 0 s | deliveries/s |");
    println!("|---:|---:|---:|---:|");
    println!(
        "| {} | {:.2} | {:.2} | {} |",
        grouped(count as f64),
        applied.as_secs_f64(),
        done.as_secs_f64(),
        grouped(count as f64 / done.as_secs_f64())
    );
}

/// Outbox bytes per pending delivery, with one and with several
/// subscriptions on the same watch, the receivers down.
async fn bytes(scale: u64) {
    let count = BYTES_CHANGES / scale;
    println!(
        "\n### Outbox size ({} changes of ~{OBJECT_BYTES} B ConfigMaps queued, receivers down, watch-event bodies with oldObject)\n",
        grouped(count as f64)
    );
    println!(
        "| subscriptions | pending deliveries | outbox file growth MiB | bytes per pending delivery | bytes per change |"
    );
    println!("|---:|---:|---:|---:|---:|");
    for subscriptions in BYTES_SUBSCRIPTIONS {
        let engine =
            Engine::start_with(webhook(free_port(), None), BACKLOG_OBJECTS, subscriptions).await;
        let before = engine.outbox_bytes();
        engine.apply(count, None).await;
        let names = engine.subscriptions.clone();
        for name in &names {
            engine.wait_pending_of(name, |p| p >= count).await;
        }
        let pending: u64 = names.iter().map(|n| engine.status_of(n).pending).sum();
        let grown = engine.outbox_bytes().saturating_sub(before);
        println!(
            "| {subscriptions} | {} | {:.1} | {} | {} |",
            grouped(pending as f64),
            mib(grown),
            grouped(grown as f64 / pending as f64),
            grouped(grown as f64 / count as f64),
        );
    }
}

/// Resident memory the engine adds, without `dataDir`, on top of a watch
/// whose cache already holds many objects: what it keeps of the state it
/// announced.
async fn announced(scale: u64) {
    let count = ANNOUNCED_OBJECTS / scale as usize;
    let engine = Engine::prepare(
        webhook(free_port(), None),
        Objects::sized(count, ANNOUNCED_OBJECT_BYTES),
        1,
        false,
    );
    let json: usize = engine
        .cache
        .read()
        .iter_after(None)
        .map(|o| o.json().len())
        .sum();
    let before = ProcMemory::read();
    engine.notifications.start();
    // The feed first records the existing objects, then queues this change.
    engine.apply(1, None).await;
    engine.wait_pending(|p| p >= 1).await;
    let after = ProcMemory::read();
    println!(
        "\n### Memory of the announced state without dataDir ({} objects of ~{} B in the watch's cache)\n",
        grouped(count as f64),
        grouped(ANNOUNCED_OBJECT_BYTES as f64)
    );
    println!(
        "| objects' JSON MiB | VmRSS before the engine starts MiB | after MiB | added MiB | added bytes per object |"
    );
    println!("|---:|---:|---:|---:|---:|");
    let added = after.rss.saturating_sub(before.rss);
    println!(
        "| {:.1} | {:.1} | {:.1} | {:.1} | {} |",
        mib(json as u64),
        mib(before.rss),
        mib(after.rss),
        mib(added),
        grouped(added as f64 / count as f64)
    );
}

/// (changes per second, seconds) of the sinks' acknowledgement latency run.
const SINK_RATE: (u64, u64) = (5_000, 5);
/// Changes delivered to each sink before its latency is measured.
const SINK_WARMUP: u64 = 300;
/// Changes applied at once for the sinks' ceiling.
const SINK_CEILING_CHANGES: u64 = 20_000;

/// Webhook, NATS JetStream and Kafka side by side: each change timed from
/// the cache apply to the sink's acknowledgement (the receiver's 200, the
/// stream's ack, the broker's ack), at a steady rate; then how fast one
/// subscription empties a backlog into each.
async fn sinks(scale: u64) {
    let nats = NatsServer::start();
    let kafka = Tansu::start();
    let mut destinations = Vec::new();
    let port = free_port();
    let receiver = Receiver::serve(port).await;
    destinations.push((
        "webhook (loopback, answers 200)".to_string(),
        webhook(port, None),
    ));
    match &nats {
        Some(server) => destinations.push((
            format!("NATS JetStream ({}, file storage)", server.version),
            json!({"nats": {"url": format!("nats://127.0.0.1:{}", server.port),
                            "subject": "grw.{kind}.{namespace}", "stream": "GRWSINKS"}}),
        )),
        None => println!("\nNATS skipped: {NATS_SERVER} is not installed"),
    }
    match &kafka {
        Ok(broker) => {
            broker.create_topic("grw-sinks", 3);
            destinations.push((
                format!(
                    "Kafka ({}, in memory; acks all, idempotent)",
                    broker.version
                ),
                json!({"kafka": {"bootstrapServers": broker.bootstrap(), "topic": "grw-sinks"}}),
            ));
        }
        Err(why) => println!("\nKafka skipped: {why}"),
    }
    let (rate, seconds) = SINK_RATE;
    let count = rate * seconds / scale;
    println!(
        "\n### Sinks: change → acknowledged at {}/s for {} s ({LATENCY_OBJECTS} ConfigMaps of ~{OBJECT_BYTES} B, watch-event bodies)\n",
        grouped(rate as f64),
        seconds as f64 / scale as f64
    );
    println!(
        "| sink | sent | acknowledged by the end / sent | p50 ms | p99 ms | max ms | failed attempts |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    for (name, destination) in &destinations {
        let engine = Engine::start(destination.clone(), LATENCY_OBJECTS).await;
        // Connections, the stream and the producer's session are made, and
        // a new topic's partitions are ready, before the clock starts.
        engine.apply(SINK_WARMUP, None).await;
        engine.wait_delivered(SINK_WARMUP).await;
        let acks = AckClock::start(engine.notifications.clone(), SINK_WARMUP);
        let applied = engine.apply_timed(count, Some(rate)).await;
        let at_end = acks.count();
        let all = acks.wait_for(count, Duration::from_secs(120)).await;
        let mut latencies: Vec<f64> = acks
            .times(count as usize)
            .iter()
            .zip(&applied)
            .map(|(acked, sent)| acked.saturating_sub(*sent) as f64 / 1e6)
            .collect();
        latencies.sort_by(f64::total_cmp);
        println!(
            "| {name} | {} | {:.3} | {:.2} | {:.2} | {:.2} | {} |{}",
            grouped(count as f64),
            at_end as f64 / count as f64,
            percentile(&latencies, 50.0),
            percentile(&latencies, 99.0),
            latencies.last().copied().unwrap_or(f64::NAN),
            engine.status().retries,
            if all {
                String::new()
            } else {
                format!(
                    " only {} acknowledged within 2 minutes: {:?}",
                    acks.count(),
                    engine.status().last_error
                )
            }
        );
    }
    let count = SINK_CEILING_CHANGES / scale;
    println!(
        "\n### Sinks: one subscription's ceiling ({} changes applied at once)\n",
        grouped(count as f64)
    );
    println!("| sink | first apply → all acknowledged, pending 0 s | deliveries/s |");
    println!("|---|---:|---:|");
    for (name, destination) in &destinations {
        let engine = Engine::start(destination.clone(), BACKLOG_OBJECTS).await;
        engine.apply(SINK_WARMUP, None).await;
        engine.wait_delivered(SINK_WARMUP).await;
        let started = Instant::now();
        engine.apply(count, None).await;
        engine.wait_delivered(SINK_WARMUP + count).await;
        let done = started.elapsed();
        assert_eq!(engine.status().dead_letters, 0, "{name}: nothing refused");
        println!(
            "| {name} | {:.2} | {} |",
            done.as_secs_f64(),
            grouped(count as f64 / done.as_secs_f64())
        );
    }
    receiver.stop();
}

/// Resident memory while a Kafka subscription's backlog grows to a million
/// deliveries, its broker down (a port nothing listens on).
async fn kafka_memory(scale: u64) {
    let destination = json!({"kafka": {
        "bootstrapServers": format!("127.0.0.1:{}", free_port()),
        "topic": "grw-down",
    }});
    backlog_memory(scale, destination, "Kafka broker down").await;
}

/// When each delivery of the [`SUBSCRIPTION`] was acknowledged: the
/// subscription's `deliveries` count, read every 100 µs on a thread of its
/// own (without reading the outbox). A subscription delivers in queue order, so the n-th acknowledgement
/// is the n-th change's.
struct AckClock {
    times: Arc<Mutex<Vec<u64>>>,
    stop: Arc<std::sync::atomic::AtomicBool>,
}

impl AckClock {
    fn start(notifications: Arc<Notifications>, base: u64) -> AckClock {
        let times = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let (t, s) = (times.clone(), stop.clone());
        std::thread::spawn(move || {
            while !s.load(std::sync::atomic::Ordering::Relaxed) {
                let delivered = notifications
                    .deliveries(SUBSCRIPTION)
                    .unwrap_or(0)
                    .saturating_sub(base) as usize;
                let now = now_ns();
                let mut times = t.lock();
                while times.len() < delivered {
                    times.push(now);
                }
                drop(times);
                std::thread::sleep(Duration::from_micros(100));
            }
        });
        AckClock { times, stop }
    }

    fn count(&self) -> u64 {
        self.times.lock().len() as u64
    }

    async fn wait_for(&self, count: u64, timeout: Duration) -> bool {
        let started = Instant::now();
        while self.count() < count {
            if started.elapsed() > timeout {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        true
    }

    fn times(&self, count: usize) -> Vec<u64> {
        self.times.lock().iter().take(count).copied().collect()
    }
}

impl Drop for AckClock {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
    }
}

// ---------------------------------------------------------------------------
// The engine and its input

/// The notification engine with one subscription, `bench`, on ConfigMaps,
/// its outbox in a temporary `dataDir`, fed through the cache of a
/// replay-mode watch.
struct Engine {
    notifications: Arc<Notifications>,
    /// Names of its subscriptions; the first is [`SUBSCRIPTION`].
    subscriptions: Vec<String>,
    cache: Arc<Cache>,
    objects: Arc<Mutex<Objects>>,
    data_dir: TempDir,
}

impl Engine {
    /// `destination` is the subscription's sink member, e.g. `{"webhook":
    /// {...}}`. The `distinct` objects exist before the engine attaches, so
    /// they are not announced and every measured change is a MODIFIED
    /// carrying its old state.
    async fn start(destination: Value, distinct: usize) -> Engine {
        Engine::start_with(destination, distinct, 1).await
    }

    /// As [`Engine::start`], with `subscriptions` identical subscriptions
    /// (`bench`, `bench-2`, ...) on the same watch.
    async fn start_with(destination: Value, distinct: usize, subscriptions: usize) -> Engine {
        let engine = Engine::prepare(destination, Objects::new(distinct), subscriptions, true);
        engine.notifications.start();
        engine
    }

    /// The engine with its objects in the cache, not started yet; with an
    /// outbox in a temporary `dataDir` when `persistent`, in memory otherwise.
    fn prepare(
        destination: Value,
        mut objects: Objects,
        subscriptions: usize,
        persistent: bool,
    ) -> Engine {
        let data_dir = tempfile::tempdir().expect("temporary dataDir");
        let names: Vec<String> = (1..=subscriptions)
            .map(|i| match i {
                1 => SUBSCRIPTION.to_string(),
                i => format!("{SUBSCRIPTION}-{i}"),
            })
            .collect();
        let specs = names
            .iter()
            .map(|name| {
                let mut subscription = json!({"name": name, "kind": "v1/ConfigMap"});
                if let (Some(sub), Value::Object(members)) =
                    (subscription.as_object_mut(), destination.clone())
                {
                    sub.extend(members);
                }
                SubscriptionConfig::from_json(&subscription).expect("a valid subscription")
            })
            .collect();
        let config = Config {
            data_dir: persistent.then(|| data_dir.path().to_path_buf()),
            subscriptions: specs,
            ..Config::default()
        };
        let metrics = Arc::new(Metrics::new());
        let watches = Arc::new(Watches::new(
            None,
            WatchSettings::default(),
            metrics.clone(),
        ));
        let resource = ResourceInfo {
            gvk: Gvk::new("", "v1", "ConfigMap"),
            plural: "configmaps".into(),
            namespaced: true,
        };
        let discovery = Arc::new(Discovery::fixed(Catalog::fixed(vec![resource.clone()])));
        let notifications = Notifications::open(
            &config,
            watches.clone(),
            discovery,
            Plugins::none(metrics.clone()),
            metrics,
        )
        .expect("the engine opens");
        let cache = watches
            .ensure(&resource, WatchOptions::default(), false)
            .cache
            .clone();
        for _ in 0..objects.distinct {
            cache.apply(ChangeType::Added, objects.next_object(), Origin::Initial);
        }
        Engine {
            notifications,
            subscriptions: names,
            cache,
            objects: Arc::new(Mutex::new(objects)),
            data_dir,
        }
    }

    /// Applies `count` changes as watch events, `rate` per second or as
    /// fast as the cache takes them, on a thread of its own.
    async fn apply(&self, count: u64, rate: Option<u64>) {
        let cache = self.cache.clone();
        let objects = self.objects.clone();
        tokio::task::spawn_blocking(move || {
            let mut objects = objects.lock();
            let mut pacer = rate.map(Pacer::new);
            for _ in 0..count {
                if let Some(pacer) = &mut pacer {
                    pacer.wait_turn();
                }
                cache.apply(ChangeType::Modified, objects.next_object(), Origin::Watch);
            }
        })
        .await
        .expect("the applying thread finishes");
    }

    /// As [`Engine::apply`], returning when each change went into the
    /// cache, in [`now_ns`] time.
    async fn apply_timed(&self, count: u64, rate: Option<u64>) -> Vec<u64> {
        let cache = self.cache.clone();
        let objects = self.objects.clone();
        tokio::task::spawn_blocking(move || {
            let mut objects = objects.lock();
            let mut pacer = rate.map(Pacer::new);
            let mut applied = Vec::with_capacity(count as usize);
            for _ in 0..count {
                if let Some(pacer) = &mut pacer {
                    pacer.wait_turn();
                }
                let object = objects.next_object();
                applied.push(now_ns());
                cache.apply(ChangeType::Modified, object, Origin::Watch);
            }
            applied
        })
        .await
        .expect("the applying thread finishes")
    }

    fn status(&self) -> SubscriptionStatus {
        self.status_of(SUBSCRIPTION)
    }

    fn status_of(&self, name: &str) -> SubscriptionStatus {
        self.notifications
            .status(name)
            .expect("the subscription exists")
    }

    /// Waits until the subscription has delivered `count` and has nothing
    /// pending. (Pending is 0 also before the feed queued anything, and
    /// acknowledged deliveries leave the queue when their batch is settled:
    /// both are needed.)
    async fn wait_delivered(&self, count: u64) {
        let started = Instant::now();
        while self.status().deliveries < count || self.pending() > 0 {
            assert!(
                started.elapsed() < Duration::from_secs(600),
                "only {} of {count} delivered: {:?}",
                self.status().deliveries,
                self.status().last_error
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    /// Deliveries waiting in the subscription's queue.
    fn pending(&self) -> u64 {
        self.status().pending
    }

    /// Polls the pending count until `done` holds.
    async fn wait_pending(&self, done: impl Fn(u64) -> bool) {
        self.wait_pending_of(SUBSCRIPTION, done).await;
    }

    /// Polls the pending count of one subscription until `done` holds.
    async fn wait_pending_of(&self, name: &str, done: impl Fn(u64) -> bool) {
        let started = Instant::now();
        while !done(self.status_of(name).pending) {
            assert!(
                started.elapsed() < Duration::from_secs(600),
                "pending of {name} stuck at {}",
                self.status_of(name).pending
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }

    fn outbox_bytes(&self) -> u64 {
        file_size(&self.data_dir.path().join("grw.redb"))
    }
}

/// The subscription's webhook member, to a receiver at `port`.
fn webhook(port: u16, retry: Option<&str>) -> Value {
    let mut destination = json!({"webhook": {
        "url": format!("http://127.0.0.1:{port}/"),
        "payload": "watch-event",
    }});
    if let Some(retry) = retry {
        destination["retry"] = serde_json::from_str(retry).expect("retry is JSON");
    }
    destination
}

/// ConfigMaps of about [`OBJECT_BYTES`], modified round-robin: each call
/// gives the next object a new resourceVersion and stamps `data.sent_ns`.
struct Objects {
    template: Value,
    gvk: Gvk,
    distinct: usize,
    next: usize,
    resource_version: u64,
}

impl Objects {
    fn new(distinct: usize) -> Objects {
        Objects::sized(distinct, OBJECT_BYTES)
    }

    /// `distinct` ConfigMaps of about `bytes` of JSON each.
    fn sized(distinct: usize, bytes: usize) -> Objects {
        let mut template = json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "", "namespace": "bench", "uid": "", "resourceVersion": "",
                "labels": {"app": "notify-bench"}},
            "data": {"sent_ns": "0000000000000", "payload": ""},
        });
        let base = template.to_string().len() + "cm-000".len() + "uid-000000".len() + 8;
        template["data"]["payload"] = json!("x".repeat(bytes.saturating_sub(base)));
        Objects {
            template,
            gvk: Gvk::new("", "v1", "ConfigMap"),
            distinct,
            next: 0,
            resource_version: 1_000,
        }
    }

    fn next_object(&mut self) -> StoredObject {
        let i = self.next % self.distinct;
        self.next += 1;
        self.resource_version += 1;
        let mut object = self.template.clone();
        object["metadata"]["name"] = json!(format!("cm-{i:03}"));
        object["metadata"]["uid"] = json!(format!("uid-{i:06}"));
        object["metadata"]["resourceVersion"] = json!(self.resource_version.to_string());
        object["data"]["sent_ns"] = json!(now_ns().to_string());
        StoredObject::from_value(object, &self.gvk, false).expect("a valid ConfigMap")
    }
}

/// Lets calls through at a steady rate. Due times are absolute, so a sleep
/// that overshoots is made up by the next calls.
struct Pacer {
    started: Instant,
    rate: u64,
    done: u64,
}

impl Pacer {
    fn new(rate: u64) -> Pacer {
        Pacer {
            started: Instant::now(),
            rate,
            done: 0,
        }
    }

    fn wait_turn(&mut self) {
        let due_at = Duration::from_secs_f64(self.done as f64 / self.rate as f64);
        if let Some(wait) = due_at.checked_sub(self.started.elapsed()) {
            std::thread::sleep(wait);
        }
        self.done += 1;
    }
}

// ---------------------------------------------------------------------------
// Receivers

/// An HTTP receiver on loopback answering 200 to every POST, noting when
/// each delivery arrived and how long after its change was made.
struct Receiver {
    arrivals: Mutex<Vec<Arrival>>,
    server: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

struct Arrival {
    at_ns: u64,
    /// None when the body carries no `data.sent_ns`.
    latency_ns: Option<u64>,
}

/// What the receiver reads of a `watch-event` body.
#[derive(serde::Deserialize)]
struct Stamped {
    object: StampedObject,
}

#[derive(serde::Deserialize)]
struct StampedObject {
    data: StampedData,
}

#[derive(serde::Deserialize)]
struct StampedData {
    sent_ns: String,
}

impl Receiver {
    async fn serve(port: u16) -> Arc<Receiver> {
        let receiver = Arc::new(Receiver {
            arrivals: Mutex::new(Vec::new()),
            server: Mutex::new(None),
        });
        let listener = tokio::net::TcpListener::bind((Ipv4Addr::LOCALHOST, port))
            .await
            .expect("the receiver's port is free");
        let app = Router::new()
            .route("/", post(receive))
            .with_state(receiver.clone());
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("the receiver runs");
        });
        *receiver.server.lock() = Some(server);
        receiver
    }

    fn stop(&self) {
        if let Some(server) = self.server.lock().take() {
            server.abort();
        }
    }

    fn count(&self) -> usize {
        self.arrivals.lock().len()
    }

    /// Waits until `count` deliveries arrived; false after `timeout`.
    async fn wait_for(&self, count: usize, timeout: Duration) -> bool {
        let started = Instant::now();
        while self.count() < count {
            if started.elapsed() > timeout {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        true
    }

    /// Latencies in milliseconds, sorted.
    fn latencies_ms(&self) -> Vec<f64> {
        let mut ms: Vec<f64> = self
            .arrivals
            .lock()
            .iter()
            .filter_map(|a| a.latency_ns)
            .map(|ns| ns as f64 / 1e6)
            .collect();
        ms.sort_by(f64::total_cmp);
        ms
    }

    /// When the first and the last delivery arrived, in [`now_ns`] time.
    fn first_and_last(&self) -> (u64, u64) {
        let arrivals = self.arrivals.lock();
        let at = |a: Option<&Arrival>| a.map_or(0, |a| a.at_ns);
        (at(arrivals.first()), at(arrivals.last()))
    }
}

async fn receive(State(receiver): State<Arc<Receiver>>, body: Bytes) -> StatusCode {
    let at_ns = now_ns();
    let sent_ns = serde_json::from_slice::<Stamped>(&body)
        .ok()
        .and_then(|s| s.object.data.sent_ns.parse::<u64>().ok());
    receiver.arrivals.lock().push(Arrival {
        at_ns,
        latency_ns: sent_ns.map(|sent| at_ns.saturating_sub(sent)),
    });
    StatusCode::OK
}

/// A JetStream-enabled `nats-server` on a free loopback port, stopped on drop.
struct NatsServer {
    child: Child,
    port: u16,
    version: String,
    _store: TempDir,
}

impl NatsServer {
    /// None when the server is not installed.
    fn start() -> Option<NatsServer> {
        if !Path::new(NATS_SERVER).exists() {
            return None;
        }
        let version = Command::new(NATS_SERVER)
            .arg("--version")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_else(|_| "nats-server".into());
        let store = tempfile::tempdir().expect("temporary JetStream store");
        let port = free_port();
        let child = Command::new(NATS_SERVER)
            .args(["-a", "127.0.0.1", "-p", &port.to_string(), "-js", "-sd"])
            .arg(store.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server starts");
        let server = NatsServer {
            child,
            port,
            version,
            _store: store,
        };
        let started = Instant::now();
        while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "nats-server did not listen within 10 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(server)
    }
}

impl Drop for NatsServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Kafka-protocol broker (`tansu`, in memory) on a free loopback port,
/// stopped on drop.
struct Tansu {
    child: Child,
    port: u16,
    version: String,
    binary: std::path::PathBuf,
}

impl Tansu {
    /// Why not, when `tansu` is not installed.
    fn start() -> Result<Tansu, String> {
        // Where tests/setup.sh installs it, else PATH.
        let installed = std::env::var_os("CARGO_HOME")
            .map(std::path::PathBuf::from)
            .or_else(|| {
                std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cargo"))
            })
            .map(|home| home.join("grw-tansu-0.6.0/bin"));
        let binary = std::env::var_os("TANSU")
            .map(std::path::PathBuf::from)
            .or_else(|| {
                installed
                    .into_iter()
                    .chain(
                        std::env::var_os("PATH")
                            .into_iter()
                            .flat_map(|p| std::env::split_paths(&p).collect::<Vec<_>>()),
                    )
                    .map(|dir| dir.join("tansu"))
                    .find(|path| path.is_file())
            })
            .ok_or("tansu is not installed (tests/setup.sh installs it)")?;
        let version = Command::new(&binary)
            .arg("--version")
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .unwrap_or_else(|_| "tansu".into());
        let port = free_port();
        let url = format!("tcp://127.0.0.1:{port}");
        let child = Command::new(&binary)
            .args(["broker", "--storage-engine", "memory://tansu/"])
            .args(["--listener-url", &url, "--advertised-listener-url", &url])
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("tansu does not start: {e}"))?;
        let broker = Tansu {
            child,
            port,
            version,
            binary,
        };
        let started = Instant::now();
        while TcpStream::connect((Ipv4Addr::LOCALHOST, port)).is_err() {
            if started.elapsed() > Duration::from_secs(10) {
                return Err("tansu did not listen within 10 s".into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(broker)
    }

    fn bootstrap(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    fn create_topic(&self, topic: &str, partitions: u32) {
        let status = Command::new(&self.binary)
            .args([
                "topic",
                "create",
                topic,
                "--partitions",
                &partitions.to_string(),
            ])
            .args(["--broker", &format!("tcp://127.0.0.1:{}", self.port)])
            .stdout(Stdio::null())
            .status()
            .expect("tansu topic create runs");
        assert!(status.success(), "creating topic {topic} failed");
    }
}

impl Drop for Tansu {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

// ---------------------------------------------------------------------------
// Small helpers

/// Nanoseconds on a monotonic clock shared by senders and receivers.
fn now_ns() -> u64 {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    EPOCH.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// A loopback port nothing listens on (until someone binds it).
fn free_port() -> u16 {
    TcpListener::bind((Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

/// The process's resident set now and at its peak, from /proc/self/status.
struct ProcMemory {
    rss: u64,
    peak: u64,
}

impl ProcMemory {
    fn read() -> ProcMemory {
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let kib = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
                .map_or(0, |k| k * 1024)
        };
        ProcMemory {
            rss: kib("VmRSS:"),
            peak: kib("VmHWM:"),
        }
    }
}

fn file_size(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = ((sorted.len() as f64 * p / 100.0).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
