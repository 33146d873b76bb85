//! `grw plugin new`: writes a plugin project that builds on its own, in
//! Rust, Python or JavaScript, for any kind of plugin.
//!
//! The project carries the SDK and the WIT contract of this very `grw`
//! binary (embedded at build time), so it needs no checkout of GRW and
//! cannot drift from the daemon that runs it: Rust projects get `grw-sdk`
//! (and `grw-selector`) as path dependencies, Python projects the
//! `grw_sdk` package beside `app.py`, JavaScript projects `grw-sdk/`. Only
//! the language's own toolchain comes from its registry: the
//! `wasm32-wasip2` target, componentize-py from PyPI, componentize-js from
//! npm, at the versions GRW is tested with. A slice of the bundled
//! recording (`events.jsonl`) lets `grw plugin test` run at once.

use std::fmt;
use std::path::{Path, PathBuf};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/embedded_sdk.rs"));
}

/// Events of one namespace of the bundled recording.
const SAMPLE_EVENTS: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/sample-events.jsonl"));

/// The componentize-py GRW's Python plugins are built and tested with.
pub const COMPONENTIZE_PY: &str = "0.25.1";
/// The componentize-js GRW's JavaScript plugins are built and tested with.
pub const COMPONENTIZE_JS: &str = "0.23.0";
/// The bundler sdk/js/build.mjs joins a plugin and the SDK with.
pub const ROLLDOWN: &str = "1.3.2";

/// A language `grw plugin new` writes projects in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Language {
    /// Rust, with grw-sdk.
    Rust,
    /// Python, with grw_sdk and componentize-py.
    Python,
    /// JavaScript, with grw-sdk.js and componentize-js.
    Js,
}

/// The kind of plugin to write.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// Decides which events pass.
    Filter,
    /// Delivers events over HTTP.
    Notifier,
    /// Says how objects relate.
    Analyzer,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Filter => "filter",
            Kind::Notifier => "notifier",
            Kind::Analyzer => "analyzer",
        }
    }
}

/// Why no project was written.
#[derive(Debug)]
pub enum NewError {
    /// The name cannot name a plugin and a package.
    Name(String),
    /// The directory exists and is not empty.
    Exists(PathBuf),
    /// Writing failed.
    Io(PathBuf, std::io::Error),
}

impl fmt::Display for NewError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NewError::Name(name) => write!(
                f,
                "`{name}` cannot name a plugin project: use 1 to 63 lowercase letters, digits and `-`, starting with a letter (e.g. `restart-alert`)"
            ),
            NewError::Exists(dir) => write!(
                f,
                "{} exists and is not empty; choose another name or --dir",
                dir.display()
            ),
            NewError::Io(path, e) => write!(f, "cannot write {}: {e}", path.display()),
        }
    }
}

impl std::error::Error for NewError {}

