//! Plugin costs: compile and cached load of the shipped plugins, per-event
//! cost of the label filter and the field filter as WebAssembly components
//! against the same code compiled natively (1 KB and 8 KB Pods), and reload
//! latency from file write to the new version serving; and how much of a
//! Python or JavaScript compile reuses the functions of compiles before it.
//!
//! Run: `cargo bench -p grw --bench plugin` (builds the plugins in release
//! for wasm32-wasip2 first). `-- --quick` runs fewer iterations; naming
//! parts (`-- load per-event reload`) runs only those.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

use grw::config::AllowedHosts;
use grw::gvk::Gvk;
use grw::metrics::Metrics;
use grw::plugin::{ArtifactCache, Limits, Manifest, Plugin, PluginEngine, Plugins};
use grw::store::{Change, StoredObject};
use grw_plugin_field_filter::FieldFilter;
use grw_plugin_label_filter::LabelFilter;
use grw_sdk::{Event, EventType, Filter, ObjectSource, Origin};
use serde_json::{Value, json};

use common::{Args, cpu_model};

const PLUGINS: [&str; 5] = [
    "grw-plugin-namespace-filter",
    "grw-plugin-label-filter",
    "grw-plugin-changed-fields",
    "grw-plugin-field-filter",
    "grw-plugin-restart-filter",
];
const SELECTOR: &str = r#"{"selector": "app in (web,api),tier!=cache"}"#;
const PHASE: &str = r#"{"path": "status.phase", "in": ["Running", "Pending"]}"#;

