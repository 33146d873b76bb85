//! Relationship analysis over a synthetic cluster (10,000 Pods, 2,000
//! ReplicaSets, 1,000 Deployments and Services, and what they name): the
//! full graph build, the cost of one change, the index's memory per edge
//! and depth-3 queries, with the four shipped analyzers as WebAssembly
//! components in the real engine (`Relations`) against the same analyzer
//! crates called natively into the same `Graph`, in one run; then the
//! release `grw` daemon replaying the same cluster, with and without the
//! analyzers.
//!
//! Run: `cargo bench -p grw --bench relations` (builds the analyzers in
//! release for wasm32-wasip2 first). `-- --quick` uses a cluster a tenth
//! the size; naming parts (`-- build change memory query daemon`) runs
//! only those. `GRW_BIN` names another `grw` binary for the daemon part.

mod common;
#[path = "common/counting.rs"]
mod counting;

use std::collections::{BTreeSet, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicIsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use grw::config::AllowedHosts;
use grw::config::WatchOptions;
use grw::gvk::{Gvk, ResourceInfo};
use grw::kube::{Catalog, Discovery};
use grw::metrics::Metrics;
use grw::plugin::{ArtifactCache, BUILT_IN, CacheReader, Limits, Plugin, Plugins};
use grw::query::{LabelSelector, PageRequest, Query};
use grw::relations::graph::Found;
use grw::relations::{Direction, Graph, KindKey, Lookup, NodeKey, Relations};
use grw::store::{Change, ChangeType, ObjectKey, Origin, StoredObject};
use grw::watch::{WatchSettings, Watches};
use serde_json::{Value, json};

use common::{Args, cpu_model, grouped};
use counting::{COUNTING, counted};

/// The four shipped analyzers: file name, package.
const ANALYZERS: [(&str, &str); 4] = [
    ("istio-gateways", "grw-plugin-istio-gateways"),
    ("ownership", "grw-plugin-ownership"),
    ("references", "grw-plugin-references"),
    ("services", "grw-plugin-services"),
];

fn main() {
    let args = Args::from_env();
    let wasm_dir = build_analyzers();
    println!(
        "machine: {}, {} logical CPUs",
        cpu_model(),
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    println!(
        "date: {}",
        grw::time::rfc3339(
            SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
        )
    );
    let sizes = if args.quick {
        Sizes::QUICK
    } else {
        Sizes::FULL
    };
    let cluster = Cluster::generate(&sizes);
    cluster.print();
    // One runtime thread for the feeds: the engine's own worker is a thread
    // of its own, and the machine has two cores.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let _entered = runtime.enter();

    let mut edges = None;
    if ["build", "change", "memory", "query"]
        .iter()
        .any(|p| args.wants(p))
    {
        let mut run = InProcess::build(&cluster, &wasm_dir, args.wants("memory"));
        edges = Some(run.edges);
        if args.wants("build") {
            run.print_build();
        }
        if args.wants("memory") {
            run.print_memory();
        }
        if args.wants("change") {
            run.changes(&cluster, if args.quick { 200 } else { 1000 });
        }
        if args.wants("query") {
            run.queries(&cluster, if args.quick { 3 } else { 5 });
        }
    }
    if args.wants("daemon") {
        let edges = edges.unwrap_or_else(|| {
            let kinds = Arc::new(Kinds(cluster.resources()));
            let mut native = Driver::new(fill(&cluster), kinds, native_backends(), true);
            native.build();
            native.graph.edges().count()
        });
        daemon(&cluster, &wasm_dir, edges, &runtime);
    }
}

// ---------------------------------------------------------------------------
// The synthetic cluster.

/// How big the cluster is.
struct Sizes {
    namespaces: usize,
    deployments_per_namespace: usize,
    nodes: usize,
}

impl Sizes {
    /// 1,000 Deployments (2 ReplicaSets of 5 Pods each, one Service each),
    /// 250 Pods per Node (the Nodes' `pods` capacity).
    const FULL: Sizes = Sizes {
        namespaces: 20,
        deployments_per_namespace: 50,
        nodes: 40,
    };
    const QUICK: Sizes = Sizes {
        namespaces: 10,
        deployments_per_namespace: 10,
        nodes: 4,
    };
}

const REPLICA_SETS_PER_DEPLOYMENT: usize = 2;
const PODS_PER_REPLICA_SET: usize = 5;
/// One Deployment in this many has a PersistentVolumeClaim its Pods mount.
const CLAIM_EVERY: usize = 10;
/// VirtualServices per namespace, each attached to the namespace's Gateway.
const VIRTUAL_SERVICES_PER_NAMESPACE: usize = 5;
const SERVICE_ACCOUNTS_PER_NAMESPACE: usize = 4;

/// A deterministic generator: names, uids and resourceVersions.
struct Gen {
    state: u64,
    uids: u64,
    resource_version: u64,
}

impl Gen {
    fn next(&mut self) -> u64 {
        // Knuth's MMIX LCG; the high bits are the random ones.
        self.state = self
            .state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.state >> 33
    }

    /// A suffix as Kubernetes makes them (`7d9f8c6b5`, `x2k4p`).
    fn suffix(&mut self, len: usize) -> String {
        const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
        (0..len)
            .map(|_| ALPHABET[(self.next() % ALPHABET.len() as u64) as usize] as char)
            .collect()
    }

    fn hex(&mut self, len: usize) -> String {
        (0..len)
            .map(|_| char::from_digit((self.next() % 16) as u32, 16).unwrap())
            .collect()
    }

    fn uid(&mut self) -> String {
        self.uids += 1;
        format!(
            "{}-{}-4{}-8{}-{:012x}",
            self.hex(8),
            self.hex(4),
            self.hex(3),
            self.hex(3),
            self.uids
        )
    }

    fn resource_version(&mut self) -> String {
        self.resource_version += 1;
        self.resource_version.to_string()
    }
}

const APPS: [&str; 10] = [
    "checkout", "cart", "catalog", "search", "payments", "orders", "users", "reviews", "shipping",
    "gateway",
];
const TIERS: [&str; 3] = ["frontend", "backend", "worker"];
const CREATED: &str = "2026-11-20T08:00:00Z";
const POD_CONDITIONS: [&str; 5] = [
    "PodReadyToStartContainers",
    "Initialized",
    "Ready",
    "ContainersReady",
    "PodScheduled",
];

/// Every object of the cluster, by kind, in the order a recording lists
/// them, and what the changes and queries pick from.
struct Cluster {
    kinds: Vec<(ResourceInfo, Vec<Value>)>,
    /// Namespace and name of each Deployment.
    deployments: Vec<(String, String)>,
    /// The Deployments of each namespace, by index into `deployments`.
    by_namespace: Vec<Vec<usize>>,
}

fn resource(group: &str, kind: &str, plural: &str, namespaced: bool) -> ResourceInfo {
    ResourceInfo {
        gvk: Gvk::new(group, "v1", kind),
        plural: plural.into(),
        namespaced,
    }
}

fn metadata(ids: &mut Gen, namespace: Option<&str>, name: &str) -> Value {
    let mut metadata = json!({
        "name": name,
        "uid": ids.uid(),
        "resourceVersion": ids.resource_version(),
        "creationTimestamp": CREATED,
    });
    if let Some(namespace) = namespace {
        metadata["namespace"] = namespace.into();
    }
    metadata
}

fn owner(api_version: &str, kind: &str, of: &Value) -> Value {
    json!([{
        "apiVersion": api_version, "kind": kind,
        "name": of["metadata"]["name"], "uid": of["metadata"]["uid"],
        "controller": true, "blockOwnerDeletion": true,
    }])
}

/// What a Deployment's Pods run: the container spec and volumes.
struct PodShape<'a> {
    app: &'a str,
    image: String,
    config: String,
    secret: String,
    claim: Option<String>,
    account: String,
    tier: &'a str,
}

impl PodShape<'_> {
    fn spec(&self, volume_suffix: &str) -> Value {
        let access = format!("kube-api-access-{volume_suffix}");
        let mut mounts = vec![
            json!({"name": "config", "mountPath": "/etc/app"}),
            json!({"name": access, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}),
        ];
        let mut volumes = vec![
            json!({"name": "config", "configMap": {"name": self.config, "defaultMode": 420}}),
            json!({"name": access, "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]}},
            ]}}),
        ];
        if let Some(claim) = &self.claim {
            mounts.push(json!({"name": "data", "mountPath": "/var/lib/app"}));
            volumes.push(json!({"name": "data", "persistentVolumeClaim": {"claimName": claim}}));
        }
        json!({
            "containers": [{
                "name": self.app, "image": self.image, "imagePullPolicy": "IfNotPresent",
                "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
                "envFrom": [{"configMapRef": {"name": self.config}}],
                "env": [
                    {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": self.secret, "key": "password"}}},
                    {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                    {"name": "TIER", "value": self.tier},
                ],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
                "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                    "periodSeconds": 10, "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
                "volumeMounts": mounts,
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
            }],
            "volumes": volumes,
            "serviceAccountName": self.account,
            "serviceAccount": self.account,
            "restartPolicy": "Always", "dnsPolicy": "ClusterFirst", "schedulerName": "default-scheduler",
            "terminationGracePeriodSeconds": 30, "securityContext": {}, "enableServiceLinks": true,
            "tolerations": [
                {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300},
                {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300},
            ],
        })
    }
}

