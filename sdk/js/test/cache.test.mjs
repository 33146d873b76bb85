import assert from "node:assert/strict";
import { test } from "node:test";

import { Gvk, Interest, KindPattern, LabelSelector, ObjectRef, ObjectView, Relationship, testing } from "../grw-sdk.js";

function pod(namespace, name, app, owner) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, labels: { app }, ownerReferences: [{ uid: owner }] },
  };
}

function cache() {
  return new testing.MemoryCache()
    .with(pod("shop", "web-0", "web", "rs-1"))
    .with(pod("shop", "web-1", "web", "rs-1"))
    .with(pod("shop", "api-0", "api", "rs-2"))
    .with(pod("other", "web-0", "web", "rs-3"))
    .with({ apiVersion: "v1", kind: "Namespace", metadata: { name: "shop" } });
}

const POD = new Gvk("", "v1", "Pod");

test("get by kind, namespace and name", () => {
  const c = cache();
  assert.equal(c.size, 5);
  assert.equal(c.get(POD, "other", "web-0").namespace, "other");
  assert.equal(c.get(POD, "shop", "missing"), undefined);
  assert.equal(c.get({ group: "apps", version: "v1", kind: "Pod" }, "shop", "web-0"), undefined);
  assert.ok(c.get({ group: "", version: "v1", kind: "Namespace" }, "", "shop"));
});

test("insert replaces the same object", () => {
  const c = cache();
  c.insert(pod("shop", "web-0", "changed", "rs-1"));
  assert.equal(c.size, 5);
  assert.equal(c.get(POD, "shop", "web-0").label("app"), "changed");
});

test("list filters by namespace and selector", () => {
  const c = cache();
  assert.equal(c.list(POD).length, 4);
  assert.equal(c.list(POD, "shop").length, 3);
  assert.equal(c.list(POD, "shop", "app=web").length, 2);
  assert.equal(c.list(POD, "", "app in (web,api),app!=api").length, 3);
  assert.equal(c.list(POD, "", LabelSelector.parse("app=api")).length, 1);
  assert.throws(() => c.list(POD, "", "app in web"), /invalid label selector/);
});

test("ownedBy follows owner references", () => {
  const c = cache();
  assert.deepEqual(
    c.ownedBy(POD, "rs-1").map((o) => o.name),
    ["web-0", "web-1"],
  );
  assert.deepEqual(c.ownedBy(POD, "nobody"), []);
});

test("relationships and references", () => {
  const owner = new ObjectRef(new Gvk("apps", "v1", "ReplicaSet"), "shop", "web-7d9f");
  const edge = Relationship.incoming("owns", owner).with("controller", "true");
  assert.equal(edge.direction, "incoming");
  assert.equal(edge.relation, "owns");
  assert.deepEqual(edge.attributes, [["controller", "true"]]);
  assert.equal(Relationship.outgoing("selects", owner).direction, "outgoing");
  assert.throws(() => new Relationship("owns", "sideways", owner), /"outgoing" or "incoming"/);

  const ref = ObjectRef.of(pod("shop", "web-0", "web", "rs-1"));
  assert.equal(ref.gvk.toString(), "v1, Kind=Pod");
  assert.equal(ref.namespace, "shop");
  assert.equal(ref.name, "web-0");
  assert.equal(ObjectRef.of({ kind: "Pod", metadata: { name: "x" } }), undefined);
  assert.equal(ObjectRef.of({ apiVersion: "v1", kind: "Node", metadata: { name: "n" } }).namespace, "");
  assert.deepEqual(ObjectRef.of(ObjectView.of(pod("a", "b", "c", "d"))), ObjectView.of(pod("a", "b", "c", "d")).toRef());
});

test("interest: kinds and event types", () => {
  const all = Interest.all();
  assert.deepEqual([all.kinds, all.eventTypes], [[], []]);
  assert.ok(all.matches(new Gvk("x", "v9", "Thing"), "DELETED"));

  const interest = new Interest({
    kinds: ["Pod", KindPattern.gvk("apps", "v1", "Deployment")],
    eventTypes: ["MODIFIED", "modified", "ADDED"],
  });
  assert.equal(interest.kinds.length, 2);
  assert.deepEqual(interest.eventTypes, ["MODIFIED", "ADDED"]);
  const podGvk = new Gvk("", "v1", "Pod");
  assert.ok(interest.matches(podGvk, "MODIFIED"));
  assert.ok(!interest.matches(podGvk, "DELETED"));
  assert.ok(interest.matches(new Gvk("apps", "v1", "Deployment"), "ADDED"));
  assert.ok(!interest.matches(new Gvk("apps", "v1beta1", "Deployment"), "ADDED"));
  assert.ok(!interest.matches(new Gvk("apps", "v1", "StatefulSet"), "ADDED"));
  assert.throws(() => new Interest({ eventTypes: ["CHANGED"] }), /unknown event type/);

  const deployment = new Gvk("apps", "v1", "Deployment");
  assert.ok(KindPattern.any().matches(deployment));
  assert.ok(KindPattern.group("apps").matches(deployment));
  assert.ok(!KindPattern.group("").matches(deployment));
  assert.ok(KindPattern.groupKind("apps", "Deployment").matches(deployment));
  assert.ok(!KindPattern.gvk("", "v1", "Deployment").matches(deployment));
  assert.ok(KindPattern.from({ kind: "Deployment" }).matches(deployment));

  const event = testing.event("ADDED", { apiVersion: "v1", kind: "Pod", metadata: { name: "p" } });
  assert.ok(new Interest({ kinds: ["Pod"] }).matchesEvent(event));
  assert.ok(!new Interest({ eventTypes: ["DELETED"] }).matchesEvent(event));
});