fn main() {
    let args = Args::from_env();
    let wasm_dir = build_plugins();
    let wasm = |package: &str| {
        std::fs::read(wasm_dir.join(format!("{}.wasm", package.replace('-', "_"))))
            .expect("plugin built")
    };
    println!(
        "machine: {}, {} logical CPUs",
        cpu_model(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "date: {}",
        grw::time::rfc3339(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
        )
    );

    if args.wants("load") {
        compile_and_load(&wasm);
    }
    if args.wants("per-event") {
        per_event(&wasm, args.quick);
    }
    if args.wants("reload") {
        reload(&wasm);
    }
    if args.wants("languages") {
        languages(&wasm, args.quick);
    }
    if args.wants("reuse") {
        reuse();
    }
}

/// Python and JavaScript components compiled each on its own (no artifact
/// cache, so nothing to reuse: what every compile cost before compiled
/// functions were kept), then one after another into one artifact cache,
/// where each reuses the functions of those before it. Wall time and the
/// process's CPU time: wasmtime compiles on every core.
fn reuse() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = root.join("target/bench-reuse");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    // New versions: the restart filters with another default.
    let edited = |plugin: &str, file: &str| {
        let dir = out.join(format!("{plugin}-new"));
        std::fs::create_dir_all(&dir).unwrap();
        for entry in std::fs::read_dir(root.join("plugins").join(plugin)).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, dir.join(path.file_name().unwrap())).unwrap();
        }
        let source = std::fs::read_to_string(dir.join(file)).unwrap();
        let changed = source
            .replacen("default=1", "default=2", 1)
            .replacen("default: 1", "default: 2", 1)
            .replace(
                "../../sdk/js/grw-sdk.js",
                root.join("sdk/js/grw-sdk.js").to_str().unwrap(),
            );
        assert_ne!(source, changed, "no default to change in {plugin}/{file}");
        std::fs::write(dir.join(file), changed).unwrap();
        dir
    };
    let py_new = edited("py-restart-filter", "app.py");
    let js_new = edited("js-restart-filter", "plugin.js");
    let shipped = |plugin: &str| {
        vec![
            "bash".to_string(),
            root.join(format!("plugins/{plugin}/build.sh"))
                .display()
                .to_string(),
            out.display().to_string(),
        ]
    };
    let rows: [(&str, Vec<String>, PathBuf); 7] = [
        (
            "py-restart-filter",
            shipped("py-restart-filter"),
            out.join("py-restart-filter.wasm"),
        ),
        (
            "py-chat-notifier",
            shipped("py-chat-notifier"),
            out.join("py-chat-notifier.wasm"),
        ),
        (
            "py-ownership",
            shipped("py-ownership"),
            out.join("py-ownership.wasm"),
        ),
        (
            "py-restart-filter, new version",
            vec![
                "bash".into(),
                root.join("sdk/python/build-component.sh")
                    .display()
                    .to_string(),
                "filter-plugin".into(),
                "py-restart-filter".into(),
                py_new.display().to_string(),
                out.join("new").display().to_string(),
            ],
            out.join("new/py-restart-filter.wasm"),
        ),
        (
            "js-restart-filter",
            shipped("js-restart-filter"),
            out.join("js-restart-filter.wasm"),
        ),
        (
            "js-chat-notifier",
            shipped("js-chat-notifier"),
            out.join("js-chat-notifier.wasm"),
        ),
        (
            "js-restart-filter, new version",
            vec![
                "node".into(),
                root.join("sdk/js/build.mjs").display().to_string(),
                "--world".into(),
                "filter-plugin".into(),
                "--source".into(),
                js_new.join("plugin.js").display().to_string(),
                "--out".into(),
                js_new.join("js-restart-filter.wasm").display().to_string(),
            ],
            js_new.join("js-restart-filter.wasm"),
        ),
    ];
    let mut built = Vec::new();
    for (row, command, wasm) in rows {
        if !run_build(row, &command, "run tests/setup.sh for the toolchains") {
            continue;
        }
        built.push((row, std::fs::read(wasm).unwrap()));
    }
    println!(
        "\nCompiles of Python and JavaScript components: each alone (no artifact cache), then in this order into one cache\n"
    );
    println!(
        "| component | .wasm bytes | alone: s (CPU s) | into the shared cache: s (CPU s) | functions compiled | reused |"
    );
    println!("|---|---:|---:|---:|---:|---:|");
    let alone: Vec<(Duration, Duration)> = built
        .iter()
        .map(|(_, bytes)| {
            let engine = PluginEngine::new(None).unwrap();
            timed_cpu(|| drop(engine.compile(bytes).unwrap()))
        })
        .collect();
    let cache = tempfile::tempdir().unwrap();
    let engine = PluginEngine::new(Some(ArtifactCache::new(cache.path().join("c")))).unwrap();
    for ((row, bytes), (alone, alone_cpu)) in built.iter().zip(alone) {
        let mut functions = None;
        let (shared, shared_cpu) = timed_cpu(|| {
            let compiled = engine.compile(bytes).unwrap();
            assert!(!compiled.from_cache);
            functions = Some(compiled.functions);
        });
        let functions = functions.unwrap().unwrap();
        println!(
            "| {row} | {} | {:.1} ({:.1}) | {:.1} ({:.1}) | {} | {} |",
            common::grouped(bytes.len() as f64),
            alone.as_secs_f64(),
            alone_cpu.as_secs_f64(),
            shared.as_secs_f64(),
            shared_cpu.as_secs_f64(),
            common::grouped(functions.compiled as f64),
            common::grouped(functions.reused as f64),
        );
    }
}

/// Wall time and this process's CPU time (user and system, every thread) of `f`.
fn timed_cpu(f: impl FnOnce()) -> (Duration, Duration) {
    let cpu = || {
        // SAFETY: getrusage only writes the struct it is given.
        let usage = unsafe {
            let mut usage = std::mem::zeroed::<libc::rusage>();
            libc::getrusage(libc::RUSAGE_SELF, &mut usage);
            usage
        };
        let time = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
        };
        time(usage.ru_utime) + time(usage.ru_stime)
    };
    let (started, started_cpu) = (Instant::now(), cpu());
    f();
    (started.elapsed(), cpu() - started_cpu)
}

