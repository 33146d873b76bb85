//! Cells of Events, for both APIs that serve them: `v1` Events and
//! `events.k8s.io/v1` Events are one object under two sets of field names,
//! and the API server prints both with the same columns.

use serde_json::Value;

use super::age::{self, Instant};
use super::cells::{at, int, str_at};

/// Where an Event API keeps each field the cells read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fields {
    involved: &'static str,
    message: &'static str,
    source: &'static str,
    controller: &'static str,
    first: &'static str,
    last: &'static str,
    count: &'static str,
}

/// `v1` Events.
pub(crate) const CORE: Fields = Fields {
    involved: "involvedObject",
    message: "message",
    source: "source",
    controller: "reportingComponent",
    first: "firstTimestamp",
    last: "lastTimestamp",
    count: "count",
};

/// `events.k8s.io/v1` Events.
pub(crate) const EVENTS: Fields = Fields {
    involved: "regarding",
    message: "note",
    source: "deprecatedSource",
    controller: "reportingController",
    first: "deprecatedFirstTimestamp",
    last: "deprecatedLastTimestamp",
    count: "deprecatedCount",
};

/// The Event cells that are not a plain field.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Cell {
    /// When it was last seen: the series' last observation, else the last
    /// timestamp, else as first seen.
    LastSeen,
    /// When it was first seen: the first timestamp, else `eventTime`.
    FirstSeen,
    /// How many times: the series' count, else the count, at least 1.
    Count,
    /// `kind/name` of the object it is about (lower-case kind).
    Object,
    /// The field path inside that object.
    Subobject,
    /// `component, host` of what reported it.
    Source,
    /// The message, without surrounding spaces.
    Message,
}

impl Cell {
    pub(crate) fn eval(self, fields: &Fields, event: &Value, now: Instant) -> Value {
        match self {
            Cell::LastSeen => last_seen(fields, event, now).into(),
            Cell::FirstSeen => first_seen(fields, event, now).into(),
            Cell::Count => count(fields, event).into(),
            Cell::Object => {
                let kind = str_at(event, &[fields.involved, "kind"])
                    .unwrap_or("")
                    .to_lowercase();
                match str_at(event, &[fields.involved, "name"]) {
                    Some(name) if !name.is_empty() => format!("{kind}/{name}").into(),
                    _ => kind.into(),
                }
            }
            Cell::Subobject => str_at(event, &[fields.involved, "fieldPath"])
                .unwrap_or("")
                .into(),
            Cell::Source => {
                fn first<'e>(a: Option<&'e str>, b: Option<&'e str>) -> &'e str {
                    [a, b]
                        .into_iter()
                        .flatten()
                        .find(|s| !s.is_empty())
                        .unwrap_or("")
                }
                let component = first(
                    str_at(event, &[fields.source, "component"]),
                    str_at(event, &[fields.controller]),
                );
                let host = first(
                    str_at(event, &[fields.source, "host"]),
                    str_at(event, &["reportingInstance"]),
                );
                if host.is_empty() {
                    component.into()
                } else {
                    format!("{component}, {host}").into()
                }
            }
            Cell::Message => str_at(event, &[fields.message]).unwrap_or("").trim().into(),
        }
    }
}

fn first_seen(fields: &Fields, event: &Value, now: Instant) -> String {
    match age::timestamp(str_at(event, &[fields.first])) {
        Some(first) => age::since(first, now),
        None => age::age(str_at(event, &["eventTime"]), now),
    }
}

fn last_seen(fields: &Fields, event: &Value, now: Instant) -> String {
    if let Some(series) = series(event) {
        return age::age(str_at(series, &["lastObservedTime"]), now);
    }
    match age::timestamp(str_at(event, &[fields.last])) {
        Some(last) => age::since(last, now),
        None => first_seen(fields, event, now),
    }
}

fn count(fields: &Fields, event: &Value) -> i64 {
    if let Some(series) = series(event) {
        return int(series.get("count"));
    }
    // Events of the newer API that happened once carry no count.
    match int(at(event, &[fields.count])) {
        0 => 1,
        n => n,
    }
}

fn series(event: &Value) -> Option<&Value> {
    event.get("series").filter(|s| s.is_object())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cells(fields: &Fields, event: &Value) -> Vec<Value> {
        let now = age::parse_time("2026-11-26T06:30:00Z").unwrap();
        [
            Cell::LastSeen,
            Cell::FirstSeen,
            Cell::Count,
            Cell::Object,
            Cell::Subobject,
            Cell::Source,
            Cell::Message,
        ]
        .into_iter()
        .map(|c| c.eval(fields, event, now))
        .collect()
    }

    #[test]
    fn core_events() {
        let repeated = json!({
            "involvedObject": {"kind": "Pod", "name": "web-1", "fieldPath": "spec.containers{c}"},
            "reason": "BackOff", "message": "  Back-off restarting failed container\n", "type": "Warning",
            "source": {"component": "kubelet", "host": "node1"},
            "firstTimestamp": "2026-11-26T06:00:00Z", "lastTimestamp": "2026-11-26T06:29:00Z", "count": 7,
        });
        assert_eq!(
            cells(&CORE, &repeated),
            [
                json!("60s"),
                json!("30m"),
                json!(7),
                json!("pod/web-1"),
                json!("spec.containers{c}"),
                json!("kubelet, node1"),
                json!("Back-off restarting failed container")
            ]
        );
        // Reported through the newer API: no timestamps but eventTime, no
        // count, the reporter instead of the source.
        let new_style = json!({
            "involvedObject": {"kind": "Namespace", "name": ""},
            "message": "readyz=true", "eventTime": "2026-11-26T06:29:45.123456Z",
            "firstTimestamp": null, "lastTimestamp": null,
            "reportingComponent": "apiserver", "reportingInstance": "vm",
            "source": {},
        });
        assert_eq!(
            cells(&CORE, &new_style),
            [
                json!("14s"),
                json!("14s"),
                json!(1),
                json!("namespace"),
                json!(""),
                json!("apiserver, vm"),
                json!("readyz=true")
            ]
        );
        let series = json!({
            "involvedObject": {"kind": "Node", "name": "n1"},
            "eventTime": "2026-11-26T06:00:00.000000Z",
            "series": {"count": 12, "lastObservedTime": "2026-11-26T06:25:00.000000Z"},
            "reportingComponent": "kubelet",
        });
        assert_eq!(
            cells(&CORE, &series)[..3],
            [json!("5m"), json!("30m"), json!(12)]
        );
        assert_eq!(cells(&CORE, &series)[5], json!("kubelet"));
        assert_eq!(
            cells(&CORE, &json!({}))[..3],
            [json!("<unknown>"), json!("<unknown>"), json!(1)]
        );
    }

    #[test]
    fn events_of_the_events_api() {
        let event = json!({
            "regarding": {"kind": "Deployment", "name": "web", "fieldPath": ""},
            "note": "Scaled up replica set web-1 from 0 to 3",
            "deprecatedSource": {"component": "deployment-controller"},
            "deprecatedFirstTimestamp": "2026-11-26T06:20:00Z",
            "deprecatedLastTimestamp": "2026-11-26T06:21:00Z",
            "deprecatedCount": 2,
            "reportingController": "ignored-when-source-is-set", "reportingInstance": "cm-1",
        });
        assert_eq!(
            cells(&EVENTS, &event),
            [
                json!("9m"),
                json!("10m"),
                json!(2),
                json!("deployment/web"),
                json!(""),
                json!("deployment-controller, cm-1"),
                json!("Scaled up replica set web-1 from 0 to 3")
            ]
        );
    }
}
