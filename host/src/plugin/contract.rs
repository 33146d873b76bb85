//! Which versions of the plugin contract (`wit/plugin.wit`, package
//! `grw:plugin`) this GRW loads, what a component was built against, and
//! whether it asks only for what GRW grants, in words a plugin author can
//! act on.

use wasmtime::component::Component;

use super::{PluginEngine, PluginError, PluginKind, Toolchain};

/// The version of `wit/plugin.wit` this host implements.
pub const WIT_VERSION: (u64, u64, u64) = (0, 2, 0);

/// The contract versions a component may be built against, newest first:
/// `major.minor`, any patch.
pub const LOADABLE: [Contract; 2] = [Contract::V0_2, Contract::V0_1];

/// A version of the contract GRW implements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Contract {
    /// `grw:plugin@0.1.x`: the object crosses as JSON text in every call.
    /// Filters and notifiers only.
    V0_1,
    /// `grw:plugin@0.2.x`: the object is a resource the plugin queries.
    V0_2,
}

impl Contract {
    /// `major.minor`.
    pub fn as_str(self) -> &'static str {
        match self {
            Contract::V0_1 => "0.1",
            Contract::V0_2 => "0.2",
        }
    }

    fn of(version: &str) -> Option<Contract> {
        let mut parts = version
            .split(['.', '-', '+'])
            .map(|p| p.parse::<u64>().ok());
        // Semver compatibility as the component model applies it: same
        // major, and same minor while the major is 0.
        match (parts.next()?, parts.next()?) {
            (Some(0), Some(1)) => Some(Contract::V0_1),
            (Some(0), Some(2)) => Some(Contract::V0_2),
            _ => None,
        }
    }
}

/// What a component exports: its kind of plugin, the contract it was
/// built against and the exact version it names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportedWorld {
    /// Filter, notifier or analyzer.
    pub kind: PluginKind,
    /// The contract GRW speaks to it in.
    pub contract: Contract,
    /// The version its export names, e.g. `0.2.0`.
    pub version: String,
}

/// Which GRW interface a component exports, and at which version; rejects
/// components of no GRW world, of incompatible versions, and 0.1 analyzers,
/// with advice for the toolchain that built it, when known.
pub fn exported_world(
    engine: &PluginEngine,
    component: &Component,
    built_with: Option<Toolchain>,
) -> Result<ExportedWorld, PluginError> {
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
        let Some(contract) = Contract::of(version) else {
            let (major, minor, _) = WIT_VERSION;
            return Err(PluginError::Version {
                version: version.to_string(),
                current: format!("{major}.{minor}"),
                hint: match built_with {
                    Some(toolchain) => toolchain.update_hint(),
                    None => "with grw-sdk, update the SDK",
                },
            });
        };
        if contract == Contract::V0_1 && kind == PluginKind::Analyzer {
            return Err(PluginError::OldAnalyzer(version.to_string()));
        }
        return Ok(ExportedWorld {
            kind,
            contract,
            version: version.to_string(),
        });
    }
    let hint = match built_with {
        Some(toolchain) => format!(
            " (built with {}'s toolchain; for a filter, {})",
            toolchain.language(),
            toolchain.build_hint("filter-plugin", "filter")
        ),
        None if exports.iter().any(|e| e.starts_with("wasi:cli/run")) => " (it looks like a command-line program: build a library crate (`crate-type = [\"cdylib\"]`) that exports a plugin world, e.g. with grw_sdk::export_filter!)".to_string(),
        None => String::new(),
    };
    Err(PluginError::NoPluginWorld { exports, hint })
}

/// Interfaces GRW links for every plugin: its own `log` and `types`, and
/// WASI 0.2 without authority (no files are opened, no sockets allowed, the
/// environment is empty, stdout and stderr go to GRW's log).
const GRANTED: [&str; 8] = [
    "grw:plugin/log",
    "grw:plugin/types",
    "wasi:cli/",
    "wasi:io/",
    "wasi:clocks/",
    "wasi:random/",
    "wasi:filesystem/",
    "wasi:sockets/",
];

/// Checks a component's imports against what GRW grants a plugin of
/// `kind`, before linking, so that a refusal names the import and says
/// what to do instead, for the toolchain that built it when known.
pub fn check_imports(
    engine: &PluginEngine,
    component: &Component,
    kind: PluginKind,
    built_with: Option<Toolchain>,
) -> Result<(), PluginError> {
    let ty = component.component_type();
    let refused: Vec<String> = ty
        .imports(engine.engine())
        .map(|(name, _)| name.to_string())
        .filter(|name| {
            let granted = GRANTED.iter().any(|g| name.starts_with(g))
                || (kind == PluginKind::Notifier && name.starts_with("grw:plugin/outbound-http"))
                || (kind == PluginKind::Analyzer && name.starts_with("grw:plugin/cache"));
            !granted
        })
        .collect();
    let Some(first) = refused.first() else {
        return Ok(());
    };
    let advice = if let Some(hint) = built_with.and_then(|t| t.import_hint(first)) {
        hint.to_string()
    } else if first.starts_with("grw:plugin/outbound-http") {
        format!(
            "only notifier plugins may send HTTP requests, and this is a {} plugin{}",
            kind.as_str(),
            built_with
                .map(|t| format!(
                    "; to send them, build it as a notifier ({})",
                    t.build_hint("notifier-plugin", "notifier")
                ))
                .unwrap_or_default()
        )
    } else if first.starts_with("wasi:http/") {
        "plugins cannot use wasi:http; a notifier sends requests through grw:plugin/outbound-http (grw_sdk::Http), to the hosts its manifest's allowedHosts names".into()
    } else if first.starts_with("grw:plugin/cache") {
        "only analyzer plugins may read GRW's caches".into()
    } else {
        "a plugin may import grw:plugin/log, WASI 0.2 (cli, io, clocks, random; filesystem and sockets without any file or network access) and, for notifiers, grw:plugin/outbound-http".into()
    };
    Err(PluginError::Forbidden {
        imports: refused,
        advice,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_that_load() {
        for (v, contract) in [
            ("0.1.0", Some(Contract::V0_1)),
            ("0.1.7", Some(Contract::V0_1)),
            ("0.2.0", Some(Contract::V0_2)),
            ("0.2.3", Some(Contract::V0_2)),
            ("0.2.1-rc1", Some(Contract::V0_2)),
            ("0.3.0", None),
            ("1.2.0", None),
            ("x", None),
        ] {
            assert_eq!(Contract::of(v), contract, "{v}");
        }
        assert_eq!(
            LOADABLE[0].as_str(),
            format!("{}.{}", WIT_VERSION.0, WIT_VERSION.1)
        );
    }
}
