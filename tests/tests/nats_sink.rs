//! The NATS JetStream sink against a real `nats-server`: what the stream
//! holds, de-duplication, a server that dies and comes back, a server that is
//! down at start, a lost stream, refusals, and invalid settings.

use std::time::{Duration, Instant};

use async_nats::jetstream::message::StreamMessage;
use async_nats::jetstream::stream;
use grw::config::nats::NatsSinkConfig;
use grw::error::Report;
use grw::gvk::Gvk;
use grw::notify::nats::NatsSink;
use grw::notify::{Delivery, SendError};
use grw_e2e::nats::NatsServer;
use serde_json::json;

/// Bounds every wait so that a bug fails the test instead of hanging it; not
/// a measurement.
const PATIENCE: Duration = Duration::from_secs(60);

fn config(url: &str) -> NatsSinkConfig {
    serde_json::from_value(json!({"url": url, "ackTimeoutSecond": 2})).unwrap()
}

fn delivery(seq: u64, gvk: Gvk, namespace: &str, name: &str) -> Delivery {
    Delivery {
        seq,
        id: format!("uid-{name}/{seq}/ADDED"),
        event_type: "ADDED".to_string(),
        gvk,
        namespace: namespace.to_string(),
        name: name.to_string(),
        enqueued_ms: 1_700_000_000_000,
        payload: json!({"type": "ADDED", "object": {"metadata": {"name": name}}})
            .to_string()
            .into_bytes(),
        attributes: Vec::new(),
    }
}

fn pod(seq: u64) -> Delivery {
    delivery(
        seq,
        Gvk::new("", "v1", "Pod"),
        "shop",
        &format!("web-{seq}"),
    )
}

/// Awaits one send, failing the test if it hangs.
async fn bounded(sink: &NatsSink, delivery: &Delivery) -> Result<(), SendError> {
    tokio::time::timeout(PATIENCE, sink.send(delivery))
        .await
        .expect("send returns instead of hanging")
}

