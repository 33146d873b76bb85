//! `grw history` and `grw timeline`: an object's versions, or its timeline
//! with everything related to it, asked from a running daemon's journal
//! routes and printed as readable text, a diff under each change.
//!
//! The daemon is the one the config file names (its `listenAddress` and
//! `listenPort`, loopback for every address, as `grw probe` asks it), or
//! `--url`. The bearer token is `--token-file`, else `$GRW_TOKEN`, else
//! the config's `apiTokenFile`: run in GRW's own container, the command
//! needs no flag. Colours follow `--color`; `auto` colours a terminal
//! unless `NO_COLOR` is set.

use std::fmt::Write as _;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use crate::config::Config;

/// How to reach the daemon and how to print, for both commands.
#[derive(clap::Args, Debug, Clone, PartialEq)]
pub struct Daemon {
    /// The daemon's URL (default: the address the config file gives it)
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// A file holding the bearer token to send (default: $GRW_TOKEN, else the config's apiTokenFile)
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<PathBuf>,
    /// Colour the output
    #[arg(long, value_enum, default_value = "auto")]
    pub color: Color,
    /// Print the daemon's JSON answer instead of text
    #[arg(long)]
    pub json: bool,
    /// Seconds to wait for the answer
    #[arg(long, value_name = "SECONDS", default_value_t = 30)]
    pub timeout: u64,
}

/// `--color`.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    /// On a terminal, unless `NO_COLOR` is set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// The object asked about, and the window.
#[derive(clap::Args, Debug, Clone, PartialEq)]
pub struct Object {
    /// Its kind, in any form the native API takes (`deployments`, `deploy`, `Deployment`, `apps/v1/Deployment`)
    pub kind: String,
    /// Its name
    pub name: String,
    /// Its namespace (none: a cluster-scoped object)
    #[arg(short, long, value_name = "NS")]
    pub namespace: Option<String>,
    /// From when: a duration back from now (`10m`, `1h`, `2d`) or an RFC 3339 time
    #[arg(long, value_name = "WHEN")]
    pub since: Option<String>,
    /// Until when, as `--since`
    #[arg(long, value_name = "WHEN")]
    pub until: Option<String>,
    /// At most this many entries
    #[arg(long, value_name = "N")]
    pub limit: Option<u64>,
}

/// `grw history`.
#[derive(clap::Args, Debug, Clone, PartialEq)]
pub struct HistoryArgs {
    /// The object.
    #[command(flatten)]
    pub object: Object,
    /// The daemon.
    #[command(flatten)]
    pub daemon: Daemon,
}

/// `grw timeline`.
#[derive(clap::Args, Debug, Clone, PartialEq)]
pub struct TimelineArgs {
    /// The object.
    #[command(flatten)]
    pub object: Object,
    /// Steps of relations to follow, 1 to 5
    #[arg(long, value_name = "N")]
    pub depth: Option<u32>,
    /// Follow only these relations (comma-separated, e.g. `owns,uses`)
    #[arg(long, value_name = "NAMES")]
    pub relation: Option<String>,
    /// The daemon.
    #[command(flatten)]
    pub daemon: Daemon,
}

