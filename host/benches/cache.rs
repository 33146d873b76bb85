//! Memory and speed of grw's object cache, next to a kube-rs reflector store.
//!
//! `cargo bench -p grw --bench cache` loads N Pods (N = 10,000 and 100,000;
//! `cargo bench -p grw --bench cache -- --quick` or `GRW_BENCH_QUICK=1` runs
//! 10,000 only) into grw's [`Cache`] and into a kube-runtime reflector
//! `Store<DynamicObject>`, measures resident memory, ingest rate and read
//! latencies, and prints a Markdown report for BENCHMARKS.md on stdout.
//!
//! The Pods are made from real ones (`tests/src/pods.rs`): the Pods of the
//! recorded cluster (`examples/cluster-recording.jsonl`, or the file named by
//! `GRW_BENCH_RECORDING`) are templates whose names, uids, labels, owners,
//! node, IPs, container ids and resourceVersions are varied. Field layout,
//! managedFields and sizes are therefore those an API server really sends.
//!
//! The load from bytes is then timed [`INGEST_ROUNDS`] times more, each into
//! a new store from JSON made ahead, and the report gives the median: the
//! first load makes each Pod just before storing it, which mixes the
//! generator's work into the store's: two single loads of one build
//! differed by half.
//!
//! Every load runs in a child process: this executable started again with
//! `--child <store> <input> <n>`, answering with one JSON line on stdout. Its
//! resident set is read before and after the load, so the difference is what
//! holding N objects costs, and no other store's freed memory or allocator
//! state can hide in it.

mod common;
// The generator the daemon benchmark (`tests/benches/daemon.rs`) loads its
// fake API server with, so both measure the same Pods.
#[path = "../../tests/src/pods.rs"]
mod pods;

use std::hint::black_box;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use grw::gvk::Gvk;
use grw::query::{PageRequest, Query};
use grw::store::{Cache, ChangeType, ObjectKey, Origin, StoredObject};
use kube::api::{ApiResource, DynamicObject, GroupVersionKind};
use kube::core::{Expression, Selector};
use kube::runtime::reflector::ObjectRef;
use kube::runtime::reflector::store::{Store, Writer};
use kube::runtime::watcher::Event;
use serde_json::value::RawValue;
use serde_json::{Value, json};

use common::{cpu_model, grouped};
use pods::{PodFactory, Rng, compact_len, namespace_name, recording_path};

/// Loads from bytes timed after the first, whose median the report gives.
const INGEST_ROUNDS: usize = 5;
/// Object counts of a full run, and of a quick one.
const FULL_SIZES: &[usize] = &[10_000, 100_000];
const QUICK_SIZES: &[usize] = &[10_000];

/// The app (1%), tier (10%) and namespace (5%) the queries ask for; see `pods`.
const QUERIED_APP: usize = 7;
const QUERIED_TIER: &str = "web";
const QUERIED_NAMESPACE: usize = 7;

/// Random exact gets timed per store.
const GETS: usize = 100_000;
/// History the daemon keeps per cache by default (`eventHistorySize`).
const HISTORY: usize = 10_000;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(at) = args.iter().position(|a| a == "--child") {
        let spec = &args[at + 1..];
        assert!(spec.len() >= 3, "usage: --child <store> <input> <n>");
        child(
            StoreKind::parse(&spec[0]),
            Input::parse(&spec[1]),
            spec[2].parse().expect("object count"),
        );
        return;
    }
    let quick = args.iter().any(|a| a == "--quick")
        || std::env::var("GRW_BENCH_QUICK").is_ok_and(|v| v == "1");
    parent(if quick { QUICK_SIZES } else { FULL_SIZES });
}

// ---------------------------------------------------------------------------
// What is measured

/// A store under test, in the configuration it is measured in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StoreKind {
    /// grw's `Cache`, managedFields stripped (the daemon's default).
    Grw,
    /// grw's `Cache` keeping managedFields.
    GrwManaged,
    /// kube-runtime reflector store as it comes: managedFields kept.
    Kube,
    /// kube-runtime reflector store, managedFields cleared before storing.
    KubeStripped,
}

