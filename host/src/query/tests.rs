use serde_json::json;

use super::*;
use crate::gvk::Gvk;
use crate::store::{Cache, ChangeType, Origin};

fn cache() -> Cache {
    let gvk = Gvk::new("", "v1", "Pod");
    let cache = Cache::new(gvk.clone(), 10);
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
    cache
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
    ];
    let expected_counts = [
        30, 10, 12, 15, 30, 6, 15, 3, 3, 1, 1, 3, 3, 0, 0, 9, 3, 3, 6, 0,
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
    assert!(q.smallest_index(&view).is_none());
    let page = q.run(&view, &PageRequest::default());
    let mut idx: Vec<&str> = page.items.iter().filter_map(|o| o.label("idx")).collect();
    idx.sort_unstable();
    assert_eq!(idx, ["8", "8", "8", "9", "9", "9"]);
    let q = Query {
        labels: "idx<1,app".parse().unwrap(),
        ..Default::default()
    };
    assert_eq!(q.smallest_index(&view).map(|c| c.len()), Some(30));
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
