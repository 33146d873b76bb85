//! The journal through the daemon, against the fake API server: an
//! object's history with who made each change, its state at a time, a
//! Deployment's timeline with what it uses and its Events, what a
//! `delegated` caller is shown of a timeline that leaves its namespace,
//! the gap a SIGKILL leaves, and the timeline of a Deployment whose life a
//! real API server's watches recorded.

use std::time::Duration;

use grw_e2e::daemon::{Grw, eventually};
use grw_e2e::fake_api::{FakeApiOptions, FakeApiServer, Rule, Subject};
use serde_json::{Value, json};

const TOKEN: &str = "t0k3n";
const SETTLE: Duration = Duration::from_secs(60);

async fn cluster() -> FakeApiServer {
    FakeApiServer::start(FakeApiOptions {
        token: Some(TOKEN.into()),
        bookmark_interval: Duration::from_millis(500),
        istio_crds_installed: false,
    })
    .await
}

/// A managedFields entry, as the API server writes it.
fn managed(manager: &str, subresource: &str, time: &str, fields: Value) -> Value {
    let mut entry = json!({"manager": manager, "operation": "Update", "apiVersion": "apps/v1",
        "time": time, "fieldsType": "FieldsV1", "fieldsV1": fields});
    if !subresource.is_empty() {
        entry["subresource"] = json!(subresource);
    }
    entry
}

fn deployment(labels: Value, replicas: u32, config_map: &str, managers: &[Value]) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"namespace": "shop", "name": "web", "labels": labels, "managedFields": managers},
        "spec": {"replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "shop:1",
                             "volumeMounts": [{"name": "settings", "mountPath": "/etc/web"}]}],
                         "volumes": [{"name": "settings", "configMap": {"name": config_map}}]}}}})
}

/// A ConfigMap its `manager` last wrote at minute `value` past ten.
fn config_map(name: &str, value: &str, manager: &str) -> Value {
    let time = format!("2026-11-29T10:{value:0>2}:00Z");
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"namespace": "shop", "name": name, "managedFields": [
            managed(manager, "", &time, json!({"f:data": {}}))]},
        "data": {"value": value}})
}

/// An `events.k8s.io/v1` Event in `shop` about `regarding`, as a
/// controller reports it.
fn event(name: &str, regarding: Value, reason: &str, note: &str) -> Value {
    json!({"apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"namespace": "shop", "name": name},
        "eventTime": "2026-11-29T10:03:00.000000Z",
        "reportingController": "deployment-controller", "reportingInstance": "kcm-1",
        "action": "Scale", "reason": reason, "note": note, "type": "Normal",
        "regarding": regarding})
}

async fn start(fake: &FakeApiServer, dir: tempfile::TempDir, data_dir: bool) -> Grw {
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let mut config = json!({
        "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": fake.url(), "tokenFilePath": token_file},
        "initialWatchingResources": [
            {"group": "apps", "version": "v1", "kind": "Deployment"},
            {"group": "", "version": "v1", "kind": "ConfigMap"},
        ],
        "apiGroupsSyncIntervalSecond": 3600,
        "builtinAnalyzers": ["references"],
    });
    if data_dir {
        config["dataDir"] = json!(dir.path().join("data"));
    }
    let grw = Grw::start_in(dir, config, &[]).await;
    grw.wait_ready(SETTLE).await;
    grw
}

/// `type who object` of each item of a timeline or history.
fn summary(body: &Value) -> Vec<String> {
    body["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items: {body}"))
        .iter()
        .map(|i| {
            let what = match i["edge"].as_object() {
                Some(edge) => {
                    let text = |k: &str| edge[k].as_str().unwrap_or("").to_string();
                    format!("{} {} {}", text("from"), text("relation"), text("to"))
                }
                None => format!(
                    "{}/{}",
                    i["kind"].as_str().unwrap_or(""),
                    i["name"].as_str().unwrap_or("")
                ),
            };
            format!(
                "{} {} {what}",
                i["type"].as_str().unwrap(),
                i["who"]["manager"].as_str().unwrap_or("-")
            )
        })
        .collect()
}