/// The restart filter in four languages, on an 8 KB Pod that passes; and
/// the bare filters of `benches/bare`, for what each language's runtime
/// costs without the SDK.
fn languages(wasm: &dyn Fn(&str) -> Vec<u8>, quick: bool) {
    const CONFIG: &str = r#"{"minRestarts": 1}"#;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let bare = root.join("host/benches/bare");
    let out = root.join("target/bench-languages");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let out_arg = out.to_str().unwrap();
    let js_bare = |out: &str, aot: bool| {
        let mut command = vec![
            "node".into(),
            format!("{}/sdk/js/build.mjs", root.display()),
            "--world".into(),
            "filter-plugin".into(),
            "--source".into(),
            bare.join("bare.js").display().to_string(),
            "--out".into(),
            format!("{out_arg}/{out}"),
        ];
        if aot {
            command.push("--aot".into());
        }
        command
    };
    // (row, the build's command line, the .wasm it writes, config)
    let sources: [(&str, Vec<String>, &str, &str); 10] = [
        (
            "Python",
            vec![
                "bash".into(),
                format!("{}/plugins/py-restart-filter/build.sh", root.display()),
                out_arg.into(),
            ],
            "py-restart-filter.wasm",
            CONFIG,
        ),
        (
            "JavaScript",
            vec![
                "bash".into(),
                format!("{}/plugins/js-restart-filter/build.sh", root.display()),
                out_arg.into(),
            ],
            "js-restart-filter.wasm",
            CONFIG,
        ),
        (
            "JavaScript, ahead of time",
            vec![
                "bash".into(),
                format!("{}/plugins/js-restart-filter/build.sh", root.display()),
                format!("{out_arg}/aot"),
                "--aot".into(),
            ],
            "aot/js-restart-filter.wasm",
            CONFIG,
        ),
        (
            "C",
            vec![
                "bash".into(),
                format!("{}/plugins/c-restart-filter/build.sh", root.display()),
                out_arg.into(),
            ],
            "c-restart-filter.wasm",
            CONFIG,
        ),
        (
            "Python, bare bindings, reading",
            vec![
                "bash".into(),
                format!("{}/sdk/python/build-component.sh", root.display()),
                "filter-plugin".into(),
                "bare".into(),
                bare.display().to_string(),
                out_arg.into(),
            ],
            "bare.wasm",
            r#"{"read": true}"#,
        ),
        (
            "Python, bare bindings, no-op",
            vec![],
            "bare.wasm",
            r#"{"read": false}"#,
        ),
        (
            "JavaScript, bare bindings, reading",
            js_bare("js-bare.wasm", false),
            "js-bare.wasm",
            r#"{"read": true}"#,
        ),
        (
            "JavaScript, bare bindings, no-op",
            vec![],
            "js-bare.wasm",
            r#"{"read": false}"#,
        ),
        (
            "JavaScript, bare bindings, reading, ahead of time",
            js_bare("js-bare-aot.wasm", true),
            "js-bare-aot.wasm",
            r#"{"read": true}"#,
        ),
        (
            "JavaScript, bare bindings, no-op, ahead of time",
            vec![],
            "js-bare-aot.wasm",
            r#"{"read": false}"#,
        ),
    ];
    let mut builds: Vec<(&str, Vec<u8>, Option<Duration>, &str)> =
        vec![("Rust", wasm("grw-plugin-restart-filter"), None, CONFIG)];
    for (row, command, file, config) in sources {
        let built = if command.is_empty() {
            None // built for the row above
        } else {
            let started = Instant::now();
            let advice =
                "run tests/setup.sh for the toolchains, with --aot for the ahead-of-time rows";
            if !run_build(row, &command, advice) {
                continue;
            }
            Some(started.elapsed())
        };
        let Ok(bytes) = std::fs::read(out.join(file)) else {
            continue;
        };
        builds.push((row, bytes, built, config));
    }
    let iterations = if quick { 5_000 } else { 25_000 };
    let gvk = Gvk::new("", "v1", "Pod");
    let mut object = pod(8192);
    object["status"]["containerStatuses"] =
        json!([{"name": "web", "restartCount": 3, "ready": true}]);
    let object = StoredObject::from_value(object, &gvk, false).unwrap();
    let size = object.json().len();
    let change = Change::snapshot(Arc::new(object));
    println!(
        "\nThe restart filter (`{CONFIG}`; the bare rows: their own) in four languages; per event: an {size} B Pod that passes, {iterations} calls:\n"
    );
    let mut rows = Vec::new();
    for (language, bytes, built, config) in builds {
        let compile = {
            let engine = PluginEngine::new(None).unwrap();
            time(|| drop(engine.compile(&bytes).unwrap()))
        };
        let cache = tempfile::tempdir().unwrap();
        let engine = PluginEngine::new(Some(ArtifactCache::new(cache.path().join("c")))).unwrap();
        engine.compile(&bytes).unwrap();
        let cached =
            median((0..10).map(|_| time(|| assert!(engine.compile(&bytes).unwrap().from_cache))));
        let full = median((0..5).map(|_| time(|| drop(load(&engine, "p", &bytes, config)))));
        // The least linear memory it runs in, to the megabyte.
        let runs_in = |mb: usize| {
            let manifest = Manifest {
                config: serde_json::from_str(config).unwrap(),
                limits: Limits {
                    memory_bytes: mb << 20,
                    ..Limits::default()
                },
                ..Manifest::default_with(Limits::default())
            };
            Plugin::load(
                &engine,
                "p",
                &bytes,
                manifest,
                &AllowedHosts::none(),
                Arc::new(Metrics::new()),
            )
            .is_ok_and(|p| p.decide(&gvk, &change) && p.stats().snapshot().failures.memory == 0)
        };
        let (mut low, mut high) = (0usize, 256usize);
        while high - low > 1 {
            let mid = (low + high) / 2;
            if runs_in(mid) { high = mid } else { low = mid }
        }
        // Resident memory each further instance adds: several instances of
        // one plugin, each made to run a call at once.
        let plugin = Arc::new(load(&engine, "p", &bytes, config));
        let before = rss_bytes();
        let instances = 4;
        let barrier = Arc::new(std::sync::Barrier::new(instances));
        std::thread::scope(|scope| {
            for _ in 0..instances {
                let (plugin, barrier, change, gvk) =
                    (plugin.clone(), barrier.clone(), &change, &gvk);
                scope.spawn(move || {
                    barrier.wait();
                    for _ in 0..50 {
                        assert!(plugin.decide(gvk, change));
                    }
                });
            }
        });
        let instances = plugin.instances().expect("a component has instances");
        let per_instance =
            (rss_bytes().saturating_sub(before)) as f64 / instances.saturating_sub(1).max(1) as f64;
        assert!(plugin.decide(&gvk, &change), "the bench Pod passes");
        rows.push((
            format!(
                "| {language} | {} | {} | {:.0} | {:.2} | {:.1} | {high} | {:.1} ({} instances)",
                bytes.len(),
                match built {
                    Some(b) => format!("{:.1}", b.as_secs_f64()),
                    None if language == "Rust" => "(cargo)".to_string(),
                    None => "(above)".to_string(),
                },
                ms(compile),
                ms(cached),
                ms(full),
                per_instance / f64::from(1 << 20),
                instances,
            ),
            plugin,
            cache,
        ));
    }
    // Per event: the languages take turns, a round each, so that a slower
    // stretch of a shared machine falls on all of them alike; a round's
    // mean is one figure, and the table shows the median of the rounds.
    let rounds = 5;
    let mut means = vec![Vec::new(); rows.len()];
    let mut batches = vec![Vec::new(); rows.len()];
    for _ in 0..rounds {
        for (i, (_, plugin, _)) in rows.iter().enumerate() {
            let times = sample(iterations / rounds, || {
                std::hint::black_box(plugin.decide(&gvk, &change));
            });
            means[i].push(stats(&times).0);
            batches[i].extend(times);
        }
    }
    println!(
        "| language | .wasm bytes | toolchain build s | compile ms | cached load ms (median of 10) | load + instantiate + init from cache ms | smallest memoryMb that runs | RSS per instance MiB | per event µs: median of {rounds} rounds' means (fastest–slowest round) / p99 |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (i, (row, _, _)) in rows.iter().enumerate() {
        let round_means = &mut means[i];
        round_means.sort_by(f64::total_cmp);
        println!(
            "{row} | {:.1} ({:.1}–{:.1}) / {:.1} |",
            round_means[rounds / 2] / 1000.0,
            round_means[0] / 1000.0,
            round_means[rounds - 1] / 1000.0,
            stats(&batches[i]).1 / 1000.0
        );
    }
}

