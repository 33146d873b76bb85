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

/// What a component imports and exports at its top level, by name (e.g.
/// `grw:plugin/filter@0.2.0`, `wasi:io/streams@0.2.6`): all the checks
/// below read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentNames {
    /// The names of its imports, in the order it declares them.
    pub imports: Vec<String>,
    /// The names of its exports, in the order it declares them.
    pub exports: Vec<String>,
}

impl ComponentNames {
    /// The names as the component's binary declares them, read without
    /// compiling it: a component of the wrong world, or that imports what
    /// GRW does not grant, is then turned away before a compile that takes
    /// seconds for a Python or JavaScript one. `None` when the bytes do not
    /// parse as a component; compiling them says what is wrong.
    pub fn read(wasm: &[u8]) -> Option<ComponentNames> {
        use wasmparser::{Encoding, Parser, Payload};
        let mut names = ComponentNames {
            imports: Vec::new(),
            exports: Vec::new(),
        };
        // Nested modules and components come inline, each from its own
        // `Version` to its own `End`; only the outermost one's names count.
        let mut depth = 0usize;
        for payload in Parser::new(0).parse_all(wasm) {
            match payload.ok()? {
                Payload::Version { encoding, .. } => {
                    if depth == 0 && encoding != Encoding::Component {
                        return None;
                    }
                    depth += 1;
                }
                Payload::End(_) => depth = depth.checked_sub(1)?,
                Payload::ComponentImportSection(reader) if depth == 1 => {
                    for import in reader {
                        names.imports.push(Self::plain(import.ok()?.name)?);
                    }
                }
                Payload::ComponentExportSection(reader) if depth == 1 => {
                    for export in reader {
                        names.exports.push(Self::plain(export.ok()?.name)?);
                    }
                }
                _ => {}
            }
        }
        (depth == 0).then_some(names)
    }

    /// The name as a string, when it is only that: a name with options
    /// (a version given apart from it, say) is left to the compiled
    /// component's type, which says how it reads.
    fn plain(name: wasmparser::ComponentExternName<'_>) -> Option<String> {
        let options = [name.implements, name.version_suffix, name.external_id];
        options
            .iter()
            .all(Option::is_none)
            .then(|| name.name.to_string())
    }

    /// The names of a compiled component's type.
    pub fn of(engine: &PluginEngine, component: &Component) -> ComponentNames {
        let ty = component.component_type();
        let engine = engine.engine();
        ComponentNames {
            imports: ty
                .imports(engine)
                .map(|(name, _)| name.to_string())
                .collect(),
            exports: ty
                .exports(engine)
                .map(|(name, _)| name.to_string())
                .collect(),
        }
    }
}

/// Which GRW interface a component exports, and at which version; rejects
/// components of no GRW world, of incompatible versions, and 0.1 analyzers,
/// with advice for the toolchain that built it, when known.
pub fn exported_world(
    names: &ComponentNames,
    built_with: Option<Toolchain>,
) -> Result<ExportedWorld, PluginError> {
    let exports = &names.exports;
    for name in exports {
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
    Err(PluginError::NoPluginWorld {
        exports: exports.clone(),
        hint,
    })
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
    names: &ComponentNames,
    kind: PluginKind,
    built_with: Option<Toolchain>,
) -> Result<(), PluginError> {
    let refused: Vec<String> = names
        .imports
        .iter()
        .filter(|name| {
            let granted = GRANTED.iter().any(|g| name.starts_with(g))
                || (kind == PluginKind::Notifier && name.starts_with("grw:plugin/outbound-http"))
                || (kind == PluginKind::Analyzer && name.starts_with("grw:plugin/cache"));
            !granted
        })
        .cloned()
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

    /// A component's binary: its header, then each section (id, contents).
    fn component(sections: &[(u8, Vec<u8>)]) -> Vec<u8> {
        let mut wasm = b"\0asm\x0d\0\x01\0".to_vec();
        for (id, contents) in sections {
            assert!(contents.len() < 128, "one-byte sizes only");
            wasm.push(*id);
            wasm.push(contents.len() as u8);
            wasm.extend(contents);
        }
        wasm
    }

    /// A section of one import or export named `name`, of an instance.
    fn naming(name: &str, export: bool) -> Vec<u8> {
        let mut section = vec![1, 0, name.len() as u8];
        section.extend(name.as_bytes());
        // Instance 0; an export then says it ascribes no type.
        section.extend(if export { &[5, 0, 0][..] } else { &[5, 0][..] });
        section
    }

    #[test]
    fn names_are_those_of_the_outermost_component() {
        const IMPORTS: u8 = 10;
        const EXPORTS: u8 = 11;
        const NESTED_COMPONENT: u8 = 4;
        let inner = component(&[(EXPORTS, naming("acme:inner/x@1.0.0", true))]);
        let wasm = component(&[
            (IMPORTS, naming("wasi:io/streams@0.2.6", false)),
            (NESTED_COMPONENT, inner),
            (EXPORTS, naming("grw:plugin/filter@0.2.0", true)),
        ]);
        let names = ComponentNames::read(&wasm).unwrap();
        assert_eq!(names.imports, ["wasi:io/streams@0.2.6"]);
        assert_eq!(names.exports, ["grw:plugin/filter@0.2.0"]);
        assert_eq!(
            exported_world(&names, None).unwrap().kind,
            PluginKind::Filter
        );
        check_imports(&names, PluginKind::Filter, None).unwrap();
    }

    #[test]
    fn what_is_not_a_whole_component_is_left_to_the_compiler() {
        let empty = component(&[]);
        assert_eq!(
            ComponentNames::read(&empty),
            Some(ComponentNames {
                imports: vec![],
                exports: vec![]
            })
        );
        let core_module = b"\0asm\x01\0\0\0";
        assert_eq!(ComponentNames::read(core_module), None);
        assert_eq!(ComponentNames::read(b"plugin"), None);
        let whole = component(&[(11, naming("grw:plugin/filter@0.2.0", true))]);
        for cut in [4, 9, whole.len() - 1] {
            assert_eq!(ComponentNames::read(&whole[..cut]), None, "cut at {cut}");
        }
    }

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
