//! The plugin directory: each plugin is `NAME.wasm` plus an optional
//! `NAME.json` manifest. Loaded at start, then kept current: a file added,
//! replaced or removed takes effect as soon as it is complete (milliseconds
//! for content seen before, plus the compile time for new content);
//! identical content is a no-op; a new version that fails to load leaves the
//! previous one serving.
//!
//! Each plugin loads on a thread of its own, so a Python or JavaScript
//! component that compiles for seconds holds up nothing else: the previous
//! version serves until the new one is ready, and a plugin with no previous
//! version is `loading` (its callers wait for it, see [`Plugins::loaded`]).
//!
//! A file written in place (`cp`, an editor) is incomplete until its writer
//! closes it: while a plugin's files are being written, a version that
//! fails to load is not reported, and the next change is tried instead.
//! Files renamed into place, and the symlink swap of a Kubernetes ConfigMap
//! volume (`..data`), are complete when they appear.
//!
//! The analyzers compiled into GRW ([`super::BUILT_IN`]) are plugins of the
//! same names with no file: a file of that name replaces one, a file that
//! fails to load leaves it serving as a previous version would, and
//! removing the file brings it back.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::reload::FileEvent;
use super::stats::StatsSnapshot;
use super::{
    ArtifactCache, BUILT_IN, FailMode, FunctionReuse, Interest, Limits, Manifest, Origin, Plugin,
    PluginEngine, PluginError, PluginKind,
};
use crate::config::AllowedHosts;
use crate::error::Report;
use crate::metrics::Metrics;

/// Why no plugin of a name and kind serves.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LookupError {
    /// There is no plugin directory.
    #[error("unknown {} plugin `{name}`: no plugin directory is configured (pluginDir)", kind.as_str())]
    NoDirectory {
        /// The kind asked for.
        kind: PluginKind,
        /// The name asked for.
        name: String,
    },
    /// No plugin has that name.
    #[error(
        "unknown {} plugin `{name}`; loaded plugins: {}",
        kind.as_str(),
        if known.is_empty() { "none".to_string() } else { known.join(", ") }
    )]
    Unknown {
        /// The kind asked for.
        kind: PluginKind,
        /// The name asked for.
        name: String,
        /// The plugins there are.
        known: Vec<String>,
    },
    /// Its first version is being compiled.
    #[error("{} plugin `{name}` is loading: its component is being compiled", kind.as_str())]
    Loading {
        /// The kind asked for.
        kind: PluginKind,
        /// The name asked for.
        name: String,
    },
    /// A plugin of another kind has that name.
    #[error("plugin `{name}` is a {} plugin, not a {}", is.as_str(), kind.as_str())]
    WrongKind {
        /// The kind asked for.
        kind: PluginKind,
        /// The name asked for.
        name: String,
        /// The kind it is.
        is: PluginKind,
    },
    /// No version of it loaded.
    #[error("{} plugin `{name}` is not loaded: {error}", kind.as_str())]
    NotLoaded {
        /// The kind asked for.
        kind: PluginKind,
        /// The name asked for.
        name: String,
        /// Why its file did not load.
        error: String,
    },
}

/// Where a plugin stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PluginState {
    /// No version serves yet: the first one is being compiled.
    Loading,
    /// Serving its current file.
    Ready,
    /// Serving a previous version: the current file failed to load.
    Stale,
    /// Failing repeatedly; not called until its breaker closes.
    Broken,
    /// No version could be loaded.
    Failed,
}

/// Where the serving version's code comes from, as the status API says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CodeOrigin {
    /// A file of the plugin directory.
    File,
    /// Compiled into GRW.
    BuiltIn,
}

