//! What the benchmarks against the fake API server share: the Pods they
//! create, as a Deployment's Pods look in a real cluster (about 3 KB of
//! JSON each), the release `grw` they run, and their percentiles.

use std::path::PathBuf;
use std::process::Command;

use grw_e2e::daemon::as_from_a_shell;
use serde_json::{Value, json};

/// How the Pods spread.
#[derive(Debug, Clone, Copy)]
pub struct Spread {
    /// Namespaces `team-N`.
    pub namespaces: usize,
    /// `app` label values `app-N`.
    pub apps: usize,
    /// Nodes `node-N` in `spec.nodeName`.
    pub nodes: usize,
}

/// The `i`th Pod.
pub fn pod(i: usize, spread: Spread) -> Value {
    let app = format!("app-{}", i % spread.apps);
    let hash = format!(
        "{:010x}",
        (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 24
    );
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "namespace": format!("team-{}", i % spread.namespaces),
            "name": format!("{app}-{}-{:05}", &hash[..8], i),
            "labels": {"app": app, "pod-template-hash": &hash[..8], "tier": if i.is_multiple_of(3) { "web" } else { "backend" }},
            "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-11-20T10:00:00Z"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": format!("{app}-{}", &hash[..8]), "uid": format!("rs-{hash}"), "controller": true, "blockOwnerDeletion": true}],
        },
        "spec": {
            "nodeName": format!("node-{}", i % spread.nodes),
            "serviceAccountName": "default",
            "containers": [{
                "name": "app", "image": format!("registry.example.com/{app}:1.{}", i % 7),
                "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                "env": [{"name": "LOG_LEVEL", "value": "info"}, {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 10},
                "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}, {"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}],
            }],
            "volumes": [{"name": "config", "configMap": {"name": format!("{app}-config")}}, {"name": "kube-api-access", "projected": {"sources": [{"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}}, {"configMap": {"name": "kube-root-ca.crt"}}]}}],
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
        },
        "status": {
            "phase": "Running", "podIP": format!("10.{}.{}.{}", i / 65536 % 256, i / 256 % 256, i % 256), "hostIP": format!("192.168.0.{}", i % 40),
            "startTime": "2026-11-20T10:00:05Z", "qosClass": "Burstable",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-20T10:00:12Z"}, {"type": "ContainersReady", "status": "True", "lastTransitionTime": "2026-11-20T10:00:12Z"}],
            "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0, "image": format!("registry.example.com/{app}:1.{}", i % 7), "imageID": "registry.example.com/app@sha256:0123456789abcdef", "containerID": format!("containerd://{hash}{hash}"), "started": true, "state": {"running": {"startedAt": "2026-11-20T10:00:08Z"}}}],
        },
    })
}

/// Names the release `grw` (see [`release_grw`]) in `GRW_BIN` for the
/// test harness's `Grw`, and writes the report's first lines: the machine,
/// the date and that `grw`.
pub fn release_grw_for_report() {
    let grw_bin = release_grw();
    // SAFETY: set before the benchmark starts anything that reads the
    // environment (the harness reads it when it starts a `grw`).
    unsafe { std::env::set_var("GRW_BIN", &grw_bin) };
    println!(
        "machine: {}, {} logical CPUs",
        crate::common::cpu_model(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "date: {}",
        grw::time::rfc3339(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
        )
    );
    println!("grw: {}", grw_bin.display());
}

/// The release `grw`, built unless `GRW_BIN` names one.
pub fn release_grw() -> PathBuf {
    if let Some(bin) = std::env::var_os("GRW_BIN") {
        return PathBuf::from(bin);
    }
    let workspace = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = as_from_a_shell(&mut Command::new(cargo))
        .args(["build", "--quiet", "--release", "-p", "grw", "--bin", "grw"])
        .current_dir(&workspace)
        .status()
        .unwrap();
    assert!(status.success(), "building the release grw failed");
    let target =
        std::env::var("CARGO_TARGET_DIR").map_or_else(|_| workspace.join("target"), PathBuf::from);
    target.join("release").join("grw")
}

/// The `p` quantile of `sorted` (ascending); NaN when it is empty.
pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}
