use super::*;
use crate::gvk::Gvk;
use crate::store::StoredObject;
use formats::NAMED as NAMED_FORMATS;
use serde_json::json;

fn pod(restarts: i64) -> serde_json::Value {
    json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "web-1",
            "namespace": "shop",
            "uid": "u1",
            "resourceVersion": "7",
            "creationTimestamp": "2026-11-01T10:00:00Z",
            "labels": {"app": "web", "tier": "front"},
        },
        "spec": {"nodeName": "n1", "containers": [{"name": "app", "image": "web:1"}, {"name": "side", "image": "log:2"}]},
        "status": {
            "phase": "Running",
            "containerStatuses": [
                {"name": "app", "restartCount": restarts, "ready": true},
                {"name": "side", "restartCount": 0, "ready": true},
            ],
        },
    })
}

fn stored(value: &serde_json::Value) -> StoredObject {
    let gvk = Gvk::new("", "v1", "Pod");
    StoredObject::from_json(&serde_json::to_vec(value).unwrap(), &gvk).unwrap()
}

fn on(text: &str, value: &serde_json::Value) -> Result<bool, EvalError> {
    let condition = Condition::compile(text, Scope::Object).unwrap();
    let object = stored(value);
    condition.on_object(object.json(), &|text| object.members(text).collect())
}

fn refused(text: &str, scope: Scope) -> String {
    Condition::compile(text, scope).unwrap_err().to_string()
}

#[test]
fn the_restart_filter_is_one_line() {
    let restarts = "object.status.containerStatuses.exists(c, c.restartCount > 5)";
    assert_eq!(on(restarts, &pod(6)), Ok(true));
    assert_eq!(on(restarts, &pod(5)), Ok(false));
}

#[test]
fn fields_labels_and_functions_read_as_in_kubernetes() {
    let p = pod(0);
    for (text, want) in [
        ("object.metadata.name == 'web-1'", true),
        ("object.metadata.labels.app == 'web'", true),
        ("object.metadata.labels['tier'] == 'front'", true),
        ("'app' in object.metadata.labels", true),
        ("'db' in object.metadata.labels", false),
        ("size(object.spec.containers) == 2", true),
        ("object.spec.containers[1].name == 'side'", true),
        (
            "object.spec.containers.map(c, c.image).exists(i, i.startsWith('log:'))",
            true,
        ),
        (
            "object.spec.containers.all(c, c.name.matches('^[a-z]+$'))",
            true,
        ),
        ("has(object.status.podIP)", false),
        ("has(object.status.phase)", true),
        ("object.metadata.name.upperAscii() == 'WEB-1'", true),
        ("object.metadata.name.split('-')[1] == '1'", true),
        ("math.greatest(1, 4) == 4", true),
        (
            "timestamp(object.metadata.creationTimestamp) < timestamp('2027-01-01T00:00:00Z')",
            true,
        ),
        (
            "object.metadata.labels == {'app': 'web', 'tier': 'front'}",
            true,
        ),
        (
            "object.status.containerStatuses[0].restartCount + 1 == 1",
            true,
        ),
    ] {
        assert_eq!(on(text, &p), Ok(want), "{text}");
    }
}

#[test]
fn a_field_read_without_has_fails_on_the_objects_without_it() {
    assert_eq!(
        on("object.status.podIP == '10.0.0.1'", &pod(0)),
        Err(EvalError::Failed("no such key: podIP".into()))
    );
    assert_eq!(
        on("object.metadata.name", &pod(0)),
        Err(EvalError::NotBool("string".into()))
    );
}

#[test]
fn the_restart_filter_plugin_as_one_line() {
    // `plugins/restart-filter` with `{"minRestarts": 3}`: the restarts of
    // every container, init containers included, added up.
    let text = "(has(object.status.containerStatuses) ? \
                object.status.containerStatuses.map(s, s.restartCount).sum() : 0) + \
                (has(object.status.initContainerStatuses) ? \
                object.status.initContainerStatuses.map(s, s.restartCount).sum() : 0) >= 3";
    let mut p = pod(2);
    assert_eq!(on(text, &p), Ok(false));
    p["status"]["initContainerStatuses"] = json!([{"name": "init", "restartCount": 1}]);
    assert_eq!(on(text, &p), Ok(true));
    assert_eq!(
        on("[].min() == 0", &p),
        Err(EvalError::Failed(
            "Error executing function 'min': the list is empty".into()
        ))
    );
    assert_eq!(
        on("[1, 'a'].sum() == 0", &p),
        Err(EvalError::Failed(
            "Error executing function 'sum': needs a list of numbers, got a string".into()
        ))
    );
}

#[test]
fn a_misspelt_variable_is_refused_with_where_it_is() {
    assert_eq!(
        refused("objet.status.phase == 'Running'", Scope::Object),
        "undeclared reference to 'objet' (line 1, column 1)"
    );
    assert_eq!(
        refused(
            "object.metadata.name == 'a' &&\n  oldObject == null",
            Scope::Object
        ),
        "undeclared reference to 'oldObject' (line 2, column 3)"
    );
    // A comprehension's variable is declared inside it only.
    assert_eq!(
        refused(
            "object.spec.containers.exists(c, c.name == 'a') && c.name == 'b'",
            Scope::Object
        ),
        "undeclared reference to 'c' (line 1, column 52)"
    );
}

