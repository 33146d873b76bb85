use serde_json::json;

use super::*;
use crate::gvk::Gvk;
use crate::store::{Cache, ChangeType, FieldPaths, Origin};

/// Thirty Pods, `spec.nodeName` indexed, names indexed.
fn cache() -> Cache {
    let gvk = Gvk::new("", "v1", "Pod");
    let node_name = vec!["spec".to_string(), "nodeName".to_string()];
    let cache = Cache::new(gvk.clone(), 10).with_field_paths(FieldPaths::new([node_name]));
    let mut rv = 0;
    for ns in ["shop", "payments", "monitoring"] {
        for i in 0..10 {
            rv += 1;
            let app = ["web", "db", "cache"][i % 3];
            let v = json!({"metadata": {
                "namespace": ns, "name": format!("{app}-{i}"), "uid": format!("{ns}-{i}"),
                "resourceVersion": rv.to_string(),
                "labels": {"app": app, "idx": i.to_string()},
                "annotations": {"team": if i < 5 { "a" } else { "b" }},
                "ownerReferences": [{"uid": format!("rs-{ns}-{app}")}]
            }, "spec": {"nodeName": format!("node-{}", i % 2), "priority": i}});
            let o = StoredObject::from_value(v, &gvk, false).unwrap();
            cache.apply(ChangeType::Added, o, Origin::Watch);
        }
    }
    cache.build_name_index();
    cache
}

fn text(text: &str) -> NameContains {
    NameContains::parse(text).unwrap()
}

fn names(page: &Page) -> Vec<String> {
    page.items.iter().map(|o| o.key().to_string()).collect()
}

fn scan(view: &CacheView<'_>, q: &Query) -> Vec<String> {
    view.iter_after(None)
        .filter(|o| q.matches(o))
        .map(|o| o.key().to_string())
        .collect()
}

#[test]
fn indexed_plans_agree_with_a_full_scan() {
    let cache = cache();
    let view = cache.read();
    let queries = [
        Query::default(),
        Query {
            namespace: Some("shop".into()),
            ..Default::default()
        },
        Query {
            labels: "app=web".parse().unwrap(),
            ..Default::default()
        },
        Query {
            labels: "app in (db,cache),idx!=4".parse().unwrap(),
            ..Default::default()
        },
        Query {
            labels: "app,!nope".parse().unwrap(),
            ..Default::default()
        },
        Query {
            labels: "app notin (web)".parse().unwrap(),
            namespace: Some("payments".into()),
            ..Default::default()
        },
        Query {
            fields: "spec.nodeName=node-1".parse().unwrap(),
            ..Default::default()
        },
        Query {
            fields: "spec.priority=3".parse().unwrap(),
            ..Default::default()
        },
        Query {
            owner_uid: Some("rs-shop-db".into()),
            ..Default::default()
        },
        Query {
            uid: Some("monitoring-7".into()),
            ..Default::default()
        },
        Query {
            namespace: Some("shop".into()),
            name: Some("db-4".into()),
            ..Default::default()
        },
        Query {
            annotations: vec![("team".into(), "a".into())],
            labels: "app=cache".parse().unwrap(),
            ..Default::default()
        },
        Query {
            json_fields: vec![(vec!["spec".into(), "priority".into()], json!(3))],
            ..Default::default()
        },
        Query {
            json_fields: vec![(vec!["spec".into(), "priority".into()], json!("3"))],
            ..Default::default()
        },
        Query {
            labels: "app=nope".parse().unwrap(),
            ..Default::default()
        },
        // Integer comparisons only filter, alone or after an index.
        Query {
            labels: "idx>6".parse().unwrap(),
            ..Default::default()
        },
        Query {
            labels: "idx<3".parse().unwrap(),
            namespace: Some("shop".into()),
            ..Default::default()
        },
        Query {
            labels: "app=web,idx>4,idx<9".parse().unwrap(),
            ..Default::default()
        },
        Query {
            labels: "idx in (1,2,3),idx>1".parse().unwrap(),
            ..Default::default()
        },
        Query {
            labels: "app>0".parse().unwrap(),
            ..Default::default()
        },
        // Name texts: from the name index, alone or against others.
        Query {
            name_contains: Some(text("DB-4")),
            ..Default::default()
        },
        Query {
            name_contains: Some(text("web")),
            namespace: Some("shop".into()),
            ..Default::default()
        },
        Query {
            name_contains: Some(text("b-")),
            ..Default::default()
        },
        Query {
            name_contains: Some(text("ache-")),
            labels: "idx in (2,5)".parse().unwrap(),
            ..Default::default()
        },
        Query {
            name_contains: Some(text("nothing")),
            ..Default::default()
        },
        // Owners: several, one of them unknown.
        Query {
            owner_uid_in: Some(Arc::new(
                ["rs-shop-web", "rs-nowhere", "rs-payments-db"]
                    .map(String::from)
                    .into(),
            )),
            ..Default::default()
        },
        Query {
            owner_uid_in: Some(Arc::new(["rs-shop-web".to_string()].into())),
            name_contains: Some(text("-9")),
            ..Default::default()
        },
    ];
    let expected_counts = [
        30, 10, 12, 15, 30, 6, 15, 3, 3, 1, 1, 3, 3, 0, 0, 9, 3, 3, 6, 0, 3, 4, 21, 6, 0, 7, 1,
    ];
    for (q, want) in queries.iter().zip(expected_counts) {
        let page = q.run(&view, &PageRequest::default());
        assert_eq!(names(&page), scan(&view, q), "{q:?}");
        assert_eq!(page.items.len(), want, "{q:?}");
        assert!(page.next.is_none());
    }
}

