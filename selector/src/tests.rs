use std::collections::BTreeMap;

use super::*;

fn eq(key: &str, value: &str) -> Requirement {
    Requirement::Equals {
        key: key.into(),
        value: value.into(),
    }
}
fn ne(key: &str, value: &str) -> Requirement {
    Requirement::NotEquals {
        key: key.into(),
        value: value.into(),
    }
}
fn is_in(key: &str, values: &[&str]) -> Requirement {
    Requirement::In {
        key: key.into(),
        values: values.iter().map(|v| v.to_string()).collect(),
    }
}
fn not_in(key: &str, values: &[&str]) -> Requirement {
    Requirement::NotIn {
        key: key.into(),
        values: values.iter().map(|v| v.to_string()).collect(),
    }
}
fn exists(key: &str) -> Requirement {
    Requirement::Exists { key: key.into() }
}
fn absent(key: &str) -> Requirement {
    Requirement::DoesNotExist { key: key.into() }
}
fn gt(key: &str, value: i64) -> Requirement {
    Requirement::GreaterThan {
        key: key.into(),
        value,
    }
}
fn lt(key: &str, value: i64) -> Requirement {
    Requirement::LessThan {
        key: key.into(),
        value,
    }
}

fn parse(input: &str) -> LabelSelector {
    match input.parse() {
        Ok(selector) => selector,
        Err(e) => panic!("{input:?} should parse: {e}"),
    }
}