/// This process's resident memory.
fn rss_bytes() -> usize {
    let statm = std::fs::read_to_string("/proc/self/statm").unwrap_or_default();
    let pages: usize = statm
        .split_whitespace()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    pages * 4096
}

/// Compile, cached load, and everything a reload from the cache does.
fn compile_and_load(wasm: &dyn Fn(&str) -> Vec<u8>) {
    println!(
        "\n| plugin | .wasm bytes | compile ms (median of 3) | cached load ms (median of 10) | load + instantiate + init from cache ms |"
    );
    println!("|---|---:|---:|---:|---:|");
    for package in PLUGINS {
        let bytes = wasm(package);
        let compile = median((0..3).map(|_| {
            let engine = PluginEngine::new(None).unwrap();
            time(|| drop(engine.compile(&bytes).unwrap()))
        }));
        let cache = tempfile::tempdir().unwrap();
        let engine = PluginEngine::new(Some(ArtifactCache::new(cache.path().join("c")))).unwrap();
        engine.compile(&bytes).unwrap();
        let cached = median((0..10).map(|_| {
            time(|| {
                let c = engine.compile(&bytes).unwrap();
                assert!(c.from_cache);
            })
        }));
        let config = match package {
            "grw-plugin-namespace-filter" => r#"{"include":["shop"]}"#,
            "grw-plugin-label-filter" => SELECTOR,
            "grw-plugin-field-filter" => PHASE,
            "grw-plugin-restart-filter" => r#"{"minRestarts": 3}"#,
            _ => r#"{"paths":["spec"]}"#,
        };
        let full = median((0..10).map(|_| {
            time(|| {
                drop(load(&engine, "p", &bytes, config));
            })
        }));
        println!(
            "| {package} | {} | {:.1} | {:.2} | {:.2} |",
            bytes.len(),
            ms(compile),
            ms(cached),
            ms(full)
        );
    }
}