#[test]
fn pages_cover_every_match_exactly_once() {
    let cache = cache();
    let view = cache.read();
    for q in [
        Query::default(),
        Query {
            labels: "app in (web,db)".parse().unwrap(),
            ..Default::default()
        },
        Query {
            namespace: Some("shop".into()),
            ..Default::default()
        },
        Query {
            name_contains: Some(text("E-")),
            ..Default::default()
        },
        Query {
            name_contains: Some(text("CACHE")),
            ..Default::default()
        },
    ] {
        let all = scan(&view, &q);
        let mut seen = Vec::new();
        let mut request = PageRequest {
            limit: Some(4),
            after: None,
        };
        loop {
            let page = q.run(&view, &request);
            assert!(page.items.len() <= 4);
            seen.extend(names(&page));
            // What the later pages hold, counted without reading them.
            let later = page
                .next
                .as_ref()
                .map(|t| q.count_after(&view, Some(t.key())));
            assert_eq!(later.unwrap_or(0), all.len() - seen.len(), "{q:?}");
            match page.next {
                Some(token) => {
                    let parsed = ContinueToken::parse(&token.to_string()).unwrap();
                    request.after = Some(parsed.key().clone());
                }
                None => break,
            }
        }
        assert_eq!(seen, all, "{q:?}");
    }
}

#[test]
fn the_name_index_answers_when_it_offers_the_fewest_candidates() {
    let cache = cache();
    let view = cache.read();
    let plan = |q: &Query| match q.smallest_index(&view, None) {
        None => "scan".to_string(),
        Some(Candidates::Set(keys)) => format!("set of {}", keys.len()),
        Some(Candidates::Namespace(len)) => format!("namespace of {len}"),
        Some(Candidates::Merged(keys)) => format!("merged {}", keys.len()),
    };
    let by_name = |t: &str| Query {
        name_contains: Some(text(t)),
        ..Default::default()
    };
    // `b-4` is in three names: the index gathers those three.
    assert_eq!(plan(&by_name("DB-4")), "merged 3");
    // Under three bytes: nothing to look up, every object is checked.
    assert_eq!(plan(&by_name("db")), "scan");
    assert_eq!(plan(&by_name("é")), "scan");
    // A trigram no name has: nothing to check.
    assert_eq!(plan(&by_name("qqq")), "merged 0");
    // The namespace alone: its range of the cache.
    let q = Query {
        namespace: Some("shop".into()),
        ..Default::default()
    };
    assert_eq!(plan(&q), "namespace of 10");
    assert_eq!(q.run(&view, &PageRequest::default()).items.len(), 10);
    // The namespace's 10 objects against the name's 3: the name wins...
    let q = Query {
        namespace: Some("shop".into()),
        ..by_name("db-4")
    };
    assert_eq!(plan(&q), "merged 3");
    assert_eq!(names(&q.run(&view, &PageRequest::default())), ["shop/db-4"]);
    // ...and the label's 3 against the name's 12 (`web` in every
    // namespace): the label wins, the name only filters.
    let q = Query {
        labels: "idx=3".parse().unwrap(),
        ..by_name("web")
    };
    assert_eq!(plan(&q), "set of 3");
    assert_eq!(q.run(&view, &PageRequest::default()).items.len(), 3);
    // Candidates are rechecked: `b-1` (looked up) and `-1` (a scan)
    // select the same three `db-1` here.
    let q = by_name("B-1");
    assert_eq!(
        names(&q.run(&view, &PageRequest::default())),
        scan(&view, &by_name("-1"))
    );
}