#[test]
fn an_unknown_function_is_refused_and_known_ones_are_not() {
    assert_eq!(
        refused("object.metadata.name.lowerAscci() == 'a'", Scope::Object),
        "undeclared reference to 'lowerAscci' (line 1, column 22)"
    );
    assert_eq!(
        refused("mathx.greatest(1, 2) == 2", Scope::Object),
        "undeclared reference to 'mathx.greatest' (line 1, column 1)"
    );
    assert_eq!(
        refused("frobnicate(object) == 2", Scope::Object),
        "undeclared reference to 'frobnicate' (line 1, column 1)"
    );
    for text in [
        "size(object.metadata.name) > 1",
        "object.metadata.name.contains('a')",
        "int('1') == 1 && string(1) == '1' && double(1) == 1.0",
        "base64.encode(b'a') == 'YQ=='",
        "strings.quote('a') == '\"a\"'",
        "object.metadata.name.indexOf('-') == 3",
        "duration('1h') > duration('1m')",
    ] {
        Condition::compile(text, Scope::Object).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
}

#[test]
fn a_syntax_error_says_where() {
    let message = refused("object.metadata.name == ", Scope::Object);
    assert!(message.ends_with("(line 1, column 25)"), "{message}");
    let message = refused("object.metadata.name == )", Scope::Object);
    assert!(message.ends_with("(line 1, column 25)"), "{message}");
    let message = refused("object.metadata.name ==\n 'a' 'b'", Scope::Object);
    assert!(message.ends_with("(line 2, column 6)"), "{message}");
    assert_eq!(refused("  ", Scope::Object), "the expression is empty");
    let long = format!(
        "object.metadata.name == '{}'",
        "a".repeat(MAX_EXPRESSION_BYTES)
    );
    assert_eq!(
        refused(&long, Scope::Object),
        format!(
            "the expression is {} bytes long; at most 10240 are accepted",
            long.len()
        )
    );
}

#[test]
fn an_expression_estimated_too_costly_is_refused() {
    // Three nested comprehensions over the object: 100³ iterations.
    let text = "object.spec.containers.all(a, object.spec.containers.all(b, \
                object.spec.containers.all(c, a.name != c.name || b.name != '')))";
    assert_eq!(
        refused(text, Scope::Object),
        "the expression's estimated cost is 14090905, over the limit of 1000000 \
         (each list or map of the object counted as 100 entries; nest fewer \
         `all`, `exists`, `map` or `filter`)"
    );
    // Two are accepted.
    Condition::compile(
        "object.spec.containers.all(a, object.spec.containers.all(b, a.name != '' && b.name != ''))",
        Scope::Object,
    )
    .unwrap();
}

#[test]
fn an_evaluation_stops_at_the_cost_limit() {
    // 3,000 entries, iterated 3,000 times each: 9 million iterations.
    let items: Vec<i64> = (0..3000).collect();
    let big = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "big", "namespace": "shop", "uid": "u2", "resourceVersion": "1"},
        "spec": {"items": items},
    });
    let text = "object.spec.items.all(a, object.spec.items.exists(b, b == a))";
    let started = std::time::Instant::now();
    assert_eq!(on(text, &big), Err(EvalError::TooCostly));
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    // Once over them is within it, and the next evaluation starts afresh.
    assert_eq!(on("object.spec.items.all(a, a >= 0)", &big), Ok(true));
    assert_eq!(on("2999 in object.spec.items", &big), Ok(true));
}

#[test]
fn a_change_has_its_object_its_old_state_and_its_type() {
    let condition = |text| Condition::compile(text, Scope::Change).unwrap();
    let new = serde_json::to_vec(&pod(3)).unwrap();
    let old = serde_json::to_vec(&pod(1)).unwrap();
    let grew = condition(
        "type == 'MODIFIED' && object.status.containerStatuses[0].restartCount > \
         oldObject.status.containerStatuses[0].restartCount",
    );
    assert_eq!(
        grew.on_change(ChangeType::Modified, &new, Some(&old)),
        Ok(true)
    );
    assert_eq!(
        grew.on_change(ChangeType::Modified, &old, Some(&new)),
        Ok(false)
    );
    let added = condition("oldObject == null && type == 'ADDED'");
    assert_eq!(added.on_change(ChangeType::Added, &new, None), Ok(true));
    // A deletion's old state is its last one, as for admission webhooks.
    let deleted = condition("type == 'DELETED' && oldObject.metadata.name == object.metadata.name");
    assert_eq!(deleted.on_change(ChangeType::Deleted, &new, None), Ok(true));
    let same_spec = condition("object.spec == oldObject.spec");
    assert_eq!(
        same_spec.on_change(ChangeType::Modified, &new, Some(&old)),
        Ok(true)
    );
    // Member order does not matter; values do.
    let reordered = br#"{"spec":{"nodeName":"n1","containers":[]},"metadata":{}}"#;
    let ordered = br#"{"metadata":{},"spec":{"containers":[],"nodeName":"n1"}}"#;
    assert_eq!(
        same_spec.on_change(ChangeType::Modified, reordered, Some(ordered)),
        Ok(true)
    );
    let moved = br#"{"metadata":{},"spec":{"containers":[],"nodeName":"n2"}}"#;
    assert_eq!(
        same_spec.on_change(ChangeType::Modified, moved, Some(ordered)),
        Ok(false)
    );
    assert_eq!(
        condition("object.status.containerStatuses != oldObject.status.containerStatuses")
            .on_change(ChangeType::Modified, &new, Some(&old)),
        Ok(true)
    );
}

