//! CEL conditions: what a `matchConditions` adds to a subscription's
//! decision about one Pod change, and how fast the running daemon answers
//! a `match=` over 10,000 Pods.
//!
//! Run:
//!
//! ```text
//! cargo build --release -p grw --bin grw
//! cargo bench -p grw-e2e --bench cel              # both parts
//! cargo bench -p grw-e2e --bench cel -- decision  # or `query`, `daemon`
//! ```
//!
//! - **decision**: real Pods of the recording (`grw_e2e::pods`), without
//!   their managedFields as GRW keeps and announces them (~3.4 KB of JSON),
//!   2,000 of them, each as a MODIFIED whose new state has one more restart.
//!   Each expression is evaluated on every change 10 times over
//!   (`Condition::on_change`: the JSON read lazily), one evaluation timed at
//!   a time; p50 and p99. Beside it, the same expression evaluated after
//!   converting both states into CEL values first (`serde_json` then
//!   `cel::to_value`), as a reader without lazy values would.
//! - **query**: the same Pods, 10,000, in a cache as the daemon keeps
//!   them (compressed with the cache's dictionary), queried in the process
//!   with `Query::collect` and `Query::finish` (what the query pool runs),
//!   beside a pass that only decompresses every Pod: what reading the
//!   objects costs before any expression. Each expression twice: asked for
//!   the first time (a program compiled afresh for each pass, with no
//!   answer kept), and asked again (the answers of the first ask kept).
//! - **daemon**: `fake-apiserver --pods 10000` as a process, the release
//!   `grw` (`GRW_BIN`, else target/release/grw) watching v1 Pods. Once
//!   ready and settled (its CPU under 5% of a core over half a second: the
//!   relations engine has analysed the first list), each query is asked 40
//!   times in turn by curl, one at a time;
//!   p50 and p99 of the whole request. Beside the `match=` queries: a field
//!   selector on a field no index holds (`spec.schedulerName`) that no Pod
//!   matches, which reads every object as a `match=` does and answers as
//!   little, and the same `match=` narrowed first
//!   by a label selector (one app: 1% of the Pods). Each `match=` asked
//!   for the first time (each ask another text, `&& N >= 0` added) and
//!   asked again (the answers kept of unchanged Pods used). All of it twice: with
//!   the scan helpers (the default) and without (`queries.scanHelpers: 0`).

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

use common::{Args, cpu_model};
use grw::cel::{Condition, Scope};
use grw::event::ChangeType;
use grw_e2e::pods::PodFactory;
use procs::{grw_binary, start_fake, start_grw_with, timed_download, wait_settled};
use serde_json::{Value, json};

const CHANGES: usize = 2_000;
const ROUNDS: usize = 10;
const PODS: usize = 10_000;
const ASKED: usize = 40;

const RESTARTS: &str = "object.status.containerStatuses.exists(c, c.restartCount > 5)";
const LABELS: &str =
    "object.metadata.namespace.startsWith('team-') && object.metadata.labels['tier'] == 'web'";
const RESTARTED: &str = "type == 'MODIFIED' && \
    object.status.containerStatuses[0].restartCount > oldObject.status.containerStatuses[0].restartCount";
const MEMORY: &str = "object.spec.containers.exists(c, has(c.resources) && has(c.resources.limits) && \
    has(c.resources.limits.memory) && quantity(c.resources.limits.memory).isGreaterThan(quantity('512Mi')))";
const NETWORK: &str =
    "has(object.status.podIP) && cidr('10.64.0.0/22').containsIP(object.status.podIP)";
const VERSION: &str = "has(object.metadata.labels.version) && \
    semver(object.metadata.labels.version).isLessThan(semver('1.6.0'))";

