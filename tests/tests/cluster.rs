//! Running GRW in a cluster: the manifests of `manifests/` as `kubectl
//! kustomize` renders them, parsed into their Kubernetes types; the RBAC in
//! them as `grw rbac` writes it; `grw probe`, which the sidecar's probes
//! run; and a plugin ConfigMap made by `kubectl`, laid out on disk the way
//! the kubelet mounts and updates it.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use grw_e2e::daemon::{Grw, bundled_recording, eventually, grw_binary};
use grw_e2e::plugins::plugin_wasm;
use k8s_openapi::api::apps::v1::{Deployment, StatefulSet};
use k8s_openapi::api::core::v1::{
    ConfigMap, Container, Namespace, PersistentVolumeClaim, PodTemplateSpec, Secret, Service,
    ServiceAccount,
};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// `kubectl kustomize` of one directory of `manifests/`, as JSON objects.
fn render(overlay: &str) -> Vec<Value> {
    let dir = workspace().join("manifests").join(overlay);
    let output = Command::new("kubectl")
        .arg("kustomize")
        .arg(&dir)
        .output()
        .expect("kubectl runs (it is needed for these tests: kustomize is built into it)");
    assert!(
        output.status.success(),
        "kubectl kustomize {}: {}",
        dir.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_saphyr::from_multiple(&String::from_utf8(output.stdout).unwrap()).unwrap()
}

/// `object` as its Kubernetes type; a field the type does not have (a typo,
/// a field in the wrong place) fails, since it would not survive the trip.
fn typed<K: DeserializeOwned + Serialize>(object: &Value) -> K {
    let typed: K = serde_json::from_value(object.clone())
        .unwrap_or_else(|e| panic!("{} {}: {e}", object["kind"], object["metadata"]["name"]));
    // k8s-openapi writes `apiVersion` and `kind` into the claims a
    // StatefulSet embeds (volumeClaimTemplates), where nobody has to.
    let mut written = serde_json::to_value(&typed).unwrap();
    for claim in written
        .pointer_mut("/spec/volumeClaimTemplates")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
    {
        let claim = claim.as_object_mut().unwrap();
        assert_eq!(claim.remove("kind"), Some(json!("PersistentVolumeClaim")));
        claim.remove("apiVersion");
    }
    assert_eq!(
        &written, object,
        "{} {} has fields its type does not know",
        object["kind"], object["metadata"]["name"]
    );
    typed
}

/// Checks every object of `objects` against its type; returns them by kind.
fn check_types(objects: &[Value]) -> Vec<String> {
    objects
        .iter()
        .map(|o| {
            let kind = o["kind"].as_str().unwrap().to_string();
            match kind.as_str() {
                "Namespace" => drop(typed::<Namespace>(o)),
                "ServiceAccount" => drop(typed::<ServiceAccount>(o)),
                "ClusterRole" => drop(typed::<ClusterRole>(o)),
                "ClusterRoleBinding" => drop(typed::<ClusterRoleBinding>(o)),
                "Role" => drop(typed::<Role>(o)),
                "RoleBinding" => drop(typed::<RoleBinding>(o)),
                "ConfigMap" => drop(typed::<ConfigMap>(o)),
                "Secret" => drop(typed::<Secret>(o)),
                "Service" => drop(typed::<Service>(o)),
                "PersistentVolumeClaim" => drop(typed::<PersistentVolumeClaim>(o)),
                "Deployment" => drop(typed::<Deployment>(o)),
                "StatefulSet" => drop(typed::<StatefulSet>(o)),
                "PodDisruptionBudget" => drop(typed::<PodDisruptionBudget>(o)),
                other => panic!("the manifests hold a {other} this test does not check"),
            }
            kind
        })
        .collect()
}

fn one<'a>(objects: &'a [Value], kind: &str) -> &'a Value {
    let mut found = objects.iter().filter(|o| o["kind"] == kind);
    let object = found.next().unwrap_or_else(|| panic!("no {kind}"));
    assert!(found.next().is_none(), "more than one {kind}");
    object
}

