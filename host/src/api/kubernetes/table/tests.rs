//! Tables against a real API server's answers (`tests/data/kube-api`,
//! kube-apiserver v1.32): column definitions for every fixture, and whole
//! Tables (metadata, rows, cells, row objects) for lists of objects that
//! match the fixtures' rows.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};

use super::*;
use crate::recorded::watch_events;

fn fixture(name: &str) -> Value {
    let path = format!(
        "{}/../tests/data/kube-api/{name}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"))
}

/// The Widget CRD of the fixtures' cluster, written from what docs/kubernetes-api.md
/// and `table-widgets.json` say of it: Size, Color at priority 1, Age.
fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
            "scope": "Namespaced",
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
                "additionalPrinterColumns": [
                    {"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                    {"name": "Color", "type": "string", "priority": 1, "jsonPath": ".spec.color"},
                    {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
                ],
            }],
        },
    })
}

/// The Istio Gateway CRD as the fixtures' cluster had it: no printer
/// columns.
fn gateway_crd() -> Value {
    json!({
        "metadata": {"name": "gateways.networking.istio.io"},
        "spec": {"group": "networking.istio.io", "versions": [
            {"name": "v1", "served": true, "storage": true},
        ]},
    })
}

/// The kind of each `table-*.json` fixture, and its CRD if it is a custom
/// resource.
fn kind_of(file: &str) -> (Gvk, Option<Value>) {
    let gvk = |g: &str, v: &str, k: &str| Gvk::new(g, v, k);
    match file {
        "table-configmaps.json" => (gvk("", "v1", "ConfigMap"), None),
        "table-cronjobs.json" => (gvk("batch", "v1", "CronJob"), None),
        "table-daemonsets.json" => (gvk("apps", "v1", "DaemonSet"), None),
        "table-deployments.json" => (gvk("apps", "v1", "Deployment"), None),
        "table-endpointslices.json" => (gvk("discovery.k8s.io", "v1", "EndpointSlice"), None),
        "table-events.json" => (gvk("", "v1", "Event"), None),
        "table-gateways.json" => (
            gvk("networking.istio.io", "v1", "Gateway"),
            Some(gateway_crd()),
        ),
        "table-ingresses.json" => (gvk("networking.k8s.io", "v1", "Ingress"), None),
        "table-jobs.json" => (gvk("batch", "v1", "Job"), None),
        "table-namespaces.json" => (gvk("", "v1", "Namespace"), None),
        "table-nodes.json" => (gvk("", "v1", "Node"), None),
        "table-persistentvolumeclaims.json" => (gvk("", "v1", "PersistentVolumeClaim"), None),
        "table-persistentvolumes.json" => (gvk("", "v1", "PersistentVolume"), None),
        "table-pods-wide.json" | "table-pods.json" => (gvk("", "v1", "Pod"), None),
        "table-replicasets.json" => (gvk("apps", "v1", "ReplicaSet"), None),
        "table-secrets.json" => (gvk("", "v1", "Secret"), None),
        "table-services.json" => (gvk("", "v1", "Service"), None),
        "table-statefulsets.json" => (gvk("apps", "v1", "StatefulSet"), None),
        "table-widgets.json" => (gvk("example.com", "v1", "Widget"), Some(widget_crd())),
        other => panic!("{other}: a Table fixture without a kind in this test"),
    }
}

fn table_fixtures() -> Vec<String> {
    let dir = format!("{}/../tests/data/kube-api", env!("CARGO_MANIFEST_DIR"));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|name| name.starts_with("table-") && name.ends_with(".json"))
        .collect();
    names.sort();
    names
}

fn printer(file: &str) -> Printer {
    let (gvk, crd) = kind_of(file);
    Printer::for_kind(&gvk, crd.as_ref()).unwrap()
}

/// `columnDefinitions` without descriptions (ours are in our own words).
fn definitions(table: &Value) -> Vec<Value> {
    let mut definitions = table["columnDefinitions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for d in &mut definitions {
        d.as_object_mut().unwrap().remove("description");
    }
    definitions
}

