use serde_json::json;

use super::*;

fn read(value: &Value) -> Result<SubscriptionConfig, String> {
    SubscriptionConfig::from_json(value).map_err(|e| e.to_string())
}

#[test]
fn a_subscription_reads_into_typed_values() {
    let definition = read(&json!({
        "name": "shop-deployments",
        "kind": "apps/v1/Deployment",
        "namespace": "",
        "labelSelector": "tier in (web, api)",
        "fieldSelector": "spec.paused!=true",
        "eventTypes": ["MODIFIED", "DELETED", "MODIFIED"],
        "filters": ["changed-fields", "Team_A.v2"],
        "webhook": {"url": "https://hooks.example.com/grw", "payload": "watch-event", "timeoutSeconds": 2},
        "retry": {"initialDelayMs": 100.0, "maxDelaySeconds": 5}
    }))
    .unwrap();
    assert_eq!(definition.name.as_str(), "shop-deployments");
    assert_eq!(definition.kind.value().to_string(), "apps/v1/Deployment");
    assert_eq!(definition.namespace, None);
    assert_eq!(
        definition
            .label_selector
            .as_ref()
            .unwrap()
            .value()
            .to_string(),
        "tier in (api,web)"
    );
    assert_eq!(
        definition.label_selector.as_ref().unwrap().as_str(),
        "tier in (web, api)"
    );
    assert_eq!(
        definition.event_types,
        [ChangeType::Modified, ChangeType::Deleted]
    );
    assert_eq!(
        definition.filters,
        [
            PluginName::parse("changed-fields").unwrap(),
            PluginName::parse("Team_A.v2").unwrap()
        ]
    );
    assert_eq!(definition.payload(), PayloadFormat::WatchEvent);
    let Destination::Webhook(webhook) = &definition.destination else {
        panic!("{definition:?}");
    };
    assert_eq!(webhook.timeout(), Duration::from_secs(2));
    assert_eq!(
        RetryConfig::delays(definition.retry.as_ref()),
        (Duration::from_millis(100), Duration::from_secs(5))
    );
}

