use grw_sdk::ObjectView;
use grw_sdk::testing::MemoryCache;
use serde_json::{Value, json};

use super::*;

fn edges(object: Value) -> Vec<String> {
    let (references, _) = References::init("{}").unwrap();
    references
        .analyze(&ObjectView::new(object), &MemoryCache::new())
        .iter()
        .map(|e| {
            let attributes: Vec<String> = e
                .attributes
                .iter()
                .map(|(k, v)| format!(" {k}={v}"))
                .collect();
            format!(
                "{} {}/{}/{}{}",
                e.relation,
                e.target.gvk.kind,
                e.target.namespace,
                e.target.name,
                attributes.concat()
            )
        })
        .collect()
}

#[test]
fn a_pod_names_its_node_account_and_what_it_reads() {
    let got = edges(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"namespace": "shop", "name": "web-0"},
        "spec": {
            "nodeName": "node-a",
            "serviceAccountName": "web",
            "volumes": [
                {"name": "config", "configMap": {"name": "web-config"}},
                {"name": "tls", "secret": {"secretName": "web-tls"}},
                {"name": "data", "persistentVolumeClaim": {"claimName": "data-web-0"}},
                {"name": "token", "projected": {"sources": [
                    {"serviceAccountToken": {"path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt"}},
                    {"secret": {"name": "extra"}},
                ]}},
                {"name": "scratch", "emptyDir": {}},
            ],
            "containers": [{"name": "web", "env": [
                {"name": "A", "value": "1"},
                {"name": "B", "valueFrom": {"secretKeyRef": {"name": "web-tls", "key": "k"}}},
                {"name": "C", "valueFrom": {"configMapKeyRef": {"name": "flags", "key": "k"}}},
                {"name": "D", "valueFrom": {"secretKeyRef": {"name": "web-tls", "key": "other"}}},
            ]}],
            "initContainers": [{"name": "init", "envFrom": [{"configMapRef": {"name": "web-config"}}]}],
            "imagePullSecrets": [{"name": "registry"}, {"name": ""}],
        },
    }));
    assert_eq!(
        got,
        [
            "runs-on Node//node-a",
            "runs-as ServiceAccount/shop/web",
            "uses ConfigMap/shop/flags via=env",
            "uses ConfigMap/shop/kube-root-ca.crt via=projected",
            "uses ConfigMap/shop/web-config via=envFrom",
            "uses ConfigMap/shop/web-config via=volume",
            "uses PersistentVolumeClaim/shop/data-web-0 via=volume",
            "uses Secret/shop/extra via=projected",
            "uses Secret/shop/registry via=imagePullSecret",
            "uses Secret/shop/web-tls via=env",
            "uses Secret/shop/web-tls via=volume",
        ]
    );
}

/// A pod spec that names something by every `via`, and a node.
fn pod_spec() -> Value {
    json!({
        "nodeName": "node-a",
        "serviceAccountName": "web",
        "imagePullSecrets": [{"name": "registry"}],
        "volumes": [
            {"name": "config", "configMap": {"name": "settings"}},
            {"name": "tls", "secret": {"secretName": "web-tls"}},
            {"name": "shared", "persistentVolumeClaim": {"claimName": "uploads"}},
            {"name": "bundle", "projected": {"sources": [{"secret": {"name": "extra"}}]}},
        ],
        "containers": [{"name": "web",
            "env": [{"name": "F", "valueFrom": {"configMapKeyRef": {"name": "flags", "key": "f"}}}],
            "envFrom": [{"secretRef": {"name": "db-credentials"}}]}],
    })
}

/// What [`pod_spec`] names, as a template: no node.
const TEMPLATE_EDGES: [&str; 8] = [
    "runs-as ServiceAccount/shop/web",
    "uses ConfigMap/shop/flags via=env",
    "uses ConfigMap/shop/settings via=volume",
    "uses PersistentVolumeClaim/shop/uploads via=volume",
    "uses Secret/shop/db-credentials via=envFrom",
    "uses Secret/shop/extra via=projected",
    "uses Secret/shop/registry via=imagePullSecret",
    "uses Secret/shop/web-tls via=volume",
];

fn workload(api_version: &str, kind: &str, spec: Value) -> Value {
    json!({"apiVersion": api_version, "kind": kind,
           "metadata": {"namespace": "shop", "name": "web"}, "spec": spec})
}

#[test]
fn each_workload_uses_what_its_pod_template_names_and_runs_nowhere() {
    for (api_version, kind) in [
        ("apps/v1", "Deployment"),
        ("apps/v1", "ReplicaSet"),
        ("apps/v1", "StatefulSet"),
        ("apps/v1", "DaemonSet"),
        ("batch/v1", "Job"),
    ] {
        let object = workload(api_version, kind, json!({"template": {"spec": pod_spec()}}));
        assert_eq!(edges(object), TEMPLATE_EDGES, "{kind}");
    }
    // A CronJob's template is one level further down, in its Job's.
    let cron_job = workload(
        "batch/v1",
        "CronJob",
        json!({"schedule": "*/5 * * * *",
               "jobTemplate": {"spec": {"template": {"spec": pod_spec()}}}}),
    );
    assert_eq!(edges(cron_job), TEMPLATE_EDGES);
    // Not at the Job's level, where a Job's template would be.
    let misplaced = workload(
        "batch/v1",
        "CronJob",
        json!({"jobTemplate": {"template": {"spec": pod_spec()}}}),
    );
    assert!(edges(misplaced).is_empty());
}

