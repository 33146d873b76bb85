//! The plugin directory: each plugin is `NAME.wasm` plus an optional
//! `NAME.json` manifest. Loaded at start, then kept current: a file added,
//! replaced or removed takes effect as soon as it is complete (milliseconds
//! for content seen before, plus the compile time for new content);
//! identical content is a no-op; a new version that fails to load leaves the
//! previous one serving.
//!
//! A file written in place (`cp`, an editor) is incomplete until its writer
//! closes it: while a plugin's files are being written, a version that
//! fails to load is not reported, and the next change is tried instead.
//! Files renamed into place, and the symlink swap of a Kubernetes ConfigMap
//! volume (`..data`), are complete when they appear.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use notify::event::{AccessKind, AccessMode, EventKind, ModifyKind};
use notify::{RecursiveMode, Watcher};
use parking_lot::{Mutex, RwLock};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::stats::StatsSnapshot;
use super::{
    AllowedHosts, FailMode, Interest, Limits, Manifest, Plugin, PluginEngine, PluginError,
    PluginKind, error_chain,
};
use crate::metrics::Metrics;

/// File events closer together than this are one change: a rename into
/// place, or a ConfigMap volume's symlink swap, is a burst of events.
const COALESCE: Duration = Duration::from_millis(5);

/// A burst of events is handled after this long at most, however long it
/// goes on.
const COALESCE_AT_MOST: Duration = Duration::from_millis(50);

