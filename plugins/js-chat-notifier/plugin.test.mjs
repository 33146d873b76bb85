// The cases of the Rust chat-notifier's tests, against the JavaScript port.

import assert from "node:assert/strict";
import { test } from "node:test";

import { GiveUp, HttpResponse, Retry, testing } from "../../sdk/js/grw-sdk.js";
import { chatNotifier } from "./plugin.js";

function notifier(config) {
  return testing.init(chatNotifier, config).plugin;
}

function plain() {
  return notifier({ url: "https://hooks.slack.com/services/T0" });
}

function deployment(replicas, labels, resourceVersion) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "shop", resourceVersion, generation: 4, labels },
    spec: { replicas, template: { spec: { containers: [{ name: "web", image: "shop/web:1.4" }] } } },
    status: { readyReplicas: replicas },
  };
}

function modified(old, now) {
  return testing.event("MODIFIED", now, { oldObject: old });
}

test("posts a summary of the changed fields", () => {
  const n = notifier({
    url: "https://hooks.slack.com/services/T0",
    channel: "#ops",
    username: "grw",
    iconEmoji: ":eyes:",
  });
  const event = modified(deployment(2, { app: "web" }, "10"), deployment(3, { app: "web", tier: "front" }, "11"));
  const http = new testing.RecordingHttp();
  n.deliver(event, http);
  assert.equal(http.requests.length, 1);
  const [request] = http.requests;
  assert.equal(request.method, "POST");
  assert.equal(request.url, "https://hooks.slack.com/services/T0");
  assert.deepEqual(request.headers, [["content-type", "application/json"]]);
  assert.equal(
    request.bodyText,
    JSON.stringify({
      text: "*Deployment* `shop/web` modified: spec.replicas 2 → 3; metadata.labels.tier added",
      channel: "#ops",
      username: "grw",
      icon_emoji: ":eyes:",
    }),
  );
});

test("added, deleted and cluster-scoped objects", () => {
  const n = plain();
  const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "x", namespace: "default" } };
  const cm = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "b", namespace: "a" } };
  const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } };
  assert.equal(n.summary(testing.event("ADDED", pod)), "*Pod* `default/x` added");
  assert.equal(n.summary(testing.event("DELETED", cm)), "*ConfigMap* `a/b` deleted");
  assert.equal(n.summary(testing.event("ADDED", ns)), "*Namespace* `shop` added");
  // No body: only the default fields.
  const http = new testing.RecordingHttp();
  n.deliver(testing.event("ADDED", pod), http);
  assert.deepEqual(http.requests[0].bodyJson(), { text: "*Pod* `default/x` added" });
});

test("added and deleted events read no more than the kind and name", () => {
  const object = new testing.HostObject(deployment(1, {}, "1"));
  plain().summary(testing.event("DELETED", object));
  assert.deepEqual(
    object.calls.map(([method]) => method),
    ["namespace", "name", "gvk"],
  );
});

test("removed fields, list items and long values", () => {
  const n = plain();
  let old = deployment(1, { app: "web", tier: "front" }, "1");
  let now = deployment(1, { app: "web" }, "2");
  old.spec.template.spec.containers[0].image = "shop/web:1.4";
  now.spec.template.spec.containers[0].image = "shop/web:1.5";
  now.spec.template.spec.containers.push({ name: "sidecar" });
  now.spec.note = "x".repeat(60);
  assert.equal(
    n.summary(modified(old, now)),
    "*Deployment* `shop/web` modified: spec.note added; " +
      "spec.template.spec.containers.0.image shop/web:1.4 → shop/web:1.5; " +
      "spec.template.spec.containers.1 added; metadata.labels.tier removed",
  );
  old = deployment(1, {}, "1");
  now = structuredClone(old);
  old.spec.strategy = "a";
  now.spec.strategy = "y".repeat(60);
  const text = n.summary(modified(old, now));
  assert.ok(text.endsWith(`spec.strategy a → ${"y".repeat(39)}…`), text);
});

test("ignored fields only send nothing", () => {
  const n = plain();
  const old = deployment(2, { app: "web" }, "10");
  const now = deployment(2, { app: "web" }, "11");
  now.status.readyReplicas = 0;
  now.metadata.generation = 5;
  now.metadata.managedFields = [{ manager: "kubectl" }];
  const http = new testing.RecordingHttp();
  n.deliver(modified(old, now), http);
  assert.equal(http.requests.length, 0);
});

