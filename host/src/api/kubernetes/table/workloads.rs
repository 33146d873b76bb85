//! Cells of Jobs, ControllerRevisions and role bindings.

use serde_json::Value;

use super::age::{self, Instant};
use super::cells::{at, int, items, str_at};

/// The Job's state from its conditions, in the printer's order of
/// precedence: `Complete`, `Failed`, `Terminating` (being deleted),
/// `Suspended`, `FailureTarget`, else `Running`.
pub(crate) fn job_status(job: &Value) -> String {
    let conditions = items(job, &["status", "conditions"]);
    // The first condition of a type decides.
    let has = |kind: &str| {
        conditions
            .iter()
            .find(|c| str_at(c, &["type"]) == Some(kind))
            .is_some_and(|c| str_at(c, &["status"]) == Some("True"))
    };
    let deleting = at(job, &["metadata", "deletionTimestamp"]).is_some_and(|v| !v.is_null());
    let status = if has("Complete") {
        "Complete"
    } else if has("Failed") {
        "Failed"
    } else if deleting {
        "Terminating"
    } else if has("Suspended") {
        "Suspended"
    } else if has("FailureTarget") {
        "FailureTarget"
    } else {
        "Running"
    };
    status.to_string()
}

/// `succeeded/completions`; a Job without completions runs until one pod
/// succeeds: `succeeded/1`, or `succeeded/1 of parallelism` when several
/// pods run at once.
pub(crate) fn job_completions(job: &Value) -> String {
    let succeeded = int(at(job, &["status", "succeeded"]));
    match at(job, &["spec", "completions"]).and_then(Value::as_i64) {
        Some(completions) => format!("{succeeded}/{completions}"),
        None => match int(at(job, &["spec", "parallelism"])) {
            parallelism if parallelism > 1 => format!("{succeeded}/1 of {parallelism}"),
            _ => format!("{succeeded}/1"),
        },
    }
}

/// From `status.startTime` to `status.completionTime`, or to now while the
/// Job runs; `""` before it starts.
pub(crate) fn job_duration(job: &Value, now: Instant) -> String {
    let Some(start) = str_at(job, &["status", "startTime"]) else {
        return String::new();
    };
    match str_at(job, &["status", "completionTime"]) {
        Some(end) => age::between(start, end).unwrap_or_default(),
        None => age::parse_time(start).map_or_else(String::new, |t| age::since(t, now)),
    }
}

/// `kind.group/name` (lower-case kind and group) of the owner marked as
/// controller, or `<none>`.
pub(crate) fn controller_of(object: &Value) -> String {
    let controller = items(object, &["metadata", "ownerReferences"])
        .iter()
        .find(|o| o.get("controller").and_then(Value::as_bool) == Some(true));
    let Some(owner) = controller else {
        return "<none>".to_string();
    };
    let kind = str_at(owner, &["kind"]).unwrap_or("");
    let name = str_at(owner, &["name"]).unwrap_or("");
    let group = str_at(owner, &["apiVersion"])
        .and_then(|v| v.split_once('/'))
        .map_or("", |(group, _)| group);
    let kind = if kind.is_empty() && group.is_empty() {
        return name.to_string();
    } else if group.is_empty() {
        kind.to_lowercase()
    } else {
        format!("{kind}.{group}").to_lowercase()
    };
    format!("{kind}/{name}")
}

/// `Kind/name` of a binding's role.
pub(crate) fn role_ref(binding: &Value) -> String {
    let kind = str_at(binding, &["roleRef", "kind"]).unwrap_or("");
    let name = str_at(binding, &["roleRef", "name"]).unwrap_or("");
    format!("{kind}/{name}")
}