#[test]
fn bad_subscriptions_name_the_member() {
    let base = json!({"name": "a", "kind": "Pod", "webhook": {"url": "http://127.0.0.1:9/x"}});
    let with = |patch: Value| {
        let mut v = base.clone();
        for (k, val) in patch.as_object().unwrap() {
            v[k] = val.clone();
        }
        v
    };
    let cases = [
        (json!([1]), "expected a JSON object, got [1]"),
        (
            json!({"kind": "Pod", "webhook": {"url": "http://a"}}),
            "`name`: expected a non-empty string; the key is missing",
        ),
        (
            with(json!({"colour": "red"})),
            "unknown field `colour`, expected one of `name`, `kind`, `namespace`, `labelSelector`, `fieldSelector`, `eventTypes`, `filters`, `matchConditions`, `snapshot`, `webhook`, `nats`, `kafka`, `plugin`, `retry`",
        ),
        (
            with(json!({"name": "Has Spaces"})),
            "`name`: expected a subscription name: 1 to 63 lowercase letters, digits, `-` or `.`, starting and ending with a letter or digit, got \"Has Spaces\"",
        ),
        (
            with(json!({"kind": "apps//Deployment"})),
            "`kind`: `apps//Deployment` is not a kind: expected `Kind`, `resource.group`, `Kind.version.group` or `group/version/Kind`",
        ),
        (
            with(json!({"webhook": {"url": "ftp://files.example.com/x"}})),
            "`webhook.url`: expected an http:// or https:// URL with a host, got \"ftp://files.example.com/x\"",
        ),
        (
            with(json!({"webhook": {"url": "not a url"}})),
            "`webhook.url`: expected an http:// or https:// URL with a host, got \"not a url\"",
        ),
        (
            with(json!({"webhook": {}})),
            "`webhook.url`: expected a URL; the key is missing",
        ),
        (
            with(json!({"webhook": {"url": "http://a", "payload": "xml"}})),
            "`webhook.payload`: expected one of grw, watch-event, cloudevents, got \"xml\"",
        ),
        (
            with(json!({"webhook": {"url": "http://a", "headers": {"bad header": "x"}}})),
            "`webhook.headers`: \"bad header\" is not a valid header name",
        ),
        (
            with(json!({"webhook": {"url": "http://a", "secret": ""}})),
            "`webhook.secret`: cannot be empty; leave it out to send unsigned bodies",
        ),
        (
            with(json!({"webhook": {"url": "http://a", "timeoutSeconds": 0}})),
            "`webhook.timeoutSeconds`: expected a number of seconds above 0 and at most 3600, got 0",
        ),
        (
            with(json!({"labelSelector": "app in (a"})),
            "`labelSelector`: label selector `app in (a`: missing `)` to close the `(` at position 7",
        ),
        (
            with(json!({"labelSelector": 3})),
            "`labelSelector`: expected a string, got 3",
        ),
        (
            with(json!({"fieldSelector": "spec..x=1"})),
            "`fieldSelector`: field selector `spec..x=1`: ",
        ),
        (
            with(json!({"eventTypes": ["ADDED", "CREATED"]})),
            "`eventTypes[1]`: expected one of ADDED, MODIFIED, DELETED, got \"CREATED\"",
        ),
        (
            with(json!({"eventTypes": "ADDED"})),
            "`eventTypes`: expected an array of ADDED, MODIFIED or DELETED, got \"ADDED\"",
        ),
        (
            with(json!({"filters": ["ok", ""]})),
            "`filters[1]`: expected a plugin name: 1 to 63 ASCII letters, digits, `-`, `_` or `.`, starting with a letter or digit, got \"\"",
        ),
        (
            with(json!({"filters": ["../etc/passwd"]})),
            "`filters[0]`: expected a plugin name: 1 to 63 ASCII letters, digits, `-`, `_` or `.`, starting with a letter or digit, got \"../etc/passwd\"",
        ),
        (
            with(json!({"filters": "f"})),
            "`filters`: expected an array of filter plugin names, got \"f\"",
        ),
        (
            with(json!({"nats": {"url": "nats://127.0.0.1:4222"}})),
            "needs exactly one destination: `webhook`, `nats`, `kafka` or `plugin`",
        ),
        (
            json!({"name": "a", "kind": "Pod"}),
            "needs exactly one destination: `webhook`, `nats`, `kafka` or `plugin`",
        ),
        (
            json!({"name": "a", "kind": "Pod", "nats": {"url": "ftp://x"}}),
            "`nats`: `url`: unsupported scheme `ftp` in `ftp://x`; use nats://host:port, tls://host:port or host:port",
        ),
        (
            json!({"name": "a", "kind": "Pod", "plugin": {"name": "chat bot"}}),
            "`plugin.name`: expected a plugin name: 1 to 63 ASCII letters, digits, `-`, `_` or `.`, starting with a letter or digit, got \"chat bot\"",
        ),
        (
            with(json!({"retry": {"initialDelayMs": 0}})),
            "`retry`: `initialDelayMs` must be at least 1 and at most `maxDelaySeconds`, got 0 ms",
        ),
        (
            with(
                json!({"matchConditions": [{"name": "phase", "expression": "objet.status.phase == 'Running'"}]}),
            ),
            "`matchConditions[0].expression`: undeclared reference to 'objet' (line 1, column 1)",
        ),
        (
            with(
                json!({"matchConditions": [{"name": "a", "expression": "true"}, {"name": "b", "expression": "object.spec.x ==\n  "}]}),
            ),
            "`matchConditions[1].expression`: Syntax error: mismatched input '<EOF>'",
        ),
        (
            with(
                json!({"matchConditions": [{"name": "a", "expression": "true"}, {"name": "a", "expression": "false"}]}),
            ),
            "`matchConditions`: the name `a` is used twice; each condition needs its own",
        ),
        (
            with(json!({"matchConditions": [{"name": "has space", "expression": "true"}]})),
            "`matchConditions[0].name`: expected a name of 1 to 63 letters, digits, `-`, `_` or `.`, got \"has space\"",
        ),
        (
            with(json!({"matchConditions": [{"name": "a", "expr": "true"}]})),
            "`matchConditions[0]`: unknown field `expr`, expected one of `name`, `expression`",
        ),
        (
            with(
                json!({"matchConditions": [{"name": "a", "expression": "object.spec.a.all(x, object.spec.b.all(y, object.spec.c.all(z, x == y && y == z)))"}]}),
            ),
            "`matchConditions[0].expression`: the expression's estimated cost is ",
        ),
        (
            with(json!({"retry": {"maxDelaySeconds": -1}})),
            "`retry.maxDelaySeconds`: expected a number of seconds above 0 and at most 86400, got -1",
        ),
    ];
    for (value, expected) in cases {
        let error = read(&value).expect_err(&value.to_string());
        assert!(
            error.starts_with(expected),
            "for {value}:\n  got      {error}\n  expected {expected}"
        );
    }
}

#[test]
fn plugin_names() {
    let long = "a".repeat(MAX_PLUGIN_NAME_LEN);
    for good in ["a", "9", "label-filter", "Team_A.v2", long.as_str()] {
        assert!(PluginName::parse(good).is_ok(), "{good}");
    }
    let too_long = "a".repeat(MAX_PLUGIN_NAME_LEN + 1);
    for bad in [
        "",
        "-a",
        "_a",
        ".hidden",
        "a b",
        "a/b",
        "é",
        too_long.as_str(),
    ] {
        assert!(PluginName::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn definitions_stored_by_the_previous_version_still_read() {
    // As the outbox stored subscriptions created through the API: every
    // member the way the previous version wrote it.
    for stored in [
        json!({
            "name": "shop-deployments",
            "kind": "apps/v1/Deployment",
            "namespace": "shop",
            "labelSelector": "tier in (web, api)",
            "fieldSelector": "spec.paused!=true",
            "eventTypes": ["MODIFIED", "DELETED"],
            "filters": ["changed-fields"],
            "snapshot": true,
            "webhook": {
                "url": "https://hooks.example.com/grw",
                "payload": "cloudevents",
                "headers": {"Authorization": "Bearer t"},
                "secret": "s3cret",
                "timeoutSeconds": 2.5
            },
            "retry": {"initialDelayMs": 100, "maxDelaySeconds": 5.0}
        }),
        json!({
            "name": "to-nats",
            "kind": "ConfigMap",
            "nats": {
                "url": "nats://127.0.0.1:4222",
                "subject": "grw.{group}.{version}.{kind}.{namespace}",
                "stream": "GRW",
                "ackTimeoutSecond": 10
            }
        }),
        json!({"name": "chat", "kind": "Pod", "plugin": {"name": "chat"}}),
    ] {
        let definition = read(&stored).unwrap_or_else(|e| panic!("{stored}: {e}"));
        assert_eq!(definition.to_json(), stored);
    }
}
