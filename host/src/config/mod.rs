//! Configuration: the GRW config file, the environment and command-line flags.
//!
//! [`load`] finds and reads the config file, resolves environment overrides
//! and applies the [`Flags`]; [`parse`] does the file part on a string. The
//! file format is the one of the earlier GRW plus a few native keys; every
//! key and its default is listed on [`Config`].
//!
//! Everything is checked when the configuration is loaded, into typed
//! values: selectors are parsed ([`Parsed`]), event types are
//! [`ChangeType`](crate::event::ChangeType)s, compat notifier filters are
//! [`NotifierFilter`]s, `pluginAllowedHosts` is an [`AllowedHosts`], a NATS
//! sink is a checked [`nats::NatsSinkConfig`], and native subscriptions are
//! [`SubscriptionConfig`]s, the same type `POST /api/v1/subscriptions`
//! reads.
//!
//! The module sits at the bottom of GRW's module graph: it uses only the
//! vocabulary modules (`gvk`, `event`, `selectors`), and the rest of GRW
//! uses its types. Its files, from the bottom up (each uses only those
//! before it):
//! - `accepted`: the names it accepts (log levels, event types, built-in
//!   analyzers...) and the phrases of what it expects;
//! - `de`: the deserializer that applies the file's rules and names the key
//!   of every error;
//! - `allowed_hosts`, `nats`, `compat_body`: host patterns, NATS sink
//!   settings, and the earlier GRW's query body and notifier filters;
//! - `values`: the checked values of the file (ports, durations, URLs,
//!   paths, selectors...);
//! - `subscription`: native subscriptions, for the file and the API;
//! - `types`: [`Config`] and the types of its parts;
//! - `error`, `file`, `flags`: what goes wrong, the config file's
//!   structure and what depends on the environment, and the command-line
//!   flags (the `grw` command, with its tools, is [`crate::cli`]'s).

mod accepted;
mod allowed_hosts;
mod compat_body;
mod de;
mod error;
mod file;
mod flags;
pub mod kafka;
#[cfg(test)]
mod keys;
pub mod nats;
mod subscription;
mod types;
mod values;

use std::io;
use std::path::{Path, PathBuf};

pub use accepted::{ApiAuth, AuthType, BUILT_IN_ANALYZERS, LogLevel, LogType};
pub use allowed_hosts::{
    AllowedHosts, AllowedHostsError, HostPattern, HostPatternError, NotAllowed, RefusedBy, Target,
    TargetError,
};
pub use compat_body::{FilterError, NotifierFilter, PAIR_MEMBERS, PairConditions, PairError};
pub use de::InvalidKey;
pub use error::ConfigError;
pub use file::parse;
pub use flags::Flags;
pub use subscription::{
    BadName, Destination, Expression, MAX_PLUGIN_NAME_LEN, MAX_SUBSCRIPTION_NAME_LEN,
    MatchCondition, PayloadFormat, PluginName, RetryConfig, SubscriptionConfig, SubscriptionName,
    WebhookConfig,
};
pub use types::*;
pub use values::{Parsed, Seconds, is_http_url};

/// Where the config file is looked for when neither `--config` nor
/// `CONFIG_FILE_PATH` names one.
pub const DEFAULT_CONFIG_PATH: &str = "./config.json";

/// The outcome of [`load`].
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The merged configuration: file, environment, then flags.
    pub config: Config,
    /// Things worth logging once logging is set up: unknown keys, ignored
    /// environment values.
    pub warnings: Vec<String>,
    /// The config file that was read; `None` when the default file was absent.
    pub source: Option<PathBuf>,
}

/// Loads the configuration.
///
/// The config file is `flags.config`, else `$CONFIG_FILE_PATH`, else
/// `./config.json`, with a leading `~` replaced by `$HOME`. A file named by
/// the flag or the environment must exist; an absent `./config.json` means
/// all defaults. The environment (`KUBECONFIG`, `AUTO_INCLUSTER_CONFIG`,
/// `HOME`) is read through `env`, then the flags are applied.
pub fn load(flags: &Flags, env: &dyn Fn(&str) -> Option<String>) -> Result<Loaded, ConfigError> {
    load_from(flags, env, Path::new(DEFAULT_CONFIG_PATH))
}

