"""The selector grammar, checks and matching: the cases of GRW's own parser."""

import pytest

from grw_sdk import Event, LabelSelector, ObjectView, Operator, Requirement, SelectorError, testing


def eq(key, value):
    return Requirement(key, Operator.EQUALS, (value,))


def ne(key, value):
    return Requirement(key, Operator.NOT_EQUALS, (value,))


def is_in(key, values):
    return Requirement(key, Operator.IN, tuple(sorted(set(values))))


def not_in(key, values):
    return Requirement(key, Operator.NOT_IN, tuple(sorted(set(values))))


def exists(key):
    return Requirement(key, Operator.EXISTS)


def absent(key):
    return Requirement(key, Operator.DOES_NOT_EXIST)


def gt(key, bound):
    return Requirement(key, Operator.GREATER_THAN, bound=bound)


def lt(key, bound):
    return Requirement(key, Operator.LESS_THAN, bound=bound)


def parse(text):
    return LabelSelector.parse(text)


LONG_NAME = "n" * 63
LONG_PREFIX = "a" * 126 + "." + "b" * 126
LONG_KEY = f"{LONG_PREFIX}/{LONG_NAME}"
LONG_VALUE = "v" * 63
LONG_EQ = f"{LONG_KEY}={LONG_VALUE}"

ACCEPTED = [
    # Nothing: matches everything.
    ("", [], ""),
    ("   ", [], ""),
    (" \t\r\n ", [], ""),
    # Equality; a missing value is the empty value.
    ("app=web", [eq("app", "web")], "app=web"),
    ("app==web", [eq("app", "web")], "app=web"),
    ("app!=web", [ne("app", "web")], "app!=web"),
    ("app=", [eq("app", "")], "app="),
    ("app==", [eq("app", "")], "app="),
    ("app!=", [ne("app", "")], "app!="),
    ("app=,b", [eq("app", ""), exists("b")], "app=,b"),
    ("app!=,b", [ne("app", ""), exists("b")], "app!=,b"),
    ("  app  =  web  ", [eq("app", "web")], "app=web"),
    ("\tapp\r\n==\nweb\t", [eq("app", "web")], "app=web"),
    # Existence.
    ("app", [exists("app")], "app"),
    ("!app", [absent("app")], "!app"),
    ("! app", [absent("app")], "!app"),
    ("!a,b", [absent("a"), exists("b")], "!a,b"),
    # Sets: sorted, without duplicates.
    ("tier in (a,b)", [is_in("tier", ["a", "b"])], "tier in (a,b)"),
    ("tier in(b, a ,b)", [is_in("tier", ["a", "b"])], "tier in (a,b)"),
    ("tier notin (x)", [not_in("tier", ["x"])], "tier notin (x)"),
    ("tier notin(z,y)", [not_in("tier", ["y", "z"])], "tier notin (y,z)"),
    # An omitted item is the empty value; `()` is the set {""}.
    ("tier in ()", [is_in("tier", [""])], "tier in ()"),
    ("tier in ( )", [is_in("tier", [""])], "tier in ()"),
    ("tier notin ()", [not_in("tier", [""])], "tier notin ()"),
    ("tier in (a,)", [is_in("tier", ["", "a"])], "tier in (,a)"),
    ("tier in (,a)", [is_in("tier", ["", "a"])], "tier in (,a)"),
    ("tier in (,)", [is_in("tier", [""])], "tier in ()"),
    ("tier in (,,)", [is_in("tier", [""])], "tier in ()"),
    ("tier in (a,,b)", [is_in("tier", ["", "a", "b"])], "tier in (,a,b)"),
    ("tier in (a,b,)", [is_in("tier", ["", "a", "b"])], "tier in (,a,b)"),
    # `in` and `notin` are operators only after a key.
    ("k=in", [eq("k", "in")], "k=in"),
    ("in=x", [eq("in", "x")], "in=x"),
    ("notin!=x", [ne("notin", "x")], "notin!=x"),
    ("in", [exists("in")], "in"),
    ("!notin", [absent("notin")], "!notin"),
    ("k in (in,notin)", [is_in("k", ["in", "notin"])], "k in (in,notin)"),
    ("in in (in)", [is_in("in", ["in"])], "in in (in)"),
    ("notin notin (notin)", [not_in("notin", ["notin"])], "notin notin (notin)"),
    # Integer comparisons.
    ("a>1", [gt("a", 1)], "a>1"),
    ("a<1", [lt("a", 1)], "a<1"),
    ("a > 1", [gt("a", 1)], "a>1"),
    ("a>0", [gt("a", 0)], "a>0"),
    ("a>01", [gt("a", 1)], "a>1"),
    ("a>9223372036854775807", [gt("a", 2**63 - 1)], "a>9223372036854775807"),
    ("replicas>2,replicas<10", [gt("replicas", 2), lt("replicas", 10)], "replicas>2,replicas<10"),
    # Several requirements.
    (
        "app=web,tier in (a,b),!debug",
        [eq("app", "web"), is_in("tier", ["a", "b"]), absent("debug")],
        "app=web,tier in (a,b),!debug",
    ),
    (
        "a , b!=c , !d , e notin ( f ) , g<3",
        [exists("a"), ne("b", "c"), absent("d"), not_in("e", ["f"]), lt("g", 3)],
        "a,b!=c,!d,e notin (f),g<3",
    ),
    ("x=1,x=2", [eq("x", "1"), eq("x", "2")], "x=1,x=2"),
    # Keys and values.
    ("app.kubernetes.io/name=web", [eq("app.kubernetes.io/name", "web")], "app.kubernetes.io/name=web"),
    ("A-b_c.D=x_Y-z.0", [eq("A-b_c.D", "x_Y-z.0")], "A-b_c.D=x_Y-z.0"),
    ("9=9", [eq("9", "9")], "9=9"),
    ("a-1.b/C_2=z", [eq("a-1.b/C_2", "z")], "a-1.b/C_2=z"),
    (LONG_EQ, [eq(LONG_KEY, LONG_VALUE)], LONG_EQ),
    # A NUL: the end of the input where a token would start; after a token,
    # the end of that token.
    ("\0a=b", [], ""),
    ("a=b \0 junk", [eq("a", "b")], "a=b"),
    ("a=b\0,c", [eq("a", "b"), exists("c")], "a=b,c"),
    ("a=b,\0c", [eq("a", "b"), exists("c")], "a=b,c"),
    ("a=\0b", [eq("a", "b")], "a=b"),
    ("a\0\0b", [exists("a")], "a"),
]


