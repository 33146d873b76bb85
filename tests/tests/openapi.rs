//! GRW's OpenAPI document, `/api/v1/openapi.json`, against the daemon it
//! describes: schemathesis (the version `tests/setup.sh` pins) sends every
//! operation valid and invalid requests to the real daemon replaying the
//! bundled recording, and checks every answer: no 5xx, the status codes,
//! content types, headers and bodies the document promises, invalid
//! requests refused, valid ones accepted, requests without the bearer
//! token refused. Its options, and what the
//! document cannot say, are in `tests/data/schemathesis/`.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use grw_e2e::daemon::Grw;
use serde_json::{Value, json};

/// Test cases per operation in the fuzzing phase (the examples and
/// coverage phases add their own): about 6,000 requests, 75 s on two
/// cores.
const EXAMPLES: &str = "100";

/// Longest the run may take before it counts as hung.
const RUN_LIMIT: Duration = Duration::from_secs(600);

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The schemathesis `tests/setup.sh` installed, checked to be the version
/// it pins.
fn schemathesis() -> PathBuf {
    let setup =
        std::fs::read_to_string(workspace().join("tests/setup.sh")).expect("tests/setup.sh");
    let pinned = setup
        .lines()
        .find_map(|l| l.strip_prefix("schemathesis="))
        .expect("tests/setup.sh pins schemathesis");
    let bin = std::env::var_os("GRW_TOOLCHAINS")
        .map_or_else(|| workspace().join("target/toolchains"), PathBuf::from)
        .join("schemathesis/bin/schemathesis");
    let found = Command::new(&bin)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    assert_eq!(
        found,
        format!("schemathesis, version {pinned}"),
        "schemathesis {pinned} is needed at {}: run tests/setup.sh",
        bin.display()
    );
    bin
}