#[test]
fn programs_are_compiled_once_per_text() {
    let text = "object.metadata.name == 'cached'";
    let first = compile_cached(text, Scope::Object).unwrap();
    assert!(Arc::ptr_eq(
        &first,
        &compile_cached(text, Scope::Object).unwrap()
    ));
    assert!(compile_cached("objet == 1", Scope::Object).is_err());
}

fn limited(memory: &str, cpu: &str) -> serde_json::Value {
    let mut p = pod(0);
    p["spec"]["containers"][0]["resources"] =
        json!({"limits": {"memory": memory, "cpu": cpu}, "requests": {"cpu": "250m"}});
    p
}

#[test]
fn quantities_read_and_compare_as_kubernetes_writes_them() {
    use quantity::parse;
    let nanos = |text: &str| parse(text).map(|q| q.nanos());
    for (text, want) in [
        ("1", 1000000000),
        ("250m", 250000000),
        ("1.5", 1500000000),
        (".5", 500000000),
        ("2.", 2000000000),
        ("+3k", 3000000000000),
        ("-1Ki", -1024000000000),
        ("1Gi", 1073741824000000000),
        ("1G", 1000000000000000000),
        ("1e3", 1000000000000),
        ("1E-3", 1000000),
        ("5n", 5),
        ("7u", 7000),
        ("2E", 2000000000000000000000000000),
        // Finer than a nano-unit: rounded away from zero.
        ("0.1n", 1),
        ("-1.0000000001", -1000000001),
        ("1e-2147483648", 1),
        ("3e-99999999999999999999", 1),
        ("0e99999999999", 0),
        ("1.0000000000000000000000000000000000000000001", 1000000001),
        ("2.0000000000000000000000000000000000000000000", 2000000000),
    ] {
        assert_eq!(nanos(text), Ok(want), "{text}");
    }
    for text in [
        "", "abc", "1x", "1KiB", "--1", "1.2.3", ".", "1e", "e3", "1e+", "1 Gi",
    ] {
        assert!(parse(text).is_err(), "{text:?} is not a quantity");
    }
    for text in [
        "1e40",
        "1e2147483647",
        "1e99999999999999999999",
        "99999999999999999999999999999999999999999",
    ] {
        assert_eq!(
            parse(text).unwrap_err(),
            "the quantity is too large (at most about 1.7e29)",
            "{text}"
        );
    }

    let p = limited("1Gi", "2");
    for (text, want) in [
        ("quantity('1') == quantity('1000m')", true),
        ("quantity('1Gi') == quantity('1G')", false),
        ("quantity('1Gi').isGreaterThan(quantity('1G'))", true),
        ("quantity('100m').isLessThan(quantity('1'))", true),
        ("quantity('1Mi').compareTo(quantity('1024Ki')) == 0", true),
        ("quantity('1').compareTo(quantity('2')) == -1", true),
        (
            "quantity('1').add(quantity('500m')) == quantity('1.5')",
            true,
        ),
        ("quantity('1').add(2) == quantity('3')", true),
        ("quantity('1').sub(quantity('1500m')).sign() == -1", true),
        ("quantity('1').sub(1).sign() == 0", true),
        (
            "quantity('2Ki').isInteger() && quantity('2Ki').asInteger() == 2048",
            true,
        ),
        ("quantity('1500m').isInteger()", false),
        ("quantity('1500m').asApproximateFloat() == 1.5", true),
        ("isQuantity('1Gi') && !isQuantity('one gig')", true),
        ("type(quantity('1')) == type(quantity('2'))", true),
        // As a CRD rule reads an object's limits.
        (
            "object.spec.containers.exists(c, has(c.resources) && has(c.resources.limits) && \
             quantity(c.resources.limits.memory).isGreaterThan(quantity('512Mi')))",
            true,
        ),
        (
            "object.spec.containers.all(c, !has(c.resources) || !has(c.resources.limits) || \
             quantity(c.resources.limits.cpu).compareTo(quantity('2')) <= 0)",
            true,
        ),
    ] {
        assert_eq!(on(text, &p), Ok(want), "{text}");
    }
    assert_eq!(
        on("quantity('1Gi') == quantity('1Gi')", &limited("2Gi", "1")),
        Ok(true)
    );
    assert_eq!(
        on(
            "object.spec.containers.exists(c, has(c.resources) && has(c.resources.limits) && \
             quantity(c.resources.limits.memory).isGreaterThan(quantity('512Mi')))",
            &limited("256Mi", "1")
        ),
        Ok(false)
    );
}

