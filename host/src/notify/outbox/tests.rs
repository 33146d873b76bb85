use serde_json::json;

use super::*;

fn object(name: &str, rv: u64) -> StoredObject {
    StoredObject::from_value(
        json!({"metadata": {"name": name, "namespace": "shop", "uid": format!("uid-{name}"), "resourceVersion": rv.to_string()}}),
        &gvk(),
        false,
    )
    .unwrap()
}

fn gvk() -> Gvk {
    Gvk::new("apps", "v1", "Deployment")
}

/// Queues one change of `name` for each `(subscription, seq)`; returns its number.
fn queue(outbox: &Outbox, name: &str, rv: u64, targets: &[(&str, u64)]) -> u64 {
    let number = outbox.next_change_number();
    let old = object(name, rv - 1);
    let encoded = Announcement::encode(
        ChangeType::Modified,
        Origin::Watch,
        &gvk(),
        &object(name, rv),
        Some(&old),
        1_700_000_000_000 + rv,
    );
    outbox
        .feed("w", |txn| txn.queue_change(number, &encoded, targets))
        .unwrap();
    number
}

fn names(queued: &[Queued]) -> Vec<(u64, String)> {
    queued
        .iter()
        .map(|q| (q.seq, q.announcement.name.clone()))
        .collect()
}

#[test]
fn announcements_read_back_as_written() {
    let outbox = Outbox::open(None).unwrap();
    queue(&outbox, "web", 8, &[("a", 1)]);
    let [queued] = outbox.pending("a", 10).unwrap().try_into().unwrap();
    let a = queued.announcement;
    assert_eq!(
        (a.kind, a.origin, &a.gvk, &a.namespace[..], &a.name[..]),
        (ChangeType::Modified, Origin::Watch, &gvk(), "shop", "web")
    );
    assert_eq!(a.id(), "uid-web/8/MODIFIED");
    assert_eq!(a.queued_ms, 1_700_000_000_008);
    assert_eq!(a.object, *object("web", 8).json());
    assert_eq!(a.old.as_deref(), Some(&*object("web", 7).json()));
}

#[test]
fn queue_keeps_order_and_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    {
        let outbox = Outbox::open(Some(dir.path())).unwrap();
        assert!(outbox.is_persistent());
        queue(&outbox, "x", 2, &[("a", 1)]);
        queue(&outbox, "y", 3, &[("a", 2), ("b", 1)]);
        queue(&outbox, "z", 4, &[("a", 3)]);
        outbox.settle("a", &[1], &[]).unwrap();
    }
    let outbox = Outbox::open(Some(dir.path())).unwrap();
    assert_eq!(
        names(&outbox.pending("a", 10).unwrap()),
        [(2, "y".to_string()), (3, "z".to_string())]
    );
    assert_eq!(outbox.pending("a", 1).unwrap().len(), 1);
    assert_eq!(names(&outbox.pending("b", 10).unwrap()), [(1, "y".into())]);
    assert_eq!(
        outbox.counts("a").unwrap(),
        QueueCounts {
            pending: 2,
            dead: 0,
            last_seq: Some(3)
        }
    );
    assert_eq!(
        outbox.oldest_pending_ms("a").unwrap(),
        Some(1_700_000_000_003)
    );
    assert_eq!(outbox.total_pending().unwrap(), 3);
    // Numbering goes on after the changes that are still stored.
    assert_eq!(outbox.next_change_number(), 3);
}

#[test]
fn a_change_is_stored_once_and_goes_with_its_last_delivery() {
    let outbox = Outbox::open(None).unwrap();
    let subscriptions = ["a", "b", "c", "d", "e"];
    let targets: Vec<(&str, u64)> = subscriptions.iter().map(|s| (*s, 1)).collect();
    let number = queue(&outbox, "web", 8, &targets);
    assert_eq!(outbox.stored_changes().unwrap(), 1);
    assert_eq!(outbox.total_pending().unwrap(), 5);
    for sub in &subscriptions[..4] {
        assert_eq!(outbox.settle(sub, &[1], &[]).unwrap(), Vec::<u64>::new());
    }
    assert_eq!(outbox.stored_changes().unwrap(), 1);
    // Settling an entry that is gone changes nothing.
    assert!(outbox.settle("a", &[1], &[]).unwrap().is_empty());
    assert_eq!(outbox.settle("e", &[1], &[]).unwrap(), [number]);
    assert_eq!(outbox.stored_changes().unwrap(), 0);
}

#[test]
fn dead_letters_keep_their_change_until_dropped() {
    let outbox = Outbox::open(None).unwrap();
    assert!(!outbox.is_persistent());
    let first = queue(&outbox, "x", 2, &[("a", 1), ("b", 1)]);
    queue(&outbox, "y", 3, &[("a", 2)]);
    let pending = outbox.pending("a", 10).unwrap();
    let refused = DeadLetter {
        queued: pending[0].clone(),
        reason: "HTTP 400: bad".into(),
        failed_ms: 5,
        attempts: 1,
    };
    outbox
        .settle("a", &[], std::slice::from_ref(&refused))
        .unwrap();
    assert_eq!(outbox.dead_letters("a").unwrap(), vec![refused]);
    assert_eq!(outbox.counts("a").unwrap().pending, 1);
    // The other subscription's delivery goes; the dead letter keeps the change.
    assert!(outbox.settle("b", &[1], &[]).unwrap().is_empty());
    let mut next = 10;
    let replayed = outbox
        .replay_dead("a", None, || {
            next += 1;
            next
        })
        .unwrap();
    assert_eq!(replayed, 1);
    assert_eq!(
        names(&outbox.pending("a", 10).unwrap()),
        [(2, "y".into()), (11, "x".into())]
    );
    assert!(outbox.dead_letters("a").unwrap().is_empty());
    let again = outbox.pending("a", 10).unwrap()[1].clone();
    outbox
        .settle(
            "a",
            &[],
            &[DeadLetter {
                queued: again,
                reason: "no".into(),
                failed_ms: 6,
                attempts: 2,
            }],
        )
        .unwrap();
    assert_eq!(outbox.drop_dead("a", Some(99)).unwrap(), (0, vec![]));
    assert_eq!(outbox.drop_dead("a", Some(11)).unwrap(), (1, vec![first]));
    assert_eq!(outbox.counts("a").unwrap().dead, 0);
    assert_eq!(outbox.stored_changes().unwrap(), 1);
}

