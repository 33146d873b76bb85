//! GRW's own API, `/api/v1/...`, against the real daemon replaying the
//! bundled recording.

use std::time::{Duration, Instant};

use grw_e2e::daemon::Grw;
use serde_json::json;

/// The daemon replaying the recording, event streams ending within 2 s.
async fn replay() -> Grw {
    Grw::replaying_in(
        tempfile::tempdir().expect("a temporary directory"),
        json!({"watchStreamMaxSeconds": 2}),
    )
    .await
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
