//! Why the configuration could not be loaded.

use std::io;
use std::path::{Path, PathBuf};

/// Why the configuration could not be loaded. Messages are meant for users:
/// they name the file, key or flag and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("cannot read config file `{}`: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        source: io::Error,
    },
    /// The config file is not valid JSON.
    #[error("{} is not valid JSON: {message} at line {line}, column {column}", describe_file(.file))]
    Syntax {
        /// The file, when known.
        file: Option<PathBuf>,
        /// Line of the error, from 1.
        line: usize,
        /// Column of the error, from 1.
        column: usize,
        /// What the JSON parser expected.
        message: String,
    },
    /// The config file holds JSON, but not an object.
    #[error("{} must hold a JSON object at the top level, got {got}", describe_file(.file))]
    NotAnObject {
        /// The file, when known.
        file: Option<PathBuf>,
        /// The value found, shortened.
        got: String,
    },
    /// A key has the wrong type or value, or a required key is missing.
    #[error("config key `{key}`: {message}{}", in_file(.file))]
    Invalid {
        /// The file, when known.
        file: Option<PathBuf>,
        /// Full path of the key, e.g. `initialWatchingResources[0].kind`.
        key: String,
        /// What was expected and what was found.
        message: String,
    },
    /// A command-line flag has a wrong value.
    #[error("command-line flag `{flag}`: {message}")]
    Flag {
        /// The flag, e.g. `--watch`.
        flag: String,
        /// What was expected and what was found.
        message: String,
    },
}

fn describe_file(file: &Option<PathBuf>) -> String {
    match file {
        Some(path) => format!("config file `{}`", path.display()),
        None => "the config file".to_string(),
    }
}

fn in_file(file: &Option<PathBuf>) -> String {
    match file {
        Some(path) => format!(" (in config file `{}`)", path.display()),
        None => String::new(),
    }
}

impl ConfigError {
    /// Records which file an error of [`parse`](super::parse) is about.
    pub(super) fn in_file(mut self, path: &Path) -> Self {
        match &mut self {
            ConfigError::Syntax { file, .. }
            | ConfigError::NotAnObject { file, .. }
            | ConfigError::Invalid { file, .. } => *file = Some(path.to_path_buf()),
            ConfigError::Read { .. } | ConfigError::Flag { .. } => {}
        }
        self
    }
}
