use serde_json::json;

use super::*;

fn parse(value: serde_json::Value) -> Result<KafkaSinkConfig, String> {
    let config: KafkaSinkConfig = serde_json::from_value(value).map_err(|e| e.to_string())?;
    config.validate().map_err(|e| e.to_string())?;
    Ok(config)
}

fn with(extra: serde_json::Value) -> serde_json::Value {
    let mut config = json!({"bootstrapServers": "127.0.0.1:9092", "topic": "changes"});
    for (k, v) in extra.as_object().into_iter().flatten() {
        config[k] = v.clone();
    }
    config
}

fn property<'a>(properties: &'a [(&str, String)], name: &str) -> Option<&'a str> {
    properties
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.as_str())
}

#[test]
fn defaults_are_what_a_production_producer_wants() {
    let config = parse(with(json!({}))).unwrap();
    assert_eq!(config.key, KafkaKey::Uid);
    assert_eq!(config.payload(), PayloadFormat::WatchEvent);
    let properties = config.client_properties();
    for (name, value) in [
        ("bootstrap.servers", "127.0.0.1:9092"),
        ("security.protocol", "plaintext"),
        ("acks", "all"),
        ("enable.idempotence", "true"),
        ("compression.type", "none"),
        ("message.timeout.ms", "30000"),
        ("message.max.bytes", "1000000"),
        ("allow.auto.create.topics", "false"),
    ] {
        assert_eq!(property(&properties, name), Some(value), "{name}");
    }
    assert_eq!(
        property(&properties, "max.in.flight.requests.per.connection"),
        None,
        "the idempotent producer keeps order with librdkafka's default of 5"
    );
    // The definition the API shows reads back as the same settings.
    let shown = serde_json::to_value(&config).unwrap();
    assert_eq!(parse(shown).unwrap(), config);
}

#[test]
fn without_idempotence_one_request_is_in_flight_so_order_holds() {
    let properties = parse(with(json!({"idempotence": false})))
        .unwrap()
        .client_properties();
    assert_eq!(property(&properties, "enable.idempotence"), Some("false"));
    assert_eq!(
        property(&properties, "max.in.flight.requests.per.connection"),
        Some("1")
    );
}

#[test]
fn sasl_and_tls_choose_the_security_protocol() {
    let sasl = json!({"mechanism": "SCRAM-SHA-512", "username": "grw", "passwordFile": "/var/run/kafka/password"});
    let tls = json!({"caFile": "/ca.pem", "certFile": "/c.pem", "keyFile": "/k.pem"});
    for (extra, protocol) in [
        (json!({"sasl": sasl}), "sasl_plaintext"),
        (json!({"tls": {}}), "ssl"),
        (json!({"sasl": sasl, "tls": tls}), "sasl_ssl"),
    ] {
        let properties = parse(with(extra.clone())).unwrap().client_properties();
        assert_eq!(
            property(&properties, "security.protocol"),
            Some(protocol),
            "{extra}"
        );
    }
    let both = parse(with(
        json!({"sasl": sasl, "tls": tls, "compression": "zstd"}),
    ))
    .unwrap()
    .client_properties();
    assert_eq!(property(&both, "sasl.mechanism"), Some("SCRAM-SHA-512"));
    assert_eq!(property(&both, "sasl.username"), Some("grw"));
    assert_eq!(property(&both, "ssl.ca.location"), Some("/ca.pem"));
    assert_eq!(property(&both, "ssl.certificate.location"), Some("/c.pem"));
    assert_eq!(property(&both, "ssl.key.location"), Some("/k.pem"));
    assert_eq!(property(&both, "compression.type"), Some("zstd"));
    assert!(
        !both.iter().any(|(n, _)| n.contains("password")),
        "the password is read from its file when the producer is made"
    );
    let system_cas = parse(with(json!({"tls": {}}))).unwrap().client_properties();
    assert_eq!(property(&system_cas, "ssl.ca.location"), Some("probe"));
}

