//! How the cell of a built-in column is computed from an object: a path into
//! it, read in one of a few ways, or a named rule for what a path cannot say.
//!
//! Cells are written in the types the API server's printers use: counts and
//! replica numbers are JSON integers even in columns typed `string` (as in
//! the API server's answers), everything else is text.

use serde_json::Value;

use super::age::{self, Instant};
use super::{event, network, node, pod, selector, storage, workloads};

/// A path of object keys from the object's root.
pub(crate) type Path = &'static [&'static str];

/// One column's way to its cell.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Cell {
    /// `metadata.name`.
    Name,
    /// The age of `metadata.creationTimestamp`.
    Age,
    /// `metadata.creationTimestamp` itself, in UTC.
    CreatedAt,
    /// The text at the path, `""` when missing.
    Text(Path),
    /// The text at the path, or the fallback when missing, `null` or empty.
    TextOr(Path, &'static str),
    /// The text at the path, or the fallback when missing or `null` (an
    /// empty text stays empty): an optional field of the API.
    Optional(Path, &'static str),
    /// The integer at the path, 0 when missing.
    Int(Path),
    /// The number of members of the arrays or objects at the paths, added.
    Len(&'static [Path]),
    /// `ready/desired` from two integers.
    Ratio(Path, Path),
    /// A map of labels: `k=v,k2=v2` or `<none>`.
    Labels(Path),
    /// A label selector: `app=web,env in (a,b)`, `<none>` or `<error>`.
    Selector(Path),
    /// A label selector as Deployments print it: `""` when empty,
    /// `<invalid>` when unreadable.
    SelectorText(Path),
    /// The names of the containers at the path (an array), comma-separated.
    Containers(Path),
    /// The images of the containers at the path, comma-separated.
    Images(Path),
    /// The boolean at the path, or the fallback when missing.
    Bool(Path, bool),
    /// An optional boolean printed `True`, `False` or `<unset>`.
    BoolText(Path),
    /// The age of the timestamp at the path, or the fallback when missing.
    Since(Path, &'static str),
    /// A named rule.
    Rule(Rule),
}

/// Cells that need more than one field.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Rule {
    /// Pod: `ready/total` containers.
    PodReady,
    /// Pod: the status word (`Running`, `CrashLoopBackOff`, `Init:0/1`...).
    PodStatus,
    /// Pod: restarts, with the age of the last one (`5 (3m ago)`).
    PodRestarts,
    /// Pod: its first IP, or `<none>`.
    PodIp,
    /// Pod: readiness gates met, `n/m`, or `<none>`.
    PodReadinessGates,
    /// Service: its first cluster IP, or `<none>`.
    ServiceClusterIp,
    /// Service: its external IPs by type, `<none>` or `<pending>`.
    ServiceExternalIp,
    /// Service: `80/TCP,443:30443/TCP`, or `<none>`.
    ServicePorts,
    /// Ingress: the first three hosts, `*` when none.
    IngressHosts,
    /// Ingress: the load balancer's addresses.
    IngressAddress,
    /// Ingress: `80`, or `80, 443` with TLS.
    IngressPorts,
    /// IngressClass: `Kind.group/name` of its parameters, or `<none>`.
    IngressClassParameters,
    /// Endpoints: the first three `ip:port`, or `<none>`.
    Endpoints,
    /// EndpointSlice: the first three ports, or `<unset>`.
    SlicePorts,
    /// EndpointSlice: the first three addresses, or `<unset>`.
    SliceEndpoints,
    /// Node: `Ready`, `NotReady` or `Unknown`, plus `SchedulingDisabled`.
    NodeStatus,
    /// Node: the roles from its labels, or `<none>`.
    NodeRoles,
    /// Node: the first address of a type (`InternalIP`, `ExternalIP`).
    NodeAddress(&'static str),
    /// Job: `Complete`, `Failed`, `Terminating`, `Suspended`,
    /// `FailureTarget` or `Running`.
    JobStatus,
    /// Job: `succeeded/completions`.
    JobCompletions,
    /// Job: from start to completion, or to now while running.
    JobDuration,
    /// ControllerRevision: `kind.group/name` of its controller.
    ControllerOf,
    /// PersistentVolume and claim: the phase, or `Terminating`.
    VolumePhase,
    /// PersistentVolume: `namespace/name` of its claim.
    VolumeClaim,
    /// PersistentVolume: its storage capacity.
    VolumeCapacity,
    /// PersistentVolume and claim: the storage class, annotation first.
    StorageClassOf,
    /// PersistentVolumeClaim: the bound capacity.
    ClaimCapacity,
    /// PersistentVolumeClaim: the bound access modes.
    ClaimAccessModes,
    /// PersistentVolume: its access modes.
    AccessModes,
    /// StorageClass: its name, with ` (default)` for the default class.
    StorageClassName,
    /// RoleBinding: `Kind/name` of the role.
    RoleRef,
    /// RoleBinding: subjects of a kind, comma-separated.
    Subjects(&'static str),
    /// PodDisruptionBudget: a field of its spec that is a number or a
    /// percentage, `N/A` when unset.
    IntOrString(&'static str),
    /// Event: one of its computed cells.
    Event(event::Fields, event::Cell),
}

impl Cell {
    /// The cell of `object` at `now`.
    pub(crate) fn eval(&self, object: &Value, now: Instant) -> Value {
        match *self {
            Cell::Name => text(at(object, &["metadata", "name"])).into(),
            Cell::Age => age::age(str_at(object, &["metadata", "creationTimestamp"]), now).into(),
            Cell::CreatedAt => {
                age::created_at(str_at(object, &["metadata", "creationTimestamp"])).into()
            }
            Cell::Text(path) => text(at(object, path)).into(),
            Cell::TextOr(path, fallback) => match str_at(object, path) {
                Some(s) if !s.is_empty() => s.into(),
                _ => fallback.into(),
            },
            Cell::Optional(path, fallback) => match at(object, path) {
                None | Some(Value::Null) => fallback.into(),
                Some(v) => text(Some(v)).into(),
            },
            Cell::Int(path) => int(at(object, path)).into(),
            Cell::Len(paths) => paths
                .iter()
                .map(|p| len(at(object, p)))
                .sum::<usize>()
                .into(),
            Cell::Ratio(ready, desired) => {
                format!("{}/{}", int(at(object, ready)), int(at(object, desired))).into()
            }
            Cell::Labels(path) => selector::labels(at(object, path)).into(),
            Cell::Selector(path) => selector::selector_or_none(at(object, path)).into(),
            Cell::SelectorText(path) => selector::selector(at(object, path))
                .unwrap_or_else(|()| "<invalid>".to_string())
                .into(),
            Cell::Containers(path) => containers(object, path, "name").into(),
            Cell::Images(path) => containers(object, path, "image").into(),
            Cell::Bool(path, fallback) => Value::Bool(
                at(object, path)
                    .and_then(Value::as_bool)
                    .unwrap_or(fallback),
            ),
            Cell::BoolText(path) => match at(object, path).and_then(Value::as_bool) {
                Some(true) => "True".into(),
                Some(false) => "False".into(),
                None => "<unset>".into(),
            },
            Cell::Since(path, fallback) => match at(object, path).filter(|v| !v.is_null()) {
                Some(v) => age::age(v.as_str(), now).into(),
                None => fallback.into(),
            },
            Cell::Rule(rule) => rule.eval(object, now),
        }
    }
}

impl Rule {
    fn eval(self, object: &Value, now: Instant) -> Value {
        match self {
            Rule::PodReady => pod::summary(object, now).ready.into(),
            Rule::PodStatus => pod::summary(object, now).status.into(),
            Rule::PodRestarts => pod::summary(object, now).restarts.into(),
            Rule::PodIp => pod::ip(object).into(),
            Rule::PodReadinessGates => pod::readiness_gates(object).into(),
            Rule::ServiceClusterIp => network::cluster_ip(object).into(),
            Rule::ServiceExternalIp => network::external_ip(object).into(),
            Rule::ServicePorts => network::service_ports(object).into(),
            Rule::IngressHosts => network::ingress_hosts(object).into(),
            Rule::IngressAddress => network::ingress_address(object).into(),
            Rule::IngressPorts => network::ingress_ports(object).into(),
            Rule::IngressClassParameters => network::ingress_class_parameters(object).into(),
            Rule::Endpoints => network::endpoints(object).into(),
            Rule::SlicePorts => network::slice_ports(object).into(),
            Rule::SliceEndpoints => network::slice_endpoints(object).into(),
            Rule::NodeStatus => node::status(object).into(),
            Rule::NodeRoles => node::roles(object).into(),
            Rule::NodeAddress(kind) => node::address(object, kind).into(),
            Rule::JobStatus => workloads::job_status(object).into(),
            Rule::JobCompletions => workloads::job_completions(object).into(),
            Rule::JobDuration => workloads::job_duration(object, now).into(),
            Rule::ControllerOf => workloads::controller_of(object).into(),
            Rule::VolumePhase => storage::phase(object).into(),
            Rule::VolumeClaim => storage::claim(object).into(),
            Rule::VolumeCapacity => storage::capacity(object).into(),
            Rule::StorageClassOf => storage::class_of(object).into(),
            Rule::ClaimCapacity => storage::claim_capacity(object).into(),
            Rule::ClaimAccessModes => storage::claim_access_modes(object).into(),
            Rule::AccessModes => storage::access_modes(at(object, &["spec", "accessModes"])).into(),
            Rule::StorageClassName => storage::class_name(object).into(),
            Rule::RoleRef => workloads::role_ref(object).into(),
            Rule::Subjects(kind) => workloads::subjects(object, kind).into(),
            Rule::IntOrString(field) => match at(object, &["spec", field]) {
                Some(Value::Number(n)) => n.to_string().into(),
                Some(Value::String(s)) => s.as_str().into(),
                _ => "N/A".into(),
            },
            Rule::Event(fields, cell) => cell.eval(&fields, object, now),
        }
    }
}

/// The value at `path`, through object keys.
pub(crate) fn at<'v>(object: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(object, |v, key| v.get(key))
}

/// The text at `path`, if it is text.
pub(crate) fn str_at<'v>(object: &'v Value, path: &[&str]) -> Option<&'v str> {
    at(object, path).and_then(Value::as_str)
}

/// A value as a Go printer writes a string field: the text, `""` for
/// anything else (the API server's types make such fields strings).
pub(crate) fn text(value: Option<&Value>) -> String {
    value.and_then(Value::as_str).unwrap_or("").to_string()
}

/// An integer field, 0 when missing (Go's zero value).
pub(crate) fn int(value: Option<&Value>) -> i64 {
    value.and_then(Value::as_i64).unwrap_or(0)
}

/// Members of an array or object, 0 for anything else.
pub(crate) fn len(value: Option<&Value>) -> usize {
    match value {
        Some(Value::Array(a)) => a.len(),
        Some(Value::Object(o)) => o.len(),
        _ => 0,
    }
}

/// The array at `path`, empty when missing.
pub(crate) fn items<'v>(object: &'v Value, path: &[&str]) -> &'v [Value] {
    at(object, path)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// One field of each container, comma-separated.
fn containers(object: &Value, path: Path, field: &str) -> String {
    items(object, path)
        .iter()
        .map(|c| c.get(field).and_then(Value::as_str).unwrap_or(""))
        .collect::<Vec<_>>()
        .join(",")
}

/// Up to `max` items, then ` + N more...` for the `total - max` others;
/// `when_empty` when there are none. The form of the printers' lists of
/// ports, endpoints and addresses.
pub(crate) fn list_with_more(
    list: &[String],
    total: usize,
    max: usize,
    when_empty: &str,
) -> String {
    let shown = list[..list.len().min(max)].join(",");
    if total > max {
        format!("{shown} + {} more...", total - max)
    } else if shown.is_empty() {
        when_empty.to_string()
    } else {
        shown
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> Instant {
        age::parse_time("2026-11-26T06:30:00Z").unwrap()
    }

    #[test]
    fn path_cells() {
        let object = json!({
            "metadata": {"name": "x", "creationTimestamp": "2026-11-26T06:25:00Z",
                "labels": {"b": "2", "a": "1"}},
            "spec": {
                "replicas": 3, "empty": "", "flag": false, "nothing": null,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"spec": {"containers": [
                    {"name": "app", "image": "registry.invalid/app:1"},
                    {"name": "side", "image": "registry.invalid/side:2"},
                ]}},
            },
            "status": {"readyReplicas": 2, "lastScheduleTime": "2026-11-26T06:29:00Z"},
            "data": {"a": "1", "b": "2"}, "binaryData": {"c": ""},
        });
        let cases: &[(Cell, Value)] = &[
            (Cell::Name, json!("x")),
            (Cell::Age, json!("5m")),
            (Cell::Text(&["spec", "empty"]), json!("")),
            (Cell::Text(&["spec", "missing"]), json!("")),
            (Cell::Text(&["spec", "replicas"]), json!("")),
            (Cell::TextOr(&["spec", "empty"], "<none>"), json!("<none>")),
            (Cell::TextOr(&["metadata", "name"], "<none>"), json!("x")),
            (Cell::Optional(&["spec", "empty"], "<unset>"), json!("")),
            (
                Cell::Optional(&["spec", "nothing"], "<unset>"),
                json!("<unset>"),
            ),
            (
                Cell::Optional(&["spec", "missing"], "<unset>"),
                json!("<unset>"),
            ),
            (Cell::Int(&["spec", "replicas"]), json!(3)),
            (Cell::Int(&["status", "replicas"]), json!(0)),
            (Cell::Len(&[&["data"], &["binaryData"]]), json!(3)),
            (
                Cell::Len(&[&["spec", "template", "spec", "containers"]]),
                json!(2),
            ),
            (Cell::Len(&[&["missing"]]), json!(0)),
            (
                Cell::Ratio(&["status", "readyReplicas"], &["spec", "replicas"]),
                json!("2/3"),
            ),
            (Cell::Labels(&["metadata", "labels"]), json!("a=1,b=2")),
            (Cell::Selector(&["spec", "selector"]), json!("app=web")),
            (Cell::Selector(&["spec", "missing"]), json!("<none>")),
            (Cell::SelectorText(&["spec", "missing"]), json!("")),
            (
                Cell::SelectorText(&["spec", "replicas"]),
                json!("<invalid>"),
            ),
            (
                Cell::Containers(&["spec", "template", "spec", "containers"]),
                json!("app,side"),
            ),
            (
                Cell::Images(&["spec", "template", "spec", "containers"]),
                json!("registry.invalid/app:1,registry.invalid/side:2"),
            ),
            (Cell::Images(&["spec", "missing"]), json!("")),
            (Cell::Bool(&["spec", "flag"], true), json!(false)),
            (Cell::Bool(&["spec", "missing"], true), json!(true)),
            (Cell::BoolText(&["spec", "flag"]), json!("False")),
            (Cell::BoolText(&["spec", "missing"]), json!("<unset>")),
            (
                Cell::Since(&["status", "lastScheduleTime"], "<none>"),
                json!("60s"),
            ),
            (
                Cell::Since(&["status", "missing"], "<none>"),
                json!("<none>"),
            ),
        ];
        for (cell, want) in cases {
            assert_eq!(cell.eval(&object, now()), *want, "{cell:?}");
        }
    }

    #[test]
    fn lists_with_more() {
        let list: Vec<String> = ["a", "b", "c", "d"].map(String::from).to_vec();
        assert_eq!(list_with_more(&list, 4, 3, "<unset>"), "a,b,c + 1 more...");
        assert_eq!(list_with_more(&list[..3], 3, 3, "<unset>"), "a,b,c");
        assert_eq!(
            list_with_more(&list[..3], 7, 3, "<unset>"),
            "a,b,c + 4 more..."
        );
        assert_eq!(list_with_more(&[], 0, 3, "<unset>"), "<unset>");
    }
}