@pytest.mark.parametrize("text,requirements,display", ACCEPTED)
def test_accepted_selectors(text, requirements, display):
    selector = parse(text)
    assert list(selector.requirements) == requirements
    assert selector.is_empty == (not requirements)
    assert str(selector) == display
    assert parse(display) == selector


LONG = "x" * 64

REJECTED = [
    # Dangling or misplaced operators.
    ("=", "expected a label key or `!` at position 0, found `=`"),
    ("=web", "expected a label key or `!` at position 0, found `=`"),
    ("!", "expected a label key after `!` at position 1, found the end of the selector"),
    ("!=x", "expected a label key or `!` at position 0, found `!=`"),
    # Greedy symbols: `!==v` is `!=` then `=`.
    ("!==v", "expected a label key or `!` at position 0, found `!=`"),
    ("!!a", "expected a label key after `!` at position 1, found `!`"),
    ("(k)", "expected a label key or `!` at position 0, found `(`"),
    ("k in", "expected `(` after `in` at position 4, found the end"),
    ("k notin", "expected `(` after `notin` at position 7"),
    ("tier in a", "expected `(` after `in` at position 8, found `a`"),
    ("k in in", "expected `(` after `in` at position 5, found `in`"),
    ("tier notin a,b", "expected `(` after `notin` at position 11, found `a`"),
    ("k=(a)", "expected a value after `=` at position 2, found `(`"),
    ("k!==v", "expected a value after `!=` at position 3, found `=`"),
    ("k===v", "expected a value after `==` at position 3, found `=`"),
    ("k=a=b", "unexpected `=` at position 3: expected `,` or the end"),
    ("k=v w", "unexpected `w` at position 4"),
    ("k in (a) b", "unexpected `b` at position 9"),
    ("k v", "expected an operator after key `k` at position 2, found `v`"),
    ("k !v", "expected an operator after key `k` at position 2, found `!`"),
    ("k)", "expected an operator after key `k` at position 1, found `)`"),
    ("k=v)", "unmatched `)` at position 3"),
    # `!key` takes nothing more.
    ("!k=v", "`!k` only tests that the label is absent"),
    ("!k=v", "found `=` at position 2"),
    ("!k in (a)", "found `in` at position 3"),
    ("!k v", "found `v` at position 3"),
    # Integer comparisons.
    ("a>x", "for 'Gt', 'Lt' operators, the value must be an integer"),
    ("a>x", "value `x` of `a` after `>` (at position 2) is not a number"),
    ("a<x", "for 'Gt', 'Lt' operators, the value must be an integer"),
    (
        "a>",
        "missing value after `>` at position 2: for 'Gt', 'Lt' operators, the value must be "
        "an integer",
    ),
    ("a<,b", "missing value after `<` at position 2"),
    ("a>1.5", "value `1.5` of `a` after `>` (at position 2) is not a number"),
    ("a>1e3", "is not a number"),
    ("a>0x10", "is not a number"),
    ("a>1_000", "is not a number"),
    ("a>-1", "value `-1` of `a` is not a valid label value: it must consist of letters"),
    ("a>-1", "so the bound of `>` cannot have a sign (at position 2)"),
    ("a<+1", "value `+1` of `a` is not a valid label value"),
    (
        "a>99999999999999999999",
        "value `99999999999999999999` of `a` after `>` (at position 2) is out of range: "
        "for 'Gt', 'Lt' operators, the value must be an integer from",
    ),
    ("a>9223372036854775808", "is out of range"),
    ("a<-9223372036854775809", "is out of range"),
    ("a<=1", "expected a value after `<` at position 2, found `=`"),
    ("a>=1", "expected a value after `>` at position 2, found `=`"),
    ("a>(1)", "expected a value after `>` at position 2, found `(`"),
    ("a>1>2", "unexpected `>` at position 3"),
    ("a gt 1", "`gt` at position 2 is not an operator: write `a>N`"),
    ("a lt 1", "`lt` at position 2 is not an operator: write `a<N`"),
    # Sets.
    ("k in (a,b", "missing `)` to close the `(` at position 5"),
    ("k in (a", "missing `)` to close the `(` at position 5"),
    ("k in (a,", "missing `)` to close the `(` at position 5"),
    ("k in (,", "missing `)` to close the `(` at position 5"),
    ("k in (", "missing `)` to close the `(` at position 5"),
    ("k in ((a)", "expected a value, `,` or `)` at position 6, found `(`"),
    ("k in (=", "expected a value, `,` or `)` at position 6, found `=`"),
    ("k in (a,=)", "expected a value, `,` or `)` at position 8, found `=`"),
    ("k notin (!a)", "expected a value, `,` or `)` at position 9, found `!`"),
    ("k in (a b)", "expected `,` or `)` at position 8, found `b`"),
    ("k in (a))", "unmatched `)` at position 8"),
    # Commas.
    ("a=b,", "trailing `,` at position 3"),
    ("a=b, ", "trailing `,` at position 3"),
    (",", "empty requirement at position 0"),
    (",a", "empty requirement at position 0"),
    ("a,,b", "empty requirement at position 2"),
    ("a,=b", "expected a label key or `!` after `,` at position 2, found `=`"),
    ("a,)", "expected a label key or `!` after `,` at position 2, found `)`"),
    # Keys.
    ("Bad:Key", "key `Bad:Key` is not a valid label key: the name must consist of"),
    ("-a", "key `-a` is not a valid label key"),
    ("a-", "key `a-` is not a valid label key"),
    ("é=1", "key `é` is not a valid label key"),
    # Only four characters are whitespace: U+00A0 and VT are part of a word.
    ("\u00a0a=b", "key `\u00a0a` is not a valid label key"),
    ("a\u00a0=b", "key `a\u00a0` is not a valid label key"),
    ("a\u000bb", "key `a\u000bb` is not a valid label key"),
    ("x/", "key `x/` is not a valid label key: the name is empty"),
    ("/x", "the prefix before `/` is empty"),
    ("a/b/c", "a key may contain at most one `/`"),
    ("Example.com/x", "the prefix before `/` must be a DNS subdomain"),
    ("a..b/x", "the prefix before `/` must be a DNS subdomain"),
    ("-a.b/x", "the prefix before `/` must be a DNS subdomain"),
    ("a_b/x", "the prefix before `/` must be a DNS subdomain"),
    ("x in (a),y/", "key `y/` is not a valid label key: the name is empty (at position 9)"),
    (f"{LONG}=1", "the name is longer than 63 characters (at position 0)"),
    ("a" * 254 + "/n", "the prefix before `/` is longer than 253 characters"),
    ("!Bad_", "key `Bad_` is not a valid label key"),
    ("Bad_ in (a)", "key `Bad_` is not a valid label key"),
    # Values, of every operator.
    (f"app={LONG}", "value of `app` is longer than 63 characters (at position 4)"),
    (f"app in (a,{LONG})", "value of `app` is longer than 63 characters (at position 10)"),
    ("app=a/b", "value `a/b` of `app` is not a valid label value"),
    ("app=-a", "value `-a` of `app` is not a valid label value"),
    ("app==a_", "value `a_` of `app` is not a valid label value"),
    ("app!=-a", "value `-a` of `app` is not a valid label value"),
    ("app in (ok,_x)", "value `_x` of `app` is not a valid label value"),
    ("app notin (-x,)", "value `-x` of `app`"),
    ("app!=ü", "value `ü` of `app` is not a valid label value"),
    ("app!=ü", "start and end with a letter or digit (at position 5)"),
    ("app=\u00a0", "value `\u00a0` of `app` is not a valid label value"),
    # Positions count characters.
    ("k in (é, x y)", "expected `,` or `)` at position 11, found `y`"),
    ("k in (é, x)", "value `é` of `k` is not a valid label value"),
    # A NUL after a word separates it from the next one.
    ("a\0b", "expected an operator after key `a` at position 2, found `b`"),
    ("a=b, \0c", "trailing `,` at position 3"),
]


