//! The plugin directory: each plugin is `NAME.wasm` plus an optional
//! `NAME.json` manifest. Loaded at start, then kept current: a file added,
//! replaced or removed takes effect within a second; identical content is a
//! no-op; a new version that fails to load leaves the previous one serving.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use notify::{RecursiveMode, Watcher};
use parking_lot::{Mutex, RwLock};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::stats::StatsSnapshot;
use super::{
    AllowedHosts, FailMode, Interest, Limits, Manifest, Plugin, PluginEngine, PluginError,
    PluginKind,
};
use crate::metrics::Metrics;

/// File events closer together than this are one change: editors and `cp`
/// write in several steps, and a ConfigMap volume swaps a symlink.
const SETTLE: Duration = Duration::from_millis(150);

/// Where a plugin stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PluginState {
    /// Serving its current file.
    Ready,
    /// Serving a previous version: the current file failed to load.
    Stale,
    /// Failing repeatedly; not called until its breaker closes.
    Broken,
    /// No version could be loaded.
    Failed,
}

/// What the status API shows of one plugin.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginStatus {
    /// File name without `.wasm`.
    pub name: String,
    /// Current state.
    pub state: PluginState,
    /// Why the file does not load, or the last call failure.
    pub last_error: Option<String>,
    /// Kind of the serving version.
    pub kind: Option<PluginKind>,
    /// WIT version of the serving version.
    pub wit_version: Option<String>,
    /// SHA-256 of the serving `.wasm`.
    pub hash: Option<String>,
    /// Declared interest.
    pub interest: Option<Interest>,
    /// Fail mode.
    pub fail_mode: Option<FailMode>,
    /// Limits.
    pub limits: Option<Limits>,
    /// For notifiers: the hosts their manifest asks to reach
    /// (`allowedHosts`); GRW's `pluginAllowedHosts` must allow them too.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allowed_hosts: Option<AllowedHosts>,
    /// Load time of the serving version, milliseconds.
    pub load_millis: Option<u64>,
    /// Whether its compiled code came from the artifact cache.
    pub from_cache: Option<bool>,
    /// Calls, failures and latencies.
    pub stats: Option<StatsSnapshot>,
}

struct Entry {
    /// Hash of the `.wasm` and manifest last tried, loaded or not.
    fingerprint: String,
    serving: Option<Arc<Plugin>>,
    load_error: Option<String>,
}

/// Every plugin of the plugin directory.
pub struct Plugins {
    engine: Option<Arc<PluginEngine>>,
    dir: Option<PathBuf>,
    defaults: Limits,
    /// What the operator lets notifiers reach (`pluginAllowedHosts`).
    operator_hosts: AllowedHosts,
    metrics: Arc<Metrics>,
    entries: RwLock<BTreeMap<String, Entry>>,
    watcher: Mutex<Option<notify::RecommendedWatcher>>,
}

impl Plugins {
    /// No plugin directory: every lookup fails with a message saying so.
    pub fn none(metrics: Arc<Metrics>) -> Arc<Plugins> {
        Arc::new(Plugins {
            engine: None,
            dir: None,
            defaults: Limits::default(),
            operator_hosts: AllowedHosts::none(),
            metrics,
            entries: RwLock::new(BTreeMap::new()),
            watcher: Mutex::new(None),
        })
    }

    /// Plugins of `dir`, compiled artifacts cached in `cache_dir`.
    /// `operator_hosts` is the operator's `pluginAllowedHosts`: the hosts
    /// notifiers may reach, if their manifest asks for them too (empty =
    /// none). Call [`Plugins::scan`] to load them and [`Plugins::watch`] to
    /// follow changes.
    pub fn new(
        dir: PathBuf,
        cache_dir: Option<PathBuf>,
        defaults: Limits,
        operator_hosts: AllowedHosts,
        metrics: Arc<Metrics>,
    ) -> Result<Arc<Plugins>, PluginError> {
        Ok(Arc::new(Plugins {
            engine: Some(PluginEngine::new(cache_dir)?),
            dir: Some(dir),
            defaults,
            operator_hosts,
            metrics,
            entries: RwLock::new(BTreeMap::new()),
            watcher: Mutex::new(None),
        }))
    }