/// The per-event cost of the label and the field filter, component against
/// native.
fn per_event(wasm: &dyn Fn(&str) -> Vec<u8>, quick: bool) {
    let iterations = if quick { 20_000 } else { 200_000 };
    let engine = PluginEngine::new(None).unwrap();
    let gvk = Gvk::new("", "v1", "Pod");
    let filters: [(&str, &str, NativeDecide); 2] = [
        (
            "grw-plugin-label-filter",
            SELECTOR,
            Box::new({
                let (native, _) = LabelFilter::init(SELECTOR).unwrap();
                move |event| native.decide(event)
            }),
        ),
        (
            "grw-plugin-field-filter",
            PHASE,
            Box::new({
                let (native, _) = FieldFilter::init(PHASE).unwrap();
                move |event| native.decide(event)
            }),
        ),
    ];
    for (package, config, native) in filters {
        println!("\nPer-event cost of {package} ({iterations} events each, config `{config}`):\n");
        println!(
            "| Pod JSON | WebAssembly component: mean ns / p99 ns | native (same crate): mean ns / p99 ns | ratio |"
        );
        println!("|---:|---:|---:|---:|");
        let plugin = load(&engine, "p", &wasm(package), config);
        for target in [1024, 8192] {
            let object = StoredObject::from_value(pod(target), &gvk, false).unwrap();
            let size = object.json().len();
            let change = Change::snapshot(Arc::new(object));
            assert!(plugin.decide(&gvk, &change), "the bench Pod passes");
            let wasm_times = sample(iterations, || {
                std::hint::black_box(plugin.decide(&gvk, &change));
            });
            let native_times = sample(iterations, || {
                // What the host does for the guest, done natively: the
                // object read through the same lookups the guest's handle
                // reaches.
                let event = Event::from_parts(
                    EventType::Added,
                    Origin::Initial,
                    Box::new(Stored(change.object.clone())),
                    None,
                );
                std::hint::black_box(native(&event));
            });
            let (wm, wp) = stats(&wasm_times);
            let (nm, np) = stats(&native_times);
            println!(
                "| {size} B | {wm:.0} / {wp:.0} | {nm:.0} / {np:.0} | {:.1}× |",
                wm / nm
            );
        }
    }
}

