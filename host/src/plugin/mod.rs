//! WebAssembly component plugins. The rest of GRW talks to this module,
//! never to wasmtime: [`Plugins`] loads the plugin directory and keeps it
//! current, and a loaded [`Plugin`] answers calls within its limits:
//! [`Plugin::decide`] for filters, [`Plugin::deliver`] for notifiers.
//!
//! Lifecycle words: a *compiled* component (machine code, cached on disk),
//! a *pre* (compiled and linked against what GRW grants, not yet
//! instantiated), an *instance* (a store with memory, running). Each plugin
//! keeps a small pool of instances so that concurrent callers do not queue
//! behind one; a trapped instance is thrown away and a fresh one made from
//! the pre when needed.
//!
//! Contract versions: [`contract`] says which versions of `wit/plugin.wit`
//! load. The current one, `grw:plugin@0.2`, is implemented in [`v0_2`]; the
//! frozen `0.1` in [`v0_1`], which turns each 0.1 call into 0.2 terms.
//!
//! The shipped analyzers are also compiled in ([`BUILT_IN`]), and serve as
//! plugins of their names while no file replaces them.
//!
//! This module depends on the store (objects and changes), kinds and
//! metrics only.

mod analysis;
mod builtin;
mod contract;
mod directory;
mod engine;
mod functions;
mod guest;
mod instance;
mod interest;
mod loaded;
mod manifest;
mod outbound;
mod pool;
mod reload;
mod stats;
mod toolchain;
mod v0_1;
mod v0_2;

use std::error::Error as StdError;

pub use analysis::{CacheReader, Found, Relationship};
pub use builtin::{BUILT_IN, BuiltIn};
pub use contract::{
    ComponentNames, Contract, ExportedWorld, LOADABLE, WIT_VERSION, exported_world,
};
pub use directory::{
    CodeOrigin, LookupError, PluginState, PluginStatus, Plugins, RELOADS_KEPT, Reload,
};
pub use engine::{
    ArtifactCache, CACHE_FORMAT, Compiled, DEFAULT_CACHE_MAX_BYTES, PARALLEL_COMPILES,
    PluginEngine, component_hash, default_cache_dir,
};
pub use functions::FunctionReuse;
pub use guest::MemoryLimitExceeded;
pub use interest::Interest;
pub use loaded::{AnalyzeError, CallFailed, DeliveryError, Origin, Plugin};
pub use manifest::{FailMode, Limits, Manifest, ManifestError, NOTIFIER_TIMEOUT, PluginKind};
pub use outbound::MAX_RESPONSE_BODY;
pub use stats::Stats;
pub use toolchain::Toolchain;

/// An underlying error, kept as the source of a [`PluginError`].
pub type BoxError = Box<dyn StdError + Send + Sync + 'static>;

