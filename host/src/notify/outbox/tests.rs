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

/// The stored form of a change of `name` to `rv`.
fn encoded(name: &str, rv: u64) -> Vec<u8> {
    let old = object(name, rv - 1);
    Announcement::encode(
        ChangeType::Modified,
        Origin::Watch,
        &gvk(),
        &object(name, rv),
        Some(&old),
        1_700_000_000_000 + rv,
    )
}

/// Queues one change of `name` for each `(subscription, seq)`; returns its number.
fn queue(outbox: &Outbox, name: &str, rv: u64, targets: &[(&str, u64)]) -> u64 {
    queue_trimming(outbox, name, rv, targets).0
}

/// [`queue`], with what the bounds trimmed.
fn queue_trimming(outbox: &Outbox, name: &str, rv: u64, targets: &[(&str, u64)]) -> (u64, Trims) {
    let number = outbox.next_change_number();
    let encoded = encoded(name, rv);
    let ((), trims) = outbox
        .feed("w", |txn| txn.queue_change(number, &encoded, targets))
        .unwrap();
    (number, trims)
}

/// Trims of one subscription.
fn trims_of(subscription: &str, evicted: u64, dropped: u64) -> BTreeMap<String, Trimmed> {
    BTreeMap::from([(subscription.to_string(), Trimmed { evicted, dropped })])
}

fn seqs(letters: &[DeadLetter]) -> Vec<u64> {
    letters.iter().map(|l| l.queued.seq).collect()
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
        assert_eq!(
            outbox.settle(sub, &[1], &[]).unwrap().released,
            Vec::<u64>::new()
        );
    }
    assert_eq!(outbox.stored_changes().unwrap(), 1);
    // Settling an entry that is gone changes nothing.
    assert_eq!(
        outbox.settle("a", &[1], &[]).unwrap(),
        Settlement::default()
    );
    assert_eq!(outbox.settle("e", &[1], &[]).unwrap().released, [number]);
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
    assert!(outbox.settle("b", &[1], &[]).unwrap().released.is_empty());
    let mut next = 10;
    let replayed = outbox
        .replay_dead("a", None, || {
            next += 1;
            next
        })
        .unwrap();
    assert_eq!(replayed, (1, Trims::default()));
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

/// Runs `test` on an outbox in memory, then on one on disk; `test` opens
/// its outbox once, with the bounds it wants.
fn both_backends(test: impl Fn(&dyn Fn(Bounds) -> Outbox)) {
    test(&|bounds| Outbox::open_bounded(None, bounds).unwrap());
    let dir = tempfile::tempdir().unwrap();
    test(&|bounds| Outbox::open_bounded(Some(dir.path()), bounds).unwrap());
}

#[test]
fn a_queue_past_its_bound_makes_its_oldest_deliveries_dead_letters() {
    both_backends(|open| {
        // Changes of `n1`..`n9` to resourceVersions 2..9 are all one size.
        let size = encoded("n1", 2).len() as u64;
        let outbox = open(Bounds {
            pending_bytes: 3 * size,
            dead_letter_bytes: 100 * size,
        });
        for i in 1..=3 {
            let (_, trims) = queue_trimming(&outbox, &format!("n{i}"), 2, &[("a", i), ("b", i)]);
            assert_eq!(trims, Trims::default());
        }
        assert_eq!(
            outbox.bytes("a").unwrap(),
            ListBytes {
                pending: 3 * size,
                dead: 0
            }
        );
        // The fourth change goes past the bound of `a` only.
        let (_, trims) = queue_trimming(&outbox, "n4", 2, &[("a", 4)]);
        assert_eq!(trims.subscriptions, trims_of("a", 1, 0));
        assert_eq!(
            names(&outbox.pending("a", 10).unwrap()),
            [(2, "n2".into()), (3, "n3".into()), (4, "n4".into())]
        );
        let [letter] = outbox.dead_letters("a").unwrap().try_into().unwrap();
        assert_eq!(letter.queued.seq, 1);
        assert_eq!(letter.queued.announcement.name, "n1");
        assert_eq!(
            letter.reason,
            format!(
                "not delivered: the subscription's pending deliveries exceeded {} bytes (subscriptionPendingBytes), so the oldest became dead letters",
                3 * size
            )
        );
        assert_eq!(letter.attempts, 0);
        assert_eq!(
            outbox.bytes("a").unwrap(),
            ListBytes {
                pending: 3 * size,
                dead: size
            }
        );
        assert_eq!(outbox.counts("a").unwrap().pending, 3);
        assert_eq!(outbox.counts("a").unwrap().dead, 1);
        // `b` keeps everything.
        assert_eq!(outbox.counts("b").unwrap().pending, 3);
        // One change too big for the bound on its own becomes a dead letter
        // at once, and takes every older delivery with it.
        let big = encoded(&"x".repeat(3 * size as usize), 2);
        let number = outbox.next_change_number();
        let ((), trims) = outbox
            .feed("w", |txn| txn.queue_change(number, &big, &[("a", 5)]))
            .unwrap();
        assert_eq!(trims.subscriptions, trims_of("a", 4, 0));
        assert_eq!(outbox.counts("a").unwrap().pending, 0);
        assert_eq!(outbox.bytes("a").unwrap().pending, 0);
        assert_eq!(seqs(&outbox.dead_letters("a").unwrap()), [1, 2, 3, 4, 5]);
    });
}

