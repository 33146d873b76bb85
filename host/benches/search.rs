//! Name search (`nameContains`) at 100,000 Pods: the cache's trigram name
//! index against a scan of every object for the same query, and the heap
//! the index adds per object; owner queries (`ownerUid`, `ownerDepth=all`)
//! through the owner index against a scan.
//!
//! `cargo bench -p grw --bench search` (100,000 Pods; `-- --quick` or
//! `GRW_BENCH_QUICK=1`: 10,000) prints a Markdown report for BENCHMARKS.md.
//!
//! The Pods are named as a Deployment's are: `<app>-<pod-template-hash>-
//! <suffix>`, the hash 10 and the suffix 5 characters of the alphabet the
//! API server draws such names from. 20 namespaces hold 50 Deployments
//! each; an app name is one of 20 × 10 two-word names (`payments-worker`),
//! so each recurs in about five namespaces; each Deployment has two
//! ReplicaSets of equal size (a rollout half done). The Pods themselves
//! are small (metadata, labels, an owner): the query costs compared are
//! those of finding names, not of reading objects.

mod common;
#[path = "common/counting.rs"]
mod counting;

use std::hint::black_box;
use std::time::{Duration, Instant};

use grw::gvk::Gvk;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use grw::query::{NameContains, PageRequest, Query, descendants};
use grw::store::{Cache, ChangeType, NameIndex, ObjectKey, Origin, StoredObject};
use serde_json::json;

use common::{Args, cpu_model, grouped};
use counting::counted;

const FULL: usize = 100_000;
const QUICK: usize = 10_000;
const NAMESPACES: usize = 20;
const DEPLOYMENTS_PER_NAMESPACE: usize = 50;
const REPLICA_SETS_PER_DEPLOYMENT: usize = 2;
/// The characters of generated name parts (no vowels, no look-alikes).
const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
const FIRST: [&str; 20] = [
    "checkout",
    "payments",
    "cart",
    "catalog",
    "search",
    "users",
    "orders",
    "shipping",
    "inventory",
    "billing",
    "auth",
    "gateway",
    "frontend",
    "recommend",
    "reviews",
    "notify",
    "media",
    "ledger",
    "reports",
    "ads",
];
const SECOND: [&str; 10] = [
    "api", "worker", "web", "cache", "proxy", "sync", "cron", "grpc", "events", "admin",
];
/// Each query is repeated this many times at most, and for this long.
const MAX_RUNS: usize = 1_000;
const MAX_TIME: Duration = Duration::from_secs(2);

/// A small deterministic generator (xorshift64*): the same names each run.
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn text(&mut self, len: usize) -> String {
        (0..len)
            .map(|_| ALPHABET[(self.next() % ALPHABET.len() as u64) as usize] as char)
            .collect()
    }
}

/// One generated Pod: namespace, name, app, ReplicaSet hash.
struct PodName {
    namespace: String,
    name: String,
    app: String,
    hash: String,
}

fn pod_names(n: usize) -> Vec<PodName> {
    let mut random = Random(0x5eed_1234_abcd_0001);
    let replica_sets = NAMESPACES * DEPLOYMENTS_PER_NAMESPACE * REPLICA_SETS_PER_DEPLOYMENT;
    let per_replica_set = n.div_ceil(replica_sets);
    let mut out = Vec::with_capacity(n);
    'all: for ns in 0..NAMESPACES {
        for _ in 0..DEPLOYMENTS_PER_NAMESPACE {
            let app = format!(
                "{}-{}",
                FIRST[(random.next() % 20) as usize],
                SECOND[(random.next() % 10) as usize]
            );
            for _ in 0..REPLICA_SETS_PER_DEPLOYMENT {
                let hash = random.text(10);
                for _ in 0..per_replica_set {
                    if out.len() == n {
                        break 'all;
                    }
                    out.push(PodName {
                        namespace: format!("team-{ns:02}"),
                        name: format!("{app}-{hash}-{}", random.text(5)),
                        app: app.clone(),
                        hash: hash.clone(),
                    });
                }
            }
        }
    }
    out
}

fn cache(pods: &[PodName]) -> Cache {
    let gvk = Gvk::new("", "v1", "Pod");
    let cache = Cache::new(gvk.clone(), 0);
    for (i, p) in pods.iter().enumerate() {
        let value = json!({"metadata": {
            "namespace": p.namespace, "name": p.name, "uid": format!("uid-{i}"),
            "resourceVersion": (i + 1).to_string(),
            "labels": {"app": p.app, "pod-template-hash": p.hash},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                "name": format!("{}-{}", p.app, p.hash), "uid": format!("rs-{}-{}", p.namespace, p.hash)}]
        }, "spec": {"nodeName": format!("node-{}", i % 500)}});
        let object = StoredObject::from_value(value, &gvk, false).expect("a valid Pod");
        cache.apply(ChangeType::Added, object, Origin::Watch);
    }
    cache
}

/// Mean and 99th percentile of repeated runs, in µs, and the match count.
struct Timing {
    mean_us: f64,
    p99_us: f64,
    matches: usize,
}