fn main() {
    let args = Args::from_env();
    println!(
        "# CEL conditions\n\n{}, {} logical CPUs; {}",
        cpu_model(),
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        grw::time::rfc3339(SystemTime::now().duration_since(UNIX_EPOCH).unwrap())
    );
    if args.wants("decision") {
        decision();
    }
    if args.wants("query") {
        query();
    }
    if args.wants("daemon") {
        let fake = PathBuf::from(env!("CARGO_BIN_EXE_fake-apiserver"));
        daemon(&fake, &grw_binary());
    }
}

fn percentiles(mut samples: Vec<f64>) -> (f64, f64) {
    samples.sort_by(f64::total_cmp);
    let at = |p: f64| samples[((samples.len() - 1) as f64 * p).round() as usize];
    (at(0.5), at(0.99))
}

/// One restart more in every container's status.
fn restarted(pod: &Value) -> Value {
    let mut new = pod.clone();
    for status in new["status"]["containerStatuses"]
        .as_array_mut()
        .into_iter()
        .flatten()
    {
        let count = status["restartCount"].as_i64().unwrap_or(0);
        status["restartCount"] = json!(count + 1);
    }
    new
}

fn decision() {
    let factory = PodFactory::load();
    let changes: Vec<(Vec<u8>, Vec<u8>)> = (0..CHANGES)
        .map(|i| {
            // As GRW keeps objects, and so announces changes: without
            // managedFields (`keepManagedFields: false`).
            let mut old = factory.pod(i);
            if let Some(meta) = old["metadata"].as_object_mut() {
                meta.remove("managedFields");
            }
            let new = restarted(&old);
            (
                serde_json::to_vec(&new).unwrap(),
                serde_json::to_vec(&old).unwrap(),
            )
        })
        .collect();
    let mean_bytes = changes.iter().map(|(n, _)| n.len()).sum::<usize>() / CHANGES;
    println!(
        "\n## One decision\n\n{CHANGES} Pod changes, {mean_bytes} bytes of JSON each on average, each evaluated {ROUNDS} times.\n"
    );
    println!(
        "| expression | true for | lazy p50 µs | lazy p99 µs | converted first p50 µs | converted first p99 µs |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    for (label, text) in [
        ("restarts", RESTARTS),
        ("namespace and label", LABELS),
        ("restarted in this change", RESTARTED),
        ("a memory limit over 512Mi", MEMORY),
        ("an address in a network", NETWORK),
        ("a version label below 1.6", VERSION),
    ] {
        let condition = Condition::compile(text, Scope::Change).unwrap();
        let mut lazy = Vec::with_capacity(CHANGES * ROUNDS);
        let mut matched = 0;
        for round in 0..ROUNDS {
            for (new, old) in &changes {
                let started = Instant::now();
                let answer = condition.on_change(ChangeType::Modified, new, Some(old));
                lazy.push(started.elapsed().as_secs_f64() * 1e6);
                if round == 0 && answer == Ok(true) {
                    matched += 1;
                }
            }
        }
        let program = cel::Program::compile(text).unwrap();
        let mut converted = Vec::with_capacity(CHANGES * ROUNDS);
        // Plain cel has none of Kubernetes' libraries: nothing to compare with.
        let convertible = !["quantity(", "cidr(", "semver("]
            .iter()
            .any(|f| text.contains(f));
        for _ in 0..ROUNDS * usize::from(convertible) {
            for (new, old) in &changes {
                let started = Instant::now();
                let mut context = cel::Context::default();
                let object: Value = serde_json::from_slice(new).unwrap();
                let old_object: Value = serde_json::from_slice(old).unwrap();
                context.add_variable_from_value("object", cel::to_value(object).unwrap());
                context.add_variable_from_value("oldObject", cel::to_value(old_object).unwrap());
                context.add_variable_from_value("type", "MODIFIED");
                let answer = program.execute(&context);
                converted.push(started.elapsed().as_secs_f64() * 1e6);
                std::hint::black_box(answer).ok();
            }
        }
        let (lazy50, lazy99) = percentiles(lazy);
        let (conv50, conv99) = match convertible {
            true => {
                let (p50, p99) = percentiles(converted);
                (format!("{p50:.1}"), format!("{p99:.1}"))
            }
            false => ("–".into(), "–".into()),
        };
        println!(
            "| {label}: `{text}` | {matched} of {CHANGES} | {lazy50:.2} | {lazy99:.2} | {conv50} | {conv99} |"
        );
    }
}