/// The GRW configuration in the rendered ConfigMap, parsed as GRW does:
/// no warnings.
fn grw_config(objects: &[Value]) -> grw::config::Config {
    let map: ConfigMap = typed(one(objects, "ConfigMap"));
    let text = &map.data.unwrap()["config.json"];
    let (config, warnings) = grw::config::parse(text, &|_| None).unwrap();
    assert_eq!(warnings, Vec::<String>::new());
    config
}

fn container<'a>(template: &'a PodTemplateSpec, name: &str) -> &'a Container {
    template
        .spec
        .as_ref()
        .unwrap()
        .containers
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("no container {name}"))
}

/// Where `container` mounts something at `path`.
fn mounted(container: &Container, path: &Path) -> bool {
    container
        .volume_mounts
        .iter()
        .flatten()
        .any(|m| path.starts_with(&m.mount_path))
}

/// What every GRW container must be: non-root, read-only, unprivileged,
/// bounded, with its config, dataDir and plugin directory mounted and a
/// writable /tmp for the compiled-plugin cache.
fn check_grw_container(template: &PodTemplateSpec, config: &grw::config::Config) {
    let pod = template.spec.as_ref().unwrap();
    let pod_security = pod.security_context.as_ref().unwrap();
    assert_eq!(pod_security.run_as_non_root, Some(true));
    assert!(pod_security.run_as_user.unwrap() > 0);
    let grw = container(template, "grw");
    assert_eq!(grw.image.as_deref(), Some("grw:0.1.0"));
    let security = grw.security_context.as_ref().unwrap();
    assert_eq!(security.allow_privilege_escalation, Some(false));
    assert_eq!(security.read_only_root_filesystem, Some(true));
    assert_eq!(
        security.capabilities.as_ref().unwrap().drop,
        Some(vec!["ALL".to_string()])
    );
    let resources = grw.resources.as_ref().unwrap();
    assert!(resources.requests.as_ref().unwrap().contains_key("memory"));
    assert!(resources.limits.as_ref().unwrap().contains_key("memory"));
    let args = grw.args.as_ref().unwrap();
    let config_path = Path::new(&args[args.iter().position(|a| a == "--config").unwrap() + 1]);
    assert!(mounted(grw, config_path), "{config_path:?} is not mounted");
    for dir in [config.data_dir.as_ref(), config.plugin_dir.as_ref()]
        .into_iter()
        .flatten()
    {
        assert!(mounted(grw, dir), "{dir:?} is not mounted");
    }
    assert!(mounted(grw, Path::new("/tmp")), "/tmp is not writable");
    assert!(grw.readiness_probe.is_some() && grw.liveness_probe.is_some());
}

/// The resources each RBAC rule of kind `kind` grants, as `group/resource`.
fn granted(objects: &[Value], kind: &str) -> BTreeSet<String> {
    objects
        .iter()
        .filter(|o| o["kind"] == kind)
        .flat_map(|o| o["rules"].as_array().unwrap().clone())
        .filter(|rule| rule["verbs"] == json!(["list", "watch"]))
        .flat_map(|rule| {
            let group = rule["apiGroups"][0].as_str().unwrap().to_string();
            rule["resources"]
                .as_array()
                .unwrap()
                .iter()
                .map(move |r| format!("{group}/{}", r.as_str().unwrap()))
                .collect::<Vec<_>>()
        })
        .collect()
}

/// What the configuration watches, as `group/resource`.
fn watched(config: &grw::config::Config) -> BTreeSet<String> {
    grw::cli::rbac::grants(config)
        .unwrap()
        .into_iter()
        .map(|g| format!("{}/{}", g.group, g.resource))
        .collect()
}

