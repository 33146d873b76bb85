//! The routes the documentation describes are the routes of the OpenAPI
//! document (`host/src/api/openapi.json`), which unit tests of the daemon
//! hold to the routes it serves: every operation of the document is named
//! in docs/ (as `` `GET /api/v1/kinds` ``), and every route docs/ names is
//! in the document.
//!
//! A route is written in docs/ as a method and a path in one code span,
//! possibly after other methods (`` `GET`/`DELETE /api/v1/subscriptions/{name}` ``),
//! with optional parts in brackets (`/api/v1/[namespaces/{ns}/]history/...`,
//! `[?seq=N]`) and a query string, which are read as the document's path
//! with and without the bracketed part. Parameters compare by position, not
//! name (`{name}`, `NAME`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value;

const METHODS: [&str; 5] = ["GET", "POST", "PUT", "DELETE", "PATCH"];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the tests crate is inside the repository")
        .to_path_buf()
}

/// A path with each parameter written `{}`.
fn shape(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            let upper =
                !segment.is_empty() && segment.chars().all(|c| c.is_ascii_uppercase() || c == '_');
            if segment.starts_with('{') || upper {
                "{}".to_string()
            } else {
                segment.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// `METHOD shape` of every operation of the OpenAPI document.
fn documented_by_openapi() -> BTreeSet<String> {
    let text = std::fs::read_to_string(root().join("host/src/api/openapi.json")).unwrap();
    let document: Value = serde_json::from_str(&text).unwrap();
    let mut operations = BTreeSet::new();
    for (path, item) in document["paths"].as_object().unwrap() {
        for method in item.as_object().unwrap().keys() {
            let method = method.to_ascii_uppercase();
            if METHODS.contains(&method.as_str()) {
                operations.insert(format!("{method} {}", shape(path)));
            }
        }
    }
    operations
}

/// The paths a written route stands for: each bracketed part in and out.
fn expansions(path: &str) -> Vec<String> {
    match (path.find('['), path.find(']')) {
        (Some(open), Some(close)) if open < close => {
            let (before, inside, after) =
                (&path[..open], &path[open + 1..close], &path[close + 1..]);
            let mut out = expansions(&format!("{before}{after}"));
            out.extend(expansions(&format!("{before}{inside}{after}")));
            out
        }
        _ => vec![path.to_string()],
    }
}

/// `METHOD shape` of every route written in `text`, with the line.
fn routes_in(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let spans: Vec<&str> = line.split('`').skip(1).step_by(2).collect();
        for (i, span) in spans.iter().enumerate() {
            let Some((method, path)) = span.split_once(' ') else {
                continue;
            };
            if !METHODS.contains(&method) || !path.starts_with('/') {
                continue;
            }
            // `GET`/`DELETE /path`: the spans before, each a method alone.
            let before = spans[..i]
                .iter()
                .rev()
                .take_while(|s| METHODS.contains(s))
                .count();
            let mut methods: Vec<&str> = spans[i - before..i].to_vec();
            methods.push(method);
            for path in expansions(path) {
                let path = path.split('?').next().unwrap_or("");
                for method in &methods {
                    found.push((number + 1, format!("{method} {}", shape(path))));
                }
            }
        }
    }
    found
}

/// Every route docs/ and the README write, with where.
fn documented_by_pages() -> Vec<(String, usize, String)> {
    let mut pages = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    let mut found = Vec::new();
    for page in pages {
        let text = std::fs::read_to_string(&page).unwrap();
        let name = page.strip_prefix(root()).unwrap().display().to_string();
        for (line, route) in routes_in(&text) {
            found.push((name.clone(), line, route));
        }
    }
    found
}

#[test]
fn the_docs_describe_the_routes_of_the_openapi_document_and_no_other() {
    let openapi = documented_by_openapi();
    let pages = documented_by_pages();
    // GRW's routes only: the Kubernetes API's are the API server's.
    let written: BTreeSet<&String> = pages
        .iter()
        .map(|(_, _, route)| route)
        .filter(|route| !route.contains(" /kube/"))
        .collect();
    let undocumented: Vec<&String> = openapi.iter().filter(|op| !written.contains(op)).collect();
    let unknown: Vec<String> = pages
        .iter()
        .filter(|(_, _, route)| !route.contains(" /kube/") && !openapi.contains(route))
        .map(|(page, line, route)| format!("{page}:{line}: {route}"))
        .collect();
    assert!(
        undocumented.is_empty() && unknown.is_empty(),
        "operations of host/src/api/openapi.json no page of docs/ describes (write them as `METHOD /path` in a table or list of docs/native-api.md or the page of their subject): {undocumented:#?}\n\
         routes the docs describe that host/src/api/openapi.json does not have (correct the page, or describe the route in the document): {unknown:#?}"
    );
}

#[test]
fn routes_are_read_as_they_are_written() {
    let text = "| `GET`/`DELETE /api/v1/subscriptions/{name}` | one |\n\
                `GET /api/v1/[namespaces/{ns}/]history/{kind}/{name}?since=&until=`\n\
                `POST /api/v1/subscriptions/{name}/dead-letters/replay[?seq=N]`, `GET /api/v1/plugins/NAME`, `DELETED`";
    let routes: Vec<String> = routes_in(text).into_iter().map(|(_, r)| r).collect();
    assert_eq!(
        routes,
        [
            "GET /api/v1/subscriptions/{}",
            "DELETE /api/v1/subscriptions/{}",
            "GET /api/v1/history/{}/{}",
            "GET /api/v1/namespaces/{}/history/{}/{}",
            "POST /api/v1/subscriptions/{}/dead-letters/replay",
            "POST /api/v1/subscriptions/{}/dead-letters/replay",
            "GET /api/v1/plugins/{}",
        ]
    );
}