#[test]
fn column_definitions_match_every_fixture() {
    let names = table_fixtures();
    assert_eq!(names.len(), 20, "{names:?}");
    for name in names {
        let want = fixture(&name);
        let got: Value = serde_json::from_slice(&printer(&name).list(
            &[],
            IncludeObject::Metadata,
            &ListMeta::default(),
            SystemTime::UNIX_EPOCH,
        ))
        .unwrap();
        assert_eq!(definitions(&got), definitions(&want), "{name}");
        for d in got["columnDefinitions"].as_array().unwrap() {
            assert!(
                !d["description"].as_str().unwrap().is_empty(),
                "{name}: {d}"
            );
        }
    }
}

/// The instant a fixture was answered at, from a row whose column `column`
/// is the age (in seconds) of the row object's `creationTimestamp`: half a
/// second into that second, since the API server's clock had a fraction
/// its answer does not show.
fn answered_at(table: &Value, column: usize) -> SystemTime {
    let row = &table["rows"][0];
    let created = row["object"]["metadata"]["creationTimestamp"]
        .as_str()
        .unwrap();
    let age = row["cells"][column].as_str().unwrap();
    let seconds: u64 = age.strip_suffix('s').unwrap().parse().unwrap();
    age::parse_time(created).unwrap().to_system()
        + Duration::from_secs(seconds)
        + Duration::from_millis(500)
}

fn stored(gvk: &Gvk, object: Value) -> Arc<StoredObject> {
    // Managed fields kept: the fixtures' row objects have them.
    Arc::new(StoredObject::from_value(object, gvk, true).unwrap())
}

/// Prints `objects` as `file`'s kind and compares the whole Table with the
/// fixture (column descriptions aside).
fn assert_same_table(file: &str, objects: Vec<Value>, include: IncludeObject, age_column: usize) {
    let want = fixture(file);
    let (gvk, crd) = kind_of(file);
    let printer = Printer::for_kind(&gvk, crd.as_ref()).unwrap();
    let objects: Vec<_> = objects.into_iter().map(|o| stored(&gvk, o)).collect();
    let meta = ListMeta {
        resource_version: want["metadata"]["resourceVersion"].as_str().unwrap(),
        ..ListMeta::default()
    };
    let now = answered_at(&want, age_column);
    let mut got: Value =
        serde_json::from_slice(&printer.list(&objects, include, &meta, now)).unwrap();
    let mut want = want;
    for table in [&mut got, &mut want] {
        let definitions = definitions(table);
        table["columnDefinitions"] = Value::Array(definitions);
    }
    for (i, (g, w)) in got["rows"]
        .as_array()
        .unwrap()
        .iter()
        .zip(want["rows"].as_array().unwrap())
        .enumerate()
    {
        assert_eq!(g["cells"], w["cells"], "{file}: row {i}");
    }
    assert_eq!(got, want, "{file}");
}

#[test]
fn pods_with_whole_objects_are_the_fixtures_rows() {
    // The rows' objects are the real pods: GRW's cells for them must be the
    // API server's, and the whole Table the same.
    let table = fixture("table-pods-wide.json");
    let pods: Vec<Value> = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["object"].clone())
        .collect();
    assert_eq!(pods.len(), 4);
    assert_same_table("table-pods-wide.json", pods, IncludeObject::Object, 4);
}

/// The fixture's rows' metadata, each completed into an object by `fill`.
fn objects_of(file: &str, fill: impl Fn(&str, &Value) -> Value) -> Vec<Value> {
    let (gvk, _) = kind_of(file);
    fixture(file)["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|row| {
            let metadata = &row["object"]["metadata"];
            let name = metadata["name"].as_str().unwrap();
            let mut object = fill(name, metadata);
            object["apiVersion"] = json!(gvk.api_version());
            object["kind"] = json!(gvk.kind);
            object["metadata"] = metadata.clone();
            object
        })
        .collect()
}

#[test]
fn pods_of_every_namespace() {
    // The pods of `default` are in `pods-list.json`; the others (never
    // scheduled, as the cells say) are written here.
    let full: BTreeMap<String, Value> = fixture("pods-list.json")["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["metadata"]["uid"].as_str().unwrap().to_string(),
                p.clone(),
            )
        })
        .collect();
    let objects = objects_of("table-pods.json", |_, metadata| {
        let uid = metadata["uid"].as_str().unwrap();
        match full.get(uid) {
            Some(pod) => json!({"spec": pod["spec"], "status": pod["status"]}),
            None => {
                let node = match metadata["name"].as_str().unwrap() {
                    "nolabels" => json!("node3"),
                    "web-1" => json!("node1"),
                    _ => Value::Null,
                };
                json!({
                    "spec": {"containers": [{"name": "c", "image": "registry.invalid/app:1"}], "nodeName": node},
                    "status": {"phase": "Pending", "qosClass": "BestEffort"},
                })
            }
        }
    });
    assert_same_table("table-pods.json", objects, IncludeObject::Metadata, 4);
}