/// Where a `match=` over 10,000 Pods spends its time, in the process: the
/// cache's objects (compressed with its dictionary, as the daemon keeps
/// them) decompressed, then the expression evaluated.
fn query() {
    use grw::gvk::Gvk;
    use grw::query::{Budget, PageRequest, Query};
    use grw::store::{Cache, Ingest, Origin, StoredObject};
    use std::sync::Arc;

    let factory = PodFactory::load();
    let gvk = Gvk::new("", "v1", "Pod");
    let objects: Vec<StoredObject> = (0..PODS)
        .map(|i| StoredObject::from_value(factory.pod(i), &gvk, Ingest::default()).unwrap())
        .collect();
    let cache = Cache::new(gvk.clone(), 1000);
    cache.replace(objects, "1", Origin::Initial);
    let all: Vec<Arc<StoredObject>> = {
        let view = cache.read();
        view.iter_after(None).cloned().collect()
    };
    let json_bytes = all.iter().map(|o| o.json_len()).sum::<usize>() / all.len();
    let compression = cache.compression();
    assert!(
        compression.trainings > 0,
        "the cache trained no dictionary: its objects are not compressed as the daemon's are"
    );
    println!(
        "\n## `match=` over {PODS} Pods, in the process\n\n{json_bytes} bytes of JSON per Pod (managedFields stripped, as GRW keeps them), compressed to {:.0}% with the cache's dictionary. 20 runs each; p50 and p99 of a whole pass.\n",
        compression.ratio.unwrap_or(1.0) * 100.0
    );
    println!("| pass | p50 ms | p99 ms | per Pod µs (p50) |");
    println!("|---|---:|---:|---:|");
    let row = |label: &str, pass: &mut dyn FnMut() -> usize| {
        let mut times = Vec::new();
        let mut found = 0;
        for _ in 0..20 {
            let started = Instant::now();
            found = pass();
            times.push(started.elapsed().as_secs_f64() * 1e3);
        }
        let (p50, p99) = percentiles(times);
        println!(
            "| {label} ({found}) | {p50:.1} | {p99:.1} | {:.2} |",
            p50 * 1e3 / PODS as f64
        );
    };
    row("decompress every Pod", &mut || {
        all.iter()
            .map(|o| o.json().len())
            .filter(|n| *n > 0)
            .count()
    });
    let run = |condition: &Arc<Condition>| {
        let query = Query {
            condition: Some(condition.clone()),
            ..Query::default()
        };
        let page = PageRequest::default();
        let collected = query.collect(&cache.read(), &page, false);
        query
            .finish(collected, &page, &mut Budget::unlimited())
            .unwrap()
            .items
            .len()
    };
    for text in [
        RESTARTS,
        "object.spec.containers.exists(c, c.image.contains(':1.'))",
        "object.metadata.labels['tier'] == 'web'",
    ] {
        // First asks: each pass a program of its own, with no answer kept.
        row(
            &format!("`{text}`, the whole query, first ask"),
            &mut || run(&Arc::new(Condition::compile(text, Scope::Object).unwrap())),
        );
        let condition = Arc::new(Condition::compile(text, Scope::Object).unwrap());
        run(&condition);
        row(&format!("`{text}`, asked again"), &mut || run(&condition));
    }
}