/// A file being written whose writer neither writes nor closes it for this
/// long is taken as complete (e.g. a writer that keeps it open).
const WRITE_QUIET: Duration = Duration::from_secs(2);

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
    /// Instances of the serving version that exist now (at most
    /// `limits.instances`).
    pub instances: Option<usize>,
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
    /// Counts the changes of serving versions: a plugin loaded, replaced
    /// or removed.
    changes: tokio::sync::watch::Sender<u64>,
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
            changes: tokio::sync::watch::channel(0).0,
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
            changes: tokio::sync::watch::channel(0).0,
        }))
    }

    /// Loads what changed in the directory since the last scan. Blocking:
    /// compiling takes up to seconds.
    pub fn scan(&self) {
        self.scan_except(&HashSet::new());
    }

    /// As [`Plugins::scan`], but a plugin named in `being_written` that
    /// fails to load is left as it was, to be tried again when its writer
    /// is done. Returns whether such a failure was held back.
    fn scan_except(&self, being_written: &HashSet<String>) -> bool {
        let (Some(engine), Some(dir)) = (&self.engine, &self.dir) else {
            return false;
        };
        let names = match plugin_names(dir) {
            Ok(names) => names,
            Err(e) => {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot read the plugin directory");
                return false;
            }
        };
        let mut held_back = false;
        for name in &names {
            held_back |= self.load_one(engine, dir, name, being_written.contains(name));
        }
        let mut entries = self.entries.write();
        let gone: Vec<String> = entries
            .keys()
            .filter(|n| !names.contains(n))
            .cloned()
            .collect();
        for name in gone {
            if entries.remove(&name).is_some_and(|e| e.serving.is_some()) {
                self.changes.send_modify(|n| *n += 1);
            }
            tracing::info!(plugin = %name, "plugin unloaded: its file was removed");
        }
        held_back
    }

    /// Loads one plugin if its files changed. With `incomplete`, a failure
    /// is not recorded; returns whether one was held back.
    fn load_one(&self, engine: &PluginEngine, dir: &Path, name: &str, incomplete: bool) -> bool {
        let wasm_path = dir.join(format!("{name}.wasm"));
        let manifest_path = dir.join(format!("{name}.json"));
        let wasm = std::fs::read(&wasm_path);
        let manifest_text = match std::fs::read_to_string(&manifest_path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => {
                if incomplete {
                    return true;
                }
                self.record_failure(
                    name,
                    String::new(),
                    PluginError::Io {
                        path: manifest_path,
                        source,
                    },
                );
                return false;
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
            return false;
        }
        let result = wasm
            .map_err(|source| PluginError::Io {
                path: wasm_path.clone(),
                source,
            })
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
                self.changes.send_modify(|n| *n += 1);
                false
            }
            Err(e) if incomplete => {
                tracing::debug!(plugin = name, error = %error_chain(&e), "plugin files are still being written; trying again when they are complete");
                true
            }
            Err(e) => {
                self.record_failure(name, fingerprint, e);
                false
            }
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
        let message = error_chain(&error);
        tracing::warn!(plugin = name, error = %message, previous_version_serving = serving, "plugin failed to load");
        entry.fingerprint = fingerprint;
        entry.load_error = Some(message);
    }

    /// Follows the directory: a change is loaded [`COALESCE`] after its
    /// last file event, plus the compile time for content not seen before.
    pub fn watch(self: &Arc<Self>) -> Result<(), String> {
        let Some(dir) = self.dir.clone() else {
            return Ok(());
        };
        let (tx, rx) = std::sync::mpsc::channel::<FileEvent>();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                if let Ok(event) = event
                    && let Some(event) = FileEvent::of(event)
                {
                    let _ = tx.send(event);
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
                let mut writes = Writes::default();
                let mut next = None;
                loop {
                    let first = match next.take() {
                        Some(event) => event,
                        None => match rx.recv() {
                            Ok(event) => event,
                            Err(_) => return,
                        },
                    };
                    writes.expire();
                    writes.note(first);
                    // The rest of the burst.
                    let started = Instant::now();
                    while started.elapsed() < COALESCE_AT_MOST {
                        match rx.recv_timeout(COALESCE) {
                            Ok(event) => writes.note(event),
                            Err(_) => break,
                        }
                    }
                    loop {
                        let Some(plugins) = plugins.upgrade() else {
                            return;
                        };
                        let held_back = plugins.scan_except(&writes.in_progress());
                        drop(plugins);
                        if !held_back {
                            break;
                        }
                        // A writer is still at work: try again at its next
                        // event, or once it has been quiet long enough.
                        match rx.recv_timeout(writes.quiet_left()) {
                            Ok(event) => {
                                next = Some(event);
                                break;
                            }
                            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => writes.expire(),
                            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => return,
                        }
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

    /// Every serving analyzer plugin, by name.
    pub fn analyzers(&self) -> Vec<Arc<Plugin>> {
        self.entries
            .read()
            .values()
            .filter_map(|e| e.serving.clone())
            .filter(|p| p.kind == PluginKind::Analyzer)
            .collect()
    }

    /// Changes whenever a plugin is loaded, replaced or removed.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.changes.subscribe()
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
        instances: plugin.map(Plugin::instances),
        load_millis: plugin.map(|p| p.load_time.as_millis() as u64),
        from_cache: plugin.map(|p| p.from_cache),
        stats: plugin.map(|p| p.stats().snapshot()),
    }
}

/// A file event that may change what the directory holds.
struct FileEvent {
    /// File names (in the plugin directory) it concerns.
    files: Vec<OsString>,
    what: Change,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Change {
    /// Written to (or created, or truncated): complete only when closed.
    Writing,
    /// Closed after writing, renamed or removed: complete.
    Done,
}

impl FileEvent {
    /// The events that matter; opening, reading and closing a file without
    /// writing (GRW's own reads among them) do not.
    fn of(event: notify::Event) -> Option<FileEvent> {
        let what = match event.kind {
            EventKind::Access(AccessKind::Close(AccessMode::Write)) => Change::Done,
            EventKind::Access(_) => return None,
            EventKind::Create(_) => Change::Writing,
            EventKind::Modify(ModifyKind::Name(_)) | EventKind::Remove(_) => Change::Done,
            EventKind::Modify(ModifyKind::Metadata(_)) => Change::Done,
            EventKind::Modify(_) => Change::Writing,
            EventKind::Any | EventKind::Other => Change::Done,
        };
        let files = event
            .paths
            .iter()
            .filter_map(|p| p.file_name().map(OsString::from))
            .collect();
        Some(FileEvent { files, what })
    }
}

/// Files being written: seen written to and not yet closed.
#[derive(Default)]
struct Writes {
    open: HashMap<OsString, Instant>,
}

impl Writes {
    fn note(&mut self, event: FileEvent) {
        for file in event.files {
            match event.what {
                Change::Writing => {
                    self.open.insert(file, Instant::now());
                }
                Change::Done => {
                    self.open.remove(&file);
                }
            }
        }
    }

    /// Plugins (by name) one of whose files is being written.
    fn in_progress(&self) -> HashSet<String> {
        self.open
            .keys()
            .filter_map(|f| {
                let path = Path::new(f);
                let ext = path.extension()?;
                (ext == "wasm" || ext == "json")
                    .then(|| path.file_stem()?.to_str().map(str::to_string))?
            })
            .collect()
    }

    /// How long until the longest-quiet writer counts as done.
    fn quiet_left(&self) -> Duration {
        self.open
            .values()
            .map(|t| WRITE_QUIET.saturating_sub(t.elapsed()))
            .min()
            .unwrap_or_default()
    }

    /// Forgets writers quiet for [`WRITE_QUIET`].
    fn expire(&mut self) {
        self.open.retain(|_, t| t.elapsed() < WRITE_QUIET);
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