/// Selectors the API server accepts: what they parse to and how they display.
#[test]
fn accepted_selectors() {
    let long_name = "n".repeat(63);
    let long_prefix = format!("{}.{}", "a".repeat(126), "b".repeat(126));
    let long_key = format!("{long_prefix}/{long_name}");
    let long_value = "v".repeat(63);
    let long_eq = format!("{long_key}={long_value}");
    let cases: Vec<(&str, Vec<Requirement>, &str)> = vec![
        // Nothing: matches everything.
        ("", vec![], ""),
        ("   ", vec![], ""),
        (" \t\r\n ", vec![], ""),
        // Equality; a missing value is the empty value.
        ("app=web", vec![eq("app", "web")], "app=web"),
        ("app==web", vec![eq("app", "web")], "app=web"),
        ("app!=web", vec![ne("app", "web")], "app!=web"),
        ("app=", vec![eq("app", "")], "app="),
        ("app==", vec![eq("app", "")], "app="),
        ("app!=", vec![ne("app", "")], "app!="),
        ("app=,b", vec![eq("app", ""), exists("b")], "app=,b"),
        ("app!=,b", vec![ne("app", ""), exists("b")], "app!=,b"),
        ("  app  =  web  ", vec![eq("app", "web")], "app=web"),
        ("\tapp\r\n==\nweb\t", vec![eq("app", "web")], "app=web"),
        // Existence.
        ("app", vec![exists("app")], "app"),
        ("!app", vec![absent("app")], "!app"),
        ("! app", vec![absent("app")], "!app"),
        ("!a,b", vec![absent("a"), exists("b")], "!a,b"),
        // Sets: sorted, without duplicates.
        (
            "tier in (a,b)",
            vec![is_in("tier", &["a", "b"])],
            "tier in (a,b)",
        ),
        (
            "tier in(b, a ,b)",
            vec![is_in("tier", &["a", "b"])],
            "tier in (a,b)",
        ),
        (
            "tier notin (x)",
            vec![not_in("tier", &["x"])],
            "tier notin (x)",
        ),
        (
            "tier notin(z,y)",
            vec![not_in("tier", &["y", "z"])],
            "tier notin (y,z)",
        ),
        // An omitted item is the empty value; `()` is the set {""}.
        ("tier in ()", vec![is_in("tier", &[""])], "tier in ()"),
        ("tier in ( )", vec![is_in("tier", &[""])], "tier in ()"),
        (
            "tier notin ()",
            vec![not_in("tier", &[""])],
            "tier notin ()",
        ),
        (
            "tier in (a,)",
            vec![is_in("tier", &["", "a"])],
            "tier in (,a)",
        ),
        (
            "tier in (,a)",
            vec![is_in("tier", &["", "a"])],
            "tier in (,a)",
        ),
        ("tier in (,)", vec![is_in("tier", &[""])], "tier in ()"),
        ("tier in (,,)", vec![is_in("tier", &[""])], "tier in ()"),
        (
            "tier in (a,,b)",
            vec![is_in("tier", &["", "a", "b"])],
            "tier in (,a,b)",
        ),
        (
            "tier in (a,b,)",
            vec![is_in("tier", &["", "a", "b"])],
            "tier in (,a,b)",
        ),
        // `in` and `notin` are operators only after a key.
        ("k=in", vec![eq("k", "in")], "k=in"),
        ("in=x", vec![eq("in", "x")], "in=x"),
        ("notin!=x", vec![ne("notin", "x")], "notin!=x"),
        ("in", vec![exists("in")], "in"),
        ("!notin", vec![absent("notin")], "!notin"),
        (
            "k in (in,notin)",
            vec![is_in("k", &["in", "notin"])],
            "k in (in,notin)",
        ),
        ("in in (in)", vec![is_in("in", &["in"])], "in in (in)"),
        (
            "notin notin (notin)",
            vec![not_in("notin", &["notin"])],
            "notin notin (notin)",
        ),
        // Integer comparisons.
        ("a>1", vec![gt("a", 1)], "a>1"),
        ("a<1", vec![lt("a", 1)], "a<1"),
        ("a > 1", vec![gt("a", 1)], "a>1"),
        ("a>0", vec![gt("a", 0)], "a>0"),
        ("a>01", vec![gt("a", 1)], "a>1"),
        (
            "a>9223372036854775807",
            vec![gt("a", i64::MAX)],
            "a>9223372036854775807",
        ),
        (
            "replicas>2,replicas<10",
            vec![gt("replicas", 2), lt("replicas", 10)],
            "replicas>2,replicas<10",
        ),
        // Several requirements.
        (
            "app=web,tier in (a,b),!debug",
            vec![
                eq("app", "web"),
                is_in("tier", &["a", "b"]),
                absent("debug"),
            ],
            "app=web,tier in (a,b),!debug",
        ),
        (
            "a , b!=c , !d , e notin ( f ) , g<3",
            vec![
                exists("a"),
                ne("b", "c"),
                absent("d"),
                not_in("e", &["f"]),
                lt("g", 3),
            ],
            "a,b!=c,!d,e notin (f),g<3",
        ),
        ("x=1,x=2", vec![eq("x", "1"), eq("x", "2")], "x=1,x=2"),
        // Keys and values.
        (
            "app.kubernetes.io/name=web",
            vec![eq("app.kubernetes.io/name", "web")],
            "app.kubernetes.io/name=web",
        ),
        (
            "A-b_c.D=x_Y-z.0",
            vec![eq("A-b_c.D", "x_Y-z.0")],
            "A-b_c.D=x_Y-z.0",
        ),
        ("9=9", vec![eq("9", "9")], "9=9"),
        ("a-1.b/C_2=z", vec![eq("a-1.b/C_2", "z")], "a-1.b/C_2=z"),
        (&long_eq, vec![eq(&long_key, &long_value)], &long_eq),
        // A NUL byte: the end of the input where a token would start; after
        // a token, the end of that token.
        ("\0a=b", vec![], ""),
        ("a=b \0 junk", vec![eq("a", "b")], "a=b"),
        ("a=b\0,c", vec![eq("a", "b"), exists("c")], "a=b,c"),
        ("a=b,\0c", vec![eq("a", "b"), exists("c")], "a=b,c"),
        ("a=\0b", vec![eq("a", "b")], "a=b"),
        ("a\0\0b", vec![exists("a")], "a"),
    ];
    for (input, requirements, display) in cases {
        let selector = parse(input);
        assert_eq!(
            selector.requirements(),
            requirements.as_slice(),
            "{input:?}"
        );
        assert_eq!(selector.is_empty(), requirements.is_empty(), "{input:?}");
        assert_eq!(selector.to_string(), display, "{input:?}");
        assert_eq!(parse(display), selector, "round trip of {input:?}");
    }
}