#[test]
fn standalone_renders_into_valid_objects_that_grant_exactly_what_it_watches() {
    let objects = render("standalone");
    let mut kinds = check_types(&objects);
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "ClusterRole",
            "ClusterRoleBinding",
            "ConfigMap",
            "Namespace",
            "PodDisruptionBudget",
            "Role",
            "RoleBinding",
            "Secret",
            "Service",
            "ServiceAccount",
            "StatefulSet"
        ]
    );
    let config = grw_config(&objects);
    let set: StatefulSet = typed(one(&objects, "StatefulSet"));
    let template = &set.spec.template;
    check_grw_container(template, &config);
    let grw = container(template, "grw");
    let probe = |probe: &Option<k8s_openapi::api::core::v1::Probe>| {
        probe
            .as_ref()
            .unwrap()
            .http_get
            .as_ref()
            .unwrap()
            .path
            .clone()
    };
    assert_eq!(probe(&grw.readiness_probe).as_deref(), Some("/readyz"));
    assert_eq!(probe(&grw.liveness_probe).as_deref(), Some("/healthz"));
    assert!(mounted(grw, config.api_token_file.as_ref().unwrap()));
    assert_eq!(config.listen_address.to_string(), "0.0.0.0");
    let service: Service = typed(one(&objects, "Service"));
    assert_eq!(
        service.spec.unwrap().ports.unwrap()[0].port,
        i32::from(config.listen_port)
    );

    // Several replicas, one delivering: each its own outbox volume, and
    // its Pod's name as its identity in the Lease.
    assert!(set.spec.replicas.unwrap() >= 2);
    let election = config.leader_election.as_ref().unwrap();
    let claims = set.spec.volume_claim_templates.as_ref().unwrap();
    let claim = claims[0].metadata.name.as_deref().unwrap();
    let data_mount = grw.volume_mounts.iter().flatten().find(|m| m.name == claim);
    assert_eq!(
        data_mount.map(|m| Path::new(&m.mount_path)),
        config.data_dir.as_deref()
    );
    let env: Vec<(String, String)> = grw
        .env
        .iter()
        .flatten()
        .map(|e| {
            let field = e.value_from.as_ref().unwrap().field_ref.as_ref().unwrap();
            (e.name.clone(), field.field_path.clone())
        })
        .collect();
    assert_eq!(
        env,
        [
            ("POD_NAME".to_string(), "metadata.name".to_string()),
            (
                "POD_NAMESPACE".to_string(),
                "metadata.namespace".to_string()
            )
        ]
    );
    assert!(election.identity.is_none() && election.lease_namespace.is_none());

    // Exactly what the configuration watches, cluster-wide (with the kinds
    // the built-in analyzers follow, Istio's custom ones among them, so
    // CustomResourceDefinitions too), and discovery; in its own namespace,
    // its Lease.
    let mut expected = watched(&config);
    assert!(expected.contains("networking.istio.io/virtualservices"));
    expected.insert("apiextensions.k8s.io/customresourcedefinitions".into());
    assert_eq!(granted(&objects, "ClusterRole"), expected);
    assert!(granted(&objects, "Role").is_empty());
    let role = one(&objects, "Role");
    assert_eq!(role["metadata"]["namespace"], "grw");
    assert_eq!(
        role["rules"],
        json!([
            {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
            {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "resourceNames": [election.lease_name], "verbs": ["get", "update"]}
        ])
    );
    let cluster_role = one(&objects, "ClusterRole");
    assert_eq!(
        cluster_role["rules"].as_array().unwrap().last().unwrap(),
        &json!({"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*"], "verbs": ["get"]})
    );
    let binding = one(&objects, "ClusterRoleBinding");
    assert_eq!(
        binding["subjects"],
        json!([{"kind": "ServiceAccount", "name": "grw", "namespace": "grw"}])
    );
    assert_eq!(
        template
            .spec
            .as_ref()
            .unwrap()
            .service_account_name
            .as_deref(),
        Some("grw")
    );
}

