//! The documentation's relative links: every `[text](path)`,
//! `[text](path#anchor)` and `[text](#anchor)` of README.md and docs/*.md
//! names a file or directory of the repository and, with an anchor, a
//! heading of that file, as GitHub makes anchors of headings. External
//! (`http:`, `https:`, `mailto:`) links are not fetched.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};

/// The repository's root: the parent of this crate's directory.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate is inside the repository")
        .to_path_buf()
}

/// README.md and every page of docs/, relative to the root.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![PathBuf::from("README.md")];
    let docs = root().join("docs");
    let mut found: Vec<PathBuf> = std::fs::read_dir(&docs)
        .expect("docs/ is readable")
        .map(|entry| entry.expect("a docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .map(|p| Path::new("docs").join(p.file_name().expect("a file name")))
        .collect();
    found.sort();
    pages.extend(found);
    pages
}

/// The text of a Markdown file outside its fenced code blocks, with inline
/// code spans blanked (their text may hold `](` that is no link), and each
/// line's number kept: newlines are left where they were.
fn prose(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut fence: Option<String> = None;
    for line in text.split_inclusive('\n') {
        let trimmed = line.trim_start();
        let marker: String = trimmed.chars().take_while(|c| *c == '`').collect();
        match &fence {
            Some(open) if marker.len() >= open.len() && trimmed.trim() == marker => {
                fence = None;
                out.push('\n');
            }
            Some(_) => out.push_str(if line.ends_with('\n') { "\n" } else { "" }),
            None if marker.len() >= 3 => {
                fence = Some(marker);
                out.push('\n');
            }
            None => out.push_str(line),
        }
    }
    without_code_spans(&out)
}

/// Blanks inline code spans: a run of N backticks up to the next run of
/// exactly N, as CommonMark reads them; newlines inside are kept.
fn without_code_spans(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let run_at = |i: usize| chars[i..].iter().take_while(|c| **c == '`').count();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '`' {
            out.push(chars[i]);
            i += 1;
            continue;
        }
        let open = run_at(i);
        let mut j = i + open;
        let mut close = None;
        while j < chars.len() {
            if chars[j] == '`' {
                let run = run_at(j);
                if run == open {
                    close = Some(j + run);
                    break;
                }
                j += run;
            } else {
                j += 1;
            }
        }
        match close {
            Some(end) => {
                out.extend(
                    chars[i..end]
                        .iter()
                        .map(|c| if *c == '\n' { '\n' } else { ' ' }),
                );
                i = end;
            }
            // No closing run: the backticks are text.
            None => {
                out.extend(&chars[i..i + open]);
                i += open;
            }
        }
    }
    out
}

/// GitHub's anchor of a heading: lowercase, punctuation but `-` and `_`
/// removed, spaces turned into `-`.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown file's headings; a repeated heading gets
/// `-1`, `-2`... as on GitHub.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut anchors = BTreeSet::new();
    // `prose` keeps the lines where they were: it says which lines are
    // outside code blocks, and the heading's text (code spans included)
    // is the original line's.
    for (line, outside) in text.lines().zip(prose(text).lines()) {
        let hashes = outside.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !outside[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(line[hashes..].trim());
        let n = seen.entry(base.clone()).or_insert(0);
        anchors.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    anchors
}

/// Every `](target)` of the text, with its line number.
fn links(text: &str) -> Vec<(usize, String)> {
    let prose = prose(text);
    let mut links = Vec::new();
    for (number, line) in prose.lines().enumerate() {
        let mut rest = line;
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find(')').unwrap_or(after.len());
            links.push((number + 1, after[..end].trim().to_string()));
            rest = &after[end..];
        }
    }
    links
}

/// `a/../b/./c` → `b/c`; `None` when it leaves the root.
fn normalize(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}

