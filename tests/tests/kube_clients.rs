//! The official Kubernetes client libraries for Python and JavaScript read
//! through GRW as they read an API server, with nothing but the kubeconfig's
//! `server` and certificate authority changed: over GRW's TLS listener,
//! each with a user's token whose rights GRW asks the API server about
//! (`delegated`), as in a cluster. Lists, gets, typed errors, paging,
//! custom resources, a watch and an informer seeing a change. The scripts
//! are in `tests/clients/`; the clients are installed by `tests/setup.sh`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use grw_e2e::daemon::{Grw, bundled_recording};
use grw_e2e::fake_api::{FakeApiOptions, FakeApiServer, Rule, Subject};
use grw_e2e::tls::certificates;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{ChildStdout, Command};

/// GRW's own token, for the API server.
const TOKEN: &str = "kube-clients-token";
/// The clients' user's.
const READER: &str = "reader-token";
const NAMESPACE: &str = "shop";

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Where `tests/setup.sh` put the Python and JavaScript toolchains.
fn toolchains() -> PathBuf {
    std::env::var_os("GRW_TOOLCHAINS")
        .map_or_else(|| workspace().join("target/toolchains"), PathBuf::from)
}

/// The fake API server with the recording, a user `reader` who may read
/// everything, and GRW with a TLS listener: GRW, its TLS port and the
/// certificate authority's file.
async fn cluster_and_grw() -> (FakeApiServer, Grw, u16, PathBuf) {
    let fake = FakeApiServer::start(FakeApiOptions {
        token: Some(TOKEN.into()),
        ..FakeApiOptions::default()
    })
    .await;
    fake.load_recording(&bundled_recording(), None).unwrap();
    fake.add_token(READER, "reader", &["readers"]);
    // And delete Pods: allowed, a delete through GRW still gets 405, as
    // GRW never writes.
    fake.grant(
        Subject::Group("readers".into()),
        Rule::cluster(&["get", "list", "watch"], "*", &["*"]),
    );
    fake.grant(
        Subject::Group("readers".into()),
        Rule::cluster(&["delete"], "", &["pods"]),
    );
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, TOKEN).unwrap();
    let (ca, cert, key) = certificates("the clients' CA");
    let (ca_file, cert_file, key_file) = (
        dir.path().join("ca.crt"),
        dir.path().join("tls.crt"),
        dir.path().join("tls.key"),
    );
    std::fs::write(&ca_file, ca).unwrap();
    std::fs::write(&cert_file, cert).unwrap();
    std::fs::write(&key_file, key).unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let config = json!({
        "k8sClientConfig": {"authType": "BearerToken", "apiServerUrl": fake.url(), "tokenFilePath": token_file},
        "initialWatchingResources": [{"group": "", "version": "v1", "kind": "Pod"}],
        "apiGroupsSyncIntervalSecond": 3600,
        "builtinAnalyzers": false,
        "apiAuth": "delegated",
        "tlsListener": {"address": "127.0.0.1", "port": port, "certFile": cert_file, "keyFile": key_file},
    });
    let grw = Grw::start_in(dir, config, &[]).await;
    grw.wait_ready(Duration::from_secs(60)).await;
    (fake, grw, port, ca_file)
}

/// A kubeconfig whose cluster is GRW's Kubernetes API on its TLS
/// listener, trusted through `ca`, with the reader's token.
fn kubeconfig(grw: &Grw, port: u16, ca: &Path) -> PathBuf {
    let path = grw.dir.path().join("kubeconfig");
    let config = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: grw\n  cluster:\n    server: https://localhost:{port}/kube\n    certificate-authority: {}\ncontexts:\n- name: grw\n  context: {{cluster: grw, user: reader}}\ncurrent-context: grw\nusers:\n- name: reader\n  user: {{token: {READER}}}\n",
        ca.display()
    );
    std::fs::write(&path, config).unwrap();
    path
}

/// A client script's steps, one JSON line each.
struct Steps {
    lines: Lines<BufReader<ChildStdout>>,
    _child: tokio::process::Child,
}

impl Steps {
    fn spawn(mut command: Command) -> Steps {
        let mut child = command
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("the client runs (run tests/setup.sh)");
        let stdout = child.stdout.take().unwrap();
        Steps {
            lines: BufReader::new(stdout).lines(),
            _child: child,
        }
    }