#[tokio::test]
async fn a_deployments_timeline_has_its_own_changes_and_those_of_what_it_uses() {
    let fake = cluster().await;
    let apply = managed(
        "kubectl-client-side-apply",
        "",
        "2026-11-29T10:00:00Z",
        json!({"f:spec": {}}),
    );
    fake.create(config_map("settings", "1", "kubectl-create"))
        .unwrap();
    fake.create(config_map("settings-v2", "1", "kubectl-create"))
        .unwrap();
    fake.create(deployment(
        json!({"app": "web"}),
        1,
        "settings",
        std::slice::from_ref(&apply),
    ))
    .unwrap();
    let grw = start(&fake, tempfile::tempdir().unwrap(), false).await;
    let settled = eventually(SETTLE, || async {
        grw.get("/api/v1/relations?relation=uses").await.1["settled"] == true
    })
    .await;
    assert!(settled, "{}", grw.get("/api/v1/relations").await.1);

    let label = managed(
        "kubectl-label",
        "",
        "2026-11-29T10:01:00Z",
        json!({"f:metadata": {"f:labels": {"f:tier": {}}}}),
    );
    let mut scale = managed(
        "kubectl",
        "scale",
        "2026-11-29T10:02:00Z",
        json!({"f:spec": {"f:replicas": {}}}),
    );
    // The API server writes `kubectl scale`'s entry without a time.
    scale.as_object_mut().unwrap().remove("time");
    let moved = managed(
        "kubectl-client-side-apply",
        "",
        "2026-11-29T10:04:00Z",
        json!({"f:spec": {"f:template": {}}}),
    );
    let labels = json!({"app": "web", "tier": "front"});
    fake.update(deployment(
        labels.clone(),
        1,
        "settings",
        &[apply.clone(), label.clone()],
    ))
    .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let before_scale = grw_e2e_now();
    tokio::time::sleep(Duration::from_millis(300)).await;
    fake.update(deployment(
        labels.clone(),
        3,
        "settings",
        &[apply.clone(), label.clone(), scale.clone()],
    ))
    .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    fake.update(config_map("settings", "2", "kubectl-edit"))
        .unwrap();
    fake.create(event(
        "web.1",
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": "web"}),
        "ScalingReplicaSet",
        "Scaled up replica set web-1 from 1 to 3",
    ))
    .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The template mounts the other ConfigMap now: the edge to the first
    // goes, and the first is still in the timeline.
    fake.update(deployment(
        labels.clone(),
        3,
        "settings-v2",
        &[moved, label, scale],
    ))
    .unwrap();

    let route = "/api/v1/namespaces/shop/timeline/deployments/web?since=10m&depth=2";
    let wanted = [
        "EDGE_REMOVED - apps/Deployment shop/web uses core/ConfigMap shop/settings",
        "EDGE_ADDED - apps/Deployment shop/web uses core/ConfigMap shop/settings-v2",
        "MODIFIED kubectl-client-side-apply Deployment/web",
        "MODIFIED kubectl-edit ConfigMap/settings",
        "EVENT - Event/web.1",
        "MODIFIED kubectl Deployment/web",
        "MODIFIED kubectl-label Deployment/web",
    ];
    let complete = eventually(Duration::from_secs(20), || async {
        let got = summary(&grw.get(route).await.1);
        wanted.iter().all(|w| got.iter().any(|g| g == w))
    })
    .await;
    let (status, body) = grw.get(route).await;
    assert!(complete, "{status} {:#?}\n{body:#}", summary(&body));
    // Newest first, each with how it relates to the Deployment.
    let times: Vec<&str> = body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["time"].as_str().unwrap())
        .collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "{times:?}");
    let config_change = body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "settings" && i["type"] == "MODIFIED")
        .unwrap();
    assert_eq!(
        config_change["path"],
        json!([{"relation": "uses", "direction": "out", "object": "core/ConfigMap shop/settings"}]),
        "{config_change}"
    );
    assert!(
        config_change["diffText"]
            .as_array()
            .unwrap()
            .contains(&json!("~ /data/value: \"1\" → \"2\"")),
        "{config_change}"
    );
    let scaled = body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["who"]["manager"] == "kubectl")
        .unwrap();
    assert_eq!(scaled["who"]["subresource"], "scale", "{scaled}");
    assert!(scaled["who"].get("time").is_none(), "{scaled}");
    assert_eq!(scaled["path"], json!([]), "{scaled}");
    // The Event (watched by default), with what it says.
    let event = body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["type"] == "EVENT")
        .unwrap();
    assert_eq!(
        event["event"],
        json!({"change": "ADDED", "type": "Normal", "reason": "ScalingReplicaSet",
            "note": "Scaled up replica set web-1 from 1 to 3", "count": null,
            "reportedBy": "deployment-controller"}),
        "{event}"
    );
    assert_eq!(event["path"], json!([]), "{event}");

    // The history of the Deployment alone.
    let (status, history) = grw
        .get("/api/v1/namespaces/shop/history/deployments/web?limit=2&full=true")
        .await;
    assert_eq!(status, 200, "{history}");
    assert_eq!(history["items"].as_array().unwrap().len(), 2, "{history}");
    assert_eq!(
        history["items"][0]["object"]["spec"]["template"]["spec"]["volumes"][0]["configMap"]["name"],
        "settings-v2"
    );

    // As it was before the scale: labelled, one replica.
    let (status, then) = grw
        .get(&format!(
            "/api/v1/namespaces/shop/objects/deployments/web?asOf={before_scale}"
        ))
        .await;
    assert_eq!(status, 200, "{then}");
    assert_eq!(
        (
            then["spec"]["replicas"].as_u64(),
            then["metadata"]["labels"]["tier"].as_str()
        ),
        (Some(1), Some("front"))
    );
    // Before the journal began, and nonsense.
    let (status, body) = grw
        .get("/api/v1/namespaces/shop/objects/deployments/web?asOf=2020-01-01T00:00:00Z")
        .await;
    assert_eq!(status, 410, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("reaches back to"),
        "{body}"
    );
    let (status, body) = grw
        .get("/api/v1/namespaces/shop/objects/configmaps/nothing?asOf=2030-01-01T00:00:00Z")
        .await;
    assert_eq!(status, 404, "{body}");
    assert!(
        body["message"].as_str().unwrap().contains("never seen"),
        "{body}"
    );
    let (status, body) = grw
        .get("/api/v1/namespaces/shop/objects/deployments/web?asOf=yesterday")
        .await;
    assert_eq!(status, 400, "{body}");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("`asOf` must be an RFC 3339 time"),
        "{body}"
    );
    let (status, body) = grw.get(&format!("{route}&since=soon")).await;
    assert_eq!(status, 400, "{body}");

    // What kubectl-label changed, across the cluster.
    let (_, changes) = grw.get("/api/v1/changes?since=10m&who=kubectl-label").await;
    assert_eq!(
        summary(&changes),
        ["MODIFIED kubectl-label Deployment/web"],
        "{changes:#}"
    );
    assert_eq!(
        changes["items"][0]["changed"],
        json!(["/metadata/labels/tier"]),
        "{changes}"
    );

    // The same, printed by `grw history` and `grw timeline`.
    let (ok, history, _) = grw_command(&[
        "history", "deploy", "web", "-n", "shop", "--limit", "3", "--color", "never", "--url",
        &grw.url,
    ]);
    assert!(ok, "{history}");
    let lines: Vec<&str> = history.lines().collect();
    assert_eq!(
        lines[0], "apps/Deployment shop/web: 3 versions, newest first",
        "{history}"
    );
    assert!(
        lines
            .iter()
            .any(|l| l.contains("MODIFIED") && l.ends_with("by kubectl (Update, scale)")),
        "{history}"
    );
    assert!(lines.contains(&"    ~ /spec/replicas: 1 → 3"), "{history}");
    let (ok, timeline, _) = grw_command(&[
        "timeline",
        "deployments",
        "web",
        "--namespace",
        "shop",
        "--since",
        "10m",
        "--depth",
        "2",
        "--color",
        "always",
        "--url",
        &grw.url,
    ]);
    assert!(ok, "{timeline}");
    assert!(
        timeline.contains("\x1b[33m~ /data/value: \"1\" → \"2\"\x1b[0m"),
        "{timeline}"
    );
    assert!(
        timeline.contains("via uses → core/ConfigMap shop/settings"),
        "{timeline}"
    );
    assert!(
        timeline.contains("Scaled up replica set web-1 from 1 to 3"),
        "{timeline}"
    );
    // What the daemon refuses, and a daemon that is not there.
    let (ok, _, stderr) = grw_command(&[
        "timeline",
        "deployments",
        "web",
        "-n",
        "shop",
        "--since",
        "soon",
        "--url",
        &grw.url,
    ]);
    assert!(!ok);
    assert!(
        stderr.starts_with("grw: GRW answered 400: `since` must be"),
        "{stderr}"
    );
    let (ok, _, stderr) = grw_command(&["history", "deploy", "web", "--url", "http://127.0.0.1:9"]);
    assert!(!ok);
    assert!(
        stderr.starts_with("grw: cannot ask GRW at http://127.0.0.1:9/api/v1/history/deploy/web"),
        "{stderr}"
    );
}