/// Why the answer could not be had.
#[derive(Debug, thiserror::Error)]
pub enum AskError {
    /// No URL: the config's port is 0.
    #[error("{0}; or name the daemon with --url")]
    Address(#[from] super::probe::ProbeError),
    /// `--url` is not a URL.
    #[error("--url `{url}` is not an http:// or https:// URL")]
    Url {
        /// As given.
        url: String,
    },
    /// The token file cannot be read.
    #[error("cannot read the token file {}", path.display())]
    Token {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The request failed.
    #[error("cannot ask GRW at {url}")]
    Request {
        /// What was asked.
        url: String,
        /// Why it failed.
        #[source]
        source: reqwest::Error,
    },
    /// The daemon refused.
    #[error("GRW answered {status}: {message}")]
    Refused {
        /// The status code.
        status: u16,
        /// The answer's message, or its body.
        message: String,
    },
}

/// Asks for the history of an object; the text (or JSON) to print.
pub async fn history(config: &Config, args: &HistoryArgs) -> Result<String, AskError> {
    let answer = ask(config, &args.daemon, "history", &args.object, &[]).await?;
    Ok(if args.daemon.json {
        pretty(&answer)
    } else {
        render_history(&answer, Style::new(args.daemon.color))
    })
}

/// Asks for the timeline of an object; the text (or JSON) to print.
pub async fn timeline(config: &Config, args: &TimelineArgs) -> Result<String, AskError> {
    let mut extra = Vec::new();
    if let Some(depth) = args.depth {
        extra.push(("depth", depth.to_string()));
    }
    if let Some(relation) = &args.relation {
        extra.push(("relation", relation.clone()));
    }
    let answer = ask(config, &args.daemon, "timeline", &args.object, &extra).await?;
    Ok(if args.daemon.json {
        pretty(&answer)
    } else {
        render_timeline(&answer, Style::new(args.daemon.color))
    })
}

fn pretty(answer: &Value) -> String {
    serde_json::to_string_pretty(answer).unwrap_or_default() + "\n"
}

async fn ask(
    config: &Config,
    daemon: &Daemon,
    route: &str,
    object: &Object,
    extra: &[(&str, String)],
) -> Result<Value, AskError> {
    let base = match &daemon.url {
        Some(url) => url.trim_end_matches('/').to_string(),
        None => format!("http://{}", super::probe::address(config)?),
    };
    let mut url = url::Url::parse(&base)
        .ok()
        .filter(|u| matches!(u.scheme(), "http" | "https") && u.host().is_some())
        .ok_or_else(|| AskError::Url { url: base.clone() })?;
    {
        let mut path = url
            .path_segments_mut()
            .map_err(|()| AskError::Url { url: base.clone() })?;
        path.pop_if_empty().extend(["api", "v1"]);
        if let Some(namespace) = &object.namespace {
            path.extend(["namespaces", namespace]);
        }
        path.extend([route, &object.kind, &object.name]);
    }
    {
        let mut query = url.query_pairs_mut();
        for (key, value) in [
            ("since", object.since.clone()),
            ("until", object.until.clone()),
            ("limit", object.limit.map(|l| l.to_string())),
        ] {
            if let Some(value) = value {
                query.append_pair(key, &value);
            }
        }
        for (key, value) in extra {
            query.append_pair(key, value);
        }
    }
    let url = url.to_string().trim_end_matches('?').to_string();
    let failed = |source| AskError::Request {
        url: url.clone(),
        source,
    };
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(daemon.timeout.max(1)))
        .build()
        .map_err(failed)?;
    let mut request = client.get(&url);
    if let Some(token) = token(config, daemon)? {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.map_err(failed)?;
    let status = response.status();
    let body = response.bytes().await.map_err(failed)?;
    let answer: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    if !status.is_success() {
        let message = answer["message"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| String::from_utf8_lossy(&body).trim().to_string());
        return Err(AskError::Refused {
            status: status.as_u16(),
            message,
        });
    }
    Ok(answer)
}

/// `--token-file`, else `$GRW_TOKEN`, else the config's `apiTokenFile`.
fn token(config: &Config, daemon: &Daemon) -> Result<Option<String>, AskError> {
    let read = |path: &PathBuf| {
        std::fs::read_to_string(path)
            .map(|t| Some(t.trim().to_string()))
            .map_err(|source| AskError::Token {
                path: path.clone(),
                source,
            })
    };
    if let Some(path) = &daemon.token_file {
        return read(path);
    }
    if let Some(token) = std::env::var("GRW_TOKEN").ok().filter(|t| !t.is_empty()) {
        return Ok(Some(token));
    }
    match &config.api_token_file {
        Some(path) => read(path),
        None => Ok(None),
    }
}

/// ANSI colours, or none.
#[derive(Debug, Clone, Copy)]
pub struct Style {
    on: bool,
}

impl Style {
    /// As `--color` says, for standard output.
    pub fn new(color: Color) -> Style {
        let on = match color {
            Color::Always => true,
            Color::Never => false,
            Color::Auto => {
                std::io::stdout().is_terminal() && std::env::var_os("NO_COLOR").is_none()
            }
        };
        Style { on }
    }

    /// Colours or not.
    pub fn with(on: bool) -> Style {
        Style { on }
    }

    fn paint(&self, code: &str, text: &str) -> String {
        if self.on && !text.is_empty() {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    fn bold(&self, text: &str) -> String {
        self.paint("1", text)
    }

    fn dim(&self, text: &str) -> String {
        self.paint("2", text)
    }

    /// A change type, coloured by what it did.
    fn change(&self, change: &str) -> String {
        let code = match change {
            "ADDED" | "EDGE_ADDED" => "32",
            "DELETED" | "EDGE_REMOVED" => "31",
            "MODIFIED" => "33",
            "EVENT" => "36",
            _ => "35",
        };
        self.paint(&format!("1;{code}"), &format!("{change:<12}"))
    }

    /// A diff line: `+` green, `-` red, `~` yellow.
    fn diff(&self, line: &str) -> String {
        let code = match line.chars().next() {
            Some('+') => "32",
            Some('-') => "31",
            Some('~') => "33",
            _ => "0",
        };
        self.paint(code, line)
    }
}

/// `2026-11-29T10:04:00.123456Z` as `2026-11-29 10:04:00.123`.
fn when(item: &Value) -> String {
    let time = item["time"].as_str().unwrap_or("");
    let time = time.trim_end_matches('Z');
    let (date_time, fraction) = time.split_once('.').unwrap_or((time, ""));
    let millis: String = fraction.chars().take(3).collect();
    let shown = date_time.replacen('T', " ", 1);
    if millis.is_empty() {
        shown
    } else {
        format!("{shown}.{millis}")
    }
}

/// `group/Kind namespace/name` of an item or of `object`.
fn identity(item: &Value) -> String {
    let text = |k: &str| item[k].as_str().unwrap_or("");
    let group = if text("group").is_empty() {
        "core"
    } else {
        text("group")
    };
    let name = if text("namespace").is_empty() {
        text("name").to_string()
    } else {
        format!("{}/{}", text("namespace"), text("name"))
    };
    format!("{group}/{} {name}", text("kind"))
}

/// `by MANAGER (OPERATION, SUBRESOURCE)`, `?` for a guess.
fn who(item: &Value) -> String {
    let who = &item["who"];
    let Some(manager) = who["manager"].as_str() else {
        return String::new();
    };
    let mut how = vec![who["operation"].as_str().unwrap_or("").to_string()];
    if let Some(sub) = who["subresource"].as_str() {
        how.push(sub.to_string());
    }
    let guess = if who["guessed"] == true {
        ", a guess"
    } else {
        ""
    };
    format!("by {manager} ({}{guess})", how.join(", "))
}

fn origin(item: &Value) -> String {
    match (item["origin"].as_str(), item["gap"]["from"].as_str()) {
        (Some("relist"), Some(from)) => format!(
            "[found by a relist; GRW did not watch from {from} to {}]",
            item["gap"]["until"].as_str().unwrap_or("?")
        ),
        (Some("relist"), None) => "[found by a relist]".to_string(),
        (Some("initial"), _) => "[first seen]".to_string(),
        _ => String::new(),
    }
}

fn diff_lines(out: &mut String, item: &Value, style: Style) {
    for line in item["diffText"].as_array().into_iter().flatten() {
        let _ = writeln!(out, "    {}", style.diff(line.as_str().unwrap_or("")));
    }
}

fn head(parts: &[String]) -> String {
    parts
        .iter()
        .filter(|p| !p.is_empty())
        .cloned()
        .collect::<Vec<_>>()
        .join("  ")
}

/// The text of a `History` answer.
pub fn render_history(answer: &Value, style: Style) -> String {
    let mut out = String::new();
    let items = answer["items"].as_array().cloned().unwrap_or_default();
    let _ = writeln!(
        out,
        "{}: {} version{}, newest first",
        style.bold(&identity(&answer["object"])),
        items.len(),
        if items.len() == 1 { "" } else { "s" }
    );
    for item in &items {
        let change = item["type"].as_str().unwrap_or("?");
        let _ = writeln!(
            out,
            "{}",
            head(&[
                style.dim(&when(item)),
                style.change(change),
                who(item),
                style.dim(&origin(item)),
            ])
        );
        diff_lines(&mut out, item, style);
    }
    out
}

/// `via uses → core/ConfigMap shop/settings, ...` of an item's path.
fn via(item: &Value) -> String {
    let steps: Vec<String> = item["path"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|step| {
            let arrow = if step["direction"] == "in" {
                "←"
            } else {
                "→"
            };
            format!(
                "{} {arrow} {}",
                step["relation"].as_str().unwrap_or("?"),
                step["object"].as_str().unwrap_or("?")
            )
        })
        .collect();
    if steps.is_empty() {
        String::new()
    } else {
        format!("via {}", steps.join(", "))
    }
}

/// The text of a `Timeline` answer.
pub fn render_timeline(answer: &Value, style: Style) -> String {
    let mut out = String::new();
    let items = answer["items"].as_array().cloned().unwrap_or_default();
    let related = answer["related"].as_array().map_or(0, Vec::len);
    let mut left_out = Vec::new();
    if answer["truncated"] == true {
        left_out.push("older entries past the limit");
    }
    if answer["objectsCapped"] == true {
        left_out.push("objects past the most a timeline walks");
    }
    let left_out = if left_out.is_empty() {
        String::new()
    } else {
        format!(" (left out: {})", left_out.join("; "))
    };
    let _ = writeln!(
        out,
        "{}: {} entr{} since {}, {} object{} within depth {}{left_out}",
        style.bold(&identity(&answer["object"])),
        items.len(),
        if items.len() == 1 { "y" } else { "ies" },
        answer["since"].as_str().unwrap_or("?"),
        related,
        if related == 1 { "" } else { "s" },
        answer["depth"],
    );
    for item in &items {
        let change = item["type"].as_str().unwrap_or("?");
        let first = match change {
            "EDGE_ADDED" | "EDGE_REMOVED" => {
                let edge = &item["edge"];
                let text = |k: &str| edge[k].as_str().unwrap_or("?").to_string();
                head(&[
                    style.dim(&when(item)),
                    style.change(change),
                    format!("{} {} {}", text("from"), text("relation"), text("to")),
                    style.dim(&format!("({})", text("analyzer"))),
                ])
            }
            "EVENT" => {
                let event = &item["event"];
                let kind = event["type"].as_str().unwrap_or("");
                let kind = if kind == "Warning" {
                    style.paint("1;31", kind)
                } else {
                    kind.to_string()
                };
                head(&[
                    style.dim(&when(item)),
                    style.change(change),
                    kind,
                    style.bold(event["reason"].as_str().unwrap_or("")),
                    identity(item),
                    style.dim(&via(item)),
                ])
            }
            _ => head(&[
                style.dim(&when(item)),
                style.change(change),
                identity(item),
                who(item),
                style.dim(&via(item)),
                style.dim(&origin(item)),
            ]),
        };
        let _ = writeln!(out, "{first}");
        if change == "EVENT" {
            let event = &item["event"];
            let count = event["count"]
                .as_u64()
                .filter(|c| *c > 1)
                .map(|c| format!(" (×{c})"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "    {}{count}",
                event["note"].as_str().unwrap_or("").trim()
            );
        }
        diff_lines(&mut out, item, style);
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn history_reads_as_versions_with_their_diffs() {
        let answer = json!({"kind": "History",
        "object": {"group": "apps", "kind": "Deployment", "namespace": "shop", "name": "web"},
        "items": [
            {"time": "2026-11-29T10:02:00.456789Z", "type": "MODIFIED", "origin": "watch",
             "who": {"manager": "kubectl", "operation": "Update", "subresource": "scale"},
             "diffText": ["~ /spec/replicas: 1 → 3"]},
            {"time": "2026-11-29T10:01:30.5Z", "type": "MODIFIED", "origin": "relist",
             "gap": {"from": "2026-11-29T10:01:00Z", "until": "2026-11-29T10:01:30Z"},
             "who": {"manager": "kube-controller-manager", "operation": "Update",
                     "subresource": "status", "guessed": true},
             "diffText": ["+ /status/readyReplicas: 1", "- /status/unavailableReplicas: 1"]},
            {"time": "2026-11-29T10:00:00Z", "type": "ADDED", "origin": "initial", "who": null,
             "diffText": []},
        ]});
        assert_eq!(
            render_history(&answer, Style::with(false)),
            "apps/Deployment shop/web: 3 versions, newest first\n\
             2026-11-29 10:02:00.456  MODIFIED      by kubectl (Update, scale)\n\
             \x20   ~ /spec/replicas: 1 → 3\n\
             2026-11-29 10:01:30.5  MODIFIED      by kube-controller-manager (Update, status, a guess)  \
             [found by a relist; GRW did not watch from 2026-11-29T10:01:00Z to 2026-11-29T10:01:30Z]\n\
             \x20   + /status/readyReplicas: 1\n\
             \x20   - /status/unavailableReplicas: 1\n\
             2026-11-29 10:00:00  ADDED         [first seen]\n"
        );
        let coloured = render_history(&answer, Style::with(true));
        assert!(coloured.contains("\x1b[33m~ /spec/replicas: 1 → 3\x1b[0m"));
        assert!(coloured.contains("\x1b[32m+ /status/readyReplicas: 1\x1b[0m"));
        assert!(coloured.contains("\x1b[31m- /status/unavailableReplicas: 1\x1b[0m"));
    }

    #[test]
    fn timeline_says_how_each_entry_relates() {
        let answer = json!({"kind": "Timeline",
        "object": {"group": "apps", "kind": "Deployment", "namespace": "shop", "name": "web"},
        "since": "2026-11-29T09:00:00Z", "depth": 2, "truncated": true, "objectsCapped": false,
        "related": [{"object": "apps/Deployment shop/web", "path": []},
                    {"object": "core/ConfigMap shop/settings", "path": []}],
        "items": [
            {"time": "2026-11-29T10:04:00Z", "type": "EDGE_REMOVED",
             "edge": {"from": "apps/Deployment shop/web", "relation": "uses",
                      "to": "core/ConfigMap shop/settings", "analyzer": "references"}},
            {"time": "2026-11-29T10:03:00Z", "type": "EVENT", "group": "events.k8s.io",
             "kind": "Event", "namespace": "shop", "name": "web.1", "path": [],
             "event": {"change": "ADDED", "type": "Warning", "reason": "FailedCreate",
                       "note": "quota exceeded", "count": 4}},
            {"time": "2026-11-29T10:02:00Z", "type": "MODIFIED", "group": "", "kind": "ConfigMap",
             "namespace": "shop", "name": "settings",
             "who": {"manager": "kubectl-edit", "operation": "Update"},
             "path": [{"relation": "uses", "direction": "out", "object": "core/ConfigMap shop/settings"}],
             "diffText": ["~ /data/value: \"1\" → \"2\""]},
        ]});
        assert_eq!(
            render_timeline(&answer, Style::with(false)),
            "apps/Deployment shop/web: 3 entries since 2026-11-29T09:00:00Z, 2 objects within depth 2 \
             (left out: older entries past the limit)\n\
             2026-11-29 10:04:00  EDGE_REMOVED  apps/Deployment shop/web uses core/ConfigMap shop/settings  (references)\n\
             2026-11-29 10:03:00  EVENT         Warning  FailedCreate  events.k8s.io/Event shop/web.1\n\
             \x20   quota exceeded (×4)\n\
             2026-11-29 10:02:00  MODIFIED      core/ConfigMap shop/settings  by kubectl-edit (Update)  \
             via uses → core/ConfigMap shop/settings\n\
             \x20   ~ /data/value: \"1\" → \"2\"\n"
        );
        assert!(render_timeline(&answer, Style::with(true)).contains("\x1b[1;31mWarning\x1b[0m"));
    }
}