fn containers(image: &str) -> Value {
    json!({"spec": {"containers": [{"name": "c", "image": image}]}})
}

#[test]
fn workloads_of_the_fixtures() {
    let deployments = objects_of("table-deployments.json", |name, _| match name {
        "web" => json!({
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "webd"}},
                "template": containers("registry.invalid/app:1")},
            "status": {"observedGeneration": 1},
        }),
        _ => json!({
            "spec": {"replicas": 3, "selector": {"matchLabels": {"k8s-app": "kube-dns"}},
                "template": containers("registry.invalid/dns:1")},
            "status": {"replicas": 3, "updatedReplicas": 3, "unavailableReplicas": 3},
        }),
    });
    assert_same_table(
        "table-deployments.json",
        deployments,
        IncludeObject::Metadata,
        4,
    );

    let replica_sets = objects_of("table-replicasets.json", |name, _| match name {
        "web-6bbdf48bf9" => json!({
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "webd", "pod-template-hash": "6bbdf48bf9"}},
                "template": containers("registry.invalid/app:1")},
            "status": {"replicas": 0},
        }),
        _ => json!({
            "spec": {"replicas": 3, "selector": {"matchLabels": {"k8s-app": "kube-dns", "pod-template-hash": "78d48f54f"}},
                "template": containers("registry.invalid/dns:1")},
            "status": {"replicas": 3, "fullyLabeledReplicas": 3},
        }),
    });
    assert_same_table(
        "table-replicasets.json",
        replica_sets,
        IncludeObject::Metadata,
        4,
    );

    let stateful_sets = objects_of("table-statefulsets.json", |_, _| {
        json!({
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "db"}}, "serviceName": "db",
                "template": containers("registry.invalid/db:1")},
            "status": {"replicas": 1, "currentReplicas": 1, "availableReplicas": 0},
        })
    });
    assert_same_table(
        "table-statefulsets.json",
        stateful_sets,
        IncludeObject::Metadata,
        2,
    );

    let daemon_sets = objects_of("table-daemonsets.json", |_, _| {
        json!({
            "spec": {"selector": {"matchLabels": {"app": "agent"}}, "template": containers("registry.invalid/agent:1")},
            "status": {"currentNumberScheduled": 0, "desiredNumberScheduled": 0, "numberMisscheduled": 0, "numberReady": 0},
        })
    });
    assert_same_table(
        "table-daemonsets.json",
        daemon_sets,
        IncludeObject::Metadata,
        7,
    );

    let jobs = objects_of("table-jobs.json", |_, metadata| {
        let uid = "ec513859-4f4f-43b6-a1eb-e1d6b636e13a";
        json!({
            "spec": {"completions": 1, "parallelism": 1, "backoffLimit": 6,
                "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}},
                "template": containers("registry.invalid/job:1")},
            "status": {"startTime": metadata["creationTimestamp"], "active": 1, "ready": 0, "terminating": 0},
        })
    });
    assert_same_table("table-jobs.json", jobs, IncludeObject::Metadata, 4);

    let cron_jobs = objects_of("table-cronjobs.json", |_, _| {
        json!({
            "spec": {"schedule": "0 3 * * *", "suspend": false, "concurrencyPolicy": "Allow",
                "jobTemplate": {"spec": {"template": containers("registry.invalid/job:1")}}},
            "status": {},
        })
    });
    assert_same_table("table-cronjobs.json", cron_jobs, IncludeObject::Metadata, 6);
}