#[test]
fn exact_page_size_has_no_continue() {
    let cache = cache();
    let view = cache.read();
    let q = Query {
        namespace: Some("shop".into()),
        ..Default::default()
    };
    let page = q.run(
        &view,
        &PageRequest {
            limit: Some(10),
            after: None,
        },
    );
    assert_eq!(page.items.len(), 10);
    assert!(page.next.is_none());
}

#[test]
fn foreign_continue_tokens_are_rejected() {
    for bad in ["", "abc", "!!!", "azE6", "k1:shop\0x"] {
        assert_eq!(ContinueToken::parse(bad), Err(InvalidContinue), "{bad:?}");
    }
    let key = ObjectKey::new("", "node-a");
    let token = ContinueToken::after(&key).to_string();
    assert_eq!(ContinueToken::parse(&token).unwrap().key(), &key);
    assert_eq!(
        ContinueToken::parse(&token).unwrap().resource_version(),
        None
    );

    let key = ObjectKey::new("shop", "web-1");
    let token = ContinueToken::after_at(&key, 321).to_string();
    let parsed = ContinueToken::parse(&token).unwrap();
    assert_eq!((parsed.key(), parsed.resource_version()), (&key, Some(321)));
    use base64::Engine as _;
    let encode = |raw: &str| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw);
    for bad in ["k2:x\0shop\0web", "k2:321\0shop", "k2:\0shop\0web"] {
        assert_eq!(
            ContinueToken::parse(&encode(bad)),
            Err(InvalidContinue),
            "{bad:?}"
        );
    }
}

#[test]
fn lookup_walks_objects_and_arrays() {
    let v = json!({"a": {"b": [{"c": 1}, {"c": 2}]}});
    let path = |p: &str| p.split('.').map(String::from).collect::<Vec<_>>();
    assert_eq!(lookup(&v, &path("a.b.1.c")), Some(&json!(2)));
    assert_eq!(lookup(&v, &path("a.b.x")), None);
    assert_eq!(lookup(&v, &path("a.b.9")), None);
}

#[test]
fn integer_comparisons_filter_without_an_index() {
    let cache = cache();
    let view = cache.read();
    let q = Query {
        labels: "idx>7".parse().unwrap(),
        ..Default::default()
    };
    assert!(q.smallest_index(&view, None).is_none());
    let page = q.run(&view, &PageRequest::default());
    let mut idx: Vec<&str> = page.items.iter().filter_map(|o| o.label("idx")).collect();
    idx.sort_unstable();
    assert_eq!(idx, ["8", "8", "8", "9", "9", "9"]);
    let q = Query {
        labels: "idx<1,app".parse().unwrap(),
        ..Default::default()
    };
    assert_eq!(q.smallest_index(&view, None).map(|c| c.len()), Some(30));
    assert_eq!(q.run(&view, &PageRequest::default()).items.len(), 3);
}

#[test]
fn bad_label_selectors_say_what_is_wrong() {
    let err = "a>x".parse::<LabelSelector>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "label selector `a>x`: value `x` of `a` after `>` (at position 2) is not a number: \
         for 'Gt', 'Lt' operators, the value must be an integer"
    );
    let err = "a>-1".parse::<LabelSelector>().unwrap_err();
    assert!(err.to_string().contains("cannot have a sign"), "{err}");
}