impl StoreKind {
    const ALL: [StoreKind; 4] = [
        StoreKind::Grw,
        StoreKind::GrwManaged,
        StoreKind::Kube,
        StoreKind::KubeStripped,
    ];

    fn name(self) -> &'static str {
        match self {
            StoreKind::Grw => "grw",
            StoreKind::GrwManaged => "grw-managed",
            StoreKind::Kube => "kube",
            StoreKind::KubeStripped => "kube-stripped",
        }
    }

    fn parse(s: &str) -> StoreKind {
        StoreKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .unwrap_or_else(|| panic!("unknown store {s}"))
    }

    /// How the report names it.
    fn label(self) -> &'static str {
        match self {
            StoreKind::Grw => "grw `Cache` (managedFields stripped, default)",
            StoreKind::GrwManaged => "grw `Cache` (managedFields kept)",
            StoreKind::Kube => {
                "kube reflector `Store<DynamicObject>` (managedFields kept, default)"
            }
            StoreKind::KubeStripped => {
                "kube reflector `Store<DynamicObject>` (managedFields stripped)"
            }
        }
    }

    fn keeps_managed_fields(self) -> bool {
        matches!(self, StoreKind::GrwManaged | StoreKind::Kube)
    }
}

/// What each object is handed to the store as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Input {
    /// An already parsed `serde_json::Value`.
    Value,
    /// Raw JSON bytes, as read from the API server: parsing is included.
    Bytes,
}

impl Input {
    fn name(self) -> &'static str {
        match self {
            Input::Value => "value",
            Input::Bytes => "bytes",
        }
    }

    fn parse(s: &str) -> Input {
        match s {
            "value" => Input::Value,
            "bytes" => Input::Bytes,
            _ => panic!("unknown input {s}"),
        }
    }
}

/// The operations compared, implemented by each store the way its users
/// would do them.
trait Subject {
    /// What a point lookup takes, built ahead of the timing.
    type Key;
    /// A prepared list query.
    type Query;

    fn ingest_value(&mut self, value: Value);
    fn ingest_bytes(&mut self, bytes: &[u8]);
    fn len(&self) -> usize;
    fn key(&self, namespace: &str, name: &str) -> Self::Key;
    /// Looks up one object and hands out a shared reference to it (dropped
    /// right away); returns whether it was found.
    fn get(&self, key: &Self::Key) -> bool;
    fn label_query(&self, key: &str, value: &str) -> Self::Query;
    fn namespace_query(&self, namespace: &str) -> Self::Query;
    /// Runs a query, collecting the matching objects; returns how many matched.
    fn run(&self, query: &Self::Query) -> usize;
    /// Compact JSON bytes the store holds, when it holds JSON.
    fn stored_json_bytes(&self) -> Option<usize>;
}

struct GrwSubject {
    cache: Cache,
    gvk: Gvk,
    keep_managed_fields: bool,
}

impl GrwSubject {
    fn new(keep_managed_fields: bool) -> Self {
        let gvk = Gvk::new("", "v1", "Pod");
        GrwSubject {
            cache: Cache::new(gvk.clone(), HISTORY),
            gvk,
            keep_managed_fields,
        }
    }
}

impl Subject for GrwSubject {
    type Key = ObjectKey;
    type Query = Query;

    fn ingest_value(&mut self, value: Value) {
        let object = StoredObject::from_value(value, &self.gvk, self.keep_managed_fields)
            .expect("generated pods are valid objects");
        // The first list of a watch goes in as ADDED changes from the initial list.
        self.cache.apply(ChangeType::Added, object, Origin::Initial);
    }