#[test]
fn cluster_objects_of_the_fixtures() {
    let namespaces = objects_of(
        "table-namespaces.json",
        |_, _| json!({"spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}),
    );
    assert_same_table(
        "table-namespaces.json",
        namespaces,
        IncludeObject::Metadata,
        2,
    );

    // Nodes made by hand, with no kubelet to fill their status.
    let nodes = objects_of("table-nodes.json", |_, _| {
        json!({"spec": {}, "status": {
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},
            "nodeInfo": {"machineID": "", "systemUUID": "", "bootID": "", "kernelVersion": "", "osImage": "",
                "containerRuntimeVersion": "", "kubeletVersion": "", "kubeProxyVersion": "",
                "operatingSystem": "", "architecture": ""},
        }})
    });
    assert_same_table("table-nodes.json", nodes, IncludeObject::Metadata, 3);

    let config_maps = objects_of("table-configmaps.json", |name, _| match name {
        "cfg" => json!({"data": {"a": "1"}, "binaryData": {"b": "Ag=="}}),
        "kube-root-ca.crt" => json!({"data": {"ca.crt": "-----BEGIN CERTIFICATE-----"}}),
        _ => json!({"data": {"key": "value"}}),
    });
    assert_same_table(
        "table-configmaps.json",
        config_maps,
        IncludeObject::Metadata,
        2,
    );

    let secrets = objects_of(
        "table-secrets.json",
        |_, _| json!({"type": "Opaque", "data": {"k": "dg=="}}),
    );
    assert_same_table("table-secrets.json", secrets, IncludeObject::Metadata, 3);

    let events = objects_of("table-events.json", |name, metadata| {
        let created = &metadata["creationTimestamp"];
        let replica_set = |pod: &str| {
            (
                "ReplicaSet",
                "coredns-78d48f54f",
                "SuccessfulCreate",
                "Normal",
                format!("Created pod: coredns-78d48f54f-{pod}"),
                "replicaset-controller",
            )
        };
        let (kind, object, reason, kind_of_event, message, component) = match name {
            "data.18eb846f65c5afbd" => (
                "PersistentVolumeClaim",
                "data",
                "ProvisioningFailed",
                "Warning",
                "storageclass.storage.k8s.io \"manual\" not found".to_string(),
                "persistentvolume-controller",
            ),
            "db.18eb846f64a73232" => (
                "StatefulSet",
                "db",
                "SuccessfulCreate",
                "Normal",
                "create Pod db-0 in StatefulSet db successful".to_string(),
                "statefulset-controller",
            ),
            "once.18eb846f637b314b" => (
                "Job",
                "once",
                "SuccessfulCreate",
                "Normal",
                "Created pod: once-xwrdt".to_string(),
                "job-controller",
            ),
            "openshift-kube-apiserver.18eb846c9cd96ad3" => {
                // Reported through the newer API: no source, no count, the
                // reporter instead.
                return json!({
                    "involvedObject": {"kind": "Namespace", "name": "openshift-kube-apiserver"},
                    "reason": "KubeAPIReadyz", "message": "readyz=true", "type": "Warning",
                    "source": {}, "firstTimestamp": created, "lastTimestamp": created,
                    "eventTime": null, "reportingComponent": "apiserver", "reportingInstance": "vm",
                });
            }
            "coredns-78d48f54f.18eb846e10b02014" => replica_set("4ph47"),
            "coredns-78d48f54f.18eb846e1125a157" => replica_set("zn2sr"),
            "coredns-78d48f54f.18eb846e11262953" => replica_set("98wrd"),
            "coredns.18eb846e0f99a5fa" => (
                "Deployment",
                "coredns",
                "ScalingReplicaSet",
                "Normal",
                "Scaled up replica set coredns-78d48f54f from 0 to 3".to_string(),
                "deployment-controller",
            ),
            other => panic!("{other}: an event this test does not know"),
        };
        json!({
            "involvedObject": {"kind": kind, "name": object},
            "reason": reason, "message": message, "type": kind_of_event,
            "source": {"component": component},
            "firstTimestamp": created, "lastTimestamp": created, "count": 1,
            "eventTime": null, "reportingComponent": component, "reportingInstance": "",
        })
    });
    assert_same_table("table-events.json", events, IncludeObject::Metadata, 0);
}

#[test]
fn network_and_storage_objects_of_the_fixtures() {
    let services = objects_of("table-services.json", |name, _| match name {
        "kubernetes" => {
            json!({"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"],
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}]}})
        }
        _ => {
            json!({"spec": {"type": "ClusterIP", "clusterIP": "10.96.213.122", "clusterIPs": ["10.96.213.122"],
            "selector": {"app": "web"}, "ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}]}})
        }
    });
    assert_same_table("table-services.json", services, IncludeObject::Metadata, 5);

    let ingresses = objects_of("table-ingresses.json", |_, _| {
        json!({"spec": {"rules": [{"host": "web.example.com", "http": {"paths": [{"path": "/", "pathType": "Prefix",
            "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}, "status": {"loadBalancer": {}}})
    });
    assert_same_table(
        "table-ingresses.json",
        ingresses,
        IncludeObject::Metadata,
        5,
    );

    let slices = objects_of(
        "table-endpointslices.json",
        |_, _| json!({"addressType": "IPv4", "endpoints": null, "ports": null}),
    );
    assert_same_table(
        "table-endpointslices.json",
        slices,
        IncludeObject::Metadata,
        4,
    );

    let volumes = objects_of("table-persistentvolumes.json", |_, _| {
        json!({"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
            "hostPath": {"path": "/tmp/pv1", "type": ""}, "persistentVolumeReclaimPolicy": "Retain",
            "storageClassName": "manual", "volumeMode": "Filesystem"},
            "status": {"phase": "Available", "lastPhaseTransitionTime": "2026-11-26T06:28:09Z"}})
    });
    assert_same_table(
        "table-persistentvolumes.json",
        volumes,
        IncludeObject::Metadata,
        9,
    );

    let claims = objects_of("table-persistentvolumeclaims.json", |_, _| {
        json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}},
            "storageClassName": "manual", "volumeMode": "Filesystem"}, "status": {"phase": "Pending"}})
    });
    assert_same_table(
        "table-persistentvolumeclaims.json",
        claims,
        IncludeObject::Metadata,
        7,
    );
}

#[test]
fn custom_resources_of_the_fixtures() {
    let widgets = objects_of(
        "table-widgets.json",
        |_, _| json!({"spec": {"color": "blue", "size": 3}}),
    );
    assert_same_table("table-widgets.json", widgets, IncludeObject::Metadata, 3);

    let gateways = objects_of(
        "table-gateways.json",
        |_, _| json!({"spec": {"selector": {"istio": "ingressgateway"}, "servers": []}}),
    );
    assert_same_table("table-gateways.json", gateways, IncludeObject::Metadata, 1);
}

fn pod_printer() -> Printer {
    Printer::for_kind(&Gvk::new("", "v1", "Pod"), None).unwrap()
}

fn parse(bytes: &[u8]) -> Value {
    serde_json::from_slice(bytes)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(bytes)))
}

