use std::path::Path;

use serde_json::{Value, json};

use super::*;

fn raw(text: &str) -> Box<RawValue> {
    RawValue::from_string(text.to_string()).unwrap()
}

/// What the cache and its readers see of an object: key, uid,
/// resourceVersion, labels, owners and the object.
type Seen = (
    String,
    String,
    String,
    Vec<(String, String)>,
    Vec<String>,
    Value,
);

fn seen(o: &StoredObject) -> Seen {
    (
        o.key().to_string(),
        o.uid().to_string(),
        o.resource_version().to_string(),
        o.labels().map(|(k, v)| (k.into(), v.into())).collect(),
        o.owner_uids().map(String::from).collect(),
        o.to_value(),
    )
}

/// The recorded cluster's objects, as the API server wrote them, with
/// and without `kind`/`apiVersion` (list items come without).
fn recorded() -> Vec<(Gvk, String)> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/cluster-recording.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    let mut objects = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let event: Value = serde_json::from_str(line).unwrap();
        let mut object = event["object"].clone();
        let api_version = object["apiVersion"].as_str().unwrap().to_string();
        let (group, version) = api_version.split_once('/').unwrap_or(("", &api_version));
        let gvk = Gvk::new(group, version, object["kind"].as_str().unwrap());
        if i % 2 == 0 {
            let map = object.as_object_mut().unwrap();
            map.remove("kind");
            map.remove("apiVersion");
        }
        objects.push((gvk, serde_json::to_string(&object).unwrap()));
    }
    objects
}

#[test]
fn agrees_with_the_value_way_on_every_recorded_object() {
    let objects = recorded();
    assert!(objects.len() > 1000);
    for keep in [false, true] {
        for (gvk, text) in &objects {
            let value: Value = serde_json::from_str(text).unwrap();
            let slow = StoredObject::from_value(value, gvk, keep).unwrap();
            let fast = StoredObject::from_raw(&raw(text), gvk, keep).unwrap();
            assert_eq!(seen(&fast), seen(&slow), "{gvk} {}", slow.key());
            assert_eq!(fast.heap_bytes(), slow.heap_bytes(), "{gvk} {}", slow.key());
            // Fields read through the index agree too.
            for path in [
                &["metadata"][..],
                &["spec"],
                &["status", "phase"],
                &["kind"],
            ] {
                let field = |o: &StoredObject| {
                    o.get(path)
                        .map(|t| serde_json::from_slice::<Value>(&t).unwrap())
                };
                assert_eq!(field(&fast), field(&slow), "{path:?} of {}", slow.key());
            }
        }
    }
}

#[test]
fn keeps_the_received_text_byte_for_byte_but_for_managed_fields() {
    let sent = r#"{"metadata":{"name":"web","namespace":"shop","uid":"u1","resourceVersion":"7","managedFields":[{"manager":"kubectl","fieldsV1":{"f:spec":{}}}],"labels":{"b":"2","a":"1"}},"spec":{"z":1,"a":[true,null,-1.5e3,"\u00e9\"x"]},"status":{}}"#;
    let gvk = Gvk::new("apps", "v1", "Deployment");
    let stored = StoredObject::from_raw(&raw(sent), &gvk, false).unwrap();
    assert_eq!(
        String::from_utf8(stored.json().into_owned()).unwrap(),
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"shop","uid":"u1","resourceVersion":"7","labels":{"b":"2","a":"1"}},"spec":{"z":1,"a":[true,null,-1.5e3,"\u00e9\"x"]},"status":{}}"#
    );
    assert_eq!(
        stored.labels().collect::<Vec<_>>(),
        [("a", "1"), ("b", "2")]
    );
    assert_eq!(
        stored.get(&["spec", "a", "3"]).as_deref(),
        Some(&br#""\u00e9\"x""#[..])
    );
    assert_eq!(
        stored.get(&["kind"]).as_deref(),
        Some(&br#""Deployment""#[..])
    );

    let kept = StoredObject::from_raw(&raw(sent), &gvk, true).unwrap();
    let with_kind = format!(
        r#"{{"apiVersion":"apps/v1","kind":"Deployment",{}"#,
        &sent[1..]
    );
    assert_eq!(
        String::from_utf8(kept.json().into_owned()).unwrap(),
        with_kind
    );

    // An object that has its kind and apiVersion keeps them where they are.
    let full = r#"{"kind":"Other","metadata":{"name":"x"},"apiVersion":"v9"}"#;
    let stored = StoredObject::from_raw(&raw(full), &gvk, false).unwrap();
    assert_eq!(&*stored.json(), full.as_bytes());
}

#[test]
fn text_with_whitespace_takes_the_value_way_and_bad_objects_are_refused() {
    let gvk = Gvk::new("", "v1", "ConfigMap");
    let spaced = r#"{ "metadata": {"name": "c", "managedFields": []}, "data": {"a": "b c"} }"#;
    let stored = StoredObject::from_raw(&raw(spaced), &gvk, false).unwrap();
    assert_eq!(
        stored.to_value(),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b c"}})
    );
    assert_eq!(
        stored.get(&["data", "a"]).as_deref(),
        Some(&br#""b c""#[..])
    );
    for (text, error) in [
        (r#"{"metadata":{"namespace":"a"}}"#, ObjectError::NoName),
        (r#"{"metadata":"x"}"#, ObjectError::NoName),
        (r#"{"spec":{}}"#, ObjectError::NoName),
        (r#"[1,2]"#, ObjectError::NotAnObject),
    ] {
        assert_eq!(
            StoredObject::from_raw(&raw(text), &gvk, false).unwrap_err(),
            error,
            "{text}"
        );
    }
    // Labels of the wrong shape are read as the `Value` way reads them.
    let odd = r#"{"metadata":{"name":"c","labels":{"a":"1","n":2}}}"#;
    let stored = StoredObject::from_raw(&raw(odd), &gvk, false).unwrap();
    let value = StoredObject::from_value(serde_json::from_str(odd).unwrap(), &gvk, false).unwrap();
    assert_eq!(seen(&stored), seen(&value));
    assert_eq!(stored.labels().collect::<Vec<_>>(), [("a", "1")]);
}
