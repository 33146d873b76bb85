//! The daemon's command-line flags. Each flag overrides one key of the
//! config file. The `grw` command (these flags and its tools) is the
//! command line's, in [`crate::cli`].

use std::net::IpAddr;
use std::path::PathBuf;

use clap::builder::PossibleValuesParser;

use super::accepted::{LOG_LEVELS, LOG_TYPES};
use super::error::ConfigError;
use super::types::{Config, WatchOptions, WatchedResource};
use super::values::{Seconds, is_plain_name, names, pick};
use crate::gvk::Gvk;

/// The daemon's command-line flags. Each one overrides the config-file key
/// its help names; see [`Config::apply_flags`].
#[derive(clap::Args, Debug, Clone, Default)]
pub struct Flags {
    /// Config file to read (default ./config.json; if that is absent, all defaults apply)
    #[arg(long, value_name = "FILE", env = "CONFIG_FILE_PATH")]
    pub config: Option<PathBuf>,

    /// Address the HTTP API binds; overrides `listenAddress`
    #[arg(long, value_name = "IP")]
    pub listen_address: Option<IpAddr>,

    /// Port of the HTTP API, 0 for any free port (logged at start-up); overrides `listenPort`
    #[arg(long, value_name = "PORT")]
    pub listen_port: Option<u16>,

    /// Log threshold; overrides `minLogLevel`
    #[arg(
        long,
        value_name = "LEVEL",
        value_parser = PossibleValuesParser::new(names(LOG_LEVELS))
    )]
    pub log_level: Option<String>,

    /// Log format; overrides `logType`
    #[arg(
        long,
        value_name = "TYPE",
        value_parser = PossibleValuesParser::new(names(LOG_TYPES))
    )]
    pub log_type: Option<String>,

    /// Serve a recorded JSON-lines event file instead of a cluster; overrides `replayFile`
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,

    /// Kubeconfig file; overrides `k8sClientConfig.kubeConfigFilePath` and $KUBECONFIG
    #[arg(long, value_name = "FILE")]
    pub kubeconfig: Option<PathBuf>,

    /// File holding the bearer token API clients must send; overrides `apiTokenFile`
    #[arg(long, value_name = "FILE")]
    pub api_token_file: Option<PathBuf>,

    /// Directory of plugin components (NAME.wasm + optional NAME.json); overrides `pluginDir`
    #[arg(long, value_name = "DIR")]
    pub plugin_dir: Option<PathBuf>,

    /// Keep metadata.managedFields in cached objects; overrides `keepManagedFields`
    #[arg(long)]
    pub keep_managed_fields: bool,

    /// Do not start watches for kinds first named in queries; overrides `onDemandWatch`
    #[arg(long)]
    pub no_on_demand_watch: bool,

    /// Seconds a query waits for a new watch to sync; overrides `syncTimeoutSecond`
    #[arg(long, value_name = "SECONDS")]
    pub sync_timeout: Option<Seconds>,

    /// Also watch this kind from start-up, as group/version/Kind (apps/v1/Deployment, v1/Pod);
    /// repeatable; adds to `initialWatchingResources`
    #[arg(long, value_name = "KIND")]
    pub watch: Vec<String>,
}

const WATCH_FORM: &str = "`group/version/Kind` such as `apps/v1/Deployment` or `v1/Pod`";

/// Parses a `--watch` value: `group/version/Kind`, or `version/Kind` for the
/// core group (`core/v1/Pod` works too).
fn parse_watch(s: &str) -> Option<Gvk> {
    let parts: Vec<&str> = s.split('/').collect();
    let ok = |part: &&str| !part.is_empty() && is_plain_name(part);
    match parts.as_slice() {
        [version, kind] if ok(version) && ok(kind) => Some(Gvk::new("", version, kind)),
        [group, version, kind] if ok(group) && ok(version) && ok(kind) => {
            Some(Gvk::new(group, version, kind))
        }
        _ => None,
    }
}

fn flag_error(flag: &str, message: String) -> ConfigError {
    ConfigError::Flag {
        flag: flag.to_string(),
        message,
    }
}