/// From a file renamed into the plugin directory to the new version serving.
fn reload(wasm: &dyn Fn(&str) -> Vec<u8>) {
    println!("\nReload latency, file written (by rename) → new version serving:\n");
    let dir = tempfile::tempdir().unwrap();
    let plugins_dir = dir.path().join("plugins");
    std::fs::create_dir(&plugins_dir).unwrap();
    let plugins = Plugins::new(
        plugins_dir.clone(),
        Some(ArtifactCache::new(dir.path().join("cache"))),
        Limits::default(),
        AllowedHosts::none(),
        Arc::new(Metrics::new()),
    )
    .unwrap();
    // Versions differ by a custom section, as rebuilds of a plugin do: new
    // content must be compiled, content seen before comes from the cache.
    let base = wasm("grw-plugin-namespace-filter");
    let versions: Vec<Vec<u8>> = (0..4)
        .map(|i| with_custom_section(&base, &format!("build-{i}")))
        .collect();
    write(&plugins_dir.join("p.wasm"), &versions[0]);
    plugins.scan();
    plugins.watch().unwrap();
    println!("| swap | content | latency ms |");
    println!("|---:|---|---:|");
    let mut last_hash = plugins
        .status("p")
        .and_then(|s| s.hash)
        .expect("first version loads");
    for (swap, version) in [1, 2, 3, 0, 1, 2].into_iter().enumerate() {
        let started = Instant::now();
        write(&plugins_dir.join("p.wasm"), &versions[version]);
        let status = loop {
            let status = plugins.status("p").unwrap();
            if status.hash.as_deref() != Some(last_hash.as_str()) {
                break status;
            }
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "reload did not happen"
            );
            std::thread::sleep(Duration::from_millis(1));
        };
        last_hash = status.hash.clone().unwrap();
        let how = if status.from_cache == Some(true) {
            "seen before (cache)"
        } else {
            "new (compiled)"
        };
        println!("| {} | {how} | {:.0} |", swap + 1, ms(started.elapsed()));
    }
}

/// A plugin's `decide`, called natively.
type NativeDecide = Box<dyn Fn(&Event) -> bool>;

/// A stored object read natively through the lookups a guest's `object`
/// handle reaches in the host.
struct Stored(Arc<StoredObject>);

impl ObjectSource for Stored {
    fn json(&self) -> String {
        self.0.json_string()
    }

    fn get(&self, path: &[String]) -> Option<String> {
        Some(String::from_utf8_lossy(&self.0.get(path)?).into_owned())
    }

