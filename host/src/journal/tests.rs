//! The journal on real caches: entries, who, diffs, `asOf`, Secrets,
//! restarts and retention.

use std::sync::Arc;
use std::time::Duration;

use redb::ReadableTable;
use serde_json::{Value, json};

use super::*;
use crate::config::{JournalConfig, JournalKind};
use crate::gvk::ResourceInfo;
use crate::metrics::Metrics;
use crate::store::{ChangeType, Dictionary, Ingest, Origin, StoredObject};
use crate::watch::{Watch, WatchSettings};

const WHO: Ingest = Ingest {
    keep_managed_fields: false,
    who: true,
};

fn resource(group: &str, kind: &str, plural: &str) -> ResourceInfo {
    ResourceInfo {
        gvk: Gvk::new(group, "v1", kind),
        plural: plural.into(),
        namespaced: true,
    }
}

/// A managedFields entry.
fn managed(manager: &str, subresource: &str, time: &str, fields: Value) -> Value {
    let mut entry = json!({
        "manager": manager, "operation": "Update", "apiVersion": "apps/v1",
        "time": time, "fieldsType": "FieldsV1", "fieldsV1": fields,
    });
    if !subresource.is_empty() {
        entry["subresource"] = json!(subresource);
    }
    entry
}

fn deployment(rv: u32, labels: Value, replicas: u32, ready: u32, managers: Vec<Value>) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "frontend", "namespace": "shop", "uid": "u-1",
            "resourceVersion": rv.to_string(), "labels": labels, "managedFields": managers},
        "spec": {"replicas": replicas, "template": {"spec": {"containers": [
            {"name": "web", "image": "shop/frontend:1.4", "env": environment()}]}}},
        "status": {"readyReplicas": ready, "observedGeneration": rv},
    })
}

/// Forty variables of varied text, as a real template has: about 3 KB
/// that compresses as real text does, not as a repeated letter.
fn environment() -> Value {
    let mut seed = 7u64;
    let mut word = || {
        (0..24)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                char::from(b'a' + (seed >> 59) as u8 % 26)
            })
            .collect::<String>()
    };
    (0..40)
        .map(|i| json!({"name": format!("SETTING_{i}"), "value": word()}))
        .collect()
}

struct Setup {
    journal: Arc<Journal>,
    watches: Arc<Watches>,
}

fn setup(config: &JournalConfig, dir: Option<&std::path::Path>) -> Setup {
    let scope = Arc::new(Scope::new(config, dir.is_some()));
    let journal = Journal::open(scope, dir).expect("the journal opens");
    let watches = Arc::new(Watches::new(
        None,
        WatchSettings::default(),
        Arc::new(Metrics::new()),
    ));
    journal.follow_watches(&watches);
    Setup { journal, watches }
}