@pytest.mark.parametrize("text,expected", REJECTED)
def test_rejected_selectors(text, expected):
    with pytest.raises(SelectorError) as caught:
        parse(text)
    error = caught.value
    assert error.input == text
    assert expected in error.reason
    assert f"position {error.position}" in error.reason


def test_error_names_the_selector_and_the_position():
    with pytest.raises(SelectorError) as caught:
        parse("tier in a")
    error = caught.value
    assert str(error) == "invalid label selector `tier in a`: expected `(` after `in` at position 8, found `a`"
    assert error.reason == "expected `(` after `in` at position 8, found `a`"
    assert error.position == 8
    assert isinstance(error, ValueError)
    for text, position in [("k in (é, x y)", 11), ("a=b,", 3), ("k in (a", 5)]:
        with pytest.raises(SelectorError) as caught:
            parse(text)
        assert caught.value.position == position


WEB = {"app": "web", "tier": "front", "empty": "", "n": "5"}
DB = {"app": "db", "tier": "back", "debug": "1", "n": "x"}
NONE: dict = {}

MATCHES = [
    (WEB, "", True),
    (NONE, "", True),
    (WEB, "app=web", True),
    (WEB, "app==web", True),
    (DB, "app=web", False),
    (NONE, "app=web", False),
    (WEB, "app!=web", False),
    (DB, "app!=web", True),
    # A missing label is "not equal" to anything.
    (NONE, "app!=web", True),
    (WEB, "empty=", True),
    (WEB, "app=", False),
    # `k=` needs the label present.
    (NONE, "empty=", False),
    (WEB, "empty!=", False),
    (WEB, "app!=", True),
    (NONE, "app!=", True),
    (WEB, "tier in (front,back)", True),
    (DB, "tier in (front,back)", True),
    (WEB, "tier in (middle)", False),
    (NONE, "tier in (front)", False),
    (WEB, "empty in (,x)", True),
    (WEB, "empty in ()", True),
    (WEB, "app in ()", False),
    (NONE, "app in ()", False),
    (WEB, "tier notin (front)", False),
    (DB, "tier notin (front)", True),
    # A missing label is not in any set.
    (NONE, "tier notin (front)", True),
    (WEB, "empty notin ()", False),
    (WEB, "app notin ()", True),
    (WEB, "app", True),
    (NONE, "app", False),
    (WEB, "empty", True),
    (WEB, "!debug", True),
    (DB, "!debug", False),
    (WEB, "!empty", False),
    (WEB, "app=web,tier in (front),!debug", True),
    (WEB, "app=web,tier in (back)", False),
    (DB, "app=db,debug", True),
    (DB, "app=db,!debug", False),
    (WEB, "APP=web", False),
    (WEB, "app=Web", False),
    # Integer comparisons need the label, as an integer.
    (WEB, "n>4", True),
    (WEB, "n>5", False),
    (WEB, "n<6", True),
    (WEB, "n<5", False),
    (WEB, "n>4,n<6", True),
    (DB, "n>4", False),
    (DB, "n<4", False),
    (NONE, "n<4", False),
    (WEB, "empty<1", False),
    (WEB, "empty>0", False),
]