/// Runs `grw ARGS`: whether it succeeded, its stdout and its stderr.
fn grw_command(args: &[&str]) -> (bool, String, String) {
    let output = std::process::Command::new(grw_e2e::daemon::grw_binary())
        .args(args)
        .env_remove("GRW_TOKEN")
        .output()
        .expect("grw runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Now as an RFC 3339 time.
fn grw_e2e_now() -> String {
    grw::time::rfc3339_millis(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap(),
    )
}

#[tokio::test]
async fn after_a_sigkill_the_journal_is_whole_and_the_time_down_is_a_gap() {
    let fake = cluster().await;
    fake.create(config_map("settings", "1", "kubectl-create"))
        .unwrap();
    let grw = start(&fake, tempfile::tempdir().unwrap(), true).await;
    let route = "/api/v1/namespaces/shop/history/configmaps/settings";
    let seen = eventually(SETTLE, || async {
        grw.get(route).await.1["items"]
            .as_array()
            .is_some_and(|i| i.len() == 1)
    })
    .await;
    assert!(seen, "{}", grw.get(route).await.1);
    fake.update(config_map("settings", "2", "kubectl-edit"))
        .unwrap();
    let seen = eventually(SETTLE, || async {
        grw.get(route).await.1["items"]
            .as_array()
            .is_some_and(|i| i.len() == 2)
    })
    .await;
    assert!(seen, "{}", grw.get(route).await.1);

    let dir = grw.kill();
    fake.update(config_map("settings", "3", "kubectl-edit"))
        .unwrap();
    let grw = start(&fake, dir, true).await;
    let whole = eventually(SETTLE, || async {
        grw.get(route).await.1["items"]
            .as_array()
            .is_some_and(|i| i.len() == 3)
    })
    .await;
    let (_, history) = grw.get(route).await;
    assert!(whole, "{history:#}");
    let newest = &history["items"][0];
    assert_eq!(
        (newest["type"].as_str(), newest["origin"].as_str()),
        (Some("MODIFIED"), Some("relist")),
        "{newest}"
    );
    assert!(
        newest["gap"]["from"].is_string() && newest["gap"]["until"].is_string(),
        "{newest}"
    );
    assert_eq!(newest["who"]["manager"], "kubectl-edit", "{newest}");
    let (_, changes) = grw.get("/api/v1/changes?since=10m").await;
    let gaps: Vec<&Value> = changes["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["type"] == "GAP")
        .collect();
    assert_eq!(gaps.len(), 1, "{changes:#}");
    assert!(
        gaps[0]["gap"]["from"].as_str() < gaps[0]["gap"]["until"].as_str(),
        "{}",
        gaps[0]
    );
}

/// `jane` may read claims and Events in `shop` only; a claim's timeline
/// reaches its volume (cluster-scoped) and the changes list spans two
/// namespaces: she is shown her part of each, an admin all of it.
#[tokio::test]
async fn a_delegated_caller_sees_only_what_it_may_read() {
    const JANE: &str = "jane-token";
    const ADMIN: &str = "admin-token";
    let fake = cluster().await;
    fake.add_token(JANE, "jane", &["developers"]);
    fake.add_token(ADMIN, "admin", &["admins"]);
    fake.grant(
        Subject::User("jane".into()),
        Rule::namespaced(
            "shop",
            &["get", "list", "watch"],
            "",
            &["persistentvolumeclaims"],
        ),
    );
    fake.grant(
        Subject::User("jane".into()),
        Rule::namespaced(
            "shop",
            &["get", "list", "watch"],
            "events.k8s.io",
            &["events"],
        ),
    );
    // The changes across the cluster are a resource of their own.
    fake.grant(
        Subject::User("jane".into()),
        Rule::cluster(&["list"], "grw.io", &["changes"]),
    );
    fake.grant(
        Subject::Group("admins".into()),
        Rule::cluster(&["*"], "*", &["*"]),
    );
    let volume = |phase: &str| {
        json!({"apiVersion": "v1", "kind": "PersistentVolume",
            "metadata": {"name": "pv-1"},
            "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                     "claimRef": {"namespace": "shop", "name": "data"}},
            "status": {"phase": phase}})
    };
    let claim = |labels: Value| {
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"namespace": "shop", "name": "data", "labels": labels},
            "spec": {"volumeName": "pv-1", "accessModes": ["ReadWriteOnce"],
                     "resources": {"requests": {"storage": "1Gi"}}}})
    };
    fake.create(volume("Available")).unwrap();
    fake.create(claim(json!({}))).unwrap();
    let other = |value: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"namespace": "other", "name": "x"}, "data": {"v": value}})
    };
    fake.create(other("1")).unwrap();

    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let config = json!({
        "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": fake.url(), "tokenFilePath": token_file},
        "initialWatchingResources": [
            {"group": "", "version": "v1", "kind": "PersistentVolumeClaim"},
            {"group": "", "version": "v1", "kind": "PersistentVolume"},
            {"group": "", "version": "v1", "kind": "ConfigMap"},
        ],
        "apiGroupsSyncIntervalSecond": 3600,
        "builtinAnalyzers": ["references"],
        "apiAuth": "delegated",
    });
    let grw = Grw::start_in(dir, config, &[]).await;
    grw.wait_ready(SETTLE).await;

    fake.update(volume("Bound")).unwrap();
    fake.update(claim(json!({"team": "shop"}))).unwrap();
    fake.update(other("2")).unwrap();
    fake.create(event(
        "data.1",
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "namespace": "shop", "name": "data"}),
        "ProvisioningSucceeded",
        "Successfully provisioned volume pv-1",
    ))
    .unwrap();

    let http = reqwest::Client::new();
    let ask = |token: &'static str, path: &'static str| {
        let request = http.get(format!("{}{path}", grw.url)).bearer_auth(token);
        async move {
            let response = request.send().await.expect("request");
            let status = response.status().as_u16();
            (
                status,
                response.json::<Value>().await.unwrap_or(Value::Null),
            )
        }
    };
    let timeline = "/api/v1/namespaces/shop/timeline/persistentvolumeclaims/data?since=10m";
    let everything = [
        "MODIFIED - PersistentVolumeClaim/data",
        "MODIFIED - PersistentVolume/pv-1",
        "EVENT - Event/data.1",
    ];
    let complete = eventually(Duration::from_secs(20), || async {
        let got = summary(&ask(ADMIN, timeline).await.1);
        everything.iter().all(|w| got.iter().any(|g| g == w))
    })
    .await;
    let (status, admin) = ask(ADMIN, timeline).await;
    assert!(complete, "{status} {admin:#}");
    let volume_change = admin["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == "pv-1" && i["type"] == "MODIFIED")
        .unwrap();
    assert_eq!(
        volume_change["path"],
        json!([{"relation": "bound-to", "direction": "out", "object": "core/PersistentVolume -/pv-1"}])
    );

    // Jane: the claim and its Event; not the volume, nor the edge to it.
    let (status, jane) = ask(JANE, timeline).await;
    assert_eq!(status, 200, "{jane}");
    let got = summary(&jane);
    assert!(got.contains(&everything[0].to_string()), "{jane:#}");
    assert!(got.contains(&everything[2].to_string()), "{jane:#}");
    assert!(
        !got.iter().any(|g| g.contains("pv-1")),
        "jane is shown the volume: {jane:#}"
    );
    assert_eq!(
        jane["related"],
        json!([{"object": "core/PersistentVolumeClaim shop/data", "path": []}]),
        "{jane:#}"
    );

    // Across the cluster: hers are the claim's and the Event's.
    let (status, changes) = ask(JANE, "/api/v1/changes?since=10m").await;
    assert_eq!(status, 200, "{changes}");
    let mut seen: Vec<String> = changes["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            format!(
                "{} {}/{}",
                i["kind"].as_str().unwrap_or("-"),
                i["namespace"].as_str().unwrap_or(""),
                i["name"].as_str().unwrap_or("")
            )
        })
        .collect();
    seen.sort();
    seen.dedup();
    assert_eq!(
        seen,
        ["Event shop/data.1", "PersistentVolumeClaim shop/data"],
        "{changes:#}"
    );
    let (_, all) = ask(ADMIN, "/api/v1/changes?since=10m").await;
    assert!(
        all["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["namespace"] == "other" && i["name"] == "x"),
        "{all:#}"
    );
    // The object itself is checked as a `get` of it.
    let (status, refused) = ask(JANE, "/api/v1/timeline/persistentvolumes/pv-1").await;
    assert_eq!(status, 403, "{refused}");
}

