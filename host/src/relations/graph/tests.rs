use super::*;
use crate::gvk::Gvk;

fn key(graph: &mut Graph, kind: &str, namespace: &str, name: &str) -> NodeKey {
    let group = if kind == "ReplicaSet" { "apps" } else { "" };
    graph.key(group, kind, namespace, name)
}

fn pod(name: &str, labels: &[(&str, &str)], owner: Option<&str>) -> StoredObject {
    let labels: serde_json::Map<String, serde_json::Value> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::Value::String(v.to_string())))
        .collect();
    let mut metadata = serde_json::json!({
        "name": name, "namespace": "shop", "uid": format!("uid-{name}"),
        "resourceVersion": "1", "labels": labels,
    });
    if let Some(owner) = owner {
        metadata["ownerReferences"] = serde_json::json!([{
            "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": owner, "uid": owner,
        }]);
    }
    StoredObject::from_value(
        serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata}),
        &Gvk::new("", "v1", "Pod"),
        false,
    )
    .unwrap()
}

fn selects(graph: &mut Graph, pod: &str) -> Found {
    Found {
        relation: "selects".into(),
        outgoing: true,
        other: key(graph, "Pod", "shop", pod),
        attributes: vec![],
    }
}

fn pods(graph: &mut Graph) -> KindKey {
    (graph.symbol(""), graph.symbol("Pod"))
}

fn lines(graph: &Graph) -> Vec<String> {
    let mut lines: Vec<String> = graph
        .edges()
        .map(|e| format!("{} {} {} [{}]", e.from, e.relation, e.to, e.analyzer))
        .collect();
    lines.sort();
    lines
}

#[test]
fn an_analysis_replaces_what_it_found_before_and_removal_drops_it() {
    let mut graph = Graph::default();
    let web = key(&mut graph, "Service", "shop", "web");
    let found = vec![selects(&mut graph, "a"), selects(&mut graph, "b")];
    graph.replace("services", web.clone(), found, vec![], SystemTime::now());
    assert_eq!(
        lines(&graph),
        [
            "core/Service shop/web selects core/Pod shop/a [services]",
            "core/Service shop/web selects core/Pod shop/b [services]"
        ]
    );
    let found = vec![selects(&mut graph, "b"), selects(&mut graph, "b")];
    graph.replace("services", web.clone(), found, vec![], SystemTime::now());
    assert_eq!(
        lines(&graph),
        ["core/Service shop/web selects core/Pod shop/b [services]"],
        "replaced, and the same edge twice is one edge"
    );
    let counts = graph.counts("services").unwrap();
    assert_eq!((counts.objects, counts.edges, counts.analyses), (1, 1, 2));
    let b = key(&mut graph, "Pod", "shop", "b");
    assert_eq!(graph.around(&b, Direction::In, 1, &[], 10).1.len(), 1);
    graph.remove("services", &web);
    assert!(lines(&graph).is_empty());
    assert!(graph.around(&b, Direction::In, 1, &[], 10).1.is_empty());
    assert_eq!(graph.counts("services").unwrap().edges, 0);
}

#[test]
fn a_failed_analysis_keeps_the_last_good_edges_marked_stale() {
    let mut graph = Graph::default();
    let web = key(&mut graph, "Service", "shop", "web");
    let found = vec![selects(&mut graph, "a")];
    graph.replace("services", web.clone(), found, vec![], SystemTime::now());
    graph.failed("services", web.clone(), "trapped: boom");
    assert_eq!(lines(&graph).len(), 1);
    let edge = graph.edges().next().unwrap().clone();
    assert_eq!(
        graph.stale(&edge.analyzer, edge.subject()).as_deref(),
        Some("trapped: boom")
    );
    let counts = graph.counts("services").unwrap();
    assert_eq!((counts.stale_objects, counts.failures), (1, 1));
    let found = vec![selects(&mut graph, "a")];
    graph.replace("services", web, found, vec![], SystemTime::now());
    let edge = graph.edges().next().unwrap().clone();
    assert_eq!(graph.stale(&edge.analyzer, edge.subject()), None);
    assert_eq!(graph.counts("services").unwrap().stale_objects, 0);
}