#[test]
fn standalone_delegated_serves_tls_and_may_ask_the_api_server_about_callers() {
    let objects = render("standalone-delegated");
    let mut kinds = check_types(&objects);
    kinds.sort();
    // No shared API token: callers bring their own.
    assert_eq!(
        kinds,
        [
            "ClusterRole",
            "ClusterRoleBinding",
            "ConfigMap",
            "Namespace",
            "PodDisruptionBudget",
            "Role",
            "RoleBinding",
            "Service",
            "ServiceAccount",
            "StatefulSet"
        ]
    );
    let config = grw_config(&objects);
    assert_eq!(config.api_auth(), grw::config::ApiAuth::Delegated);
    assert_eq!(config.api_token_file, None);
    let tls = config.tls_listener.clone().unwrap();
    assert_eq!(tls.auth, grw::config::ApiAuth::Delegated);
    assert!(tls.address.is_unspecified());
    assert!(config.listen_address.is_loopback());

    let set: StatefulSet = typed(one(&objects, "StatefulSet"));
    let template = &set.spec.template;
    check_grw_container(template, &config);
    let grw = container(template, "grw");
    // The certificate and key are files of the Secret grw-tls.
    for file in [&tls.cert_file, &tls.key_file] {
        let mount = grw
            .volume_mounts
            .iter()
            .flatten()
            .find(|m| file.starts_with(&m.mount_path))
            .unwrap_or_else(|| panic!("{file:?} is not mounted"));
        let volume = template
            .spec
            .as_ref()
            .unwrap()
            .volumes
            .iter()
            .flatten()
            .find(|v| v.name == mount.name)
            .unwrap();
        assert_eq!(
            volume.secret.as_ref().unwrap().secret_name.as_deref(),
            Some("grw-tls")
        );
    }
    assert!(
        !grw.volume_mounts
            .iter()
            .flatten()
            .any(|m| m.mount_path.contains("api-token"))
    );
    // One port, the TLS listener's, which the probes (over HTTPS) and the
    // Service use.
    let ports = grw.ports.as_ref().unwrap();
    assert_eq!(ports.len(), 1);
    assert_eq!(ports[0].container_port, i32::from(tls.port));
    let port_name = ports[0].name.clone().unwrap();
    for probe in [&grw.readiness_probe, &grw.liveness_probe] {
        let get = probe.as_ref().unwrap().http_get.as_ref().unwrap();
        assert_eq!(get.scheme.as_deref(), Some("HTTPS"));
        assert_eq!(
            get.port,
            k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(port_name.clone())
        );
    }
    let service: Service = typed(one(&objects, "Service"));
    let service_ports = service.spec.unwrap().ports.unwrap();
    assert_eq!(service_ports.len(), 1);
    assert_eq!(
        service_ports[0].target_port,
        Some(k8s_openapi::apimachinery::pkg::util::intstr::IntOrString::String(port_name))
    );

    // The RBAC is what `grw rbac` prints for this configuration, the
    // reviews included.
    let dir = workspace().join("manifests/standalone-delegated");
    let output = Command::new(grw_binary())
        .args(["rbac", "--config"])
        .arg(dir.join("config.json"))
        .args(["--namespace", "grw"])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let printed: Vec<Value> =
        serde_saphyr::from_multiple(&String::from_utf8(output.stdout).unwrap()).unwrap();
    let rbac = |objects: &[Value]| -> Vec<Value> {
        objects
            .iter()
            .filter(|o| o["apiVersion"] == "rbac.authorization.k8s.io/v1")
            .cloned()
            .collect::<Vec<_>>()
    };
    let mut rendered = rbac(&objects);
    let mut printed = rbac(&printed);
    let order = |o: &Value| format!("{}/{}", o["kind"], o["metadata"]["name"]);
    rendered.sort_by_key(order);
    printed.sort_by_key(order);
    assert_eq!(rendered, printed);
    let rules = &one(&objects, "ClusterRole")["rules"];
    for resource in ["tokenreviews", "subjectaccessreviews"] {
        assert!(
            rules
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r["resources"] == json!([resource]) && r["verbs"] == json!(["create"])),
            "{rules}"
        );
    }
    let kustomization = std::fs::read_to_string(dir.join("kustomization.yaml")).unwrap();
    assert!(kustomization.contains("`grw rbac --config config.json --namespace grw`"));
}

