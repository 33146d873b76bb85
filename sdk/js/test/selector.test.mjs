// The cases of GRW's selector crate (selector/src/tests.rs) and of the Rust
// SDK's LabelSelector, run against the JavaScript port.

import assert from "node:assert/strict";
import { test } from "node:test";

import { LabelSelector, Requirement, SelectorError, testing } from "../grw-sdk.js";

const eq = (key, value) => new Requirement(key, "equals", value);
const ne = (key, value) => new Requirement(key, "notEquals", value);
const isIn = (key, values) => new Requirement(key, "in", values);
const notIn = (key, values) => new Requirement(key, "notIn", values);
const exists = (key) => new Requirement(key, "exists");
const absent = (key) => new Requirement(key, "doesNotExist");
const gt = (key, value) => new Requirement(key, "greaterThan", value);
const lt = (key, value) => new Requirement(key, "lessThan", value);

const I64_MAX = 2n ** 63n - 1n;
const I64_MIN = -(2n ** 63n);

function parse(text) {
  return LabelSelector.parse(text);
}

function reason(text) {
  try {
    LabelSelector.parse(text);
  } catch (e) {
    return e.message;
  }
  assert.fail(`${JSON.stringify(text)} should not parse`);
}

test("selectors the API server accepts: what they parse to and how they display", () => {
  const longName = "n".repeat(63);
  const longPrefix = `${"a".repeat(126)}.${"b".repeat(126)}`;
  const longKey = `${longPrefix}/${longName}`;
  const longValue = "v".repeat(63);
  const longEq = `${longKey}=${longValue}`;
  const cases = [
    // Nothing: matches everything.
    ["", [], ""],
    ["   ", [], ""],
    [" \t\r\n ", [], ""],
    // Equality; a missing value is the empty value.
    ["app=web", [eq("app", "web")], "app=web"],
    ["app==web", [eq("app", "web")], "app=web"],
    ["app!=web", [ne("app", "web")], "app!=web"],
    ["app=", [eq("app", "")], "app="],
    ["app==", [eq("app", "")], "app="],
    ["app!=", [ne("app", "")], "app!="],
    ["app=,b", [eq("app", ""), exists("b")], "app=,b"],
    ["app!=,b", [ne("app", ""), exists("b")], "app!=,b"],
    ["  app  =  web  ", [eq("app", "web")], "app=web"],
    ["\tapp\r\n==\nweb\t", [eq("app", "web")], "app=web"],
    // Existence.
    ["app", [exists("app")], "app"],
    ["!app", [absent("app")], "!app"],
    ["! app", [absent("app")], "!app"],
    ["!a,b", [absent("a"), exists("b")], "!a,b"],
    // Sets: sorted, without duplicates.
    ["tier in (a,b)", [isIn("tier", ["a", "b"])], "tier in (a,b)"],
    ["tier in(b, a ,b)", [isIn("tier", ["a", "b"])], "tier in (a,b)"],
    ["tier notin (x)", [notIn("tier", ["x"])], "tier notin (x)"],
    ["tier notin(z,y)", [notIn("tier", ["y", "z"])], "tier notin (y,z)"],
    // An omitted item is the empty value; `()` is the set {""}.
    ["tier in ()", [isIn("tier", [""])], "tier in ()"],
    ["tier in ( )", [isIn("tier", [""])], "tier in ()"],
    ["tier notin ()", [notIn("tier", [""])], "tier notin ()"],
    ["tier in (a,)", [isIn("tier", ["", "a"])], "tier in (,a)"],
    ["tier in (,a)", [isIn("tier", ["", "a"])], "tier in (,a)"],
    ["tier in (,)", [isIn("tier", [""])], "tier in ()"],
    ["tier in (,,)", [isIn("tier", [""])], "tier in ()"],
    ["tier in (a,,b)", [isIn("tier", ["", "a", "b"])], "tier in (,a,b)"],
    ["tier in (a,b,)", [isIn("tier", ["", "a", "b"])], "tier in (,a,b)"],
    // `in` and `notin` are operators only after a key.
    ["k=in", [eq("k", "in")], "k=in"],
    ["in=x", [eq("in", "x")], "in=x"],
    ["notin!=x", [ne("notin", "x")], "notin!=x"],
    ["in", [exists("in")], "in"],
    ["!notin", [absent("notin")], "!notin"],
    ["k in (in,notin)", [isIn("k", ["in", "notin"])], "k in (in,notin)"],
    ["in in (in)", [isIn("in", ["in"])], "in in (in)"],
    ["notin notin (notin)", [notIn("notin", ["notin"])], "notin notin (notin)"],
    // Integer comparisons.
    ["a>1", [gt("a", 1)], "a>1"],
    ["a<1", [lt("a", 1)], "a<1"],
    ["a > 1", [gt("a", 1)], "a>1"],
    ["a>0", [gt("a", 0)], "a>0"],
    ["a>01", [gt("a", 1)], "a>1"],
    ["a>9223372036854775807", [gt("a", I64_MAX)], "a>9223372036854775807"],
    ["replicas>2,replicas<10", [gt("replicas", 2), lt("replicas", 10)], "replicas>2,replicas<10"],
    // Several requirements.
    [
      "app=web,tier in (a,b),!debug",
      [eq("app", "web"), isIn("tier", ["a", "b"]), absent("debug")],
      "app=web,tier in (a,b),!debug",
    ],
    [
      "a , b!=c , !d , e notin ( f ) , g<3",
      [exists("a"), ne("b", "c"), absent("d"), notIn("e", ["f"]), lt("g", 3)],
      "a,b!=c,!d,e notin (f),g<3",
    ],
    ["x=1,x=2", [eq("x", "1"), eq("x", "2")], "x=1,x=2"],
    // Keys and values.
    ["app.kubernetes.io/name=web", [eq("app.kubernetes.io/name", "web")], "app.kubernetes.io/name=web"],
    ["A-b_c.D=x_Y-z.0", [eq("A-b_c.D", "x_Y-z.0")], "A-b_c.D=x_Y-z.0"],
    ["9=9", [eq("9", "9")], "9=9"],
    ["a-1.b/C_2=z", [eq("a-1.b/C_2", "z")], "a-1.b/C_2=z"],
    [longEq, [eq(longKey, longValue)], longEq],
    // A NUL byte: the end of the input where a token would start; after a
    // token, the end of that token.
    ["\0a=b", [], ""],
    ["a=b \0 junk", [eq("a", "b")], "a=b"],
    ["a=b\0,c", [eq("a", "b"), exists("c")], "a=b,c"],
    ["a=b,\0c", [eq("a", "b"), exists("c")], "a=b,c"],
    ["a=\0b", [eq("a", "b")], "a=b"],
    ["a\0\0b", [exists("a")], "a"],
  ];
  for (const [input, requirements, display] of cases) {
    const selector = parse(input);
    assert.deepEqual(selector.requirements, requirements, JSON.stringify(input));
    assert.equal(selector.isEmpty, requirements.length === 0, JSON.stringify(input));
    assert.equal(selector.toString(), display, JSON.stringify(input));
    assert.deepEqual(parse(display), selector, `round trip of ${JSON.stringify(input)}`);
  }
});