impl Cluster {
    fn generate(sizes: &Sizes) -> Cluster {
        let mut ids = Gen {
            state: 0x5eed_6277,
            uids: 0,
            resource_version: 1000,
        };
        let mut namespaces = Vec::new();
        let mut nodes = Vec::new();
        let mut accounts = Vec::new();
        let mut config_maps = Vec::new();
        let mut secrets = Vec::new();
        let mut claims = Vec::new();
        let mut volumes = Vec::new();
        let mut deployments = Vec::new();
        let mut replica_sets = Vec::new();
        let mut pods = Vec::new();
        let mut services = Vec::new();
        let mut slices = Vec::new();
        let mut ingresses = Vec::new();
        let mut gateways = Vec::new();
        let mut virtual_services = Vec::new();
        let mut names = Vec::new();
        let mut by_namespace = Vec::new();

        for n in 0..sizes.nodes {
            let name = format!("node-{n}");
            nodes.push(json!({
                "apiVersion": "v1", "kind": "Node",
                "metadata": more(metadata(&mut ids, None, &name), json!({"labels": {"kubernetes.io/hostname": name,
                    "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                    "topology.kubernetes.io/zone": format!("zone-{}", n % 3)}})),
                "spec": {"podCIDR": format!("10.244.{n}.0/24"), "providerID": format!("cloud://{name}")},
                "status": {
                    "addresses": [{"type": "InternalIP", "address": format!("10.0.0.{}", 10 + n)}, {"type": "Hostname", "address": name}],
                    "capacity": {"cpu": "16", "memory": "65843236Ki", "pods": "250"},
                    "allocatable": {"cpu": "15800m", "memory": "63643236Ki", "pods": "250"},
                    "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady",
                        "lastHeartbeatTime": CREATED, "lastTransitionTime": CREATED}],
                    "nodeInfo": {"kubeletVersion": "v1.34.1", "containerRuntimeVersion": "containerd://2.1.4",
                        "osImage": "Debian GNU/Linux 13", "architecture": "amd64", "operatingSystem": "linux"},
                },
            }));
        }
        volumes.push(json!({
            "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": metadata(&mut ids, None, "standard"),
            "provisioner": "csi.example.com", "reclaimPolicy": "Delete", "volumeBindingMode": "WaitForFirstConsumer",
        }));
        let mut persistent_volumes = Vec::new();
        let mut pod_index = 0usize;
        for ns in 0..sizes.namespaces {
            let namespace = format!("team-{ns:02}");
            namespaces.push(json!({
                "apiVersion": "v1", "kind": "Namespace",
                "metadata": more(metadata(&mut ids, None, &namespace), json!({"labels": {"kubernetes.io/metadata.name": namespace}})),
                "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"},
            }));
            for account in std::iter::once("default".to_string())
                .chain((0..SERVICE_ACCOUNTS_PER_NAMESPACE).map(|a| format!("app-{a}")))
            {
                accounts.push(json!({"apiVersion": "v1", "kind": "ServiceAccount",
                    "metadata": metadata(&mut ids, Some(&namespace), &account)}));
            }
            config_maps.push(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": metadata(&mut ids, Some(&namespace), "kube-root-ca.crt"),
                "data": {"ca.crt": format!("-----BEGIN CERTIFICATE-----\n{}\n-----END CERTIFICATE-----\n", ids.hex(600))},
            }));
            let mut in_namespace = Vec::new();
            let mut namespace_services = Vec::new();
            for d in 0..sizes.deployments_per_namespace {
                let index = names.len();
                in_namespace.push(index);
                let app = format!("{}-{d}", APPS[d % APPS.len()]);
                let tier = TIERS[d % TIERS.len()];
                names.push((namespace.clone(), app.clone()));
                let config = format!("{app}-config");
                let secret = format!("{app}-credentials");
                config_maps.push(json!({
                    "apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": more(metadata(&mut ids, Some(&namespace), &config), json!({"labels": {"app": app}})),
                    "data": {"LOG_LEVEL": "info", "LISTEN": ":8080", "UPSTREAM": format!("http://{}-0.{namespace}.svc:80", APPS[(d + 1) % APPS.len()])},
                }));
                secrets.push(json!({
                    "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
                    "metadata": more(metadata(&mut ids, Some(&namespace), &secret), json!({"labels": {"app": app}})),
                    "data": {"password": ids.hex(24), "username": "YXBw"},
                }));
                let claim = (index.is_multiple_of(CLAIM_EVERY)).then(|| format!("{app}-data"));
                if let Some(claim) = &claim {
                    let volume = format!("pvc-{}", ids.hex(12));
                    let claim_object = json!({
                        "apiVersion": "v1", "kind": "PersistentVolumeClaim",
                        "metadata": more(metadata(&mut ids, Some(&namespace), claim), json!({"labels": {"app": app}})),
                        "spec": {"accessModes": ["ReadWriteMany"], "resources": {"requests": {"storage": "10Gi"}},
                            "storageClassName": "standard", "volumeMode": "Filesystem", "volumeName": volume},
                        "status": {"phase": "Bound", "accessModes": ["ReadWriteMany"], "capacity": {"storage": "10Gi"}},
                    });
                    persistent_volumes.push(json!({
                        "apiVersion": "v1", "kind": "PersistentVolume",
                        "metadata": metadata(&mut ids, None, &volume),
                        "spec": {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteMany"],
                            "persistentVolumeReclaimPolicy": "Delete", "storageClassName": "standard", "volumeMode": "Filesystem",
                            "claimRef": {"kind": "PersistentVolumeClaim", "namespace": namespace, "name": claim,
                                "uid": claim_object["metadata"]["uid"]},
                            "csi": {"driver": "csi.example.com", "volumeHandle": volume}},
                        "status": {"phase": "Bound"},
                    }));
                    claims.push(claim_object);
                }
                let shape = PodShape {
                    app: &app,
                    image: format!("registry.example/{}:1.{}.0", APPS[d % APPS.len()], d % 7),
                    config,
                    secret,
                    claim,
                    account: format!("app-{}", d % SERVICE_ACCOUNTS_PER_NAMESPACE),
                    tier,
                };
                let labels = json!({"app": app, "tier": tier});
                let deployment = json!({
                    "apiVersion": "apps/v1", "kind": "Deployment",
                    "metadata": more(metadata(&mut ids, Some(&namespace), &app), json!({"labels": labels,
                        "annotations": {"deployment.kubernetes.io/revision": "2"}, "generation": 2})),
                    "spec": {"replicas": REPLICA_SETS_PER_DEPLOYMENT * PODS_PER_REPLICA_SET,
                        "selector": {"matchLabels": {"app": app}},
                        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                        "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
                        "template": {"metadata": {"labels": labels}, "spec": shape.spec("template")}},
                    "status": {"observedGeneration": 2, "replicas": 10, "readyReplicas": 10, "availableReplicas": 10,
                        "updatedReplicas": 5, "conditions": [{"type": "Progressing", "status": "True", "reason": "ReplicaSetUpdated",
                            "lastUpdateTime": CREATED, "lastTransitionTime": CREATED}]},
                });
                let mut endpoints = Vec::new();
                // Mid-rollout: the old and the new ReplicaSet each run half.
                for revision in 1..=REPLICA_SETS_PER_DEPLOYMENT {
                    let hash = ids.suffix(10);
                    let rs_name = format!("{app}-{hash}");
                    let rs_labels = json!({"app": app, "tier": tier, "pod-template-hash": hash});
                    let replica_set = json!({
                        "apiVersion": "apps/v1", "kind": "ReplicaSet",
                        "metadata": more(metadata(&mut ids, Some(&namespace), &rs_name), json!({"labels": rs_labels,
                            "annotations": {"deployment.kubernetes.io/revision": revision.to_string()},
                            "ownerReferences": owner("apps/v1", "Deployment", &deployment)})),
                        "spec": {"replicas": PODS_PER_REPLICA_SET,
                            "selector": {"matchLabels": {"app": app, "pod-template-hash": hash}},
                            "template": {"metadata": {"labels": rs_labels}, "spec": shape.spec("template")}},
                        "status": {"replicas": PODS_PER_REPLICA_SET, "readyReplicas": PODS_PER_REPLICA_SET,
                            "availableReplicas": PODS_PER_REPLICA_SET, "fullyLabeledReplicas": PODS_PER_REPLICA_SET, "observedGeneration": 1},
                    });
                    for _ in 0..PODS_PER_REPLICA_SET {
                        let name = format!("{rs_name}-{}", ids.suffix(5));
                        let node = (pod_index * 7 + ns) % sizes.nodes;
                        let ip = format!("10.244.{node}.{}", 2 + pod_index % 250);
                        let image = shape.image.clone();
                        let started = format!(
                            "2026-11-20T08:{:02}:{:02}Z",
                            pod_index / 60 % 60,
                            pod_index % 60
                        );
                        let conditions: Vec<Value> = POD_CONDITIONS
                            .iter()
                            .map(|t| json!({"type": t, "status": "True", "lastProbeTime": null, "lastTransitionTime": started}))
                            .collect();
                        let pod = json!({
                            "apiVersion": "v1", "kind": "Pod",
                            "metadata": more(metadata(&mut ids, Some(&namespace), &name), json!({
                                "labels": {"app": app, "tier": tier, "pod-template-hash": hash, "version": format!("r{revision}")},
                                "generateName": format!("{rs_name}-"),
                                "annotations": {"kubectl.kubernetes.io/restartedAt": CREATED},
                                "ownerReferences": owner("apps/v1", "ReplicaSet", &replica_set)})),
                            "spec": more(shape.spec(&ids.suffix(5)), json!({"nodeName": format!("node-{node}")})),
                            "status": {"phase": "Running", "qosClass": "Burstable", "hostIP": format!("10.0.0.{}", 10 + node),
                                "podIP": ip, "podIPs": [{"ip": ip}], "startTime": started,
                                "conditions": conditions,
                                "containerStatuses": [{"name": app, "ready": true, "started": true, "restartCount": 0,
                                    "image": image, "imageID": format!("{image}@sha256:{}", ids.hex(64)),
                                    "containerID": format!("containerd://{}", ids.hex(64)),
                                    "state": {"running": {"startedAt": started}}, "lastState": {}}]},
                        });
                        endpoints.push(json!({
                            "addresses": [ip], "conditions": {"ready": true, "serving": true, "terminating": false},
                            "nodeName": format!("node-{node}"),
                            "targetRef": {"kind": "Pod", "namespace": namespace, "name": name, "uid": pod["metadata"]["uid"]},
                        }));
                        pods.push(pod);
                        pod_index += 1;
                    }
                    replica_sets.push(replica_set);
                }
                deployments.push(deployment);
                let service = json!({
                    "apiVersion": "v1", "kind": "Service",
                    "metadata": more(metadata(&mut ids, Some(&namespace), &app), json!({"labels": {"app": app}})),
                    "spec": {"selector": {"app": app}, "type": "ClusterIP", "sessionAffinity": "None",
                        "clusterIP": format!("10.96.{}.{}", index / 250, index % 250 + 1),
                        "ports": [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 8080}],
                        "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster"},
                    "status": {"loadBalancer": {}},
                });
                let slice = format!("{app}-{}", ids.suffix(5));
                slices.push(json!({
                    "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                    "metadata": more(metadata(&mut ids, Some(&namespace), &slice), json!({
                        "labels": {"kubernetes.io/service-name": app,
                            "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"},
                        "ownerReferences": owner("v1", "Service", &service)})),
                    "addressType": "IPv4", "endpoints": endpoints,
                    "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}],
                }));
                namespace_services.push(app);
                services.push(service);
            }
            by_namespace.push(in_namespace);
            let rules: Vec<Value> = namespace_services
                .iter()
                .take(3)
                .map(|s| json!({
                    "host": format!("{s}.{namespace}.example.com"),
                    "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": s, "port": {"number": 80}}}}]},
                }))
                .collect();
            ingresses.push(json!({
                "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                "metadata": metadata(&mut ids, Some(&namespace), "public"),
                "spec": {"ingressClassName": "nginx", "rules": rules},
            }));
            gateways.push(json!({
                "apiVersion": "networking.istio.io/v1", "kind": "Gateway",
                "metadata": metadata(&mut ids, Some(&namespace), "public"),
                "spec": {"selector": {"istio": "ingressgateway"}, "servers": [{
                    "port": {"number": 443, "name": "https", "protocol": "HTTPS"},
                    "hosts": [format!("*.{namespace}.example.com")],
                    "tls": {"mode": "SIMPLE", "credentialName": "public-tls"}}]},
            }));
            for s in namespace_services
                .iter()
                .take(VIRTUAL_SERVICES_PER_NAMESPACE)
            {
                virtual_services.push(json!({
                    "apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
                    "metadata": metadata(&mut ids, Some(&namespace), s),
                    "spec": {"hosts": [format!("{s}.{namespace}.example.com")], "gateways": ["public", "mesh"],
                        "http": [{"route": [{"destination": {"host": s, "port": {"number": 80}}}]}]},
                }));
            }
        }
        let kinds = vec![
            (resource("", "Namespace", "namespaces", false), namespaces),
            (resource("", "Node", "nodes", false), nodes),
            (
                resource("storage.k8s.io", "StorageClass", "storageclasses", false),
                volumes,
            ),
            (
                resource("", "PersistentVolume", "persistentvolumes", false),
                persistent_volumes,
            ),
            (
                resource("", "ServiceAccount", "serviceaccounts", true),
                accounts,
            ),
            (resource("", "ConfigMap", "configmaps", true), config_maps),
            (resource("", "Secret", "secrets", true), secrets),
            (
                resource("", "PersistentVolumeClaim", "persistentvolumeclaims", true),
                claims,
            ),
            (
                resource("apps", "Deployment", "deployments", true),
                deployments,
            ),
            (
                resource("apps", "ReplicaSet", "replicasets", true),
                replica_sets,
            ),
            (resource("", "Pod", "pods", true), pods),
            (resource("", "Service", "services", true), services),
            (
                resource("discovery.k8s.io", "EndpointSlice", "endpointslices", true),
                slices,
            ),
            (
                resource("networking.k8s.io", "Ingress", "ingresses", true),
                ingresses,
            ),
            (
                resource("networking.istio.io", "Gateway", "gateways", true),
                gateways,
            ),
            (
                resource(
                    "networking.istio.io",
                    "VirtualService",
                    "virtualservices",
                    true,
                ),
                virtual_services,
            ),
        ];
        Cluster {
            kinds,
            deployments: names,
            by_namespace,
        }
    }

    fn resources(&self) -> Vec<ResourceInfo> {
        self.kinds.iter().map(|(r, _)| r.clone()).collect()
    }

    fn objects(&self, kind: &str) -> &[Value] {
        &self
            .kinds
            .iter()
            .find(|(r, _)| r.gvk.kind == kind)
            .unwrap()
            .1
    }

    fn resource(&self, kind: &str) -> &ResourceInfo {
        &self
            .kinds
            .iter()
            .find(|(r, _)| r.gvk.kind == kind)
            .unwrap()
            .0
    }

    fn print(&self) {
        println!("\nThe cluster:\n");
        println!("| kind | objects | mean JSON bytes |");
        println!("|---|---:|---:|");
        let mut total = 0;
        for (resource, objects) in &self.kinds {
            let bytes: usize = objects.iter().map(|o| o.to_string().len()).sum();
            total += objects.len();
            println!(
                "| {} | {} | {} |",
                resource.gvk.kind,
                grouped(objects.len() as f64),
                grouped(bytes as f64 / objects.len().max(1) as f64)
            );
        }
        println!("| all | {} | |", grouped(total as f64));
    }
}