#[test]
fn a_change_finds_the_analyses_it_may_answer_differently() {
    let mut graph = Graph::default();
    let web = key(&mut graph, "Service", "shop", "web");
    let rs = key(&mut graph, "ReplicaSet", "shop", "rs");
    let pod_kind = pods(&mut graph);
    let selector: Arc<LabelSelector> = Arc::new("app=web".parse().unwrap());
    let list = Lookup::List {
        kind: pod_kind.clone(),
        namespace: graph.symbol("shop"),
        selector,
    };
    graph.replace(
        "services",
        web.clone(),
        vec![],
        vec![list],
        SystemTime::now(),
    );
    let owned = Lookup::OwnedBy {
        kind: pod_kind.clone(),
        uid: "rs-uid".into(),
    };
    let read = Lookup::Get(key(&mut graph, "Pod", "shop", "c"));
    graph.replace("pods", rs, vec![], vec![owned, read], SystemTime::now());

    let names = |found: HashSet<SubjectKey>| -> Vec<String> {
        let mut names: Vec<String> = found.iter().map(|s| format!("{}", s.analyzer)).collect();
        names.sort();
        names
    };
    let matching = pod("a", &[("app", "web")], None);
    let other = pod("a", &[("app", "db")], None);
    let relabelled_ok = pod("a", &[("app", "web"), ("tier", "1")], None);
    assert_eq!(
        names(graph.affected(&pod_kind, None, Some(&matching))),
        ["services"]
    );
    assert_eq!(
        names(graph.affected(&pod_kind, Some(&matching), None)),
        ["services"]
    );
    assert_eq!(
        names(graph.affected(&pod_kind, Some(&matching), Some(&other))),
        ["services"]
    );
    assert!(names(graph.affected(&pod_kind, None, Some(&other))).is_empty());
    assert!(
        names(graph.affected(&pod_kind, Some(&matching), Some(&relabelled_ok))).is_empty(),
        "still matching: the list's answer is the same"
    );
    let owned_now = pod("b", &[], Some("rs-uid"));
    let owned_before = pod("b", &[], None);
    assert_eq!(
        names(graph.affected(&pod_kind, Some(&owned_before), Some(&owned_now))),
        ["pods"]
    );
    assert!(names(graph.affected(&pod_kind, Some(&owned_now), Some(&owned_now))).is_empty());
    let read_one = pod("c", &[], None);
    assert_eq!(
        names(graph.affected(&pod_kind, Some(&read_one), Some(&read_one))),
        ["pods"]
    );
    assert_eq!(graph.depending_on_kind(&pod_kind).len(), 2);

    graph.remove("services", &web);
    assert!(names(graph.affected(&pod_kind, None, Some(&matching))).is_empty());
}

#[test]
fn around_follows_directions_depth_and_relations() {
    let mut graph = Graph::default();
    let deployment = graph.key("apps", "Deployment", "shop", "web");
    let rs = key(&mut graph, "ReplicaSet", "shop", "web-1");
    let a = key(&mut graph, "Pod", "shop", "a");
    let node = key(&mut graph, "Node", "", "n1");
    let owns = |other: &NodeKey| Found {
        relation: "owns".into(),
        outgoing: false,
        other: other.clone(),
        attributes: vec![("controller".into(), "true".into())],
    };
    graph.replace(
        "ownership",
        rs.clone(),
        vec![owns(&deployment)],
        vec![],
        SystemTime::now(),
    );
    graph.replace(
        "ownership",
        a.clone(),
        vec![owns(&rs)],
        vec![],
        SystemTime::now(),
    );
    let runs_on = Found {
        relation: "runs-on".into(),
        outgoing: true,
        other: node.clone(),
        attributes: vec![],
    };
    graph.replace(
        "references",
        a.clone(),
        vec![runs_on],
        vec![],
        SystemTime::now(),
    );

    let (nodes, edges, truncated) = graph.around(&deployment, Direction::Out, 3, &[], 100);
    assert_eq!(nodes.len(), 4, "deployment, replica set, pod, node");
    assert_eq!(edges.len(), 3);
    assert!(!truncated);
    assert_eq!(
        graph
            .around(&deployment, Direction::Out, 1, &[], 100)
            .1
            .len(),
        1
    );
    assert!(
        graph
            .around(&deployment, Direction::In, 3, &[], 100)
            .1
            .is_empty()
    );
    let owns_only = graph.around(&deployment, Direction::Out, 3, &["owns".into()], 100);
    assert_eq!(owns_only.1.len(), 2);
    let from_pod = graph.around(&a, Direction::Both, 1, &[], 100);
    assert_eq!(from_pod.1.len(), 2);
    let limited = graph.around(&deployment, Direction::Out, 3, &[], 2);
    assert_eq!((limited.1.len(), limited.2), (2, true));
    assert_eq!(
        graph.outgoing(&deployment)[0].attributes[0],
        (Arc::from("controller"), Arc::from("true"))
    );

    // A node not visible: neither the edge to it nor what lies beyond.
    let hidden_rs = |n: &NodeKey| *n != rs;
    let (nodes, edges, _) =
        graph.around_visible(&deployment, Direction::Out, 3, &[], 100, &hidden_rs);
    assert_eq!((nodes, edges.len()), (vec![deployment.clone()], 0));
    let no_nodes = |n: &NodeKey| n.namespace.is_empty();
    let (nodes, edges, _) = graph.around_visible(&a, Direction::Both, 3, &[], 100, &no_nodes);
    assert_eq!(nodes, [a.clone(), node.clone()], "the root is visible");
    assert_eq!(edges.len(), 1);

    graph.remove_analyzer("ownership");
    assert_eq!(
        lines(&graph),
        ["core/Pod shop/a runs-on core/Node -/n1 [references]"]
    );
    assert!(graph.counts("ownership").is_none());
}

#[test]
fn room_is_made_for_the_analyses_a_pass_adds_not_for_those_it_replaces() {
    let mut graph = Graph::default();
    graph.reserve_analyses(&["ownership", "references"], 1000);
    let reserved = graph.subjects.capacity();
    assert!(reserved >= 2000, "room for {reserved}");
    for analyzer in ["ownership", "references"] {
        for i in 0..1000 {
            let pod = key(&mut graph, "Pod", "shop", &format!("pod-{i}"));
            graph.replace(analyzer, pod, vec![], vec![], SystemTime::now());
        }
    }
    assert_eq!(graph.subjects.capacity(), reserved, "the table grew");
    // The same pass again replaces the 2,000 it holds: no more room.
    graph.reserve_analyses(&["ownership", "references"], 1000);
    assert_eq!(graph.subjects.capacity(), reserved);
    // A new analyzer adds 1,000.
    graph.reserve_analyses(&["ownership", "references", "services"], 1000);
    assert!(graph.subjects.capacity() >= 3000);
}
