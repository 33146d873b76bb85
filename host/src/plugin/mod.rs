//! WebAssembly component plugins. The rest of GRW talks to this module,
//! never to wasmtime: [`Plugins`] loads the plugin directory and keeps it
//! current, and a loaded [`Plugin`] answers calls within its limits.
//!
//! Lifecycle words: a *compiled* component (machine code, cached on disk),
//! a *pre* (compiled and linked against what GRW grants, not yet
//! instantiated), an *instance* (a store with memory, running). A trapped
//! instance is thrown away; the next call instantiates a fresh one from the pre.

mod directory;
mod engine;
mod filter;
mod guest;
mod manifest;
mod stats;
pub mod tool;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use wasmtime::component::Component;

pub use directory::{PluginState, PluginStatus, Plugins};
pub use engine::{Compiled, PluginEngine};
pub use filter::{FilterInstance, FilterPre, Interest};
pub use manifest::{FailMode, Limits, Manifest, PluginKind};
pub use stats::Stats;

use crate::gvk::Gvk;
use crate::metrics::Metrics;
use crate::store::Change;

/// The version of `wit/plugin.wit` this host implements.
pub const WIT_VERSION: (u64, u64, u64) = (0, 1, 0);

/// Why a plugin cannot be loaded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PluginError {
    /// The file cannot be read.
    #[error("cannot read {0}")]
    Io(String),
    /// The manifest is malformed.
    #[error("manifest: {0}")]
    Manifest(String),
    /// Not a WebAssembly component (or corrupt).
    #[error("not a valid WebAssembly component: {0}")]
    Invalid(String),
    /// A component of another kind than expected, or of no GRW world.
    #[error("{0}")]
    WrongWorld(String),
    /// Built against an incompatible version of the WIT contract.
    #[error("{0}")]
    Version(String),
    /// Imports something GRW does not grant, or lacks an export.
    #[error("cannot link: {0}")]
    Link(String),
    /// Instantiation failed (e.g. its start code trapped or exceeded its memory limit).
    #[error("cannot instantiate: {0}")]
    Instantiate(String),
    /// `init` trapped or timed out.
    #[error("init failed: {0}")]
    Init(String),
    /// `init` rejected the configuration with this message.
    #[error("rejected its configuration: {0}")]
    ConfigRejected(String),
    /// The wasmtime engine could not be set up.
    #[error("plugin engine: {0}")]
    Engine(String),
}

/// Why one call did not produce an answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallFailure {
    /// The deadline passed (epoch interruption).
    Timeout,
    /// The memory limit was hit.
    Memory,
    /// Any other trap, e.g. a panic in the guest.
    Trap,
}

impl CallFailure {
    /// Classifies a wasmtime error.
    pub fn classify(e: &wasmtime::Error) -> CallFailure {
        if e.downcast_ref::<wasmtime::Trap>() == Some(&wasmtime::Trap::Interrupt) {
            return CallFailure::Timeout;
        }
        let text = format!("{e:#}");
        if text.contains("forcing trap when growing memory") || text.contains("memory minimum size")
        {
            CallFailure::Memory
        } else {
            CallFailure::Trap
        }
    }

    /// The metric label.
    pub fn as_str(self) -> &'static str {
        match self {
            CallFailure::Timeout => "timeout",
            CallFailure::Memory => "memory",
            CallFailure::Trap => "trap",
        }
    }

    /// A one-line description for logs and the status API.
    pub fn describe(self, e: &wasmtime::Error) -> String {
        match self {
            CallFailure::Timeout => "did not answer before its deadline (limits.timeoutMs)".into(),
            CallFailure::Memory => "exceeded its memory limit (limits.memoryMb)".into(),
            CallFailure::Trap => {
                // The root cause says what happened; the wasm backtrace is for `debug` logs.
                let root = e.root_cause().to_string();
                tracing::debug!(error = format!("{e:?}"), "plugin trap");
                format!("trapped: {}", root.lines().next().unwrap_or("unknown trap"))
            }
        }
    }
}

