//! Real `.wasm` components for tests: the plugins of `plugins/` and the fault
//! plugins of `tests/plugins/`, built once per test process; the Python and
//! JavaScript ones (see [`foreign_wasm`]) once per content.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use sha2::{Digest, Sha256};

/// Every plugin package the tests use; built in one Cargo run.
const PACKAGES: [&str; 24] = [
    "grw-plugin-namespace-filter",
    "grw-plugin-label-filter",
    "grw-plugin-changed-fields",
    "grw-plugin-chat-notifier",
    "grw-plugin-webhook-template",
    "grw-plugin-field-filter",
    "grw-plugin-ownership",
    "grw-plugin-services",
    "grw-plugin-references",
    "grw-plugin-istio-gateways",
    "grw-plugin-restart-filter",
    "grw-test-plugin-loop-forever",
    "grw-test-plugin-memory-hog",
    "grw-test-plugin-trap",
    "grw-test-plugin-reject-config",
    "grw-test-plugin-wrong-world",
    "grw-test-plugin-forbidden-import",
    "grw-test-plugin-newer-patch",
    "grw-test-plugin-incompatible",
    "grw-test-plugin-logger",
    "grw-test-plugin-notifier-fault",
    "grw-test-plugin-legacy-filter",
    "grw-test-plugin-slow",
    "grw-test-plugin-analyzer-fault",
];

/// The component built from `package` (one of the plugin packages).
pub fn plugin_wasm(package: &str) -> PathBuf {
    static BUILT: OnceLock<PathBuf> = OnceLock::new();
    assert!(
        PACKAGES.contains(&package),
        "{package} is not a plugin package"
    );
    let dir = BUILT.get_or_init(|| {
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("workspace root");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let mut command = Command::new(cargo);
        crate::daemon::as_from_a_shell(&mut command);
        command
            .args(["build", "--quiet", "--target", "wasm32-wasip2"])
            .current_dir(workspace);
        for p in PACKAGES {
            command.args(["-p", p]);
        }
        let status = command.status().expect("cargo runs");
        assert!(
            status.success(),
            "building the plugins failed (is the wasm32-wasip2 target installed?)"
        );
        let target = std::env::var("CARGO_TARGET_DIR")
            .map_or_else(|_| workspace.join("target"), PathBuf::from);
        target.join("wasm32-wasip2").join("debug")
    });
    dir.join(format!("{}.wasm", package.replace('-', "_")))
}

/// Copies a plugin into `dir` as `NAME.wasm`, with `manifest` as `NAME.json` if given.
pub fn install(dir: &Path, name: &str, package: &str, manifest: Option<serde_json::Value>) {
    let wasm = std::fs::read(plugin_wasm(package)).expect("plugin built");
    write_atomically(&dir.join(format!("{name}.wasm")), &wasm);
    if let Some(manifest) = manifest {
        write_atomically(
            &dir.join(format!("{name}.json")),
            manifest.to_string().as_bytes(),
        );
    }
}

/// Writes through a temporary name and a rename, as deploy tools do.
pub fn write_atomically(path: &Path, bytes: &[u8]) {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// The component of a Python or JavaScript plugin, by its directory under
/// `plugins/` or `tests/plugins/` (e.g. `py-restart-filter`), with its
/// manifest beside it. Built with the plugin's `build.sh` and the
/// toolchains `tests/setup.sh` installs; a build is kept under
/// `target/foreign-plugins/` by the hash of everything it reads, so later
/// test processes reuse it.
pub fn foreign_wasm(name: &str) -> PathBuf {
    static BUILT: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let built = BUILT.get_or_init(Default::default);
    if let Some(path) = built.lock().unwrap().get(name) {
        return path.clone();
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root");
    let source = ["plugins", "tests/plugins"]
        .iter()
        .map(|d| workspace.join(d).join(name))
        .find(|d| d.join("build.sh").is_file())
        .unwrap_or_else(|| panic!("no plugin `{name}` with a build.sh"));
    let sdk = workspace.join("sdk").join(match name.split('-').next() {
        Some("js") => "js",
        Some("c") => "c",
        _ => "python",
    });
    let mut hasher = Sha256::new();
    for dir in [&source, &sdk, &workspace.join("wit")] {
        hash_tree(dir, &mut hasher);
    }
    let hash: String = hasher.finalize()[..8]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let target =
        std::env::var("CARGO_TARGET_DIR").map_or_else(|_| workspace.join("target"), PathBuf::from);
    let out = target
        .join("foreign-plugins")
        .join(format!("{name}-{hash}"));
    let wasm = out.join(format!("{name}.wasm"));
    // Test processes run in parallel (nextest runs one per test): the first
    // to take the lock builds, the others wait for it and reuse its build.
    std::fs::create_dir_all(out.parent().unwrap()).unwrap();
    let lock = std::fs::File::create(out.with_extension("lock")).unwrap();
    lock.lock().unwrap();
    if !wasm.is_file() {
        let partial = out.with_extension("partial");
        let _ = std::fs::remove_dir_all(&partial);
        std::fs::create_dir_all(&partial).unwrap();
        let mut build = Command::new("bash");
        crate::daemon::as_from_a_shell(&mut build);
        build.arg(source.join("build.sh")).arg(&partial);
        if name.starts_with("c-") {
            // grw-c as the test run built it (see `grw_binary`), rather
            // than build-component.sh's own `cargo build -p grw-c`.
            let grw = crate::daemon::grw_binary();
            build.env("GRW_C", grw.with_file_name("grw-c"));
        }
        let status = build.status().expect("bash runs");
        assert!(
            status.success(),
            "building {name} failed (are the toolchains installed? run tests/setup.sh)"
        );
        let _ = std::fs::remove_dir_all(&out);
        std::fs::rename(&partial, &out).unwrap();
    }
    drop(lock);
    built.lock().unwrap().insert(name.to_string(), wasm.clone());
    wasm
}

fn hash_tree(dir: &Path, hasher: &mut Sha256) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            !name.starts_with('.') && name != "__pycache__" && name != "node_modules"
        })
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            hash_tree(&path, hasher);
        } else if let Ok(bytes) = std::fs::read(&path) {
            hasher.update(path.file_name().unwrap().as_encoded_bytes());
            hasher.update(&bytes);
        }
    }
}

/// Copies the Python or JavaScript plugin `package` (see [`foreign_wasm`])
/// into `dir` as `NAME.wasm`, with `manifest` as `NAME.json` if given.
pub fn install_foreign(dir: &Path, name: &str, package: &str, manifest: Option<serde_json::Value>) {
    let wasm = std::fs::read(foreign_wasm(package)).expect("plugin built");
    if let Some(manifest) = manifest {
        write_atomically(
            &dir.join(format!("{name}.json")),
            manifest.to_string().as_bytes(),
        );
    }
    write_atomically(&dir.join(format!("{name}.wasm")), &wasm);
}
