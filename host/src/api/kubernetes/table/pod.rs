//! A Pod's Ready, Status and Restarts cells, which kubectl users read more
//! than any other: the same words as the API server's pod printer.
//!
//! The status is the pod's phase (or `status.reason`), overridden in order
//! by: a scheduling gate; the first init container not done yet
//! (`Init:ErrImagePull`, `Init:ExitCode:1`, `Init:0/2`); then, once
//! initialized, the last container with something to say (a waiting reason
//! such as `CrashLoopBackOff`, a termination reason such as `Completed` or
//! `Error`, `ExitCode:n`, `Signal:n`); `Completed` goes back to `Running`
//! (or `NotReady`) while another container still runs; finally a pod being
//! deleted is `Terminating`, or `Unknown` when its node was lost.
//!
//! Sidecars (init containers with `restartPolicy: Always`) count among the
//! containers for Ready, and only their restarts count once the pod is
//! initialized.

use serde_json::{Value, json};

use super::age::{self, Instant};
use super::cells::{at, int, items, str_at};

/// The three cells, computed together.
pub(crate) struct Summary {
    pub(crate) ready: String,
    pub(crate) status: String,
    pub(crate) restarts: String,
}

/// Restarts and the latest end of a previous run, kept per group of
/// containers.
#[derive(Default, Clone, Copy)]
struct Restarts {
    count: i64,
    last: Option<Instant>,
}

impl Restarts {
    fn add(&mut self, status: &Value) {
        self.count += int(status.get("restartCount"));
        let finished = str_at(status, &["lastState", "terminated", "finishedAt"]);
        if let Some(t) = finished.and_then(age::parse_time) {
            self.last = Some(self.last.map_or(t, |last| last.max(t)));
        }
    }
}

pub(crate) fn summary(pod: &Value, now: Instant) -> Summary {
    let phase = str_at(pod, &["status", "phase"]).unwrap_or("");
    let mut reason = match str_at(pod, &["status", "reason"]) {
        Some(r) if !r.is_empty() => r.to_string(),
        _ => phase.to_string(),
    };
    let conditions = items(pod, &["status", "conditions"]);
    if conditions.iter().any(|c| {
        str_at(c, &["type"]) == Some("PodScheduled")
            && str_at(c, &["reason"]) == Some("SchedulingGated")
    }) {
        reason = "SchedulingGated".to_string();
    }

    let init_specs = items(pod, &["spec", "initContainers"]);
    let is_sidecar = |name: Option<&str>| {
        init_specs.iter().any(|c| {
            name.is_some()
                && str_at(c, &["name"]) == name
                && str_at(c, &["restartPolicy"]) == Some("Always")
        })
    };
    let sidecars = init_specs
        .iter()
        .filter(|c| str_at(c, &["restartPolicy"]) == Some("Always"))
        .count();
    let total = items(pod, &["spec", "containers"]).len() + sidecars;
    let mut ready = 0;

    let mut all = Restarts::default();
    let mut of_sidecars = Restarts::default();
    let mut initializing = false;
    for (i, status) in items(pod, &["status", "initContainerStatuses"])
        .iter()
        .enumerate()
    {
        all.add(status);
        let sidecar = is_sidecar(str_at(status, &["name"]));
        if sidecar {
            of_sidecars.add(status);
        }
        let terminated = at(status, &["state", "terminated"]);
        let waiting_reason = str_at(status, &["state", "waiting", "reason"]).unwrap_or("");
        if terminated.is_some_and(|t| int(t.get("exitCode")) == 0) {
            continue;
        }
        if sidecar && status.get("started").and_then(Value::as_bool) == Some(true) {
            if status.get("ready").and_then(Value::as_bool) == Some(true) {
                ready += 1;
            }
            continue;
        }
        reason = if let Some(terminated) = terminated {
            match str_at(terminated, &["reason"]) {
                Some(r) if !r.is_empty() => format!("Init:{r}"),
                _ => match int(terminated.get("signal")) {
                    0 => format!("Init:ExitCode:{}", int(terminated.get("exitCode"))),
                    signal => format!("Init:Signal:{signal}"),
                },
            }
        } else if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" {
            format!("Init:{waiting_reason}")
        } else {
            format!("Init:{i}/{}", init_specs.len())
        };
        initializing = true;
        break;
    }

    let mut restarts = all;
    if !initializing || condition_is_true(conditions, "Initialized") {
        restarts = of_sidecars;
        let mut running = false;
        for status in items(pod, &["status", "containerStatuses"]).iter().rev() {
            restarts.add(status);
            let waiting = str_at(status, &["state", "waiting", "reason"]).unwrap_or("");
            let terminated = at(status, &["state", "terminated"]);
            let terminated_reason = terminated
                .and_then(|t| str_at(t, &["reason"]))
                .unwrap_or("");
            if !waiting.is_empty() {
                reason = waiting.to_string();
            } else if !terminated_reason.is_empty() {
                reason = terminated_reason.to_string();
            } else if let Some(terminated) = terminated {
                reason = match int(terminated.get("signal")) {
                    0 => format!("ExitCode:{}", int(terminated.get("exitCode"))),
                    signal => format!("Signal:{signal}"),
                };
            } else if status.get("ready").and_then(Value::as_bool) == Some(true)
                && at(status, &["state", "running"]).is_some()
            {
                running = true;
                ready += 1;
            }
        }
        if reason == "Completed" && running {
            reason = if condition_is_true_any(conditions, "Ready") {
                "Running".to_string()
            } else {
                "NotReady".to_string()
            };
        }
    }

    let deleting = at(pod, &["metadata", "deletionTimestamp"]).is_some_and(|v| !v.is_null());
    if deleting && str_at(pod, &["status", "reason"]) == Some("NodeLost") {
        reason = "Unknown".to_string();
    } else if deleting && phase != "Succeeded" && phase != "Failed" {
        reason = "Terminating".to_string();
    }

    let restarts = match restarts.last {
        Some(last) if restarts.count != 0 => {
            format!("{} ({} ago)", restarts.count, age::since(last, now))
        }
        _ => restarts.count.to_string(),
    };
    Summary {
        ready: format!("{ready}/{total}"),
        status: reason,
        restarts,
    }
}