/// Selectors the API server rejects, with a fragment of the message.
#[test]
fn rejected_selectors() {
    let long = "x".repeat(64);
    let long_value = format!("app={long}");
    let long_set_value = format!("app in (a,{long})");
    let long_name = format!("{long}=1");
    let long_prefix = format!("{}/n", "a".repeat(254));
    let cases: Vec<(&str, &str)> = vec![
        // Dangling or misplaced operators.
        ("=", "expected a label key or `!` at position 0, found `=`"),
        (
            "=web",
            "expected a label key or `!` at position 0, found `=`",
        ),
        (
            "!",
            "expected a label key after `!` at position 1, found the end of the selector",
        ),
        (
            "!=x",
            "expected a label key or `!` at position 0, found `!=`",
        ),
        // Greedy symbols: `!==v` is `!=` then `=`.
        (
            "!==v",
            "expected a label key or `!` at position 0, found `!=`",
        ),
        (
            "!!a",
            "expected a label key after `!` at position 1, found `!`",
        ),
        (
            "(k)",
            "expected a label key or `!` at position 0, found `(`",
        ),
        (
            "k in",
            "expected `(` after `in` at position 4, found the end",
        ),
        ("k notin", "expected `(` after `notin` at position 7"),
        (
            "tier in a",
            "expected `(` after `in` at position 8, found `a`",
        ),
        (
            "k in in",
            "expected `(` after `in` at position 5, found `in`",
        ),
        (
            "tier notin a,b",
            "expected `(` after `notin` at position 11, found `a`",
        ),
        (
            "k=(a)",
            "expected a value after `=` at position 2, found `(`",
        ),
        (
            "k!==v",
            "expected a value after `!=` at position 3, found `=`",
        ),
        (
            "k===v",
            "expected a value after `==` at position 3, found `=`",
        ),
        (
            "k=a=b",
            "unexpected `=` at position 3: expected `,` or the end",
        ),
        ("k=v w", "unexpected `w` at position 4"),
        ("k in (a) b", "unexpected `b` at position 9"),
        (
            "k v",
            "expected an operator after key `k` at position 2, found `v`",
        ),
        (
            "k !v",
            "expected an operator after key `k` at position 2, found `!`",
        ),
        (
            "k)",
            "expected an operator after key `k` at position 1, found `)`",
        ),
        ("k=v)", "unmatched `)` at position 3"),
        // `!key` takes nothing more.
        ("!k=v", "`!k` only tests that the label is absent"),
        ("!k=v", "found `=` at position 2"),
        ("!k in (a)", "found `in` at position 3"),
        ("!k v", "found `v` at position 3"),
        // Integer comparisons.
        (
            "a>x",
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            "a>x",
            "value `x` of `a` after `>` (at position 2) is not a number",
        ),
        (
            "a<x",
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
        (
            "a>",
            "missing value after `>` at position 2: for 'Gt', 'Lt' operators, the value must be \
             an integer",
        ),
        ("a<,b", "missing value after `<` at position 2"),
        (
            "a>1.5",
            "value `1.5` of `a` after `>` (at position 2) is not a number",
        ),
        ("a>1e3", "is not a number"),
        ("a>0x10", "is not a number"),
        ("a>1_000", "is not a number"),
        (
            "a>-1",
            "value `-1` of `a` is not a valid label value: it must consist of letters",
        ),
        (
            "a>-1",
            "so the bound of `>` cannot have a sign (at position 2)",
        ),
        ("a<+1", "value `+1` of `a` is not a valid label value"),
        (
            "a>99999999999999999999",
            "value `99999999999999999999` of `a` after `>` (at position 2) is out of range: \
             for 'Gt', 'Lt' operators, the value must be an integer from",
        ),
        ("a>9223372036854775808", "is out of range"),
        ("a<-9223372036854775809", "is out of range"),
        (
            "a<=1",
            "expected a value after `<` at position 2, found `=`",
        ),
        (
            "a>=1",
            "expected a value after `>` at position 2, found `=`",
        ),
        (
            "a>(1)",
            "expected a value after `>` at position 2, found `(`",
        ),
        ("a>1>2", "unexpected `>` at position 3"),
        (
            "a gt 1",
            "`gt` at position 2 is not an operator: write `a>N`",
        ),
        (
            "a lt 1",
            "`lt` at position 2 is not an operator: write `a<N`",
        ),
        // Sets.
        ("k in (a,b", "missing `)` to close the `(` at position 5"),
        ("k in (a", "missing `)` to close the `(` at position 5"),
        ("k in (a,", "missing `)` to close the `(` at position 5"),
        ("k in (,", "missing `)` to close the `(` at position 5"),
        ("k in (", "missing `)` to close the `(` at position 5"),
        (
            "k in ((a)",
            "expected a value, `,` or `)` at position 6, found `(`",
        ),
        (
            "k in (=",
            "expected a value, `,` or `)` at position 6, found `=`",
        ),
        (
            "k in (a,=)",
            "expected a value, `,` or `)` at position 8, found `=`",
        ),
        (
            "k notin (!a)",
            "expected a value, `,` or `)` at position 9, found `!`",
        ),
        ("k in (a b)", "expected `,` or `)` at position 8, found `b`"),
        ("k in (a))", "unmatched `)` at position 8"),
        // Commas.
        ("a=b,", "trailing `,` at position 3"),
        ("a=b, ", "trailing `,` at position 3"),
        (",", "empty requirement at position 0"),
        (",a", "empty requirement at position 0"),
        ("a,,b", "empty requirement at position 2"),
        (
            "a,=b",
            "expected a label key or `!` after `,` at position 2, found `=`",
        ),
        (
            "a,)",
            "expected a label key or `!` after `,` at position 2, found `)`",
        ),
        // Keys.
        (
            "Bad:Key",
            "key `Bad:Key` is not a valid label key: the name must consist of",
        ),
        ("-a", "key `-a` is not a valid label key"),
        ("a-", "key `a-` is not a valid label key"),
        ("é=1", "key `é` is not a valid label key"),
        // Only four bytes are whitespace: U+00A0 and VT are part of a word.
        ("\u{a0}a=b", "key `\u{a0}a` is not a valid label key"),
        ("a\u{a0}=b", "key `a\u{a0}` is not a valid label key"),
        ("a\u{b}b", "key `a\u{b}b` is not a valid label key"),
        ("x/", "key `x/` is not a valid label key: the name is empty"),
        ("/x", "the prefix before `/` is empty"),
        ("a/b/c", "a key may contain at most one `/`"),
        (
            "Example.com/x",
            "the prefix before `/` must be a DNS subdomain",
        ),
        ("a..b/x", "the prefix before `/` must be a DNS subdomain"),
        ("-a.b/x", "the prefix before `/` must be a DNS subdomain"),
        ("a_b/x", "the prefix before `/` must be a DNS subdomain"),
        (
            "x in (a),y/",
            "key `y/` is not a valid label key: the name is empty (at position 9)",
        ),
        (
            &long_name,
            "the name is longer than 63 characters (at position 0)",
        ),
        (
            &long_prefix,
            "the prefix before `/` is longer than 253 characters",
        ),
        ("!Bad_", "key `Bad_` is not a valid label key"),
        ("Bad_ in (a)", "key `Bad_` is not a valid label key"),
        // Values, of every operator.
        (
            &long_value,
            "value of `app` is longer than 63 characters (at position 4)",
        ),
        (
            &long_set_value,
            "value of `app` is longer than 63 characters (at position 10)",
        ),
        ("app=a/b", "value `a/b` of `app` is not a valid label value"),
        ("app=-a", "value `-a` of `app` is not a valid label value"),
        ("app==a_", "value `a_` of `app` is not a valid label value"),
        ("app!=-a", "value `-a` of `app` is not a valid label value"),
        (
            "app in (ok,_x)",
            "value `_x` of `app` is not a valid label value",
        ),
        ("app notin (-x,)", "value `-x` of `app`"),
        ("app!=ü", "value `ü` of `app` is not a valid label value"),
        (
            "app!=ü",
            "start and end with a letter or digit (at position 5)",
        ),
        (
            "app=\u{a0}",
            "value `\u{a0}` of `app` is not a valid label value",
        ),
        // Positions count characters, not bytes.
        (
            "k in (é, x y)",
            "expected `,` or `)` at position 11, found `y`",
        ),
        ("k in (é, x)", "value `é` of `k` is not a valid label value"),
        // A NUL after a word separates it from the next one.
        (
            "a\0b",
            "expected an operator after key `a` at position 2, found `b`",
        ),
        ("a=b, \0c", "trailing `,` at position 3"),
    ];
    for (input, expected) in cases {
        match input.parse::<LabelSelector>() {
            Ok(selector) => panic!("{input:?} should not parse, got {selector:?}"),
            Err(e) => {
                assert_eq!(e.input(), input);
                assert!(
                    e.reason().contains(expected),
                    "{input:?}: {:?} should contain {expected:?}",
                    e.reason()
                );
                assert!(
                    e.reason().contains(&format!("position {}", e.position())),
                    "{input:?}: {:?} should name position {}",
                    e.reason(),
                    e.position()
                );
            }
        }
    }
}

#[test]
fn error_names_the_selector_and_the_position() {
    let err = "tier in a".parse::<LabelSelector>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "label selector `tier in a`: expected `(` after `in` at position 8, found `a`"
    );
    assert_eq!(err.input(), "tier in a");
    assert_eq!(
        err.reason(),
        "expected `(` after `in` at position 8, found `a`"
    );
    assert_eq!(err.position(), 8);
    let err = "k in (é, x y)".parse::<LabelSelector>().unwrap_err();
    assert_eq!(err.position(), 11);
    let err = "a=b,".parse::<LabelSelector>().unwrap_err();
    assert_eq!(err.position(), 3);
    let err = "k in (a".parse::<LabelSelector>().unwrap_err();
    assert_eq!(err.position(), 5);
    let boxed: Box<dyn std::error::Error> = Box::new(err);
    assert!(boxed.to_string().starts_with("label selector `k in (a`: "));
}