impl Setup {
    /// A synced watch of `resource`, its first snapshot journaled.
    async fn watch(&self, resource: &ResourceInfo) -> Arc<Watch> {
        let watch = self
            .watches
            .ensure(resource, crate::config::WatchOptions::default(), false);
        watch.cache.mark_synced();
        let kind = kind_key(&resource.gvk.group, &resource.gvk.kind);
        for _ in 0..200 {
            self.journal.flush().await;
            if self.journal.status()["kinds"]
                .as_array()
                .is_some_and(|k| k.iter().any(|k| k["kind"] == kind.as_str()))
                || self.first(&kind)
            {
                return watch;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("the journal did not take the first snapshot of {kind}");
    }

    fn first(&self, kind: &str) -> bool {
        let txn = self.journal.db.begin_read().unwrap();
        let meta = txn.open_table(META).unwrap();
        meta.get(format!("first/{kind}").as_str())
            .unwrap()
            .is_some()
    }

    /// Applies a change and waits until it is journaled; the time just
    /// before it was made.
    async fn apply(&self, watch: &Watch, kind: ChangeType, object: Value) -> u64 {
        let before = now_micros();
        tokio::time::sleep(Duration::from_millis(2)).await;
        let object = StoredObject::from_value(object, &watch.key.gvk, WHO).unwrap();
        watch
            .cache
            .apply(kind, object, Origin::Watch)
            .expect("a change");
        self.journal.flush().await;
        // Let the feed hand it over and the writer write it.
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(5)).await;
            self.journal.flush().await;
            if self.journal.counts.lock().written > 0 {
                break;
            }
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        self.journal.flush().await;
        before
    }

    /// Every entry, decoded, as text.
    fn entries_text(&self) -> String {
        let txn = self.journal.db.begin_read().unwrap();
        let entries = txn.open_table(ENTRIES).unwrap();
        entries
            .iter()
            .unwrap()
            .map(|row| {
                let (_, v) = row.unwrap();
                serde_json::to_string(&record::Record::decode(v.value()).unwrap()).unwrap()
            })
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The stored size of each entry of `kind`, oldest first.
    fn sizes(&self, kind: &str) -> Vec<u64> {
        let txn = self.journal.db.begin_read().unwrap();
        let kinds = txn.open_table(KINDS).unwrap();
        kinds
            .range((kind, 0)..=(kind, u64::MAX))
            .unwrap()
            .map(|row| row.unwrap().1.value())
            .collect()
    }
}

fn frontend() -> NodeKey {
    NodeKey {
        group: "apps".into(),
        kind: "Deployment".into(),
        namespace: "shop".into(),
        name: "frontend".into(),
    }
}

#[tokio::test]
async fn each_version_says_who_made_it_and_what_changed() {
    let s = setup(&JournalConfig::default(), None);
    let watch = s
        .watch(&resource("apps", "Deployment", "deployments"))
        .await;
    let before_creation = now_micros();
    tokio::time::sleep(Duration::from_millis(5)).await;

    let applied = managed(
        "kubectl-client-side-apply",
        "",
        "2026-11-29T10:00:00Z",
        json!({"f:spec": {}}),
    );
    let mut managers = vec![applied.clone()];
    s.apply(
        &watch,
        ChangeType::Added,
        deployment(1, json!({"app": "web"}), 1, 0, managers.clone()),
    )
    .await;
    managers.push(managed(
        "kubectl-label",
        "",
        "2026-11-29T10:01:00Z",
        json!({"f:metadata": {"f:labels": {"f:tier": {}}}}),
    ));
    let labelled = s
        .apply(
            &watch,
            ChangeType::Modified,
            deployment(
                2,
                json!({"app": "web", "tier": "front"}),
                1,
                0,
                managers.clone(),
            ),
        )
        .await;
    managers.push(managed(
        "kubectl",
        "scale",
        "2026-11-29T10:02:00Z",
        json!({"f:spec": {"f:replicas": {}}}),
    ));
    let scaled = s
        .apply(
            &watch,
            ChangeType::Modified,
            deployment(
                3,
                json!({"app": "web", "tier": "front"}),
                3,
                0,
                managers.clone(),
            ),
        )
        .await;
    // The controller's status update in the same second as the scale.
    managers.push(managed(
        "kube-controller-manager",
        "status",
        "2026-11-29T10:02:00Z",
        json!({"f:status": {}}),
    ));
    // Scaled up: ready replicas as the status says, by the same writers.
    let scaled_up = |rv, ready| {
        deployment(
            rv,
            json!({"app": "web", "tier": "front"}),
            3,
            ready,
            managers.clone(),
        )
    };
    s.apply(&watch, ChangeType::Modified, scaled_up(4, 3)).await;
    // Its second in that second, with the same fields: no entry moves.
    s.apply(&watch, ChangeType::Modified, scaled_up(5, 2)).await;
    s.apply(&watch, ChangeType::Deleted, scaled_up(5, 2)).await;
    let deleted = now_micros();

    let versions = s
        .journal
        .history(&frontend(), 0, u64::MAX, 100, true)
        .unwrap();
    let summary: Vec<(String, Option<String>)> = versions
        .iter()
        .map(|v| (v.change().to_string(), v.manager().map(str::to_string)))
        .collect();
    assert_eq!(
        summary,
        [
            ("DELETED".to_string(), None),
            (
                "MODIFIED".to_string(),
                Some("kube-controller-manager".to_string())
            ),
            (
                "MODIFIED".to_string(),
                Some("kube-controller-manager".to_string())
            ),
            ("MODIFIED".to_string(), Some("kubectl".to_string())),
            ("MODIFIED".to_string(), Some("kubectl-label".to_string())),
            (
                "ADDED".to_string(),
                Some("kubectl-client-side-apply".to_string())
            ),
        ]
    );
    // Read without whole objects, each version says the same.
    let light = s
        .journal
        .history(&frontend(), 0, u64::MAX, 100, false)
        .unwrap();
    let said = |versions: &[Arc<Version>]| -> Vec<(Vec<String>, Value)> {
        versions
            .iter()
            .map(|v| (v.lines.clone(), v.to_json(false)["diff"].clone()))
            .collect()
    };
    assert_eq!(said(&light), said(&versions));
    assert!(light.iter().all(|v| v.to_json(true)["object"].is_null()));
    // Read again, the versions are the ones decoded the first time, and
    // show all that a version read whole shows.
    let again = s
        .journal
        .history(&frontend(), 0, u64::MAX, 100, false)
        .unwrap();
    assert_eq!(s.journal.decoded.len(), light.len());
    assert!(again.iter().zip(&light).all(|(a, l)| Arc::ptr_eq(a, l)));
    let shown = |versions: &[Arc<Version>]| -> Vec<Value> {
        versions.iter().map(|v| v.to_json(false)).collect()
    };
    assert_eq!(shown(&again), shown(&versions));

    // How long the writer took, over what it wrote.
    let status = s.journal.status();
    assert_eq!(status["writer"], json!({"running": true, "error": null}));
    let lag = &status["writeLag"];
    assert!(lag["entries"].as_u64().unwrap() >= 6, "{lag}");
    assert!(
        lag["p50Ms"].as_f64().unwrap() <= lag["p99Ms"].as_f64().unwrap(),
        "{lag}"
    );

    // The second status update is a guess, and says so; the first is not.
    assert_eq!(versions[1].to_json(false)["who"]["guessed"], true);
    assert_eq!(versions[2].to_json(false)["who"].get("guessed"), None);
    let scale = versions[3].to_json(false);
    assert_eq!(scale["who"]["subresource"], "scale");
    assert!(
        scale["diffText"]
            .as_array()
            .unwrap()
            .iter()
            .any(|l| l == "~ /spec/replicas: 1 → 3"),
        "{scale}"
    );
    assert!(
        scale["diff"]
            .as_array()
            .unwrap()
            .contains(&json!({"op": "replace", "path": "/spec/replicas", "value": 3})),
        "{scale}"
    );
    assert!(versions[3].to_json(true)["object"]["spec"]["replicas"] == 3);

    // A status update is stored as a patch: a tenth of the object's JSON.
    let sizes = s.sizes("apps/Deployment");
    let json = deployment(4, json!({"app": "web", "tier": "front"}), 3, 3, vec![])
        .to_string()
        .len() as u64;
    assert!(
        sizes[3] * 10 <= json,
        "a status update took {} bytes, the object's JSON {json}",
        sizes[3]
    );
    assert!(
        sizes[0] * 2 > json / 2,
        "the first version is whole: {} bytes",
        sizes[0]
    );

    // The object as it was.
    match s.journal.as_of(&frontend(), before_creation).unwrap() {
        AsOf::Missing(why) => assert!(why.contains("did not exist yet"), "{why}"),
        other => panic!("before creation: {other:?}"),
    }
    match s.journal.as_of(&frontend(), scaled).unwrap() {
        AsOf::Found(object) => {
            assert_eq!(object["metadata"]["labels"]["tier"], "front");
            assert_eq!(object["spec"]["replicas"], 1);
            assert!(object["metadata"].get("managedFields").is_none());
        }
        other => panic!("between versions: {other:?}"),
    }
    match s.journal.as_of(&frontend(), labelled).unwrap() {
        AsOf::Found(object) => assert!(object["metadata"]["labels"].get("tier").is_none()),
        other => panic!("after creation: {other:?}"),
    }
    match s.journal.as_of(&frontend(), deleted + 1).unwrap() {
        AsOf::Missing(why) => assert!(why.contains("deleted"), "{why}"),
        other => panic!("after deletion: {other:?}"),
    }
    match s.journal.as_of(&frontend(), 1_000_000).unwrap() {
        AsOf::Gone(why) => assert!(why.contains("reaches back to"), "{why}"),
        other => panic!("before the journal: {other:?}"),
    }

    // Recent changes, filtered by who made them.
    let filter = ChangesFilter {
        since: 0,
        until: u64::MAX,
        who: Some("kubectl-label".into()),
        limit: 10,
        ..ChangesFilter::default()
    };
    let listed = s.journal.changes(&filter).unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(
        listed[0].to_json()["changed"],
        json!(["/metadata/labels/tier", "/status/observedGeneration"])
    );
}

#[tokio::test]
async fn a_secrets_values_never_reach_the_journal() {
    let dir = tempfile::tempdir().unwrap();
    let s = setup(&JournalConfig::default(), Some(dir.path()));
    let watch = s.watch(&resource("", "Secret", "secrets")).await;
    let secret = |password: &str| {
        json!({
            "apiVersion": "v1", "kind": "Secret", "type": "Opaque",
            "metadata": {"name": "db", "namespace": "shop", "uid": "s-1", "resourceVersion": password.len().to_string(),
                "annotations": {"kubectl.kubernetes.io/last-applied-configuration":
                    format!("{{\"data\":{{\"password\":\"{password}\"}}}}")}},
            "data": {"password": password},
        })
    };
    s.apply(&watch, ChangeType::Added, secret("c3VwZXJzZWNyZXQ="))
        .await;
    s.apply(&watch, ChangeType::Modified, secret("YW5vdGhlcnNlY3JldA=="))
        .await;
    let text = s.entries_text();
    assert!(text.contains("dataSha256"), "{text}");
    for value in ["c3VwZXJzZWNyZXQ", "YW5vdGhlcnNlY3JldA"] {
        assert!(!text.contains(value), "{value} in the journal: {text}");
    }
    let file = std::fs::read(dir.path().join(FILE_NAME)).unwrap();
    assert!(memchr::memmem::find(&file, b"c3VwZXJzZWNyZXQ").is_none());
    let versions = s
        .journal
        .history(
            &NodeKey {
                group: "".into(),
                kind: "Secret".into(),
                namespace: "shop".into(),
                name: "db".into(),
            },
            0,
            u64::MAX,
            10,
            true,
        )
        .unwrap();
    assert_eq!(versions.len(), 2);
    assert!(
        versions[0]
            .lines
            .iter()
            .any(|l| l.starts_with("~ /dataSha256")),
        "{:?}",
        versions[0].lines
    );
}

fn config_map(name: &str, rv: u64, value: &str) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "shop", "uid": format!("uid-{name}"), "resourceVersion": rv.to_string()},
        "data": {"value": value},
    })
}