test("selectors the API server rejects, with a fragment of the message", () => {
  const long = "x".repeat(64);
  const cases = [
    // Dangling or misplaced operators.
    ["=", "expected a label key or `!` at position 0, found `=`"],
    ["=web", "expected a label key or `!` at position 0, found `=`"],
    ["!", "expected a label key after `!` at position 1, found the end of the selector"],
    ["!=x", "expected a label key or `!` at position 0, found `!=`"],
    // Greedy symbols: `!==v` is `!=` then `=`.
    ["!==v", "expected a label key or `!` at position 0, found `!=`"],
    ["!!a", "expected a label key after `!` at position 1, found `!`"],
    ["(k)", "expected a label key or `!` at position 0, found `(`"],
    ["k in", "expected `(` after `in` at position 4, found the end"],
    ["k notin", "expected `(` after `notin` at position 7"],
    ["tier in a", "expected `(` after `in` at position 8, found `a`"],
    ["k in in", "expected `(` after `in` at position 5, found `in`"],
    ["tier notin a,b", "expected `(` after `notin` at position 11, found `a`"],
    ["k=(a)", "expected a value after `=` at position 2, found `(`"],
    ["k!==v", "expected a value after `!=` at position 3, found `=`"],
    ["k===v", "expected a value after `==` at position 3, found `=`"],
    ["k=a=b", "unexpected `=` at position 3: expected `,` or the end"],
    ["k=v w", "unexpected `w` at position 4"],
    ["k in (a) b", "unexpected `b` at position 9"],
    ["k v", "expected an operator after key `k` at position 2, found `v`"],
    ["k !v", "expected an operator after key `k` at position 2, found `!`"],
    ["k)", "expected an operator after key `k` at position 1, found `)`"],
    ["k=v)", "unmatched `)` at position 3"],
    // `!key` takes nothing more.
    ["!k=v", "`!k` only tests that the label is absent"],
    ["!k=v", "found `=` at position 2"],
    ["!k in (a)", "found `in` at position 3"],
    ["!k v", "found `v` at position 3"],
    // Integer comparisons.
    ["a>x", "for 'Gt', 'Lt' operators, the value must be an integer"],
    ["a>x", "value `x` of `a` after `>` (at position 2) is not a number"],
    ["a<x", "for 'Gt', 'Lt' operators, the value must be an integer"],
    ["a>", "missing value after `>` at position 2: for 'Gt', 'Lt' operators, the value must be an integer"],
    ["a<,b", "missing value after `<` at position 2"],
    ["a>1.5", "value `1.5` of `a` after `>` (at position 2) is not a number"],
    ["a>1e3", "is not a number"],
    ["a>0x10", "is not a number"],
    ["a>1_000", "is not a number"],
    ["a>-1", "value `-1` of `a` is not a valid label value: it must consist of letters"],
    ["a>-1", "so the bound of `>` cannot have a sign (at position 2)"],
    ["a<+1", "value `+1` of `a` is not a valid label value"],
    [
      "a>99999999999999999999",
      "value `99999999999999999999` of `a` after `>` (at position 2) is out of range: for 'Gt', 'Lt' operators, the value must be an integer from",
    ],
    ["a>9223372036854775808", "is out of range"],
    ["a<-9223372036854775809", "is out of range"],
    ["a<=1", "expected a value after `<` at position 2, found `=`"],
    ["a>=1", "expected a value after `>` at position 2, found `=`"],
    ["a>(1)", "expected a value after `>` at position 2, found `(`"],
    ["a>1>2", "unexpected `>` at position 3"],
    ["a gt 1", "`gt` at position 2 is not an operator: write `a>N`"],
    ["a lt 1", "`lt` at position 2 is not an operator: write `a<N`"],
    // Sets.
    ["k in (a,b", "missing `)` to close the `(` at position 5"],
    ["k in (a", "missing `)` to close the `(` at position 5"],
    ["k in (a,", "missing `)` to close the `(` at position 5"],
    ["k in (,", "missing `)` to close the `(` at position 5"],
    ["k in (", "missing `)` to close the `(` at position 5"],
    ["k in ((a)", "expected a value, `,` or `)` at position 6, found `(`"],
    ["k in (=", "expected a value, `,` or `)` at position 6, found `=`"],
    ["k in (a,=)", "expected a value, `,` or `)` at position 8, found `=`"],
    ["k notin (!a)", "expected a value, `,` or `)` at position 9, found `!`"],
    ["k in (a b)", "expected `,` or `)` at position 8, found `b`"],
    ["k in (a))", "unmatched `)` at position 8"],
    // Commas.
    ["a=b,", "trailing `,` at position 3"],
    ["a=b, ", "trailing `,` at position 3"],
    [",", "empty requirement at position 0"],
    [",a", "empty requirement at position 0"],
    ["a,,b", "empty requirement at position 2"],
    ["a,=b", "expected a label key or `!` after `,` at position 2, found `=`"],
    ["a,)", "expected a label key or `!` after `,` at position 2, found `)`"],
    // Keys.
    ["Bad:Key", "key `Bad:Key` is not a valid label key: the name must consist of"],
    ["-a", "key `-a` is not a valid label key"],
    ["a-", "key `a-` is not a valid label key"],
    ["é=1", "key `é` is not a valid label key"],
    // Only four bytes are whitespace: U+00A0 and VT are part of a word.
    ["\u00a0a=b", "key `\u00a0a` is not a valid label key"],
    ["a\u00a0=b", "key `a\u00a0` is not a valid label key"],
    ["a\u000bb", "key `a\u000bb` is not a valid label key"],
    ["x/", "key `x/` is not a valid label key: the name is empty"],
    ["/x", "the prefix before `/` is empty"],
    ["a/b/c", "a key may contain at most one `/`"],
    ["Example.com/x", "the prefix before `/` must be a DNS subdomain"],
    ["a..b/x", "the prefix before `/` must be a DNS subdomain"],
    ["-a.b/x", "the prefix before `/` must be a DNS subdomain"],
    ["a_b/x", "the prefix before `/` must be a DNS subdomain"],
    ["x in (a),y/", "key `y/` is not a valid label key: the name is empty (at position 9)"],
    [`${long}=1`, "the name is longer than 63 characters (at position 0)"],
    [`${"a".repeat(254)}/n`, "the prefix before `/` is longer than 253 characters"],
    ["!Bad_", "key `Bad_` is not a valid label key"],
    ["Bad_ in (a)", "key `Bad_` is not a valid label key"],
    // Values, of every operator.
    [`app=${long}`, "value of `app` is longer than 63 characters (at position 4)"],
    [`app in (a,${long})`, "value of `app` is longer than 63 characters (at position 10)"],
    ["app=a/b", "value `a/b` of `app` is not a valid label value"],
    ["app=-a", "value `-a` of `app` is not a valid label value"],
    ["app==a_", "value `a_` of `app` is not a valid label value"],
    ["app!=-a", "value `-a` of `app` is not a valid label value"],
    ["app in (ok,_x)", "value `_x` of `app` is not a valid label value"],
    ["app notin (-x,)", "value `-x` of `app`"],
    ["app!=ü", "value `ü` of `app` is not a valid label value"],
    ["app!=ü", "start and end with a letter or digit (at position 5)"],
    ["app=\u00a0", "value `\u00a0` of `app` is not a valid label value"],
    // Positions count characters, not bytes (nor UTF-16 units).
    ["k in (é, x y)", "expected `,` or `)` at position 11, found `y`"],
    ["k in (\u{1f600}, x y)", "expected `,` or `)` at position 11, found `y`"],
    ["k in (é, x)", "value `é` of `k` is not a valid label value"],
    // A NUL after a word separates it from the next one.
    ["a\0b", "expected an operator after key `a` at position 2, found `b`"],
    ["a=b, \0c", "trailing `,` at position 3"],
  ];
  for (const [input, expected] of cases) {
    let error;
    try {
      const selector = LabelSelector.parse(input);
      assert.fail(`${JSON.stringify(input)} should not parse, got ${selector}`);
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof SelectorError, `${JSON.stringify(input)}: ${error}`);
    assert.equal(error.input, input);
    assert.ok(error.reason.includes(expected), `${JSON.stringify(input)}: ${JSON.stringify(error.reason)} should contain ${JSON.stringify(expected)}`);
    assert.ok(
      error.reason.includes(`position ${error.position}`),
      `${JSON.stringify(input)}: ${JSON.stringify(error.reason)} should name position ${error.position}`,
    );
  }
});