/// Writes a new project for plugin `name` into `dir` (default `./NAME`);
/// returns the directory and the commands that build and try it.
pub fn new(
    name: &str,
    language: Language,
    kind: Kind,
    dir: Option<&Path>,
) -> Result<(PathBuf, String), NewError> {
    let valid = (1..=63).contains(&name.len())
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && !name.ends_with('-')
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !valid {
        return Err(NewError::Name(name.to_string()));
    }
    let dir = dir.map_or_else(|| PathBuf::from(name), Path::to_path_buf);
    if std::fs::read_dir(&dir).is_ok_and(|mut entries| entries.next().is_some()) {
        return Err(NewError::Exists(dir));
    }
    let vars = Vars { name, kind };
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let mut add = |path: String, text: &str| files.push((path, vars.fill(text).into_bytes()));
    add(format!("{name}.json"), &manifest(kind));
    add("README.md".into(), include_str!("templates/README.md"));
    add(
        ".gitignore".into(),
        "dist/\ntarget/\nnode_modules/\n__pycache__/\n",
    );
    match language {
        Language::Rust => {
            add(
                "Cargo.toml".into(),
                include_str!("templates/rust/Cargo.toml"),
            );
            add(
                "grw-sdk/Cargo.toml".into(),
                include_str!("templates/rust/sdk.toml"),
            );
            add(
                "grw-selector/Cargo.toml".into(),
                include_str!("templates/rust/selector.toml"),
            );
            add("build.sh".into(), include_str!("templates/rust/build.sh"));
            add(
                "src/lib.rs".into(),
                match kind {
                    Kind::Filter => include_str!("templates/rust/filter.rs"),
                    Kind::Notifier => include_str!("templates/rust/notifier.rs"),
                    Kind::Analyzer => include_str!("templates/rust/analyzer.rs"),
                },
            );
        }
        Language::Python => {
            add("build.sh".into(), include_str!("templates/python/build.sh"));
            add(
                "app.py".into(),
                match kind {
                    Kind::Filter => include_str!("templates/python/filter.py"),
                    Kind::Notifier => include_str!("templates/python/notifier.py"),
                    Kind::Analyzer => include_str!("templates/python/analyzer.py"),
                },
            );
            add(
                "test_app.py".into(),
                match kind {
                    Kind::Filter => include_str!("templates/python/test_filter.py"),
                    Kind::Notifier => include_str!("templates/python/test_notifier.py"),
                    Kind::Analyzer => include_str!("templates/python/test_analyzer.py"),
                },
            );
        }
        Language::Js => {
            add("build.sh".into(), include_str!("templates/js/build.sh"));
            add(
                "package.json".into(),
                include_str!("templates/js/package.json"),
            );
            add(
                "plugin.js".into(),
                match kind {
                    Kind::Filter => include_str!("templates/js/filter.js"),
                    Kind::Notifier => include_str!("templates/js/notifier.js"),
                    Kind::Analyzer => include_str!("templates/js/analyzer.js"),
                },
            );
            add(
                "plugin.test.mjs".into(),
                match kind {
                    Kind::Filter => include_str!("templates/js/filter.test.mjs"),
                    Kind::Notifier => include_str!("templates/js/notifier.test.mjs"),
                    Kind::Analyzer => include_str!("templates/js/analyzer.test.mjs"),
                },
            );
        }
    }
    for (path, bytes) in embedded::FILES {
        let target = match (language, path.split_once('/')) {
            (_, Some(("wit", rest))) => format!("wit/{rest}"),
            (Language::Rust, Some(("sdk", rest))) if rest.starts_with("src/") => {
                format!("grw-sdk/{rest}")
            }
            (Language::Rust, Some(("selector", rest))) => format!("grw-selector/{rest}"),
            (Language::Python, Some(("sdk", rest))) => match rest.strip_prefix("python/") {
                Some(rest) => rest.to_string(),
                None => continue,
            },
            (Language::Js, Some(("sdk", rest))) => match rest.strip_prefix("js/") {
                Some(rest) => format!("grw-sdk/{rest}"),
                None => continue,
            },
            _ => continue,
        };
        files.push((target, bytes.to_vec()));
    }
    files.push(("events.jsonl".into(), SAMPLE_EVENTS.to_vec()));
    for (path, bytes) in &files {
        let path = dir.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| NewError::Io(parent.to_path_buf(), e))?;
        }
        std::fs::write(&path, bytes).map_err(|e| NewError::Io(path.clone(), e))?;
        if path.extension().is_some_and(|e| e == "sh") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .map_err(|e| NewError::Io(path.clone(), e))?;
        }
    }
    let test = match language {
        Language::Rust => "cargo test",
        Language::Python => "python3 -m pytest",
        Language::Js => "node --test",
    };
    let next = format!(
        "cd {dir}\n{test}          # the unit tests, natively\n./build.sh          # dist/{name}.wasm and dist/{name}.json\ngrw plugin check dist/{name}.wasm\ngrw plugin test --events events.jsonl dist/{name}.wasm\ncp dist/{name}.* /path/to/pluginDir/   # a running grw loads it at once",
        dir = dir.display()
    );
    Ok((dir, next))
}