/// Sends again after each `Retry`, as the outbox does, until the sink takes
/// the delivery (`Ok`) or rejects it (`Err` with the reason).
async fn send_until_final(sink: &NatsSink, delivery: &Delivery) -> Result<(), String> {
    let deadline = Instant::now() + PATIENCE;
    loop {
        match bounded(sink, delivery).await {
            Ok(()) => return Ok(()),
            Err(SendError::Reject(reason)) => return Err(Report(&reason).to_string()),
            Err(SendError::Retry { reason, .. }) => {
                assert!(Instant::now() < deadline, "still retrying: {reason}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

async fn send_until_taken(sink: &NatsSink, delivery: &Delivery) {
    if let Err(reason) = send_until_final(sink, delivery).await {
        panic!("delivery {} rejected: {reason}", delivery.id);
    }
}

fn header(message: &StreamMessage, name: &str) -> Option<String> {
    message.headers.get(name).map(|v| v.as_str().to_string())
}

/// The `Nats-Msg-Id` of each stored message, in stream order.
async fn stored_ids(server: &NatsServer, stream: &str) -> Vec<String> {
    server
        .stream_messages(stream)
        .await
        .iter()
        .map(|m| header(m, "Nats-Msg-Id").unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn publishes_deliveries_with_subjects_headers_and_bodies() {
    let server = NatsServer::start().await;
    // What the daemon gives the sink with `consoleUrl:
    // "https://grw.example.com/"`.
    let sink = NatsSink::connect(config(&server.url()))
        .await
        .unwrap()
        .with_console(Some("https://grw.example.com".into()));
    let deliveries = [
        pod(1),
        delivery(2, Gvk::new("", "v1", "Node"), "", "node-a"),
        delivery(
            3,
            Gvk::new("networking.istio.io", "v1beta1", "VirtualService"),
            "mesh",
            "reviews",
        ),
    ];
    for delivery in &deliveries {
        send_until_taken(&sink, delivery).await;
    }

    let info = server
        .jetstream()
        .await
        .get_stream("GRW")
        .await
        .expect("the sink created the stream")
        .cached_info()
        .clone();
    assert_eq!(info.config.subjects, ["grw.*.*.*.*"]);
    let messages = server.stream_messages("GRW").await;
    let subjects: Vec<&str> = messages.iter().map(|m| m.subject.as_str()).collect();
    assert_eq!(
        subjects,
        [
            "grw.core.v1.Pod.shop",
            "grw.core.v1.Node._",
            "grw.networking_istio_io.v1beta1.VirtualService.mesh",
        ]
    );
    for (message, delivery) in messages.iter().zip(&deliveries) {
        assert_eq!(message.payload.as_ref(), delivery.payload.as_slice());
        assert_eq!(header(message, "Nats-Msg-Id").unwrap(), delivery.id);
        assert_eq!(header(message, "GRW-Event-Type").unwrap(), "ADDED");
        assert_eq!(header(message, "GRW-Kind").unwrap(), delivery.gvk.kind);
        assert_eq!(
            header(message, "GRW-Version").unwrap(),
            delivery.gvk.version
        );
        assert_eq!(header(message, "GRW-Name").unwrap(), delivery.name);
        assert_eq!(header(message, "Content-Type").unwrap(), "application/json");
    }
    let groups: Vec<_> = messages.iter().map(|m| header(m, "GRW-Group")).collect();
    assert_eq!(
        groups,
        [
            Some("core".to_string()),
            Some("core".to_string()),
            Some("networking.istio.io".to_string()),
        ]
    );
    let namespaces: Vec<_> = messages
        .iter()
        .map(|m| header(m, "GRW-Namespace"))
        .collect();
    assert_eq!(
        namespaces,
        [
            Some("shop".to_string()),
            Some(String::new()),
            Some("mesh".to_string()),
        ]
    );
    let links: Vec<_> = messages
        .iter()
        .map(|m| header(m, "GRW-Console-Link"))
        .collect();
    assert_eq!(
        links,
        [
            Some("https://grw.example.com/ui/open?kind=Pod&namespace=shop&name=web-1".to_string()),
            Some("https://grw.example.com/ui/open?kind=Node&name=node-a".to_string()),
            Some(
                "https://grw.example.com/ui/open?kind=VirtualService.networking.istio.io&namespace=mesh&name=reviews"
                    .to_string()
            ),
        ],
        "the link to each object's page in the web console"
    );
}

#[tokio::test]
async fn a_custom_template_shapes_subjects_and_the_created_stream() {
    let server = NatsServer::start().await;
    let sink = NatsSink::connect(
        serde_json::from_value(json!({
            "url": server.url(),
            "subject": "k8s.{kind}.{type}.{name}",
            "stream": "EVENTS",
        }))
        .unwrap(),
    )
    .await
    .unwrap();
    let mut odd = pod(1);
    odd.name = "a.b c".to_string();
    assert_eq!(sink.subject(&odd), "k8s.Pod.ADDED.a_b_c");
    send_until_taken(&sink, &odd).await;

    let stream = server.jetstream().await.get_stream("EVENTS").await.unwrap();
    assert_eq!(stream.cached_info().config.subjects, ["k8s.*.*.*"]);
    let messages = server.stream_messages("EVENTS").await;
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].subject.as_str(), "k8s.Pod.ADDED.a_b_c");
    assert_eq!(header(&messages[0], "GRW-Name").unwrap(), "a.b c");
}

#[tokio::test]
async fn the_same_delivery_sent_twice_is_stored_once() {
    let server = NatsServer::start().await;
    let sink = NatsSink::connect(config(&server.url())).await.unwrap();
    send_until_taken(&sink, &pod(1)).await;
    bounded(&sink, &pod(1))
        .await
        .expect("a duplicate is acknowledged");
    bounded(&sink, &pod(2)).await.unwrap();
    assert_eq!(
        stored_ids(&server, "GRW").await,
        ["uid-web-1/1/ADDED", "uid-web-2/2/ADDED"]
    );
}

#[tokio::test]
async fn a_server_restart_loses_nothing_acknowledged() {
    let mut server = NatsServer::start().await;
    let sink = NatsSink::connect(config(&server.url())).await.unwrap();
    send_until_taken(&sink, &pod(1)).await;
    for seq in 2..=3 {
        bounded(&sink, &pod(seq)).await.unwrap();
    }

    server.stop();
    let refused = bounded(&sink, &pod(4)).await;
    assert!(
        matches!(refused, Err(SendError::Retry { .. })),
        "{refused:?}"
    );

    server.start_again().await;
    // The outbox sends the same delivery again; a copy that the client still
    // flushed after the reconnect is de-duplicated by its id.
    send_until_taken(&sink, &pod(4)).await;
    bounded(&sink, &pod(5)).await.unwrap();
    let expected: Vec<String> = (1..=5).map(|seq| pod(seq).id).collect();
    assert_eq!(stored_ids(&server, "GRW").await, expected);
}

#[tokio::test]
async fn connect_works_while_the_server_is_down() {
    let mut server = NatsServer::start().await;
    server.stop();
    let sink = NatsSink::connect(config(&server.url()))
        .await
        .expect("connect does not need the server");
    let refused = bounded(&sink, &pod(1)).await;
    let Err(SendError::Retry { reason, .. }) = refused else {
        panic!("expected Retry, got {refused:?}");
    };
    assert_eq!(
        reason,
        format!("not connected to NATS at `{}`", server.url())
    );

    server.start_again().await;
    send_until_taken(&sink, &pod(1)).await;
    assert_eq!(stored_ids(&server, "GRW").await, [pod(1).id]);
}

#[tokio::test]
async fn a_lost_stream_is_created_again() {
    let server = NatsServer::start().await;
    let sink = NatsSink::connect(config(&server.url())).await.unwrap();
    send_until_taken(&sink, &pod(1)).await;
    assert!(
        server
            .jetstream()
            .await
            .delete_stream("GRW")
            .await
            .unwrap()
            .success
    );

    bounded(&sink, &pod(2)).await.unwrap();
    assert_eq!(stored_ids(&server, "GRW").await, [pod(2).id]);
}

#[tokio::test]
async fn a_stream_that_does_not_capture_the_subject_is_left_alone_and_the_send_rejected() {
    let server = NatsServer::start().await;
    server
        .jetstream()
        .await
        .create_stream(stream::Config {
            name: "GRW".to_string(),
            subjects: vec!["other.>".to_string()],
            ..Default::default()
        })
        .await
        .unwrap();
    let sink = NatsSink::connect(config(&server.url())).await.unwrap();

    assert_eq!(
        send_until_final(&sink, &pod(1)).await,
        Err(
            "no JetStream stream captures subject `grw.core.v1.Pod.shop` \
             (stream `GRW` has subjects `other.>`); \
             add the subject to a stream or change the sink's `subject`"
                .to_string()
        )
    );
    let stream = server.jetstream().await.get_stream("GRW").await.unwrap();
    assert_eq!(stream.cached_info().config.subjects, ["other.>"]);
    assert_eq!(stream.cached_info().state.messages, 0);
}

#[tokio::test]
async fn an_existing_stream_holding_the_subjects_takes_the_messages() {
    let server = NatsServer::start().await;
    let jetstream = server.jetstream().await;
    jetstream
        .create_stream(stream::Config {
            name: "ALL".to_string(),
            subjects: vec!["grw.>".to_string()],
            ..Default::default()
        })
        .await
        .unwrap();
    let sink = NatsSink::connect(config(&server.url())).await.unwrap();
    send_until_taken(&sink, &pod(1)).await;

    assert_eq!(stored_ids(&server, "ALL").await, [pod(1).id]);
    assert!(
        jetstream.get_stream("GRW").await.is_err(),
        "no overlapping stream was created"
    );
}

#[tokio::test]
async fn messages_too_large_are_rejected() {
    let server = NatsServer::start().await;
    server
        .jetstream()
        .await
        .create_stream(stream::Config {
            name: "GRW".to_string(),
            subjects: vec!["grw.>".to_string()],
            max_message_size: 4096,
            ..Default::default()
        })
        .await
        .unwrap();
    let sink = NatsSink::connect(config(&server.url())).await.unwrap();
    send_until_taken(&sink, &pod(1)).await;

    let mut over_stream_limit = pod(2);
    over_stream_limit.payload = vec![b' '; 8192];
    let refused = bounded(&sink, &over_stream_limit).await;
    let Err(SendError::Reject(reason)) = refused else {
        panic!("expected Reject, got {refused:?}");
    };
    let reason = Report(&reason).to_string();
    assert!(
        reason.starts_with("message to `grw.core.v1.Pod.shop` is too large"),
        "{reason}"
    );

    // Larger than the server's max_payload (1 MiB by default).
    let mut over_server_limit = pod(3);
    over_server_limit.payload = vec![b' '; 2 << 20];
    let refused = bounded(&sink, &over_server_limit).await;
    let Err(SendError::Reject(reason)) = refused else {
        panic!("expected Reject, got {refused:?}");
    };
    let reason = Report(&reason).to_string();
    assert!(
        reason.starts_with("message to `grw.core.v1.Pod.shop` is too large"),
        "{reason}"
    );

    bounded(&sink, &pod(4)).await.unwrap();
    assert_eq!(stored_ids(&server, "GRW").await, [pod(1).id, pod(4).id]);
}

#[tokio::test]
async fn invalid_settings_are_refused_with_clear_messages() {
    let cases = [
        (
            json!({"url": "http://127.0.0.1:4222"}),
            "`url`: unsupported scheme `http` in `http://127.0.0.1:4222`; \
             use nats://host:port, tls://host:port or host:port",
        ),
        (
            json!({"url": "127.0.0.1:4222", "subject": "grw.{cluster}.{kind}"}),
            "`subject`: unknown placeholder `{cluster}` in `grw.{cluster}.{kind}`; \
             use {group}, {version}, {kind}, {namespace}, {name} or {type}",
        ),
        (
            json!({"url": "127.0.0.1:4222", "subject": "grw..{kind}"}),
            "`subject`: `grw..{kind}` has an empty token; \
             tokens are separated by single dots, with none at either end",
        ),
        (
            json!({"url": "127.0.0.1:4222", "stream": "grw.events"}),
            "`stream`: `grw.events` is not a valid stream name; it must not be empty \
             nor contain `.`, `*`, `>`, `/`, `\\` or whitespace",
        ),
        (
            json!({"url": "127.0.0.1:4222", "ackTimeoutSecond": 0}),
            "`ackTimeoutSecond`: must be at least 1, got 0",
        ),
    ];
    for (settings, message) in cases {
        let config: NatsSinkConfig = serde_json::from_value(settings).unwrap();
        assert_eq!(
            config.validate().map_err(|e| e.to_string()),
            Err(message.to_string())
        );
        let refused = NatsSink::connect(config).await.map(|_| ());
        assert_eq!(refused.map_err(|e| e.to_string()), Err(message.to_string()));
    }

    let unknown =
        serde_json::from_value::<NatsSinkConfig>(json!({"url": "127.0.0.1:4222", "topic": "x"}))
            .unwrap_err();
    assert!(
        unknown.to_string().starts_with("unknown field `topic`"),
        "{unknown}"
    );
}