#[tokio::test]
async fn retention_drops_the_oldest_by_bytes_and_keeps_later_states_exact() {
    let config = JournalConfig {
        max_bytes: Some(3_000),
        ..JournalConfig::default()
    };
    let s = setup(&config, None);
    let watch = s.watch(&resource("", "ConfigMap", "configmaps")).await;
    let mut times = Vec::new();
    for rv in 1..=60u64 {
        let object = config_map("settings", rv, &format!("{rv}-{}", "v".repeat(300)));
        let kind = if rv == 1 {
            ChangeType::Added
        } else {
            ChangeType::Modified
        };
        times.push(s.apply(&watch, kind, object).await);
    }
    let bytes = s.journal.status()["counts"]["bytes"].as_u64().unwrap();
    assert!(bytes <= 3_000, "{bytes} bytes kept");
    assert!(s.journal.counts.lock().dropped > 0);
    let node = NodeKey {
        group: "".into(),
        kind: "ConfigMap".into(),
        namespace: "shop".into(),
        name: "settings".into(),
    };
    assert!(matches!(
        s.journal.as_of(&node, times[0]).unwrap(),
        AsOf::Gone(_)
    ));
    let kept = s.journal.history(&node, 0, u64::MAX, 1000, true).unwrap();
    assert!(kept.len() < 60 && !kept.is_empty());
    // Every state still reachable is the one written then.
    // (times[i] is just before version i + 1 was made: version i then.)
    for (i, at) in times.iter().enumerate().skip(61 - kept.len()) {
        match s.journal.as_of(&node, *at).unwrap() {
            AsOf::Found(object) => {
                assert_eq!(object["data"]["value"], format!("{i}-{}", "v".repeat(300)))
            }
            other => panic!("version {i}: {other:?}"),
        }
    }
}

#[tokio::test]
async fn retention_by_age_keeps_what_has_not_changed_since() {
    let config = JournalConfig {
        kinds: vec![JournalKind {
            group: "".into(),
            kind: "ConfigMap".into(),
            journal: None,
            max_age: Some(Duration::from_millis(300)),
            max_bytes: None,
        }],
        ..JournalConfig::default()
    };
    let s = setup(&config, None);
    let watch = s.watch(&resource("", "ConfigMap", "configmaps")).await;
    s.apply(&watch, ChangeType::Added, config_map("old", 1, "a"))
        .await;
    s.apply(&watch, ChangeType::Added, config_map("busy", 2, "a"))
        .await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let recent = s
        .apply(&watch, ChangeType::Modified, config_map("busy", 3, "b"))
        .await;
    // The next batch after a second checks retention.
    let node = |name: &str| NodeKey {
        group: "".into(),
        kind: "ConfigMap".into(),
        namespace: "shop".into(),
        name: name.into(),
    };
    let busy = s
        .journal
        .history(&node("busy"), 0, u64::MAX, 10, true)
        .unwrap();
    assert_eq!(busy.len(), 1, "only the recent change is kept");
    assert_eq!(busy[0].lines, ["~ /data/value: \"a\" → \"b\""]);
    assert!(
        s.journal
            .history(&node("old"), 0, u64::MAX, 10, true)
            .unwrap()
            .is_empty()
    );
    // Its state since is the cache's: the same version.
    match s.journal.as_of(&node("old"), recent).unwrap() {
        AsOf::Current { resource_version } => assert_eq!(resource_version, "1"),
        other => panic!("{other:?}"),
    }
    // When it changes at last, its entry still says from what.
    s.apply(&watch, ChangeType::Modified, config_map("old", 4, "b"))
        .await;
    let old = s
        .journal
        .history(&node("old"), 0, u64::MAX, 10, true)
        .unwrap();
    assert_eq!(old.len(), 1);
    assert_eq!(old[0].lines, ["~ /data/value: \"a\" → \"b\""]);
}