/// What the status API shows of one plugin.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PluginStatus {
    /// File name without `.wasm`.
    pub name: String,
    /// Current state.
    pub state: PluginState,
    /// Where the serving version comes from: its file, or GRW itself (a
    /// built-in analyzer no file replaces).
    pub origin: Option<CodeOrigin>,
    /// A new version is being loaded (while the previous one, if any, serves).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub loading: bool,
    /// Why the file does not load, or the last call failure.
    pub last_error: Option<String>,
    /// Kind of the serving version.
    pub kind: Option<PluginKind>,
    /// WIT version of the serving version.
    pub wit_version: Option<String>,
    /// SHA-256 of the serving `.wasm`; none for a built-in analyzer.
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
    /// `limits.instances`); none for a built-in analyzer.
    pub instances: Option<usize>,
    /// Load time of the serving version, milliseconds.
    pub load_millis: Option<u64>,
    /// Whether its compiled code came from the artifact cache; none for a
    /// built-in analyzer.
    pub from_cache: Option<bool>,
    /// When it was compiled: how many functions were, and how many had the
    /// machine code of functions compiled before.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub functions: Option<FunctionReuse>,
    /// Calls, failures and latencies.
    pub stats: Option<StatsSnapshot>,
}

#[derive(Default)]
struct Entry {
    /// Hash of the `.wasm` and manifest last tried, loaded or not.
    fingerprint: String,
    /// Hash of the version being loaded now, if any.
    loading: Option<String>,
    /// Hash of a version that failed to load while its files were being
    /// written: tried again only once they are complete.
    held: Option<String>,
    /// Found by the first scan, so readiness waits for it.
    at_start: bool,
    serving: Option<Arc<Plugin>>,
    load_error: Option<String>,
    /// The analyzer compiled into GRW under this name, serving while no
    /// file of the name does.
    built_in: Option<Arc<Plugin>>,
}

impl Entry {
    /// Nothing serves yet, and a version is being loaded.
    fn first_loading(&self) -> bool {
        self.serving.is_none() && self.loading.is_some()
    }

    /// A built-in analyzer, and no file of its name seen since it started
    /// (or since the file was removed).
    fn only_built_in(&self) -> bool {
        self.built_in.is_some()
            && self.fingerprint.is_empty()
            && self.loading.is_none()
            && self.load_error.is_none()
    }

    /// Back to the built-in analyzer, as if no file had been seen; whether
    /// the serving version changed.
    fn back_to_built_in(&mut self) -> bool {
        let built_in = self.built_in.clone();
        let changed = match (&self.serving, &built_in) {
            (Some(serving), Some(built_in)) => !Arc::ptr_eq(serving, built_in),
            (None, None) => false,
            _ => true,
        };
        *self = Entry {
            serving: built_in.clone(),
            built_in,
            ..Entry::default()
        };
        changed
    }
}

/// What a load works on: the files as read when the change was seen.
struct Candidate {
    name: String,
    wasm: std::io::Result<Vec<u8>>,
    wasm_path: PathBuf,
    manifest_text: Option<String>,
    fingerprint: String,
    /// The plugin's files are still being written.
    incomplete: bool,
}

/// Every plugin of the plugin directory.
pub struct Plugins {
    engine: Option<Arc<PluginEngine>>,
    pub(super) dir: Option<PathBuf>,
    defaults: Limits,
    /// What the operator lets notifiers reach (`pluginAllowedHosts`).
    operator_hosts: AllowedHosts,
    metrics: Arc<Metrics>,
    entries: RwLock<BTreeMap<String, Entry>>,
    pub(super) watcher: Mutex<Option<file_watcher::RecommendedWatcher>>,
    /// Wakes the reload thread.
    pub(super) wake: Mutex<Option<std::sync::mpsc::Sender<FileEvent>>>,
    /// Counts the changes of serving versions: a plugin loaded, replaced
    /// or removed.
    changes: tokio::sync::watch::Sender<u64>,
    /// Counts finished loads, successful or not.
    settled: tokio::sync::watch::Sender<u64>,
    /// Whether the first scan ran.
    scanned: std::sync::atomic::AtomicBool,
    /// The last [`RELOADS_KEPT`] loads, failures and removals, oldest
    /// first.
    reloads: Mutex<std::collections::VecDeque<Reload>>,
}

/// How many loads, failures and removals [`Plugins::reloads`] keeps.
pub const RELOADS_KEPT: usize = 100;