#[test]
fn sidecars_render_with_only_their_namespace_s_permissions() {
    for overlay in ["sidecar", "sidecar-large-plugins"] {
        let objects = render(overlay);
        let mut kinds = check_types(&objects);
        kinds.sort();
        assert_eq!(
            kinds,
            [
                "ConfigMap",
                "Deployment",
                "Role",
                "RoleBinding",
                "ServiceAccount"
            ],
            "{overlay}"
        );
        let config = grw_config(&objects);
        assert!(config.listen_address.is_loopback(), "{overlay}");
        let deployment: Deployment = typed(one(&objects, "Deployment"));
        let template = &deployment.spec.template;
        check_grw_container(template, &config);
        // Probes run `grw probe` in the container: the kubelet cannot reach loopback.
        let grw = container(template, "grw");
        let exec = |probe: &Option<k8s_openapi::api::core::v1::Probe>| {
            probe
                .as_ref()
                .unwrap()
                .exec
                .as_ref()
                .unwrap()
                .command
                .clone()
                .unwrap()
        };
        assert_eq!(
            exec(&grw.readiness_probe),
            [
                "/grw",
                "probe",
                "--ready",
                "--config",
                "/etc/grw/config.json"
            ]
        );
        assert_eq!(
            exec(&grw.liveness_probe),
            ["/grw", "probe", "--config", "/etc/grw/config.json"]
        );

        let role = one(&objects, "Role");
        assert_eq!(role["metadata"]["namespace"], "shop");
        assert_eq!(granted(&objects, "Role"), watched(&config), "{overlay}");
        for resource in &config.initial_resources {
            assert_eq!(resource.options.namespace.as_deref(), Some("shop"));
        }
        assert_eq!(
            one(&objects, "RoleBinding")["subjects"],
            json!([{"kind": "ServiceAccount", "name": "shop", "namespace": "shop"}])
        );

        let pod = deployment.spec.template.spec.unwrap();
        let plugins = pod
            .volumes
            .unwrap()
            .into_iter()
            .find(|v| v.name == "plugins")
            .unwrap();
        if overlay == "sidecar" {
            // Small plugins: the ConfigMap, updated in place by the kubelet.
            assert_eq!(plugins.config_map.unwrap().name, "grw-plugins");
            assert!(pod.init_containers.is_none());
        } else {
            // Large ones: copied from an image into an emptyDir first.
            assert!(plugins.config_map.is_none());
            assert!(plugins.empty_dir.is_some());
            let copy = &pod.init_containers.unwrap()[0];
            assert_eq!(copy.volume_mounts.as_ref().unwrap()[0].name, "plugins");
        }
    }
}

/// The RBAC files of the manifests are what `grw rbac` prints for their
/// configurations, with the arguments their kustomization.yaml names.
#[test]
fn the_manifests_rbac_is_what_grw_rbac_prints() {
    for (overlay, args) in [
        ("standalone", &["--namespace", "grw"][..]),
        (
            "sidecar",
            &["--namespace", "shop", "--service-account", "shop"][..],
        ),
    ] {
        let dir = workspace().join("manifests").join(overlay);
        let kustomization = std::fs::read_to_string(dir.join("kustomization.yaml")).unwrap();
        let command = format!("`grw rbac --config config.json {}`", args.join(" "));
        assert!(
            kustomization.contains(&command),
            "{overlay}/kustomization.yaml does not say {command}"
        );
        let output = Command::new(grw_binary())
            .args(["rbac", "--config"])
            .arg(dir.join("config.json"))
            .args(args)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        assert_eq!(output.stderr, b"");
        let written = std::fs::read_to_string(dir.join("rbac.yaml")).unwrap();
        assert!(
            written == String::from_utf8(output.stdout).unwrap(),
            "manifests/{overlay}/rbac.yaml is not what {command} prints now: write it again with it"
        );
    }
}