test("the error names the selector and the position", () => {
  let error;
  try {
    LabelSelector.parse("tier in a");
  } catch (e) {
    error = e;
  }
  assert.equal(error.message, "invalid label selector `tier in a`: expected `(` after `in` at position 8, found `a`");
  assert.equal(error.reason, "expected `(` after `in` at position 8, found `a`");
  assert.equal(error.position, 8);
  const position = (text) => {
    try {
      LabelSelector.parse(text);
    } catch (e) {
      return e.position;
    }
  };
  assert.equal(position("k in (é, x y)"), 11);
  assert.equal(position("a=b,"), 3);
  assert.equal(position("k in (a"), 5);
  assert.equal(
    reason("app in web"),
    "invalid label selector `app in web`: expected `(` after `in` at position 7, found `web`",
  );
});

test("label sets match as in Kubernetes", () => {
  const web = { app: "web", tier: "front", empty: "", n: "5" };
  const db = { app: "db", tier: "back", debug: "1", n: "x" };
  const none = {};
  const cases = [
    [web, "", true],
    [none, "", true],
    [web, "app=web", true],
    [web, "app==web", true],
    [db, "app=web", false],
    [none, "app=web", false],
    [web, "app!=web", false],
    [db, "app!=web", true],
    // A missing label is "not equal" to anything.
    [none, "app!=web", true],
    [web, "empty=", true],
    [web, "app=", false],
    // `k=` needs the label present.
    [none, "empty=", false],
    [web, "empty!=", false],
    [web, "app!=", true],
    [none, "app!=", true],
    [web, "tier in (front,back)", true],
    [db, "tier in (front,back)", true],
    [web, "tier in (middle)", false],
    [none, "tier in (front)", false],
    [web, "empty in (,x)", true],
    [web, "empty in ()", true],
    [web, "app in ()", false],
    [none, "app in ()", false],
    [web, "tier notin (front)", false],
    [db, "tier notin (front)", true],
    // A missing label is not in any set.
    [none, "tier notin (front)", true],
    [web, "empty notin ()", false],
    [web, "app notin ()", true],
    [web, "app", true],
    [none, "app", false],
    [web, "empty", true],
    [web, "!debug", true],
    [db, "!debug", false],
    [web, "!empty", false],
    [web, "app=web,tier in (front),!debug", true],
    [web, "app=web,tier in (back)", false],
    [db, "app=db,debug", true],
    [db, "app=db,!debug", false],
    [web, "APP=web", false],
    [web, "app=Web", false],
    // Integer comparisons need the label, as an integer.
    [web, "n>4", true],
    [web, "n>5", false],
    [web, "n<6", true],
    [web, "n<5", false],
    [web, "n>4,n<6", true],
    [db, "n>4", false],
    [db, "n<4", false],
    [none, "n<4", false],
    [web, "empty<1", false],
    [web, "empty>0", false],
  ];
  for (const [labels, selector, expected] of cases) {
    assert.equal(parse(selector).matches(labels), expected, `${selector} against ${JSON.stringify(labels)}`);
  }
});