/// A plugin loaded, failed to load, or removed.
#[derive(Debug, Clone, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Reload {
    /// When, RFC 3339.
    pub time: String,
    /// The plugin's name.
    pub plugin: String,
    /// `loaded`, `failed` or `removed`.
    pub outcome: &'static str,
    /// The version loaded (its hash), when loaded from a file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hash: Option<String>,
    /// How long the load took, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_millis: Option<u64>,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Reload {
    /// `plugin`'s `outcome`, now.
    fn of(plugin: &str, outcome: &'static str) -> Reload {
        Reload {
            time: crate::time::now_rfc3339(),
            plugin: plugin.to_string(),
            outcome,
            hash: None,
            load_millis: None,
            error: None,
        }
    }
}

impl Plugins {
    /// No plugin directory: a lookup of a filter or notifier fails with a
    /// message saying so (the built-in analyzers may still be started).
    pub fn none(metrics: Arc<Metrics>) -> Arc<Plugins> {
        Arc::new(Plugins {
            engine: None,
            dir: None,
            defaults: Limits::default(),
            operator_hosts: AllowedHosts::none(),
            metrics,
            entries: RwLock::new(BTreeMap::new()),
            watcher: Mutex::new(None),
            wake: Mutex::new(None),
            changes: tokio::sync::watch::channel(0).0,
            settled: tokio::sync::watch::channel(0).0,
            scanned: Default::default(),
            reloads: Mutex::default(),
        })
    }

    /// Starts the analyzers compiled into GRW that `names` lists (every one
    /// of [`BUILT_IN`] is known; an unknown name is an error). Each serves
    /// until a file of its name in the plugin directory replaces it; call
    /// before the first [`Plugins::scan`].
    pub fn start_built_in(&self, names: &[String]) -> Result<(), PluginError> {
        for name in names {
            let Some(analyzer) = BUILT_IN.iter().find(|b| b.name == name) else {
                return Err(PluginError::UnknownBuiltIn(name.clone()));
            };
            let plugin = Arc::new(Plugin::built_in(analyzer, self.metrics.clone())?);
            tracing::info!(plugin = %name, "built-in analyzer started");
            let mut entries = self.entries.write();
            let entry = entries.entry(name.clone()).or_default();
            entry.built_in = Some(plugin);
            entry.back_to_built_in();
        }
        self.changes.send_modify(|n| *n += 1);
        Ok(())
    }

    /// Plugins of `dir`, compiled artifacts cached in `cache`.
    /// `operator_hosts` is the operator's `pluginAllowedHosts`: the hosts
    /// notifiers may reach, if their manifest asks for them too (empty =
    /// none). Call [`Plugins::scan`] to load them and [`Plugins::watch`] to
    /// follow changes.
    pub fn new(
        dir: PathBuf,
        cache: Option<ArtifactCache>,
        defaults: Limits,
        operator_hosts: AllowedHosts,
        metrics: Arc<Metrics>,
    ) -> Result<Arc<Plugins>, PluginError> {
        Ok(Arc::new(Plugins {
            engine: Some(PluginEngine::new(cache)?),
            dir: Some(dir),
            defaults,
            operator_hosts,
            metrics,
            entries: RwLock::new(BTreeMap::new()),
            watcher: Mutex::new(None),
            wake: Mutex::new(None),
            changes: tokio::sync::watch::channel(0).0,
            settled: tokio::sync::watch::channel(0).0,
            scanned: Default::default(),
            reloads: Mutex::default(),
        }))
    }

    /// Loads what changed in the directory since the last scan, and waits
    /// until every load it started is done.
    pub fn scan(self: &Arc<Self>) {
        for load in self.scan_except(&HashSet::new()).0 {
            let _ = load.join();
        }
    }

    /// Starts loading what changed in the directory and waits at most
    /// `wait` for the loads: what compiles for longer goes on in the
    /// background, `loading` until it is ready.
    pub fn scan_at_start(self: &Arc<Self>, wait: Duration) {
        let started = Instant::now();
        let loads = self.scan_except(&HashSet::new()).0;
        while loads.iter().any(|l| !l.is_finished()) && started.elapsed() < wait {
            std::thread::sleep(Duration::from_millis(5));
        }
        let still = self
            .entries
            .read()
            .values()
            .filter(|e| e.first_loading())
            .count();
        if still > 0 {
            tracing::info!(
                plugins = still,
                waited_ms = wait.as_millis() as u64,
                "plugins still compiling; serving without them until they are ready"
            );
        }
    }

