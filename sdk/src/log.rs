//! Log lines, written into GRW's log under the plugin's name.
//!
//! Outside GRW (native unit tests) they go to stderr instead.
//!
//! ```
//! grw_sdk::log::info(format!("{} objects seen", 3));
//! ```

/// How important a log line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Level {
    /// Very detailed tracing.
    Trace,
    /// Useful when debugging the plugin.
    Debug,
    /// Normal operation.
    Info,
    /// Something is off but the plugin carries on.
    Warn,
    /// Something failed.
    Error,
}

impl Level {
    /// The level's lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Trace => "trace",
            Level::Debug => "debug",
            Level::Info => "info",
            Level::Warn => "warn",
            Level::Error => "error",
        }
    }
}

/// Writes one log line at `level`.
pub fn log(level: Level, message: impl AsRef<str>) {
    let message = message.as_ref();
    #[cfg(target_arch = "wasm32")]
    {
        use crate::__private::filter_bindings::grw::plugin::log as host;
        let level = match level {
            Level::Trace => host::Level::Trace,
            Level::Debug => host::Level::Debug,
            Level::Info => host::Level::Info,
            Level::Warn => host::Level::Warn,
            Level::Error => host::Level::Error,
        };
        host::log(level, message);
    }
    #[cfg(not(target_arch = "wasm32"))]
    eprintln!("[{}] {message}", level.as_str());
}

/// Writes a trace line.
pub fn trace(message: impl AsRef<str>) {
    log(Level::Trace, message);
}

/// Writes a debug line.
pub fn debug(message: impl AsRef<str>) {
    log(Level::Debug, message);
}

/// Writes an info line.
pub fn info(message: impl AsRef<str>) {
    log(Level::Info, message);
}

/// Writes a warning.
pub fn warn(message: impl AsRef<str>) {
    log(Level::Warn, message);
}

/// Writes an error line.
pub fn error(message: impl AsRef<str>) {
    log(Level::Error, message);
}