#[test]
fn matches_label_sets() {
    let web = [("app", "web"), ("tier", "front"), ("empty", ""), ("n", "5")];
    let db = [("app", "db"), ("tier", "back"), ("debug", "1"), ("n", "x")];
    let none: [(&str, &str); 0] = [];
    type Labels<'a> = &'a [(&'a str, &'a str)];
    let cases: Vec<(Labels, &str, bool)> = vec![
        (&web, "", true),
        (&none, "", true),
        (&web, "app=web", true),
        (&web, "app==web", true),
        (&db, "app=web", false),
        (&none, "app=web", false),
        (&web, "app!=web", false),
        (&db, "app!=web", true),
        // A missing label is "not equal" to anything.
        (&none, "app!=web", true),
        (&web, "empty=", true),
        (&web, "app=", false),
        // `k=` needs the label present.
        (&none, "empty=", false),
        (&web, "empty!=", false),
        (&web, "app!=", true),
        (&none, "app!=", true),
        (&web, "tier in (front,back)", true),
        (&db, "tier in (front,back)", true),
        (&web, "tier in (middle)", false),
        (&none, "tier in (front)", false),
        (&web, "empty in (,x)", true),
        (&web, "empty in ()", true),
        (&web, "app in ()", false),
        (&none, "app in ()", false),
        (&web, "tier notin (front)", false),
        (&db, "tier notin (front)", true),
        // A missing label is not in any set.
        (&none, "tier notin (front)", true),
        (&web, "empty notin ()", false),
        (&web, "app notin ()", true),
        (&web, "app", true),
        (&none, "app", false),
        (&web, "empty", true),
        (&web, "!debug", true),
        (&db, "!debug", false),
        (&web, "!empty", false),
        (&web, "app=web,tier in (front),!debug", true),
        (&web, "app=web,tier in (back)", false),
        (&db, "app=db,debug", true),
        (&db, "app=db,!debug", false),
        (&web, "APP=web", false),
        (&web, "app=Web", false),
        // Integer comparisons need the label, as an integer.
        (&web, "n>4", true),
        (&web, "n>5", false),
        (&web, "n<6", true),
        (&web, "n<5", false),
        (&web, "n>4,n<6", true),
        (&db, "n>4", false),
        (&db, "n<4", false),
        (&none, "n<4", false),
        (&web, "empty<1", false),
        (&web, "empty>0", false),
    ];
    for (labels, selector, expected) in cases {
        let labels: BTreeMap<&str, &str> = labels.iter().copied().collect();
        let get = |key: &str| labels.get(key).copied();
        assert_eq!(
            parse(selector).matches(get),
            expected,
            "{selector:?} against {labels:?}"
        );
    }
}

