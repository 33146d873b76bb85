//! How long a relist holds a cache's readers out.
//!
//! `cargo bench -p grw --bench relist` fills a [`Cache`] with 100,000 Pods
//! (the generator of `tests/src/pods.rs`; `GRW_BENCH_QUICK=1`: 10,000), then
//! relists it three times with [`Cache::replace`], as the watch loop does
//! after a `410 Gone` or a restart: nothing changed, 1% of the Pods changed,
//! and every Pod changed. Meanwhile a reader thread loops exact gets
//! (`cache.read().get(..)`), timing how long each waits for the lock. The
//! report gives, per relist, the time `replace` takes, the reader's
//! longest wait during it (how long the relist held every reader of the
//! cache out, or the reader's thread was not scheduled: the machine's two
//! cores are shared) and how many of its waits took over a millisecond.
//!
//! The objects of each relist are made and packed before it is timed; what
//! is timed is `replace` itself, as the watch loop calls it after the list
//! is read.

mod common;
#[path = "../../tests/src/pods.rs"]
mod pods;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use grw::gvk::Gvk;
use grw::store::{Cache, ObjectKey, Origin, StoredObject};
use serde_json::json;

use common::{cpu_model, grouped};
use pods::PodFactory;

/// The history the daemon keeps per cache by default (`eventHistorySize`).
const HISTORY: usize = 10_000;

fn main() {
    let quick = std::env::var("GRW_BENCH_QUICK").is_ok_and(|v| v == "1");
    let n = if quick { 10_000 } else { 100_000 };
    let factory = PodFactory::load();
    let gvk = Gvk::new("", "v1", "Pod");
    let cache = Arc::new(Cache::new(gvk.clone(), HISTORY));
    let pods = |version: u64, changed: &dyn Fn(usize) -> bool| -> Vec<StoredObject> {
        let mut objects: Vec<StoredObject> = (0..n)
            .map(|i| {
                let mut pod = factory.pod(i);
                if changed(i) {
                    let rv = 1_000_000 + i as u64 + version * 10_000_000;
                    pod["metadata"]["resourceVersion"] = json!(rv.to_string());
                }
                StoredObject::from_value(pod, &gvk, false).expect("pods are objects")
            })
            .collect();
        cache.pack(&mut objects);
        objects
    };
    cache.replace(pods(0, &|_| false), "1000000", Origin::Initial);
    cache.mark_synced();
    let keys: Vec<ObjectKey> = cache
        .read()
        .iter_after(None)
        .map(|o| o.key().clone())
        .collect();
    let keys = Arc::new(keys);

    println!(
        "### A relist of {} Pods, with a reader looping exact gets\n",
        grouped(n as f64)
    );
    println!(
        "Machine: {}, {} logical CPUs.\n",
        cpu_model(),
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    println!(
        "| relist | `replace` | changes | reader's longest wait | reader's waits over 1 ms | gets during it |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    /// Each relist: its name, its version, which Pods it changes.
    type Case = (&'static str, u64, fn(usize) -> bool);
    let cases: [Case; 3] = [
        ("nothing changed", 0, |_| false),
        ("1% changed", 1, |i| i % 100 == 0),
        ("every Pod changed", 2, |_| true),
    ];
    for (name, version, changed) in cases {
        let objects = pods(version, &changed);
        let rv = (1_000_000 + n as u64 + version * 10_000_000 + 1).to_string();
        let (elapsed, count, waits) = with_reader(&cache, &keys, || {
            cache.replace(objects, &rv, Origin::Relist).len()
        });
        println!(
            "| {name} | {} | {} | {} | {} | {} |",
            millis(elapsed),
            grouped(count as f64),
            millis(waits.last().copied().unwrap_or_default()),
            waits
                .iter()
                .filter(|w| **w > Duration::from_millis(1))
                .count(),
            grouped(waits.len() as f64),
        );
    }
}

/// Runs `relist` while a thread loops exact gets of `keys`; its duration,
/// its result, and the gets' lock waits during it, sorted.
fn with_reader(
    cache: &Arc<Cache>,
    keys: &Arc<Vec<ObjectKey>>,
    relist: impl FnOnce() -> usize,
) -> (Duration, usize, Vec<Duration>) {
    let stop = Arc::new(AtomicBool::new(false));
    let reader = {
        let (cache, keys, stop) = (cache.clone(), keys.clone(), stop.clone());
        std::thread::spawn(move || {
            let mut waits = Vec::new();
            let mut i = 0usize;
            while !stop.load(Ordering::Relaxed) {
                let key = &keys[i % keys.len()];
                i = i.wrapping_add(7919);
                let asked = Instant::now();
                let view = cache.read();
                waits.push((asked, asked.elapsed()));
                std::hint::black_box(view.get(key).cloned());
            }
            waits
        })
    };
    // Let the reader start before the relist does.
    std::thread::sleep(Duration::from_millis(50));
    let started = Instant::now();
    let count = relist();
    let elapsed = started.elapsed();
    stop.store(true, Ordering::Relaxed);
    let ended = started + elapsed;
    let mut waits: Vec<Duration> = reader
        .join()
        .expect("the reader does not panic")
        .into_iter()
        .filter(|(asked, _)| (started..ended).contains(asked))
        .map(|(_, wait)| wait)
        .collect();
    waits.sort();
    (elapsed, count, waits)
}

fn millis(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}