@pytest.mark.parametrize("labels,text,expected", MATCHES)
def test_matches_label_sets(labels, text, expected):
    assert parse(text).matches(labels) is expected


SINGLE_VALUES = [
    (eq("k", "v"), "v", True),
    (eq("k", "v"), "w", False),
    (eq("k", "v"), None, False),
    (ne("k", "v"), None, True),
    (ne("k", "v"), "v", False),
    (is_in("k", ["a", "b"]), "b", True),
    (is_in("k", ["a", "b"]), None, False),
    (not_in("k", ["a", "b"]), "a", False),
    (not_in("k", ["a", "b"]), "c", True),
    (not_in("k", ["a", "b"]), None, True),
    (exists("k"), "", True),
    (exists("k"), None, False),
    (absent("k"), "", False),
    (absent("k"), None, True),
    (gt("k", 1), "2", True),
    (gt("k", 1), "1", False),
    (gt("k", 1), "007", True),
    (gt("k", 1), "+2", True),
    (gt("k", -3), "-2", True),
    (gt("k", 1), "2.5", False),
    (gt("k", 1), "99999999999999999999", False),
    (gt("k", 1), "", False),
    (gt("k", 1), None, False),
    (gt("k", 1), "٣", False),
    (gt("k", 1), "1_0", False),
    (lt("k", 1), "0", True),
    (lt("k", 1), "-5", True),
    (lt("k", 1), "1", False),
    (lt("k", 1), "a", False),
    (lt("k", 1), None, False),
    (lt("k", -(2**63)), "-9223372036854775808", False),
]