/// The daemon replaying the recording, event streams ending within 2 s
/// (the hooks ask for none; this bounds one that slips through).
async fn replay() -> Grw {
    Grw::replaying_in(
        tempfile::tempdir().expect("a temporary directory"),
        json!({"watchStreamMaxSeconds": 2}),
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn schemathesis_finds_nothing_the_document_does_not_say() {
    let bin = schemathesis();
    // With `apiAuth: token`, so that the run checks what the document says
    // of authentication too: every operation but the open ones refuses a
    // request without the token, or with another.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let token = "fuzzing-token";
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, token).expect("writing the token");
    let grw = Grw::replaying_in(
        dir,
        json!({"watchStreamMaxSeconds": 2, "apiAuth": "token", "apiTokenFile": token_file}),
    )
    .await;
    let served = grw.get_raw("/api/v1/openapi.json").await;
    assert_eq!(served.status(), 200);
    assert_eq!(served.headers()["content-type"], "application/json");
    let served = served.bytes().await.expect("the document");
    let document: Value = serde_json::from_slice(&served).expect("the document is JSON");
    let operations: usize = document["paths"]
        .as_object()
        .expect("paths")
        .values()
        .map(|item| item.as_object().map_or(0, |m| m.len()))
        .sum();

    let config = workspace().join("tests/data/schemathesis");
    // Its example database and any report stay out of the tree. The
    // document is handed over as a file: read from its URL, it would not
    // test the operation that serves it.
    let scratch = tempfile::tempdir().expect("a temporary directory");
    let file = scratch.path().join("openapi.json");
    std::fs::write(&file, &served).expect("writing the document");
    let mut child = Command::new(&bin)
        .current_dir(scratch.path())
        .env("PYTHONPATH", &config)
        .env("SCHEMATHESIS_HOOKS", "hooks")
        .arg("--config-file")
        .arg(config.join("schemathesis.toml"))
        .arg("run")
        .arg(&file)
        .args(["--url", &grw.url])
        .args(["--header", &format!("Authorization: Bearer {token}")])
        .args(["--checks", "all", "--mode", "all"])
        .args(["--phases", "examples,coverage,fuzzing"])
        .args(["--max-examples", EXAMPLES])
        // One worker: with two, Hypothesis (under Python 3.11) now and
        // then fails in its own code, reading a strategy's source from two
        // threads at once (`AST constructor recursion depth mismatch`).
        .args(["--workers", "1", "--request-timeout", "10"])
        .args(["--no-color", "--output-truncate", "false"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("schemathesis starts");
    let started = Instant::now();
    let (status, text) = tokio::task::spawn_blocking(move || {
        // Read while it runs (its output passes a pipe's buffer); stopped
        // past the limit.
        let read = |mut pipe: Box<dyn std::io::Read + Send>| {
            std::thread::spawn(move || {
                let mut text = String::new();
                let _ = pipe.read_to_string(&mut text);
                text
            })
        };
        let stdout = read(Box::new(child.stdout.take().expect("stdout")));
        let stderr = read(Box::new(child.stderr.take().expect("stderr")));
        let status = loop {
            if let Some(status) = child.try_wait().expect("schemathesis runs") {
                break Some(status);
            }
            if started.elapsed() > RUN_LIMIT {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            std::thread::sleep(Duration::from_millis(200));
        };
        let text = format!(
            "{}{}",
            stdout.join().unwrap_or_default(),
            stderr.join().unwrap_or_default()
        );
        (status, text)
    })
    .await
    .expect("the run's thread");
    let Some(status) = status else {
        panic!("schemathesis did not end within {RUN_LIMIT:?}:\n{text}");
    };
    assert!(
        status.success(),
        "schemathesis failed ({status}, after {:?}):\n{text}\n--- GRW's log ---\n{}",
        started.elapsed(),
        grw.logs()
    );
    let tested = format!("Tested: {operations}");
    assert!(
        text.contains(&format!("Selected: {operations}/{operations}")) && text.contains(&tested),
        "not every one of the {operations} operations was tested:\n{text}"
    );
    // The counts and the summary line, for the test's log.
    let summary = text.find("Test cases:").map_or("", |at| &text[at..]);
    println!("{}", summary.trim_end());
}

/// A replay has no API server to fill a watch a query would start: the
/// query is refused at once, not after the sync timeout (30 s).
#[tokio::test]
async fn a_replay_refuses_a_new_watch_at_once() {
    let grw = replay().await;
    let started = Instant::now();
    let (status, body) = grw
        .get("/api/v1/namespaces/shop/objects/deployments?dedicated=true")
        .await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (503, Some("NoApiServer")),
        "{body}"
    );
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.contains("apps/v1/Deployment")),
        "{body}"
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    // What the recording's watches hold is still answered.
    let (status, body) = grw.get("/api/v1/namespaces/shop/objects/deployments").await;
    assert_eq!(status, 200, "{body}");
}

/// With the journal off, its routes answer 404 `NoJournal`, a status the
/// document lists for each of them.
#[tokio::test]
async fn with_the_journal_off_its_routes_answer_a_documented_404() {
    let grw = Grw::replaying_in(
        tempfile::tempdir().expect("a temporary directory"),
        json!({"journal": {"enabled": false}}),
    )
    .await;
    let (_, document) = grw.get("/api/v1/openapi.json").await;
    for (path, template) in [
        ("/api/v1/journal", "/api/v1/journal"),
        ("/api/v1/changes?since=1h", "/api/v1/changes"),
        (
            "/api/v1/namespaces/shop/history/deployments/frontend",
            "/api/v1/namespaces/{namespace}/history/{kind}/{name}",
        ),
        (
            "/api/v1/namespaces/shop/timeline/deployments/frontend",
            "/api/v1/namespaces/{namespace}/timeline/{kind}/{name}",
        ),
    ] {
        let (status, body) = grw.get(path).await;
        assert_eq!(
            (status, body["reason"].as_str()),
            (404, Some("NoJournal")),
            "{path}: {body}"
        );
        assert!(
            document["paths"][template]["get"]["responses"]["404"].is_object(),
            "the document lists no 404 for GET {template}"
        );
    }
}

/// A path parameter that is not UTF-8 once percent-decoded is refused in
/// the API's one error shape, as the document says, not in axum's plain
/// text.
#[tokio::test]
async fn a_path_parameter_that_is_not_utf8_is_refused_as_a_problem() {
    let grw = replay().await;
    for (path, parameter) in [
        ("/api/v1/objects/%FF", "kind"),
        ("/api/v1/namespaces/%FF/objects/pods", "namespace"),
        ("/api/v1/namespaces/shop/relations/pods/%FF", "name"),
        ("/api/v1/plugins/%FF", "name"),
        ("/api/v1/subscriptions/%C3/dead-letters", "name"),
    ] {
        let response = grw.get_raw(path).await;
        assert_eq!(response.status(), 400, "{path}");
        assert_eq!(
            response.headers()["content-type"],
            "application/json",
            "{path}"
        );
        let body: Value = response.json().await.expect("a JSON body");
        assert_eq!(
            (body["code"].as_u64(), body["reason"].as_str()),
            (Some(400), Some("InvalidPath")),
            "{path}: {body}"
        );
        assert_eq!(
            body["message"].as_str(),
            Some(format!("Invalid UTF-8 in `{parameter}`").as_str()),
            "{path}"
        );
    }
}
