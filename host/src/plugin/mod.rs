//! WebAssembly component plugins. The rest of GRW talks to this module,
//! never to wasmtime: [`Plugins`] loads the plugin directory and keeps it
//! current, and a loaded [`Plugin`] answers calls within its limits:
//! [`Plugin::decide`] for filters, [`Plugin::deliver`] for notifiers.
//!
//! Lifecycle words: a *compiled* component (machine code, cached on disk),
//! a *pre* (compiled and linked against what GRW grants, not yet
//! instantiated), an *instance* (a store with memory, running). A trapped
//! instance is thrown away; the next call instantiates a fresh one from the pre.

mod allowed_hosts;
mod bindings;
mod directory;
mod engine;
mod filter;
mod guest;
mod interest;
mod loaded;
mod manifest;
mod notifier;
mod outbound;
mod stats;
pub mod tool;

use wasmtime::component::Component;

pub use allowed_hosts::AllowedHosts;
pub use directory::{PluginState, PluginStatus, Plugins};
pub use engine::{Compiled, PluginEngine};
pub use filter::{FilterInstance, FilterPre};
pub use interest::Interest;
pub use loaded::Plugin;
pub use manifest::{FailMode, Limits, Manifest, NOTIFIER_TIMEOUT, PluginKind};
pub use outbound::MAX_RESPONSE_BODY;
pub use stats::Stats;

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
    /// GRW's own plugin settings are wrong (e.g. `pluginAllowedHosts`).
    #[error("config key {0}")]
    Config(String),
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