#[test]
fn a_text_that_is_no_quantity_fails_with_what_it_is() {
    let p = limited("lots", "1");
    let Err(EvalError::Failed(message)) = on(
        "quantity(object.spec.containers[0].resources.limits.memory).sign() == 1",
        &p,
    ) else {
        panic!("not a quantity");
    };
    assert!(
        message.contains("'lots': a quantity is a number with an optional sign and suffix"),
        "{message}"
    );
    let Err(EvalError::Failed(message)) = on("quantity('1500m').asInteger() == 1", &p) else {
        panic!("not an integer");
    };
    assert!(
        message.contains("not a whole number that fits an int"),
        "{message}"
    );
    let Err(EvalError::Failed(message)) =
        on("quantity('100000000000000000000').asInteger() > 0", &p)
    else {
        panic!("not an int");
    };
    assert!(
        message.contains("not a whole number that fits an int"),
        "{message}"
    );
    // A misspelt method is refused when compiled, as others are.
    assert!(
        refused("quantity('1').isBiggerThan(quantity('2'))", Scope::Object)
            .starts_with("undeclared reference to 'isBiggerThan'"),
        "{}",
        refused("quantity('1').isBiggerThan(quantity('2'))", Scope::Object)
    );
}

#[test]
fn any_text_of_a_quantitys_characters_parses_or_is_refused_without_a_panic() {
    const CHARS: &[u8] = b"0123456789.+-eEKMGTPinumk ";
    let mut seed: u64 = 7;
    let mut next = || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) as usize
    };
    let mut parsed = 0;
    for _ in 0..200_000 {
        let len = next() % 14;
        let text: String = (0..len)
            .map(|_| char::from(CHARS[next() % CHARS.len()]))
            .collect();
        if let Ok(q) = quantity::parse(&text) {
            parsed += 1;
            // A sign before it reads as one, rounding and all.
            if !text.starts_with(['+', '-']) {
                let negated = quantity::parse(&format!("-{text}")).unwrap();
                let plus = quantity::parse(&format!("+{text}")).unwrap();
                assert_eq!((negated.nanos(), plus), (-q.nanos(), q), "{text}");
            }
        }
    }
    assert!(parsed > 1_000, "{parsed} of the texts parsed");
}

#[test]
fn lists_say_whether_they_are_sorted_and_where_a_value_is() {
    let p = pod(0);
    for (text, want) in [
        ("[1, 2, 2, 5].isSorted()", true),
        ("[2, 1].isSorted()", false),
        (
            "['a', 'b'].isSorted() && [].isSorted() && [3.5].isSorted()",
            true,
        ),
        ("object.spec.containers.map(c, c.name).isSorted()", true),
        (
            "object.spec.containers.map(c, c.name).indexOf('side') == 1",
            true,
        ),
        (
            "object.spec.containers.map(c, c.name).indexOf('db') == -1",
            true,
        ),
        (
            "[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2",
            true,
        ),
        ("[[1], [2]].indexOf([2]) == 1", true),
        // Strings keep their own.
        (
            "'web-1'.indexOf('-') == 3 && 'a-b-c'.lastIndexOf('-') == 3",
            true,
        ),
    ] {
        assert_eq!(on(text, &p), Ok(want), "{text}");
    }
    assert_eq!(
        on("[1, 'a'].isSorted()", &p),
        Err(EvalError::Failed(
            "Error executing function 'isSorted': cannot order a int with a string".into()
        ))
    );
}

/// Each expression evaluates to true on `value`.
fn all_true(value: &serde_json::Value, texts: &[&str]) {
    for text in texts {
        assert_eq!(on(text, value), Ok(true), "{text}");
    }
}

/// Why `text` failed on `value`.
fn failure(text: &str, value: &serde_json::Value) -> String {
    match on(text, value) {
        Err(EvalError::Failed(message)) => message,
        other => panic!("{text}: {other:?}"),
    }
}

fn addressed(ip: &str) -> serde_json::Value {
    let mut p = pod(0);
    p["status"]["podIP"] = json!(ip);
    p["status"]["podIPs"] = json!([{"ip": ip}, {"ip": "fd00:10:244::5"}]);
    p
}