/// `base` with the members of `extra` added.
fn more(mut base: Value, extra: Value) -> Value {
    if let (Some(base), Value::Object(extra)) = (base.as_object_mut(), extra) {
        base.extend(extra);
    }
    base
}

/// Caches filled with the cluster, as a replay leaves them.
fn fill(cluster: &Cluster) -> Arc<Watches> {
    let watches = Arc::new(Watches::new(
        None,
        WatchSettings::default(),
        Arc::new(Metrics::new()),
    ));
    for (resource, objects) in &cluster.kinds {
        let watch = watches.ensure(resource, WatchOptions::default(), false);
        for object in objects {
            let object = StoredObject::from_value(object.clone(), &resource.gvk, false).unwrap();
            watch
                .cache
                .apply(ChangeType::Added, object, Origin::Watch)
                .unwrap();
        }
        watch.cache.mark_synced();
    }
    watches
}

// ---------------------------------------------------------------------------
// Driving analyzers into a `Graph` the way the engine does, natively or
// through the components, with lookups answered from GRW's caches.

/// The kinds discovery serves.
struct Kinds(Vec<ResourceInfo>);

impl Kinds {
    fn get(&self, group: &str, kind: &str) -> Option<&ResourceInfo> {
        self.0
            .iter()
            .find(|r| r.gvk.group == group && r.gvk.kind == kind)
    }
}

/// A lookup as asked, before the index shares its strings (as the engine
/// records them).
#[derive(PartialEq)]
enum RawLookup {
    Get(String, String, String, String),
    List(String, String, String, Arc<LabelSelector>),
    OwnedBy(String, String, String),
}

impl RawLookup {
    fn intern(self, graph: &mut Graph) -> Lookup {
        match self {
            RawLookup::Get(group, kind, namespace, name) => {
                Lookup::Get(graph.key(&group, &kind, &namespace, &name))
            }
            RawLookup::List(group, kind, namespace, selector) => Lookup::List {
                kind: (graph.symbol(&group), graph.symbol(&kind)),
                namespace: graph.symbol(&namespace),
                selector,
            },
            RawLookup::OwnedBy(group, kind, uid) => Lookup::OwnedBy {
                kind: (graph.symbol(&group), graph.symbol(&kind)),
                uid: uid.into(),
            },
        }
    }
}

/// Answers one analysis's lookups from the caches with `Query`, and
/// records them.
struct Lookups {
    watches: Arc<Watches>,
    kinds: Arc<Kinds>,
    asked: Mutex<Vec<RawLookup>>,
}

impl Lookups {
    fn record(&self, lookup: RawLookup) {
        let mut asked = self.asked.lock().unwrap();
        if !asked.contains(&lookup) {
            asked.push(lookup);
        }
    }