#[test]
fn grw_rbac_explains_a_kind_it_cannot_place() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(
        &config,
        json!({"subscriptions": [{"name": "widgets", "kind": "Widget",
            "webhook": {"url": "http://127.0.0.1:9/x"}}]})
        .to_string(),
    )
    .unwrap();
    let output = Command::new(grw_binary())
        .args(["rbac", "--config"])
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(output.stdout, b"");
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "grw: subscriptions `widgets` (Widget): `Widget` is not a built-in kind; name its group too (`widget.example.com`, or `example.com/v1/Widget`) so that the rule can say which API group it is in\n"
    );
}

/// `grw probe` with a config naming `port` on loopback.
fn probe(dir: &Path, port: u16, extra: &[&str]) -> std::process::Output {
    let config = dir.join(format!("probe-{port}.json"));
    std::fs::write(
        &config,
        json!({"listenAddress": "0.0.0.0", "listenPort": port}).to_string(),
    )
    .unwrap();
    Command::new(grw_binary())
        .arg("probe")
        .args(extra)
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap()
}

#[tokio::test]
async fn grw_probe_says_whether_the_configured_daemon_is_alive_and_ready() {
    let dir = tempfile::tempdir().unwrap();
    let grw = Grw::start(
        json!({}),
        &["--replay", bundled_recording().to_str().unwrap()],
    )
    .await;
    grw.wait_ready(Duration::from_secs(30)).await;
    let port: u16 = grw.url.rsplit(':').next().unwrap().parse().unwrap();
    for extra in [&[][..], &["--ready"][..]] {
        let output = probe(dir.path(), port, extra);
        assert!(output.status.success(), "{output:?}");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "ok\n");
    }

    // Nothing listening: a failure that says where it asked.
    let free = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let closed = free.local_addr().unwrap().port();
    drop(free);
    let output = probe(dir.path(), closed, &["--ready"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with(&format!("grw: http://127.0.0.1:{closed}/readyz: ")),
        "{stderr}"
    );
}

/// A ConfigMap volume as the kubelet writes it: each key in a timestamped
/// directory, `..data` pointing at it, and a symlink per key through
/// `..data`; an update writes a new directory, swaps `..data` in one rename,
/// fixes the per-key symlinks and removes the old directory.
struct ConfigMapVolume {
    dir: PathBuf,
    version: u32,
}

impl ConfigMapVolume {
    fn new(dir: PathBuf) -> Self {
        std::fs::create_dir_all(&dir).unwrap();
        ConfigMapVolume { dir, version: 0 }
    }

    fn write(&mut self, map: &ConfigMap) {
        let mut files: Vec<(String, Vec<u8>)> = Vec::new();
        for (key, value) in map.data.iter().flatten() {
            files.push((key.clone(), value.as_bytes().to_vec()));
        }
        for (key, value) in map.binary_data.iter().flatten() {
            files.push((key.clone(), value.0.clone()));
        }
        self.version += 1;
        let name = format!("..2026_11_23_20_00_00.{:09}", self.version);
        let data = self.dir.join(&name);
        std::fs::create_dir(&data).unwrap();
        for (key, bytes) in &files {
            std::fs::write(data.join(key), bytes).unwrap();
        }
        let old = std::fs::read_link(self.dir.join("..data")).ok();
        std::os::unix::fs::symlink(&name, self.dir.join("..data_tmp")).unwrap();
        std::fs::rename(self.dir.join("..data_tmp"), self.dir.join("..data")).unwrap();
        let keys: BTreeSet<&str> = files.iter().map(|(k, _)| k.as_str()).collect();
        for entry in std::fs::read_dir(&self.dir).unwrap().flatten() {
            let file = entry.file_name().into_string().unwrap();
            if !file.starts_with("..") && !keys.contains(file.as_str()) {
                std::fs::remove_file(entry.path()).unwrap();
            }
        }
        for key in keys {
            let link = self.dir.join(key);
            if std::fs::symlink_metadata(&link).is_err() {
                std::os::unix::fs::symlink(format!("..data/{key}"), &link).unwrap();
            }
        }
        if let Some(old) = old {
            std::fs::remove_dir_all(self.dir.join(old)).unwrap();
        }
    }
}