    /// As [`Plugins::scan`], without waiting for the loads it starts; a
    /// plugin named in `being_written` that fails to load is left as it was,
    /// to be tried again when its writer is done. Returns the loads and
    /// whether a plugin is still being written.
    pub(super) fn scan_except(
        self: &Arc<Self>,
        being_written: &HashSet<String>,
    ) -> (Vec<std::thread::JoinHandle<()>>, bool) {
        let first = !self.scanned.swap(true, std::sync::atomic::Ordering::SeqCst);
        let (Some(engine), Some(dir)) = (&self.engine, &self.dir) else {
            return (Vec::new(), false);
        };
        let names = match plugin_names(dir) {
            Ok(names) => names,
            Err(e) => {
                tracing::warn!(dir = %dir.display(), error = %e, "cannot read the plugin directory");
                return (Vec::new(), false);
            }
        };
        let mut loads = Vec::new();
        let incomplete = names.iter().any(|n| being_written.contains(n));
        for name in &names {
            let Some(candidate) = self.changed(dir, name, being_written.contains(name), first)
            else {
                continue;
            };
            let (plugins, engine) = (self.clone(), engine.clone());
            match std::thread::Builder::new()
                .name("grw-plugin-load".into())
                .spawn(move || plugins.load(&engine, candidate))
            {
                Ok(load) => loads.push(load),
                Err(e) => {
                    tracing::error!(plugin = %name, error = %e, "cannot start a thread to load the plugin")
                }
            }
        }
        let mut entries = self.entries.write();
        let gone: Vec<String> = entries
            .iter()
            .filter(|(n, e)| !names.contains(n) && !e.only_built_in())
            .map(|(n, _)| n.clone())
            .collect();
        for name in gone {
            let changed = match entries.get_mut(&name) {
                Some(entry) if entry.built_in.is_some() => {
                    tracing::info!(plugin = %name, "plugin file removed: the built-in analyzer serves again");
                    entry.back_to_built_in()
                }
                _ => {
                    tracing::info!(plugin = %name, "plugin unloaded: its file was removed");
                    entries.remove(&name).is_some_and(|e| e.serving.is_some())
                }
            };
            self.note_reload(Reload::of(&name, "removed"));
            if changed {
                self.changes.send_modify(|n| *n += 1);
            }
            self.settled.send_modify(|n| *n += 1);
        }
        (loads, incomplete)
    }