#[test]
fn one_object_is_a_one_row_table_of_its_resource_version() {
    let pod = fixture("pod-get.json");
    let stored = stored(&Gvk::new("", "v1", "Pod"), pod.clone());
    let now = age::parse_time("2026-11-26T06:28:14Z").unwrap().to_system();
    let table = parse(&pod_printer().one(&stored, IncludeObject::Metadata, now));
    assert_eq!(table["kind"], "Table");
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(
        table["metadata"],
        json!({"resourceVersion": pod["metadata"]["resourceVersion"]})
    );
    assert_eq!(table["columnDefinitions"].as_array().unwrap().len(), 9);
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0]["cells"][0], pod["metadata"]["name"]);
    assert_eq!(
        rows[0]["object"],
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": pod["metadata"]})
    );
}

#[test]
fn list_metadata_carries_the_page() {
    let page = fixture("pods-list-limit1.json");
    let meta = ListMeta {
        resource_version: "321",
        continue_token: page["metadata"]["continue"].as_str(),
        remaining_item_count: page["metadata"]["remainingItemCount"].as_i64(),
    };
    let table =
        parse(&pod_printer().list(&[], IncludeObject::Metadata, &meta, SystemTime::UNIX_EPOCH));
    assert_eq!(table["metadata"], page["metadata"]);
    assert_eq!(table["rows"], json!([]));

    let bare = parse(&pod_printer().list(
        &[],
        IncludeObject::Metadata,
        &ListMeta::default(),
        SystemTime::UNIX_EPOCH,
    ));
    assert_eq!(bare["metadata"], json!({}));
}