#[test]
fn announced_state_per_watch() {
    let outbox = Outbox::open(None).unwrap();
    assert_eq!(outbox.announced("w").unwrap(), None);
    outbox
        .feed("w", |txn| {
            txn.set_announced("shop/a", Some(("5", br#"{"a":1}"#)))?;
            txn.set_announced("shop/b", Some(("6", br#"{"b":1}"#)))?;
            txn.set_announced("shop/b", None)?;
            txn.set_position("6")?;
            Ok(())
        })
        .unwrap();
    outbox
        .feed("other", |txn| {
            txn.set_announced("shop/a", Some(("9", b"{}")))?;
            txn.set_position("9")
        })
        .unwrap();
    let (rv, objects) = outbox.announced("w").unwrap().unwrap();
    assert_eq!(rv, "6");
    assert_eq!(objects, vec![br#"{"a":1}"#.to_vec()]);
    outbox.forget_watch("w").unwrap();
    assert_eq!(outbox.announced("w").unwrap(), None);
    assert!(outbox.announced("other").unwrap().is_some());
}

#[test]
fn deleting_a_subscription_drops_its_lists_and_their_changes() {
    let outbox = Outbox::open(None).unwrap();
    outbox.put_subscription("a", b"{}").unwrap();
    outbox.put_subscription("b", b"{\"x\":1}").unwrap();
    queue(&outbox, "x", 2, &[("a", 1)]);
    queue(&outbox, "y", 3, &[("a", 2), ("b", 1)]);
    let dead = outbox.pending("a", 1).unwrap().remove(0);
    outbox
        .settle(
            "a",
            &[],
            &[DeadLetter {
                queued: dead,
                reason: "no".into(),
                failed_ms: 1,
                attempts: 1,
            }],
        )
        .unwrap();
    assert_eq!(outbox.delete_subscription("a").unwrap(), 1);
    assert_eq!(
        outbox.subscriptions().unwrap(),
        vec![("b".to_string(), b"{\"x\":1}".to_vec())]
    );
    assert_eq!(outbox.counts("a").unwrap(), QueueCounts::default());
    assert_eq!(outbox.counts("b").unwrap().pending, 1);
    // `x` went with its dead letter; `y` stays for `b`.
    assert_eq!(outbox.stored_changes().unwrap(), 1);
}

/// The format stored in a database file, read directly.
fn stored_format(path: &Path) -> Option<u32> {
    let db = Database::create(path).unwrap();
    let txn = db.begin_read().unwrap();
    let meta = txn.open_table(META).ok()?;
    meta.get(FORMAT_KEY).unwrap().map(|f| f.value())
}

#[test]
fn the_database_carries_its_format() {
    let dir = tempfile::tempdir().unwrap();
    drop(Outbox::open(Some(dir.path())).unwrap());
    assert_eq!(stored_format(&dir.path().join(FILE_NAME)), Some(FORMAT));

    // A database of the time before the format was written is format 1,
    // and opens with what it holds.
    let old = tempfile::tempdir().unwrap();
    let path = old.path().join(FILE_NAME);
    {
        let db = Database::create(&path).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(SUBSCRIPTIONS)
            .unwrap()
            .insert("a", br#"{"name": "a"}"#.as_slice())
            .unwrap();
        txn.commit().unwrap();
    }
    assert_eq!(stored_format(&path), None);
    let outbox = Outbox::open(Some(old.path())).unwrap();
    assert_eq!(outbox.subscriptions().unwrap().len(), 1);
    drop(outbox);
    assert_eq!(stored_format(&path), Some(1));
}

#[test]
fn a_database_of_a_newer_format_is_refused_and_left_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    {
        let outbox = Outbox::open(Some(dir.path())).unwrap();
        queue(&outbox, "x", 2, &[("a", 1)]);
    }
    let path = dir.path().join(FILE_NAME);
    {
        let db = Database::create(&path).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(META)
            .unwrap()
            .insert(FORMAT_KEY, FORMAT + 1)
            .unwrap();
        txn.commit().unwrap();
    }
    let Err(refused) = Outbox::open(Some(dir.path())) else {
        panic!("a newer format was opened");
    };
    assert_eq!(
        refused.to_string(),
        format!(
            "the outbox {} has format {}, written by a newer GRW; this GRW reads format {FORMAT} and older. Run a GRW at least as new as the one that wrote it, or move the file away to start with an empty outbox (the deliveries and dead letters in it are then not sent)",
            path.display(),
            FORMAT + 1
        )
    );
    // Nothing was changed: the newer GRW finds its delivery.
    assert_eq!(stored_format(&path), Some(FORMAT + 1));
    let db = Database::create(&path).unwrap();
    let txn = db.begin_read().unwrap();
    assert_eq!(txn.open_table(QUEUE).unwrap().len().unwrap(), 1);
}