/// Property: through creations and deletions in a cache, a name search
/// (indexed from three bytes, scanned below) pages through exactly what
/// a linear scan of lower-cased names finds, whatever the text's length.
#[test]
fn name_searches_agree_with_a_linear_scan_through_changes() {
    let gvk = Gvk::new("", "v1", "Pod");
    let cache = Cache::new(gvk.clone(), 10);
    let mut state = 0x5eed_u64;
    let mut below = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let parts = ["web", "Web", "db", "x2", "k4q", "-", "é", "Ü", "ab"];
    let generated: Vec<String> = (0..200)
        .map(|_| {
            let n = 1 + below(4);
            (0..n).map(|_| parts[below(parts.len())]).collect()
        })
        .collect();
    let object = |ns: &str, name: &str| {
        let v = json!({"metadata": {"namespace": ns, "name": name,
            "uid": format!("{ns}-{name}"), "resourceVersion": "1"}});
        StoredObject::from_value(v, &gvk, false).unwrap()
    };
    let mut present = BTreeSet::new();
    for round in 0..10 {
        // The first round scans; the index built then follows the rest.
        if round == 1 {
            cache.build_name_index();
        }
        for _ in 0..60 {
            let ns = ["a", "b"][below(2)];
            let name = &generated[below(generated.len())];
            let kind = if present.remove(&(ns, name.clone())) {
                ChangeType::Deleted
            } else {
                present.insert((ns, name.clone()));
                ChangeType::Added
            };
            cache.apply(kind, object(ns, name), Origin::Watch);
        }
        let view = cache.read();
        for needle in [
            "w", "B", "é", "ü", "eb", "X2", "b-", "web", "EBD", "k4q-é", "zz",
        ] {
            let q = Query {
                name_contains: Some(text(needle)),
                ..Default::default()
            };
            let lower = needle.to_lowercase();
            let want: Vec<String> = present
                .iter()
                .filter(|(_, name)| name.to_lowercase().contains(&lower))
                .map(|(ns, name)| format!("{ns}/{name}"))
                .collect();
            assert_eq!(
                names(&q.run(&view, &PageRequest::default())),
                want,
                "round {round}: {needle}"
            );
            let mut paged = Vec::new();
            let mut after = None;
            loop {
                let page = q.run(
                    &view,
                    &PageRequest {
                        limit: Some(7),
                        after: after.take(),
                    },
                );
                paged.extend(names(&page));
                match page.next {
                    Some(token) => after = Some(token.key().clone()),
                    None => break,
                }
            }
            assert_eq!(paged, want, "round {round}: {needle}, in pages");
        }
    }
}

