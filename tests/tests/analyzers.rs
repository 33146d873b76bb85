//! The shipped analyzers, run natively (as plain Rust, through the SDK's
//! in-memory cache) over the recorded cluster's final state, find exactly
//! the edges written out independently of them in
//! `tests/data/expected-edges.txt` (derived with jq from the snapshot).

use std::collections::BTreeSet;

use grw_e2e::daemon::recorded_snapshot;
use grw_plugin_istio_gateways::IstioGateways;
use grw_plugin_ownership::Ownership;
use grw_plugin_references::References;
use grw_plugin_services::Services;
use grw_sdk::testing::MemoryCache;
use grw_sdk::{
    Analyzer, Cache, Direction, EventType, Interest, ObjectRef, ObjectView, Relationship,
};
use serde_json::Value;

/// `group/Kind namespace/name`, as the fixture writes a node.
fn node(r: &ObjectRef) -> String {
    let group = if r.gvk.group.is_empty() {
        "core"
    } else {
        &r.gvk.group
    };
    let namespace = if r.namespace.is_empty() {
        "-"
    } else {
        &r.namespace
    };
    format!("{group}/{} {namespace}/{}", r.gvk.kind, r.name)
}

fn line(from: &ObjectRef, edge: &Relationship) -> String {
    let (source, target) = match edge.direction {
        Direction::Outgoing => (from, &edge.target),
        Direction::Incoming => (&edge.target, from),
    };
    let attributes: String = edge
        .attributes
        .iter()
        .map(|(k, v)| format!(" {k}={v}"))
        .collect();
    format!(
        "{} {} {}{attributes}",
        node(source),
        edge.relation,
        node(target)
    )
}

fn run<A: Analyzer>(objects: &[Value], cache: &MemoryCache, edges: &mut BTreeSet<String>) {
    let (analyzer, interest): (A, Interest) = A::init("{}").unwrap();
    for object in objects {
        let view = ObjectView::new(object.clone());
        if !interest.matches(view.gvk(), EventType::Added) {
            continue;
        }
        let from = view.to_ref();
        for edge in analyzer.analyze(&view, cache as &dyn Cache) {
            edges.insert(line(&from, &edge));
        }
    }
}

#[test]
fn the_shipped_analyzers_find_the_recorded_clusters_edges() {
    let snapshot: Value =
        serde_json::from_str(&std::fs::read_to_string(recorded_snapshot()).unwrap()).unwrap();
    let objects: Vec<Value> = snapshot
        .as_object()
        .unwrap()
        .values()
        .flat_map(|list| list["items"].as_array().unwrap().clone())
        .collect();
    let mut cache = MemoryCache::new();
    for object in &objects {
        cache.insert(object.clone());
    }
    let mut found = BTreeSet::new();
    run::<Ownership>(&objects, &cache, &mut found);
    run::<Services>(&objects, &cache, &mut found);
    run::<References>(&objects, &cache, &mut found);
    run::<IstioGateways>(&objects, &cache, &mut found);

    let expected_text =
        std::fs::read_to_string(recorded_snapshot().with_file_name("expected-edges.txt")).unwrap();
    let expected: BTreeSet<String> = expected_text.lines().map(str::to_string).collect();
    let missing: Vec<&String> = expected.difference(&found).collect();
    let extra: Vec<&String> = found.difference(&expected).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {} edges: {missing:#?}\nunexpected {} edges: {extra:#?}",
        missing.len(),
        extra.len()
    );
    assert_eq!(found.len(), 420);
}