fn daemon(fake_bin: &Path, grw_bin: &Path) {
    let (_fake, api_url) = start_fake(fake_bin, PODS, None);
    println!(
        "\n## `match=` over {PODS} Pods, the running daemon\n\ngrw {}. Each query asked {ASKED} times, one at a time.\n",
        grw_bin.display(),
    );
    // The default (scan helpers: one fewer than the cores), then without.
    for helpers in [None, Some(0)] {
        let mut config =
            json!({"initialWatchingResources": [{"group": "", "version": "v1", "kind": "Pod"}]});
        if let Some(helpers) = helpers {
            config["queries"] = json!({"scanHelpers": helpers});
        }
        let mut grw = start_grw_with(grw_bin, &api_url, config);
        let ready = grw.wait_ready(Duration::from_secs(300));
        let settled = wait_settled(grw.pid());
        println!(
            "\n`queries.scanHelpers`: {}; ready in {:.1} s, settled {:.1} s after.\n",
            helpers.map_or("default".to_string(), |h| h.to_string()),
            ready.as_secs_f64(),
            settled.as_secs_f64()
        );
        ask_match_queries(&grw);
    }
}

fn ask_match_queries(grw: &procs::Daemon) {
    let factory = PodFactory::load();
    let app = factory.app_name(0);
    println!("| query | items | p50 ms | p99 ms |");
    println!("|---|---:|---:|---:|");
    let encode = |text: &str| -> String {
        text.bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'-' | b'_' | b'.' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect()
    };
    const IMAGES: &str = "object.spec.containers.exists(c, c.image.contains(':1.'))";
    // An expression asked for the first time: each ask another text (the
    // same condition and `&& N >= 0`), so none finds answers kept.
    let first = |text: &str| -> Box<dyn Fn(usize) -> String> {
        let text = text.to_string();
        Box::new(move |i| {
            format!(
                "/api/v1/objects/pods?match={}",
                encode(&format!("{text} && {i} >= 0"))
            )
        })
    };
    let again = |path: String| -> Box<dyn Fn(usize) -> String> { Box::new(move |_| path.clone()) };
    let queries = [
        (
            "fieldSelector on a field no index holds, matching none (reads every Pod)".to_string(),
            again("/api/v1/objects/pods?fieldSelector=spec.schedulerName%3Dnone".to_string()),
        ),
        (
            format!("match=`{RESTARTS}`, first ask of the expression"),
            first(RESTARTS),
        ),
        (
            format!("match=`{RESTARTS}`, asked again"),
            again(format!("/api/v1/objects/pods?match={}", encode(RESTARTS))),
        ),
        (
            format!("match=`{IMAGES}`, first ask of the expression"),
            first(IMAGES),
        ),
        (
            format!("match=`{IMAGES}`, asked again"),
            again(format!("/api/v1/objects/pods?match={}", encode(IMAGES))),
        ),
        (
            format!("labelSelector=app={app} (1%), then match=`{RESTARTS}`"),
            again(format!(
                "/api/v1/objects/pods?labelSelector=app%3D{app}&match={}",
                encode(RESTARTS)
            )),
        ),
        (
            format!("labelSelector=app={app} (1%) alone"),
            again(format!("/api/v1/objects/pods?labelSelector=app%3D{app}")),
        ),
    ];
    for (label, path) in queries {
        // The first ask (not timed) counts the items; a fresh expression's
        // texts start after it.
        let url = format!("{}{}", grw.url(), path(ASKED));
        let body = procs::curl(&url).unwrap_or_else(|e| panic!("GET {url}: {e}"));
        let answer: Value = serde_json::from_slice(&body).unwrap();
        let items = answer["items"]
            .as_array()
            .unwrap_or_else(|| panic!("{url}: {answer}"))
            .len();
        let times: Vec<f64> = (0..ASKED)
            .map(|i| timed_download(&format!("{}{}", grw.url(), path(i))).0 * 1e3)
            .collect();
        let (p50, p99) = percentiles(times);
        println!("| {label} | {items} | {p50:.1} | {p99:.1} |");
    }
}