impl Config {
    /// Overrides the values of the config file with the flags that were given.
    ///
    /// `--kubeconfig` also wins over `$KUBECONFIG`. `--watch` kinds are added
    /// to [`Config::initial_resources`] without options or notifiers, unless
    /// the kind is already there. Values clap has already checked are checked
    /// again, since [`Flags`] can be built in code.
    pub fn apply_flags(&mut self, flags: &Flags) -> Result<(), ConfigError> {
        if let Some(name) = &flags.log_level {
            self.log_level = pick(LOG_LEVELS, name)
                .ok_or_else(|| flag_error("--log-level", one_of(names(LOG_LEVELS), name)))?;
        }
        if let Some(name) = &flags.log_type {
            self.log_type = pick(LOG_TYPES, name)
                .ok_or_else(|| flag_error("--log-type", one_of(names(LOG_TYPES), name)))?;
        }
        if let Some(address) = flags.listen_address {
            self.listen_address = address;
        }
        if let Some(port) = flags.listen_port {
            self.listen_port = port;
        }
        if let Some(path) = &flags.replay {
            self.replay_file = Some(path.clone());
        }
        if let Some(path) = &flags.kubeconfig {
            self.client.kubeconfig_path = Some(path.clone());
        }
        if let Some(path) = &flags.plugin_dir {
            self.plugin_dir = Some(path.clone());
        }
        if let Some(path) = &flags.api_token_file {
            self.api_token_file = Some(path.clone());
        }
        if flags.keep_managed_fields {
            self.keep_managed_fields = true;
        }
        if flags.no_on_demand_watch {
            self.on_demand_watch = false;
        }
        if let Some(seconds) = flags.sync_timeout {
            self.sync_timeout = seconds.duration();
        }
        for value in &flags.watch {
            let gvk = parse_watch(value).ok_or_else(|| {
                flag_error("--watch", format!("expected {WATCH_FORM}, got {value:?}"))
            })?;
            if !self.initial_resources.iter().any(|r| r.gvk == gvk) {
                self.initial_resources.push(WatchedResource {
                    gvk,
                    options: WatchOptions::default(),
                    notifiers: Vec::new(),
                });
            }
        }
        super::file::check_access(self)
    }
}