/// A loaded plugin: one version of one `.wasm` file with its manifest.
pub struct Plugin {
    /// File name without `.wasm`.
    pub name: Arc<str>,
    /// Filter, notifier or analyzer.
    pub kind: PluginKind,
    /// The WIT version its export names.
    pub wit_version: String,
    /// SHA-256 of the `.wasm` file.
    pub hash: String,
    /// Its manifest, defaults applied.
    pub manifest: Manifest,
    /// What it declared at `init`.
    pub interest: Interest,
    /// Whether the compiled code came from the artifact cache.
    pub from_cache: bool,
    /// How long loading took (compile or cache load, link, instantiate, init).
    pub load_time: Duration,
    runtime: Mutex<Runtime>,
    stats: Stats,
    metrics: Arc<Metrics>,
}

struct Runtime {
    pre: FilterPre,
    instance: Option<FilterInstance>,
    recent_failures: VecDeque<Instant>,
    open_until: Option<Instant>,
    last_error: Option<String>,
}

impl Plugin {
    /// Compiles (or loads from cache), checks the world and version, links,
    /// instantiates and initializes a plugin.
    pub fn load(
        engine: &PluginEngine,
        name: &str,
        wasm: &[u8],
        manifest: Manifest,
        metrics: Arc<Metrics>,
    ) -> Result<Plugin, PluginError> {
        let started = Instant::now();
        let compiled = engine.compile(wasm)?;
        let (kind, wit_version) = exported_kind(engine, &compiled.component)?;
        if let Some(expected) = manifest.kind
            && expected != kind
        {
            return Err(PluginError::WrongWorld(format!(
                "the manifest says `{}` but the component is a {} plugin (it exports {}@{wit_version})",
                expected.as_str(),
                kind.as_str(),
                kind.interface()
            )));
        }
        if kind != PluginKind::Filter {
            return Err(PluginError::WrongWorld(format!(
                "{} plugins are not supported by this GRW yet; only filter plugins are",
                kind.as_str()
            )));
        }
        let name: Arc<str> = name.into();
        let pre = FilterPre::new(engine.engine(), &compiled.component)?;
        let mut instance = pre.instantiate(&name, &manifest.limits)?;
        let interest = instance.init(&manifest.config_text())?;
        Ok(Plugin {
            name,
            kind,
            wit_version,
            hash: compiled.hash,
            interest,
            from_cache: compiled.from_cache,
            load_time: started.elapsed(),
            runtime: Mutex::new(Runtime {
                pre,
                instance: Some(instance),
                recent_failures: VecDeque::new(),
                open_until: None,
                last_error: None,
            }),
            stats: Stats::default(),
            metrics,
            manifest,
        })
    }

    /// Whether a change passes this filter. A filter's interest is what it
    /// wants to let through: changes outside it do not pass, without a call.
    /// When the plugin cannot answer (trap, timeout, memory, open breaker),
    /// its fail mode decides.
    pub fn decide(&self, gvk: &Gvk, change: &Change) -> bool {
        if !self.interest.wants(gvk, change.kind) {
            return false;
        }
        match self.call(gvk, change) {
            Ok(pass) => pass,
            Err(()) => self.manifest.fail_mode == FailMode::Open,
        }
    }