    /// Reads one plugin's files; returns them if they differ from what was
    /// last loaded or tried, and from what is being loaded, and marks them
    /// as being loaded. With `incomplete`, a failure to load them will not
    /// be recorded.
    fn changed(
        &self,
        dir: &Path,
        name: &str,
        incomplete: bool,
        at_start: bool,
    ) -> Option<Candidate> {
        let wasm_path = dir.join(format!("{name}.wasm"));
        let manifest_path = dir.join(format!("{name}.json"));
        let wasm = std::fs::read(&wasm_path);
        let manifest_text = match std::fs::read_to_string(&manifest_path) {
            Ok(text) => Some(text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(source) => {
                if !incomplete {
                    self.record_failure(
                        name,
                        String::new(),
                        PluginError::Io {
                            path: manifest_path,
                            source,
                        },
                    );
                }
                return None;
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
        let mut entries = self.entries.write();
        let entry = entries.entry(name.to_string()).or_default();
        // A built-in analyzer's entry exists before the first scan.
        entry.at_start |= at_start;
        if entry.fingerprint == fingerprint
            || entry.loading.as_deref() == Some(&fingerprint)
            || (incomplete && entry.held.as_deref() == Some(&fingerprint))
        {
            return None;
        }
        entry.loading = Some(fingerprint.clone());
        Some(Candidate {
            name: name.to_string(),
            wasm,
            wasm_path,
            manifest_text,
            fingerprint,
            incomplete,
        })
    }

    /// Compiles and instantiates one version; it serves unless a newer
    /// version started loading meanwhile.
    fn load(&self, engine: &PluginEngine, candidate: Candidate) {
        let Candidate {
            name,
            wasm,
            wasm_path,
            manifest_text,
            fingerprint,
            incomplete,
        } = candidate;
        let result = wasm
            .map_err(|source| PluginError::Io {
                path: wasm_path,
                source,
            })
            .and_then(|wasm| {
                let manifest = match &manifest_text {
                    Some(text) => Manifest::parse(text, self.defaults)?,
                    None => Manifest::default_with(self.defaults),
                };
                Plugin::load(
                    engine,
                    &name,
                    &wasm,
                    manifest,
                    &self.operator_hosts,
                    self.metrics.clone(),
                )
            });
        let current = |entries: &BTreeMap<String, Entry>| {
            entries
                .get(&name)
                .is_some_and(|e| e.loading.as_deref() == Some(&fingerprint))
        };
        match result {
            Ok(plugin) => {
                let mut entries = self.entries.write();
                if !current(&entries) {
                    tracing::debug!(plugin = %name, "a newer version is loading; this one is not used");
                    return;
                }
                let (from_cache, functions) = match &plugin.origin {
                    Origin::File {
                        from_cache,
                        functions,
                        ..
                    } => (*from_cache, *functions),
                    Origin::BuiltIn => (false, None),
                };
                tracing::info!(
                    plugin = %name, kind = plugin.kind.as_str(), hash = %plugin.version(),
                    wit_version = %plugin.wit_version, from_cache,
                    functions_compiled = functions.map(|f| f.compiled),
                    functions_reused = functions.map(|f| f.reused),
                    load_ms = plugin.load_time.as_millis() as u64, "plugin loaded"
                );
                self.metrics.plugin_load(&name, true);
                self.note_reload(Reload {
                    hash: Some(plugin.version().to_string()),
                    load_millis: Some(plugin.load_time.as_millis() as u64),
                    ..Reload::of(&name, "loaded")
                });
                if let Some(entry) = entries.get_mut(&name) {
                    entry.fingerprint = fingerprint;
                    entry.loading = None;
                    entry.held = None;
                    entry.serving = Some(Arc::new(plugin));
                    entry.load_error = None;
                }
                drop(entries);
                self.changes.send_modify(|n| *n += 1);
            }
            Err(e) if incomplete => {
                tracing::debug!(plugin = %name, error = %Report(&e), "plugin files are still being written; trying again when they are complete");
                let mut entries = self.entries.write();
                if current(&entries)
                    && let Some(entry) = entries.get_mut(&name)
                {
                    entry.loading = None;
                    entry.held = Some(fingerprint);
                }
                drop(entries);
                // The writer may have finished while this version compiled:
                // have the directory looked at again.
                if let Some(wake) = &*self.wake.lock() {
                    let _ = wake.send(FileEvent::rescan());
                }
            }
            Err(e) => {
                if !current(&self.entries.read()) {
                    return;
                }
                self.record_failure(&name, fingerprint, e);
            }
        }
        self.settled.send_modify(|n| *n += 1);
    }

    fn record_failure(&self, name: &str, fingerprint: String, error: PluginError) {
        self.metrics.plugin_load(name, false);
        let mut entries = self.entries.write();
        let entry = entries.entry(name.to_string()).or_default();
        let serving = entry.serving.is_some();
        let message = Report(&error).to_string();
        tracing::warn!(plugin = name, error = %message, previous_version_serving = serving, "plugin failed to load");
        self.note_reload(Reload {
            error: Some(message.clone()),
            ..Reload::of(name, "failed")
        });
        entry.fingerprint = fingerprint;
        entry.loading = None;
        entry.held = None;
        entry.load_error = Some(message);
    }

    fn note_reload(&self, reload: Reload) {
        let mut reloads = self.reloads.lock();
        if reloads.len() == RELOADS_KEPT {
            reloads.pop_front();
        }
        reloads.push_back(reload);
    }

    /// The last [`RELOADS_KEPT`] loads, failures and removals of plugin
    /// files, newest first.
    pub fn reloads(&self) -> Vec<Reload> {
        self.reloads.lock().iter().rev().cloned().collect()
    }

    /// The serving filter plugin `name`, or why there is none.
    pub fn filter(&self, name: &str) -> Result<Arc<Plugin>, LookupError> {
        self.serving(name, PluginKind::Filter)
    }

    /// The serving notifier plugin `name`, or why there is none.
    pub fn notifier(&self, name: &str) -> Result<Arc<Plugin>, LookupError> {
        self.serving(name, PluginKind::Notifier)
    }

    fn serving(&self, name: &str, kind: PluginKind) -> Result<Arc<Plugin>, LookupError> {
        let name_of = || name.to_string();
        if self.dir.is_none() {
            return Err(LookupError::NoDirectory {
                kind,
                name: name_of(),
            });
        }
        let entries = self.entries.read();
        let Some(entry) = entries.get(name) else {
            return Err(LookupError::Unknown {
                kind,
                name: name_of(),
                known: entries.keys().cloned().collect(),
            });
        };
        match &entry.serving {
            None if entry.loading.is_some() => Err(LookupError::Loading {
                kind,
                name: name_of(),
            }),
            Some(p) if p.kind == kind => Ok(p.clone()),
            Some(p) => Err(LookupError::WrongKind {
                kind,
                name: name_of(),
                is: p.kind,
            }),
            None => Err(LookupError::NotLoaded {
                kind,
                name: name_of(),
                error: entry
                    .load_error
                    .clone()
                    .unwrap_or_else(|| "unknown error".into()),
            }),
        }
    }

    /// Whether `name` has no serving version yet but one is being loaded.
    pub fn is_loading(&self, name: &str) -> bool {
        self.entries
            .read()
            .get(name)
            .is_some_and(Entry::first_loading)
    }

    /// Waits until `name` is no longer [loading](Plugins::is_loading): it
    /// serves, failed, or was removed.
    pub async fn loaded(&self, name: &str) {
        let mut settled = self.settled.subscribe();
        while self.is_loading(name) {
            if settled.changed().await.is_err() {
                return;
            }
        }
    }

    /// Plugins found at start-up that are still loading, for readiness.
    pub fn loading_since_start(&self) -> Vec<String> {
        self.entries
            .read()
            .iter()
            .filter(|(_, e)| e.at_start && e.first_loading())
            .map(|(name, _)| name.clone())
            .collect()
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

    /// How many times the serving plugins changed: what
    /// [`Plugins::subscribe`] ticks with.
    pub fn generation(&self) -> u64 {
        *self.changes.borrow()
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
        (None, _) if entry.loading.is_some() => PluginState::Loading,
        (None, _) => PluginState::Failed,
        (Some(_), Some(_)) => PluginState::Stale,
        (Some(p), None) if p.breaker_open() => PluginState::Broken,
        (Some(_), None) => PluginState::Ready,
    };
    let file = plugin.and_then(|p| match &p.origin {
        Origin::File {
            hash,
            from_cache,
            functions,
        } => Some((hash, *from_cache, *functions)),
        Origin::BuiltIn => None,
    });
    PluginStatus {
        name: name.to_string(),
        state,
        origin: plugin.map(|p| match p.origin {
            Origin::File { .. } => CodeOrigin::File,
            Origin::BuiltIn => CodeOrigin::BuiltIn,
        }),
        loading: entry.loading.is_some(),
        last_error: entry
            .load_error
            .clone()
            .or_else(|| plugin.and_then(Plugin::last_call_error)),
        kind: plugin.map(|p| p.kind),
        wit_version: plugin.map(|p| p.wit_version.clone()),
        hash: file.map(|(hash, _, _)| hash.clone()),
        interest: plugin.map(|p| p.interest.clone()),
        fail_mode: plugin.map(|p| p.manifest.fail_mode),
        limits: plugin.map(|p| p.manifest.limits),
        allowed_hosts: plugin
            .filter(|p| p.kind == PluginKind::Notifier)
            .map(|p| p.manifest.allowed_hosts.clone()),
        instances: plugin.and_then(Plugin::instances),
        load_millis: plugin.map(|p| p.load_time.as_millis() as u64),
        from_cache: file.map(|(_, from_cache, _)| from_cache),
        functions: file.and_then(|(_, _, functions)| functions),
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
            plugins.notifier("chat").err().unwrap().to_string(),
            "unknown notifier plugin `chat`: no plugin directory is configured (pluginDir)"
        );
        assert_eq!(
            plugins.filter("shop").err().unwrap().to_string(),
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
            plugins.notifier("chat").err().unwrap().to_string(),
            "unknown notifier plugin `chat`; loaded plugins: none"
        );
    }
}