#[test]
fn requirement_matches_single_value() {
    let cases: Vec<(Requirement, Option<&str>, bool)> = vec![
        (eq("k", "v"), Some("v"), true),
        (eq("k", "v"), Some("w"), false),
        (eq("k", "v"), None, false),
        (ne("k", "v"), None, true),
        (ne("k", "v"), Some("v"), false),
        (is_in("k", &["a", "b"]), Some("b"), true),
        (is_in("k", &["a", "b"]), None, false),
        (not_in("k", &["a", "b"]), Some("a"), false),
        (not_in("k", &["a", "b"]), Some("c"), true),
        (not_in("k", &["a", "b"]), None, true),
        (exists("k"), Some(""), true),
        (exists("k"), None, false),
        (absent("k"), Some(""), false),
        (absent("k"), None, true),
        (gt("k", 1), Some("2"), true),
        (gt("k", 1), Some("1"), false),
        (gt("k", 1), Some("007"), true),
        (gt("k", 1), Some("+2"), true),
        (gt("k", -3), Some("-2"), true),
        (gt("k", 1), Some("2.5"), false),
        (gt("k", 1), Some("99999999999999999999"), false),
        (gt("k", 1), Some(""), false),
        (gt("k", 1), None, false),
        (lt("k", 1), Some("0"), true),
        (lt("k", 1), Some("-5"), true),
        (lt("k", 1), Some("1"), false),
        (lt("k", 1), Some("a"), false),
        (lt("k", 1), None, false),
        (lt("k", i64::MIN), Some("-9223372036854775808"), false),
    ];
    for (requirement, value, expected) in cases {
        assert_eq!(requirement.key(), "k");
        assert_eq!(
            requirement.matches(value),
            expected,
            "{requirement:?} against {value:?}"
        );
    }
}