    /// As a watch stores what it received: the text, checked by
    /// `RawValue`, stored by `from_raw` without building a `Value`.
    fn ingest_bytes(&mut self, bytes: &[u8]) {
        let raw: &RawValue = serde_json::from_slice(bytes).expect("generated pods are JSON");
        let object = StoredObject::from_raw(raw, &self.gvk, self.keep_managed_fields)
            .expect("generated pods are valid objects");
        self.cache.apply(ChangeType::Added, object, Origin::Initial);
    }

    fn len(&self) -> usize {
        self.cache.read().len()
    }

    fn key(&self, namespace: &str, name: &str) -> ObjectKey {
        ObjectKey::new(namespace, name)
    }

    fn get(&self, key: &ObjectKey) -> bool {
        // Clone the Arc as the reflector's `get` does, so both hand out an owned handle.
        let object = self.cache.read().get(key).cloned();
        black_box(object).is_some()
    }

    fn label_query(&self, key: &str, value: &str) -> Query {
        Query {
            labels: format!("{key}={value}").parse().expect("valid selector"),
            ..Query::default()
        }
    }

    fn namespace_query(&self, namespace: &str) -> Query {
        Query {
            namespace: Some(namespace.to_string()),
            ..Query::default()
        }
    }

    fn run(&self, query: &Query) -> usize {
        let page = query.run(&self.cache.read(), &PageRequest::default());
        black_box(page.items).len()
    }

    fn stored_json_bytes(&self) -> Option<usize> {
        let view = self.cache.read();
        Some(view.iter_after(None).map(|o| o.json().len()).sum())
    }
}

struct KubeSubject {
    writer: Writer<DynamicObject>,
    reader: Store<DynamicObject>,
    resource: ApiResource,
    strip_managed_fields: bool,
}

impl KubeSubject {
    fn new(strip_managed_fields: bool) -> Self {
        let resource = ApiResource::from_gvk(&GroupVersionKind::gvk("", "v1", "Pod"));
        let writer = Writer::<DynamicObject>::new(resource.clone());
        let reader = writer.as_reader();
        KubeSubject {
            writer,
            reader,
            resource,
            strip_managed_fields,
        }
    }

    fn apply(&mut self, mut object: DynamicObject) {
        if self.strip_managed_fields {
            // What `watcher(..).modify(|o| o.managed_fields_mut().clear())` does,
            // the usual way to keep them out of a reflector.
            object.metadata.managed_fields = None;
        }
        // The writer stores a clone of the event's object; the event is dropped here.
        self.writer.apply_watcher_event(&Event::Apply(object));
    }
}

/// A prepared query on the reflector: it has no indexes, so both kinds scan.
enum KubeQuery {
    Labels(Selector),
    Namespace(String),
}

impl Subject for KubeSubject {
    type Key = ObjectRef<DynamicObject>;
    type Query = KubeQuery;

    fn ingest_value(&mut self, value: Value) {
        let object: DynamicObject =
            serde_json::from_value(value).expect("generated pods deserialize");
        self.apply(object);
    }

    fn ingest_bytes(&mut self, bytes: &[u8]) {
        let object: DynamicObject =
            serde_json::from_slice(bytes).expect("generated pods deserialize");
        self.apply(object);
    }

    fn len(&self) -> usize {
        self.reader.len()
    }

    fn key(&self, namespace: &str, name: &str) -> ObjectRef<DynamicObject> {
        // `ObjectRef::new` needs a default dynamic type; `DynamicObject`'s is the ApiResource.
        ObjectRef::new_with(name, self.resource.clone()).within(namespace)
    }

    fn get(&self, key: &ObjectRef<DynamicObject>) -> bool {
        black_box(self.reader.get(key)).is_some()
    }

    fn label_query(&self, key: &str, value: &str) -> KubeQuery {
        KubeQuery::Labels(Expression::Equal(key.into(), value.into()).into())
    }

    fn namespace_query(&self, namespace: &str) -> KubeQuery {
        KubeQuery::Namespace(namespace.to_string())
    }