fn load_from(
    flags: &Flags,
    env: &dyn Fn(&str) -> Option<String>,
    default_path: &Path,
) -> Result<Loaded, ConfigError> {
    let mut warnings = Vec::new();
    let named = flags.config.clone().or_else(|| {
        env("CONFIG_FILE_PATH")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
    });
    let explicit = named.is_some();
    let path = match named {
        Some(path) => {
            let home = env("HOME");
            values::expand_home(&path, home.as_deref()).unwrap_or_else(|| {
                warnings.push(format!(
                    "config file path `{}` starts with `~` but HOME is not set; the path is used as written",
                    path.display()
                ));
                path
            })
        }
        None => default_path.to_path_buf(),
    };

    let text = match std::fs::read_to_string(&path) {
        Ok(text) => Some(text),
        Err(e) if !explicit && e.kind() == io::ErrorKind::NotFound => None,
        Err(source) => return Err(ConfigError::Read { path, source }),
    };
    let (mut config, file_warnings) = match &text {
        Some(text) => parse(text, env).map_err(|e| e.in_file(&path))?,
        None => parse("{}", env)?,
    };
    warnings.extend(file_warnings);
    config.apply_flags(flags)?;
    Ok(Loaded {
        config,
        warnings,
        source: text.is_some().then_some(path),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(pairs: Vec<(&'static str, String)>) -> impl Fn(&str) -> Option<String> {
        move |name| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| v.clone())
        }
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn loads_the_named_file_and_applies_flags() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "grw.json",
            r#"{"listenPort": 4000, "minLogLevel": "debug", "surprise": 1}"#,
        );
        let flags = Flags {
            config: Some(path.clone()),
            listen_port: Some(5000),
            ..Flags::default()
        };
        let loaded = load(&flags, &|_| None).unwrap();
        assert_eq!(loaded.source, Some(path));
        assert_eq!(loaded.config.listen_port, 5000);
        assert_eq!(loaded.config.log_level, LogLevel::Debug);
        assert_eq!(
            loaded.warnings,
            ["config key `surprise` is not known and is ignored"]
        );
    }

    #[test]
    fn config_file_path_comes_from_the_environment() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), "grw.json", r#"{"listenPort": 4001}"#);
        let home = dir.path().to_string_lossy().into_owned();
        let env = env_of(vec![
            ("CONFIG_FILE_PATH", "~/grw.json".to_string()),
            ("HOME", home),
        ]);
        let loaded = load(&Flags::default(), &env).unwrap();
        assert_eq!(loaded.source, Some(dir.path().join("grw.json")));
        assert_eq!(loaded.config.listen_port, 4001);
        // The flag wins over the environment.
        let other = write(dir.path(), "other.json", r#"{"listenPort": 4002}"#);
        let flags = Flags {
            config: Some(other.clone()),
            ..Flags::default()
        };
        let loaded = load(&flags, &env).unwrap();
        assert_eq!(loaded.source, Some(other));
        assert_eq!(loaded.config.listen_port, 4002);
    }

    #[test]
    fn a_named_missing_file_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("absent.json");
        let flags = Flags {
            config: Some(missing.clone()),
            ..Flags::default()
        };
        let err = load(&flags, &|_| None).unwrap_err();
        assert!(matches!(&err, ConfigError::Read { path, .. } if *path == missing));
        let message = err.to_string();
        assert!(
            message.starts_with(&format!(
                "cannot read config file `{}`: ",
                missing.display()
            )),
            "{message}"
        );

        let env = env_of(vec![("CONFIG_FILE_PATH", missing.display().to_string())]);
        let err = load(&Flags::default(), &env).unwrap_err();
        assert!(matches!(err, ConfigError::Read { .. }), "{err}");
    }

    #[test]
    fn a_missing_default_file_means_defaults() {
        let dir = tempfile::tempdir().unwrap();
        let flags = Flags {
            watch: vec!["apps/v1/Deployment".into()],
            ..Flags::default()
        };
        let env = env_of(vec![("HOME", "/home/u".to_string())]);
        let loaded = load_from(&flags, &env, &dir.path().join("config.json")).unwrap();
        assert_eq!(loaded.source, None);
        assert!(loaded.warnings.is_empty());
        assert_eq!(loaded.config.listen_port, 3000);
        assert_eq!(
            loaded.config.client.kubeconfig_path,
            Some(PathBuf::from("/home/u/.kube/config"))
        );
        assert_eq!(loaded.config.initial_resources.len(), 1);

        // A default path that exists is read.
        let present = write(dir.path(), "config.json", r#"{"listenPort": 4003}"#);
        let loaded = load_from(&Flags::default(), &|_| None, &present).unwrap();
        assert_eq!(loaded.source, Some(present));
        assert_eq!(loaded.config.listen_port, 4003);
    }

    #[test]
    fn errors_name_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            (
                "{\n  \"listenPort\": 1,,\n}",
                "config file `{}` is not valid JSON: key must be a string at line 2, column 19",
            ),
            (
                "[1]",
                "config file `{}` must hold a JSON object at the top level, got [1]",
            ),
            (
                r#"{"listenPort": "abc"}"#,
                "config key `listenPort`: expected a number from 1 to 65535, got \"abc\" (in config file `{}`)",
            ),
        ];
        for (i, (text, want)) in cases.iter().enumerate() {
            let path = write(dir.path(), &format!("bad{i}.json"), text);
            let flags = Flags {
                config: Some(path.clone()),
                ..Flags::default()
            };
            let err = load(&flags, &|_| None).unwrap_err();
            assert_eq!(
                err.to_string(),
                want.replace("{}", &path.display().to_string()),
                "case {i}"
            );
        }
    }

    #[test]
    fn bad_watch_flags_stop_loading() {
        let dir = tempfile::tempdir().unwrap();
        let flags = Flags {
            watch: vec!["Deployment".into()],
            ..Flags::default()
        };
        let err = load_from(&flags, &|_| None, &dir.path().join("config.json")).unwrap_err();
        assert!(
            matches!(&err, ConfigError::Flag { flag, .. } if flag == "--watch"),
            "{err}"
        );
    }
}