/// The first condition of a type decides (as the printer's lookup does).
fn condition_is_true(conditions: &[Value], kind: &str) -> bool {
    conditions
        .iter()
        .find(|c| str_at(c, &["type"]) == Some(kind))
        .is_some_and(|c| str_at(c, &["status"]) == Some("True"))
}

/// Any condition of a type that is true.
fn condition_is_true_any(conditions: &[Value], kind: &str) -> bool {
    conditions
        .iter()
        .any(|c| str_at(c, &["type"]) == Some(kind) && str_at(c, &["status"]) == Some("True"))
}

/// The pod's first IP (`status.podIPs`, or the older `status.podIP`), or
/// `<none>`.
pub(crate) fn ip(pod: &Value) -> String {
    let first = items(pod, &["status", "podIPs"])
        .first()
        .and_then(|ip| str_at(ip, &["ip"]))
        .or_else(|| str_at(pod, &["status", "podIP"]))
        .unwrap_or("");
    if first.is_empty() {
        "<none>".to_string()
    } else {
        first.to_string()
    }
}

/// `met/total` readiness gates, or `<none>` without gates.
pub(crate) fn readiness_gates(pod: &Value) -> String {
    let gates = items(pod, &["spec", "readinessGates"]);
    if gates.is_empty() {
        return "<none>".to_string();
    }
    let conditions = items(pod, &["status", "conditions"]);
    let met = gates
        .iter()
        .filter(|gate| {
            let kind = str_at(gate, &["conditionType"]);
            kind.is_some() && condition_is_true(conditions, kind.unwrap_or(""))
        })
        .count();
    format!("{met}/{}", gates.len())
}