test("a requirement against one value", () => {
  const cases = [
    [eq("k", "v"), "v", true],
    [eq("k", "v"), "w", false],
    [eq("k", "v"), undefined, false],
    [ne("k", "v"), undefined, true],
    [ne("k", "v"), "v", false],
    [isIn("k", ["a", "b"]), "b", true],
    [isIn("k", ["a", "b"]), undefined, false],
    [notIn("k", ["a", "b"]), "a", false],
    [notIn("k", ["a", "b"]), "c", true],
    [notIn("k", ["a", "b"]), undefined, true],
    [exists("k"), "", true],
    [exists("k"), undefined, false],
    [absent("k"), "", false],
    [absent("k"), undefined, true],
    [gt("k", 1), "2", true],
    [gt("k", 1), "1", false],
    [gt("k", 1), "007", true],
    [gt("k", 1), "+2", true],
    [gt("k", -3), "-2", true],
    [gt("k", 1), "2.5", false],
    [gt("k", 1), "99999999999999999999", false],
    [gt("k", 1), "", false],
    [gt("k", 1), undefined, false],
    [lt("k", 1), "0", true],
    [lt("k", 1), "-5", true],
    [lt("k", 1), "1", false],
    [lt("k", 1), "a", false],
    [lt("k", 1), undefined, false],
    [lt("k", I64_MIN), "-9223372036854775808", false],
    // Beyond what a double holds exactly.
    [gt("k", 9007199254740992n), "9007199254740993", true],
  ];
  for (const [requirement, value, expected] of cases) {
    assert.equal(requirement.key, "k");
    assert.equal(requirement.matches(value), expected, `${requirement} against ${JSON.stringify(value)}`);
  }
});