    /// Loads what changed in the directory since the last scan. Blocking:
    /// compiling takes up to seconds.
    pub fn scan(&self) {
        let (Some(engine), Some(dir)) = (&self.engine, &self.dir) else {
            return;
        };
        let names = match plugin_names(dir) {
            Ok(names) => names,
            Err(e) => {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot read the plugin directory");
                return;
            }
        };
        for name in &names {
            self.load_one(engine, dir, name);
        }
        let mut entries = self.entries.write();
        let gone: Vec<String> = entries
            .keys()
            .filter(|n| !names.contains(n))
            .cloned()
            .collect();
        for name in gone {
            entries.remove(&name);
            tracing::info!(plugin = %name, "plugin unloaded: its file was removed");
        }
    }

    fn load_one(&self, engine: &PluginEngine, dir: &Path, name: &str) {
        let wasm_path = dir.join(format!("{name}.wasm"));
        let manifest_path = dir.join(format!("{name}.json"));
        let wasm = std::fs::read(&wasm_path);
        let manifest_text = match std::fs::read_to_string(&manifest_path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => {
                self.record_failure(
                    name,
                    String::new(),
                    PluginError::Io(format!("{}: {e}", manifest_path.display())),
                );
                return;
            }
        };
        let mut hasher = Sha256::new();
        if let Ok(bytes) = &wasm {
            hasher.update(bytes);
        }
        hasher.update(manifest_text.as_deref().unwrap_or("").as_bytes());
        let fingerprint: String = hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        if self
            .entries
            .read()
            .get(name)
            .is_some_and(|e| e.fingerprint == fingerprint)
        {
            return;
        }
        let result = wasm
            .map_err(|e| PluginError::Io(format!("{}: {e}", wasm_path.display())))
            .and_then(|wasm| {
                let manifest = match &manifest_text {
                    Some(text) => Manifest::parse(text, self.defaults)?,
                    None => Manifest::default_with(self.defaults),
                };
                Plugin::load(
                    engine,
                    name,
                    &wasm,
                    manifest,
                    &self.operator_hosts,
                    self.metrics.clone(),
                )
            });
        match result {
            Ok(plugin) => {
                tracing::info!(
                    plugin = name, kind = plugin.kind.as_str(), hash = %plugin.hash,
                    wit_version = %plugin.wit_version, from_cache = plugin.from_cache,
                    load_ms = plugin.load_time.as_millis() as u64, "plugin loaded"
                );
                self.metrics.plugin_load(name, true);
                self.entries.write().insert(
                    name.to_string(),
                    Entry {
                        fingerprint,
                        serving: Some(Arc::new(plugin)),
                        load_error: None,
                    },
                );
            }
            Err(e) => self.record_failure(name, fingerprint, e),
        }
    }

    fn record_failure(&self, name: &str, fingerprint: String, error: PluginError) {
        self.metrics.plugin_load(name, false);
        let mut entries = self.entries.write();
        let entry = entries.entry(name.to_string()).or_insert(Entry {
            fingerprint: String::new(),
            serving: None,
            load_error: None,
        });
        let serving = entry.serving.is_some();
        tracing::warn!(plugin = name, error = %error, previous_version_serving = serving, "plugin failed to load");
        entry.fingerprint = fingerprint;
        entry.load_error = Some(error.to_string());
    }

