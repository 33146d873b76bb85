//! The import graph of this crate, checked: the top-level modules form no
//! cycle, [`crate::config`] uses nothing above the vocabulary it is written
//! in, and the files of `config/` form no cycle among themselves.
//!
//! Dependencies are read from the source (`crate::module` and, inside a
//! folder, `super::file` paths, braced groups included), leaving out
//! comments, literals and everything under `#[cfg(test)]`, which name
//! modules without the production code depending on them.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What `config` may use: the vocabulary its types are written in (CEL
/// conditions, compiled when read, and the JSON scans they read objects
/// with, among it).
const BELOW_CONFIG: [&str; 5] = ["cel", "event", "gvk", "json_text", "selectors"];

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

/// The file's code without comments, literals and items under
/// `#[cfg(test)]`.
fn code(path: &Path) -> String {
    production(&std::fs::read_to_string(path).unwrap())
}

/// `text` without comments and literals (blanked, so that braces and
/// paths in them are not read), then without each item marked
/// `#[cfg(test)]`: a `mod tests;` line, or a whole braced item, wherever
/// it is in the file.
fn production(text: &str) -> String {
    let code = blank_comments_and_literals(text);
    let mut out = String::with_capacity(code.len());
    let mut rest = code.as_str();
    while let Some(at) = rest.find("#[cfg(test)]") {
        out.push_str(&rest[..at]);
        rest = &rest[at + "#[cfg(test)]".len()..];
        rest = &rest[item_end(rest)..];
    }
    out.push_str(rest);
    out
}

/// Where the item at the start of `code` ends: after its first `;` at
/// depth 0 (`mod tests;`, `use ...;`), or after the block its first `{`
/// opens.
fn item_end(code: &str) -> usize {
    let mut depth = 0usize;
    let mut braced = false;
    for (at, c) in code.char_indices() {
        match c {
            '(' | '[' => depth += 1,
            ')' | ']' => depth = depth.saturating_sub(1),
            ';' if depth == 0 && !braced => return at + 1,
            '{' if depth == 0 || braced => {
                braced = true;
                depth += 1;
            }
            '}' if braced => {
                depth -= 1;
                if depth == 0 {
                    return at + 1;
                }
            }
            _ => {}
        }
    }
    code.len()
}

/// `text` with comments and the insides of string and char literals
/// replaced by spaces; lines are kept.
fn blank_comments_and_literals(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if c == 'r' && matches!(next, Some('"' | '#')) && starts_literal(&chars, i) {
            // A raw string: `r"..."`, `r#"..."#`; ends at `"` and as many `#`.
            let hashes = chars[i + 1..].iter().take_while(|&&c| c == '#').count();
            if chars.get(i + 1 + hashes) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            i += 2 + hashes;
            while i < chars.len() {
                if chars[i] == '"'
                    && chars[i + 1..]
                        .iter()
                        .take(hashes)
                        .filter(|&&c| c == '#')
                        .count()
                        == hashes
                {
                    i += 1 + hashes;
                    break;
                }
                blank(&mut out, chars[i]);
                i += 1;
            }
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
                if let Some(&c) = chars.get(i) {
                    blank(&mut out, c);
                }
                i += 1;
            }
            i += 1;
        } else if c == '\'' && next == Some('\\') {
            // An escaped char literal: `'\''`, `'\u{7b}'`.
            i += 2;
            while i < chars.len() && chars[i] != '\'' {
                i += 1;
            }
            i += 1;
        } else if c == '\'' && chars.get(i + 2) == Some(&'\'') {
            i += 3;
        } else {
            // Code, and lifetimes (`'a` with no closing quote).
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Whether the `r` at `at` begins a raw string (`r"`, `br"`) rather than
/// ends a name.
fn starts_literal(chars: &[char], at: usize) -> bool {
    let ident = |i: Option<usize>| {
        i.and_then(|i| chars.get(i))
            .is_some_and(|c| c.is_alphanumeric() || *c == '_')
    };
    let before = at.checked_sub(1);
    !ident(before)
        || (before.map(|b| chars[b]) == Some('b') && !ident(before.and_then(|b| b.checked_sub(1))))
}

/// The modules named right after `prefix` (`crate::`, `super::`) in
/// `code`, including each of a braced group (`crate::{a, b::c}` names `a`
/// and `b`).
fn named_after(code: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in code.match_indices(prefix) {
        let rest = code[at + prefix.len()..].trim_start();
        match rest.strip_prefix('{') {
            Some(group) => out.extend(first_of_each(braced(group))),
            None => out.push(leading_name(rest).to_string()),
        }
    }
    out.retain(|name| !name.is_empty() && name != "self");
    out
}

/// The inside of the group whose `{` came just before `text`.
fn braced(text: &str) -> &str {
    let mut depth = 1usize;
    for (at, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &text[..at];
                }
            }
            _ => {}
        }
    }
    text
}

/// The first name of each comma-separated path of a braced group's inside.
fn first_of_each(group: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut item_start = 0;
    for (at, c) in group.char_indices().chain([(group.len(), ',')]) {
        match c {
            '{' => depth += 1,
            '}' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(leading_name(group[item_start..at].trim_start()).to_string());
                item_start = at + 1;
            }
            _ => {}
        }
    }
    out
}

/// The identifier at the start of `text`.
fn leading_name(text: &str) -> &str {
    let end = text
        .find(|c: char| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'))
        .unwrap_or(text.len());
    &text[..end]
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
            if used != module {
                uses.insert(used);
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
                uses.insert(used);
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

/// What breaks the layering under `config`: each module above it that
/// `config`, or a module below it, uses.
fn above_config(graph: &Graph) -> Vec<String> {
    let below = |m: &String| BELOW_CONFIG.contains(&m.as_str());
    let mut above: Vec<String> = ["config"]
        .into_iter()
        .chain(BELOW_CONFIG)
        .filter_map(|module| graph.get(module))
        .flatten()
        .filter(|m| !below(m))
        .cloned()
        .collect();
    above.sort();
    above.dedup();
    above
}

#[test]
fn config_uses_nothing_above_it() {
    let graph = top_level();
    assert!(graph.contains_key("config"), "{}", show(&graph));
    assert_eq!(
        above_config(&graph),
        Vec::<String>::new(),
        "\n{}",
        show(&graph)
    );
}

#[test]
fn code_after_a_test_module_and_braced_imports_are_read() {
    let text = r##"
use crate::gvk::Gvk;
// use crate::notify;
const A: &str = "crate::watch {";
#[cfg(test)]
mod tests;
fn served() -> crate::store::Store { todo!() }
#[cfg(test)]
mod more {
    use crate::query::Plan;
    const B: char = '}';
    const C: &str = r#"}"#;
}
#[cfg(test)]
fn helper<'a>(x: &'a str) -> crate::plugin::Engine { todo!() }
use crate::{selectors, api::{self, kubernetes::{read, path}}, self};
use super::{file, types::Key};
"##;
    let code = production(text);
    assert_eq!(
        named_after(&code, "crate::"),
        ["gvk", "store", "selectors", "api"]
    );
    assert_eq!(named_after(&code, "super::"), ["file", "types"]);
    // Read as `config`, the file breaks the layering twice.
    let graph = Graph::from([(
        "config".to_string(),
        named_after(&code, "crate::").into_iter().collect(),
    )]);
    assert_eq!(above_config(&graph), ["api", "store"]);
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
