import assert from "node:assert/strict";
import { test } from "node:test";

import { Event, FieldPath, Gvk, JsonSource, ObjectView, testing } from "../grw-sdk.js";

function deployment() {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name: "web",
      namespace: "shop",
      uid: "u-1",
      resourceVersion: "42",
      labels: { tier: "front", app: "web" },
      annotations: { note: "hi", n: 3 },
    },
    spec: { replicas: 3 },
  };
}

test("an event reads its object's metadata", () => {
  for (const event of [new Event("ADDED", deployment()), testing.event("ADDED", deployment())]) {
    assert.deepEqual({ ...event.gvk }, { group: "apps", version: "v1", kind: "Deployment" });
    assert.equal(event.kind, "Deployment");
    assert.equal(event.type, "ADDED");
    assert.equal(event.origin, "watch");
    assert.equal(event.namespace, "shop");
    assert.equal(event.name, "web");
    assert.equal(event.uid, "u-1");
    assert.equal(event.resourceVersion, "42");
    // Sorted by key, as GRW sends them.
    assert.deepEqual(Object.entries(event.labels), [
      ["app", "web"],
      ["tier", "front"],
    ]);
    assert.equal(event.label("tier"), "front");
    assert.equal(event.label("missing"), undefined);
    assert.equal(event.annotation("note"), "hi");
    // Annotations that are not strings are left out.
    assert.equal(event.annotation("n"), undefined);
    assert.deepEqual({ ...event.annotations }, { note: "hi" });
    assert.equal(event.isClusterScoped, false);
    assert.equal(event.hasOldObject, false);
    assert.equal(event.oldObject, undefined);
    assert.equal(event.toString(), "ADDED apps/v1/Deployment shop/web");
  }
  const relisted = new Event("deleted", deployment(), { origin: "relist" });
  assert.equal(relisted.type, "DELETED");
  assert.equal(relisted.origin, "relist");
  assert.throws(() => new Event("CHANGED", {}), /unknown event type "CHANGED"/);
  assert.throws(() => new Event("ADDED", {}, { origin: "later" }), /unknown origin "later"/);
});

test("only what is asked for is fetched, and each once", () => {
  const object = new testing.HostObject({ data: { k: "new" }, metadata: { labels: { a: "1" } } });
  const old = new testing.HostObject({ data: { k: "old" } });
  const event = testing.event("MODIFIED", object, { oldObject: old, origin: "relist" });
  const methods = () => [...object.calls, ...old.calls].map(([method]) => method);

  assert.equal(event.field("data.k"), "new");
  assert.equal(event.oldField("data.k"), "old");
  assert.equal(event.label("a"), "1");
  assert.equal(event.label("b"), undefined);
  // Two field lookups, one label each, no whole object.
  assert.deepEqual(methods(), ["get", "label", "label", "get"]);
  assert.deepEqual(object.calls[0], ["get", ["data", "k"]]);

  // All labels once; single lookups answer from them after.
  assert.deepEqual({ ...event.labels }, { a: "1" });
  assert.equal(event.label("a"), "1");
  assert.deepEqual(methods(), ["get", "label", "label", "labels", "get"]);

  const first = event.object;
  assert.equal(event.object, first);
  assert.equal(event.objectJson, '{"data":{"k":"new"},"metadata":{"labels":{"a":"1"}}}');
  // Once parsed, fields come from the parsed object.
  assert.equal(event.field("data.k"), "new");
  assert.equal(event.field(["metadata", "labels", "a"]), "1");
  assert.equal(object.calls.filter(([m]) => m === "json").length, 1);
  assert.equal(object.calls.filter(([m]) => m === "get").length, 1);
  assert.deepEqual(event.oldObject, { data: { k: "old" } });
  assert.equal(event.oldObjectJson, '{"data":{"k":"old"}}');
});

test("metadata comes from the host's own answers, once", () => {
  const object = new testing.HostObject(deployment());
  const event = testing.event("ADDED", object);
  assert.equal(event.name, "web");
  assert.equal(event.name, "web");
  assert.equal(event.namespace, "shop");
  assert.equal(event.gvk.toString(), "apps/v1, Kind=Deployment");
  assert.equal(event.kind, "Deployment");
  assert.deepEqual(
    object.calls.map(([m]) => m),
    ["name", "namespace", "gvk"],
  );
});

