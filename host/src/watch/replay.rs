//! The replay source: a file of recorded watch events (`{"type", "object"}`
//! per line, as `kubectl get -w -o json --output-watch-events` prints them)
//! served as if it came from a cluster.
//!
//! The whole file is applied in order at start-up, through the same caches a
//! cluster watch fills, and kept as each cache's change history, so an event
//! stream can replay it from any resourceVersion.

use std::collections::BTreeMap;
use std::io::BufRead;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::gvk::{Gvk, ResourceInfo};
use crate::store::ChangeType;

/// A recording read from a file.
pub struct Recording {
    /// One resource per kind seen, with plural and scope inferred.
    pub resources: Vec<ResourceInfo>,
    /// Every event, in file order.
    pub events: Vec<(Gvk, ChangeType, Value)>,
}

/// Why a recording cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The file cannot be read.
    #[error("cannot read the recording {}", .path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A line is not a watch event.
    #[error("recording {}, line {line}", .path.display())]
    Line {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong with it.
        #[source]
        reason: BadEvent,
    },
}

/// What is wrong with a line of a recording.
#[derive(Debug, thiserror::Error)]
pub enum BadEvent {
    /// Not JSON.
    #[error("not JSON")]
    NotJson(#[source] serde_json::Error),
    /// No event type.
    #[error("`type` must be ADDED, MODIFIED or DELETED")]
    Type,
    /// No object.
    #[error("`object` must be a Kubernetes object")]
    Object,
    /// An object without its kind.
    #[error("the object has no `apiVersion` and `kind`")]
    Kind,
    /// An object without a name.
    #[error("the object has no `metadata.name`")]
    Name,
}

impl Recording {
    /// Reads and checks a whole recording. Blank lines are skipped.
    pub fn read(path: &Path) -> Result<Recording, ReplayError> {
        let io = |source| ReplayError::Io {
            path: path.to_path_buf(),
            source,
        };
        let file = std::fs::File::open(path).map_err(io)?;
        let mut events = Vec::new();
        let mut resources: BTreeMap<Gvk, ResourceInfo> = BTreeMap::new();
        for (index, line) in std::io::BufReader::new(file).lines().enumerate() {
            let line = line.map_err(io)?;
            if line.trim().is_empty() {
                continue;
            }
            let bad = |reason: BadEvent| ReplayError::Line {
                path: path.to_path_buf(),
                line: index + 1,
                reason,
            };
            let (gvk, kind, object) = parse_event(&line).map_err(bad)?;
            let namespaced = object["metadata"]["namespace"]
                .as_str()
                .is_some_and(|ns| !ns.is_empty());
            resources
                .entry(gvk.clone())
                .or_insert_with(|| ResourceInfo {
                    plural: plural_of(&gvk.kind),
                    namespaced,
                    gvk: gvk.clone(),
                })
                .namespaced |= namespaced;
            events.push((gvk, kind, object));
        }
        Ok(Recording {
            resources: resources.into_values().collect(),
            events,
        })
    }
}

fn parse_event(line: &str) -> Result<(Gvk, ChangeType, Value), BadEvent> {
    let mut event: Value = serde_json::from_str(line).map_err(BadEvent::NotJson)?;
    let kind = event["type"]
        .as_str()
        .and_then(ChangeType::parse)
        .ok_or(BadEvent::Type)?;
    let object = event
        .get_mut("object")
        .filter(|o| o.is_object())
        .map(Value::take)
        .ok_or(BadEvent::Object)?;
    let api_version = object["apiVersion"].as_str().unwrap_or_default();
    let kind_name = object["kind"].as_str().unwrap_or_default();
    if api_version.is_empty() || kind_name.is_empty() {
        return Err(BadEvent::Kind);
    }
    if object["metadata"]["name"]
        .as_str()
        .is_none_or(str::is_empty)
    {
        return Err(BadEvent::Name);
    }
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    Ok((Gvk::new(group, version, kind_name), kind, object))
}

/// The plural resource name of a kind, by the rules the API server uses for
/// almost every built-in and custom kind (a recording has no discovery data).
pub fn plural_of(kind: &str) -> String {
    let lower = kind.to_lowercase();
    if lower.ends_with("endpoints") {
        lower
    } else if lower.ends_with('s')
        || lower.ends_with('x')
        || lower.ends_with("ch")
        || lower.ends_with("sh")
    {
        format!("{lower}es")
    } else if let Some(stem) = lower.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'i', 'o', 'u'])
    {
        format!("{stem}ies")
    } else {
        format!("{lower}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn plurals_follow_the_api_server() {
        for (kind, plural) in [
            ("Pod", "pods"),
            ("Ingress", "ingresses"),
            ("NetworkPolicy", "networkpolicies"),
            ("Gateway", "gateways"),
            ("Endpoints", "endpoints"),
            ("EndpointSlice", "endpointslices"),
            ("StorageClass", "storageclasses"),
        ] {
            assert_eq!(plural_of(kind), plural);
        }
    }

    #[test]
    fn bad_lines_name_the_line_and_the_problem() {
        let cases = [
            ("{not json", "line 2: not JSON"),
            (
                r#"{"type":"UPSERT","object":{}}"#,
                "line 2: `type` must be ADDED, MODIFIED or DELETED",
            ),
            (
                r#"{"type":"ADDED"}"#,
                "line 2: `object` must be a Kubernetes object",
            ),
            (
                r#"{"type":"ADDED","object":{"metadata":{"name":"x"}}}"#,
                "line 2: the object has no `apiVersion` and `kind`",
            ),
            (
                r#"{"type":"ADDED","object":{"kind":"Pod","apiVersion":"v1","metadata":{}}}"#,
                "line 2: the object has no `metadata.name`",
            ),
        ];
        for (line, want) in cases {
            let mut file = tempfile::NamedTempFile::new().unwrap();
            writeln!(file, r#"{{"type":"ADDED","object":{{"kind":"Node","apiVersion":"v1","metadata":{{"name":"a"}}}}}}"#).unwrap();
            writeln!(file, "{line}").unwrap();
            let err = Recording::read(file.path()).err().unwrap();
            let err = crate::error::Report(&err).to_string();
            assert!(err.contains(want), "{err}");
        }
        let err = Recording::read(Path::new("/nonexistent.jsonl"))
            .err()
            .unwrap();
        assert_eq!(
            crate::error::Report(&err).to_string(),
            "cannot read the recording /nonexistent.jsonl: No such file or directory (os error 2)"
        );
    }

    #[test]
    fn reads_the_bundled_recording() {
        let path =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/cluster-recording.jsonl");
        let recording = Recording::read(&path).unwrap();
        assert_eq!(recording.events.len(), 1737);
        assert_eq!(recording.resources.len(), 15);
        let vs = recording
            .resources
            .iter()
            .find(|r| r.gvk.kind == "VirtualService")
            .unwrap();
        assert_eq!(
            vs.gvk.to_string(),
            "networking.istio.io/v1beta1/VirtualService"
        );
        assert_eq!(vs.plural, "virtualservices");
        assert!(vs.namespaced);
        let node = recording
            .resources
            .iter()
            .find(|r| r.gvk.kind == "Node")
            .unwrap();
        assert!(!node.namespaced);
    }
}