fn one_of<'a>(names: impl Iterator<Item = &'a str>, got: &str) -> String {
    format!(
        "expected one of {}, got {got:?}",
        names.collect::<Vec<_>>().join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{LogLevel, LogType};
    use clap::{CommandFactory, Parser};
    use std::time::Duration;

    /// A command line of these flags alone (the `grw` command adds its
    /// tools, see `crate::cli`).
    #[derive(clap::Parser, Debug)]
    #[command(name = "grw")]
    struct Line {
        #[command(flatten)]
        flags: Flags,
    }

    fn flags(args: &[&str]) -> Flags {
        let mut argv = vec!["grw"];
        argv.extend_from_slice(args);
        Line::try_parse_from(argv)
            .unwrap_or_else(|e| panic!("{args:?}: {e}"))
            .flags
    }

    #[test]
    fn flags_are_well_formed() {
        Line::command().debug_assert();
    }

    #[test]
    fn flags_override_file_values() {
        let file = r#"{
          "minLogLevel": "warn", "logType": "json", "listenAddress": "127.0.0.1", "listenPort": 4000,
          "replayFile": "/old.jsonl", "apiTokenFile": "/old.token", "keepManagedFields": false,
          "onDemandWatch": true, "syncTimeoutSecond": 5,
          "k8sClientConfig": {"kubeConfigFilePath": "/old/kubeconfig"}
        }"#;
        let env = |name: &str| (name == "KUBECONFIG").then(|| "/env/kubeconfig".to_string());
        let (mut config, _) = crate::config::parse(file, &env).unwrap();
        assert_eq!(
            config.client.kubeconfig_path,
            Some(PathBuf::from("/env/kubeconfig"))
        );
        let given = flags(&[
            "--log-level",
            "silly",
            "--log-type",
            "hidden",
            "--listen-address",
            "0.0.0.0",
            "--listen-port",
            "5000",
            "--replay",
            "/new.jsonl",
            "--kubeconfig",
            "/new/kubeconfig",
            "--api-token-file",
            "/new.token",
            "--keep-managed-fields",
            "--no-on-demand-watch",
            "--sync-timeout",
            "1.5",
        ]);
        config.apply_flags(&given).unwrap();
        assert_eq!(config.log_level, LogLevel::Trace);
        assert_eq!(config.log_type, LogType::Hidden);
        assert_eq!(config.listen_address, "0.0.0.0".parse::<IpAddr>().unwrap());
        assert_eq!(config.listen_port, 5000);
        assert_eq!(config.replay_file, Some(PathBuf::from("/new.jsonl")));
        assert_eq!(
            config.client.kubeconfig_path,
            Some(PathBuf::from("/new/kubeconfig"))
        );
        assert_eq!(config.api_token_file, Some(PathBuf::from("/new.token")));
        assert!(config.keep_managed_fields);
        assert!(!config.on_demand_watch);
        assert_eq!(config.sync_timeout, Duration::from_millis(1500));
    }

    #[test]
    fn absent_flags_change_nothing() {
        let file = r#"{"minLogLevel": "warn", "listenPort": 4000, "keepManagedFields": true,
                       "onDemandWatch": false, "replayFile": "/r"}"#;
        let (mut config, _) = crate::config::parse(file, &|_| None).unwrap();
        let before = config.clone();
        config.apply_flags(&Flags::default()).unwrap();
        assert_eq!(config, before);
        config.apply_flags(&flags(&[])).unwrap();
        assert_eq!(config, before);
    }

    #[test]
    fn flags_count_in_the_access_checks() {
        // --api-token-file makes `token` the default of the API listener.
        let (mut config, _) = crate::config::parse("{}", &|_| None).unwrap();
        config
            .apply_flags(&flags(&["--api-token-file", "/t"]))
            .unwrap();
        assert_eq!(config.api_auth(), crate::config::ApiAuth::Token);
        // --replay cannot serve a `delegated` listener.
        let (mut config, _) =
            crate::config::parse(r#"{"apiAuth": "delegated"}"#, &|_| None).unwrap();
        let err = config
            .apply_flags(&flags(&["--replay", "/r.jsonl"]))
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "config key `apiAuth`: `delegated` asks the API server who each caller is and what it may read, and a replayed recording (`replayFile`, --replay) has no API server; choose `none` or `token`"
        );
    }

    #[test]
    fn watch_flags_add_kinds() {
        type Parts = (&'static str, &'static str, &'static str);
        let cases: &[(&str, Option<Parts>)] = &[
            ("apps/v1/Deployment", Some(("apps", "v1", "Deployment"))),
            ("v1/Pod", Some(("", "v1", "Pod"))),
            ("core/v1/Pod", Some(("", "v1", "Pod"))),
            (
                "networking.istio.io/v1beta1/Gateway",
                Some(("networking.istio.io", "v1beta1", "Gateway")),
            ),
            ("Pod", None),
            ("", None),
            ("/v1/Pod", None),
            ("apps//Deployment", None),
            ("apps/v1/", None),
            ("a/b/c/d", None),
            ("apps/v1/Deploy ment", None),
        ];
        for (value, want) in cases {
            let mut config = Config::default();
            let given = Flags {
                watch: vec![value.to_string()],
                ..Flags::default()
            };
            match (config.apply_flags(&given), want) {
                (Ok(()), Some((g, v, k))) => {
                    assert_eq!(config.initial_resources.len(), 1, "{value}");
                    assert_eq!(
                        config.initial_resources[0].gvk,
                        Gvk::new(g, v, k),
                        "{value}"
                    );
                    assert!(config.initial_resources[0].notifiers.is_empty());
                }
                (Err(e), None) => assert_eq!(
                    e.to_string(),
                    format!(
                        "command-line flag `--watch`: expected `group/version/Kind` such as \
                         `apps/v1/Deployment` or `v1/Pod`, got {value:?}"
                    )
                ),
                (result, _) => panic!("{value}: unexpected {result:?}"),
            }
        }
    }

    #[test]
    fn watch_flags_append_to_the_file_and_skip_repeats() {
        let file = r#"{"initialWatchingResources": [{"version": "v1", "kind": "Pod",
                       "notifiers": [{"webhookUrls": ["http://a"]}]}]}"#;
        let (mut config, _) = crate::config::parse(file, &|_| None).unwrap();
        let given = flags(&[
            "--watch",
            "v1/Pod",
            "--watch",
            "apps/v1/Deployment",
            "--watch",
            "apps/v1/Deployment",
        ]);
        assert_eq!(given.watch.len(), 3);
        config.apply_flags(&given).unwrap();
        let kinds: Vec<String> = config
            .initial_resources
            .iter()
            .map(|r| r.gvk.to_string())
            .collect();
        assert_eq!(kinds, ["v1/Pod", "apps/v1/Deployment"]);
        // The file's entry keeps its notifiers.
        assert_eq!(config.initial_resources[0].notifiers.len(), 1);
    }

    #[test]
    fn clap_rejects_bad_values() {
        let cases: &[(&[&str], &str)] = &[
            (&["--listen-port", "65536"], "--listen-port"),
            (&["--listen-port", "http"], "--listen-port"),
            (&["--listen-address", "localhost"], "--listen-address"),
            (&["--log-level", "verbose"], "--log-level"),
            (&["--log-type", "xml"], "--log-type"),
            (
                &["--sync-timeout", "0"],
                "expected a positive number of seconds",
            ),
            (
                &["--sync-timeout=-3"],
                "expected a positive number of seconds",
            ),
            (
                &["--sync-timeout", "NaN"],
                "expected a positive number of seconds",
            ),
            (&["--no-such-flag"], "--no-such-flag"),
        ];
        for (args, want) in cases {
            let mut argv = vec!["grw"];
            argv.extend_from_slice(args);
            let err = Line::try_parse_from(argv).expect_err(&format!("{args:?} was accepted"));
            let message = err.to_string();
            assert!(message.contains(want), "{args:?}: {message}");
        }
    }

    #[test]
    fn apply_flags_checks_values_built_in_code() {
        let cases: Vec<(Flags, &str)> = vec![
            (
                Flags {
                    log_level: Some("loud".into()),
                    ..Flags::default()
                },
                "command-line flag `--log-level`: expected one of silly, trace, debug, info, warn, error, fatal, got \"loud\"",
            ),
            (
                Flags {
                    log_type: Some("xml".into()),
                    ..Flags::default()
                },
                "command-line flag `--log-type`: expected one of json, pretty, hidden, got \"xml\"",
            ),
        ];
        for (given, want) in cases {
            let mut config = Config::default();
            let err = config.apply_flags(&given).expect_err(want);
            assert_eq!(err.to_string(), want);
        }
    }

    #[test]
    fn help_names_the_config_keys() {
        let help = Line::command().render_help().to_string();
        let expected = [
            ("--config <FILE>", "CONFIG_FILE_PATH"),
            ("--listen-address <IP>", "`listenAddress`"),
            ("--listen-port <PORT>", "`listenPort`"),
            ("--log-level <LEVEL>", "`minLogLevel`"),
            ("--log-type <TYPE>", "`logType`"),
            ("--replay <FILE>", "`replayFile`"),
            (
                "--kubeconfig <FILE>",
                "`k8sClientConfig.kubeConfigFilePath`",
            ),
            ("--api-token-file <FILE>", "`apiTokenFile`"),
            ("--keep-managed-fields", "`keepManagedFields`"),
            ("--no-on-demand-watch", "`onDemandWatch`"),
            ("--sync-timeout <SECONDS>", "`syncTimeoutSecond`"),
            ("--watch <KIND>", "`initialWatchingResources`"),
        ];
        for (flag, key) in expected {
            let line = help
                .lines()
                .find(|l| l.contains(flag))
                .unwrap_or_else(|| panic!("{flag} missing from:\n{help}"));
            assert!(line.contains(key), "{flag} should name {key}: {line}");
        }
        assert!(help.contains("silly"), "{help}");
    }
}