/// A real API server's watch events of one Deployment's life
/// (`tests/data/kube-api/changes`: `kubectl apply`, `label`, `scale`, `set
/// image`, a `patch` of the ConfigMap it mounts, `annotate`, a server-side
/// apply, with the controllers' ReplicaSets, Pods, status updates and
/// Events), up to its deletion, replayed by the fake API server: the
/// Deployment's `depth=2` timeline has each command's change by its
/// manager, its ReplicaSets and Pods through `owns`, the ConfigMap's patch
/// through `uses`, and the Events about it.
#[tokio::test]
async fn a_real_deployments_life_reads_as_its_timeline() {
    let fake = cluster().await;
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let grw = Grw::start_in(
        dir,
        json!({
            "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": fake.url(), "tokenFilePath": token_file},
            "initialWatchingResources": [
                {"group": "apps", "version": "v1", "kind": "Deployment"},
                {"group": "apps", "version": "v1", "kind": "ReplicaSet"},
                {"group": "", "version": "v1", "kind": "Pod"},
                {"group": "", "version": "v1", "kind": "ConfigMap"},
            ],
            "apiGroupsSyncIntervalSecond": 3600,
            "builtinAnalyzers": ["ownership", "references"],
        }),
        &[],
    )
    .await;
    grw.wait_ready(SETTLE).await;
    let settled = eventually(SETTLE, || async {
        grw.get("/api/v1/relations").await.1["settled"] == true
    })
    .await;
    assert!(settled, "{}", grw.get("/api/v1/relations").await.1);

    // Every watch's events in the order the API server made them, until
    // `kubectl delete` (resourceVersion 313).
    let recorded = concat!(env!("CARGO_MANIFEST_DIR"), "/data/kube-api/changes");
    let mut events: Vec<(u64, String)> = Vec::new();
    for file in ["deployments", "replicasets", "pods", "configmaps", "events"] {
        let text = std::fs::read_to_string(format!("{recorded}/{file}.jsonl")).unwrap();
        for line in text.lines() {
            let event: Value = serde_json::from_str(line).unwrap();
            let rv = event["object"]["metadata"]["resourceVersion"]
                .as_str()
                .and_then(|rv| rv.parse().ok())
                .unwrap();
            if rv < 313 {
                events.push((rv, line.to_string()));
            }
        }
    }
    events.sort_by_key(|(rv, _)| *rv);
    let replay = tempfile::NamedTempFile::new().unwrap();
    let lines: Vec<&str> = events.iter().map(|(_, line)| line.as_str()).collect();
    std::fs::write(replay.path(), lines.join("\n")).unwrap();
    assert_eq!(
        fake.load_recording(replay.path(), None).unwrap(),
        events.len()
    );

    let route = "/api/v1/namespaces/default/timeline/deployments/shop?since=1h&depth=2";
    let wanted = [
        "ADDED kubectl-client-side-apply Deployment/shop",
        "MODIFIED kubectl-label Deployment/shop",
        "MODIFIED kubectl Deployment/shop",
        "MODIFIED kubectl-set Deployment/shop",
        "MODIFIED kubectl-annotate Deployment/shop",
        "MODIFIED platform-tool Deployment/shop",
        "MODIFIED kube-controller-manager Deployment/shop",
        "ADDED kube-controller-manager ReplicaSet/shop-7b9f7bdf5c",
        "ADDED kube-controller-manager Pod/shop-7b9f7bdf5c-ptr57",
        "MODIFIED kubectl-patch ConfigMap/shop-config",
    ];
    let complete = eventually(Duration::from_secs(30), || async {
        let got = summary(&grw.get(route).await.1);
        wanted.iter().all(|w| got.iter().any(|g| g == w))
    })
    .await;
    let (status, body) = grw.get(route).await;
    assert!(complete, "{status} {:#?}", summary(&body));
    let items = body["items"].as_array().unwrap();
    let find = |kind: &str, name: &str, change: &str| {
        items
            .iter()
            .find(|i| i["kind"] == kind && i["name"] == name && i["type"] == change)
            .unwrap_or_else(|| panic!("no {change} of {kind} {name} in {body:#}"))
    };
    let relations = |item: &Value| -> Vec<String> {
        item["path"]
            .as_array()
            .unwrap()
            .iter()
            .map(|step| step["relation"].as_str().unwrap().to_string())
            .collect()
    };
    let patched = find("ConfigMap", "shop-config", "MODIFIED");
    assert_eq!(relations(patched), ["uses"], "{patched}");
    assert!(
        patched["diffText"]
            .as_array()
            .unwrap()
            .contains(&json!("~ /data/mode: \"one\" → \"two\"")),
        "{patched}"
    );
    let replica_set = find("ReplicaSet", "shop-7b9f7bdf5c", "ADDED");
    assert_eq!(relations(replica_set), ["owns"], "{replica_set}");
    // Two steps away either way: through its ReplicaSet, or through the
    // ConfigMap both its template and the Deployment's use. The path
    // through owners is the one shown.
    let pod = find("Pod", "shop-7b9f7bdf5c-ptr57", "ADDED");
    assert_eq!(relations(pod), ["owns", "owns"], "{pod}");
    let scaled = items
        .iter()
        .find(|i| i["who"]["manager"] == "kubectl")
        .unwrap();
    assert_eq!(
        (&scaled["who"]["subresource"], scaled["who"].get("time")),
        (&json!("scale"), None),
        "{scaled}"
    );
    assert!(
        scaled["diffText"]
            .as_array()
            .unwrap()
            .contains(&json!("~ /spec/replicas: 1 → 2")),
        "{scaled}"
    );
    // The deployment controller's Events about it, and the ReplicaSet
    // controller's about its ReplicaSets.
    let reasons: Vec<(&str, Vec<String>)> = items
        .iter()
        .filter(|i| i["type"] == "EVENT")
        .map(|i| (i["event"]["reason"].as_str().unwrap(), relations(i)))
        .collect();
    let scaling = reasons
        .iter()
        .filter(|(reason, path)| *reason == "ScalingReplicaSet" && path.is_empty())
        .count();
    let created = reasons
        .iter()
        .filter(|(reason, path)| *reason == "SuccessfulCreate" && path == &["owns"])
        .count();
    assert_eq!((scaling, created), (3, 3), "{reasons:?}");
}