/// What is wrong with each relative link of `page` (relative to the root).
fn broken_links(
    page: &Path,
    read: &dyn Fn(&Path) -> Option<String>,
    exists: &dyn Fn(&Path) -> bool,
) -> Vec<String> {
    let text = read(page).unwrap_or_else(|| panic!("{} is readable", page.display()));
    let dir = page.parent().unwrap_or(Path::new(""));
    let mut broken = Vec::new();
    for (line, target) in links(&text) {
        if target.is_empty() {
            broken.push(format!("{}:{line}: a link with no target", page.display()));
            continue;
        }
        if ["http://", "https://", "mailto:"]
            .iter()
            .any(|scheme| target.starts_with(scheme))
        {
            continue;
        }
        let (path, anchor) = match target.split_once('#') {
            Some((path, anchor)) => (path, Some(anchor)),
            None => (target.as_str(), None),
        };
        let file = if path.is_empty() {
            page.to_path_buf()
        } else {
            match normalize(&dir.join(path)) {
                Some(file) => file,
                None => {
                    broken.push(format!(
                        "{}:{line}: `{target}` points outside the repository",
                        page.display()
                    ));
                    continue;
                }
            }
        };
        if !exists(&file) {
            broken.push(format!(
                "{}:{line}: `{target}`: {} does not exist in the repository",
                page.display(),
                file.display()
            ));
            continue;
        }
        let Some(anchor) = anchor else { continue };
        if file.extension().is_none_or(|e| e != "md") {
            broken.push(format!(
                "{}:{line}: `{target}`: an anchor into {}, which is not Markdown",
                page.display(),
                file.display()
            ));
            continue;
        }
        let Some(target_text) = read(&file) else {
            broken.push(format!(
                "{}:{line}: `{target}`: {} is not readable",
                page.display(),
                file.display()
            ));
            continue;
        };
        if !anchors(&target_text).contains(anchor) {
            broken.push(format!(
                "{}:{line}: `{target}`: no heading of {} has the anchor `#{anchor}`",
                page.display(),
                file.display()
            ));
        }
    }
    broken
}

fn read_from_root(path: &Path) -> Option<String> {
    std::fs::read_to_string(root().join(path)).ok()
}

#[test]
fn every_relative_link_of_the_readme_and_docs_points_at_a_file_and_heading() {
    let pages = pages();
    assert!(
        pages.len() > 5,
        "docs/ holds the documentation's pages: {pages:?}"
    );
    let broken: Vec<String> = pages
        .iter()
        .flat_map(|page| broken_links(page, &read_from_root, &|p| root().join(p).exists()))
        .collect();
    assert!(
        broken.is_empty(),
        "broken links (paths are relative to the linking file; anchors are GitHub's: the heading lowercased, spaces as `-`, other punctuation than `-` and `_` removed):\n{}",
        broken.join("\n")
    );
}

#[test]
fn anchors_are_made_as_github_makes_them() {
    let cases = [
        (
            "Scaling: several replicas, one delivering",
            "scaling-several-replicas-one-delivering",
        ),
        (
            "Reaching the API server (`k8sClientConfig`)",
            "reaching-the-api-server-k8sclientconfig",
        ),
        (
            "What the 30 minutes are measured on (2026-11-28, later)",
            "what-the-30-minutes-are-measured-on-2026-11-28-later",
        ),
        ("grw_sdk.log and snake_case", "grw_sdklog-and-snake_case"),
    ];
    for (heading, anchor) in cases {
        assert_eq!(slug(heading), anchor, "{heading}");
    }
    let text = "# Top\n\n```sh\n# not a heading\n```\n\n## Top\n\n## `code` here\n";
    assert_eq!(
        anchors(text).into_iter().collect::<Vec<_>>(),
        ["code-here", "top", "top-1"]
    );
}

#[test]
fn broken_links_are_found_and_others_pass() {
    let files: BTreeMap<&str, &str> = [
        (
            "docs/a.md",
            "# A\n\n## Part one\n\nSee [one](#part-one), [b](b.md#section), [readme](../README.md),\n\
             [gone](#part-two), [missing](nothing.md), [code dir](../tests), [web](https://example.com/x#y),\n\
             `[not](a-link.md)` and\n```\n[nor](this.md)\n```\n[out](../../etc/passwd) [wrong](b.md#nowhere)\n",
        ),
        ("docs/b.md", "# B\n\n### Section\n"),
    ]
    .into_iter()
    .collect();
    let read = |path: &Path| {
        let key = path.to_str()?;
        files
            .get(key)
            .map(|s| s.to_string())
            .or_else(|| read_from_root(path))
    };
    let exists = |path: &Path| {
        path.to_str().is_some_and(|p| files.contains_key(p)) || root().join(path).exists()
    };
    let broken = broken_links(Path::new("docs/a.md"), &read, &exists);
    let targets: Vec<&str> = broken
        .iter()
        .map(|b| b.split('`').nth(1).unwrap_or(b))
        .collect();
    assert_eq!(
        targets,
        [
            "#part-two",
            "nothing.md",
            "../../etc/passwd",
            "b.md#nowhere"
        ],
        "{broken:#?}"
    );
}
