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
            "uses Secret/shop/web-tls via=env",
            "uses Secret/shop/web-tls via=volume",
        ]
    );
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