    fn run(&self, query: &KubeQuery) -> usize {
        let hits = match query {
            KubeQuery::Labels(selector) => self.reader.state_filter_selector(selector),
            KubeQuery::Namespace(ns) => self
                .reader
                .state_filter(|o| o.metadata.namespace.as_deref() == Some(ns.as_str())),
        };
        black_box(hits).len()
    }

    fn stored_json_bytes(&self) -> Option<usize> {
        None
    }
}

// ---------------------------------------------------------------------------
// Child: one load of one store, then reads on it

fn child(store: StoreKind, input: Input, n: usize) {
    let pods = PodFactory::load();
    let result = match store {
        StoreKind::Grw => measure(|| GrwSubject::new(false), &pods, input, n),
        StoreKind::GrwManaged => measure(|| GrwSubject::new(true), &pods, input, n),
        StoreKind::Kube => measure(|| KubeSubject::new(false), &pods, input, n),
        StoreKind::KubeStripped => measure(|| KubeSubject::new(true), &pods, input, n),
    };
    println!("{result}");
}

/// Times of loading the same `n` Pods, as compact JSON made ahead, into a
/// new subject, [`INGEST_ROUNDS`] times. Unlike the first load, no Pod is
/// generated between two ingests, so neither the generator's work nor its
/// use of the CPU caches is mixed into the store's.
fn ingest_rounds<S: Subject>(new: impl Fn() -> S, pods: &PodFactory, n: usize) -> Vec<f64> {
    let inputs: Vec<Vec<u8>> = (0..n)
        .map(|i| serde_json::to_vec(&pods.pod(i)).expect("pods serialize"))
        .collect();
    (0..INGEST_ROUNDS)
        .map(|_| {
            let mut subject = new();
            let start = Instant::now();
            for bytes in &inputs {
                subject.ingest_bytes(bytes);
            }
            let secs = start.elapsed().as_secs_f64();
            assert_eq!(subject.len(), n);
            secs
        })
        .collect()
}

/// Loads `n` pods into a new subject, timing only the store's own work, then
/// (for the parsed-`Value` load) times reads, or (from bytes) loads the same
/// bytes into new subjects [`INGEST_ROUNDS`] times more. Returns the figures
/// as JSON.
fn measure<S: Subject>(new: impl Fn() -> S, pods: &PodFactory, input: Input, n: usize) -> Value {
    let mut subject = new();
    // Generate and drop one pod first, so that the baseline already includes
    // whatever the generator itself keeps allocated.
    drop(serde_json::to_vec(&pods.pod(0)));
    let rss_before = rss_bytes();

    // Pods are generated one at a time, outside the timed part, and handed
    // over at once: at most one input object is alive besides the store, as
    // when objects arrive from a watch, so the resident set after the load is
    // the store's and not a buffer of inputs.
    let mut ingest = Duration::ZERO;
    for i in 0..n {
        let pod = pods.pod(i);
        match input {
            Input::Value => {
                let start = Instant::now();
                subject.ingest_value(pod);
                ingest += start.elapsed();
            }
            Input::Bytes => {
                let bytes = serde_json::to_vec(&pod).expect("pods serialize");
                drop(pod);
                let start = Instant::now();
                subject.ingest_bytes(&bytes);
                ingest += start.elapsed();
            }
        }
    }
    let rss_after = rss_bytes();
    assert_eq!(subject.len(), n, "every generated pod has its own name");

    let mut out = json!({
        "objects": n,
        "rss_before": rss_before,
        "rss_after": rss_after,
        "ingest_secs": ingest.as_secs_f64(),
        "stored_json_bytes": subject.stored_json_bytes(),
    });
    if input == Input::Bytes {
        drop(subject);
        out["ingest_rounds_secs"] = ingest_rounds(new, pods, n).into();
        return out;
    }

    // Exact gets of random existing pods; keys are built before timing.
    let mut rng = Rng::new(0x6e75_6d62_6572);
    let keys: Vec<S::Key> = (0..GETS)
        .map(|_| {
            let shape = pods.shape(rng.below(n));
            subject.key(&shape.namespace, &shape.name)
        })
        .collect();
    for key in keys.iter().take(1_000) {
        black_box(subject.get(key));
    }
    let mut gets = Vec::with_capacity(keys.len());
    for key in &keys {
        let start = Instant::now();
        let hit = subject.get(key);
        gets.push(start.elapsed());
        assert!(hit, "every key names a loaded pod");
    }
    drop(keys);

    let app = pods.app_name(QUERIED_APP);
    let one_percent = subject.label_query("app", &app);
    let ten_percent = subject.label_query("tier", QUERIED_TIER);
    let namespace = subject.namespace_query(&namespace_name(QUERIED_NAMESPACE));
    let (sel1, sel1_hits) = repeat(|| subject.run(&one_percent), 1_000);
    let (sel10, sel10_hits) = repeat(|| subject.run(&ten_percent), 200);
    let (ns, ns_hits) = repeat(|| subject.run(&namespace), 200);

    let fields = out.as_object_mut().expect("an object");
    fields.insert("get".into(), stats(gets));
    fields.insert("sel1".into(), stats(sel1));
    fields.insert("sel1_hits".into(), sel1_hits.into());
    fields.insert("sel10".into(), stats(sel10));
    fields.insert("sel10_hits".into(), sel10_hits.into());
    fields.insert("ns".into(), stats(ns));
    fields.insert("ns_hits".into(), ns_hits.into());
    out
}

