//! The `grw` command: the daemon's flags ([`crate::config::Flags`]) and the
//! tools besides the daemon: `grw plugin check` and `grw plugin test`
//! ([`plugin`]), `grw plugin new` ([`new`]), `grw rbac` ([`rbac`]), `grw
//! probe` ([`probe`]), `grw history` and `grw timeline` ([`journal`]). Each
//! tool owns its arguments; this module puts them together.

pub mod journal;
pub mod new;
pub mod plugin;
pub mod probe;
pub mod rbac;

use std::path::PathBuf;

use crate::config::Flags;

/// The `grw` command line.
#[derive(clap::Parser, Debug, Clone, Default)]
#[command(
    name = "grw",
    version,
    about = "Generic Resources Watcher: watches Kubernetes resources into caches and serves them over HTTP",
    after_help = "Flags override the config-file keys they name."
)]
pub struct Cli {
    /// The daemon's flags.
    #[command(flatten)]
    pub flags: Flags,

    /// A tool instead of the daemon.
    #[command(subcommand)]
    pub command: Option<Command>,
}

/// Tools besides the daemon.
#[derive(clap::Subcommand, Debug, Clone, PartialEq)]
pub enum Command {
    /// Check and try out plugin components
    #[command(subcommand)]
    Plugin(PluginCommand),
    /// Print the least-privilege RBAC (ClusterRole, Roles and bindings) for the configuration
    Rbac(rbac::RbacArgs),
    /// Ask the configured daemon whether it is alive (or ready); exit 0 if it is
    Probe(probe::ProbeArgs),
    /// Print an object's versions from a running daemon's journal: who made each change, and its diff
    History(journal::HistoryArgs),
    /// Print what changed around an object: its changes, those of related objects, their Events and edges
    Timeline(journal::TimelineArgs),
}

/// `grw plugin ...`
#[derive(clap::Subcommand, Debug, Clone, PartialEq)]
pub enum PluginCommand {
    /// Show a component's world and WIT version, what it asks for, and whether it loads and accepts its config
    Check(PluginArgs),
    /// Run a component over recorded watch events and print each decision
    Test {
        /// The plugin and its configuration
        #[command(flatten)]
        plugin: PluginArgs,
        /// Recorded events, one `{"type", "object"}` per line
        #[arg(long, value_name = "RECORDING")]
        events: PathBuf,
    },
    /// Write a new plugin project (source, manifest, build script, unit tests) that builds on its own
    New {
        /// The plugin's name: lowercase letters, digits and `-`
        name: String,
        /// The language to write it in
        #[arg(long, value_enum)]
        lang: new::Language,
        /// The kind of plugin
        #[arg(long, value_enum, default_value = "filter")]
        kind: new::Kind,
        /// Where to write it (default: ./NAME)
        #[arg(long, value_name = "DIR")]
        dir: Option<PathBuf>,
    },
}

/// The component to check or test and its configuration.
#[derive(clap::Args, Debug, Clone, PartialEq)]
pub struct PluginArgs {
    /// The `.wasm` component
    pub file: PathBuf,
    /// Manifest (default: the `.json` beside the file, if any)
    #[arg(long, value_name = "FILE")]
    pub manifest: Option<PathBuf>,
    /// Configuration JSON passed to `init`, instead of the manifest's `config`
    #[arg(long, value_name = "JSON")]
    pub config: Option<String>,
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;

    fn flags(args: &[&str]) -> Cli {
        let mut argv = vec!["grw"];
        argv.extend_from_slice(args);
        Cli::try_parse_from(argv).unwrap_or_else(|e| panic!("{args:?}: {e}"))
    }

    #[test]
    fn command_is_well_formed() {
        Cli::command().debug_assert();
    }

    #[test]
    fn each_tool_has_its_own_config_flag() {
        // `--config` means a file to the daemon, `grw rbac` and `grw probe`,
        // and a plugin's JSON to `grw plugin check` and `test`.
        let plugin = flags(&["plugin", "check", "x.wasm", "--config", "{}"]);
        assert!(matches!(
            plugin.command,
            Some(Command::Plugin(PluginCommand::Check(PluginArgs { config: Some(ref c), .. }))) if c == "{}"
        ));
        let rbac = flags(&["rbac", "--config", "c.json", "--namespace", "shop"]);
        assert!(matches!(
            rbac.command,
            Some(Command::Rbac(rbac::RbacArgs { config: Some(ref c), ref namespace, .. }))
                if c == &PathBuf::from("c.json") && namespace == "shop"
        ));
        let probe = flags(&["--config", "d.json", "probe", "--ready"]);
        assert_eq!(probe.flags.config, Some(PathBuf::from("d.json")));
        assert!(matches!(
            probe.command,
            Some(Command::Probe(probe::ProbeArgs {
                config: None,
                ready: true,
                ..
            }))
        ));
    }
}