fn time(mut run: impl FnMut() -> usize) -> Timing {
    let mut samples = Vec::new();
    let mut matches = None;
    let started = Instant::now();
    while samples.len() < MAX_RUNS && (samples.len() < 5 || started.elapsed() < MAX_TIME) {
        let t = Instant::now();
        let n = black_box(run());
        samples.push(t.elapsed());
        assert!(matches.is_none_or(|m| m == n), "the same answer each time");
        matches = Some(n);
    }
    samples.sort_unstable();
    let us = |d: &Duration| d.as_secs_f64() * 1e6;
    Timing {
        mean_us: samples.iter().map(us).sum::<f64>() / samples.len() as f64,
        p99_us: us(&samples[(samples.len() * 99).div_ceil(100) - 1]),
        matches: matches.unwrap_or(0),
    }
}

fn main() {
    let args = Args::from_env();
    let n = if args.quick { QUICK } else { FULL };
    println!(
        "machine: {}, {} logical CPUs",
        cpu_model(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let pods = pod_names(n);
    let mean_name = pods.iter().map(|p| p.name.len()).sum::<usize>() as f64 / n as f64;
    println!(
        "\n{} Pods in {NAMESPACES} namespaces, names of {mean_name:.1} bytes on average (e.g. `{}`)\n",
        grouped(n as f64),
        pods[0].name
    );
    memory(&pods);
    let pod_cache = cache(&pods);
    queries(&pod_cache, &pods);
    owners(&pod_cache, &pods);
}

/// The heap a `NameIndex` of every name holds, and the cost of keeping
/// it: inserts, and deletes followed by re-adds (which reuse slots).
fn memory(pods: &[PodName]) {
    let n = pods.len();
    let keys: Vec<ObjectKey> = pods
        .iter()
        .map(|p| ObjectKey::new(&p.namespace, &p.name))
        .collect();
    let started = Instant::now();
    let (index, (bytes, allocations)) = counted(|| {
        let mut index = NameIndex::default();
        for key in &keys {
            index.insert(key);
        }
        index
    });
    let insert = started.elapsed();
    assert_eq!(index.len(), n);
    let trigrams: usize = pods
        .iter()
        .map(|p| {
            let mut t: Vec<&[u8]> = p.name.as_bytes().windows(3).collect();
            t.sort_unstable();
            t.dedup();
            t.len()
        })
        .sum();
    let mut index = index;
    let churn: Vec<&ObjectKey> = keys.iter().step_by(10).collect();
    let started = Instant::now();
    for key in &churn {
        index.remove(key);
    }
    let remove = started.elapsed();
    let started = Instant::now();
    for key in &churn {
        index.insert(key);
    }
    let re_add = started.elapsed();
    let per = |d: Duration, count: usize| d.as_secs_f64() * 1e6 / count as f64;
    println!(
        "| objects | distinct trigrams per name | index heap bytes/object | bytes per trigram entry | allocations | insert µs/name | delete µs/name | re-add µs/name |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|---:|");
    println!(
        "| {} | {:.1} | {:.1} | {:.2} | {} | {:.2} | {:.2} | {:.2} |\n",
        grouped(n as f64),
        trigrams as f64 / n as f64,
        bytes as f64 / n as f64,
        bytes as f64 / trigrams as f64,
        grouped(allocations as f64),
        per(insert, n),
        per(remove, churn.len()),
        per(re_add, churn.len()),
    );
}

/// Each text through the planner (the name index) and by a scan of every
/// object, whole answers and first pages.
fn queries(cache: &Cache, pods: &[PodName]) {
    // As the daemon's query pool does before the first `nameContains`.
    cache.build_name_index();
    let view = cache.read();
    let some = &pods[pods.len() / 3];
    let suffix = some.name.rsplit('-').next().unwrap().to_uppercase();
    let texts: [(&str, String); 5] = [
        ("one Pod's suffix", suffix),
        ("one ReplicaSet's hash", some.hash.clone()),
        ("one app name", some.app.clone()),
        ("a common word (`worker`)", "worker".to_string()),
        ("two characters (scanned)", "wo".to_string()),
    ];
    println!(
        "| text | matches | page | name index mean / p99 µs | scan mean / p99 µs | scan ÷ index |"
    );
    println!("|---|---:|---|---:|---:|---:|");
    for (what, text) in &texts {
        for limit in [None, Some(100)] {
            let query = Query {
                name_contains: Some(NameContains::parse(text).unwrap()),
                ..Query::default()
            };
            let page = PageRequest { limit, after: None };
            let indexed = time(|| query.run(&view, &page).items.len());
            let scan = time(|| {
                view.iter_after(None)
                    .filter(|o| query.matches(o))
                    .take(limit.unwrap_or(usize::MAX))
                    .cloned()
                    .collect::<Vec<_>>()
                    .len()
            });
            assert_eq!(indexed.matches, scan.matches, "{text}");
            let matches = match limit {
                None => grouped(indexed.matches as f64),
                Some(_) => String::new(),
            };
            println!(
                "| {what}: `{text}` | {matches} | {} | {:.1} / {:.1} | {:.1} / {:.1} | {:.1} |",
                limit.map_or("all".to_string(), |l| format!("first {l}")),
                indexed.mean_us,
                indexed.p99_us,
                scan.mean_us,
                scan.p99_us,
                scan.mean_us / indexed.mean_us,
            );
        }
    }
}

/// The Pods' ReplicaSets and Deployments, owned as a cluster's are: a
/// Deployment `dep-{namespace}-{app}` owns ReplicaSets `rs-{namespace}-{hash}`.
fn owner_caches(pods: &[PodName]) -> (Cache, Cache) {
    let mut replica_sets: BTreeMap<(&str, &str), &str> = BTreeMap::new();
    for p in pods {
        replica_sets.insert((&p.namespace, &p.hash), &p.app);
    }
    let deployments: BTreeSet<(&str, &str)> = replica_sets
        .iter()
        .map(|((ns, _), app)| (*ns, *app))
        .collect();
    let add = |cache: &Cache, gvk: &Gvk, value: serde_json::Value| {
        let object = StoredObject::from_value(value, gvk, false).expect("a valid object");
        cache.apply(ChangeType::Added, object, Origin::Watch);
    };
    let rs_gvk = Gvk::new("apps", "v1", "ReplicaSet");
    let rs_cache = Cache::new(rs_gvk.clone(), 0);
    for ((ns, hash), app) in &replica_sets {
        add(
            &rs_cache,
            &rs_gvk,
            json!({"metadata": {
                "namespace": ns, "name": format!("{app}-{hash}"), "uid": format!("rs-{ns}-{hash}"),
                "resourceVersion": "1",
                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment",
                    "name": app, "uid": format!("dep-{ns}-{app}")}]
            }}),
        );
    }
    let dep_gvk = Gvk::new("apps", "v1", "Deployment");
    let dep_cache = Cache::new(dep_gvk.clone(), 0);
    for (ns, app) in &deployments {
        add(
            &dep_cache,
            &dep_gvk,
            json!({"metadata": {
                "namespace": ns, "name": app, "uid": format!("dep-{ns}-{app}"), "resourceVersion": "1"
            }}),
        );
    }
    (rs_cache, dep_cache)
}

