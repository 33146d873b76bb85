use serde_json::json;

use super::*;

fn gvk() -> Gvk {
    Gvk::new("", "v1", "Pod")
}

fn pod(ns: &str, name: &str, rv: u64, labels: serde_json::Value) -> StoredObject {
    let v = json!({"metadata": {
        "namespace": ns, "name": name, "uid": format!("uid-{ns}-{name}"),
        "resourceVersion": rv.to_string(), "labels": labels,
        "ownerReferences": [{"uid": format!("owner-{}", labels["app"].as_str().unwrap_or("none"))}]
    }});
    StoredObject::from_value(v, &gvk(), false).unwrap()
}

#[test]
fn objects_are_found_by_uid_whether_or_not_it_is_a_uuid() {
    let cache = Cache::new(gvk(), 10);
    let with_uid = |name: &str, uid: &str, rv: u64| {
        let v = json!({"metadata": {"namespace": "a", "name": name, "uid": uid, "resourceVersion": rv.to_string()}});
        StoredObject::from_value(v, &gvk(), false).unwrap()
    };
    let uuid = "6f1c2a9e-3b4d-4e5f-8a7b-1c2d3e4f5a6b";
    cache.apply(ChangeType::Added, with_uid("x", uuid, 1), Origin::Watch);
    cache.apply(
        ChangeType::Added,
        with_uid("y", "made-by-hand", 2),
        Origin::Watch,
    );
    {
        let view = cache.read();
        assert_eq!(view.get_by_uid(uuid).unwrap().name(), "x");
        assert_eq!(view.get_by_uid("made-by-hand").unwrap().name(), "y");
        // Found as written, not as the number it spells.
        assert!(view.get_by_uid(&uuid.to_uppercase()).is_none());
    }
    cache.apply(ChangeType::Deleted, with_uid("x", uuid, 3), Origin::Watch);
    cache.apply(
        ChangeType::Deleted,
        with_uid("y", "made-by-hand", 4),
        Origin::Watch,
    );
    let view = cache.read();
    assert!(view.get_by_uid(uuid).is_none());
    assert!(view.get_by_uid("made-by-hand").is_none());
}

#[test]
fn a_namespace_is_read_as_a_range_of_the_cache() {
    let cache = Cache::new(gvk(), 10);
    for (rv, (ns, name)) in [
        ("a", "y"),
        ("a", "x"),
        ("a-b", "x"),
        ("ab", "x"),
        ("", "x"),
        ("b", "x"),
    ]
    .into_iter()
    .enumerate()
    {
        cache.apply(
            ChangeType::Added,
            pod(ns, name, rv as u64 + 1, json!({})),
            Origin::Watch,
        );
    }
    let view = cache.read();
    let names = |ns: &str, after: Option<ObjectKey>| -> Vec<String> {
        view.iter_in_namespace_after(ns, after.as_ref())
            .map(|o| o.key().to_string())
            .collect()
    };
    assert_eq!(names("a", None), ["a/x", "a/y"]);
    assert_eq!(view.namespace_len("a"), 2);
    assert_eq!(names("a", Some(ObjectKey::new("a", "x"))), ["a/y"]);
    assert_eq!(
        names("a", Some(ObjectKey::new("a", "y"))),
        Vec::<String>::new()
    );
    // Keys before or after the namespace, as a continue token of another
    // query may hold.
    assert_eq!(names("a", Some(ObjectKey::new("", "x"))), ["a/x", "a/y"]);
    assert_eq!(
        names("a", Some(ObjectKey::new("b", "x"))),
        Vec::<String>::new()
    );
    assert_eq!(
        names("a", Some(ObjectKey::new("a-b", "x"))),
        Vec::<String>::new()
    );
    assert_eq!(names("", None), ["x"]);
    assert_eq!(names("a-b", None), ["a-b/x"]);
    assert_eq!(names("c", None), Vec::<String>::new());
    let mut namespaces: Vec<&str> = view.namespaces().collect();
    namespaces.sort_unstable();
    assert_eq!(namespaces, ["", "a", "a-b", "ab", "b"]);
}

