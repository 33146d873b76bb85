//! Every numeric query parameter of every route, sent values a client
//! could send by mistake or on purpose (zero, negative, the edges of
//! `u32` and `u64`, one past `u64`, a float that overflows, words,
//! nothing), to the real daemon serving the bundled recording: each answer
//! is a 2xx, or a 4xx whose JSON body says what was wrong (or, for a
//! `resourceVersion` newer than the cache's, the API server's own 504
//! `ResourceVersionTooLarge`), and the daemon never panics.

use std::time::Duration;

use grw_e2e::daemon::{Grw, bundled_recording};
use serde_json::Value;

/// The values sent to each parameter.
const VALUES: [&str; 9] = [
    "0",
    "-1",
    "1",
    "4294967295",
    "18446744073709551615",
    "18446744073709551616",
    "1e999",
    "abc",
    "",
];

/// A route, the query it needs besides the parameter (`&` is added), and
/// its numeric parameters. Names and namespaces are the recording's.
const ROUTES: [(&str, &str, &str, &[&str]); 14] = [
    // Native lists, and watches.
    ("GET", "/api/v1/objects/pods", "", &["limit"]),
    (
        "GET",
        "/api/v1/namespaces/shop/objects/pods",
        "ownerKind=Deployment&ownerName=frontend",
        &["limit", "ownerDepth"],
    ),
    (
        "GET",
        "/api/v1/namespaces/shop/objects/pods",
        "watch=true",
        &["timeoutSeconds", "resourceVersion", "limit"],
    ),
    (
        "GET",
        "/api/v1/objects/deployments.apps",
        "watch=true&ownerKind=Deployment&ownerName=frontend",
        &["ownerDepth"],
    ),
    // Relations.
    (
        "GET",
        "/api/v1/namespaces/shop/relations/deployments/frontend",
        "",
        &["depth", "limit"],
    ),
    (
        "GET",
        "/api/v1/relations/nodes/node-a",
        "direction=in",
        &["depth", "limit"],
    ),
    // Dead letters of a subscription that does not exist.
    (
        "DELETE",
        "/api/v1/subscriptions/none/dead-letters",
        "",
        &["seq"],
    ),
    // The Kubernetes API: lists, watches, one object, tables.
    (
        "GET",
        "/kube/api/v1/pods",
        "",
        &["limit", "timeoutSeconds", "resourceVersion"],
    ),
    (
        "GET",
        "/kube/api/v1/namespaces/shop/pods",
        "resourceVersionMatch=NotOlderThan",
        &["resourceVersion", "limit"],
    ),
    (
        "GET",
        "/kube/api/v1/namespaces/shop/pods",
        "watch=true",
        &["timeoutSeconds", "resourceVersion", "limit"],
    ),
    (
        "GET",
        "/kube/api/v1/watch/namespaces/shop/pods",
        "",
        &["timeoutSeconds", "resourceVersion"],
    ),
    (
        "GET",
        "/kube/apis/apps/v1/namespaces/shop/deployments/frontend",
        "",
        &["resourceVersion"],
    ),
    (
        "GET",
        "/kube/apis/apps/v1/deployments",
        "ownerKind=Deployment&ownerName=frontend",
        &["limit", "ownerDepth"],
    ),
    (
        "GET",
        "/kube/api/v1/nodes",
        "",
        &["limit", "resourceVersion"],
    ),
];

/// What was wrong with one answer, if anything.
async fn check(http: &reqwest::Client, grw: &Grw, method: &str, target: &str) -> Option<String> {
    let method: reqwest::Method = method.parse().unwrap();
    let response = match http
        .request(method, format!("{}{target}", grw.url))
        .header("accept", "application/json")
        .send()
        .await
    {
        Ok(response) => response,
        Err(e) => return Some(format!("no answer: {e}")),
    };
    let status = response.status().as_u16();
    if response.headers().get("transfer-encoding").is_some() && status < 300 {
        // A stream: it must keep going (or end) without the connection
        // breaking; a quarter of a second of it is enough.
        let mut response = response;
        let read = tokio::time::timeout(Duration::from_millis(250), async {
            loop {
                match response.chunk().await {
                    Ok(Some(_)) => continue,
                    Ok(None) => return Ok(()),
                    Err(e) => return Err(e),
                }
            }
        })
        .await;
        return match read {
            Ok(Err(e)) => Some(format!("{status}, then the stream broke: {e}")),
            _ => None,
        };
    }
    let body = response.bytes().await.unwrap_or_default();
    let json: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    // The API server's answer to a resourceVersion newer than it has,
    // after waiting for it a while: 504, retry after a second.
    let too_large = json["details"]["causes"][0]["reason"] == "ResourceVersionTooLarge";
    match status {
        200..=299 if json.is_object() => None,
        400..=499 if json["message"].as_str().is_some_and(|m| !m.is_empty()) => None,
        504 if target.starts_with("/kube/") && too_large => None,
        _ => Some(format!("{status} {}", String::from_utf8_lossy(&body))),
    }
}

#[tokio::test]
async fn every_numeric_parameter_of_every_route_is_answered_2xx_or_a_clear_4xx() {
    let grw = Grw::start(
        serde_json::json!({"minLogLevel": "info"}),
        &["--replay", bundled_recording().to_str().unwrap()],
    )
    .await;
    grw.wait_ready(Duration::from_secs(60)).await;
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(30))
        .build()
        .unwrap();
    let mut wrong = Vec::new();
    let mut sent = 0;
    for (method, path, extra, params) in ROUTES {
        for param in params {
            for value in VALUES {
                let query = match extra {
                    "" => format!("{param}={value}"),
                    extra => format!("{extra}&{param}={value}"),
                };
                let target = format!("{path}?{query}");
                sent += 1;
                if let Some(why) = check(&http, &grw, method, &target).await {
                    wrong.push(format!("{method} {target}: {why}"));
                }
            }
        }
    }
    assert!(sent > 200, "{sent}");
    assert!(
        wrong.is_empty(),
        "{} wrong answers:\n{}",
        wrong.len(),
        wrong.join("\n")
    );
    let logs = grw.logs();
    assert!(!logs.contains("panicked"), "the daemon panicked:\n{logs}");
    // And it still answers.
    assert_eq!(grw.get("/readyz").await.0, 200);
}
