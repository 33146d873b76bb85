//! Cells of Nodes: status, roles, addresses.

use std::collections::BTreeSet;

use serde_json::Value;

use super::cells::{items, str_at};

/// `Ready` or `NotReady` from the Ready condition, `Unknown` without one,
/// then `,SchedulingDisabled` for a cordoned node.
pub(crate) fn status(node: &Value) -> String {
    // The last Ready condition wins, as in the printer's map of conditions.
    let ready = items(node, &["status", "conditions"])
        .iter()
        .rfind(|c| str_at(c, &["type"]) == Some("Ready"));
    let mut status = match ready {
        Some(c) if str_at(c, &["status"]) == Some("True") => "Ready".to_string(),
        Some(_) => "NotReady".to_string(),
        None => "Unknown".to_string(),
    };
    let cordoned = node
        .get("spec")
        .and_then(|s| s.get("unschedulable"))
        .and_then(Value::as_bool)
        == Some(true);
    if cordoned {
        status.push_str(",SchedulingDisabled");
    }
    status
}

/// The roles named by `node-role.kubernetes.io/<role>` labels and the
/// value of a `kubernetes.io/role` label, sorted; `<none>`.
pub(crate) fn roles(node: &Value) -> String {
    let labels = node
        .get("metadata")
        .and_then(|m| m.get("labels"))
        .and_then(Value::as_object);
    let mut roles = BTreeSet::new();
    for (key, value) in labels.into_iter().flatten() {
        if let Some(role) = key.strip_prefix("node-role.kubernetes.io/") {
            if !role.is_empty() {
                roles.insert(role);
            }
        } else if key == "kubernetes.io/role"
            && let Some(role) = value.as_str().filter(|r| !r.is_empty())
        {
            roles.insert(role);
        }
    }
    if roles.is_empty() {
        "<none>".to_string()
    } else {
        roles.into_iter().collect::<Vec<_>>().join(",")
    }
}

/// The first address of a type (`InternalIP`, `ExternalIP`), or `<none>`.
pub(crate) fn address(node: &Value, kind: &str) -> String {
    items(node, &["status", "addresses"])
        .iter()
        .find(|a| str_at(a, &["type"]) == Some(kind))
        .and_then(|a| str_at(a, &["address"]))
        .unwrap_or("<none>")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nodes() {
        let node = json!({
            "metadata": {"name": "n1", "labels": {
                "node-role.kubernetes.io/control-plane": "",
                "node-role.kubernetes.io/": "",
                "kubernetes.io/role": "infra",
                "node-role.kubernetes.io/infra": "",
            }},
            "spec": {"unschedulable": true},
            "status": {
                "conditions": [
                    {"type": "MemoryPressure", "status": "False"},
                    {"type": "Ready", "status": "True"},
                ],
                "addresses": [
                    {"type": "Hostname", "address": "n1"},
                    {"type": "InternalIP", "address": "192.168.1.10"},
                    {"type": "InternalIP", "address": "192.168.1.11"},
                ],
            },
        });
        assert_eq!(status(&node), "Ready,SchedulingDisabled");
        assert_eq!(roles(&node), "control-plane,infra");
        assert_eq!(address(&node, "InternalIP"), "192.168.1.10");
        assert_eq!(address(&node, "ExternalIP"), "<none>");

        let not_ready = json!({"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}});
        assert_eq!(status(&not_ready), "NotReady");
        assert_eq!(status(&json!({"metadata": {"name": "n"}})), "Unknown");
        assert_eq!(
            roles(&json!({"metadata": {"labels": {"kubernetes.io/role": ""}}})),
            "<none>"
        );
    }
}