fn manifest(kind: Kind) -> String {
    match kind {
        Kind::Filter => r#"{
  "kind": "filter",
  "config": {"label": "app.kubernetes.io/name"},
  "failMode": "closed",
  "limits": {"timeoutMs": 100, "memoryMb": 64}
}
"#
        .into(),
        Kind::Notifier => r#"{
  "kind": "notifier",
  "config": {"url": "http://127.0.0.1:9000/hook"},
  "allowedHosts": ["127.0.0.1"],
  "limits": {"timeoutMs": 5000, "memoryMb": 64}
}
"#
        .into(),
        Kind::Analyzer => r#"{
  "kind": "analyzer",
  "limits": {"timeoutMs": 100, "memoryMb": 64}
}
"#
        .into(),
    }
}

struct Vars<'a> {
    name: &'a str,
    kind: Kind,
}

impl Vars<'_> {
    fn fill(&self, template: &str) -> String {
        template
            .replace("{{name}}", self.name)
            .replace("{{crate}}", &self.name.replace('-', "_"))
            .replace("{{kind}}", self.kind.as_str())
            .replace("{{world}}", &format!("{}-plugin", self.kind.as_str()))
            .replace("{{componentize_py}}", COMPONENTIZE_PY)
            .replace("{{componentize_js}}", COMPONENTIZE_JS)
            .replace("{{rolldown}}", ROLLDOWN)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// New projects pin the toolchains the test suite builds with.
    #[test]
    fn pinned_versions_are_the_ones_the_tests_install() {
        let setup = include_str!("../../../tests/setup.sh");
        for pin in [
            format!("componentize_py={COMPONENTIZE_PY}"),
            format!("componentize_js={COMPONENTIZE_JS}"),
            format!("rolldown={ROLLDOWN}"),
        ] {
            assert!(setup.contains(&pin), "tests/setup.sh does not pin {pin}");
        }
    }

    #[test]
    fn every_template_placeholder_is_filled() {
        let vars = Vars {
            name: "my-plugin",
            kind: Kind::Notifier,
        };
        let filled = vars.fill(
            "{{name}} {{crate}} {{kind}} {{world}} {{componentize_py}} {{componentize_js}} {{rolldown}}",
        );
        assert_eq!(
            filled,
            format!(
                "my-plugin my_plugin notifier notifier-plugin {COMPONENTIZE_PY} {COMPONENTIZE_JS} {ROLLDOWN}"
            )
        );
        for (path, bytes) in embedded::FILES {
            assert!(!bytes.is_empty(), "{path}");
        }
        assert!(
            embedded::FILES
                .iter()
                .any(|(p, _)| *p == "sdk/python/grw_sdk/__init__.py")
        );
        assert!(
            embedded::FILES
                .iter()
                .any(|(p, _)| *p == "sdk/js/grw-sdk.js")
        );
        assert!(embedded::FILES.iter().any(|(p, _)| *p == "wit/plugin.wit"));
    }

    #[test]
    fn names_and_places_that_will_not_do_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        for bad in ["Bad", "9lives", "ends-", "a_b", ""] {
            let error = new(
                bad,
                Language::Python,
                Kind::Filter,
                Some(&dir.path().join("x")),
            )
            .err()
            .unwrap();
            assert!(
                error
                    .to_string()
                    .starts_with(&format!("`{bad}` cannot name")),
                "{error}"
            );
        }
        std::fs::write(dir.path().join("file"), "x").unwrap();
        let error = new("ok", Language::Js, Kind::Filter, Some(dir.path()))
            .err()
            .unwrap();
        assert!(
            error
                .to_string()
                .ends_with("exists and is not empty; choose another name or --dir")
        );
    }
}