/// Times `run` up to `max` times (after one untimed run), stopping early
/// after two seconds; the slow scans of large stores get fewer samples.
fn repeat(mut run: impl FnMut() -> usize, max: usize) -> (Vec<Duration>, usize) {
    let hits = run();
    let budget = Instant::now();
    let mut samples = Vec::with_capacity(max);
    while samples.len() < max && (samples.len() < 10 || budget.elapsed() < Duration::from_secs(2)) {
        let start = Instant::now();
        let n = run();
        samples.push(start.elapsed());
        assert_eq!(n, hits, "a query returns the same objects every time");
    }
    (samples, hits)
}

/// Mean and 99th percentile in microseconds, with the sample count.
fn stats(mut samples: Vec<Duration>) -> Value {
    samples.sort_unstable();
    let micros = |d: Duration| d.as_secs_f64() * 1e6;
    let mean = samples.iter().map(|d| micros(*d)).sum::<f64>() / samples.len() as f64;
    let p99 = samples[(samples.len() * 99).div_ceil(100) - 1];
    json!({"mean_us": mean, "p99_us": micros(p99), "samples": samples.len()})
}

/// Resident set size of this process, from `/proc/self/statm`.
fn rss_bytes() -> u64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: u64 = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .expect("statm's second field counts resident pages");
    pages * page_size()
}

/// The page size, from the auxiliary vector the kernel handed this process
/// (`AT_PAGESZ`); statm counts in pages and pages are not 4 KiB everywhere.
fn page_size() -> u64 {
    const AT_PAGESZ: u64 = 6;
    let auxv = std::fs::read("/proc/self/auxv").unwrap_or_default();
    auxv.chunks_exact(16)
        .map(|entry| {
            let word = |b: &[u8]| u64::from_ne_bytes(b.try_into().expect("8 bytes"));
            (word(&entry[..8]), word(&entry[8..]))
        })
        .find(|(key, _)| *key == AT_PAGESZ)
        .map_or(4096, |(_, value)| value)
}

// ---------------------------------------------------------------------------
// Parent: input statistics, one child per measurement, the report

/// Sizes of the generated input, compact JSON.
struct InputStats {
    objects: usize,
    with_managed: usize,
    stripped: usize,
    smallest: usize,
    largest: usize,
}