fn summary(changes: &[Arc<Change>]) -> Vec<String> {
    changes
        .iter()
        .map(|c| {
            format!(
                "{} {} {}",
                c.kind,
                c.object.key(),
                c.object.resource_version()
            )
        })
        .collect()
}

#[test]
fn relist_diff_emits_only_differences() {
    let cache = Cache::new(gvk(), 100);
    let first = cache.replace(
        vec![
            pod("a", "same", 1, json!({})),
            pod("a", "changed", 2, json!({})),
            pod("a", "gone", 3, json!({})),
        ],
        "3",
        Origin::Initial,
    );
    // In the order of keys, as the API server lists.
    assert_eq!(
        summary(&first),
        ["ADDED a/changed 2", "ADDED a/gone 3", "ADDED a/same 1"]
    );

    let diff = cache.replace(
        vec![
            pod("a", "same", 1, json!({})),
            pod("a", "changed", 7, json!({})),
            pod("b", "new", 8, json!({})),
        ],
        "9",
        Origin::Relist,
    );
    assert_eq!(
        summary(&diff),
        ["MODIFIED a/changed 7", "ADDED b/new 8", "DELETED a/gone 3"]
    );
    assert!(diff.iter().all(|c| c.origin == Origin::Relist));
    assert_eq!(diff[0].old.as_ref().unwrap().resource_version(), "2");
    let view = cache.read();
    assert_eq!(view.len(), 3);
    assert_eq!(view.resource_version(), "9");
}

fn numbered(range: std::ops::Range<u64>, rv: impl Fn(u64) -> u64) -> Vec<StoredObject> {
    range
        .map(|i| pod("a", &format!("p{i:05}"), rv(i), json!({})))
        .collect()
}

#[test]
fn a_relist_of_many_batches_comes_to_the_tap_as_one_group() {
    let n = 3 * RELIST_BATCH as u64 + 7;
    let cache = Cache::new(gvk(), 100_000);
    cache.replace(numbered(0..n, |i| i + 1), &n.to_string(), Origin::Initial);
    let mut rx = cache.tap(usize::MAX).rx;
    // Every other object changed, the first 100 gone, 50 new ones.
    let relisted = numbered(100..n + 50, |i| if i % 2 == 0 { n + 1 + i } else { i + 1 });
    let changes = cache.replace(relisted, "999999", Origin::Relist);
    let group = match rx.try_recv() {
        Some(Tapped::Changes(group)) => group,
        other => panic!("expected one group, got {other:?}"),
    };
    assert!(
        rx.try_recv().is_none(),
        "the relist came as more than one group"
    );
    assert_eq!(summary(&group), summary(&changes));
    let modified = (100..n).filter(|i| i % 2 == 0).count();
    let added = 50;
    let deleted = 100;
    assert_eq!(changes.len(), modified + added + deleted);
    assert_eq!(
        changes
            .iter()
            .filter(|c| c.kind == ChangeType::Deleted)
            .count(),
        deleted
    );
    let view = cache.read();
    assert_eq!(view.len() as u64, n - 100 + 50);
    assert_eq!(view.resource_version(), "999999");
    assert!(view.get(&ObjectKey::new("a", "p00000")).is_none());
}