    /// Follows the directory: changes are loaded within [`SETTLE`] plus the
    /// compile time.
    pub fn watch(self: &Arc<Self>) -> Result<(), String> {
        let Some(dir) = self.dir.clone() else {
            return Ok(());
        };
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                if event.is_ok() {
                    let _ = tx.send(());
                }
            })
            .map_err(|e| format!("cannot watch the plugin directory {}: {e}", dir.display()))?;
        watcher
            .watch(&dir, RecursiveMode::NonRecursive)
            .map_err(|e| format!("cannot watch the plugin directory {}: {e}", dir.display()))?;
        *self.watcher.lock() = Some(watcher);
        let plugins = Arc::downgrade(self);
        std::thread::Builder::new()
            .name("grw-plugin-reload".into())
            .spawn(move || {
                while rx.recv().is_ok() {
                    while rx.recv_timeout(SETTLE).is_ok() {}
                    match plugins.upgrade() {
                        Some(plugins) => plugins.scan(),
                        None => return,
                    }
                }
            })
            .map_err(|e| e.to_string())?;
        Ok(())
    }

    /// The serving filter plugin `name`, or why there is none.
    pub fn filter(&self, name: &str) -> Result<Arc<Plugin>, String> {
        self.serving(name, PluginKind::Filter)
    }

    /// The serving notifier plugin `name`, or why there is none.
    pub fn notifier(&self, name: &str) -> Result<Arc<Plugin>, String> {
        self.serving(name, PluginKind::Notifier)
    }

    fn serving(&self, name: &str, kind: PluginKind) -> Result<Arc<Plugin>, String> {
        let kind_name = kind.as_str();
        if self.dir.is_none() {
            return Err(format!(
                "unknown {kind_name} plugin `{name}`: no plugin directory is configured (pluginDir)"
            ));
        }
        let entries = self.entries.read();
        let Some(entry) = entries.get(name) else {
            let known: Vec<&str> = entries.keys().map(String::as_str).collect();
            return Err(format!(
                "unknown {kind_name} plugin `{name}`; loaded plugins: {}",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            ));
        };
        match &entry.serving {
            Some(p) if p.kind == kind => Ok(p.clone()),
            Some(p) => Err(format!(
                "plugin `{name}` is a {} plugin, not a {kind_name}",
                p.kind.as_str()
            )),
            None => Err(format!(
                "{kind_name} plugin `{name}` is not loaded: {}",
                entry.load_error.as_deref().unwrap_or("unknown error")
            )),
        }
    }

    /// The status of every plugin, by name.
    pub fn statuses(&self) -> Vec<PluginStatus> {
        self.entries
            .read()
            .iter()
            .map(|(name, e)| status(name, e))
            .collect()
    }

    /// The status of one plugin.
    pub fn status(&self, name: &str) -> Option<PluginStatus> {
        self.entries.read().get(name).map(|e| status(name, e))
    }

    /// Whether a plugin directory is configured.
    pub fn enabled(&self) -> bool {
        self.dir.is_some()
    }
}

fn status(name: &str, entry: &Entry) -> PluginStatus {
    let plugin = entry.serving.as_deref();
    let state = match (plugin, &entry.load_error) {
        (None, _) => PluginState::Failed,
        (Some(_), Some(_)) => PluginState::Stale,
        (Some(p), None) if p.breaker_open() => PluginState::Broken,
        (Some(_), None) => PluginState::Ready,
    };
    PluginStatus {
        name: name.to_string(),
        state,
        last_error: entry
            .load_error
            .clone()
            .or_else(|| plugin.and_then(Plugin::last_call_error)),
        kind: plugin.map(|p| p.kind),
        wit_version: plugin.map(|p| p.wit_version.clone()),
        hash: plugin.map(|p| p.hash.clone()),
        interest: plugin.map(|p| p.interest.clone()),
        fail_mode: plugin.map(|p| p.manifest.fail_mode),
        limits: plugin.map(|p| p.manifest.limits),
        allowed_hosts: plugin
            .filter(|p| p.kind == PluginKind::Notifier)
            .map(|p| p.manifest.allowed_hosts.clone()),
        load_millis: plugin.map(|p| p.load_time.as_millis() as u64),
        from_cache: plugin.map(|p| p.from_cache),
        stats: plugin.map(|p| p.stats().snapshot()),
    }
}

/// Names of the `*.wasm` files of `dir`, skipping hidden and temporary files.
fn plugin_names(dir: &Path) -> std::io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "wasm")
            && let Some(stem) = path.file_stem().and_then(|s| s.to_str())
            && !stem.starts_with('.')
        {
            names.push(stem.to_string());
        }
    }
    names.sort();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_name_the_kind_asked_for() {
        let plugins = Plugins::none(Arc::new(Metrics::new()));
        assert_eq!(
            plugins.notifier("chat").err().unwrap(),
            "unknown notifier plugin `chat`: no plugin directory is configured (pluginDir)"
        );
        assert_eq!(
            plugins.filter("shop").err().unwrap(),
            "unknown filter plugin `shop`: no plugin directory is configured (pluginDir)"
        );
        let dir = tempfile::tempdir().unwrap();
        let plugins = Plugins::new(
            dir.path().to_path_buf(),
            None,
            Limits::default(),
            AllowedHosts::none(),
            Arc::new(Metrics::new()),
        )
        .unwrap();
        plugins.scan();
        assert_eq!(
            plugins.notifier("chat").err().unwrap(),
            "unknown notifier plugin `chat`; loaded plugins: none"
        );
    }
}