#[test]
fn requirements_name_their_operator() {
    let cases = [
        ("k=v", Operator::Equals),
        ("k==v", Operator::Equals),
        ("k!=v", Operator::NotEquals),
        ("k in (v)", Operator::In),
        ("k notin (v)", Operator::NotIn),
        ("k", Operator::Exists),
        ("!k", Operator::DoesNotExist),
        ("k>1", Operator::GreaterThan),
        ("k<1", Operator::LessThan),
    ];
    for (input, operator) in cases {
        let selector = parse(input);
        let [requirement] = selector.requirements() else {
            panic!("{input:?} has one requirement");
        };
        assert_eq!(requirement.operator(), operator, "{input:?}");
        assert_eq!(requirement.key(), "k", "{input:?}");
    }
}

#[test]
fn everything_is_the_empty_selector() {
    let everything = LabelSelector::everything();
    assert!(everything.is_empty());
    assert_eq!(everything, parse(""));
    assert_eq!(everything, LabelSelector::default());
    assert_eq!(everything.to_string(), "");
    assert!(everything.matches(|_| None));
    assert!(!LabelSelector::new(vec![exists("a")]).is_empty());
}

#[test]
fn display_of_built_selectors_round_trips() {
    let selectors = [
        LabelSelector::new(vec![is_in("a", &[""])]),
        LabelSelector::new(vec![not_in("a", &["", "x"]), eq("b", ""), ne("c", "")]),
        LabelSelector::new(vec![absent("x/y"), exists("z")]),
        LabelSelector::new(vec![gt("n", 0), lt("n", 12)]),
        LabelSelector::new(vec![eq("in", "notin"), is_in("notin", &["in"])]),
    ];
    for selector in selectors {
        assert_eq!(parse(&selector.to_string()), selector, "{selector}");
    }
}