    fn scoped<'a>(resource: Option<&ResourceInfo>, namespace: &'a str) -> &'a str {
        match resource {
            Some(r) if !r.namespaced => "",
            _ => namespace,
        }
    }

    fn query(&self, resource: &ResourceInfo, query: Query) -> Vec<(Gvk, Arc<StoredObject>)> {
        let Some(watch) = self.watches.serving(&resource.gvk, None) else {
            return Vec::new();
        };
        let view = watch.cache.read();
        query
            .run(&view, &PageRequest::default())
            .items
            .into_iter()
            .map(|o| (resource.gvk.clone(), o))
            .collect()
    }

    fn get(
        &self,
        group: &str,
        kind: &str,
        namespace: &str,
        name: &str,
    ) -> Option<(Gvk, Arc<StoredObject>)> {
        let resource = self.kinds.get(group, kind);
        let namespace = Self::scoped(resource, namespace);
        self.record(RawLookup::Get(
            group.into(),
            kind.into(),
            namespace.into(),
            name.into(),
        ));
        let resource = resource?;
        let watch = self.watches.serving(&resource.gvk, None)?;
        let object = watch
            .cache
            .read()
            .get(&ObjectKey::new(namespace, name))?
            .clone();
        Some((resource.gvk.clone(), object))
    }

    fn list(
        &self,
        group: &str,
        kind: &str,
        namespace: &str,
        selector: &str,
    ) -> Result<Vec<(Gvk, Arc<StoredObject>)>, String> {
        let selector: Arc<LabelSelector> = Arc::new(selector.parse().map_err(|e| format!("{e}"))?);
        let resource = self.kinds.get(group, kind);
        let namespace = Self::scoped(resource, namespace);
        self.record(RawLookup::List(
            group.into(),
            kind.into(),
            namespace.into(),
            selector.clone(),
        ));
        let Some(resource) = resource else {
            return Ok(Vec::new());
        };
        let query = Query {
            namespace: (!namespace.is_empty()).then(|| namespace.to_string()),
            labels: (*selector).clone(),
            ..Query::default()
        };
        Ok(self.query(resource, query))
    }

    fn owned_by(&self, group: &str, kind: &str, uid: &str) -> Vec<(Gvk, Arc<StoredObject>)> {
        let resource = self.kinds.get(group, kind);
        self.record(RawLookup::OwnedBy(group.into(), kind.into(), uid.into()));
        let Some(resource) = resource else {
            return Vec::new();
        };
        let query = Query {
            owner_uid: Some(uid.to_string()),
            ..Query::default()
        };
        self.query(resource, query)
    }

    /// A found object's content was read: any change of it matters.
    fn read(&self, gvk: &Gvk, object: &StoredObject) {
        self.record(RawLookup::Get(
            gvk.group.clone(),
            gvk.kind.clone(),
            object.namespace().into(),
            object.name().into(),
        ));
    }
}

/// For the components: the host's reader interface over the same lookups.
struct HostReader(Arc<Lookups>);

impl CacheReader for HostReader {
    fn get(&self, gvk: &Gvk, namespace: &str, name: &str) -> Option<grw::plugin::Found> {
        self.0.get(&gvk.group, &gvk.kind, namespace, name)
    }

    fn list(
        &self,
        gvk: &Gvk,
        namespace: &str,
        selector: &str,
    ) -> Result<Vec<grw::plugin::Found>, String> {
        self.0.list(&gvk.group, &gvk.kind, namespace, selector)
    }

    fn owned_by(&self, gvk: &Gvk, owner_uid: &str) -> Vec<grw::plugin::Found> {
        self.0.owned_by(&gvk.group, &gvk.kind, owner_uid)
    }

    fn read(&self, gvk: &Gvk, object: &StoredObject) {
        self.0.read(gvk, object);
    }
}

/// One analyzer, called the way the engine calls it (`Plugin::analyze`):
/// built in (the crate linked in, through the SDK's native traits) or a
/// component.
struct Analyzed {
    name: Arc<str>,
    plugin: Arc<Plugin>,
    /// Calls made, and the time inside them.
    calls: u64,
    call_time: Duration,
}

impl Analyzed {
    fn of(plugin: Arc<Plugin>) -> Analyzed {
        Analyzed {
            name: plugin.name.clone(),
            plugin,
            calls: 0,
            call_time: Duration::ZERO,
        }
    }

    fn wants(&self, gvk: &Gvk) -> bool {
        self.plugin.interest.wants_kind(gvk)
    }
}

/// The four analyzers built into GRW, by name.
fn native_backends() -> Vec<Analyzed> {
    let mut analyzers: Vec<Analyzed> = BUILT_IN
        .iter()
        .map(|b| {
            Analyzed::of(Arc::new(
                Plugin::built_in(b, Arc::new(Metrics::new())).unwrap(),
            ))
        })
        .collect();
    analyzers.sort_by(|a, b| a.name.cmp(&b.name));
    analyzers
}

/// One relationship as either interface gives it.
struct Answer {
    relation: String,
    outgoing: bool,
    group: String,
    kind: String,
    namespace: String,
    name: String,
    attributes: Vec<(String, String)>,
}

/// Analyzers run over caches into a `Graph`, by the engine's rules: every
/// object of every kind an analyzer wants once; on a change, the changed
/// object, then the analyses `Graph::affected` names.
struct Driver {
    analyzers: Vec<Analyzed>,
    watches: Arc<Watches>,
    kinds: Arc<Kinds>,
    graph: Graph,
    /// Whether lookups go into the index (without: the edges alone).
    record_lookups: bool,
    analyses: u64,
}

impl Driver {
    fn new(
        watches: Arc<Watches>,
        kinds: Arc<Kinds>,
        analyzers: Vec<Analyzed>,
        record_lookups: bool,
    ) -> Driver {
        Driver {
            analyzers,
            watches,
            kinds,
            graph: Graph::default(),
            record_lookups,
            analyses: 0,
        }
    }

    fn build(&mut self) {
        for i in 0..self.analyzers.len() {
            for resource in &self.kinds.clone().0 {
                if !self.analyzers[i].wants(&resource.gvk) {
                    continue;
                }
                for object in &self.objects(&resource.gvk) {
                    self.analyze(i, &resource.gvk, object);
                }
            }
        }
    }

    /// Builds two drivers' indexes in alternation, a few hundred analyses
    /// each in turn: often enough that both meet the same machine (whose
    /// speed drifts over minutes), seldom enough that neither runs on
    /// processor caches the other just filled. Returns the time each spent.
    fn build_side_by_side(a: &mut Driver, b: &mut Driver) -> (Duration, Duration) {
        let (mut in_a, mut in_b) = (Duration::ZERO, Duration::ZERO);
        for i in 0..a.analyzers.len() {
            for resource in &a.kinds.clone().0 {
                if !a.analyzers[i].wants(&resource.gvk) {
                    continue;
                }
                let (of_a, of_b) = (a.objects(&resource.gvk), b.objects(&resource.gvk));
                for (xs, ys) in of_a.chunks(CHUNK).zip(of_b.chunks(CHUNK)) {
                    let started = Instant::now();
                    for x in xs {
                        a.analyze(i, &resource.gvk, x);
                    }
                    in_a += started.elapsed();
                    let started = Instant::now();
                    for y in ys {
                        b.analyze(i, &resource.gvk, y);
                    }
                    in_b += started.elapsed();
                }
            }
        }
        (in_a, in_b)
    }

    /// The objects of a kind, in key order.
    fn objects(&self, gvk: &Gvk) -> Vec<Arc<StoredObject>> {
        self.watches
            .serving(gvk, None)
            .map(|w| w.cache.read().iter_after(None).cloned().collect())
            .unwrap_or_default()
    }

    fn analyze(&mut self, i: usize, gvk: &Gvk, object: &Arc<StoredObject>) {
        let lookups = Arc::new(Lookups {
            watches: self.watches.clone(),
            kinds: self.kinds.clone(),
            asked: Mutex::new(Vec::new()),
        });
        let started = Instant::now();
        let answers: Vec<Answer> = self.analyzers[i]
            .plugin
            .analyze(gvk, object, Arc::new(HostReader(lookups.clone())))
            .expect("the analyzer answers")
            .into_iter()
            .map(|r| Answer {
                relation: r.relation,
                outgoing: r.outgoing,
                group: r.gvk.group,
                kind: r.gvk.kind,
                namespace: r.namespace,
                name: r.name,
                attributes: r.attributes,
            })
            .collect();
        self.analyses += 1;
        self.analyzers[i].calls += 1;
        self.analyzers[i].call_time += started.elapsed();
        let graph = &mut self.graph;
        let asked = std::mem::take(&mut *lookups.asked.lock().unwrap());
        let asked = if self.record_lookups {
            asked.into_iter().map(|l| l.intern(graph)).collect()
        } else {
            Vec::new()
        };
        // As the engine keeps a target: no namespace for cluster-scoped
        // kinds, the analyzed object's for namespaced ones.
        let found = answers
            .into_iter()
            .filter(|a| !a.relation.is_empty() && !a.kind.is_empty() && !a.name.is_empty())
            .map(|a| {
                let namespace = match self.kinds.get(&a.group, &a.kind).map(|r| r.namespaced) {
                    Some(false) => "",
                    Some(true) if a.namespace.is_empty() => object.namespace(),
                    _ => &a.namespace,
                };
                Found {
                    other: graph.key(&a.group, &a.kind, namespace, &a.name),
                    relation: a.relation,
                    outgoing: a.outgoing,
                    attributes: a.attributes,
                }
            })
            .collect();
        let subject = graph.key(&gvk.group, &gvk.kind, object.namespace(), object.name());
        graph.replace(
            &self.analyzers[i].name,
            subject,
            found,
            asked,
            SystemTime::now(),
        );
    }

