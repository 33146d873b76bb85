use std::time::Duration;

use serde_json::json;

use super::*;
use crate::cel::{Condition, Scope};
use crate::gvk::Gvk;
use crate::query::PageRequest;
use crate::store::{Cache, ChangeType, Origin};

/// `count` Pods of `shop`, on seven nodes; `big`, if given, is the index of
/// one whose `spec.items` holds 3,000 numbers.
fn pods(count: usize, big: Option<usize>) -> Cache {
    let gvk = Gvk::new("", "v1", "Pod");
    let cache = Cache::new(gvk.clone(), 10);
    for i in 0..count {
        let mut pod = json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"namespace": "shop", "name": format!("pod-{i:05}"), "uid": format!("u-{i}"),
                         "resourceVersion": (i + 1).to_string()},
            "spec": {"nodeName": format!("node-{}", i % 7), "containers": [{"name": "app", "image": "web:1"}]},
        });
        if big == Some(i) {
            pod["spec"]["items"] = json!((0..3000).collect::<Vec<i64>>());
        }
        let object = StoredObject::from_value(pod, &gvk, false).unwrap();
        cache.apply(ChangeType::Added, object, Origin::Watch);
    }
    cache
}

fn on_node(node: &str) -> Query {
    Query {
        fields: format!("spec.nodeName={node}").parse().unwrap(),
        ..Query::default()
    }
}

/// The candidates `query` reads, and the cache's field paths.
fn candidates(cache: &Cache, query: &Query) -> (Vec<Arc<StoredObject>>, FieldPaths) {
    let collected = query.collect(&cache.read(), &PageRequest::default(), false);
    assert!(collected.reads_objects());
    (collected.items, collected.paths)
}

fn keys(items: &[Arc<StoredObject>]) -> Vec<String> {
    items.iter().map(|o| o.key().to_string()).collect()
}

fn budget() -> Budget {
    Budget::start(Duration::from_secs(600))
}

#[test]
fn a_read_shared_with_the_helpers_answers_what_one_thread_does() {
    let cache = pods(5_000, None);
    let query = on_node("node-3");
    // 714 of the 5,000 are on node-3.
    for limit in [usize::MAX, 0, 1, 10, 200, 713, 714, 715, 5_000] {
        let (objects, paths) = candidates(&cache, &query);
        let alone = query
            .read_each(objects.clone(), &paths, limit, &mut Budget::unlimited())
            .unwrap();
        let mut charged = budget();
        let shared = split(&query, &paths, objects, limit, &mut charged).unwrap();
        assert_eq!(keys(&shared.items), keys(&alone.0), "limit {limit}");
        assert_eq!(shared.more, alone.1, "limit {limit}");
        if limit == usize::MAX {
            assert_eq!(shared.items.len(), 714);
            // Every object read is charged, whoever read it.
            assert_eq!(charged.examined(), 5_000);
        }
    }
}

#[test]
fn what_a_helper_reads_is_put_back_in_order_and_charged() {
    let cache = pods(5_000, None);
    let query = on_node("node-5");
    let (objects, paths) = candidates(&cache, &query);
    let alone = query
        .read_each(
            objects.clone(),
            &paths,
            usize::MAX,
            &mut Budget::unlimited(),
        )
        .unwrap();
    // A helper reads every chunk before the query thread comes.
    let scan = Scan::new(&query, &paths, objects.clone());
    let helper = scan.clone();
    std::thread::spawn(move || helper.work(None).unwrap())
        .join()
        .unwrap();
    let mut charged = budget();
    let shared = scan.finish(&mut charged, usize::MAX).unwrap();
    assert_eq!(keys(&shared.items), keys(&alone.0));
    assert_eq!(
        scan.helped_chunks.load(Ordering::Relaxed),
        5_000usize.div_ceil(CHUNK)
    );
    assert_eq!(charged.examined(), 5_000);

    // The CPU the helper spent counts against the request's budget.
    let scan = Scan::new(&query, &paths, objects);
    let helper = scan.clone();
    std::thread::spawn(move || helper.work(None).unwrap())
        .join()
        .unwrap();
    let mut tiny = Budget::start(Duration::from_nanos(1));
    match scan.finish(&mut tiny, usize::MAX) {
        Err(Stopped::OverBudget(over)) => assert_eq!(over.examined, 5_000),
        other => panic!(
            "expected OverBudget, got {:?}",
            other.map(|s| s.items.len())
        ),
    }
}

#[test]
fn a_page_stops_claiming_chunks_once_it_has_enough() {
    let cache = pods(5_000, None);
    // Every Pod matches: the first chunk holds more than a page of 10.
    let query = Query {
        fields: "spec.nodeName!=none".parse().unwrap(),
        ..Query::default()
    };
    let (objects, paths) = candidates(&cache, &query);
    let scan = Scan::new(&query, &paths, objects);
    let page = scan.finish(&mut budget(), 10).unwrap();
    assert_eq!(page.items.len(), 10);
    assert!(page.more);
    assert_eq!(scan.state.lock().next, 1, "chunks claimed");
}

#[test]
fn a_match_too_costly_on_one_object_stops_the_whole_read() {
    let cache = pods(3_000, Some(2_500));
    let condition = Condition::compile(
        "object.spec.items.all(a, object.spec.items.exists(b, b == a))",
        Scope::Object,
    )
    .unwrap();
    let query = Query {
        // Read on every object, so that the expression runs on each.
        fields: "spec.nodeName!=none".parse().unwrap(),
        condition: Some(Arc::new(condition)),
        ..Query::default()
    };
    let (objects, paths) = candidates(&cache, &query);
    match split(&query, &paths, objects, usize::MAX, &mut budget()) {
        Err(Stopped::MatchTooCostly(costly)) => assert_eq!(costly.object, "shop/pod-02500"),
        other => panic!(
            "expected MatchTooCostly, got {:?}",
            other.map(|s| s.items.len())
        ),
    }
}

#[test]
fn with_no_helpers_the_query_thread_reads_alone() {
    // Alone in its process, as nextest runs tests, this test starts the
    // helpers; under `cargo test` another may have started them already.
    let first = HELPERS.get().is_none();
    configure(Some(0));
    let cache = pods(3_000, None);
    let query = on_node("node-1");
    let (objects, paths) = candidates(&cache, &query);
    let shared = split(&query, &paths, objects, usize::MAX, &mut budget()).unwrap();
    if first {
        assert_eq!(helpers().count, 0);
    }
    assert_eq!(shared.items.len(), 429);
}

#[test]
fn a_read_shared_with_the_helpers_keeps_each_answer_and_uses_it_next_time() {
    let cache = pods(3_000, None);
    let condition =
        Arc::new(Condition::compile("object.spec.nodeName == 'node-2'", Scope::Object).unwrap());
    let query = Query {
        condition: Some(condition.clone()),
        ..Query::default()
    };
    let (objects, paths) = candidates(&cache, &query);
    let first = split(&query, &paths, objects, usize::MAX, &mut budget()).unwrap();
    // Pods 2, 9, 16...: 429 of the 3,000.
    assert_eq!(first.items.len(), 429);
    assert_eq!(condition.decisions().len(), 3_000);
    // An answer planted for a Pod of node-0 is what the next read uses.
    let (objects, paths) = candidates(&cache, &query);
    condition.decisions().keep(&objects[0], true);
    let again = split(&query, &paths, objects, usize::MAX, &mut budget()).unwrap();
    assert_eq!(again.items.len(), 430);
    assert_eq!(again.items[0].key().to_string(), "shop/pod-00000");
    assert_eq!(condition.decisions().len(), 3_000);
}