#[test]
fn indexed_fields_give_the_candidates_and_answer_without_reading_objects() {
    let gvk = Gvk::new("", "v1", "Pod");
    let paths = FieldPaths::new(
        [["spec", "nodeName"], ["spec", "priority"], ["spec", "tags"]]
            .map(|p| p.map(String::from).to_vec()),
    );
    let cache = Cache::new(gvk.clone(), 10).with_field_paths(paths);
    let pod = |name: &str, rv: u64, spec: serde_json::Value| {
        let v = json!({"metadata": {"namespace": "a", "name": name, "uid": name,
            "resourceVersion": rv.to_string()}, "spec": spec});
        StoredObject::from_value(v, &gvk, false).unwrap()
    };
    for (i, spec) in [
        json!({"nodeName": "node-1", "priority": 3, "tags": ["x"]}),
        json!({"nodeName": "node-2", "priority": 3.0}),
        json!({"nodeName": "node-1", "priority": "3"}),
        json!({"priority": null}),
        json!({"nodeName": null, "priority": 30}),
    ]
    .into_iter()
    .enumerate()
    {
        cache.apply(
            ChangeType::Added,
            pod(&format!("p{i}"), i as u64 + 1, spec),
            Origin::Watch,
        );
    }
    let plan = |q: &Query| match q.smallest_index(&cache.read(), None) {
        None => "scan".to_string(),
        Some(Candidates::Set(keys)) => format!("set of {}", keys.len()),
        Some(Candidates::Namespace(len)) => format!("namespace of {len}"),
        Some(Candidates::Merged(keys)) => format!("merged {}", keys.len()),
    };
    let run = |selector: &str| {
        let q = Query {
            fields: selector.parse().unwrap(),
            ..Default::default()
        };
        let view = cache.read();
        let got = names(&q.run(&view, &PageRequest::default()));
        // Whatever the index says, the answer is the scan's, which reads
        // every object's JSON.
        assert_eq!(got, scan(&view, &q), "{selector}");
        assert!(!q.reads_objects(view.field_paths()), "{selector}");
        (plan(&q), got)
    };
    assert_eq!(
        run("spec.nodeName=node-1"),
        ("set of 2".into(), vec!["a/p0".into(), "a/p2".into()])
    );
    // Missing and null are the empty text, as for the API server.
    assert_eq!(
        run("spec.nodeName="),
        ("set of 2".into(), vec!["a/p3".into(), "a/p4".into()])
    );
    assert_eq!(run("spec.nodeName=node-9"), ("set of 0".into(), vec![]));
    // `!=` only filters.
    assert_eq!(run("spec.nodeName!=node-1").0, "scan");
    // Numbers are candidates of every value, and compare as numbers.
    assert_eq!(
        run("spec.priority=3"),
        (
            "merged 4".into(),
            vec!["a/p0".into(), "a/p1".into(), "a/p2".into()]
        )
    );
    // An array equals no value.
    assert_eq!(run("spec.tags=x"), ("set of 0".into(), vec![]));
    assert_eq!(run("spec.tags!=x").1.len(), 5);
    // The key's fields need no index to be answered without reading.
    assert_eq!(
        run("metadata.name=p1"),
        ("scan".into(), vec!["a/p1".into()])
    );
    assert_eq!(run("metadata.namespace=a,metadata.name!=p1").1.len(), 4);
    assert_eq!(run("metadata.namespace=b").1.len(), 0);
    // A field no index holds reads the objects.
    let q = Query {
        fields: "spec.schedulerName=default".parse().unwrap(),
        ..Default::default()
    };
    assert!(q.reads_objects(cache.field_paths()));
    // The index follows changes.
    cache.apply(
        ChangeType::Modified,
        pod("p0", 10, json!({"nodeName": "node-2"})),
        Origin::Watch,
    );
    cache.apply(ChangeType::Deleted, pod("p2", 11, json!({})), Origin::Watch);
    assert_eq!(run("spec.nodeName=node-1"), ("set of 0".into(), vec![]));
    assert_eq!(
        run("spec.nodeName=node-2"),
        ("set of 2".into(), vec!["a/p0".into(), "a/p1".into()])
    );
}

#[test]
fn a_query_that_reads_objects_is_finished_outside_the_lock_within_its_budget() {
    let cache = cache();
    let q = Query {
        annotations: vec![("team".into(), "a".into())],
        ..Default::default()
    };
    let page = PageRequest {
        limit: Some(4),
        after: None,
    };
    let collected = q.collect(&cache.read(), &page, false);
    // Every candidate is taken: the page is known only once they are read.
    assert!(collected.reads_objects());
    assert_eq!(collected.len(), 30);
    let finished = q
        .finish(collected, &page, &mut Budget::unlimited())
        .unwrap();
    assert_eq!(finished.items.len(), 4);
    assert!(finished.next.is_some());
    // A query answered from the indexes takes just its page, and counts
    // the rest when asked.
    let q = Query {
        labels: "app=web".parse().unwrap(),
        ..Default::default()
    };
    let collected = q.collect(&cache.read(), &page, true);
    assert!(!collected.reads_objects());
    assert_eq!((collected.len(), collected.rest()), (4, Some(8)));
    let finished = q
        .finish(collected, &page, &mut Budget::unlimited())
        .unwrap();
    assert_eq!(finished.items.len(), 4);
}

