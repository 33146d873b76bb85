import assert from "node:assert/strict";
import { test } from "node:test";

import { Config, ConfigError, FieldPath, LabelSelector } from "../grw-sdk.js";

function error(fn) {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ConfigError, `${e}`);
    return e.message;
  }
  assert.fail("expected a configuration error");
}

test("empty text is an empty object", () => {
  for (const text of ["", "  ", "{}"]) {
    const config = Config.parse(text);
    assert.deepEqual(config.strings("include", { default: [] }), []);
    assert.equal(config.bool("clusterScoped", { default: false }), false);
    config.finish();
  }
});

test("getters return values and defaults", () => {
  const config = Config.parse(
    JSON.stringify({
      url: "https://x",
      min: 3,
      ratio: 0.5,
      on: true,
      include: ["a", "b"],
      path: "spec.replicas",
      paths: ["status", "/metadata/labels/a~1b"],
      selector: "app in (web,api)",
      extra: { k: [1] },
      anything: [null],
      nothing: null,
    }),
  );
  assert.equal(config.string("url", { required: true }), "https://x");
  assert.equal(config.string("channel"), undefined);
  assert.equal(config.int("min", { default: 1, minimum: 0 }), 3);
  assert.equal(config.int("max", { default: 10 }), 10);
  assert.equal(config.number("ratio", { maximum: 1 }), 0.5);
  assert.equal(config.bool("on"), true);
  assert.deepEqual(config.strings("include"), ["a", "b"]);
  assert.ok(config.fieldPath("path") instanceof FieldPath);
  assert.deepEqual(
    config.fieldPaths("paths").map((p) => p.segments),
    [["status"], ["metadata", "labels", "a/b"]],
  );
  assert.ok(config.selector("selector") instanceof LabelSelector);
  assert.deepEqual(config.object("extra"), { k: [1] });
  assert.deepEqual(config.any("anything"), [null]);
  // null counts as not given.
  assert.equal(config.has("nothing"), false);
  assert.equal(config.string("nothing", { default: "d" }), "d");
  assert.deepEqual(config.accepted, [
    "url",
    "channel",
    "min",
    "max",
    "ratio",
    "on",
    "include",
    "path",
    "paths",
    "selector",
    "extra",
    "anything",
    "nothing",
  ]);
  config.finish();
});

test("errors name the key", () => {
  const parse = (value) => Config.parse(JSON.stringify(value));
  assert.equal(
    error(() => parse({ include: ["a", 3] }).strings("include")),
    "config key `include[1]`: expected a string, got 3",
  );
  assert.equal(
    error(() => parse({ clusterScoped: "yes" }).bool("clusterScoped")),
    'config key `clusterScoped`: expected `true` or `false`, got "yes"',
  );
  assert.equal(error(() => parse({}).string("url", { required: true })), "config is not valid: missing field `url`");
  assert.equal(error(() => parse({ min: 1.5 }).int("min")), "config key `min`: expected an integer, got 1.5");
  assert.equal(error(() => parse({ min: -1 }).int("min", { minimum: 0 })), "config key `min`: must be at least 0");
  assert.equal(error(() => parse({ n: 11 }).number("n", { maximum: 10 })), "config key `n`: must be at most 10");
  assert.equal(error(() => parse({ include: "a" }).strings("include")), 'config key `include`: expected a list, got "a"');
  assert.equal(
    error(() => parse({ mode: "loud" }).string("mode", { oneOf: ["quiet", "normal"] })),
    'config key `mode`: expected one of `quiet`, `normal`, got "loud"',
  );
  assert.equal(
    error(() => parse({ paths: ["ok", "a..b"] }).fieldPaths("paths")),
    "config key `paths[1]`: field path `a..b` has an empty segment; write `a.b.c`, or a JSON pointer like `/a/b`",
  );
  assert.equal(
    error(() => parse({ selector: "app in web" }).selector("selector")),
    "config key `selector`: invalid label selector `app in web`: expected `(` after `in` at position 7, found `web`",
  );
  assert.equal(error(() => parse({ extra: [] }).object("extra")), "config key `extra`: expected an object, got []");
  assert.equal(
    error(() => parse({ s: "x".repeat(100) }).int("s")),
    `config key \`s\`: expected an integer, got "${"x".repeat(78)}…`,
  );
  assert.match(error(() => Config.parse("{")), /^config is not valid JSON: /);
  assert.equal(error(() => Config.parse("3")), "config is not valid: expected a JSON object, got 3");
  assert.equal(error(() => Config.parse("[]")), "config is not valid: expected a JSON object, got []");
});

test("unknown keys are rejected, naming the accepted ones", () => {
  const config = Config.parse('{"include": [], "inclde": [], "exclude": []}');
  config.strings("include");
  config.strings("exclude");
  config.bool("clusterScoped", { default: false });
  assert.equal(error(() => config.finish()), "unknown config key `inclde`; accepted: include, exclude, clusterScoped");

  const two = Config.parse('{"a": 1, "b": 2}');
  two.int("a");
  two.int("c", { default: 0 });
  assert.equal(error(() => two.finish()), "unknown config key `b`; accepted: a, c");
  const none = Config.parse('{"x": 1, "y": 2}');
  assert.equal(error(() => none.finish()), "unknown config keys `x`, `y`; accepted: none, this plugin takes no configuration");

  // A plugin that reads the whole value checks it itself.
  const whole = Config.parse('{"anything": 1}');
  assert.deepEqual(whole.value, { anything: 1 });
  whole.finish();
});
