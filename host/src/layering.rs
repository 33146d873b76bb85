//! The import graph of this crate, checked: the top-level modules form no
//! cycle, [`crate::config`] uses nothing above the vocabulary it is written
//! in, and the files of `config/` form no cycle among themselves.
//!
//! Dependencies are read from the source (`crate::module` and, inside a
//! folder, `super::file` paths), leaving out comments and test code, which
//! name modules without depending on them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What `config` may use: the vocabulary its types are written in.
const BELOW_CONFIG: [&str; 3] = ["event", "gvk", "selectors"];

type Graph = BTreeMap<String, BTreeSet<String>>;

fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir` but test files and the `grw new` templates.
fn files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if name != "templates" && name != "tests" {
                out.extend(files(&path));
            }
        } else if name.ends_with(".rs") && name != "tests.rs" && name != "layering.rs" {
            out.push(path);
        }
    }
    out
}

/// The file's code without its test module and without comments.
fn code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(at) => &text[..at],
        None => &text[..],
    };
    text.lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The identifiers that follow `prefix` (`crate::`, `super::`) in `code`.
fn named_after<'a>(code: &'a str, prefix: &'a str) -> impl Iterator<Item = &'a str> + 'a {
    code.match_indices(prefix).map(move |(at, _)| {
        let rest = &code[at + prefix.len()..];
        let end = rest
            .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(rest.len());
        &rest[..end]
    })
}

/// Top-level module → the top-level modules it uses.
fn top_level() -> Graph {
    let root = source_root();
    let mut graph = Graph::new();
    for path in files(&root) {
        let relative = path.strip_prefix(&root).unwrap();
        let first = relative.components().next().unwrap().as_os_str();
        let module = first.to_string_lossy().trim_end_matches(".rs").to_string();
        if module == "lib" || module == "main" {
            continue;
        }
        let code = code(&path);
        let uses = graph.entry(module.clone()).or_default();
        for used in named_after(&code, "crate::") {
            if !used.is_empty() && used != module {
                uses.insert(used.to_string());
            }
        }
    }
    graph
}

/// File → the files of the same folder it uses, for the files of `folder`.
fn inside(folder: &str) -> Graph {
    let dir = source_root().join(folder);
    let mut graph = Graph::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let Some(file) = name.strip_suffix(".rs") else {
            continue;
        };
        let uses = graph.entry(file.to_string()).or_default();
        for used in named_after(&code(&path), "super::") {
            if used != file && dir.join(format!("{used}.rs")).exists() {
                uses.insert(used.to_string());
            }
        }
    }
    graph
}

/// A cycle of `graph`, if it has one.
fn cycle(graph: &Graph) -> Option<Vec<String>> {
    fn visit(
        graph: &Graph,
        node: &str,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut found = path[at..].to_vec();
            found.push(node.to_string());
            return Some(found);
        }
        if !done.insert(node.to_string()) {
            return None;
        }
        path.push(node.to_string());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(found) = visit(graph, next, path, done) {
                return Some(found);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(graph, node, &mut Vec::new(), &mut done))
}

fn show(graph: &Graph) -> String {
    graph
        .iter()
        .map(|(module, uses)| {
            format!(
                "{module} -> {}",
                uses.iter().cloned().collect::<Vec<_>>().join(", ")
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_top_level_modules_form_no_cycle() {
    let graph = top_level();
    assert!(graph.len() > 10, "{}", show(&graph));
    assert_eq!(cycle(&graph), None, "\n{}", show(&graph));
}

#[test]
fn config_uses_nothing_above_it() {
    let graph = top_level();
    let above: Vec<&String> = graph["config"]
        .iter()
        .filter(|m| !BELOW_CONFIG.contains(&m.as_str()))
        .collect();
    assert!(above.is_empty(), "config uses {above:?}");
    for module in BELOW_CONFIG {
        let uses = graph.get(module).cloned().unwrap_or_default();
        assert!(
            uses.iter().all(|m| BELOW_CONFIG.contains(&m.as_str())),
            "{module}, below config, uses {uses:?}"
        );
    }
}

#[test]
fn the_files_of_config_form_no_cycle() {
    let graph = inside("config");
    assert!(graph.contains_key("file"), "{}", show(&graph));
    assert_eq!(cycle(&graph), None, "\n{}", show(&graph));
}

#[test]
fn a_cycle_is_found() {
    let graph: Graph = [("a", "b"), ("b", "c"), ("c", "a")]
        .into_iter()
        .map(|(from, to)| (from.to_string(), BTreeSet::from([to.to_string()])))
        .collect();
    assert_eq!(
        cycle(&graph),
        Some(vec!["a".into(), "b".into(), "c".into(), "a".into()])
    );
    let line: Graph = [("a", "b"), ("b", "c")]
        .into_iter()
        .map(|(from, to)| (from.to_string(), BTreeSet::from([to.to_string()])))
        .collect();
    assert_eq!(cycle(&line), None);
}