test("requirements name their operator", () => {
  const cases = [
    ["k=v", "equals"],
    ["k==v", "equals"],
    ["k!=v", "notEquals"],
    ["k in (v)", "in"],
    ["k notin (v)", "notIn"],
    ["k", "exists"],
    ["!k", "doesNotExist"],
    ["k>1", "greaterThan"],
    ["k<1", "lessThan"],
  ];
  for (const [input, operator] of cases) {
    const [requirement, ...rest] = parse(input).requirements;
    assert.equal(rest.length, 0, input);
    assert.equal(requirement.operator, operator, input);
    assert.equal(requirement.key, "k", input);
  }
  const [first, second] = parse("app=web,n<3").requirements;
  assert.equal(first.operator, "equals");
  assert.deepEqual(second, lt("n", 3));
  assert.equal(second.value, 3n);
});

test("everything is the empty selector", () => {
  const everything = LabelSelector.everything();
  assert.ok(everything.isEmpty);
  assert.deepEqual(everything, parse(""));
  assert.equal(everything.toString(), "");
  assert.ok(everything.matches(() => undefined));
  assert.ok(!new LabelSelector([exists("a")]).isEmpty);
});

test("built selectors display as text that parses back to them", () => {
  const selectors = [
    new LabelSelector([isIn("a", [""])]),
    new LabelSelector([notIn("a", ["", "x"]), eq("b", ""), ne("c", "")]),
    new LabelSelector([absent("x/y"), exists("z")]),
    new LabelSelector([gt("n", 0), lt("n", 12)]),
    new LabelSelector([eq("in", "notin"), isIn("notin", ["in"])]),
  ];
  for (const selector of selectors) {
    assert.deepEqual(parse(selector.toString()), selector, selector.toString());
  }
  for (const text of ["app in (api,web),tier!=cache", "a=b,!c,d,e notin (x,y),n>1,m<2"]) {
    assert.deepEqual(parse(parse(text).toString()), parse(text));
  }
  assert.equal(parse("app in (web)").toString(), "app in (web)");
  assert.equal(parse("app==web").toString(), "app=web");
  assert.equal(JSON.stringify({ selector: parse("a in (y,x)") }), '{"selector":"a in (x,y)"}');
});

test("selectors match events, views, maps, pairs and functions", () => {
  const object = { apiVersion: "v1", kind: "Pod", metadata: { name: "p", labels: { app: "web" } } };
  const selector = parse("app=web");
  assert.ok(selector.matches(testing.event("ADDED", object)));
  assert.ok(selector.matches(testing.event("ADDED", object).view));
  assert.ok(selector.matches({ app: "web" }));
  assert.ok(selector.matches(new Map([["app", "web"]])));
  assert.ok(selector.matches([["app", "web"]]));
  assert.ok(selector.matches((key) => (key === "app" ? "web" : undefined)));
  assert.ok(!selector.matches({}));
  assert.ok(parse("!constructor").matches({}));
  assert.ok(parse("app!=web").matches(undefined));
  assert.throws(() => selector.matches(3), /cannot look labels up in 3/);
});