#[test]
fn addresses_and_networks_read_as_the_api_server_reads_them() {
    let p = addressed("10.244.1.5");
    all_true(
        &p,
        &[
            "isIP('127.0.0.1') && isIP('::1') && isIP('2001:db8::abcd')",
            // Leading zeros, IPv4-mapped IPv6, zones, spaces: not addresses.
            "!isIP('127.0.0.01') && !isIP('::ffff:1.2.3.4') && !isIP('fe80::1%eth0')",
            "!isIP('127.0.0.256') && !isIP(':::1') && !isIP(' 1.2.3.4')",
            "ip('127.0.0.1').family() == 4 && ip('::1').family() == 6",
            "ip('0.0.0.0').isUnspecified() && ip('::').isUnspecified()",
            "ip('127.0.0.1').isLoopback() && ip('::1').isLoopback() && !ip('192.168.0.1').isLoopback()",
            "ip('224.0.0.1').isLinkLocalMulticast() && !ip('224.0.1.1').isLinkLocalMulticast()",
            "ip('ff02::1').isLinkLocalMulticast() && !ip('fd00::1').isLinkLocalMulticast()",
            "ip('169.254.169.254').isLinkLocalUnicast() && ip('fe80::1').isLinkLocalUnicast()",
            "!ip('fd80::1').isLinkLocalUnicast()",
            "ip('192.168.0.1').isGlobalUnicast() && ip('2001:db8::abcd').isGlobalUnicast()",
            "!ip('255.255.255.255').isGlobalUnicast() && !ip('ff00::1').isGlobalUnicast()",
            "ip.isCanonical('127.0.0.1') && ip.isCanonical('2001:db8::abcd')",
            "!ip.isCanonical('2001:DB8::ABCD') && !ip.isCanonical('2001:db8::0:0:0:abcd')",
            "string(ip('2001:DB8::0:0:0:ABCD')) == '2001:db8::abcd'",
            "ip('::1') == ip('0:0:0:0:0:0:0:1') && ip('::1') != ip('::2')",
            "type(ip('::1')) == type(ip('1.2.3.4'))",
            "isCIDR('192.168.0.0/16') && isCIDR('::1/128') && isCIDR('0.0.0.0/0')",
            "!isCIDR('192.168.0.0/33') && !isCIDR('::1/129') && !isCIDR('10.0.0.0')",
            "!isCIDR('10.0.0.0/') && !isCIDR('10.0.0.0/08') && !isCIDR('::ffff:1.2.3.4/120')",
            "cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))",
            "!cidr('192.168.0.0/24').containsIP('192.168.1.1')",
            "!cidr('0.0.0.0/0').containsIP('::1') && cidr('::/0').containsIP('::1')",
            "cidr('2001:db8::/32').containsIP('2001:db8::1') && !cidr('2001:db8::/32').containsIP('2001:dc8::1')",
            // A smaller network inside, whatever its address.
            "cidr('192.168.0.0/16').containsCIDR('192.168.10.0/24')",
            "cidr('192.168.0.0/16').containsCIDR(cidr('192.168.0.1/32'))",
            "!cidr('192.168.0.0/24').containsCIDR('192.168.0.0/23')",
            "!cidr('192.168.1.0/24').containsCIDR('192.168.2.0/24')",
            "cidr('192.168.0.1/24').ip() == ip('192.168.0.1')",
            "cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')",
            "cidr('192.168.0.1/24') != cidr('192.168.0.1/24').masked()",
            "string(cidr('2001:db8:1::/32').masked()) == '2001:db8::/32'",
            "cidr('::1/128').prefixLength() == 128 && cidr('::1/128').ip().family() == 6",
            // On an object, as a rule would read a Pod's addresses.
            "cidr('10.244.0.0/16').containsIP(object.status.podIP)",
            "object.status.podIPs.exists(a, ip(a.ip).family() == 6)",
            "object.status.podIPs.all(a, !ip(a.ip).isLoopback())",
            // A variable named `ip` is the variable, not the library's name.
            "object.status.podIPs.map(a, a.ip).exists(ip, ip.startsWith('10.'))",
            "object.status.podIPs.exists(ip, ip.ip == '10.244.1.5' && ip(ip.ip).family() == 4)",
        ],
    );
    assert_eq!(
        on("cidr('10.96.0.0/12').containsIP(object.status.podIP)", &p),
        Ok(false)
    );
    for (text, message) in [
        (
            "ip('127.0.0.01').family() == 4",
            "'127.0.0.01' is not an IPv4 or IPv6 address",
        ),
        (
            "ip('::ffff:1.2.3.4').family() == 6",
            "IPv4-mapped IPv6 address '::ffff:1.2.3.4' is not allowed",
        ),
        (
            "ip('fe80::1%eth0').family() == 6",
            "IP address 'fe80::1%eth0' with a zone is not allowed",
        ),
        (
            "cidr('10.0.0.0/33').prefixLength() == 33",
            "'10.0.0.0/33': the prefix length must be a number from 0 to 32",
        ),
        (
            "cidr('10.0.0.0').prefixLength() == 32",
            "'10.0.0.0' has no '/' and prefix length",
        ),
        (
            "cidr('10.0.0.0/8').containsIP('10.0.0')",
            "'10.0.0' is not an IPv4 or IPv6 address",
        ),
    ] {
        let got = failure(text, &p);
        assert!(got.contains(message), "{text}: {got}");
    }
    let got = failure("ip(object.metadata.name).isLoopback()", &p);
    assert!(
        got.contains("Error executing function 'ip': 'web-1' is not an IPv4 or IPv6 address"),
        "{got}"
    );
}

