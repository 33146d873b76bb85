//! Real `.wasm` components for tests: the plugins of `plugins/` and the fault
//! plugins of `tests/plugins/`, built once per test process.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// Every plugin package the tests use; built in one Cargo run.
const PACKAGES: [&str; 23] = [
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
