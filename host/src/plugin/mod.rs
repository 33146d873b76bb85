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
mod guest;
mod instance;
mod interest;
mod loaded;
mod manifest;
mod outbound;
mod pool;
mod stats;
mod toolchain;
mod v0_1;
mod v0_2;

use std::error::Error as StdError;

pub use analysis::{CacheReader, Found, Relationship};
pub use builtin::{BUILT_IN, BuiltIn};
pub use contract::{Contract, ExportedWorld, LOADABLE, WIT_VERSION, exported_world};
pub use directory::{CodeOrigin, PluginState, PluginStatus, Plugins};
pub use engine::{
    ArtifactCache, CACHE_FORMAT, Compiled, DEFAULT_CACHE_MAX_BYTES, PARALLEL_COMPILES,
    PluginEngine, default_cache_dir,
};
pub use guest::MemoryLimitExceeded;
pub use interest::Interest;
pub use loaded::{DeliveryError, Origin, Plugin};
pub use manifest::{FailMode, Limits, Manifest, NOTIFIER_TIMEOUT, PluginKind};
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
    #[error("manifest: {0}")]
    Manifest(String),
    /// Not a WebAssembly component (or corrupt).
    #[error("not a valid WebAssembly component")]
    Invalid(#[source] BoxError),
    /// A component of another kind than expected, or of no GRW world.
    #[error("{0}")]
    WrongWorld(String),
    /// Built against an incompatible version of the WIT contract.
    #[error("{0}")]
    Version(String),
    /// Imports something GRW does not grant; the message names it.
    #[error("{0}")]
    Forbidden(String),
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
    /// GRW's own plugin settings are wrong (e.g. `pluginAllowedHosts`).
    #[error("config key {0}")]
    Config(String),
}

impl PluginError {
    /// A wasmtime error as a source.
    pub(crate) fn source_of(e: wasmtime::Error) -> BoxError {
        e.into_boxed_dyn_error()
    }
}

/// The error and its sources in one line: `a: b: c`. What the status API
/// and the command line show. A failed call ([`CallError`]) ends the line
/// with its one-line description; wasmtime's trap and the guest's backtrace
/// below it are for `debug` logs.
pub fn error_chain(error: &(dyn StdError + 'static)) -> String {
    let mut text = error.to_string();
    let mut current = error;
    while !current.is::<CallError>()
        && let Some(cause) = current.source()
    {
        let cause_text = cause.to_string();
        // Some errors repeat their source's text in their own.
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        current = cause;
    }
    text
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

/// A call that produced no answer: why, and wasmtime's error.
#[derive(Debug, thiserror::Error)]
#[error("{}", describe(*failure, source))]
pub struct CallError {
    /// The kind of failure.
    pub failure: CallFailure,
    /// wasmtime's error: a trap with the guest's backtrace, or the limit's.
    #[source]
    pub source: BoxError,
}

impl CallError {
    pub(crate) fn new(e: wasmtime::Error) -> CallError {
        CallError {
            failure: CallFailure::classify(&e),
            source: e.into_boxed_dyn_error(),
        }
    }

    /// A one-line description for logs and the status API, without the
    /// wasm backtrace (which is logged at `debug`).
    pub fn describe(&self) -> String {
        self.to_string()
    }
}

fn describe(failure: CallFailure, source: &BoxError) -> String {
    match failure {
        CallFailure::Timeout => "did not answer before its deadline (limits.timeoutMs)".into(),
        CallFailure::Memory => "exceeded its memory limit (limits.memoryMb)".into(),
        CallFailure::Trap => {
            let mut root: &(dyn StdError + 'static) = source.as_ref();
            while let Some(next) = root.source() {
                root = next;
            }
            let root = root.to_string();
            format!("trapped: {}", root.lines().next().unwrap_or("unknown trap"))
        }
    }
}