/// The row conditions the API server adds to finished pods, which kubectl
/// uses to tell them apart.
pub(crate) fn row_conditions(pod: &Value) -> Option<Value> {
    let (reason, message) = match str_at(pod, &["status", "phase"]) {
        Some("Succeeded") => ("Succeeded", "The pod has completed successfully."),
        Some("Failed") => ("Failed", "The pod failed."),
        _ => return None,
    };
    Some(json!([{"type": "Completed", "status": "True", "reason": reason, "message": message}]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn now() -> Instant {
        age::parse_time("2026-11-26T06:30:00Z").unwrap()
    }

    fn running(name: &str) -> Value {
        json!({"name": name, "ready": true, "restartCount": 0,
            "state": {"running": {"startedAt": "2026-11-26T06:20:00Z"}}})
    }

    fn pod(spec: Value, status: Value) -> Value {
        json!({"metadata": {"name": "p"}, "spec": spec, "status": status})
    }

    fn one_container() -> Value {
        json!({"containers": [{"name": "c"}]})
    }

    /// (what it shows, pod, Ready, Status, Restarts)
    fn cases() -> Vec<(
        &'static str,
        Value,
        &'static str,
        &'static str,
        &'static str,
    )> {
        vec![
            (
                "pending, nothing started",
                pod(one_container(), json!({"phase": "Pending"})),
                "0/1",
                "Pending",
                "0",
            ),
            (
                "running and ready",
                pod(
                    one_container(),
                    json!({"phase": "Running", "containerStatuses": [running("c")]}),
                ),
                "1/1",
                "Running",
                "0",
            ),
            (
                "crash looping, with the age of the last restart",
                pod(
                    one_container(),
                    json!({"phase": "Running", "containerStatuses": [{
                        "name": "c", "ready": false, "restartCount": 5,
                        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
                        "lastState": {"terminated": {"exitCode": 1, "reason": "Error",
                            "finishedAt": "2026-11-26T06:27:00Z"}},
                    }]}),
                ),
                "0/1",
                "CrashLoopBackOff",
                "5 (3m ago)",
            ),
            (
                "completed",
                pod(
                    one_container(),
                    json!({"phase": "Succeeded", "containerStatuses": [{
                        "name": "c", "ready": false, "restartCount": 0,
                        "state": {"terminated": {"exitCode": 0, "reason": "Completed"}},
                    }]}),
                ),
                "0/1",
                "Completed",
                "0",
            ),
            (
                "one completed, another still running and the pod ready",
                pod(
                    json!({"containers": [{"name": "a"}, {"name": "b"}]}),
                    json!({"phase": "Running",
                    "conditions": [{"type": "Ready", "status": "True"}],
                    "containerStatuses": [
                        {"name": "a", "ready": false, "restartCount": 0,
                            "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
                        running("b"),
                    ]}),
                ),
                "1/2",
                "Running",
                "0",
            ),
            (
                "one completed, another running, the pod not ready",
                pod(
                    json!({"containers": [{"name": "a"}, {"name": "b"}]}),
                    json!({"phase": "Running", "containerStatuses": [
                        {"name": "a", "ready": false, "restartCount": 0,
                            "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
                        running("b"),
                    ]}),
                ),
                "1/2",
                "NotReady",
                "0",
            ),
            (
                "terminated without a reason",
                pod(
                    one_container(),
                    json!({"phase": "Failed", "containerStatuses": [{
                    "name": "c", "restartCount": 0, "state": {"terminated": {"exitCode": 137}}}]}),
                ),
                "0/1",
                "ExitCode:137",
                "0",
            ),
            (
                "killed by a signal",
                pod(
                    one_container(),
                    json!({"phase": "Failed", "containerStatuses": [{
                    "name": "c", "restartCount": 0,
                    "state": {"terminated": {"exitCode": 0, "signal": 9}}}]}),
                ),
                "0/1",
                "Signal:9",
                "0",
            ),
            (
                "first init container still running",
                pod(
                    json!({"initContainers": [{"name": "i"}], "containers": [{"name": "c"}]}),
                    json!({"phase": "Pending", "initContainerStatuses": [{
                        "name": "i", "restartCount": 0, "state": {"running": {}}}]}),
                ),
                "0/1",
                "Init:0/1",
                "0",
            ),
            (
                "second of two init containers waiting to initialize",
                pod(
                    json!({"initContainers": [{"name": "i1"}, {"name": "i2"}], "containers": [{"name": "c"}]}),
                    json!({"phase": "Pending", "initContainerStatuses": [
                        {"name": "i1", "restartCount": 0, "state": {"terminated": {"exitCode": 0}}},
                        {"name": "i2", "restartCount": 0, "state": {"waiting": {"reason": "PodInitializing"}}},
                    ]}),
                ),
                "0/1",
                "Init:1/2",
                "0",
            ),
            (
                "init container cannot pull its image",
                pod(
                    json!({"initContainers": [{"name": "i"}], "containers": [{"name": "c"}]}),
                    json!({"phase": "Pending", "initContainerStatuses": [{
                        "name": "i", "restartCount": 2,
                        "state": {"waiting": {"reason": "ImagePullBackOff"}}}]}),
                ),
                "0/1",
                "Init:ImagePullBackOff",
                "2",
            ),
            (
                "init container failed",
                pod(
                    json!({"initContainers": [{"name": "i"}], "containers": [{"name": "c"}]}),
                    json!({"phase": "Pending", "initContainerStatuses": [{
                        "name": "i", "restartCount": 0,
                        "state": {"terminated": {"exitCode": 3}}}]}),
                ),
                "0/1",
                "Init:ExitCode:3",
                "0",
            ),
            (
                "init container failed with a reason",
                pod(
                    json!({"initContainers": [{"name": "i"}], "containers": [{"name": "c"}]}),
                    json!({"phase": "Pending", "initContainerStatuses": [{
                        "name": "i", "restartCount": 0,
                        "state": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}),
                ),
                "0/1",
                "Init:Error",
                "0",
            ),
            (
                "a started sidecar counts as a ready container; only its restarts count",
                pod(
                    json!({"initContainers": [
                        {"name": "setup"}, {"name": "proxy", "restartPolicy": "Always"}],
                        "containers": [{"name": "c"}]}),
                    json!({"phase": "Running",
                        "conditions": [{"type": "Initialized", "status": "True"}],
                        "initContainerStatuses": [
                            {"name": "setup", "restartCount": 4,
                                "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}},
                            {"name": "proxy", "restartCount": 1, "started": true, "ready": true,
                                "state": {"running": {}},
                                "lastState": {"terminated": {"exitCode": 1,
                                    "finishedAt": "2026-11-26T06:29:30Z"}}},
                        ],
                        "containerStatuses": [running("c")]}),
                ),
                "2/2",
                "Running",
                "1 (30s ago)",
            ),
            (
                "scheduling gated",
                pod(
                    one_container(),
                    json!({"phase": "Pending", "conditions": [
                    {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}),
                ),
                "0/1",
                "SchedulingGated",
                "0",
            ),
            (
                "evicted",
                pod(
                    one_container(),
                    json!({"phase": "Failed", "reason": "Evicted"}),
                ),
                "0/1",
                "Evicted",
                "0",
            ),
        ]
    }

    #[test]
    fn status_words_of_the_pod_printer() {
        for (what, pod, ready, status, restarts) in cases() {
            let s = summary(&pod, now());
            assert_eq!(
                (s.ready.as_str(), s.status.as_str(), s.restarts.as_str()),
                (ready, status, restarts),
                "{what}"
            );
        }
    }

    #[test]
    fn deleted_pods() {
        let mut deleting = pod(
            one_container(),
            json!({"phase": "Running", "containerStatuses": [running("c")]}),
        );
        deleting["metadata"]["deletionTimestamp"] = json!("2026-11-26T06:29:00Z");
        assert_eq!(summary(&deleting, now()).status, "Terminating");

        let mut lost = deleting.clone();
        lost["status"]["reason"] = json!("NodeLost");
        assert_eq!(summary(&lost, now()).status, "Unknown");

        // A finished pod being deleted keeps its last word.
        let mut done = pod(
            one_container(),
            json!({"phase": "Succeeded", "containerStatuses": [{
            "name": "c", "restartCount": 0,
            "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}),
        );
        done["metadata"]["deletionTimestamp"] = json!("2026-11-26T06:29:00Z");
        assert_eq!(summary(&done, now()).status, "Completed");
    }

    #[test]
    fn ip_gates_and_row_conditions() {
        assert_eq!(
            ip(&json!({"status": {"podIPs": [{"ip": "10.0.0.5"}, {"ip": "fd00::5"}]}})),
            "10.0.0.5"
        );
        assert_eq!(ip(&json!({"status": {"podIP": "10.0.0.6"}})), "10.0.0.6");
        assert_eq!(ip(&json!({"status": {}})), "<none>");

        let gated = json!({
            "spec": {"readinessGates": [{"conditionType": "a"}, {"conditionType": "b"}]},
            "status": {"conditions": [{"type": "a", "status": "True"}, {"type": "b", "status": "False"}]},
        });
        assert_eq!(readiness_gates(&gated), "1/2");
        assert_eq!(readiness_gates(&json!({"spec": {}})), "<none>");

        assert_eq!(
            row_conditions(&json!({"status": {"phase": "Running"}})),
            None
        );
        assert_eq!(
            row_conditions(&json!({"status": {"phase": "Failed"}})),
            Some(
                json!([{"type": "Completed", "status": "True", "reason": "Failed",
                "message": "The pod failed."}])
            )
        );
    }
}