#[test]
fn a_deployment_scaled_to_zero_still_uses_its_config_map() {
    let deployment = workload(
        "apps/v1",
        "Deployment",
        json!({"replicas": 0, "template": {"spec": {
            "containers": [{"name": "web"}],
            "volumes": [{"name": "config", "configMap": {"name": "settings"}}]}}}),
    );
    assert_eq!(
        edges(deployment),
        ["uses ConfigMap/shop/settings via=volume"]
    );
}

#[test]
fn a_workload_without_a_readable_template_names_nothing() {
    for spec in [
        json!({}),
        json!({"template": {}}),
        json!({"template": {"spec": {"volumes": "not a list"}}}),
        json!({"template": {"spec": {"serviceAccountName": ""}}}),
    ] {
        assert!(
            edges(workload("apps/v1", "Deployment", spec.clone())).is_empty(),
            "{spec}"
        );
    }
    // Kinds the analyzer does not know are left alone, template or not.
    let other = workload(
        "example.com/v1",
        "Rollout",
        json!({"template": {"spec": pod_spec()}}),
    );
    assert!(edges(other).is_empty());
}

#[test]
fn a_stateful_set_uses_the_storage_classes_of_its_claim_templates() {
    let claim = |name: &str, class: Option<&str>| {
        let mut spec = json!({"accessModes": ["ReadWriteOnce"],
                              "resources": {"requests": {"storage": "1Gi"}}});
        if let Some(class) = class {
            spec["storageClassName"] = json!(class);
        }
        json!({"metadata": {"name": name}, "spec": spec})
    };
    let set = workload(
        "apps/v1",
        "StatefulSet",
        json!({"replicas": 3, "serviceName": "db",
        "template": {"spec": {"containers": [{"name": "db",
            "envFrom": [{"configMapRef": {"name": "db-config"}}]}]}},
        "volumeClaimTemplates": [
            claim("data", Some("gp3")),
            claim("wal", Some("gp3")),
            claim("logs", Some("standard")),
            // The cluster's default class, whichever it is: no edge.
            claim("scratch", None),
            claim("empty", Some("")),
        ]}),
    );
    assert_eq!(
        edges(set),
        [
            "uses ConfigMap/shop/db-config via=envFrom",
            "uses StorageClass//gp3 via=volumeClaimTemplate",
            "uses StorageClass//standard via=volumeClaimTemplate",
        ]
    );
    // A Deployment's claim templates are no field of it.
    let deployment = workload(
        "apps/v1",
        "Deployment",
        json!({"volumeClaimTemplates": [claim("data", Some("gp3"))]}),
    );
    assert!(edges(deployment).is_empty());
}

#[test]
fn the_analyzer_asks_for_every_workload_kind() {
    let (_, interest) = References::init("{}").unwrap();
    for (api_version, kind) in [
        ("v1", "Pod"),
        ("apps/v1", "Deployment"),
        ("apps/v1", "ReplicaSet"),
        ("apps/v1", "StatefulSet"),
        ("apps/v1", "DaemonSet"),
        ("batch/v1", "Job"),
        ("batch/v1", "CronJob"),
    ] {
        let view = ObjectView::new(workload(api_version, kind, json!({})));
        assert!(
            interest.matches(view.gvk(), grw_sdk::EventType::Added),
            "{kind}"
        );
    }
}

#[test]
fn claims_volumes_and_ingresses_name_their_targets() {
    assert_eq!(
        edges(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                     "metadata": {"namespace": "shop", "name": "data"}, "spec": {"volumeName": "pv-1"}})),
        ["bound-to PersistentVolume//pv-1"]
    );
    assert!(
        edges(json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
                     "metadata": {"namespace": "shop", "name": "pending"}, "spec": {}}))
        .is_empty()
    );
    assert_eq!(
        edges(json!({"apiVersion": "v1", "kind": "PersistentVolume",
                     "metadata": {"name": "pv-1"}, "spec": {"storageClassName": "gp3"}})),
        ["of-class StorageClass//gp3"]
    );
    assert_eq!(
        edges(
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"namespace": "shop", "name": "web"},
            "spec": {"defaultBackend": {"service": {"name": "fallback"}},
                     "rules": [{"http": {"paths": [
                         {"path": "/", "backend": {"service": {"name": "web", "port": {"number": 80}}}},
                         {"path": "/api", "backend": {"service": {"name": "web"}}},
                         {"path": "/static", "backend": {"resource": {"kind": "Bucket", "name": "b"}}},
                     ]}}]}})
        ),
        [
            "routes-to Service/shop/fallback",
            "routes-to Service/shop/web"
        ]
    );
}