fn input_stats(pods: &PodFactory, n: usize) -> InputStats {
    let mut stats = InputStats {
        objects: n,
        with_managed: 0,
        stripped: 0,
        smallest: usize::MAX,
        largest: 0,
    };
    for i in 0..n {
        let mut pod = pods.pod(i);
        let full = compact_len(&pod);
        stats.with_managed += full;
        stats.smallest = stats.smallest.min(full);
        stats.largest = stats.largest.max(full);
        if let Some(meta) = pod["metadata"].as_object_mut() {
            meta.remove("managedFields");
        }
        stats.stripped += compact_len(&pod);
    }
    stats
}

/// One table row: a store at one size.
struct Row {
    store: StoreKind,
    json_per_object: f64,
    loaded: Value,
    from_bytes: Value,
}

fn run_child(store: StoreKind, input: Input, n: usize) -> Value {
    eprintln!("  {} from {}, {n} objects…", store.name(), input.name());
    // `/proc/self/exe` names the very file this process runs, even if a build
    // in the same target directory replaces the path meanwhile: every child
    // then runs the same code as the parent.
    let proc_exe = PathBuf::from("/proc/self/exe");
    let exe = if proc_exe.exists() {
        proc_exe
    } else {
        std::env::current_exe().expect("own executable")
    };
    let output = Command::new(exe)
        .args(["--child", store.name(), input.name(), &n.to_string()])
        .stderr(Stdio::inherit())
        .output()
        .expect("start child");
    assert!(
        output.status.success(),
        "child {store:?}/{input:?}/{n} failed"
    );
    let stdout = String::from_utf8_lossy(&output.stdout);
    let line = stdout.lines().last().expect("child printed its result");
    serde_json::from_str(line).expect("child result is JSON")
}

fn parent(sizes: &[usize]) {
    let pods = PodFactory::load();
    eprintln!(
        "{} pod templates from {}",
        pods.templates.len(),
        recording_path().display()
    );
    let mut inputs = Vec::new();
    let mut rows: Vec<(usize, Row)> = Vec::new();
    for &n in sizes {
        eprintln!("{n} pods:");
        let stats = input_stats(&pods, n);
        for store in StoreKind::ALL {
            let loaded = run_child(store, Input::Value, n);
            let from_bytes = run_child(store, Input::Bytes, n);
            let json_total = if store.keeps_managed_fields() {
                stats.with_managed
            } else {
                stats.stripped
            };
            rows.push((
                n,
                Row {
                    store,
                    json_per_object: json_total as f64 / n as f64,
                    loaded,
                    from_bytes,
                },
            ));
        }
        inputs.push(stats);
    }
    print_report(&inputs, &rows);
}