test("a source with only json and get answers everything", () => {
  const text = JSON.stringify(deployment());
  const asked = [];
  const source = {
    json: () => text,
    get(path) {
      asked.push(path.join("."));
      return new JsonSource(text).get(path);
    },
  };
  const event = new Event("ADDED", source);
  assert.equal(event.name, "web");
  assert.equal(event.label("tier"), "front");
  assert.deepEqual(asked, ["metadata.name", "metadata.labels"]);
  assert.equal(event.gvk.apiVersion, "apps/v1");
  assert.equal(event.label("app"), "web");
  assert.equal(event.annotation("note"), "hi");
  assert.equal(event.field("/spec/replicas"), 3);
  assert.equal(new Event("ADDED", new JsonSource(text)).annotation("n"), undefined);
});

test("invalid JSON is an error every time", () => {
  const event = new Event("ADDED", new JsonSource("{not json"));
  assert.throws(() => event.object, /object is not valid JSON/);
  assert.throws(() => event.object, /object is not valid JSON/);
  assert.equal(event.field("a"), undefined);
  assert.deepEqual({ ...event.labels }, {});
});

test("the previous state of a modification", () => {
  const old = deployment();
  old.spec.replicas = 1;
  const event = testing.event("MODIFIED", deployment(), { oldObject: old });
  assert.equal(event.hasOldObject, true);
  assert.equal(event.oldObject.spec.replicas, 1);
  assert.match(event.oldObjectJson, /"replicas":1/);
  assert.equal(event.oldField("spec.replicas"), 1);
  assert.equal(event.field("spec.replicas"), 3);
  assert.equal(event.oldView.name, "web");
});

test("gvk and apiVersion round trip", () => {
  const apps = Gvk.fromApiVersion("apps/v1", "Deployment");
  assert.deepEqual({ ...apps }, { group: "apps", version: "v1", kind: "Deployment" });
  assert.equal(apps.apiVersion, "apps/v1");
  assert.equal(apps.toString(), "apps/v1, Kind=Deployment");
  const core = Gvk.fromApiVersion("v1", "Pod");
  assert.equal(core.group, "");
  assert.equal(core.apiVersion, "v1");
  assert.ok(Gvk.from({ group: "", version: "v1", kind: "Pod" }).equals(core));
});

function pod() {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "web-0",
      namespace: "shop",
      uid: "pod-uid",
      resourceVersion: "7",
      labels: { app: "web", "app.kubernetes.io/name": "shop-web" },
      annotations: { note: "hi", count: 3 },
      ownerReferences: [{ uid: "rs-uid" }, { uid: "other" }],
    },
    spec: { containers: [{ name: "main", image: "nginx:1.27" }] },
    status: { phase: "Running" },
  };
}

test("views of parsed objects and of host objects agree", () => {
  for (const view of [ObjectView.of(pod()), new ObjectView(new testing.HostObject(pod()))]) {
    assert.equal(view.apiVersion, "v1");
    assert.equal(view.kind, "Pod");
    assert.equal(view.namespace, "shop");
    assert.equal(view.name, "web-0");
    assert.equal(view.uid, "pod-uid");
    assert.equal(view.resourceVersion, "7");
    assert.equal(view.label("app"), "web");
    assert.equal(Object.keys(view.labels).length, 2);
    assert.deepEqual({ ...view.annotations }, { note: "hi" });
    assert.equal(view.field("status.phase"), "Running");
    assert.equal(view.field("spec.containers.0.image"), "nginx:1.27");
    assert.equal(view.field("spec.containers.1.image"), undefined);
    assert.equal(view.field("spec.containers.x"), undefined);
    assert.equal(view.field("status.phase.deeper"), undefined);
    assert.equal(view.field("/metadata/labels/app.kubernetes.io~1name"), "shop-web");
    assert.equal(view.field("/spec/containers/0/name"), "main");
    assert.deepEqual(view.field("metadata.ownerReferences.1"), { uid: "other" });
    assert.deepEqual({ ...view.toRef() }, { gvk: view.gvk, namespace: "shop", name: "web-0" });
  }
  const bare = ObjectView.of({ metadata: { namespace: "" } });
  assert.equal(bare.namespace, "");
  assert.equal(bare.isClusterScoped, true);
  assert.equal(bare.name, "");
  assert.deepEqual({ ...bare.labels }, {});
});