#[test]
fn a_restart_is_a_gap_and_what_changed_meanwhile_is_relisted() {
    // More than a part of a snapshot (`SNAPSHOT_PART`) twice over.
    const FILLERS: u64 = 1_100;
    let dir = tempfile::tempdir().unwrap();
    let configmaps = resource("", "ConfigMap", "configmaps");
    let first = tokio::runtime::Runtime::new().unwrap();
    first.block_on(async {
        let s = setup(&JournalConfig::default(), Some(dir.path()));
        let watch = s.watch(&configmaps).await;
        s.apply(&watch, ChangeType::Added, config_map("kept", 1, "a"))
            .await;
        s.apply(&watch, ChangeType::Added, config_map("changed", 2, "a"))
            .await;
        s.apply(&watch, ChangeType::Added, config_map("deleted", 3, "a"))
            .await;
        // Enough others that the relist is written in several parts.
        for i in 0..FILLERS {
            let object = StoredObject::from_value(
                config_map(&format!("filler-{i:04}"), 10 + i, "f"),
                &watch.key.gvk,
                WHO,
            )
            .unwrap();
            watch.cache.apply(ChangeType::Added, object, Origin::Watch);
        }
        for _ in 0..500 {
            s.journal.flush().await;
            if s.journal.counts.lock().written >= 3 + FILLERS {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert_eq!(s.journal.counts.lock().written, 3 + FILLERS);
    });
    drop(first);
    std::thread::sleep(Duration::from_millis(300));
    let second = tokio::runtime::Runtime::new().unwrap();
    second.block_on(async {
        // The first journal lets go of the file once its writer ends.
        let s = reopen(dir.path()).await;
        let watch = s
            .watches
            .ensure(&configmaps, crate::config::WatchOptions::default(), false);
        let fillers = (0..FILLERS).map(|i| (format!("filler-{i:04}"), 10 + i, "f"));
        let listed_now = [("kept", 1, "a"), ("changed", 4, "b"), ("new", 5, "a")]
            .into_iter()
            .map(|(name, rv, value)| (name.to_string(), rv, value))
            .chain(fillers);
        for (name, rv, value) in listed_now {
            let object =
                StoredObject::from_value(config_map(&name, rv, value), &watch.key.gvk, WHO)
                    .unwrap();
            watch
                .cache
                .apply(ChangeType::Added, object, Origin::Initial);
        }
        s.journal.follow_watches(&s.watches);
        watch.cache.mark_synced();
        let mut listed = Vec::new();
        for _ in 0..200 {
            s.journal.flush().await;
            let filter = ChangesFilter {
                since: 0,
                until: u64::MAX,
                limit: 100,
                ..ChangesFilter::default()
            };
            listed = s.journal.changes(&filter).unwrap();
            if listed
                .iter()
                .filter(|l| l.to_json()["origin"] == "relist")
                .count()
                >= 3
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let summary: Vec<(String, String, String)> = listed
            .iter()
            .map(|l| {
                let j = l.to_json();
                (
                    j["type"].as_str().unwrap().to_string(),
                    j["origin"].as_str().unwrap_or("").to_string(),
                    j["name"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        let relisted: Vec<_> = summary[..3]
            .iter()
            .cloned()
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        assert_eq!(
            relisted,
            [
                ("ADDED".into(), "relist".into(), "new".into()),
                ("DELETED".into(), "relist".into(), "deleted".into()),
                ("MODIFIED".into(), "relist".into(), "changed".into()),
            ],
            "{summary:?}"
        );
        assert_eq!(summary[3].0, "GAP", "{summary:?}");
        let gap = listed[3].to_json();
        assert!(
            gap["gap"]["from"].is_string() && gap["gap"]["until"].is_string(),
            "{gap}"
        );
        let relist = listed[0].to_json();
        assert!(relist["gap"]["from"].is_string(), "{relist}");
    });
}

#[tokio::test]
async fn a_version_stored_whole_keeps_its_small_patch_and_reads_the_same() {
    let s = setup(&JournalConfig::default(), None);
    let watch = s.watch(&resource("", "ConfigMap", "configmaps")).await;
    // Big enough that a change of `value` is a small patch.
    let big = |rv: u64| {
        let mut object = config_map("settings", rv, &format!("v{rv}"));
        object["data"]["filler"] = json!("x".repeat(2_000));
        object
    };
    s.apply(&watch, ChangeType::Added, big(1)).await;
    let versions = record::FULL_EVERY as u64 + 4;
    for rv in 2..=versions {
        s.apply(&watch, ChangeType::Modified, big(rv)).await;
    }
    let node = NodeKey {
        group: "".into(),
        kind: "ConfigMap".into(),
        namespace: "shop".into(),
        name: "settings".into(),
    };
    // The version after FULL_EVERY patches is whole, with its patch.
    let txn = s.journal.db.begin_read().unwrap();
    let objects = txn.open_table(OBJECTS).unwrap();
    let entries = txn.open_table(ENTRIES).unwrap();
    let key = node_key(&node);
    let rows: Vec<(u64, u8)> = objects
        .range((key.as_str(), 0)..=(key.as_str(), u64::MAX))
        .unwrap()
        .map(|row| {
            let (k, flags) = row.unwrap();
            (k.value().1, flags.value())
        })
        .collect();
    assert_eq!(rows.len() as u64, versions);
    let whole: Vec<usize> = (0..rows.len()).filter(|i| rows[*i].1 & FULL != 0).collect();
    assert_eq!(whole, [0, record::FULL_EVERY as usize]);
    let stored = entries.get(rows[whole[1]].0).unwrap().unwrap();
    let stored = record::Record::decode(stored.value()).unwrap();
    assert!(
        stored.full.is_some() && stored.patch.is_some(),
        "{stored:?}"
    );
    // Its diff, read from the patch or rebuilt from states, is the same.
    let full = s.journal.history(&node, 0, u64::MAX, 100, true).unwrap();
    let light = s.journal.history(&node, 0, u64::MAX, 100, false).unwrap();
    let said = |versions: &[Arc<Version>]| -> Vec<(Vec<String>, Value)> {
        versions
            .iter()
            .map(|v| (v.lines.clone(), v.patch.get().into()))
            .collect()
    };
    assert_eq!(said(&light), said(&full));
    let at_whole = &light[light.len() - 1 - whole[1]];
    assert_eq!(
        at_whole.lines,
        [format!(
            "~ /data/value: \"v{}\" → \"v{}\"",
            whole[1],
            whole[1] + 1
        )]
    );
}

#[tokio::test]
async fn a_timeline_keeps_the_newest_entries_across_objects_up_to_its_limit() {
    let s = setup(&JournalConfig::default(), None);
    let watch = s.watch(&resource("", "ConfigMap", "configmaps")).await;
    let node = |name: &str| NodeKey {
        group: "".into(),
        kind: "ConfigMap".into(),
        namespace: "shop".into(),
        name: name.into(),
    };
    // `a` changes three times, then `b` twice, then `a` once more.
    let mut rv = 0;
    let mut change = |name: &'static str, value: &str| {
        rv += 1;
        (name, config_map(name, rv, value))
    };
    let changes = [
        change("a", "1"),
        change("a", "2"),
        change("a", "3"),
        change("b", "1"),
        change("b", "2"),
        change("a", "4"),
    ];
    for (i, (_, object)) in changes.into_iter().enumerate() {
        let kind = if i == 0 || i == 3 {
            ChangeType::Added
        } else {
            ChangeType::Modified
        };
        s.apply(&watch, kind, object).await;
    }
    // `a` uses `b`: one step apart.
    let mut graph = crate::relations::Graph::default();
    let found = vec![crate::relations::graph::Found {
        relation: "uses".into(),
        outgoing: true,
        other: node("b"),
        attributes: vec![],
    }];
    graph.replace(
        "test",
        node("a"),
        found,
        vec![],
        std::time::SystemTime::now(),
    );
    let timeline = |limit: usize| {
        let asked = TimelineQuery {
            root: node("a"),
            since: 0,
            until: u64::MAX,
            depth: 1,
            relations: vec![],
            limit,
            max_objects: 100,
        };
        let timeline = s.journal.timeline(&graph, &asked).unwrap();
        let seen: Vec<(String, String)> = timeline
            .entries
            .iter()
            .map(|entry| match entry {
                TimelineEntry::Change { version, .. } => (
                    version.record.name.clone(),
                    version.record.resource_version.clone(),
                ),
                _ => panic!("only changes"),
            })
            .collect();
        (seen, timeline.truncated)
    };
    let named = |pairs: &[(&str, u32)]| -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, rv)| (n.to_string(), rv.to_string()))
            .collect()
    };
    assert_eq!(
        timeline(3),
        (named(&[("a", 6), ("b", 5), ("b", 4)]), true),
        "the newest three of both"
    );
    assert_eq!(
        timeline(6),
        (
            named(&[("a", 6), ("b", 5), ("b", 4), ("a", 3), ("a", 2), ("a", 1)]),
            false
        ),
        "all six, and no more to tell"
    );
}

#[tokio::test]
async fn of_two_paths_as_short_a_timeline_shows_the_one_through_owners() {
    let s = setup(&JournalConfig::default(), None);
    let node = |group: &str, kind: &str, name: &str| NodeKey {
        group: group.into(),
        kind: kind.into(),
        namespace: "shop".into(),
        name: name.into(),
    };
    let deployment = node("apps", "Deployment", "web");
    let replica_set = node("apps", "ReplicaSet", "web-1");
    let pod = node("", "Pod", "web-1-a");
    let config_map = node("", "ConfigMap", "web-config");
    let edge = |relation: &str, other: &NodeKey| crate::relations::graph::Found {
        relation: relation.into(),
        outgoing: true,
        other: other.clone(),
        attributes: vec![],
    };
    // The Pod is two steps from its Deployment either way: through its
    // ReplicaSet, or through the ConfigMap both use. Each order of
    // finding the edges gives the same path.
    let edges = [
        (&deployment, edge("uses", &config_map)),
        (&pod, edge("uses", &config_map)),
        (&deployment, edge("owns", &replica_set)),
        (&replica_set, edge("owns", &pod)),
    ];
    for reversed in [false, true] {
        let mut graph = crate::relations::Graph::default();
        let mut ordered: Vec<_> = edges.iter().collect();
        if reversed {
            ordered.reverse();
        }
        for (subject, found) in ordered {
            graph.replace(
                found.relation.as_str(),
                (*subject).clone(),
                vec![found.clone()],
                vec![],
                std::time::SystemTime::now(),
            );
        }
        let asked = TimelineQuery {
            root: deployment.clone(),
            since: 0,
            until: u64::MAX,
            depth: 2,
            relations: vec![],
            limit: 10,
            max_objects: 100,
        };
        let timeline = s.journal.timeline(&graph, &asked).unwrap();
        let path = |name: &str| -> Vec<(String, String)> {
            let (_, steps) = timeline
                .paths
                .iter()
                .find(|(key, _)| key.ends_with(name))
                .unwrap_or_else(|| panic!("{name} reached"));
            steps
                .iter()
                .map(|s| (s.relation.clone(), s.node.clone()))
                .collect()
        };
        let via: Vec<String> = path("web-1-a").into_iter().map(|(r, _)| r).collect();
        assert_eq!(via, ["owns", "owns"], "reversed: {reversed}");
        assert!(
            path("web-1-a")[0].1.ends_with("web-1"),
            "reversed: {reversed}"
        );
        assert_eq!(path("web-config").len(), 1, "reversed: {reversed}");
    }
}

#[test]
fn decoded_versions_are_kept_within_their_bytes_the_oldest_going_first() {
    let version = |stamp: u64, line: &str| {
        Arc::new(Version {
            stamp,
            record: record::Record::of("/ConfigMap shop/a", "MODIFIED"),
            state: None,
            patch: record::no_ops(),
            lines: vec![line.to_string()],
        })
    };
    let one = version(1, &"x".repeat(100)).size();
    let decoded = read::Decoded::new(one * 2 + one / 2);
    for stamp in 1..=3 {
        decoded.keep(&version(stamp, &"x".repeat(100)));
    }
    assert_eq!(decoded.len(), 2);
    assert!(decoded.get(1).is_none());
    assert!(decoded.get(2).is_some() && decoded.get(3).is_some());
    // One larger than the whole budget is not kept, and drops nothing.
    decoded.keep(&version(4, &"x".repeat(one * 3)));
    assert!(decoded.get(4).is_none());
    assert_eq!(decoded.len(), 2);
}

#[test]
fn a_writer_that_panics_is_reported_stopped_not_quiet() {
    let counts = parking_lot::Mutex::new(write::Counts::default());
    write::run_reporting(&counts, || {});
    assert_eq!(
        counts.lock().stopped,
        None,
        "a writer that ends is not stopped"
    );
    write::run_reporting(&counts, || panic!("index out of bounds"));
    assert_eq!(
        counts.lock().stopped.as_deref(),
        Some("index out of bounds")
    );
    let owned = parking_lot::Mutex::new(write::Counts::default());
    write::run_reporting(&owned, || panic!("entry {} of {}", 3, "/Pod/shop/web"));
    assert_eq!(
        owned.lock().stopped.as_deref(),
        Some("entry 3 of /Pod/shop/web")
    );
}

fn edge(i: usize, added: bool) -> EdgeRecord {
    EdgeRecord {
        from: format!("apps/ReplicaSet/shop/web-{}", i / 10),
        relation: "owns".into(),
        to: format!("/Pod/shop/web-{i}"),
        analyzer: "ownership".into(),
        added,
    }
}

#[tokio::test]
async fn a_burst_of_edges_larger_than_the_queue_is_journaled_whole() {
    let setup = setup(&JournalConfig::default(), None);
    let journal = &setup.journal;
    // A namespace deleted: each Pod's analysis loses its edge, one call
    // each, far faster than the writer's transactions and more than its
    // queue holds.
    let burst = QUEUE_CAPACITY * 5;
    for i in 0..burst {
        journal.edges(vec![edge(i, false)]);
    }
    journal.flush().await;
    let txn = journal.db.begin_read().unwrap();
    let written = read::edges(&txn, 0, u64::MAX).unwrap();
    assert_eq!(written.len(), burst, "every edge that went is journaled");
    assert_eq!(journal.status()["edgesDropped"], 0);
    assert_eq!(written[0].1, edge(0, false));
    assert_eq!(written[burst - 1].1, edge(burst - 1, false));
    assert!(
        written.windows(2).all(|w| w[0].0 < w[1].0),
        "each edge has a stamp of its own, in the order they went"
    );
}

#[test]
fn edges_waiting_past_their_bound_are_counted_and_wake_the_writer_once() {
    let mut pending = write::PendingEdges::default();
    assert!(pending.push(vec![edge(0, true)], 1), "the first wakes it");
    assert!(!pending.push(vec![edge(1, true)], 2), "it is awake already");
    let mut i = 2;
    while pending.push(vec![edge(i, true)], 3) || pending.dropped == 0 {
        i += 1;
        assert!(i <= write::PENDING_EDGES + 1, "the bound is kept");
    }
    assert_eq!(
        i,
        write::PENDING_EDGES,
        "the one past the bound is left out"
    );
    assert_eq!(pending.dropped, 1);
}

/// The watch events of `tests/data/kube-api/changes/{file}.jsonl`.
fn recorded(file: &str) -> Vec<(ChangeType, Value)> {
    crate::recorded::watch_events(&format!("changes/{file}.jsonl"))
        .into_iter()
        .map(|(kind, object)| {
            let kind = match kind.as_str() {
                "ADDED" => ChangeType::Added,
                "MODIFIED" => ChangeType::Modified,
                _ => ChangeType::Deleted,
            };
            (kind, object)
        })
        .collect()
}

/// What the history of `key` says of each version: resourceVersion, type,
/// and who (manager/operation/subresource, time, whether guessed).
fn who_said(s: &Setup, key: &NodeKey) -> Vec<String> {
    let mut versions = s.journal.history(key, 0, u64::MAX, 100, false).unwrap();
    versions.reverse();
    versions
        .iter()
        .map(|v| {
            let view = v.to_json(false);
            let who = &view["who"];
            format!(
                "{} {} {}/{}/{} {} {}",
                view["resourceVersion"].as_str().unwrap_or(""),
                v.change(),
                who["manager"].as_str().unwrap_or("-"),
                who["operation"].as_str().unwrap_or("-"),
                who["subresource"].as_str().unwrap_or(""),
                who["time"].as_str().unwrap_or("no time"),
                if who["guessed"] == true {
                    "guessed"
                } else {
                    ""
                },
            )
            .trim_end()
            .to_string()
        })
        .collect()
}

/// A real API server's watch events while `kubectl apply`, `label`,
/// `scale`, `set image`, `patch`, `annotate`, a server-side apply and
/// `delete` ran on a Deployment and its ConfigMap, with the controllers'
/// updates in between (`tests/data/kube-api/changes`): each version's
/// `who` is the `managedFields` entry that change touched, or, when none
/// moved, a guess said to be one.
#[tokio::test]
async fn who_made_each_change_of_a_real_api_server_is_what_managed_fields_say() {
    let s = setup(&JournalConfig::default(), None);
    let mut events = Vec::new();
    for (file, group, kind, plural) in [
        ("deployments", "apps", "Deployment", "deployments"),
        ("replicasets", "apps", "ReplicaSet", "replicasets"),
        ("configmaps", "", "ConfigMap", "configmaps"),
        ("events", "events.k8s.io", "Event", "events"),
        ("core-events", "", "Event", "events"),
    ] {
        let watch = s.watch(&resource(group, kind, plural)).await;
        for (change, object) in recorded(file) {
            let rv: u64 = object["metadata"]["resourceVersion"]
                .as_str()
                .unwrap()
                .parse()
                .unwrap();
            events.push((rv, watch.clone(), change, object));
        }
    }
    // In the order the API server made them.
    events.sort_by_key(|(rv, ..)| *rv);
    for (_, watch, change, object) in events {
        s.apply(&watch, change, object).await;
    }
    let key = |group: &str, kind: &str, name: &str| NodeKey {
        group: group.into(),
        kind: kind.into(),
        namespace: "default".into(),
        name: name.into(),
    };
    let deployment = who_said(&s, &key("apps", "Deployment", "shop"));
    assert_eq!(
        deployment,
        [
            "272 ADDED kubectl-client-side-apply/Update/ 2026-11-29T06:02:52Z",
            "275 MODIFIED kube-controller-manager/Update/status 2026-11-29T06:02:52Z",
            // The controller again within its second, with the same fields.
            "279 MODIFIED kube-controller-manager/Update/status 2026-11-29T06:02:52Z",
            "281 MODIFIED kube-controller-manager/Update/status 2026-11-29T06:02:52Z",
            "283 MODIFIED kubectl-label/Update/ 2026-11-29T06:02:54Z",
            // Its entry has no time; the apply's entry lost `spec.replicas`.
            "285 MODIFIED kubectl/Update/scale no time",
            "287 MODIFIED kube-controller-manager/Update/status 2026-11-29T06:02:56Z",
            "290 MODIFIED kube-controller-manager/Update/status 2026-11-29T06:02:56Z guessed",
            "294 MODIFIED kube-controller-manager/Update/status 2026-11-29T06:02:56Z guessed",
            "295 MODIFIED kubectl-set/Update/ 2026-11-29T06:02:58Z",
            "299 MODIFIED kube-controller-manager/Update/status 2026-11-29T06:02:58Z",
            "300 MODIFIED kube-controller-manager/Update/status 2026-11-29T06:02:58Z",
            "304 MODIFIED kube-controller-manager/Update/status 2026-11-29T06:02:58Z",
            "306 MODIFIED kubectl-annotate/Update/ 2026-11-29T06:03:02Z",
            "308 MODIFIED kube-controller-manager/Update/status 2026-11-29T06:03:02Z",
            "310 MODIFIED platform-tool/Apply/ 2026-11-29T06:03:04Z",
            // kubectl moves the client-side apply's fields to the
            // server-side manager: only managedFields changed.
            "311 MODIFIED platform-tool/Apply/ 2026-11-29T06:03:04Z",
            "313 DELETED -/-/ no time",
        ]
    );
    let config_map = who_said(&s, &key("", "ConfigMap", "shop-config"));
    assert_eq!(
        config_map,
        [
            "271 ADDED kubectl-client-side-apply/Update/ 2026-11-29T06:02:52Z",
            "305 MODIFIED kubectl-patch/Update/ 2026-11-29T06:03:00Z",
        ]
    );
    let replica_set = who_said(&s, &key("apps", "ReplicaSet", "shop-6dc8b69d5b"));
    assert_eq!(
        replica_set,
        [
            "273 ADDED kube-controller-manager/Update/ 2026-11-29T06:02:52Z",
            "278 MODIFIED kube-controller-manager/Update/status 2026-11-29T06:02:52Z",
            "280 MODIFIED kube-controller-manager/Update/status 2026-11-29T06:02:52Z",
            // The Deployment's controller scales it with `kubectl scale`.
            "286 MODIFIED kube-controller-manager/Update/ 2026-11-29T06:02:56Z",
            "292 MODIFIED kube-controller-manager/Update/status 2026-11-29T06:02:56Z",
            "293 MODIFIED kube-controller-manager/Update/status 2026-11-29T06:02:56Z guessed",
            "315 DELETED -/-/ no time",
        ]
    );
    // The controllers' Events, each kept about the object it regards,
    // told once though both APIs of Events are watched.
    let txn = s.journal.db.begin_read().unwrap();
    let events_about = |group: &str, kind: &str, name: &str| {
        let key = object_key(group, kind, "default", name);
        let about = txn.open_table(ABOUT).unwrap();
        let rows = about
            .range((key.as_str(), 0)..=(key.as_str(), u64::MAX))
            .unwrap()
            .count();
        let told: Vec<String> = read::events_about(&txn, &key, 0, u64::MAX)
            .unwrap()
            .iter()
            .map(|e| {
                let (group, _, _) = e.kind_and_namespace();
                format!("{group} {}", e.detail.as_ref().unwrap()["reason"])
            })
            .collect();
        (rows, told)
    };
    let scaling = "events.k8s.io \"ScalingReplicaSet\"".to_string();
    let created = "events.k8s.io \"SuccessfulCreate\"".to_string();
    assert_eq!(
        events_about("apps", "Deployment", "shop"),
        (6, vec![scaling.clone(), scaling.clone(), scaling])
    );
    assert_eq!(
        events_about("apps", "ReplicaSet", "shop-6dc8b69d5b"),
        (4, vec![created.clone(), created])
    );
}

/// Fills the Deployments' cache with enough objects for it to train a
/// dictionary and keep every later object compressed with it, and waits
/// until the journal has them.
async fn train(s: &Setup, watch: &Watch) {
    let written = s.journal.counts.lock().written;
    fill(watch, Origin::Watch);
    for _ in 0..500 {
        s.journal.flush().await;
        if s.journal.counts.lock().written >= written + FILLERS {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the journal did not take the fillers");
}

/// Deployments enough for their cache to train a dictionary.
const FILLERS: u64 = 600;

/// Puts the [`FILLERS`] in the cache, which trains its dictionary.
fn fill(watch: &Watch, origin: Origin) {
    for i in 0..FILLERS {
        let mut filler = deployment(1, json!({"app": "filler"}), 1, 0, Vec::new());
        filler["metadata"]["name"] = json!(format!("filler-{i:03}"));
        filler["metadata"]["uid"] = json!(format!("u-filler-{i}"));
        let object = StoredObject::from_value(filler, &watch.key.gvk, WHO).unwrap();
        watch.cache.apply(ChangeType::Added, object, origin);
    }
    assert!(watch.cache.compression().trainings >= 1, "a dictionary");
}

impl Setup {
    /// The stored entries of `key`, oldest first.
    fn stored(&self, key: &NodeKey) -> Vec<Vec<u8>> {
        let txn = self.journal.db.begin_read().unwrap();
        let objects = txn.open_table(OBJECTS).unwrap();
        let entries = txn.open_table(ENTRIES).unwrap();
        let key = node_key(key);
        objects
            .range((key.as_str(), 0)..=(key.as_str(), u64::MAX))
            .unwrap()
            .map(|row| {
                let stamp = row.unwrap().0.value().1;
                entries.get(stamp).unwrap().unwrap().value().to_vec()
            })
            .collect()
    }

    /// The journal's dictionaries, with how many entries and bases use
    /// each.
    fn dictionaries(&self) -> Vec<(u64, u64)> {
        let txn = self.journal.db.begin_read().unwrap();
        let table = txn.open_table(DICTIONARIES).unwrap();
        let uses = txn.open_table(DICTIONARY_USES).unwrap();
        table
            .iter()
            .unwrap()
            .map(|row| {
                let id = row.unwrap().0.value();
                (id, uses.get(id).unwrap().map_or(0, |u| u.value()))
            })
            .collect()
    }
}

#[test]
fn a_version_kept_as_the_cache_holds_it_reads_as_any_other_after_a_restart_too() {
    let dir = tempfile::tempdir().unwrap();
    let deployments = resource("apps", "Deployment", "deployments");
    let applied = managed(
        "kubectl-client-side-apply",
        "",
        "2026-11-29T10:00:00Z",
        json!({"f:spec": {}}),
    );
    let labelled = managed(
        "kubectl-label",
        "",
        "2026-11-29T10:01:00Z",
        json!({"f:metadata": {"f:labels": {}}}),
    );
    let scaled = managed(
        "kubectl",
        "scale",
        "2026-11-29T10:02:00Z",
        json!({"f:spec": {"f:replicas": {}}}),
    );
    let labels = json!({"app": "web", "tier": "front"});
    let first = tokio::runtime::Runtime::new().unwrap();
    let (said, between, dictionary) = first.block_on(async {
        let s = setup(&JournalConfig::default(), Some(dir.path()));
        let watch = s.watch(&deployments).await;
        train(&s, &watch).await;
        s.apply(
            &watch,
            ChangeType::Added,
            deployment(2, json!({"app": "web"}), 1, 0, vec![applied.clone()]),
        )
        .await;
        s.apply(
            &watch,
            ChangeType::Modified,
            deployment(
                3,
                labels.clone(),
                1,
                0,
                vec![applied.clone(), labelled.clone()],
            ),
        )
        .await;
        let between = s
            .apply(
                &watch,
                ChangeType::Modified,
                deployment(
                    4,
                    labels.clone(),
                    3,
                    0,
                    vec![applied.clone(), labelled.clone(), scaled.clone()],
                ),
            )
            .await;
        // Each version is the cache's compressed text, not a patch.
        let stored = s.stored(&frontend());
        assert_eq!(stored.len(), 3);
        // The first whole, the next ones deltas from the one before.
        let kept: Vec<Option<u64>> = stored
            .iter()
            .map(|bytes| record::Textual::of(bytes).expect("textual").dictionary())
            .collect();
        let dictionary = watch
            .cache
            .read()
            .get(&crate::store::ObjectKey::new("shop", "frontend"))
            .and_then(|o| o.dictionary().map(Dictionary::id))
            .expect("kept compressed");
        assert_eq!(kept, [Some(dictionary), None, None]);
        assert!(
            stored[1].len() < 400 && stored[2].len() < 400,
            "{:?}",
            stored.iter().map(Vec::len).collect::<Vec<_>>()
        );
        // It and the fillers' versions after the training use it.
        let dictionaries = s.dictionaries();
        assert_eq!(dictionaries.len(), 1, "{dictionaries:?}");
        assert_eq!(dictionaries[0].0, dictionary);
        assert!(dictionaries[0].1 >= 1, "{dictionaries:?}");
        // What changed is said at read time, as for any entry.
        let filter = ChangesFilter {
            since: 0,
            until: u64::MAX,
            kinds: vec!["apps/Deployment".into()],
            limit: 2,
            ..ChangesFilter::default()
        };
        let listed: Vec<Value> = s
            .journal
            .changes(&filter)
            .unwrap()
            .iter()
            .map(Listed::to_json)
            .collect();
        assert_eq!(
            listed[0]["changed"],
            json!(["/spec/replicas", "/status/observedGeneration"]),
            "{listed:?}"
        );
        assert_eq!(listed[0]["who"]["manager"], "kubectl");
        assert_eq!(
            listed[1]["changed"],
            json!(["/metadata/labels/tier", "/status/observedGeneration"]),
            "{listed:?}"
        );
        let said = s
            .journal
            .history(&frontend(), 0, u64::MAX, 10, true)
            .unwrap();
        (
            said.iter().map(|v| v.to_json(false)).collect::<Vec<_>>(),
            between,
            dictionary,
        )
    });
    drop(first);
    assert_eq!(said.len(), 3);
    assert_eq!(said[2]["diffText"], json!(["created"]));
    assert_eq!(
        said[1]["diffText"],
        json!([
            "+ /metadata/labels/tier: \"front\"",
            "~ /status/observedGeneration: 2 → 3"
        ])
    );
    assert_eq!(
        said[0]["diffText"],
        json!([
            "~ /spec/replicas: 1 → 3",
            "~ /status/observedGeneration: 3 → 4"
        ])
    );
    assert_eq!(said[0]["who"]["subresource"], "scale");
    assert_eq!(said[1]["who"]["manager"], "kubectl-label");
    // Let go with the journal, once its writer has ended.
    for _ in 0..100 {
        if dictionaries::get(dictionary).is_none() {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        dictionaries::get(dictionary).is_none(),
        "let go with its journal"
    );

    // Opened again, the journal reads them with the dictionary it kept.
    let second = tokio::runtime::Runtime::new().unwrap();
    second.block_on(async {
        let journal = reopen(dir.path()).await.journal;
        assert!(dictionaries::get(dictionary).is_some());
        let again: Vec<Value> = journal
            .history(&frontend(), 0, u64::MAX, 10, true)
            .unwrap()
            .iter()
            .map(|v| v.to_json(false))
            .collect();
        assert_eq!(again, said);
        match journal.as_of(&frontend(), between).unwrap() {
            AsOf::Found(object) => {
                assert_eq!(object["spec"]["replicas"], 1);
                assert_eq!(object["metadata"]["labels"], labels);
                assert_eq!(object["metadata"].get("managedFields"), None);
            }
            other => panic!("{other:?}"),
        }
    });
}

/// Waits past the Deployments' age limit of 300 ms, changes `frontend` to
/// version `rv` with `replicas`, and returns the one version of it that
/// retention kept.
async fn only_version_after_retention(
    s: &Setup,
    watch: &Watch,
    rv: u32,
    replicas: u32,
) -> Arc<Version> {
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let version = deployment(rv, json!({"app": "web"}), replicas, 0, Vec::new());
    s.apply(watch, ChangeType::Modified, version).await;
    let kept = s
        .journal
        .history(&frontend(), 0, u64::MAX, 10, true)
        .unwrap();
    assert_eq!(kept.len(), 1);
    kept[0].clone()
}

#[tokio::test]
async fn a_dictionary_goes_with_the_last_entry_or_base_that_needs_it() {
    let quick = |group: &str, kind: &str| JournalKind {
        group: group.into(),
        kind: kind.into(),
        journal: None,
        max_age: Some(Duration::from_millis(300)),
        max_bytes: None,
    };
    let config = JournalConfig {
        kinds: vec![quick("apps", "Deployment")],
        ..JournalConfig::default()
    };
    let s = setup(&config, None);
    let watch = s
        .watch(&resource("apps", "Deployment", "deployments"))
        .await;
    let configmaps = s.watch(&resource("", "ConfigMap", "configmaps")).await;
    train(&s, &watch).await;
    s.apply(
        &watch,
        ChangeType::Added,
        deployment(2, json!({"app": "web"}), 1, 0, Vec::new()),
    )
    .await;
    let [(dictionary, _)] = s.dictionaries()[..] else {
        panic!("one dictionary: {:?}", s.dictionaries());
    };
    // The fillers and the first version went; that version is the base
    // the second is read against, kept as it was stored.
    let kept = only_version_after_retention(&s, &watch, 3, 3).await;
    assert_eq!(
        kept.lines,
        [
            "~ /spec/replicas: 1 → 3",
            "~ /status/observedGeneration: 2 → 3"
        ]
    );
    assert_eq!(
        s.dictionaries(),
        [(dictionary, 1)],
        "the base; the version is a delta from it"
    );
    let txn = s.journal.db.begin_read().unwrap();
    let base = txn
        .open_table(BASES)
        .unwrap()
        .get(node_key(&frontend()).as_str())
        .unwrap()
        .unwrap()
        .value()
        .to_vec();
    assert_eq!(
        record::Textual::of(&base).and_then(|t| t.dictionary()),
        Some(dictionary)
    );
    drop(txn);

    // The second version goes in turn: the base is its text now, which
    // the third, a delta from it, is read against; the dictionary is
    // needed no more by this object.
    let kept = only_version_after_retention(&s, &watch, 4, 5).await;
    assert_eq!(
        kept.lines,
        [
            "~ /spec/replicas: 3 → 5",
            "~ /status/observedGeneration: 3 → 4"
        ]
    );
    assert_eq!(
        kept.state.as_ref().map(|s| s["spec"]["replicas"].clone()),
        Some(json!(5))
    );
    assert_eq!(s.dictionaries(), []);

    s.apply(
        &watch,
        ChangeType::Deleted,
        deployment(4, json!({"app": "web"}), 5, 0, Vec::new()),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(1200)).await;
    s.apply(&configmaps, ChangeType::Added, config_map("nudge", 1, "a"))
        .await;
    assert_eq!(s.dictionaries(), []);
    assert!(dictionaries::get(dictionary).is_none());
    let kinds = s.journal.status()["kinds"].clone();
    let bytes = kinds
        .as_array()
        .unwrap()
        .iter()
        .find(|k| k["kind"] == DICTIONARY_KIND)
        .map_or(json!(0), |k| k["bytes"].clone());
    assert_eq!(bytes, 0, "{kinds}");
}

/// The journal in `dir`, opened again once the one before let go of it,
/// following no watch yet.
async fn reopen(dir: &std::path::Path) -> Setup {
    for _ in 0..100 {
        let scope = Arc::new(Scope::new(&JournalConfig::default(), true));
        if let Ok(journal) = Journal::open(scope, Some(dir)) {
            let watches = Arc::new(Watches::new(
                None,
                WatchSettings::default(),
                Arc::new(Metrics::new()),
            ));
            return Setup { journal, watches };
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the journal does not open again");
}

#[test]
fn a_delta_is_made_only_from_the_very_text_the_journal_kept() {
    let dir = tempfile::tempdir().unwrap();
    let deployments = resource("apps", "Deployment", "deployments");
    let version = |rv, replicas| deployment(rv, json!({"app": "web"}), replicas, 0, Vec::new());
    let first = tokio::runtime::Runtime::new().unwrap();
    first.block_on(async {
        let s = setup(&JournalConfig::default(), Some(dir.path()));
        let watch = s.watch(&deployments).await;
        train(&s, &watch).await;
        s.apply(&watch, ChangeType::Added, version(2, 1)).await;
    });
    drop(first);
    let second = tokio::runtime::Runtime::new().unwrap();
    second.block_on(async {
        let s = reopen(dir.path()).await;
        let watch = s
            .watches
            .ensure(&deployments, crate::config::WatchOptions::default(), false);
        fill(&watch, Origin::Initial);
        // Listed again, the same version as another text: its members in
        // another order (as a list and a watch event may write it).
        let mut reordered = version(2, 1);
        let status = reordered.as_object_mut().unwrap().remove("status").unwrap();
        let mut text = format!("{{\"status\":{status},").into_bytes();
        text.extend_from_slice(&reordered.to_string().as_bytes()[1..]);
        let object = StoredObject::from_json(&text, &watch.key.gvk).unwrap();
        assert!(object.json().starts_with(b"{\"status\""));
        watch
            .cache
            .apply(ChangeType::Added, object, Origin::Initial);
        s.journal.follow_watches(&s.watches);
        watch.cache.mark_synced();
        for _ in 0..20 {
            s.journal.flush().await;
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        s.apply(&watch, ChangeType::Modified, version(3, 2)).await;
        s.apply(&watch, ChangeType::Modified, version(4, 3)).await;
        // The change from the other text is whole; the next, from the text
        // kept, a delta.
        let stored = s.stored(&frontend());
        let said: Vec<String> = stored
            .iter()
            .map(|b| serde_json::to_string(&record::Record::decode_header(b)).unwrap())
            .collect();
        let kept: Vec<Option<u64>> = stored
            .iter()
            .map(|bytes| {
                record::Textual::of(bytes)
                    .unwrap_or_else(|| panic!("{said:?}"))
                    .dictionary()
            })
            .collect();
        assert_eq!(kept.len(), 3, "{said:?}");
        assert!(
            kept[0].is_some() && kept[1].is_some() && kept[2].is_none(),
            "{kept:?}"
        );
        let lines: Vec<Vec<String>> = s
            .journal
            .history(&frontend(), 0, u64::MAX, 10, false)
            .unwrap()
            .iter()
            .map(|v| v.lines.clone())
            .collect();
        assert_eq!(
            lines,
            [
                vec![
                    "~ /spec/replicas: 2 → 3",
                    "~ /status/observedGeneration: 3 → 4"
                ],
                vec![
                    "~ /spec/replicas: 1 → 2",
                    "~ /status/observedGeneration: 2 → 3"
                ],
                vec!["created"],
            ]
        );
    });
}

#[test]
fn a_delta_does_not_read_from_another_text_than_its_own() {
    let before = br#"{"spec":{"replicas":1},"status":{"ready":0}}"#;
    let after = br#"{"spec":{"replicas":2},"status":{"ready":0}}"#;
    let bytes = record::Record::of("apps/Deployment\0shop\0frontend", "MODIFIED")
        .encode_delta(before, after)
        .unwrap();
    let record = record::Record::decode(&bytes).unwrap();
    assert_eq!(record.text_after(Some(before)).as_deref(), Some(&after[..]));
    let other = br#"{"status":{"ready":0},"spec":{"replicas":1}}"#;
    assert_eq!(record.text_after(Some(other)), None);
    assert_eq!(record.text_after(None), None);
}
