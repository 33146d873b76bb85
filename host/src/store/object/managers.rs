//! Who wrote an object: a summary of its `metadata.managedFields`, read
//! before they are stripped, so that the journal can say who made each
//! change (see [`crate::journal`]) whether or not `keepManagedFields` is set.
//!
//! Each entry keeps the writer (manager, operation, subresource) as a
//! number into a table shared by every object (a cluster has a few dozen
//! writers), the entry's time in seconds and a hash of its `fieldsV1`:
//! 16 bytes, against a few hundred of JSON. A change touched the entry
//! whose time or fields differ from the previous version's (times have
//! one-second resolution, so two updates in one second differ by fields).

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, LazyLock};

use parking_lot::RwLock;
use serde::Deserialize;
use serde_json::value::RawValue;

/// Writers the shared table holds at most; more (a cluster where every
/// request names its own manager) are all "other".
const MAX_WRITERS: usize = 65_536;

/// The manager, operation and subresource of a `managedFields` entry.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Writer {
    /// `manager`, e.g. `kubectl-client-side-apply`, `kube-controller-manager`.
    pub manager: String,
    /// `operation`: `Apply` or `Update`.
    pub operation: String,
    /// `subresource`, e.g. `status`, `scale`; empty for the object itself.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub subresource: String,
}

#[derive(Default)]
struct Writers {
    all: Vec<Arc<Writer>>,
    numbers: HashMap<Writer, u32>,
}

static WRITERS: LazyLock<RwLock<Writers>> = LazyLock::new(Default::default);

fn number(writer: Writer) -> Option<u32> {
    if let Some(n) = WRITERS.read().numbers.get(&writer) {
        return Some(*n);
    }
    let mut writers = WRITERS.write();
    if let Some(n) = writers.numbers.get(&writer) {
        return Some(*n);
    }
    if writers.all.len() >= MAX_WRITERS {
        return None;
    }
    let n = writers.all.len() as u32;
    writers.all.push(Arc::new(writer.clone()));
    writers.numbers.insert(writer, n);
    Some(n)
}

/// One entry of the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Managed {
    writer: u32,
    /// Seconds since the epoch of the entry's `time`; 0 without one.
    pub time: u32,
    /// Hash of the entry's `fieldsV1` text.
    pub fields: u64,
}

impl Managed {
    /// The writer; `None` past the table's bound.
    pub fn writer(&self) -> Option<Arc<Writer>> {
        WRITERS.read().all.get(self.writer as usize).cloned()
    }

    /// The writer, time and hash of fields, to be kept beyond this process.
    pub fn parts(&self) -> Option<(Arc<Writer>, u32, u64)> {
        Some((self.writer()?, self.time, self.fields))
    }

    /// An entry of `writer` at `time` with fields of hash `fields`.
    pub fn new(writer: Writer, time: u32, fields: u64) -> Managed {
        Managed {
            writer: number(writer).unwrap_or(u32::MAX),
            time,
            fields,
        }
    }
}

/// The summary of an object's `managedFields`; empty when it had none or
/// they were not read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Managers(Box<[Managed]>);

#[derive(Deserialize)]
struct RawEntry<'a> {
    #[serde(default, borrow)]
    manager: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    operation: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    subresource: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, borrow)]
    time: Option<std::borrow::Cow<'a, str>>,
    #[serde(default, rename = "fieldsV1", borrow)]
    fields: Option<&'a RawValue>,
}

impl Managers {
    /// A summary of these entries.
    pub fn new(entries: Vec<Managed>) -> Managers {
        Managers(entries.into_boxed_slice())
    }