#[test]
fn urls_have_the_parts_the_api_server_gives_them() {
    let p = pod(0);
    all_true(
        &p,
        &[
            "isURL('https://user:pass@example.com:80/path?query=val#fragment')",
            "isURL('/absolute-path') && isURL('mailto:ops@example.com') && isURL('*')",
            "!isURL('https://a:b:c/') && !isURL('../relative-path') && !isURL('')",
            "!isURL('https://example.com/%zz') && !isURL('http://[1.2.3.4]/')",
            "!isURL('http://exa mple.com/') && !isURL('://example.com')",
            "url('/path').getScheme() == '' && url('HTTPS://example.com/').getScheme() == 'https'",
            "url('https://example.com:80/').getHost() == 'example.com:80'",
            "url('https://example.com/').getHost() == 'example.com'",
            "url('https://[::1]:80/').getHost() == '[::1]:80' && url('https://[::1]/').getHost() == '[::1]'",
            "url('/path').getHost() == '' && url('/path').getHostname() == ''",
            "url('https://example.com:80/').getHostname() == 'example.com'",
            "url('https://127.0.0.1:80/').getHostname() == '127.0.0.1'",
            "url('https://[::1]:80/').getHostname() == '::1'",
            "url('https://example.com:80/').getPort() == '80' && url('https://example.com/').getPort() == ''",
            // Unlike a browser's URL: a default port stays, the host keeps its case.
            "url('https://Example.COM:443/').getPort() == '443'",
            "url('https://Example.COM:443/').getHostname() == 'Example.COM'",
            "url('https://example.com/path').getEscapedPath() == '/path'",
            "url('https://example.com/path with spaces/').getEscapedPath() == '/path%20with%20spaces/'",
            "url('https://example.com/a%2Fb').getEscapedPath() == '/a%2Fb'",
            "url('https://example.com/a/../b').getEscapedPath() == '/a/../b'",
            "url('https://example.com').getEscapedPath() == ''",
            "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == {'k1': ['a'], 'k2': ['b', 'c']}",
            "url('https://example.com/path?key with spaces=value with spaces').getQuery() == {'key with spaces': ['value with spaces']}",
            "url('https://example.com/?a=1+2&b=%41&c&d=x;y').getQuery() == {'a': ['1 2'], 'b': ['A'], 'c': ['']}",
            "url('https://example.com/path?').getQuery() == {} && url('https://example.com/path').getQuery() == {}",
            "url('https://example.com/p#a?b').getQuery() == {} && url('https://example.com/p#a?b').getEscapedPath() == '/p'",
            "url('https://example.com/x') == url('HTTPS://example.com/x')",
            // Checked as a request's target (a path), read as a URL (a host).
            "url('//example.com/x').getHost() == 'example.com' && url('//example.com/x').getEscapedPath() == '/x'",
            "type(url('/')) != type('/')",
        ],
    );
    for (text, message) in [
        (
            "url('https://a:b:c/').getHost() == ''",
            "its port 'c' is not digits",
        ),
        (
            "url('../relative-path').getHost() == ''",
            "it is neither an absolute URL nor an absolute path",
        ),
        (
            "url('https://example.com/%zz').getHost() == ''",
            "'%zz' is not an escape (% and two hex digits)",
        ),
        (
            "url('http://[1.2.3.4]/').getHost() == ''",
            "'1.2.3.4' in brackets is not an IPv6 address",
        ),
        (
            "url('http://exa mple.com/').getHost() == ''",
            "its host has the character ' '",
        ),
        (
            "url('http://%41.example/').getHost() == ''",
            "its host has '%41', an escaped character that must be written as it is",
        ),
    ] {
        let got = failure(text, &p);
        assert!(got.contains(message), "{text}: {got}");
    }
}

#[test]
fn versions_compare_as_semver_says() {
    let mut p = pod(0);
    p["metadata"]["labels"]["version"] = json!("v1.27");
    all_true(
        &p,
        &[
            "isSemver('1.0.0') && isSemver('0.1.0-alpha.1') && isSemver('1.0.0+build.5')",
            "!isSemver('hello') && !isSemver('v1.0') && !isSemver('1.0') && !isSemver('01.1.1')",
            "isSemver('v1.0', true) && isSemver('01.01.01', true) && !isSemver('1.0-rc', true)",
            "semver('v1.0.0', true) == semver('1.0.0') && semver('1.0', true) == semver('1.0.0')",
            "semver('01.01.01', true) == semver('1.1.1') && semver('7', true) == semver('7.0.0')",
            "semver('1.2.3').major() == 1 && semver('1.2.3').minor() == 2 && semver('1.2.3').patch() == 3",
            "semver('1.2.3').compareTo(semver('1.2.3')) == 0",
            "semver('1.2.3').compareTo(semver('2.0.0')) == -1 && semver('1.2.3').compareTo(semver('0.1.2')) == 1",
            "semver('1.10.0').isGreaterThan(semver('1.9.0'))",
            // A pre-release comes before its release; numbers in it compare as numbers.
            "semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))",
            "semver('1.0.0-alpha.2').isLessThan(semver('1.0.0-alpha.10'))",
            "semver('1.0.0-alpha').isLessThan(semver('1.0.0-alpha.1'))",
            // Build metadata does not count.
            "semver('1.0.0+a') == semver('1.0.0+b') && semver('1.0.0+a').compareTo(semver('1.0.0')) == 0",
            "semver(object.metadata.labels['version'], true).isLessThan(semver('1.28.0'))",
        ],
    );
    for (text, message) in [
        (
            "semver('v1.0.0').major() == 1",
            "'v1.0.0' is not a semantic version",
        ),
        (
            "semver('1.0').major() == 1",
            "'1.0' is not a semantic version",
        ),
        (
            "semver('1.0-rc', true).major() == 1",
            "'1.0-rc': a version without a patch number cannot have a pre-release or build",
        ),
    ] {
        let got = failure(text, &p);
        assert!(got.contains(message), "{text}: {got}");
    }
}