    /// The next step, which must be `step`.
    async fn next(&mut self, step: &str) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(90), self.lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("no step {step:?} within 90 s"))
            .unwrap()
            .unwrap_or_else(|| panic!("the client ended before step {step:?}"));
        let value: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(value["step"], step, "{line}");
        value
    }
}

fn strings(value: &Value) -> BTreeSet<String> {
    value
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

fn frontend_pods(fake: &FakeApiServer) -> BTreeSet<String> {
    fake.objects("v1", "Pod")
        .iter()
        .filter(|p| {
            p["metadata"]["namespace"] == NAMESPACE
                && p["metadata"]["labels"]["app.kubernetes.io/name"] == "frontend"
        })
        .map(|p| p["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

fn late_pod() -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"namespace": NAMESPACE, "name": "late", "labels": {"app.kubernetes.io/name": "late"}},
        "spec": {"containers": [{"name": "app", "image": "shop:1"}]},
        "status": {"phase": "Pending"}})
}

#[tokio::test]
async fn the_python_client_reads_lists_pages_and_watches_through_grw() {
    let (fake, grw, port, ca) = cluster_and_grw().await;
    let mut command = Command::new(toolchains().join("python/bin/python"));
    command
        .arg(workspace().join("tests/clients/reads.py"))
        .arg(kubeconfig(&grw, port, &ca))
        .arg(NAMESPACE)
        .env_remove("KUBECONFIG");
    let mut steps = Steps::spawn(command);

    let list = steps.next("list").await;
    let expected = frontend_pods(&fake);
    assert!(!expected.is_empty());
    assert_eq!(strings(&list["names"]), expected);
    let get = steps.next("get").await;
    assert!(expected.contains(get["name"].as_str().unwrap()));
    assert_eq!(get["phase"], "Running");
    // The client's typed error carries the Status reason.
    let missing = steps.next("missing").await;
    assert_eq!(missing["status"], 404);
    assert_eq!(missing["reason"], "NotFound");
    assert_eq!(steps.next("delete").await["status"], 405);
    // Pages of 10, followed by their continue tokens, add up to every Pod.
    let all: BTreeSet<String> = fake
        .objects("v1", "Pod")
        .iter()
        .map(|p| {
            format!(
                "{}/{}",
                p["metadata"]["namespace"].as_str().unwrap(),
                p["metadata"]["name"].as_str().unwrap()
            )
        })
        .collect();
    assert!(all.len() > 10, "more than one page");
    assert_eq!(strings(&steps.next("pages").await["names"]), all);
    assert_eq!(
        strings(&steps.next("custom").await["names"]),
        BTreeSet::from(["shop-gateway".to_string()])
    );

    steps.next("watching").await;
    fake.create(late_pod()).unwrap();
    let watched = steps.next("watched").await;
    assert_eq!(watched["name"], "late", "{watched}");
}

#[tokio::test]
async fn the_javascript_client_lists_and_its_informer_follows_changes_through_grw() {
    let (fake, grw, port, ca) = cluster_and_grw().await;
    // Node resolves the client from the script's directory: the script runs
    // beside a link to the installed packages.
    let dir = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(
        toolchains().join("js/node_modules"),
        dir.path().join("node_modules"),
    )
    .unwrap();
    let script = dir.path().join("reads.mjs");
    std::fs::copy(workspace().join("tests/clients/reads.mjs"), &script).unwrap();
    let mut command = Command::new("node");
    command
        .arg(&script)
        .arg(kubeconfig(&grw, port, &ca))
        .arg(NAMESPACE)
        .env_remove("KUBECONFIG");
    let mut steps = Steps::spawn(command);

    let list = steps.next("list").await;
    assert_eq!(strings(&list["names"]), frontend_pods(&fake));
    let missing = steps.next("missing").await;
    assert_eq!(missing["status"], 404);
    assert_eq!(missing["reason"], "NotFound");
    let watching = steps.next("watching").await;
    let in_namespace = fake
        .objects("v1", "Pod")
        .iter()
        .filter(|p| p["metadata"]["namespace"] == NAMESPACE)
        .count();
    assert_eq!(watching["cached"], in_namespace);
    fake.create(late_pod()).unwrap();
    assert_eq!(steps.next("watched").await["name"], "late");
}