/// `kubectl create configmap grw-plugins --from-file=...` of `files`, as
/// docs/running-in-a-cluster.md tells users to make it.
fn plugin_config_map(files: &[PathBuf]) -> ConfigMap {
    let mut command = Command::new("kubectl");
    command.args([
        "create",
        "configmap",
        "grw-plugins",
        "-n",
        "shop",
        "--dry-run=client",
        "-o",
        "json",
    ]);
    for file in files {
        command.arg(format!("--from-file={}", file.display()));
    }
    let output = command.output().unwrap();
    assert!(output.status.success(), "{output:?}");
    serde_json::from_slice(&output.stdout).unwrap()
}

#[tokio::test]
async fn plugins_from_a_configmap_made_by_kubectl_follow_the_kubelet_s_updates() {
    let dir = tempfile::tempdir().unwrap();
    let source = dir.path().join("dist");
    std::fs::create_dir(&source).unwrap();
    let add = |name: &str, package: &str, manifest: Value| {
        std::fs::copy(plugin_wasm(package), source.join(format!("{name}.wasm"))).unwrap();
        std::fs::write(source.join(format!("{name}.json")), manifest.to_string()).unwrap();
        [
            source.join(format!("{name}.wasm")),
            source.join(format!("{name}.json")),
        ]
    };
    let namespaces = |include: &str| json!({"kind": "filter", "config": {"include": [include], "clusterScoped": true}});
    let only = add("only", "grw-plugin-namespace-filter", namespaces("ingress"));
    let map = plugin_config_map(&only);
    // Components are not text: kubectl puts them in binaryData.
    assert!(map.binary_data.as_ref().unwrap().contains_key("only.wasm"));
    assert!(map.data.as_ref().unwrap().contains_key("only.json"));

    let mut volume = ConfigMapVolume::new(dir.path().join("plugins"));
    volume.write(&map);
    let grw = Grw::start(
        json!({"pluginDir": volume.dir, "pluginCacheDir": dir.path().join("cache")}),
        &["--replay", bundled_recording().to_str().unwrap()],
    )
    .await;
    grw.wait_ready(Duration::from_secs(60)).await;
    let namespaces_of = |body: Value| -> BTreeSet<String> {
        body["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o["metadata"]["namespace"].as_str().unwrap().to_string())
            .collect()
    };
    let (status, body) = grw.get("/api/v1/objects/pods?filter=only").await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        namespaces_of(body),
        BTreeSet::from(["ingress".to_string()]),
        "{}",
        grw.get("/api/v1/plugins/only").await.1
    );

    // kubectl edit: a new config for `only`, and a second plugin.
    let mut files = add(
        "only",
        "grw-plugin-namespace-filter",
        namespaces("kube-system"),
    )
    .to_vec();
    files.extend(add(
        "labelled",
        "grw-plugin-label-filter",
        json!({"kind": "filter", "config": {"selector": "k8s-app"}}),
    ));
    volume.write(&plugin_config_map(&files));
    assert!(
        eventually(Duration::from_secs(30), || async {
            let (status, body) = grw.get("/api/v1/objects/pods?filter=only").await;
            status == 200 && namespaces_of(body) == BTreeSet::from(["kube-system".to_string()])
        })
        .await,
        "{}",
        grw.logs()
    );
    assert!(
        eventually(Duration::from_secs(30), || async {
            grw.get("/api/v1/plugins/labelled").await.1["state"] == "ready"
        })
        .await
    );

    // A key removed from the ConfigMap: its plugin goes.
    volume.write(&plugin_config_map(&files[..2]));
    assert!(
        eventually(Duration::from_secs(30), || async {
            grw.get("/api/v1/plugins/labelled").await.0 == 404
        })
        .await
    );
    assert_eq!(grw.get("/api/v1/plugins/only").await.1["state"], "ready");
}