#[test]
fn find_and_find_all_match_as_the_api_server_matches() {
    let mut p = pod(0);
    p["spec"]["containers"][0]["image"] = json!("registry.example.com/web:1.27.3-debian");
    all_true(
        &p,
        &[
            "'abc 123'.find('[0-9]+') == '123' && 'abc 123'.find('xyz') == ''",
            // Leftmost first: an empty match at the start is the first match.
            "'abc 123'.find('[0-9]*') == ''",
            "'123 abc 456'.findAll('[0-9]+') == ['123', '456']",
            "'123 abc 456'.findAll('[0-9]+', 1) == ['123'] && '123 abc 456'.findAll('[0-9]+', 0) == []",
            "'123 abc 456'.findAll('[0-9]+', -1) == ['123', '456'] && '123'.findAll('xyz') == []",
            // No empty match right after a match; the others count.
            "'123 abc'.findAll('[0-9]*') == ['123', '', '', '', '']",
            "'é1é'.findAll('[0-9]*') == ['', '1', '']",
            "object.spec.containers[0].image.find('[0-9]+\\\\.[0-9]+') == '1.27'",
            "object.spec.containers.exists(c, c.image.findAll(':[0-9.]+').size() == 1)",
        ],
    );
    // A pattern written in the expression is checked when it is compiled...
    for (text, message) in [
        (
            "'a'.find('(') == ''",
            "'(' is not a valid regex: unclosed group (line 1, column 10)",
        ),
        (
            "object.metadata.name.findAll('[', 2) == []",
            "'[' is not a valid regex: unclosed character class (line 1, column 30)",
        ),
        (
            "object.metadata.name.matches('a{2,1}')",
            "'a{2,1}' is not a valid regex: invalid repetition count range, \
             the start must be <= the end (line 1, column 30)",
        ),
        (
            "matches(object.metadata.name, '+')",
            "'+' is not a valid regex: repetition operator missing expression \
             (line 1, column 31)",
        ),
    ] {
        assert_eq!(refused(text, Scope::Object), message, "{text}");
    }
    // ...one read from the object, when it runs.
    p["metadata"]["labels"]["pattern"] = json!("(");
    let got = failure("'a'.find(object.metadata.labels.pattern) == ''", &p);
    assert!(
        got.ends_with("'(' is not a valid regex: unclosed group"),
        "{got}"
    );
}

#[test]
fn the_kubernetes_libraries_functions_are_known_when_an_expression_is_checked() {
    for text in [
        "ip.isCanonical('::1')",
        "cidr('::/0').containsIP('::1')",
        "url('/').getQuery().size() == 0",
        "isSemver('1.0.0')",
        "'a'.findAll('a', 1).size() == 1",
        "format.dns1123Label().validate('a').hasValue()",
        "format.named('uri').hasValue()",
    ] {
        assert!(Condition::compile(text, Scope::Object).is_ok(), "{text}");
    }
    assert_eq!(
        refused("cidr('::/0').containsIp('::1')", Scope::Object),
        "undeclared reference to 'containsIp' (line 1, column 14)"
    );
    assert_eq!(
        refused("url('/').getPath() == '/'", Scope::Object),
        "undeclared reference to 'getPath' (line 1, column 10)"
    );
    assert_eq!(
        refused(
            "format.dns1123label().validate('a').hasValue()",
            Scope::Object
        ),
        "undeclared reference to 'format.dns1123label' (line 1, column 1)"
    );
}