#[test]
fn a_page_of_a_text_most_names_hold_is_read_by_a_walk_that_stops_early() {
    // 2,000 Pods, 1,200 of them `worker-N`, 800 `api-N`.
    let gvk = Gvk::new("", "v1", "Pod");
    let cache = Cache::new(gvk.clone(), 10);
    for i in 0..2_000 {
        let name = if i % 5 < 3 {
            format!("worker-{i}")
        } else {
            format!("api-{i}")
        };
        let v = json!({"metadata": {"namespace": "shop", "name": name,
            "uid": format!("u{i}"), "resourceVersion": (i + 1).to_string()}});
        let o = StoredObject::from_value(v, &gvk, false).unwrap();
        cache.apply(ChangeType::Added, o, Origin::Watch);
    }
    cache.build_name_index();
    let view = cache.read();
    let by_name = |t: &str| Query {
        name_contains: Some(text(t)),
        ..Default::default()
    };
    let plan = |q: &Query, stops_at: Option<usize>| match q.smallest_index(&view, stops_at) {
        None => "walk".to_string(),
        Some(c) => format!("{} candidates", c.len()),
    };
    // A page of 10 `worker`s: found within some 20 objects of a walk,
    // where the index would gather and sort 1,200.
    assert_eq!(plan(&by_name("worker"), Some(10)), "walk");
    // The whole answer, or a rare text: the index.
    assert_eq!(plan(&by_name("worker"), None), "1200 candidates");
    let rare = plan(&by_name("api-17"), Some(10));
    assert!(rare.ends_with(" candidates"), "{rare}");
    // Either way, the same page.
    let page = PageRequest {
        limit: Some(10),
        after: None,
    };
    let first = by_name("worker").run(&view, &page);
    assert_eq!(names(&first), scan(&view, &by_name("worker"))[..10]);
    assert!(first.next.is_some());
    // At the benchmark's scale (100,000 Pods, pages of 100): `worker`'s
    // 9,600 names are walked, an app's 500 looked up.
    assert!(!name_index_pays(9_600, 100_000, 100_000, Some(100)));
    assert!(name_index_pays(500, 100_000, 100_000, Some(100)));
    assert!(name_index_pays(9_600, 100_000, 100_000, None));
}

#[test]
fn a_match_asked_again_reads_only_the_objects_changed_since() {
    let cache = cache();
    let condition = Arc::new(
        crate::cel::Condition::compile("object.spec.priority > 7", crate::cel::Scope::Object)
            .unwrap(),
    );
    let q = Query {
        condition: Some(condition.clone()),
        ..Default::default()
    };
    let all = PageRequest::default();
    let run = |q: &Query| names(&q.run(&cache.read(), &all));
    let first = run(&q);
    assert_eq!(first.len(), 6, "{first:?}");
    assert_eq!(condition.decisions().len(), 30);
    // Asked again, the answers kept are used: one planted for a Pod whose
    // priority is 0 shows.
    let web0 = cache
        .read()
        .get(&ObjectKey::new("shop", "web-0"))
        .unwrap()
        .clone();
    condition.decisions().keep(&web0, true);
    assert!(run(&q).contains(&"shop/web-0".to_string()));
    // A changed Pod is a new version, read again: the planted answer is
    // not its answer.
    let mut changed = web0.to_value();
    changed["metadata"]["resourceVersion"] = json!("100");
    changed["spec"]["priority"] = json!(8);
    let gvk = Gvk::new("", "v1", "Pod");
    let changed = StoredObject::from_value(changed, &gvk, false).unwrap();
    cache.apply(ChangeType::Modified, changed, Origin::Watch);
    let third = run(&q);
    assert_eq!(third.len(), 7, "{third:?}");
    let web0 = cache
        .read()
        .get(&ObjectKey::new("shop", "web-0"))
        .unwrap()
        .clone();
    assert_eq!(condition.decisions().get(&web0), Some(true));
    // A condition that reads the JSON beside the expression is still
    // checked on an object whose answer is kept: `web-0` is in team `a`.
    let with_team = Query {
        annotations: vec![("team".into(), "b".into())],
        ..q.clone()
    };
    let of_team = run(&with_team);
    assert_eq!(of_team.len(), 6, "{of_team:?}");
    assert!(!of_team.contains(&"shop/web-0".to_string()));
}