    /// The summary of the JSON text of a `managedFields` array; empty if
    /// it is not one.
    pub fn read(json: &[u8]) -> Managers {
        let Ok(entries) = serde_json::from_slice::<Vec<RawEntry<'_>>>(json) else {
            return Managers::default();
        };
        Managers(
            entries
                .into_iter()
                .map(|e| {
                    let writer = Writer {
                        manager: e.manager.unwrap_or_default().into_owned(),
                        operation: e.operation.unwrap_or_default().into_owned(),
                        subresource: e.subresource.unwrap_or_default().into_owned(),
                    };
                    let time = e
                        .time
                        .as_deref()
                        .and_then(crate::time::parse_rfc3339)
                        .map_or(0, |t| t.as_secs().min(u64::from(u32::MAX)) as u32);
                    let mut hasher = std::hash::DefaultHasher::new();
                    e.fields.map_or("", |f| f.get()).hash(&mut hasher);
                    Managed::new(writer, time, hasher.finish())
                })
                .collect(),
        )
    }

    /// The summary of a parsed `managedFields` value.
    pub fn from_value(value: &serde_json::Value) -> Managers {
        serde_json::to_vec(value)
            .map(|json| Managers::read(&json))
            .unwrap_or_default()
    }

    /// The entries.
    pub fn entries(&self) -> &[Managed] {
        &self.0
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Bytes on the heap.
    pub fn heap_bytes(&self) -> usize {
        std::mem::size_of_val(&*self.0)
    }

    /// Who made the change from `before` (`None`: the object is new) to
    /// this version: the entry that is new or whose time moved, the latest
    /// if several did; else one whose fields alone differ (a writer's
    /// second update within one second). An entry that only lost fields to
    /// the writer of the change moves too (`kubectl scale` takes
    /// `spec.replicas` from the entry of the `kubectl apply` that set it),
    /// which is why fields alone rank below a time. For a new object, its
    /// latest entry. `None` when no entry changed (an update that moved no
    /// field a manager owns, or a deletion).
    ///
    /// The time is 0 for an entry without one (`kubectl scale`'s).
    pub fn who_changed(&self, before: Option<&Managers>) -> Option<(Arc<Writer>, u32)> {
        let moved = |entry: &Managed| -> Option<u8> {
            let Some(before) = before else {
                return Some(1);
            };
            let mine = before.0.iter().filter(|b| b.writer == entry.writer);
            let mut found = false;
            for b in mine {
                if b.time == entry.time && b.fields == entry.fields {
                    return None;
                }
                found |= b.time == entry.time;
            }
            // Its time is the one before: only its fields changed.
            Some(if found { 0 } else { 1 })
        };
        let latest = self
            .0
            .iter()
            .filter_map(|e| Some(((moved(e)?, e.time), e)))
            .max_by_key(|(rank, _)| *rank)?
            .1;
        Some((latest.writer()?, latest.time))
    }

    /// The likeliest writer of a change that moved no entry (a writer that
    /// updated the object twice within one second with the same fields, or
    /// a second `kubectl scale`, whose entry has no time), from the JSON
    /// Pointers of what changed: a subresource's entry when only what it
    /// writes changed (`status`: `/status`; `scale`: `/spec/replicas`),
    /// else an entry of the object itself; the latest of those.
    /// `/metadata/generation` and `/metadata/resourceVersion`, which the
    /// API server sets, are left out of the comparison.
    pub fn likely_writer(&self, changed: &[String]) -> Option<(Arc<Writer>, u32)> {
        let written: Vec<&str> = changed
            .iter()
            .map(String::as_str)
            .filter(|p| !matches!(*p, "/metadata/generation" | "/metadata/resourceVersion"))
            .collect();
        let only = |prefix: &str| {
            !written.is_empty()
                && written.iter().all(|p| {
                    p.strip_prefix(prefix)
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
                })
        };
        let subresource = if only("/status") {
            "status"
        } else if only("/spec/replicas") {
            "scale"
        } else {
            ""
        };
        self.0
            .iter()
            .filter_map(|e| Some((e.writer()?, e.time)))
            .max_by_key(|(writer, time)| (writer.subresource == subresource, *time))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(manager: &str, operation: &str, sub: &str, time: &str, fields: &str) -> String {
        format!(
            r#"{{"manager":"{manager}","operation":"{operation}","apiVersion":"v1","time":"{time}","fieldsType":"FieldsV1","fieldsV1":{fields}{}}}"#,
            if sub.is_empty() {
                String::new()
            } else {
                format!(r#","subresource":"{sub}""#)
            }
        )
    }

    #[test]
    fn the_entry_whose_time_or_fields_moved_made_the_change() {
        let created = entry(
            "kubectl-client-side-apply",
            "Update",
            "",
            "2026-11-29T10:00:00Z",
            r#"{"f:spec":{}}"#,
        );
        let status = entry(
            "kube-controller-manager",
            "Update",
            "status",
            "2026-11-29T10:00:01Z",
            r#"{"f:status":{}}"#,
        );
        let scaled = entry(
            "kubectl",
            "Update",
            "scale",
            "2026-11-29T10:00:01Z",
            r#"{"f:spec":{"f:replicas":{}}}"#,
        );
        let v1 = Managers::read(format!("[{created}]").as_bytes());
        let v2 = Managers::read(format!("[{created},{status}]").as_bytes());
        let v3 = Managers::read(format!("[{created},{status},{scaled}]").as_bytes());

        let (who, _) = v1.who_changed(None).expect("a new object has a writer");
        assert_eq!(who.manager, "kubectl-client-side-apply");
        let (who, _) = v2.who_changed(Some(&v1)).expect("status written");
        assert_eq!(
            (who.manager.as_str(), who.subresource.as_str()),
            ("kube-controller-manager", "status")
        );
        // Same second as the status update: told apart by which entry is new.
        let (who, _) = v3.who_changed(Some(&v2)).expect("scaled");
        assert_eq!(
            (who.manager.as_str(), who.subresource.as_str()),
            ("kubectl", "scale")
        );
        // Same time, other fields: the controller again, within its second.
        let status_more = entry(
            "kube-controller-manager",
            "Update",
            "status",
            "2026-11-29T10:00:01Z",
            r#"{"f:status":{"f:replicas":{}}}"#,
        );
        let v4 = Managers::read(format!("[{created},{status_more},{scaled}]").as_bytes());
        let (who, _) = v4.who_changed(Some(&v3)).expect("status again");
        assert_eq!(who.manager, "kube-controller-manager");
        assert_eq!(v4.who_changed(Some(&v4)), None, "nothing moved");
        // `kubectl scale`: its entry has no time, and the entry of the
        // apply that set `spec.replicas` loses that field to it.
        let applied_less = entry(
            "kubectl-client-side-apply",
            "Update",
            "",
            "2026-11-29T10:00:00Z",
            r#"{"f:spec":{"f:template":{}}}"#,
        );
        let scaled_untimed = r#"{"manager":"kubectl","operation":"Update","apiVersion":"apps/v1","fieldsType":"FieldsV1","fieldsV1":{"f:spec":{"f:replicas":{}}},"subresource":"scale"}"#;
        let v5 =
            Managers::read(format!("[{scaled_untimed},{applied_less},{status_more}]").as_bytes());
        let v6 = Managers::read(format!("[{created},{status_more}]").as_bytes());
        let (who, time) = v5.who_changed(Some(&v6)).expect("scaled");
        assert_eq!(
            (who.manager.as_str(), who.subresource.as_str(), time),
            ("kubectl", "scale", 0)
        );
        // Scaled again: nothing moves, and what changed says who.
        let paths = |ps: &[&str]| ps.iter().map(|p| p.to_string()).collect::<Vec<_>>();
        let guess = |changed: &[&str]| {
            let (who, _) = v5.likely_writer(&paths(changed)).expect("a writer");
            (who.manager.clone(), who.subresource.clone())
        };
        assert_eq!(
            guess(&["/spec/replicas", "/metadata/generation"]),
            ("kubectl".to_string(), "scale".to_string())
        );
        assert_eq!(
            guess(&["/status/replicas", "/status/conditions/0/message"]),
            ("kube-controller-manager".to_string(), "status".to_string())
        );
        assert_eq!(
            guess(&["/spec/template/spec/containers/0/image", "/spec/replicas"]),
            ("kubectl-client-side-apply".to_string(), String::new())
        );
        // `/statusDetails` is not under `/status`.
        assert_eq!(guess(&["/statusDetails"]).1, "");
        assert!(Managers::read(b"not json").is_empty());
    }
}