/// Why a plugin cannot be loaded.
#[derive(Debug, thiserror::Error)]
pub enum PluginError {
    /// The file cannot be read.
    #[error("cannot read {path}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The manifest is malformed.
    #[error("manifest")]
    Manifest(#[source] ManifestError),
    /// Not a WebAssembly component (or corrupt).
    #[error("not a valid WebAssembly component")]
    Invalid(#[source] BoxError),
    /// A component of another kind than its manifest says.
    #[error(
        "the manifest says `{}` but the component is a {} plugin (it exports {}@{version})",
        manifest.as_str(),
        component.as_str(),
        component.interface()
    )]
    KindMismatch {
        /// The manifest's `kind`.
        manifest: PluginKind,
        /// What the component exports.
        component: PluginKind,
        /// Its contract version.
        version: String,
    },
    /// A component of no GRW world.
    #[error(
        "the component exports no GRW plugin interface (it exports: {}){hint}; build it for one of the worlds filter-plugin, notifier-plugin or analyzer-plugin of wit/plugin.wit",
        if exports.is_empty() { "nothing".to_string() } else { exports.join(", ") }
    )]
    NoPluginWorld {
        /// What it exports.
        exports: Vec<String>,
        /// How to build one for the toolchain that built it, if known.
        hint: String,
    },
    /// Built against a version of the WIT contract this GRW cannot load.
    #[error(
        "built against grw:plugin@{version}, which this GRW cannot load: it loads grw:plugin@{current}.x (current) and grw:plugin@0.1.x; rebuild the plugin against a compatible wit/plugin.wit ({hint})"
    )]
    Version {
        /// The version it was built against.
        version: String,
        /// The current contract, `major.minor`.
        current: String,
        /// How to update, for the toolchain that built it.
        hint: &'static str,
    },
    /// An analyzer of contract 0.1, which never had analyzers.
    #[error(
        "an analyzer built against grw:plugin@{0}: GRW never ran 0.1 analyzers; rebuild it against grw:plugin@0.2"
    )]
    OldAnalyzer(String),
    /// Imports something GRW does not grant.
    #[error(
        "the component imports {}, which GRW does not grant: {advice}",
        imports.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")
    )]
    Forbidden {
        /// The imports refused.
        imports: Vec<String>,
        /// What to do instead.
        advice: String,
    },
    /// Cannot be linked against what GRW grants.
    #[error("cannot link")]
    Link(#[source] BoxError),
    /// Instantiation failed (e.g. its start code trapped or exceeded its
    /// memory limit).
    #[error("cannot instantiate: {0}")]
    Instantiate(#[source] CallError),
    /// `init` trapped or timed out.
    #[error("init failed: {0}")]
    Init(#[source] CallError),
    /// `init` rejected the configuration with this message.
    #[error("rejected its configuration: {0}")]
    ConfigRejected(String),
    /// The wasmtime engine could not be set up.
    #[error("plugin engine")]
    Engine(#[source] BoxError),
    /// The plugin directory cannot be followed.
    #[error("cannot watch the plugin directory {}", .dir.display())]
    Watch {
        /// The directory.
        dir: std::path::PathBuf,
        /// Why.
        #[source]
        source: file_watcher::Error,
    },
    /// A thread of the plugin runtime cannot be started.
    #[error("cannot start a thread")]
    Thread {
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `builtinAnalyzers` names an analyzer GRW does not have.
    #[error(
        "`builtinAnalyzers`: GRW has no built-in analyzer `{0}`; it has {known}",
        known = BUILT_IN.iter().map(|b| b.name).collect::<Vec<_>>().join(", ")
    )]
    UnknownBuiltIn(String),
}

impl PluginError {
    /// A wasmtime error as a source.
    pub(crate) fn source_of(e: wasmtime::Error) -> BoxError {
        e.into_boxed_dyn_error()
    }
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
    /// Classifies a wasmtime error by its type: the epoch interrupt is
    /// [`wasmtime::Trap::Interrupt`], a refused memory growth is GRW's own
    /// [`MemoryLimitExceeded`] (see [`guest`]).
    pub fn classify(e: &wasmtime::Error) -> CallFailure {
        if e.downcast_ref::<wasmtime::Trap>() == Some(&wasmtime::Trap::Interrupt) {
            CallFailure::Timeout
        } else if e.downcast_ref::<MemoryLimitExceeded>().is_some() {
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
}

/// A call that produced no answer: why, in one line, and wasmtime's error.
///
/// wasmtime's error (a trap with the guest's backtrace, many lines) is kept
/// beside the description rather than as its source, so that a report of
/// the error chain ([`crate::error::Report`]) ends with the one line; the
/// whole of it is logged at `debug` when the call fails.
#[derive(Debug, thiserror::Error)]
#[error("{}", describe(*failure, detail))]
pub struct CallError {
    /// The kind of failure.
    pub failure: CallFailure,
    /// wasmtime's error: a trap with the guest's backtrace, or the limit's.
    pub detail: BoxError,
}

impl CallError {
    pub(crate) fn new(e: wasmtime::Error) -> CallError {
        CallError {
            failure: CallFailure::classify(&e),
            detail: e.into_boxed_dyn_error(),
        }
    }
}

fn describe(failure: CallFailure, detail: &BoxError) -> String {
    match failure {
        CallFailure::Timeout => "did not answer before its deadline (limits.timeoutMs)".into(),
        CallFailure::Memory => "exceeded its memory limit (limits.memoryMb)".into(),
        CallFailure::Trap => {
            let mut root: &(dyn StdError + 'static) = detail.as_ref();
            while let Some(next) = root.source() {
                root = next;
            }
            let root = root.to_string();
            format!("trapped: {}", root.lines().next().unwrap_or("unknown trap"))
        }
    }
}