#[test]
fn rows_carry_what_include_object_asks_for() {
    let gvk = Gvk::new("", "v1", "Pod");
    let pods: Vec<_> = fixture("pods-list.json")["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| stored(&gvk, p.clone()))
        .collect();
    let list = |include| {
        parse(&pod_printer().list(&pods, include, &ListMeta::default(), SystemTime::UNIX_EPOCH))
    };

    let none = list(IncludeObject::None);
    for row in none["rows"].as_array().unwrap() {
        assert_eq!(
            row.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["cells", "object"]
        );
        assert_eq!(row["object"], Value::Null);
    }
    let metadata = list(IncludeObject::Metadata);
    let object = list(IncludeObject::Object);
    for (i, pod) in pods.iter().enumerate() {
        let pod = pod.to_value();
        assert_eq!(
            metadata["rows"][i]["object"]["kind"],
            "PartialObjectMetadata"
        );
        assert_eq!(metadata["rows"][i]["object"]["metadata"], pod["metadata"]);
        assert_eq!(object["rows"][i]["object"], pod);
        assert_eq!(none["rows"][i]["cells"], object["rows"][i]["cells"]);
    }
}

#[test]
fn finished_pods_carry_a_completed_row_condition() {
    let gvk = Gvk::new("", "v1", "Pod");
    let pod = |name: &str, phase: &str| {
        stored(
            &gvk,
            json!({"metadata": {"name": name, "namespace": "default"}, "status": {"phase": phase}}),
        )
    };
    let pods = [
        pod("done", "Succeeded"),
        pod("failed", "Failed"),
        pod("running", "Running"),
    ];
    let table = parse(&pod_printer().list(
        &pods,
        IncludeObject::None,
        &ListMeta::default(),
        SystemTime::UNIX_EPOCH,
    ));
    let condition = |reason: &str, message: &str| json!([{"type": "Completed", "status": "True", "reason": reason, "message": message}]);
    assert_eq!(
        table["rows"][0]["conditions"],
        condition("Succeeded", "The pod has completed successfully.")
    );
    assert_eq!(
        table["rows"][1]["conditions"],
        condition("Failed", "The pod failed.")
    );
    assert!(table["rows"][2].get("conditions").is_none());

    // Other kinds' rows never have conditions, whatever their status says.
    let job = Gvk::new("batch", "v1", "Job");
    let jobs = [stored(
        &job,
        json!({"metadata": {"name": "j"}, "status": {"phase": "Succeeded"}}),
    )];
    let printer = Printer::for_kind(&job, None).unwrap();
    let table = parse(&printer.list(
        &jobs,
        IncludeObject::None,
        &ListMeta::default(),
        SystemTime::UNIX_EPOCH,
    ));
    assert!(table["rows"][0].get("conditions").is_none());
}

#[test]
fn a_watch_sends_the_columns_with_its_first_table_only() {
    let events = watch_events("watch-list.jsonl");
    let types: Vec<&str> = events.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(types, ["ADDED", "ADDED", "ADDED", "ADDED", "BOOKMARK"]);
    let printer = pod_printer();
    let mut tables = printer.watch(IncludeObject::Metadata);
    let now = age::parse_time("2026-11-26T06:28:14Z").unwrap().to_system();
    for (i, (kind, object)) in events.iter().enumerate() {
        let table = parse(&tables.object(object, now));
        assert_eq!(table["kind"], "Table", "event {i}");
        if i == 0 {
            assert_eq!(table["columnDefinitions"].as_array().unwrap().len(), 9);
        } else {
            assert_eq!(table["columnDefinitions"], Value::Null, "event {i}");
        }
        assert_eq!(
            table["metadata"],
            json!({"resourceVersion": object["metadata"]["resourceVersion"]})
        );
        let rows = table["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 1, "event {i}");
        assert_eq!(
            rows[0]["object"]["metadata"], object["metadata"],
            "event {i}"
        );
        if kind == "BOOKMARK" {
            // An object empty but for its resourceVersion prints as one.
            assert_eq!(
                rows[0]["cells"],
                json!([
                    "",
                    "0/0",
                    "",
                    "0",
                    "<unknown>",
                    "<none>",
                    "<none>",
                    "<none>",
                    "<none>"
                ])
            );
            assert_eq!(table["metadata"]["resourceVersion"], "321");
        } else {
            assert_eq!(rows[0]["cells"][0], object["metadata"]["name"]);
            assert_eq!(rows[0]["cells"][2], "Pending");
        }
    }

    // A DELETED event shows the object's last state, like any other.
    let (_, modified) = &watch_events("watch-from-rv.jsonl")[0];
    let deleted = parse(&tables.object(modified, now));
    assert_eq!(deleted["rows"][0]["cells"][0], "web-2");
    assert_eq!(deleted["rows"][0]["cells"][4], "10s");
}

#[test]
fn a_watch_passes_status_objects_as_they_are() {
    let status = json!({
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "too old resource version: 1 (321)", "reason": "Expired", "code": 410,
    });
    let printer = pod_printer();
    let mut tables = printer.watch(IncludeObject::Object);
    assert_eq!(
        parse(&tables.object(&status, SystemTime::UNIX_EPOCH)),
        status
    );
    // The Status used up the column definitions, as in the API server.
    let (_, pod) = &watch_events("watch-rv1.jsonl")[0];
    let table = parse(&tables.object(pod, SystemTime::UNIX_EPOCH));
    assert_eq!(table["columnDefinitions"], Value::Null);
    assert_eq!(table["rows"][0]["object"], *pod);
}

#[test]
fn kinds_without_a_printer_get_name_and_age_or_the_api_servers_created_at() {
    let now = age::parse_time("2026-11-26T06:00:30Z").unwrap().to_system();
    let table = |gvk: &Gvk, object: Value| {
        let printer = Printer::for_kind(gvk, None).unwrap();
        parse(&printer.list(
            &[stored(gvk, object)],
            IncludeObject::None,
            &ListMeta::default(),
            now,
        ))
    };
    let created = json!({"metadata": {"name": "r", "creationTimestamp": "2026-11-26T06:00:00Z"}});
    // A kind of no group the API server serves: Name and Age.
    let unknown = table(&Gvk::new("example.com", "v1", "Unknown"), created.clone());
    assert_eq!(
        definitions(&unknown),
        [
            json!({"name": "Name", "type": "string", "format": "name", "priority": 0}),
            json!({"name": "Age", "type": "date", "format": "", "priority": 0}),
        ]
    );
    assert_eq!(unknown["rows"][0]["cells"], json!(["r", "30s"]));
    // One of the API server's own without a printer: the timestamp, in
    // UTC, as its default convertor writes it; Go's zero time unset.
    for gvk in [
        Gvk::new("rbac.authorization.k8s.io", "v1", "Role"),
        Gvk::new("", "v1", "LimitRange"),
    ] {
        let role = table(&gvk, created.clone());
        assert_eq!(
            definitions(&role),
            [
                json!({"name": "Name", "type": "string", "format": "name", "priority": 0}),
                json!({"name": "Created At", "type": "date", "format": "", "priority": 0}),
            ]
        );
        assert_eq!(
            role["rows"][0]["cells"],
            json!(["r", "2026-11-26T06:00:00Z"])
        );
        let offset = table(
            &gvk,
            json!({"metadata": {"name": "r", "creationTimestamp": "2026-11-26T07:00:00.5+01:00"}}),
        );
        assert_eq!(offset["rows"][0]["cells"][1], "2026-11-26T06:00:00Z");
        let unset = table(&gvk, json!({"metadata": {"name": "r"}}));
        assert_eq!(unset["rows"][0]["cells"][1], "0001-01-01T00:00:00Z");
    }
}

#[test]
fn events_of_both_apis_print_alike() {
    let core = Printer::for_kind(&Gvk::new("", "v1", "Event"), None).unwrap();
    let events = Printer::for_kind(&Gvk::new("events.k8s.io", "v1", "Event"), None).unwrap();
    let now = age::parse_time("2026-11-26T06:30:00Z").unwrap().to_system();
    let core_event = json!({
        "metadata": {"name": "e1", "namespace": "default", "creationTimestamp": "2026-11-26T06:20:00Z"},
        "involvedObject": {"kind": "Pod", "name": "web-1", "fieldPath": "spec.containers{c}"},
        "reason": "Pulled", "message": "Pulled the image", "type": "Normal",
        "source": {"component": "kubelet", "host": "node1"},
        "firstTimestamp": "2026-11-26T06:20:00Z", "lastTimestamp": "2026-11-26T06:25:00Z", "count": 2,
    });
    let events_event = json!({
        "metadata": core_event["metadata"],
        "regarding": core_event["involvedObject"],
        "reason": "Pulled", "note": "Pulled the image", "type": "Normal",
        "deprecatedSource": core_event["source"],
        "deprecatedFirstTimestamp": "2026-11-26T06:20:00Z", "deprecatedLastTimestamp": "2026-11-26T06:25:00Z",
        "deprecatedCount": 2,
    });
    let table = |printer: &Printer, gvk: Gvk, event: Value| {
        parse(&printer.list(
            &[stored(&gvk, event)],
            IncludeObject::None,
            &ListMeta::default(),
            now,
        ))
    };
    let a = table(&core, Gvk::new("", "v1", "Event"), core_event);
    let b = table(
        &events,
        Gvk::new("events.k8s.io", "v1", "Event"),
        events_event,
    );
    assert_eq!(definitions(&a), definitions(&b));
    assert_eq!(
        a["rows"][0]["cells"],
        json!([
            "5m",
            "Normal",
            "Pulled",
            "pod/web-1",
            "spec.containers{c}",
            "kubelet, node1",
            "Pulled the image",
            "10m",
            2,
            "e1"
        ])
    );
    assert_eq!(a["rows"], b["rows"]);
}

#[test]
fn a_crd_with_a_bad_column_prints_the_columns_before_it() {
    let mut crd = widget_crd();
    crd["spec"]["versions"][0]["additionalPrinterColumns"][1]["jsonPath"] = json!(".spec..color");
    let gvk = Gvk::new("example.com", "v1", "Widget");
    let err = Printer::for_kind(&gvk, Some(&crd)).unwrap_err();
    assert!(
        err.to_string().contains("printer column \"Color\""),
        "{err}"
    );
    let printer = (*err).printer();
    let widget = stored(
        &gvk,
        json!({"metadata": {"name": "w1", "namespace": "default"}, "spec": {"size": 3}}),
    );
    let table = parse(&printer.list(
        &[widget],
        IncludeObject::None,
        &ListMeta::default(),
        SystemTime::UNIX_EPOCH,
    ));
    assert_eq!(
        definitions(&table),
        [
            json!({"name": "Name", "type": "string", "format": "name", "priority": 0}),
            json!({"name": "Size", "type": "integer", "format": "", "priority": 0}),
        ]
    );
    assert_eq!(table["rows"][0]["cells"], json!(["w1", 3]));
}

#[test]
fn tables_of_v1beta1_say_so_in_every_part() {
    let pod = fixture("pod-get.json");
    let stored = stored(&Gvk::new("", "v1", "Pod"), pod.clone());
    let printer = pod_printer().in_version("v1beta1");
    let table = parse(&printer.one(&stored, IncludeObject::Metadata, SystemTime::UNIX_EPOCH));
    assert_eq!(table["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(
        table["rows"][0]["object"]["apiVersion"],
        "meta.k8s.io/v1beta1"
    );
    assert_eq!(table["rows"][0]["object"]["metadata"], pod["metadata"]);
    let mut tables = printer.watch(IncludeObject::Metadata);
    let event = parse(&tables.object(&pod, SystemTime::UNIX_EPOCH));
    assert_eq!(event["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(
        event["rows"][0]["object"]["apiVersion"],
        "meta.k8s.io/v1beta1"
    );
}

#[test]
fn the_bookmark_ending_initial_events_keeps_its_metadata() {
    let (kind, bookmark) = watch_events("watch-list.jsonl").pop().unwrap();
    assert_eq!(kind, "BOOKMARK");
    let mut tables = pod_printer().watch(IncludeObject::None);
    let table = parse(&tables.object(&bookmark, SystemTime::UNIX_EPOCH));
    let object = &table["rows"][0]["object"];
    assert_eq!(object["kind"], "PartialObjectMetadata");
    assert_eq!(
        object["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    // Other events follow includeObject.
    let (_, pod) = &watch_events("watch-rv1.jsonl")[0];
    let table = parse(&tables.object(pod, SystemTime::UNIX_EPOCH));
    assert_eq!(table["rows"][0]["object"], Value::Null);
}