/// Owner queries on the Pods: one ReplicaSet's (`ownerUid`), and one
/// Deployment's at any depth (`ownerDepth=all`: the walk down through the
/// caches, then the query on the owner set), each against a scan of every
/// Pod checking the same condition.
fn owners(pods_cache: &Cache, pods: &[PodName]) {
    let (rs_cache, dep_cache) = owner_caches(pods);
    let some = &pods[pods.len() / 3];
    let rs_uid = format!("rs-{}-{}", some.namespace, some.hash);
    let dep_uid = format!("dep-{}-{}", some.namespace, some.app);
    let caches = [pods_cache, &rs_cache, &dep_cache];
    let view = pods_cache.read();
    let scan = |query: &Query| view.iter_after(None).filter(|o| query.matches(o)).count();
    println!(
        "\n{} ReplicaSets, {} Deployments\n",
        grouped(rs_cache.read().len() as f64),
        grouped(dep_cache.read().len() as f64)
    );
    println!("| query | matches | owner index mean / p99 µs | scan mean / p99 µs | scan ÷ index |");
    println!("|---|---:|---:|---:|---:|");
    let by_rs = Query {
        owner_uid: Some(rs_uid.clone()),
        ..Query::default()
    };
    let indexed = time(|| by_rs.run(&view, &PageRequest::default()).items.len());
    let scanned = time(|| scan(&by_rs));
    assert_eq!(indexed.matches, scanned.matches);
    report("`ownerUid` (a ReplicaSet)", &indexed, &scanned);

    let walk = time(|| {
        descendants(caches, [dep_uid.clone()])
            .expect("under the limit")
            .len()
    });
    println!(
        "| the walk alone: a Deployment's descendants in 3 caches | {} uids | {:.1} / {:.1} | | |",
        walk.matches, walk.mean_us, walk.p99_us
    );
    let all = |set: Arc<BTreeSet<String>>| Query {
        owner_uid_in: Some(set),
        ..Query::default()
    };
    let indexed = time(|| {
        let set = descendants(caches, [dep_uid.clone()]).expect("under the limit");
        all(Arc::new(set))
            .run(&view, &PageRequest::default())
            .items
            .len()
    });
    let set = Arc::new(descendants(caches, [dep_uid.clone()]).expect("under the limit"));
    let scanned = time(|| scan(&all(set.clone())));
    assert_eq!(indexed.matches, scanned.matches);
    report(
        "`ownerDepth=all` (a Deployment; walk and query; the scan is given the walk's set)",
        &indexed,
        &scanned,
    );
}

fn report(what: &str, indexed: &Timing, scanned: &Timing) {
    println!(
        "| {what} | {} | {:.1} / {:.1} | {:.1} / {:.1} | {:.1} |",
        grouped(indexed.matches as f64),
        indexed.mean_us,
        indexed.p99_us,
        scanned.mean_us,
        scanned.p99_us,
        scanned.mean_us / indexed.mean_us,
    );
}