#[test]
fn a_tap_made_during_a_relist_sees_each_change_once() {
    let n = 20 * RELIST_BATCH as u64;
    let cache = Arc::new(Cache::new(gvk(), 100_000));
    cache.replace(numbered(0..n, |i| i + 1), &n.to_string(), Origin::Initial);
    let mut live = cache.live();
    let tapping = {
        let cache = cache.clone();
        // Taps as soon as the relist's first batch is in.
        std::thread::spawn(move || {
            live.blocking_recv().expect("the relist changes something");
            cache.tap(usize::MAX)
        })
    };
    cache.replace(numbered(0..n, |i| n + 1 + i), "999999", Origin::Relist);
    let tap = tapping.join().unwrap();
    let mut seen: BTreeMap<ObjectKey, String> = tap
        .objects
        .iter()
        .map(|o| (o.key().clone(), o.resource_version().to_string()))
        .collect();
    let mut rx = tap.rx;
    while let Some(Tapped::Changes(group)) = rx.try_recv() {
        for change in group {
            let rv = change.object.resource_version().to_string();
            let before = seen.insert(change.object.key().clone(), rv.clone());
            assert_ne!(before, Some(rv), "{} seen twice", change.object.key());
        }
    }
    let view = cache.read();
    let now: BTreeMap<ObjectKey, String> = view
        .iter_after(None)
        .map(|o| (o.key().clone(), o.resource_version().to_string()))
        .collect();
    assert_eq!(
        seen, now,
        "the tap's objects and changes make the cache's state"
    );
}

#[test]
fn repeated_event_changes_nothing_and_unknown_delete_is_ignored() {
    let cache = Cache::new(gvk(), 100);
    assert!(
        cache
            .apply(
                ChangeType::Added,
                pod("a", "x", 5, json!({})),
                Origin::Watch
            )
            .is_some()
    );
    assert!(
        cache
            .apply(
                ChangeType::Modified,
                pod("a", "x", 5, json!({})),
                Origin::Watch
            )
            .is_none()
    );
    let c = cache
        .apply(
            ChangeType::Added,
            pod("a", "x", 6, json!({})),
            Origin::Watch,
        )
        .unwrap();
    assert_eq!(
        c.kind,
        ChangeType::Modified,
        "ADDED of a known object is a modification"
    );
    assert!(
        cache
            .apply(
                ChangeType::Deleted,
                pod("a", "nope", 7, json!({})),
                Origin::Watch
            )
            .is_none()
    );
    let d = cache
        .apply(
            ChangeType::Deleted,
            pod("a", "x", 8, json!({})),
            Origin::Watch,
        )
        .unwrap();
    assert_eq!(
        (d.kind, d.object.resource_version()),
        (ChangeType::Deleted, "8")
    );
    assert!(cache.read().is_empty());
}

#[test]
fn indexes_follow_updates_and_deletes() {
    let cache = Cache::new(gvk(), 100);
    cache.apply(
        ChangeType::Added,
        pod("a", "x", 1, json!({"app": "web"})),
        Origin::Watch,
    );
    cache.apply(
        ChangeType::Added,
        pod("b", "y", 2, json!({"app": "web"})),
        Origin::Watch,
    );
    {
        let view = cache.read();
        assert_eq!(view.keys_with_label("app", "web").unwrap().len(), 2);
        assert_eq!(view.namespace_len("a"), 1);
        let in_a: Vec<&str> = view
            .iter_in_namespace_after("a", None)
            .map(|o| o.name())
            .collect();
        assert_eq!(in_a, ["x"]);
        assert_eq!(view.keys_owned_by("owner-web").unwrap().len(), 2);
        assert_eq!(view.get_by_uid("uid-b-y").unwrap().name(), "y");
    }
    cache.apply(
        ChangeType::Modified,
        pod("a", "x", 3, json!({"app": "db"})),
        Origin::Watch,
    );
    cache.apply(
        ChangeType::Deleted,
        pod("b", "y", 4, json!({"app": "web"})),
        Origin::Watch,
    );
    let view = cache.read();
    assert!(view.keys_with_label("app", "web").is_none());
    assert_eq!(view.keys_with_label("app", "db").unwrap().len(), 1);
    assert_eq!(view.namespace_len("b"), 0);
    assert_eq!(view.iter_in_namespace_after("b", None).count(), 0);
    assert!(view.get_by_uid("uid-b-y").is_none());
    assert_eq!(view.keys_owned_by("owner-db").unwrap().len(), 1);
    assert_eq!(view.namespaces().collect::<Vec<_>>(), ["a"]);
}