/// The subjects of one kind: names of users or groups, `namespace/name` of
/// service accounts; separated by `, `.
pub(crate) fn subjects(binding: &Value, kind: &str) -> String {
    items(binding, &["subjects"])
        .iter()
        .filter(|s| str_at(s, &["kind"]) == Some(kind))
        .map(|s| {
            let name = str_at(s, &["name"]).unwrap_or("");
            if kind == "ServiceAccount" {
                format!("{}/{name}", str_at(s, &["namespace"]).unwrap_or(""))
            } else {
                name.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn jobs() {
        let now = age::parse_time("2026-11-26T06:30:00Z").unwrap();
        let job = |spec: Value, status: Value| json!({"metadata": {"name": "j"}, "spec": spec, "status": status});
        let cases: &[(Value, &str, &str, &str)] = &[
            (
                job(
                    json!({"completions": 1, "parallelism": 1}),
                    json!({"startTime": "2026-11-26T06:29:57Z", "active": 1}),
                ),
                "Running",
                "0/1",
                "3s",
            ),
            (
                job(
                    json!({"completions": 3}),
                    json!({
                    "succeeded": 3, "startTime": "2026-11-26T06:00:00Z",
                    "completionTime": "2026-11-26T06:04:30Z",
                    "conditions": [{"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}]}),
                ),
                "Complete",
                "3/3",
                "4m30s",
            ),
            (
                job(json!({"parallelism": 4}), json!({"succeeded": 1})),
                "Running",
                "1/1 of 4",
                "",
            ),
            (job(json!({}), json!({})), "Running", "0/1", ""),
            (
                job(
                    json!({"completions": 2}),
                    json!({"failed": 6, "conditions": [
                    {"type": "FailureTarget", "status": "True"}, {"type": "Failed", "status": "True"}]}),
                ),
                "Failed",
                "0/2",
                "",
            ),
            (
                job(
                    json!({"completions": 2, "suspend": true}),
                    json!({"conditions": [{"type": "Suspended", "status": "True"}]}),
                ),
                "Suspended",
                "0/2",
                "",
            ),
            (
                job(
                    json!({"completions": 2}),
                    json!({"conditions": [{"type": "FailureTarget", "status": "True"}]}),
                ),
                "FailureTarget",
                "0/2",
                "",
            ),
            (
                job(
                    json!({"completions": 2}),
                    json!({"conditions": [{"type": "Complete", "status": "False"}]}),
                ),
                "Running",
                "0/2",
                "",
            ),
        ];
        for (job, status, completions, duration) in cases {
            assert_eq!(job_status(job), *status, "{job}");
            assert_eq!(job_completions(job), *completions, "{job}");
            assert_eq!(job_duration(job, now), *duration, "{job}");
        }
        let mut deleting = job(
            json!({"completions": 1}),
            json!({"conditions": [{"type": "Suspended", "status": "True"}]}),
        );
        deleting["metadata"]["deletionTimestamp"] = json!("2026-11-26T06:29:00Z");
        assert_eq!(job_status(&deleting), "Terminating");
    }

    #[test]
    fn controllers_and_bindings() {
        let revision = json!({"metadata": {"ownerReferences": [
            {"apiVersion": "v1", "kind": "Pod", "name": "other"},
            {"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "controller": true},
        ]}});
        assert_eq!(controller_of(&revision), "daemonset.apps/agent");
        let core = json!({"metadata": {"ownerReferences": [
            {"apiVersion": "v1", "kind": "Node", "name": "n1", "controller": true}]}});
        assert_eq!(controller_of(&core), "node/n1");
        assert_eq!(controller_of(&json!({"metadata": {}})), "<none>");

        let binding = json!({
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [
                {"kind": "User", "name": "alice"},
                {"kind": "ServiceAccount", "name": "grw", "namespace": "ops"},
                {"kind": "Group", "name": "devs"},
                {"kind": "User", "name": "bob"},
            ],
        });
        assert_eq!(role_ref(&binding), "ClusterRole/view");
        assert_eq!(subjects(&binding, "User"), "alice, bob");
        assert_eq!(subjects(&binding, "Group"), "devs");
        assert_eq!(subjects(&binding, "ServiceAccount"), "ops/grw");
        assert_eq!(subjects(&json!({}), "User"), "");
    }
}