fn print_report(inputs: &[InputStats], rows: &[(usize, Row)]) {
    let (cpu, cores, memory) = machine();
    println!(
        "Machine: {cpu}, {cores} logical CPUs, {memory} RAM; date {}.",
        today()
    );
    println!();
    println!("Input (compact JSON):");
    println!();
    println!(
        "| objects | total with managedFields | mean bytes/object | smallest–largest | total stripped | mean bytes/object stripped |"
    );
    println!("|---:|---:|---:|---:|---:|---:|");
    for s in inputs {
        println!(
            "| {} | {:.1} MB | {} | {}–{} | {:.1} MB | {} |",
            grouped(s.objects as f64),
            s.with_managed as f64 / 1e6,
            grouped(s.with_managed as f64 / s.objects as f64),
            grouped(s.smallest as f64),
            grouped(s.largest as f64),
            s.stripped as f64 / 1e6,
            grouped(s.stripped as f64 / s.objects as f64),
        );
    }
    println!();
    println!(
        "| store | objects | JSON bytes/object | RSS bytes/object | RSS/JSON | ingest obj/s (from Value) | ingest obj/s (from bytes, median of {INGEST_ROUNDS}) | get mean / p99 µs | label 1% mean / p99 µs | label 10% mean µs | namespace 5% mean µs |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (n, row) in rows {
        let r = &row.loaded;
        let rss = (r["rss_after"].as_f64().unwrap_or(0.0)
            - r["rss_before"].as_f64().unwrap_or(0.0))
            / *n as f64;
        let rate = |v: &Value| *n as f64 / v["ingest_secs"].as_f64().unwrap_or(f64::NAN);
        let median = |v: &Value| {
            let mut rates = round_rates(v, *n);
            rates.sort_by(f64::total_cmp);
            rates.get(rates.len() / 2).copied().unwrap_or(f64::NAN)
        };
        let us = |v: &Value, field: &str| micros(v[field].as_f64().unwrap_or(f64::NAN));
        println!(
            "| {} | {} | {} | {} | {:.2} | {} | {} | {} / {} | {} / {} | {} | {} |",
            row.store.label(),
            grouped(*n as f64),
            grouped(row.json_per_object),
            grouped(rss),
            rss / row.json_per_object,
            grouped(rate(r)),
            grouped(median(&row.from_bytes)),
            us(&r["get"], "mean_us"),
            us(&r["get"], "p99_us"),
            us(&r["sel1"], "mean_us"),
            us(&r["sel1"], "p99_us"),
            us(&r["sel10"], "mean_us"),
            us(&r["ns"], "mean_us"),
        );
    }
    println!();
    println!("Details per run:");
    println!();
    for (n, row) in rows {
        let (r, b) = (&row.loaded, &row.from_bytes);
        let per_object = |v: &Value| {
            (v["rss_after"].as_f64().unwrap_or(0.0) - v["rss_before"].as_f64().unwrap_or(0.0))
                / *n as f64
        };
        let stored = match r["stored_json_bytes"].as_f64() {
            Some(bytes) => format!(", stored JSON {} B/object", grouped(bytes / *n as f64)),
            None => String::new(),
        };
        println!(
            "- {} × {}: RSS {} B/object (load from bytes: {} B/object){stored}; \
             from bytes {} obj/s in the first load, then {}; \
             hits 1% {} / 10% {} / namespace {}; samples get {}, 1% {}, 10% {}, namespace {}",
            row.store.name(),
            grouped(*n as f64),
            grouped(per_object(r)),
            grouped(per_object(b)),
            grouped(*n as f64 / b["ingest_secs"].as_f64().unwrap_or(f64::NAN)),
            round_rates(b, *n)
                .iter()
                .map(|r| grouped(*r))
                .collect::<Vec<_>>()
                .join(" / "),
            r["sel1_hits"],
            r["sel10_hits"],
            r["ns_hits"],
            r["get"]["samples"],
            r["sel1"]["samples"],
            r["sel10"]["samples"],
            r["ns"]["samples"],
        );
    }
}

/// Objects per second of each load timed after the first.
fn round_rates(v: &Value, n: usize) -> Vec<f64> {
    v["ingest_rounds_secs"]
        .as_array()
        .map(|secs| {
            secs.iter()
                .filter_map(Value::as_f64)
                .map(|s| n as f64 / s)
                .collect()
        })
        .unwrap_or_default()
}

/// A duration in µs with as many decimals as are meaningful.
fn micros(us: f64) -> String {
    if us < 10.0 {
        format!("{us:.2}")
    } else if us < 1000.0 {
        format!("{us:.1}")
    } else {
        grouped(us)
    }
}

/// CPU model, logical CPU count and total memory.
fn machine() -> (String, usize, String) {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpu_model();
    let cores = cpuinfo
        .lines()
        .filter(|l| l.starts_with("processor"))
        .count();
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory = meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or("unknown".to_string(), |kb| {
            format!("{:.0} GiB", kb / 1024.0 / 1024.0)
        });
    (model, cores, memory)
}

/// Today's UTC date as YYYY-MM-DD.
fn today() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    // Days since 1970-01-01 to a civil date (proleptic Gregorian calendar),
    // counting in 400-year eras that start on March 1st.
    let z = (secs / 86_400) as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