#[test]
fn invalid_settings_say_what_is_wrong() {
    for (extra, message) in [
        (
            json!({"bootstrapServers": ""}),
            "`bootstrapServers`: no broker given; expected e.g. `kafka-0.kafka:9092,kafka-1.kafka:9092`",
        ),
        (
            json!({"bootstrapServers": "kafka:9092,kafka-1"}),
            "`bootstrapServers`: `kafka-1` is not `host:port`",
        ),
        (
            json!({"bootstrapServers": "kafka://kafka:9092"}),
            "`bootstrapServers`: `kafka://kafka:9092` is not `host:port`",
        ),
        (
            json!({"bootstrapServers": "kafka:0"}),
            "`bootstrapServers`: `kafka:0` is not `host:port`",
        ),
        (json!({"topic": ""}), "`topic`: cannot be empty"),
        (
            json!({"topic": "grw.{cluster}"}),
            "`topic`: unknown placeholder `{cluster}` in `grw.{cluster}`; \
             use {group}, {version}, {kind}, {namespace}, {name} or {type}",
        ),
        (
            json!({"topic": "grw {kind}"}),
            "`topic`: `grw {kind}` contains ' '; a Kafka topic holds only ASCII letters, digits, `.`, `_` and `-`",
        ),
        (
            json!({"topic": "grw.{kind"}),
            "`topic`: unclosed `{` in `grw.{kind`",
        ),
        (
            json!({"topic": "grw.kind}"}),
            "`topic`: unmatched `}` in `grw.kind}`",
        ),
        (
            json!({"topic": ".."}),
            "`topic`: `..` is not a topic name Kafka accepts",
        ),
        (
            json!({"acks": "leader"}),
            "`idempotence`: the idempotent producer needs `acks: all`; set `idempotence: false` to use `acks: leader`",
        ),
        (
            json!({"sasl": {"mechanism": "PLAIN", "username": "", "passwordFile": "/p"}}),
            "`sasl.username`: cannot be empty",
        ),
        (
            json!({"tls": {"certFile": "/c.pem"}}),
            "`tls`: `certFile` and `keyFile` go together; give both or neither",
        ),
        (
            json!({"deliveryTimeoutSeconds": 0}),
            "`deliveryTimeoutSeconds`: must be at least 1 and at most 3600, got 0",
        ),
        (
            json!({"maxMessageBytes": 10}),
            "`maxMessageBytes`: must be at least 1000 and at most 1000000000, got 10",
        ),
    ] {
        assert_eq!(
            parse(with(extra.clone())),
            Err(message.to_string()),
            "{extra}"
        );
    }
    let long = "t".repeat(250);
    assert_eq!(
        parse(with(json!({"topic": long}))),
        Err(format!("`topic`: `{long}` is longer than 249 characters"))
    );
    for (extra, message) in [
        (json!({"key": "id"}), "expected one of uid, name, none"),
        (
            json!({"compression": "brotli"}),
            "expected one of none, gzip, snappy, lz4, zstd",
        ),
        (
            json!({"sasl": {"mechanism": "GSSAPI", "username": "u", "passwordFile": "/p"}}),
            "expected one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512",
        ),
        (
            json!({"sasl": {"mechanism": "PLAIN", "username": "u", "password": "x"}}),
            "unknown field `password`",
        ),
        (json!({"partition": 1}), "unknown field `partition`"),
    ] {
        let error = parse(with(extra.clone())).unwrap_err();
        assert!(error.contains(message), "{extra}: {error}");
    }
}

#[test]
fn topics_are_rendered_with_what_kafka_accepts() {
    let template = TopicTemplate::parse("k8s.{group}.{kind}-{namespace}").unwrap();
    let values = |group: &'static str, namespace: &'static str| {
        move |field| match field {
            Field::Group => group,
            Field::Kind => "VirtualService",
            Field::Namespace => namespace,
            _ => "x",
        }
    };
    assert_eq!(
        template
            .render(values("networking.istio.io", "mesh"))
            .as_deref(),
        Some("k8s.networking.istio.io.VirtualService-mesh")
    );
    assert_eq!(
        template.render(values("a/b c", "")).as_deref(),
        Some("k8s.a_b_c.VirtualService-_")
    );
    let long = TopicTemplate::parse("{name}").unwrap();
    let name = "n".repeat(250);
    assert_eq!(long.render(|_| name.as_str()), None);
    assert_eq!(
        TopicTemplate::parse("fixed-topic")
            .unwrap()
            .render(|_| "ignored")
            .as_deref(),
        Some("fixed-topic")
    );
}