    fn call(&self, gvk: &Gvk, change: &Change) -> Result<bool, ()> {
        let mut runtime = self.runtime.lock();
        let now = Instant::now();
        if let Some(until) = runtime.open_until {
            if now < until {
                self.stats.skipped();
                return Err(());
            }
            runtime.open_until = None;
            tracing::info!(plugin = %self.name, "crash-loop breaker closed; trying the plugin again");
        }
        let started = Instant::now();
        let result = match runtime.instance.take() {
            Some(instance) => Ok(instance),
            None => runtime
                .pre
                .instantiate(&self.name, &self.manifest.limits)
                .and_then(|mut i| i.init(&self.manifest.config_text()).map(|_| i))
                .map_err(|e| (CallFailure::Trap, e.to_string())),
        }
        .and_then(|mut instance| {
            let answer = instance.decide(gvk, change)?;
            Ok((instance, answer))
        });
        let elapsed = started.elapsed();
        match result {
            Ok((instance, answer)) => {
                runtime.instance = Some(instance);
                self.stats.call(elapsed);
                self.metrics
                    .plugin_call(&self.name, elapsed.as_secs_f64(), None);
                Ok(answer)
            }
            Err((failure, message)) => {
                // The instance is gone: its state may be corrupt after a trap.
                self.stats.failure(elapsed, failure);
                self.metrics
                    .plugin_call(&self.name, elapsed.as_secs_f64(), Some(failure.as_str()));
                tracing::warn!(plugin = %self.name, reason = failure.as_str(), error = %message, object = %change.object.key(), "plugin call failed");
                runtime.last_error = Some(message);
                let limits = &self.manifest.limits;
                runtime.recent_failures.push_back(now);
                while runtime
                    .recent_failures
                    .front()
                    .is_some_and(|t| now.duration_since(*t) > limits.breaker_window)
                {
                    runtime.recent_failures.pop_front();
                }
                if runtime.recent_failures.len() >= limits.breaker_failures as usize {
                    runtime.open_until = Some(now + limits.breaker_window);
                    runtime.recent_failures.clear();
                    tracing::warn!(plugin = %self.name, failures = limits.breaker_failures, window_ms = limits.breaker_window.as_millis() as u64, "plugin keeps failing; crash-loop breaker open, not calling it for a while");
                }
                Err(())
            }
        }
    }

    /// Whether the crash-loop breaker is open now.
    pub fn breaker_open(&self) -> bool {
        self.runtime
            .lock()
            .open_until
            .is_some_and(|t| Instant::now() < t)
    }

    /// The last call failure, if any.
    pub fn last_call_error(&self) -> Option<String> {
        self.runtime.lock().last_error.clone()
    }

    /// Call statistics.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }
}

/// Which GRW interface a component exports, and at which version; rejects
/// components of no GRW world and incompatible versions.
fn exported_kind(
    engine: &PluginEngine,
    component: &Component,
) -> Result<(PluginKind, String), PluginError> {
    let ty = component.component_type();
    let exports: Vec<String> = ty
        .exports(engine.engine())
        .map(|(name, _)| name.to_string())
        .collect();
    for name in &exports {
        let Some((interface, version)) = name.split_once('@') else {
            continue;
        };
        let kind = match interface {
            "grw:plugin/filter" => PluginKind::Filter,
            "grw:plugin/notifier" => PluginKind::Notifier,
            "grw:plugin/analyzer" => PluginKind::Analyzer,
            _ => continue,
        };
        if !compatible(version) {
            let (major, minor, _) = WIT_VERSION;
            return Err(PluginError::Version(format!(
                "built against grw:plugin@{version}, which this GRW cannot load: it implements grw:plugin@{major}.{minor}.x; rebuild the plugin against a compatible wit/plugin.wit"
            )));
        }
        return Ok((kind, version.to_string()));
    }
    Err(PluginError::WrongWorld(format!(
        "the component exports no GRW plugin interface (it exports: {}); build it for one of the worlds filter-plugin, notifier-plugin or analyzer-plugin of wit/plugin.wit",
        if exports.is_empty() {
            "nothing".to_string()
        } else {
            exports.join(", ")
        }
    )))
}

/// Semver compatibility as the component model applies it: same major, and
/// same minor while the major is 0.
fn compatible(version: &str) -> bool {
    let mut parts = version
        .split(['.', '-', '+'])
        .map(|p| p.parse::<u64>().ok());
    let (Some(Some(major)), Some(Some(minor))) = (parts.next(), parts.next()) else {
        return false;
    };
    let (host_major, host_minor, _) = WIT_VERSION;
    major == host_major && (major != 0 || minor == host_minor)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compatible_with_the_host() {
        for (v, ok) in [
            ("0.1.0", true),
            ("0.1.7", true),
            ("0.2.0", false),
            ("1.1.0", false),
            ("x", false),
            ("0.1.1-rc1", true),
        ] {
            assert_eq!(compatible(v), ok, "{v}");
        }
    }
}