#[test]
fn the_name_index_is_built_on_demand_outside_the_lock_and_kept_from_then_on() {
    let cache = Cache::new(gvk(), 100);
    for (ns, name, rv) in [("a", "web-1", 1), ("a", "db-1", 2), ("b", "web-2", 3)] {
        cache.apply(
            ChangeType::Added,
            pod(ns, name, rv, json!({})),
            Origin::Watch,
        );
    }
    let names = |text: &str| -> Option<Vec<String>> {
        let view = cache.read();
        let keys = view.keys_with_name_containing(text)?;
        Some(keys.iter().map(ToString::to_string).collect())
    };
    // Not built: the index answers nothing (a query scans instead).
    assert_eq!(names("web"), None);
    assert!(!cache.read().has_name_index());
    cache.build_name_index();
    assert!(cache.read().has_name_index());
    assert_eq!(names("web").unwrap(), ["a/web-1", "b/web-2"]);
    // Built, it follows later changes.
    cache.apply(
        ChangeType::Added,
        pod("c", "web-3", 4, json!({})),
        Origin::Watch,
    );
    cache.apply(
        ChangeType::Deleted,
        pod("a", "web-1", 5, json!({})),
        Origin::Watch,
    );
    assert_eq!(names("web").unwrap(), ["b/web-2", "c/web-3"]);
    assert_eq!(cache.read().name_matches_at_most("db-"), Some(1));
}

#[test]
fn changes_made_while_the_name_index_is_built_are_in_it() {
    use super::index::Indexes;
    use super::name_index::NameIndex;
    let object = |name: &str| pod("a", name, 1, json!({}));
    let mut indexes = Indexes::default();
    indexes.insert(&object("web-1"));
    indexes.insert(&object("web-2"));
    assert!(indexes.start_names());
    // A second builder does not start while one builds.
    assert!(!indexes.start_names());
    // The builder took web-1 and web-2; meanwhile one goes, one comes.
    let mut built = NameIndex::default();
    built.insert(&ObjectKey::new("a", "web-1"));
    built.insert(&ObjectKey::new("a", "web-2"));
    indexes.remove(&object("web-1"));
    indexes.insert(&object("web-3"));
    indexes.finish_names(built);
    let found: Vec<String> = indexes
        .names()
        .unwrap()
        .candidates("web")
        .unwrap()
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(found, ["a/web-2", "a/web-3"]);
    // Later changes go straight into it.
    indexes.remove(&object("web-2"));
    assert_eq!(indexes.names().unwrap().candidates("web").unwrap().len(), 1);
    assert!(!indexes.start_names());
}

#[test]
fn nothing_before_the_first_list_can_be_replayed() {
    // Room for every change: only the first list bounds the history.
    let cache = Cache::new(gvk(), 100);
    cache.replace(
        vec![pod("a", "x", 7, json!({})), pod("a", "y", 10, json!({}))],
        "10",
        Origin::Initial,
    );
    cache.apply(
        ChangeType::Modified,
        pod("a", "x", 11, json!({})),
        Origin::Watch,
    );
    assert_eq!(cache.read().oldest_resumable(), 10);
    assert_eq!(cache.read().position(), 11);
    // What changed before the list (a deletion, say) is unknown: a client
    // resuming from there must list again.
    assert_eq!(
        cache.tail(Since::ResourceVersion(9)).err(),
        Some(TooOld {
            requested: 9,
            oldest: 10
        })
    );
    let from_list = cache.tail(Since::ResourceVersion(10)).unwrap();
    assert_eq!(summary(&from_list.backlog), ["MODIFIED a/x 11"]);
}

