use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Value, json};

use super::*;
use crate::gvk::Gvk;
use crate::store::{Cache, ChangeType, ObjectKey, Origin};

/// Every object of the recorded cluster, managedFields stripped, as the
/// cache stores them.
fn recorded_objects() -> Vec<StoredObject> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/cluster-recording.jsonl");
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .map(|line| {
            let event: Value = serde_json::from_str(line).unwrap();
            let object = event["object"].clone();
            let api_version = object["apiVersion"].as_str().unwrap();
            let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
            let gvk = Gvk::new(group, version, object["kind"].as_str().unwrap());
            StoredObject::from_value(object, &gvk, false).unwrap()
        })
        .collect()
}

/// Numbers of a xorshift generator started from `seed` (made odd, so
/// never zero).
fn random(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed | 1;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

/// Pod-like objects of about 3 KB: shared structure, varied identity.
fn generated_pod(i: usize) -> Value {
    let mut next = random((i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
    let containers: Vec<Value> = (0..1 + i % 3)
        .map(|c| {
            json!({
                "name": format!("app-{c}"), "image": format!("registry.example/app:{}", i % 17),
                "env": [{"name": "MODE", "value": "production"}, {"name": "SEED", "value": format!("{:x}", next())}],
                "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"memory": "256Mi"}},
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 10},
                "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}]
            })
        })
        .collect();
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": format!("web-{i}-{:x}", next() % 0xfffff), "namespace": format!("ns-{}", i % 7),
            "uid": format!("{:016x}-{:016x}", next(), next()), "resourceVersion": (1000 + i).to_string(),
            "labels": {"app": format!("web-{}", i % 50), "tier": "front"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web", "uid": format!("{:x}", next()), "controller": true}]
        },
        "spec": {"containers": containers, "nodeName": format!("node-{}", next() % 40), "restartPolicy": "Always"},
        "status": {"phase": "Running", "podIP": format!("10.{}.{}.{}", next() % 255, next() % 255, next() % 255),
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-21T00:25:17Z"}]}
    })
}

/// Objects unlike Pods: random words under random keys.
fn generated_other(i: usize) -> Value {
    let mut next = random((i as u64).wrapping_mul(0xd1b5_4a32_d192_ed03) | 7);
    let mut word = move || format!("{:x}", next());
    let data: serde_json::Map<String, Value> =
        (0..60).map(|_| (word(), Value::String(word()))).collect();
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": format!("other-{i}"), "namespace": "x", "resourceVersion": (900_000 + i).to_string()}, "data": data})
}

fn stored(value: Value) -> StoredObject {
    StoredObject::from_value(value, &Gvk::new("", "v1", "Pod"), false).unwrap()
}

/// What a reader sees of an object: its text, and fields read through the
/// top-level index.
fn seen(object: &StoredObject) -> (Vec<u8>, Vec<Option<Vec<u8>>>, Value) {
    let mut written = b"[".to_vec();
    object.write_json(&mut written);
    assert_eq!(&written[1..], &*object.json());
    assert_eq!(object.json_len(), object.json().len());
    let paths: [&[&str]; 4] = [
        &["metadata"],
        &["status", "phase"],
        &["spec", "containers", "0"],
        &["nothing"],
    ];
    let fields = paths
        .iter()
        .map(|p| object.get(p).map(|v| v.into_owned()))
        .collect();
    (object.json().into_owned(), fields, object.to_value())
}

#[test]
fn packed_objects_read_back_byte_for_byte() {
    let mut objects: Vec<StoredObject> = recorded_objects();
    objects.extend((0..2000).map(|i| stored(generated_pod(i))));
    let before: Vec<_> = objects.iter().map(seen).collect();
    let codec = Codec::new();
    // As a list delivers them: pages of 500. The first page (the small
    // objects the recording starts with) is only sampled and stays as it
    // is; the page that completes the samples is packed after training.
    for page in objects.chunks_mut(500) {
        codec.pack(page);
    }
    assert_eq!(codec.stats().trainings, 1);
    let packed = objects.iter().filter(|o| o.dictionary().is_some()).count();
    assert!(
        packed >= objects.len() - 500 - 20,
        "{packed} of {} packed",
        objects.len()
    );
    let after: Vec<_> = objects.iter().map(seen).collect();
    assert!(
        before == after,
        "an object reads back differently once packed"
    );
    let (json, stored): (usize, usize) = objects
        .iter()
        .map(|o| (o.json_len(), o.body().heap_bytes()))
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    assert!(
        stored * 3 < json,
        "{stored} bytes stored for {json} of JSON"
    );
}

#[test]
fn objects_packed_as_they_are_read_match_those_packed_after() {
    let gvk = Gvk::new("", "v1", "Pod");
    // As list items arrive: without kind and apiVersion, with whitespace in
    // one of them (the `Value` way).
    let items: Vec<Box<serde_json::value::RawValue>> = (0..3000)
        .map(|i| {
            let mut pod = generated_pod(i);
            let map = pod.as_object_mut().unwrap();
            map.remove("kind");
            map.remove("apiVersion");
            let text = if i == 2500 {
                serde_json::to_string_pretty(&pod)
            } else {
                serde_json::to_string(&pod)
            };
            serde_json::value::RawValue::from_string(text.unwrap()).unwrap()
        })
        .collect();
    let read = |item: &serde_json::value::RawValue| StoredObject::from_raw(item, &gvk, false);
    let expected: Vec<_> = items.iter().map(|i| seen(&read(i).unwrap())).collect();

    let codec = Codec::new();
    assert!(codec.packer().is_none(), "a packer before any dictionary");
    let mut first: Vec<StoredObject> = items[..1000].iter().map(|i| read(i).unwrap()).collect();
    codec.pack(&mut first);
    assert_eq!(codec.stats().trainings, 1);

    let packer = codec.packer().expect("a packer once trained");
    let mut rest: Vec<StoredObject> = items[1000..]
        .iter()
        .map(|i| StoredObject::from_raw_packed(i, &gvk, false, Some(&packer)).unwrap())
        .collect();
    drop(packer);
    // The object read the `Value` way comes plain, and is packed after.
    assert_eq!(rest.iter().filter(|o| o.dictionary().is_none()).count(), 1);
    codec.pack(&mut rest);
    assert!(rest.iter().all(|o| o.dictionary().is_some()));
    // The packer told the codec how well it did.
    assert!(codec.stats().ratio.is_some_and(|r| r < 0.3));

    let after: Vec<_> = first.iter().chain(&rest).map(seen).collect();
    assert!(
        expected == after,
        "an object packed as it was read reads back differently"
    );
}

#[test]
fn no_packer_while_samples_are_collected() {
    let codec = Codec::new();
    // More than a window of Pods, so that the ratio to judge by is theirs.
    for p in 0..8 {
        let mut page: Vec<StoredObject> = (p * 500..(p + 1) * 500)
            .map(|i| stored(generated_pod(i)))
            .collect();
        codec.pack(&mut page);
    }
    assert!(codec.packer().is_some());
    // Objects of another shape degrade the ratio until the codec collects
    // samples for a new dictionary: from then on pages go through `pack`,
    // which samples them.
    let mut i = 0;
    while codec.packer().is_some() {
        let mut page: Vec<StoredObject> =
            (i..i + 100).map(|i| stored(generated_other(i))).collect();
        codec.pack(&mut page);
        i += 100;
        assert!(i < 100_000, "the codec never asked for new samples");
    }
    assert_eq!(codec.stats().trainings, 1);
}

#[test]
fn pages_packed_on_several_threads_wait_for_the_first_dictionary() {
    // Pages of a list are packed on as many threads as there are cores.
    // While one of them trains the first dictionary, the others must wait
    // for it rather than keep their pages as they are.
    let codec = Codec::new();
    let mut pages: Vec<Vec<StoredObject>> = (0..8)
        .map(|p| {
            (0..500)
                .map(|i| stored(generated_pod(p * 500 + i)))
                .collect()
        })
        .collect();
    std::thread::scope(|scope| {
        for page in &mut pages {
            let codec = &codec;
            scope.spawn(move || codec.pack(page));
        }
    });
    assert_eq!(codec.stats().trainings, 1);
    let plain = pages
        .iter()
        .flatten()
        .filter(|o| o.dictionary().is_none())
        .count();
    // Only the pages sampled before the training (about 1 MiB of Pods,
    // fewer than 500 of them, so at most two pages) can stay plain.
    assert!(plain <= 1000, "{plain} of 4,000 Pods left plain");
}

#[test]
fn a_kind_with_few_objects_is_not_compressed() {
    let cache = Cache::new(Gvk::new("", "v1", "Pod"), 10);
    for i in 0..50 {
        cache.apply(ChangeType::Added, stored(generated_pod(i)), Origin::Watch);
    }
    let view = cache.read();
    assert!(view.iter_after(None).all(|o| o.dictionary().is_none()));
    assert_eq!(cache.compression().trainings, 0);
}

#[test]
fn a_kind_that_changes_shape_is_retrained_and_keeps_answering_meanwhile() {
    let cache = Cache::new(Gvk::new("", "v1", "Pod"), 10);
    let first: Vec<StoredObject> = (0..4000).map(|i| stored(generated_pod(i))).collect();
    let expected: Vec<(ObjectKey, Vec<u8>)> = first
        .iter()
        .map(|o| (o.key().clone(), o.json().into_owned()))
        .collect();
    cache.replace(first, "1000", Origin::Initial);
    assert_eq!(cache.compression().trainings, 1);
    let done = AtomicBool::new(false);
    let reads = std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let mut reads = 0usize;
            while !done.load(Ordering::Relaxed) {
                for (key, json) in expected.iter().step_by(37) {
                    let object = cache.read().get(key).cloned().expect("still there");
                    assert_eq!(&*object.json(), &json[..], "{key} changed");
                    reads += 1;
                }
            }
            reads
        });
        for i in 0..12_000 {
            cache.apply(ChangeType::Added, stored(generated_other(i)), Origin::Watch);
        }
        done.store(true, Ordering::Relaxed);
        reader.join().unwrap()
    });
    assert!(reads > 0);
    let stats = cache.compression();
    assert!(stats.trainings >= 2, "{stats:?}");
    let view = cache.read();
    let generation = |key: &ObjectKey| {
        view.get(key)
            .unwrap()
            .dictionary()
            .map(Dictionary::generation)
    };
    assert_eq!(generation(&expected[3000].0), Some(1));
    assert_eq!(
        generation(&ObjectKey::new("x", "other-11999")),
        Some(stats.trainings)
    );
    for (key, json) in &expected {
        assert_eq!(&*view.get(key).unwrap().json(), &json[..]);
    }
}