    /// What the engine does for one change of the caches.
    fn change(&mut self, gvk: &Gvk, change: &Change) {
        let node = NodeKey {
            group: gvk.group.as_str().into(),
            kind: gvk.kind.as_str().into(),
            namespace: change.object.namespace().into(),
            name: change.object.name().into(),
        };
        let mut done = HashSet::new();
        for i in 0..self.analyzers.len() {
            if !self.analyzers[i].wants(gvk) {
                continue;
            }
            if change.kind == ChangeType::Deleted {
                self.graph.remove(&self.analyzers[i].name, &node);
            } else {
                self.analyze(i, gvk, &change.object);
            }
            done.insert((self.analyzers[i].name.clone(), node.clone()));
        }
        let kind: KindKey = (gvk.group.as_str().into(), gvk.kind.as_str().into());
        let (old, new) = match change.kind {
            ChangeType::Added => (None, Some(&*change.object)),
            ChangeType::Modified => (change.old.as_deref(), Some(&*change.object)),
            ChangeType::Deleted => (Some(&*change.object), None),
        };
        let mut affected: Vec<_> = self.graph.affected(&kind, old, new).into_iter().collect();
        affected.sort();
        for subject in affected {
            let node = (*subject.node).clone();
            if done.contains(&(subject.analyzer.clone(), node.clone())) {
                continue;
            }
            let Some(i) = self
                .analyzers
                .iter()
                .position(|a| a.name == subject.analyzer)
            else {
                continue;
            };
            let current = self.kinds.get(&node.group, &node.kind).and_then(|r| {
                let watch = self.watches.serving(&r.gvk, None)?;
                let object = watch
                    .cache
                    .read()
                    .get(&ObjectKey::new(&node.namespace, &node.name))?
                    .clone();
                Some((r.gvk.clone(), object))
            });
            match current {
                Some((gvk, object)) => self.analyze(i, &gvk, &object),
                None => {
                    self.graph.remove(&subject.analyzer, &node);
                }
            }
        }
    }
}

/// Analyses in one turn of a side-by-side build.
const CHUNK: usize = 250;

/// Every edge as one line, to compare indexes.
fn edge_lines(graph: &Graph) -> BTreeSet<String> {
    graph
        .edges()
        .map(|e| {
            let attributes: String = e
                .attributes
                .iter()
                .map(|(k, v)| format!(" {k}={v}"))
                .collect();
            format!(
                "{} {} {} by {}{attributes}",
                e.from, e.relation, e.to, e.analyzer
            )
        })
        .collect()
}

/// A plugin directory holding the four analyzer components.
fn install_analyzers(dir: &Path, wasm_dir: &Path) {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    std::fs::create_dir_all(dir).unwrap();
    for (name, package) in ANALYZERS {
        let wasm = wasm_dir.join(format!("{}.wasm", package.replace('-', "_")));
        std::fs::copy(&wasm, dir.join(format!("{name}.wasm"))).unwrap();
        std::fs::copy(
            workspace
                .join("plugins")
                .join(name)
                .join(format!("{name}.json")),
            dir.join(format!("{name}.json")),
        )
        .unwrap();
    }
}

fn load_plugins(dir: &Path) -> Arc<Plugins> {
    let plugins = Plugins::new(
        dir.join("plugins"),
        Some(ArtifactCache::new(dir.join("cache"))),
        Limits::default(),
        AllowedHosts::none(),
        Arc::new(Metrics::new()),
    )
    .unwrap();
    plugins.scan();
    assert_eq!(plugins.analyzers().len(), 4, "the four analyzers load");
    plugins
}

// ---------------------------------------------------------------------------
// The in-process runs.

/// One timed build.
struct Build {
    time: Duration,
    analyses: u64,
    edges: usize,
    /// A driver's calls by analyzer: name, calls, time inside them.
    calls: Vec<(Arc<str>, u64, Duration)>,
}

impl Driver {
    fn calls(&self) -> Vec<(Arc<str>, u64, Duration)> {
        self.analyzers
            .iter()
            .map(|a| (a.name.clone(), a.calls, a.call_time))
            .collect()
    }
}

/// The engine and the two drivers, built over copies of the same cluster.
struct InProcess {
    native: Driver,
    native_build: Build,
    native_held: Option<(isize, isize)>,
    edges_only_held: Option<(isize, isize)>,
    direct: Driver,
    direct_build: Build,
    engine_watches: Arc<Watches>,
    engine: Arc<Relations>,
    engine_build: Build,
    /// When the index first held every edge (before the engine was done).
    engine_complete: Duration,
    engine_held: Option<(isize, isize)>,
    engine_rss: i64,
    edges: usize,
    _dir: tempfile::TempDir,
}