#[test]
fn the_first_list_takes_no_room_in_the_history_and_a_relist_does() {
    let cache = Cache::new(gvk(), 100);
    let listed = |rv: u64| {
        (0..5)
            .map(|i| pod("a", &format!("p{i}"), rv, json!({})))
            .collect()
    };
    cache.replace(listed(10), "10", Origin::Initial);
    // Its changes are at the floor, which no resume replays.
    assert_eq!(cache.state.read().history.len(), 0);
    assert_eq!(cache.state.read().history_bytes, 0);
    assert!(
        cache
            .tail(Since::ResourceVersion(10))
            .unwrap()
            .backlog
            .is_empty()
    );
    // A relist's changes happened after the floor: they are kept.
    let changes = cache.replace(listed(12), "12", Origin::Relist);
    assert_eq!(changes.len(), 5);
    assert_eq!(cache.state.read().history.len(), 5);
    let backlog = cache.tail(Since::ResourceVersion(10)).unwrap().backlog;
    assert_eq!(summary(&backlog)[0], "MODIFIED a/p0 12");
    assert_eq!(backlog.len(), 5);
}

#[test]
fn history_keeps_its_byte_budget_with_the_count_as_a_ceiling() {
    let one = pod("a", "x", 10, json!({})).heap_bytes();
    // Room for three changes by bytes, ten by count.
    let cache = Cache::new(gvk(), 10).with_history_bytes(3 * one + one / 2);
    cache.replace(vec![pod("a", "x", 10, json!({}))], "10", Origin::Initial);
    for rv in 11..=15 {
        cache.apply(
            ChangeType::Modified,
            pod("a", "x", rv, json!({})),
            Origin::Watch,
        );
    }
    let backlog = cache.tail(Since::ResourceVersion(12)).unwrap().backlog;
    assert_eq!(
        summary(&backlog),
        ["MODIFIED a/x 13", "MODIFIED a/x 14", "MODIFIED a/x 15"]
    );
    let err = cache.tail(Since::ResourceVersion(11)).err().unwrap();
    assert_eq!(
        err,
        TooOld {
            requested: 11,
            oldest: 12
        }
    );

    // A change larger than the whole budget leaves nothing to resume from
    // before it, and is itself the oldest point to resume from.
    let big = json!({"note": "x".repeat(4 * one)});
    cache.apply(ChangeType::Modified, pod("a", "x", 16, big), Origin::Watch);
    assert!(cache.tail(Since::ResourceVersion(15)).is_err());
    assert!(
        cache
            .tail(Since::ResourceVersion(16))
            .unwrap()
            .backlog
            .is_empty()
    );
    assert_eq!(cache.read().oldest_resumable(), 16);
}

#[test]
fn resume_from_resource_version_replays_later_changes_only() {
    let cache = Cache::new(gvk(), 3);
    cache.replace(vec![pod("a", "x", 10, json!({}))], "10", Origin::Initial);
    for rv in [11, 12, 13] {
        cache.apply(
            ChangeType::Modified,
            pod("a", "x", rv, json!({})),
            Origin::Watch,
        );
    }
    let sub = cache.tail(Since::ResourceVersion(11)).unwrap();
    assert_eq!(
        summary(&sub.backlog),
        ["MODIFIED a/x 12", "MODIFIED a/x 13"]
    );
    assert!(cache.tail(Since::ResourceVersion(10)).is_ok());

    // A fourth change evicts the change at 11: resuming from 10 is no longer exact.
    cache.apply(
        ChangeType::Modified,
        pod("a", "x", 14, json!({})),
        Origin::Watch,
    );
    let err = cache.tail(Since::ResourceVersion(10)).err().unwrap();
    assert_eq!(
        err,
        TooOld {
            requested: 10,
            oldest: 11
        }
    );
    assert_eq!(
        cache
            .tail(Since::ResourceVersion(11))
            .unwrap()
            .backlog
            .len(),
        3
    );
}