test("labels are read-only and safe for any key", () => {
  const view = ObjectView.of({ metadata: { labels: { constructor: "x", toString: "y" } } });
  assert.equal(view.label("constructor"), "x");
  assert.equal(view.label("hasOwnProperty"), undefined);
  assert.ok(Object.isFrozen(view.labels));
  assert.equal(ObjectView.of({}).label("constructor"), undefined);
  assert.equal(ObjectView.of({ a: {} }).field("a.constructor"), undefined);
});

test("field paths: dotted and JSON pointers", () => {
  const dotted = FieldPath.parse("spec.containers.0");
  const pointer = FieldPath.parse("/spec/containers/0");
  assert.deepEqual(dotted.segments, ["spec", "containers", "0"]);
  assert.deepEqual(dotted.segments, pointer.segments);
  assert.deepEqual(FieldPath.parse("/metadata/annotations/a~1b~0c").segments, ["metadata", "annotations", "a/b~c"]);
  const escaped = FieldPath.parse("/a~0b/c");
  assert.equal(escaped.get({ "a~b": { c: 1 } }), 1);
  assert.equal(escaped.toString(), "/a~0b/c");
  assert.equal(JSON.stringify({ path: escaped }), '{"path":"/a~0b/c"}');
  assert.throws(() => FieldPath.parse(""), /^Error: field path is empty$/);
  assert.throws(() => FieldPath.parse(".spec"), /field path `.spec` has an empty segment/);
  assert.throws(() => FieldPath.parse("spec."), /empty segment/);
  assert.throws(() => FieldPath.parse("a..b"), /empty segment; write `a.b.c`, or a JSON pointer like `\/a\/b`/);
  assert.throws(() => FieldPath.parse("/a/~2"), /field path `\/a\/~2`: `~` must be followed by `0` or `1` in a JSON pointer/);
  // Segments given as a list are taken as they are.
  assert.equal(FieldPath.from(["a.b"]).get({ "a.b": 1 }), 1);
  // Array indices are decimal, as Rust reads them.
  assert.equal(FieldPath.parse("a.01").get({ a: [0, 1] }), 1);
  assert.equal(FieldPath.parse("a.1x").get({ a: [0, 1] }), undefined);
  assert.equal(FieldPath.parse("a.-1").get({ a: [0, 1] }), undefined);
  assert.ok(FieldPath.parse("metadata.labels").covers(FieldPath.parse("/metadata/labels/a~1b")));
  assert.ok(!FieldPath.parse("metadata.labels").covers(["metadata"]));
  assert.throws(() => new Event("ADDED", {}).field("a..b"), /empty segment/);
});

test("a path's text is parsed once; what the host is handed cannot change it", () => {
  assert.equal(FieldPath.from("status.phase"), FieldPath.from("status.phase"));
  assert.ok(Object.isFrozen(FieldPath.from("status.phase").segments));
  // A malformed path is not kept: it throws every time.
  assert.throws(() => FieldPath.from("a..b"), /empty segment/);
  assert.throws(() => FieldPath.from("a..b"), /empty segment/);
  // The host gets the kept segments; a source that tried to change them fails.
  const asked = [];
  const source = {
    json: () => "{}",
    get(path) {
      asked.push(path);
      assert.throws(() => path.push("x"), TypeError);
      return '"Running"';
    },
  };
  const event = new Event("MODIFIED", source);
  assert.equal(event.field("status.phase"), "Running");
  assert.equal(event.field("status.phase"), "Running");
  assert.deepEqual(asked, [["status", "phase"], ["status", "phase"]]);
});

test("event types and origins are checked whatever their case", () => {
  assert.equal(new Event("modified", {}, { origin: "RELIST" }).type, "MODIFIED");
  assert.equal(new Event("MODIFIED", {}, { origin: "RELIST" }).origin, "relist");
  assert.throws(() => new Event("CHANGED", {}), /unknown event type "CHANGED"; use one of ADDED, MODIFIED, DELETED/);
  assert.throws(() => new Event("ADDED", {}, { origin: "replay" }), /unknown origin "replay"; use one of initial, watch, relist/);
});