#[test]
fn dead_letters_past_their_bound_drop_the_oldest_with_their_changes() {
    both_backends(|open| {
        let size = encoded("n1", 2).len() as u64;
        let outbox = open(Bounds {
            pending_bytes: 2 * size,
            dead_letter_bytes: 2 * size,
        });
        let first = queue(&outbox, "n1", 2, &[("a", 1)]);
        queue(&outbox, "n2", 2, &[("a", 2), ("b", 1)]);
        queue(&outbox, "n3", 2, &[("a", 3)]);
        queue(&outbox, "n4", 2, &[("a", 4)]);
        assert_eq!(seqs(&outbox.dead_letters("a").unwrap()), [1, 2]);
        // A third dead letter, from a refusal: the oldest goes, and its
        // change with it (no other entry refers to it).
        let pending = outbox.pending("a", 1).unwrap().remove(0);
        let refused = DeadLetter {
            queued: pending,
            reason: "no".into(),
            failed_ms: 1,
            attempts: 1,
        };
        let settlement = outbox.settle("a", &[], &[refused]).unwrap();
        assert_eq!(
            settlement,
            Settlement {
                done: 0,
                refused: 1,
                trimmed: Trimmed {
                    evicted: 0,
                    dropped: 1
                },
                released: vec![first],
            }
        );
        assert_eq!(seqs(&outbox.dead_letters("a").unwrap()), [2, 3]);
        assert_eq!(
            outbox.bytes("a").unwrap(),
            ListBytes {
                pending: size,
                dead: 2 * size
            }
        );
        // The change of `n2` stays for `b`.
        assert_eq!(names(&outbox.pending("b", 10).unwrap()), [(1, "n2".into())]);
        // Settling an entry the bound made a dead letter changes nothing.
        assert_eq!(
            outbox.settle("a", &[1, 2], &[]).unwrap(),
            Settlement::default()
        );
        // Replaying both dead letters goes past the queue's bound again: the
        // oldest pending delivery becomes a dead letter once more.
        let mut next = 10;
        let (count, trims) = outbox
            .replay_dead("a", None, || {
                next += 1;
                next
            })
            .unwrap();
        assert_eq!(count, 2);
        assert_eq!(trims.subscriptions, trims_of("a", 1, 0));
        assert_eq!(
            names(&outbox.pending("a", 10).unwrap()),
            [(11, "n2".into()), (12, "n3".into())]
        );
        assert_eq!(seqs(&outbox.dead_letters("a").unwrap()), [4]);
        // Deleting the subscription forgets its bytes.
        outbox.delete_subscription("a").unwrap();
        assert_eq!(outbox.bytes("a").unwrap(), ListBytes::default());
        assert_eq!(outbox.bytes("b").unwrap().pending, size);
    });
}

#[test]
fn list_bytes_are_recounted_when_the_database_is_opened() {
    let dir = tempfile::tempdir().unwrap();
    let size = encoded("n1", 2).len() as u64;
    let bounds = Bounds {
        pending_bytes: 2 * size,
        dead_letter_bytes: 10 * size,
    };
    {
        let outbox = Outbox::open_bounded(Some(dir.path()), bounds).unwrap();
        for i in 1..=3 {
            queue(&outbox, &format!("n{i}"), 2, &[("a", i)]);
        }
    }
    // A GRW that kept no sizes left the table stale: the opening recounts.
    {
        let db = Database::create(dir.path().join(FILE_NAME)).unwrap();
        let txn = db.begin_write().unwrap();
        txn.open_table(lists::SIZES)
            .unwrap()
            .insert("a", (1, 1))
            .unwrap();
        txn.commit().unwrap();
    }
    let outbox = Outbox::open_bounded(Some(dir.path()), bounds).unwrap();
    assert_eq!(
        outbox.bytes("a").unwrap(),
        ListBytes {
            pending: 2 * size,
            dead: size
        }
    );
}