fn rss_kib(status: &str, field: &str) -> i64 {
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

fn own_rss_kib() -> i64 {
    rss_kib(
        &std::fs::read_to_string("/proc/self/status").unwrap(),
        "VmRSS:",
    )
}

/// From `since` to the engine's last analysis: when the index last
/// changed, as the worker saw it, whenever the waiting thread woke up.
fn last_analysis(engine: &Relations, since: SystemTime) -> Duration {
    ANALYZERS
        .iter()
        .filter_map(|(name, _)| engine.counts(name)?.last_analysis_time)
        .max()
        .and_then(|last| last.duration_since(since).ok())
        .expect("an analysis after the change")
}

fn engine_counts(engine: &Relations) -> (u64, usize) {
    ANALYZERS
        .iter()
        .filter_map(|(name, _)| engine.counts(name))
        .fold((0, 0), |(a, e), c| (a + c.analyses, e + c.edges))
}

/// Fills caches, loads the analyzer components and starts the engine;
/// returns once it has nothing pending and the index holds `expected`
/// edges. The caches are filled and the plugins loaded before the counting
/// starts when this runs inside `counted`, so only the engine is measured.
fn start_engine(
    cluster: &Cluster,
    kinds: &Kinds,
    dir: &Path,
    wasm_dir: &Path,
    expected: usize,
) -> (Arc<Watches>, Arc<Relations>, Build, Duration, i64) {
    let was_counting = COUNTING.swap(false, Ordering::SeqCst);
    install_analyzers(&dir.join("plugins"), wasm_dir);
    let plugins = load_plugins(dir);
    let watches = fill(cluster);
    let discovery = Arc::new(Discovery::fixed(Catalog::fixed(kinds.0.clone())));
    let rss_before = own_rss_kib();
    COUNTING.store(was_counting, Ordering::SeqCst);
    let started = Instant::now();
    let engine = Relations::start(watches.clone(), discovery, plugins);
    let mut complete = None;
    loop {
        let (_, edges) = engine_counts(&engine);
        if complete.is_none() && edges == expected {
            complete = Some(started.elapsed());
        }
        if complete.is_some() && engine.pending() == 0 {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "the engine did not finish: {edges} of {expected} edges, {} pending",
            engine.pending()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
    let time = started.elapsed();
    let rss = own_rss_kib() - rss_before;
    let (analyses, edges) = engine_counts(&engine);
    let build = Build {
        time,
        analyses,
        edges,
        calls: Vec::new(),
    };
    (watches, engine, build, complete.unwrap(), rss)
}

impl InProcess {
    fn build(cluster: &Cluster, wasm_dir: &Path, memory: bool) -> InProcess {
        let kinds = Arc::new(Kinds(cluster.resources()));
        let dir = tempfile::tempdir().unwrap();
        install_analyzers(&dir.path().join("plugins"), wasm_dir);

        // Native and the components driven the same way, side by side.
        let plugins = load_plugins(dir.path());
        let backends = ANALYZERS
            .iter()
            .map(|(name, _)| {
                Analyzed::of(
                    plugins
                        .analyzers()
                        .into_iter()
                        .find(|p| &*p.name == *name)
                        .unwrap(),
                )
            })
            .collect();
        let mut native = Driver::new(fill(cluster), kinds.clone(), native_backends(), true);
        let mut direct = Driver::new(fill(cluster), kinds.clone(), backends, true);
        let (native_time, direct_time) = Driver::build_side_by_side(&mut native, &mut direct);
        let native_build = Build {
            time: native_time,
            analyses: native.analyses,
            edges: native.graph.edges().count(),
            calls: native.calls(),
        };
        let direct_build = Build {
            time: direct_time,
            analyses: direct.analyses,
            edges: direct.graph.edges().count(),
            calls: direct.calls(),
        };
        let expected = native_build.edges;
        // Memory is measured on builds of its own, so no timed build pays
        // for counting.
        let measure = |record_lookups| {
            let mut driver = Driver::new(
                native.watches.clone(),
                kinds.clone(),
                native_backends(),
                record_lookups,
            );
            let ((), held) = counted(|| driver.build());
            assert_eq!(driver.graph.edges().count(), expected);
            held
        };
        let native_held = memory.then(|| measure(true));
        let edges_only_held = memory.then(|| measure(false));

        // The engine, with its own plugins and caches.
        let (engine_watches, engine, engine_build, engine_complete, engine_rss) = start_engine(
            cluster,
            &kinds,
            &dir.path().join("engine"),
            wasm_dir,
            expected,
        );
        // And once more, counted.
        let engine_held = memory.then(|| {
            let (_, held) = counted(|| {
                start_engine(
                    cluster,
                    &kinds,
                    &dir.path().join("counted"),
                    wasm_dir,
                    expected,
                )
            });
            held
        });

        let lines = edge_lines(&native.graph);
        assert_eq!(
            lines,
            edge_lines(&direct.graph),
            "the components driven like native find the same edges"
        );
        assert_eq!(
            lines,
            edge_lines(&engine.graph()),
            "the engine finds the same edges"
        );
        InProcess {
            native_build,
            native_held,
            edges_only_held,
            native,
            direct,
            direct_build,
            engine_watches,
            engine,
            engine_build,
            engine_complete,
            engine_held,
            engine_rss,
            edges: lines.len(),
            _dir: dir,
        }
    }

    fn print_build(&self) {
        println!("\nFull graph build (the caches filled first; all four analyzers):\n");
        println!("| variant | analyses | edges | build s | µs per analysis | ratio to native |");
        println!("|---|---:|---:|---:|---:|---:|");
        let native = self.native_build.time.as_secs_f64();
        let row = |name: &str, b: &Build| {
            println!(
                "| {name} | {} | {} | {:.2} | {:.1} | {:.1}× |",
                grouped(b.analyses as f64),
                grouped(b.edges as f64),
                b.time.as_secs_f64(),
                b.time.as_secs_f64() * 1e6 / b.analyses as f64,
                b.time.as_secs_f64() / native
            );
        };
        row(
            "wasm: the engine, `Relations::start` → `pending() == 0`",
            &self.engine_build,
        );
        println!(
            "| wasm: the engine, until the index first held every edge | | | {:.2} | | {:.1}× |",
            self.engine_complete.as_secs_f64(),
            self.engine_complete.as_secs_f64() / native
        );
        row(
            "wasm: the components driven like native (one pass, `Plugin::analyze`)",
            &self.direct_build,
        );
        row(
            "native: the same crates, one pass, into `Graph::replace`",
            &self.native_build,
        );
        println!(
            "\nThe analyzer calls alone, in the two one-pass builds (the rest of a build is the driver and `Graph::replace`):\n"
        );
        println!(
            "| analyzer | calls | wasm (`Plugin::analyze`) µs per call | native µs per call | ratio |"
        );
        println!("|---|---:|---:|---:|---:|");
        let per_call = |calls: u64, time: Duration| time.as_secs_f64() * 1e6 / calls.max(1) as f64;
        let total = |b: &Build| b.calls.iter().map(|c| c.2).sum::<Duration>();
        for ((name, calls, wasm), (_, _, native)) in
            self.direct_build.calls.iter().zip(&self.native_build.calls)
        {
            println!(
                "| {name} | {} | {:.1} | {:.1} | {:.1}× |",
                grouped(*calls as f64),
                per_call(*calls, *wasm),
                per_call(*calls, *native),
                wasm.as_secs_f64() / native.as_secs_f64()
            );
        }
        let (wasm, native) = (total(&self.direct_build), total(&self.native_build));
        println!(
            "| all | {} | {:.1} | {:.1} | {:.1}× |",
            grouped(self.native_build.analyses as f64),
            per_call(self.direct_build.analyses, wasm),
            per_call(self.native_build.analyses, native),
            wasm.as_secs_f64() / native.as_secs_f64()
        );
        println!(
            "\nOutside the calls: {:.1} µs per analysis (wasm driver), {:.1} (native driver).",
            per_call(self.direct_build.analyses, self.direct_build.time - wasm),
            per_call(self.native_build.analyses, self.native_build.time - native)
        );
        self.print_lookup_cost();
        let mut by_relation: std::collections::BTreeMap<String, usize> = Default::default();
        for edge in self.native.graph.edges() {
            *by_relation
                .entry(format!("{} ({})", edge.relation, edge.analyzer))
                .or_default() += 1;
        }
        println!("\nEdges by relation:\n");
        println!("| relation (analyzer) | edges |");
        println!("|---|---:|");
        for (relation, count) in by_relation {
            println!("| {relation} | {} |", grouped(count as f64));
        }
    }

    /// What the services analyzer's Pod lookup costs: each Service's
    /// selector (`app`, whose values repeat in every namespace), and for
    /// comparison a label whose values do not (`pod-template-hash`).
    fn print_lookup_cost(&self) {
        let pod = self.native.kinds.get("", "Pod").unwrap();
        let service = self.native.kinds.get("", "Service").unwrap();
        let pods = self.native.watches.serving(&pod.gvk, None).unwrap();
        let services = self.native.objects(&service.gvk);
        let run = |namespace: &str, selector: String| {
            let query = Query {
                namespace: Some(namespace.to_string()),
                labels: selector.parse().unwrap(),
                ..Query::default()
            };
            let view = pods.cache.read();
            let started = Instant::now();
            let found = query.run(&view, &PageRequest::default()).items;
            (started.elapsed().as_secs_f64() * 1e6, found)
        };
        let (mut shared, mut unique, mut candidates) = (Vec::new(), Vec::new(), 0);
        for service in &services {
            let namespace = service.namespace();
            let app = serde_json::from_slice::<Value>(
                &service.get(&["spec", "selector", "app"]).unwrap(),
            )
            .unwrap();
            let app = app.as_str().unwrap();
            let (time, found) = run(namespace, format!("app={app}"));
            shared.push(time);
            candidates += pods
                .cache
                .read()
                .keys_with_label("app", app)
                .map_or(0, |k| k.len());
            let hash = found[0].label("pod-template-hash").unwrap().to_string();
            unique.push(run(namespace, format!("pod-template-hash={hash}")).0);
        }
        println!(
            "\nA Service's Pod lookup, `Query {{ namespace, labels: app=… }}`, 10 Pods found among {:.0} with that label across namespaces: median {:.1} µs; by `pod-template-hash=…` (5 Pods, a value no other namespace has): median {:.1} µs.",
            candidates as f64 / services.len() as f64,
            percentiles(&shared).0,
            percentiles(&unique).0
        );
    }

    fn print_memory(&self) {
        let edges = self.edges as f64;
        println!(
            "\nIndex memory (net heap held after a build of its own, counted with `malloc_usable_size`):\n"
        );
        println!("| index | heap bytes | allocations | bytes per edge | allocations per edge |");
        println!("|---|---:|---:|---:|---:|");
        let row = |name: &str, held: Option<(isize, isize)>| {
            let (bytes, allocations) = held.expect("measured with the build");
            println!(
                "| {name} | {} | {} | {:.0} | {:.2} |",
                grouped(bytes as f64),
                grouped(allocations as f64),
                bytes as f64 / edges,
                allocations as f64 / edges
            );
        };
        row(
            "native `Graph`: edges and the lookups they depend on",
            self.native_held,
        );
        row(
            "native `Graph`: edges alone (no lookups)",
            self.edges_only_held,
        );
        row(
            "wasm: heap growth of the whole engine from `start` to done",
            self.engine_held,
        );
        println!(
            "\nThe engine's process RSS grew by {} KiB over its build ({:.0} bytes per edge), linear memory of the instances included.",
            grouped(self.engine_rss as f64),
            self.engine_rss as f64 * 1024.0 / edges
        );
    }

    /// Per-change cost: each change applied to the cache alone, waiting
    /// until the index has followed it.
    fn changes(&mut self, cluster: &Cluster, count: usize) {
        let scripts = Script::all(cluster, count);
        println!(
            "\nCost per change, all four analyzers loaded ({count} changes each, applied one at a time; from `Cache::apply` until the index has followed):\n"
        );
        println!(
            "| change | analyses per change (engine / native) | wasm engine: median / p99 µs | wasm driven like native: median / p99 µs | native: median / p99 µs | of which `Cache::apply` (native run), median µs | engine / native (median) |"
        );
        println!("|---|---:|---:|---:|---:|---:|---:|");
        for script in &scripts {
            let resource = cluster.resource(script.kind).clone();
            let (mut native, mut direct, mut engine, mut applies) =
                (Vec::new(), Vec::new(), Vec::new(), Vec::new());
            let before = (self.native.analyses, engine_counts(&self.engine).0);
            // Each change through all three in turn, so all meet the same
            // machine.
            for change in &script.changes {
                let (total, apply) = drive(&mut self.native, &resource, change);
                native.push(total);
                applies.push(apply);
                direct.push(drive(&mut self.direct, &resource, change).0);
                engine.push(self.drive_engine(&resource, change));
            }
            let (nm, np) = percentiles(&native);
            let (dm, dp) = percentiles(&direct);
            let (em, ep) = percentiles(&engine);
            let per = |a: u64| a as f64 / script.changes.len() as f64;
            println!(
                "| {} | {:.1} / {:.1} | {em:.0} / {ep:.0} | {dm:.0} / {dp:.0} | {nm:.1} / {np:.1} | {:.1} | {:.1}× |",
                script.name,
                per(engine_counts(&self.engine).0 - before.1),
                per(self.native.analyses - before.0),
                percentiles(&applies).0,
                em / nm
            );
        }
        // A burst: changes arriving faster than one at a time.
        let burst = Script::status(cluster, count, 1);
        let resource = cluster.resource("Pod").clone();
        let native = burst_native(&mut self.native, &resource, &burst.changes);
        let direct = burst_native(&mut self.direct, &resource, &burst.changes);
        let engine = self.burst_engine(&resource, &burst.changes);
        let n = burst.changes.len() as f64;
        println!(
            "\nA burst: {count} Pod status changes applied back to back, then waited for: µs per change — wasm engine {:.0}, wasm driven like native {:.0}, native {:.1} (engine / native {:.1}×).",
            engine.as_secs_f64() * 1e6 / n,
            direct.as_secs_f64() * 1e6 / n,
            native.as_secs_f64() * 1e6 / n,
            engine.as_secs_f64() / native.as_secs_f64()
        );
        // The changes come in pairs or touch nothing the analyzers read
        // besides status, so every index ends as it began.
        let lines = edge_lines(&self.native.graph);
        assert_eq!(lines.len(), self.edges);
        assert_eq!(lines, edge_lines(&self.direct.graph));
        assert_eq!(lines, edge_lines(&self.engine.graph()));
    }

    /// One change through the engine: µs from `Cache::apply` to its last
    /// analysis.
    fn drive_engine(&self, resource: &ResourceInfo, change: &Value) -> f64 {
        let watch = self.engine_watches.serving(&resource.gvk, None).unwrap();
        let object = StoredObject::from_value(change.clone(), &resource.gvk, false).unwrap();
        let (before, _) = engine_counts(&self.engine);
        let started = SystemTime::now();
        watch
            .cache
            .apply(ChangeType::Modified, object, Origin::Watch)
            .unwrap();
        // The worker counts an analysis while the change's work is still
        // pending, so both together mean it is done.
        while !(self.engine.pending() == 0 && engine_counts(&self.engine).0 > before) {
            assert!(
                started.elapsed().unwrap() < Duration::from_secs(60),
                "the engine did not follow a change"
            );
            // Asleep rather than spinning, so the engine's two threads have
            // both cores.
            std::thread::sleep(Duration::from_micros(100));
        }
        last_analysis(&self.engine, started).as_secs_f64() * 1e6
    }

    fn burst_engine(&self, resource: &ResourceInfo, changes: &[Value]) -> Duration {
        let watch = self.engine_watches.serving(&resource.gvk, None).unwrap();
        let objects: Vec<StoredObject> = changes
            .iter()
            .map(|c| StoredObject::from_value(c.clone(), &resource.gvk, false).unwrap())
            .collect();
        let (before, _) = engine_counts(&self.engine);
        // Each Pod change is analyzed by ownership and references.
        let expected = before + 2 * objects.len() as u64;
        let started = SystemTime::now();
        for object in objects {
            watch
                .cache
                .apply(ChangeType::Modified, object, Origin::Watch)
                .unwrap();
        }
        while !(self.engine.pending() == 0 && engine_counts(&self.engine).0 >= expected) {
            assert!(
                started.elapsed().unwrap() < Duration::from_secs(120),
                "the engine did not follow the burst"
            );
            std::thread::sleep(Duration::from_micros(100));
        }
        last_analysis(&self.engine, started)
    }

    /// `around(deployment, Out, 3)` for every Deployment, `rounds` times.
    fn queries(&self, cluster: &Cluster, rounds: usize) {
        println!(
            "\nDepth-3 query, `graph.around(deployment, Direction::Out, 3, &[], 10_000)` over every Deployment, {rounds} rounds:\n"
        );
        println!("| index | queries | edges per answer | nodes per answer | median µs | p99 µs |");
        println!("|---|---:|---:|---:|---:|---:|");
        let roots: Vec<NodeKey> = cluster
            .deployments
            .iter()
            .map(|(namespace, name)| NodeKey {
                group: "apps".into(),
                kind: "Deployment".into(),
                namespace: namespace.as_str().into(),
                name: name.as_str().into(),
            })
            .collect();
        let engine = self.engine.graph();
        let indexes: [(&str, &Graph); 2] = [
            ("the engine's (wasm analyzers)", &engine),
            ("native", &self.native.graph),
        ];
        let mut times = [Vec::new(), Vec::new()];
        let (mut edges, mut nodes) = (0, 0);
        // The two indexes in turn, query by query.
        for _ in 0..rounds {
            for root in &roots {
                for (i, (_, graph)) in indexes.iter().enumerate() {
                    let started = Instant::now();
                    let (found_nodes, found_edges, truncated) =
                        graph.around(root, Direction::Out, 3, &[], 10_000);
                    times[i].push(started.elapsed().as_secs_f64() * 1e6);
                    assert!(!truncated);
                    edges += found_edges.len();
                    nodes += found_nodes.len();
                    std::hint::black_box((found_nodes, found_edges));
                }
            }
        }
        let edges_per = (edges / 2) as f64 / times[0].len() as f64;
        let nodes_per = (nodes / 2) as f64 / times[0].len() as f64;
        for ((name, _), times) in indexes.iter().zip(&times) {
            let (median, p99) = percentiles(times);
            println!(
                "| {name} | {} | {edges_per:.1} | {nodes_per:.1} | {median:.1} | {p99:.1} |",
                grouped(times.len() as f64)
            );
        }
    }
}

/// One change through a driver: µs in all, and in `Cache::apply`.
fn drive(driver: &mut Driver, resource: &ResourceInfo, change: &Value) -> (f64, f64) {
    let watch = driver.watches.serving(&resource.gvk, None).unwrap();
    let object = StoredObject::from_value(change.clone(), &resource.gvk, false).unwrap();
    let started = Instant::now();
    let change = watch
        .cache
        .apply(ChangeType::Modified, object, Origin::Watch)
        .unwrap();
    let applied = started.elapsed();
    driver.change(&resource.gvk, &change);
    (
        started.elapsed().as_secs_f64() * 1e6,
        applied.as_secs_f64() * 1e6,
    )
}

fn burst_native(driver: &mut Driver, resource: &ResourceInfo, changes: &[Value]) -> Duration {
    let watch = driver.watches.serving(&resource.gvk, None).unwrap();
    let objects: Vec<StoredObject> = changes
        .iter()
        .map(|c| StoredObject::from_value(c.clone(), &resource.gvk, false).unwrap())
        .collect();
    let started = Instant::now();
    for object in objects {
        let change = watch
            .cache
            .apply(ChangeType::Modified, object, Origin::Watch)
            .unwrap();
        driver.change(&resource.gvk, &change);
    }
    started.elapsed()
}

/// Median and p99.
fn percentiles(samples: &[f64]) -> (f64, f64) {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let at = |q: f64| sorted[((sorted.len() as f64 * q) as usize).min(sorted.len() - 1)];
    (at(0.5), at(0.99))
}

/// A sequence of changes of one kind, as the objects' next states.
struct Script {
    name: &'static str,
    kind: &'static str,
    changes: Vec<Value>,
}

/// resourceVersions for changes, above every generated one.
static NEXT_VERSION: AtomicIsize = AtomicIsize::new(10_000_000);

fn next_version() -> String {
    NEXT_VERSION.fetch_add(1, Ordering::Relaxed).to_string()
}

impl Script {
    fn all(cluster: &Cluster, count: usize) -> Vec<Script> {
        vec![
            Script::status(cluster, count, 0),
            Script::relabel(cluster, count),
            Script::selector(cluster, count),
        ]
    }

    /// A Pod's container restarted: status only. `round` picks other Pods.
    fn status(cluster: &Cluster, count: usize, round: usize) -> Script {
        let pods = cluster.objects("Pod");
        let changes = (0..count)
            .map(|k| {
                let mut pod = pods[(k * 7919 + round * 104_729) % pods.len()].clone();
                pod["metadata"]["resourceVersion"] = next_version().into();
                let status = &mut pod["status"]["containerStatuses"][0];
                status["restartCount"] = (round + 1).into();
                status["lastState"] = json!({"terminated": {"exitCode": 137, "reason": "OOMKilled",
                    "startedAt": CREATED, "finishedAt": "2026-11-21T10:00:00Z"}});
                status["state"] = json!({"running": {"startedAt": "2026-11-21T10:00:01Z"}});
                pod
            })
            .collect();
        Script {
            name: "Pod status (a container restarted)",
            kind: "Pod",
            changes,
        }
    }

    /// A Pod relabelled to the next Deployment's `app`, so it leaves one
    /// Service and enters another; then the same Pods relabelled back.
    fn relabel(cluster: &Cluster, count: usize) -> Script {
        let pods = cluster.objects("Pod");
        let picked: Vec<&Value> = (0..count / 2)
            .map(|k| &pods[(k * 6007) % pods.len()])
            .collect();
        let mut changes = Vec::new();
        for pod in &picked {
            let mut moved = (*pod).clone();
            moved["metadata"]["resourceVersion"] = next_version().into();
            moved["metadata"]["labels"]["app"] = neighbour(cluster, pod).into();
            changes.push(moved);
        }
        for pod in &picked {
            let mut back = (*pod).clone();
            back["metadata"]["resourceVersion"] = next_version().into();
            changes.push(back);
        }
        Script {
            name: "Pod relabelled (leaves one Service, enters another)",
            kind: "Pod",
            changes,
        }
    }

    /// A Service's selector pointed at the next Deployment's Pods; then back.
    fn selector(cluster: &Cluster, count: usize) -> Script {
        let services = cluster.objects("Service");
        let picked: Vec<&Value> = (0..count / 2)
            .map(|k| &services[(k * 31) % services.len()])
            .collect();
        let mut changes = Vec::new();
        for service in &picked {
            let mut moved = (*service).clone();
            moved["metadata"]["resourceVersion"] = next_version().into();
            moved["spec"]["selector"]["app"] = neighbour(cluster, service).into();
            changes.push(moved);
        }
        for service in &picked {
            let mut back = (*service).clone();
            back["metadata"]["resourceVersion"] = next_version().into();
            changes.push(back);
        }
        Script {
            name: "Service selector changed (selects another Deployment's Pods)",
            kind: "Service",
            changes,
        }
    }
}

/// The `app` of the next Deployment in the object's namespace.
fn neighbour(cluster: &Cluster, object: &Value) -> String {
    let namespace = object["metadata"]["namespace"].as_str().unwrap();
    let app = object["metadata"]["labels"]["app"].as_str().unwrap();
    let ns = cluster
        .by_namespace
        .iter()
        .position(|d| cluster.deployments[d[0]].0 == namespace)
        .unwrap();
    let list = &cluster.by_namespace[ns];
    let at = list
        .iter()
        .position(|&d| cluster.deployments[d].1 == app)
        .unwrap();
    cluster.deployments[list[(at + 1) % list.len()]].1.clone()
}

// ---------------------------------------------------------------------------
// The daemon.

/// The cluster as a recording: one `ADDED` per object.
fn write_recording(cluster: &Cluster, path: &Path) -> (usize, u64) {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).unwrap());
    let mut lines = 0;
    for (_, objects) in &cluster.kinds {
        for object in objects {
            serde_json::to_writer(&mut out, &json!({"type": "ADDED", "object": object})).unwrap();
            out.write_all(b"\n").unwrap();
            lines += 1;
        }
    }
    out.flush().unwrap();
    (lines, std::fs::metadata(path).unwrap().len())
}

/// One start of the daemon.
struct DaemonRun {
    listening: Duration,
    ready: Duration,
    /// Every edge in the index.
    complete: Option<Duration>,
    /// And nothing pending.
    settled: Option<Duration>,
    rss_kib: i64,
    hwm_kib: i64,
}

fn daemon(cluster: &Cluster, wasm_dir: &Path, expected: usize, runtime: &tokio::runtime::Runtime) {
    let dir = tempfile::tempdir().unwrap();
    let recording = dir.path().join("cluster.jsonl");
    let (lines, bytes) = write_recording(cluster, &recording);
    let plugins = dir.path().join("plugins");
    install_analyzers(&plugins, wasm_dir);
    let cache = dir.path().join("plugin-cache");
    println!(
        "\nThe daemon (`{}`, release) replaying the cluster: {} objects, {:.1} MB of recording; expecting {} edges:\n",
        grw_binary().display(),
        grouped(lines as f64),
        bytes as f64 / 1e6,
        grouped(expected as f64)
    );
    println!(
        "| daemon | API listening s | ready s | every edge in s | pending 0 s | VmRSS MiB | VmHWM MiB |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let runs = [
        ("no analyzers (`builtinAnalyzers: false`)", Analyzers::None),
        ("four analyzers built in (the default)", Analyzers::BuiltIn),
        (
            "four components in pluginDir, empty plugin cache (compiles them)",
            Analyzers::Components(&plugins),
        ),
        (
            "four components in pluginDir, plugin cache warm",
            Analyzers::Components(&plugins),
        ),
    ];
    let mut rss = Vec::new();
    for (name, analyzers) in runs {
        let run = run_daemon(dir.path(), &recording, analyzers, &cache, expected, runtime);
        let seconds = |d: Option<Duration>| {
            d.map_or("–".to_string(), |d| format!("{:.2}", d.as_secs_f64()))
        };
        println!(
            "| {name} | {:.2} | {:.2} | {} | {} | {:.1} | {:.1} |",
            run.listening.as_secs_f64(),
            run.ready.as_secs_f64(),
            seconds(run.complete),
            seconds(run.settled),
            run.rss_kib as f64 / 1024.0,
            run.hwm_kib as f64 / 1024.0
        );
        rss.push(run.rss_kib);
    }
    for (what, with) in [("built in", rss[1]), ("as components (warm)", rss[3])] {
        println!(
            "\nVmRSS with the analyzers {what} minus without: {:.1} MiB, {:.0} bytes per edge.",
            (with - rss[0]) as f64 / 1024.0,
            (with - rss[0]) as f64 * 1024.0 / expected as f64
        );
    }
}

/// Which analyzers a daemon run has.
#[derive(Clone, Copy)]
enum Analyzers<'a> {
    /// None at all.
    None,
    /// The four compiled into GRW, with no plugin directory.
    BuiltIn,
    /// The four components in this plugin directory (replacing the
    /// built-in ones).
    Components(&'a Path),
}

fn run_daemon(
    dir: &Path,
    recording: &Path,
    analyzers: Analyzers,
    cache: &Path,
    expected: usize,
    runtime: &tokio::runtime::Runtime,
) -> DaemonRun {
    let mut config = json!({"logType": "json", "minLogLevel": "info"});
    match analyzers {
        Analyzers::None => config["builtinAnalyzers"] = false.into(),
        Analyzers::BuiltIn => {}
        Analyzers::Components(plugins) => {
            config["pluginDir"] = plugins.to_str().unwrap().into();
            config["pluginCacheDir"] = cache.to_str().unwrap().into();
        }
    }
    let config_path = dir.join("config.json");
    std::fs::write(&config_path, config.to_string()).unwrap();
    let started = Instant::now();
    let mut child = Command::new(grw_binary())
        .args([
            "--replay",
            recording.to_str().unwrap(),
            "--listen-port",
            "0",
        ])
        .env("CONFIG_FILE_PATH", &config_path)
        .env_remove("KUBECONFIG")
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("grw starts");
    let (address_tx, address_rx) = std::sync::mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    let logs = Arc::new(Mutex::new(Vec::new()));
    let sink = logs.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if let Ok(event) = serde_json::from_str::<Value>(&line)
                && event["message"] == "API listening"
                && let Some(address) = event["address"].as_str()
            {
                let _ = address_tx.send(address.to_string());
            }
            sink.lock().unwrap().push(line);
        }
    });
    let Ok(address) = address_rx.recv_timeout(Duration::from_secs(300)) else {
        let _ = child.kill();
        panic!(
            "grw did not listen; logs:\n{}",
            logs.lock().unwrap().join("\n")
        );
    };
    let listening = started.elapsed();
    let url = format!("http://{address}");
    let (ready, complete, settled) = runtime.block_on(async {
        let client = reqwest::Client::new();
        let get = |path: &str| {
            let request = client.get(format!("{url}{path}"));
            async move {
                let response = request.send().await.unwrap();
                let status = response.status().as_u16();
                let body = response.bytes().await.unwrap();
                let body: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
                (status, body)
            }
        };
        while get("/readyz").await.0 != 200 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        let ready = started.elapsed();
        if let Analyzers::None = analyzers {
            return (ready, None, None);
        }
        let mut complete = None;
        loop {
            let (_, body) = get("/api/v1/plugins").await;
            let edges: u64 = body["items"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|p| p["analysis"]["edges"].as_u64())
                .sum();
            if edges as usize == expected && complete.is_none() {
                complete = Some(started.elapsed());
            }
            if complete.is_some() {
                // A route that answers `pending` without listing edges.
                let (_, body) = get("/api/v1/relations/nodes/no-such-node").await;
                if body["pending"] == 0 {
                    return (ready, complete, Some(started.elapsed()));
                }
            }
            assert!(
                started.elapsed() < Duration::from_secs(600),
                "the daemon's index did not fill: {edges} of {expected} edges"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    // Let the allocator and the runtime settle before reading memory.
    std::thread::sleep(Duration::from_secs(2));
    let status = std::fs::read_to_string(format!("/proc/{}/status", child.id())).unwrap();
    let _ = child.kill();
    let _ = child.wait();
    DaemonRun {
        listening,
        ready,
        complete,
        settled,
        rss_kib: rss_kib(&status, "VmRSS:"),
        hwm_kib: rss_kib(&status, "VmHWM:"),
    }
}

// ---------------------------------------------------------------------------

/// The release `grw` Cargo built with this benchmark, or `GRW_BIN`: a copy
/// kept apart, when other builds share the target directory.
fn grw_binary() -> PathBuf {
    std::env::var_os("GRW_BIN")
        .map_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_grw")), PathBuf::from)
}

fn build_analyzers() -> PathBuf {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut command = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    command
        .args(["build", "--quiet", "--release", "--target", "wasm32-wasip2"])
        // As plugins/build.sh: without the workspace's line tables, which
        // would be most of each file.
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_STRIP", "debuginfo")
        .current_dir(workspace);
    for (_, package) in ANALYZERS {
        command.args(["-p", package]);
    }
    assert!(
        command.status().unwrap().success(),
        "building the analyzers failed"
    );
    let target =
        std::env::var("CARGO_TARGET_DIR").map_or_else(|_| workspace.join("target"), PathBuf::from);
    target.join("wasm32-wasip2").join("release")
}