    fn labels(&self) -> Vec<(String, String)> {
        self.0
            .labels()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn annotations(&self) -> Vec<(String, String)> {
        self.0.annotations()
    }

    fn label(&self, key: &str) -> Option<String> {
        self.0.label(key).map(str::to_string)
    }

    fn namespace(&self) -> String {
        self.0.namespace().to_string()
    }

    fn name(&self) -> String {
        self.0.name().to_string()
    }

    fn uid(&self) -> String {
        self.0.uid().to_string()
    }

    fn resource_version(&self) -> String {
        self.0.resource_version().to_string()
    }
}

/// `wasm` with a custom section appended: same code, different bytes.
fn with_custom_section(wasm: &[u8], name: &str) -> Vec<u8> {
    fn leb(mut n: usize, out: &mut Vec<u8>) {
        loop {
            let byte = (n & 0x7f) as u8;
            n >>= 7;
            if n == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }
    let mut payload = Vec::new();
    leb(name.len(), &mut payload);
    payload.extend_from_slice(name.as_bytes());
    let mut out = wasm.to_vec();
    out.push(0);
    leb(payload.len(), &mut out);
    out.extend_from_slice(&payload);
    out
}

fn load(engine: &PluginEngine, name: &str, wasm: &[u8], config: &str) -> Plugin {
    let manifest = Manifest {
        config: serde_json::from_str(config).unwrap(),
        ..Manifest::default_with(Limits::default())
    };
    Plugin::load(
        engine,
        name,
        wasm,
        manifest,
        &AllowedHosts::none(),
        Arc::new(Metrics::new()),
    )
    .unwrap()
}

/// A Pod whose compact JSON is about `target` bytes: a real shape, padded
/// with an annotation.
fn pod(target: usize) -> Value {
    let mut pod = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-7d9f8c6b5-x2k4p", "namespace": "shop", "uid": "3f0c9a4e-2b1d-4c8e-9f7a-6d5e4c3b2a10",
            "resourceVersion": "123456", "labels": {"app": "web", "tier": "frontend", "pod-template-hash": "7d9f8c6b5"},
            "annotations": {}},
        "spec": {"nodeName": "node-a", "containers": [{"name": "web", "image": "registry.example/web:1.9.0"}]},
        "status": {"phase": "Running", "podIP": "10.244.1.17"}
    });
    let base = pod.to_string().len();
    pod["metadata"]["annotations"]["padding"] = json!("x".repeat(target.saturating_sub(base + 16)));
    pod
}

fn build_plugins() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command
        .args(["build", "--quiet", "--release", "--target", "wasm32-wasip2"])
        // As plugins/build.sh: without the workspace's line tables, which
        // would be most of each file.
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_STRIP", "debuginfo")
        .current_dir(workspace);
    for p in PLUGINS {
        command.args(["-p", p]);
    }
    assert!(
        command.status().unwrap().success(),
        "building the plugins failed"
    );
    let target =
        std::env::var("CARGO_TARGET_DIR").map_or_else(|_| workspace.join("target"), PathBuf::from);
    target.join("wasm32-wasip2").join("release")
}

/// Runs a row's build command; when it fails, says so with `advice` and
/// that the row is skipped.
fn run_build(row: &str, command: &[String], advice: &str) -> bool {
    let status = Command::new(&command[0]).args(&command[1..]).status();
    let built = status.is_ok_and(|s| s.success());
    if !built {
        println!("\n{row}: `{}` fails ({advice}); skipped", command.join(" "));
    }
    built
}

fn write(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

fn time(f: impl FnOnce()) -> Duration {
    let started = Instant::now();
    f();
    started.elapsed()
}

fn median(times: impl Iterator<Item = Duration>) -> Duration {
    let mut times: Vec<Duration> = times.collect();
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Per-call nanoseconds, timed in batches of 100 so the clock's cost stays small.
fn sample(iterations: usize, mut f: impl FnMut()) -> Vec<f64> {
    const BATCH: usize = 100;
    for _ in 0..1000 {
        f(); // warm up
    }
    (0..iterations / BATCH)
        .map(|_| {
            let started = Instant::now();
            for _ in 0..BATCH {
                f();
            }
            started.elapsed().as_nanos() as f64 / BATCH as f64
        })
        .collect()
}

fn stats(samples: &[f64]) -> (f64, f64) {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let mean = sorted.iter().sum::<f64>() / sorted.len() as f64;
    let p99 = sorted[((sorted.len() as f64 * 0.99) as usize).min(sorted.len() - 1)];
    (mean, p99)
}