@pytest.mark.parametrize("requirement,value,expected", SINGLE_VALUES)
def test_requirement_matches_single_value(requirement, value, expected):
    assert requirement.key == "k"
    assert requirement.matches(value) is expected


@pytest.mark.parametrize(
    "text,operator",
    [
        ("k=v", Operator.EQUALS),
        ("k==v", Operator.EQUALS),
        ("k!=v", Operator.NOT_EQUALS),
        ("k in (v)", Operator.IN),
        ("k notin (v)", Operator.NOT_IN),
        ("k", Operator.EXISTS),
        ("!k", Operator.DOES_NOT_EXIST),
        ("k>1", Operator.GREATER_THAN),
        ("k<1", Operator.LESS_THAN),
    ],
)
def test_requirements_name_their_operator(text, operator):
    (requirement,) = parse(text).requirements
    assert requirement.operator is operator
    assert requirement.key == "k"


def test_everything_is_the_empty_selector():
    everything = LabelSelector.everything()
    assert everything.is_empty
    assert everything == parse("") == LabelSelector()
    assert str(everything) == ""
    assert everything.matches({})
    assert not LabelSelector((exists("a"),)).is_empty


@pytest.mark.parametrize(
    "selector",
    [
        LabelSelector((is_in("a", [""]),)),
        LabelSelector((not_in("a", ["", "x"]), eq("b", ""), ne("c", ""))),
        LabelSelector((absent("x/y"), exists("z"))),
        LabelSelector((gt("n", 0), lt("n", 12))),
        LabelSelector((eq("in", "notin"), is_in("notin", ["in"]))),
    ],
)
def test_display_of_built_selectors_round_trips(selector):
    assert parse(str(selector)) == selector


def test_matches_events_views_mappings_and_pairs():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "web"}}}
    selector = parse("app=web,!legacy")
    event = testing.event("ADDED", pod)
    assert selector.matches(event)
    # An event is asked for the selector's keys only, one at a time.
    assert event.view.source.calls == [("label", "app"), ("label", "legacy")]
    assert selector.matches(ObjectView.from_dict(pod))
    assert selector.matches(Event("ADDED", ObjectView.from_dict(pod)))
    assert selector.matches({"app": "web"})
    assert selector.matches([("app", "web")])
    assert not selector.matches([("app", "web"), ("legacy", "")])