test("ignore and maxFields are configurable", () => {
  const n = notifier({
    url: "http://chat.internal/hooks/x",
    ignore: ["spec.replicas", "/metadata/labels/app.kubernetes.io~1version"],
    maxFields: 2,
  });
  const old = deployment(1, { "app.kubernetes.io/version": "1" }, "1");
  const now = deployment(2, { "app.kubernetes.io/version": "2", a: "1", b: "2", c: "3" }, "2");
  now.status.readyReplicas = 7;
  // The list replaces the defaults: status and resourceVersion count now,
  // replicas and the version label do not.
  assert.equal(
    n.summary(modified(old, now)),
    "*Deployment* `shop/web` modified: status.readyReplicas 1 → 7; metadata.labels.a added; and 3 more",
  );
});

test("a modification without its old state is still announced", () => {
  const event = testing.event("MODIFIED", deployment(1, {}, "1"));
  assert.equal(plain().summary(event), "*Deployment* `shop/web` modified");
});

test("values of other types, null and empty strings", () => {
  const old = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { a: "", b: null, c: [1], d: { x: 1 } } };
  const now = { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { a: "x", b: 0, c: { 0: 1 }, d: "flat" } };
  assert.equal(
    plain().summary(modified(old, now)),
    '*ConfigMap* `c` modified: data.a "" → x; data.b null → 0; data.c [1] → {"0":1}; data.d {"x":1} → flat',
  );
});

test("text is escaped for Slack", () => {
  const old = { kind: "ConfigMap", apiVersion: "v1", metadata: { name: "c", namespace: "n" }, data: { k: "a<b" } };
  const now = { kind: "ConfigMap", apiVersion: "v1", metadata: { name: "c", namespace: "n" }, data: { k: "a&b>" } };
  assert.equal(plain().summary(modified(old, now)), "*ConfigMap* `n/c` modified: data.k a&lt;b → a&amp;b&gt;");
});

test("receiver answers decide retry or give up", () => {
  const n = plain();
  const event = testing.event("ADDED", deployment(1, {}, "1"));
  const http = new testing.RecordingHttp()
    .respond(new HttpResponse(500, { body: "oops" }))
    .respond(429)
    .fail("cannot connect: connection refused")
    .respond(400, "invalid_payload")
    .respond(404, "no_service");
  const outcome = () => {
    try {
      n.deliver(event, http);
      return "ok";
    } catch (e) {
      assert.ok(e instanceof Retry || e instanceof GiveUp, `${e}`);
      return [e.name, e.message];
    }
  };
  assert.deepEqual(
    Array.from({ length: 5 }, outcome),
    [
      ["Retry", "receiver answered 500: oops"],
      ["Retry", "receiver answered 429"],
      ["Retry", "cannot connect: connection refused"],
      ["GiveUp", "receiver answered 400: invalid_payload"],
      ["GiveUp", "receiver answered 404: no_service"],
    ],
  );
  assert.equal(outcome(), "ok");
});

test("bad configuration is rejected with the key", () => {
  const cases = [
    [{}, "config is not valid: missing field `url`"],
    [
      { url: "hooks.slack.com/services/T0" },
      'config key `url`: expected the webhook\'s http:// or https:// URL, got "hooks.slack.com/services/T0"',
    ],
    [{ url: "https://x", maxFields: 0 }, "config key `maxFields`: must be at least 1"],
    [{ url: "https://x", icon: ":x:" }, "unknown config key `icon`; accepted: url, channel, username, iconEmoji, ignore, maxFields"],
    [{ url: "https://x", ignore: ["a..b"] }, "config key `ignore[0]`"],
    [{ url: "https://x", channel: 5 }, "config key `channel`"],
  ];
  for (const [config, want] of cases) {
    assert.throws(
      () => testing.init(chatNotifier, config),
      (e) => e.message.includes(want) || assert.fail(`${JSON.stringify(config)}: ${e.message}`),
    );
  }
});

test("every event is of interest", () => {
  const { interest } = testing.init(chatNotifier, { url: "https://x" });
  assert.deepEqual([interest.kinds, interest.eventTypes], [[], []]);
});