#[test]
fn any_text_of_an_address_url_version_or_format_s_characters_is_read_without_a_panic() {
    // ASCII that matters to the parsers, and characters of 2, 3 and 4 bytes.
    const CHARS: &[char] = &[
        '0', '1', '9', 'a', 'f', 'F', 'v', '.', ':', '/', '%', '2', '5', '[', ']', '@', '?', '#',
        '&', '=', '+', '-', ';', ' ', 'é', '€', '😀', '\t', 'T', 'Z',
    ];
    let mut seed: u64 = 11;
    let mut next = || {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (seed >> 33) as usize
    };
    let prefixes = [
        "",
        "https://",
        "http://[",
        "/",
        "10.",
        "::",
        "v1.",
        "2024-02-2",
        "2021-01-01T1",
    ];
    let mut accepted = [0usize; 4];
    for _ in 0..100_000 {
        let len = next() % 16;
        let mut text = prefixes[next() % prefixes.len()].to_owned();
        text.extend((0..len).map(|_| CHARS[next() % CHARS.len()]));
        let answers = [
            urls::parse(&text).is_ok(),
            net::parse_ip(&text).is_ok(),
            net::parse_cidr(&text).is_ok(),
            versions::parse(&text, true).is_ok(),
        ];
        for (count, ok) in accepted.iter_mut().zip(answers) {
            *count += usize::from(ok);
        }
        for (_, format) in NAMED_FORMATS {
            std::hint::black_box(format.problems(&text));
        }
    }
    // Each parser took some of the texts, and refused others.
    assert!(
        accepted.iter().all(|n| (1..100_000).contains(n)),
        "{accepted:?}"
    );
}

#[test]
fn formats_say_what_the_api_server_says_is_wrong() {
    let p = pod(0);
    let long = "a".repeat(64);
    all_true(
        &p,
        &[
            "!format.dns1123Label().validate('my-name').hasValue()",
            "format.dns1123Label().validate('a.b').value() == ['must not contain dots']",
            "!format.dns1123Subdomain().validate('apiextensions.k8s.io').hasValue()",
            "!format.dns1035Label().validate('my-name').hasValue()",
            "format.dns1035Label().validate('1-abc').hasValue()",
            "!format.qualifiedName().validate('apiextensions.k8s.io/v1beta1').hasValue()",
            "format.qualifiedName().validate('/x').value() == ['prefix part must be non-empty']",
            // generateName adds to a prefix: a trailing '-' is fine there only.
            "!format.dns1123LabelPrefix().validate('web-').hasValue()",
            "format.dns1123Label().validate('web-').hasValue()",
            "!format.dns1123SubdomainPrefix().validate('my.sub-').hasValue()",
            "!format.dns1035LabelPrefix().validate('x-').hasValue()",
            "!format.labelValue().validate('').hasValue() && format.labelValue().validate('-x').hasValue()",
            "!format.uri().validate('http://example.com').hasValue() && format.uri().validate('../x').hasValue()",
            "!format.uuid().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()",
            "!format.uuid().validate('123E4567E89B12D3A456426614174000').hasValue()",
            "format.uuid().validate('123e4567').value() == ['does not match the UUID format']",
            "!format.byte().validate('aGVsbG8=').hasValue() && format.byte().validate('aGVsbG8').value() == ['invalid base64']",
            "!format.date().validate('2024-02-29').hasValue() && format.date().validate('2023-02-29').value() == ['invalid date']",
            "!format.datetime().validate('2021-01-01T00:00:00Z').hasValue()",
            "!format.datetime().validate('2021-01-01T10:30:00.123+02:00').hasValue()",
            "format.datetime().validate('2021-01-01 00:00:00').value() == ['invalid datetime']",
            "format.named('dns1123Label').hasValue() && !format.named('dns1123label').hasValue()",
            "format.named('uuid').value().validate('x').hasValue()",
            "format.named('date').value() == format.date() && format.date() != format.datetime()",
            "type(format.uuid()) == type(format.date())",
            // On an object, as a rule reads it.
            "!format.dns1123Label().validate(object.metadata.name).hasValue()",
            "object.metadata.labels.all(k, !format.qualifiedName().validate(k).hasValue())",
        ],
    );
    let problems = |format: &str, text: &str| {
        let format = NAMED_FORMATS
            .iter()
            .find(|(n, _)| *n == format)
            .map(|(_, f)| *f)
            .unwrap();
        format.problems(text)
    };
    assert_eq!(
        problems("dns1123Label", "My_Name"),
        [
            "a lowercase RFC 1123 label must consist of lower case alphanumeric characters \
          or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  \
          or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
        ]
    );
    assert_eq!(
        problems("dns1123Label", &long),
        ["must be no more than 63 characters"]
    );
    assert_eq!(
        problems("qualifiedName", "Example.com/-x"),
        [
            "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric \
             characters, '-' or '.', and must start and end with an alphanumeric character \
             (e.g. 'example.com', regex used for validation is \
             '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start \
             and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or \
             '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        ]
    );
    assert!(
        problems("qualifiedName", "a/b/c")[0].starts_with("a qualified name must consist of"),
        "{:?}",
        problems("qualifiedName", "a/b/c")
    );
    assert_eq!(
        problems("uri", "../x"),
        ["'../x' is not a URL: it is neither an absolute URL nor an absolute path"]
    );
    // A prefix ending in a multi-byte character and '-' is read, not cut inside it.
    assert_eq!(problems("dns1123LabelPrefix", "é-").len(), 1);
}