#[tokio::test]
async fn snapshot_then_live_changes_without_gap() {
    let cache = Cache::new(gvk(), 10);
    cache.replace(vec![pod("a", "x", 1, json!({}))], "1", Origin::Initial);
    let mut sub = cache.tail(Since::Snapshot).unwrap();
    assert_eq!(summary(&sub.backlog), ["ADDED a/x 1"]);
    cache.apply(
        ChangeType::Added,
        pod("a", "y", 2, json!({})),
        Origin::Watch,
    );
    let live = sub.live.recv().await.unwrap();
    assert_eq!(live.object.name(), "y");
    assert_eq!(live.id(), "uid-a-y/2/ADDED");
}

#[tokio::test]
async fn wait_synced_times_out_then_succeeds() {
    let cache = Cache::new(gvk(), 10);
    assert!(!cache.wait_synced(Duration::from_millis(20)).await);
    cache.mark_synced();
    assert!(cache.wait_synced(Duration::from_millis(20)).await);
    assert!(cache.is_synced());
}

/// What a tap reader gets, as `ADDED a/x 1` lines, or `OVERFLOWED`.
fn drain(rx: &mut TapReceiver) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(item) = rx.try_recv() {
        match item {
            Tapped::Changes(group) => out.extend(summary(&group)),
            Tapped::Overflowed => out.push("OVERFLOWED".into()),
        }
    }
    out
}

#[test]
fn a_tap_holds_its_limit_then_overflows_and_a_new_tap_starts_from_the_state() {
    let cache = Cache::new(gvk(), 10);
    cache.replace(vec![pod("a", "x", 1, json!({}))], "1", Origin::Initial);
    let one = pod("a", "y", 2, json!({})).json().len();
    let tap = cache.tap(2 * one + one / 2);
    assert_eq!(summary_of(&tap.objects), ["a/x 1"]);
    assert_eq!(tap.resource_version, "1");
    let mut rx = tap.rx;
    for rv in 2..6 {
        cache.apply(
            ChangeType::Added,
            pod("a", &format!("p{rv}"), rv, json!({})),
            Origin::Watch,
        );
    }
    let status = cache.tap_status().unwrap();
    assert!(status.behind);
    assert_eq!(status.overflows, 1);
    assert!(status.buffered_bytes <= status.limit_bytes, "{status:?}");
    // Two changes fit; the third overflows; the fourth is not taken.
    assert_eq!(
        drain(&mut rx),
        ["ADDED a/p2 2", "ADDED a/p3 3", "OVERFLOWED"]
    );
    assert_eq!(cache.tap_status().unwrap().buffered_bytes, 0);

    // Tapping again: the current state, then changes again.
    let tap = cache.tap(10 * one);
    assert_eq!(
        summary_of(&tap.objects),
        ["a/p2 2", "a/p3 3", "a/p4 4", "a/p5 5", "a/x 1"]
    );
    assert_eq!(tap.resource_version, "5");
    let mut rx = tap.rx;
    cache.apply(
        ChangeType::Deleted,
        pod("a", "x", 6, json!({})),
        Origin::Watch,
    );
    assert_eq!(drain(&mut rx), ["DELETED a/x 6"]);
    let status = cache.tap_status().unwrap();
    assert_eq!((status.behind, status.overflows), (false, 1));
}

#[test]
fn a_group_arriving_at_an_empty_tap_is_taken_whatever_its_size() {
    let cache = Cache::new(gvk(), 10);
    let mut rx = cache.tap(1).rx;
    let pods: Vec<StoredObject> = (1..4)
        .map(|i| pod("a", &format!("p{i}"), i, json!({})))
        .collect();
    cache.replace(pods, "3", Origin::Initial);
    assert_eq!(
        drain(&mut rx),
        ["ADDED a/p1 1", "ADDED a/p2 2", "ADDED a/p3 3"]
    );
    assert!(!cache.tap_status().unwrap().behind);
}

fn summary_of(objects: &[Arc<StoredObject>]) -> Vec<String> {
    let mut out: Vec<String> = objects
        .iter()
        .map(|o| format!("{} {}", o.key(), o.resource_version()))
        .collect();
    out.sort();
    out
}
