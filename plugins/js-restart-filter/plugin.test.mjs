import assert from "node:assert/strict";
import { test } from "node:test";

import { Gvk, testing } from "../../sdk/js/grw-sdk.js";
import { restartFilter, totalRestarts } from "./plugin.js";

function pod(containers, initContainers) {
  const status = { phase: "Running" };
  if (containers) status.containerStatuses = containers.map((restartCount, i) => ({ name: `c${i}`, restartCount }));
  if (initContainers) status.initContainerStatuses = initContainers.map((restartCount, i) => ({ name: `i${i}`, restartCount }));
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web-0", namespace: "shop" },
    spec: { containers: [{ name: "c0", image: "nginx" }] },
    status,
  };
}

function filter(config = {}) {
  return testing.init(restartFilter, config).plugin;
}

test("counts the restarts of containers and init containers", () => {
  assert.equal(totalRestarts(testing.event("ADDED", pod([0, 2], [1]))), 3);
  assert.equal(totalRestarts(testing.event("ADDED", pod([], []))), 0);
  assert.equal(totalRestarts(testing.event("ADDED", pod())), 0);
  // Missing or malformed counts count as none.
  const odd = pod([1]);
  odd.status.containerStatuses.push({ name: "x" }, { name: "y", restartCount: "3" }, null);
  odd.status.initContainerStatuses = { not: "a list" };
  assert.equal(totalRestarts(testing.event("MODIFIED", odd)), 1);
});

test("passes Pods that restarted at least minRestarts times", () => {
  const byDefault = filter();
  assert.equal(byDefault.minRestarts, 1);
  assert.equal(byDefault.decide(testing.event("ADDED", pod([0]))), false);
  assert.equal(byDefault.decide(testing.event("MODIFIED", pod([0], [1]))), true);
  assert.equal(byDefault.decide(testing.event("DELETED", pod([1]))), true);

  const three = filter({ minRestarts: 3 });
  assert.equal(three.decide(testing.event("MODIFIED", pod([1, 1]))), false);
  assert.equal(three.decide(testing.event("MODIFIED", pod([1, 1], [1]))), true);

  const every = filter({ minRestarts: 0 });
  assert.equal(every.decide(testing.event("ADDED", pod())), true);
});

test("reads the two status lists and nothing else", () => {
  const object = new testing.HostObject(pod([1]));
  filter().decide(testing.event("MODIFIED", object));
  assert.deepEqual(object.calls, [
    ["get", ["status", "containerStatuses"]],
    ["get", ["status", "initContainerStatuses"]],
  ]);
});

test("asks for Pods only, of every event type", () => {
  const { interest } = testing.init(restartFilter, {});
  assert.ok(interest.matches(new Gvk("", "v1", "Pod"), "MODIFIED"));
  assert.ok(interest.matches(new Gvk("", "v1", "Pod"), "DELETED"));
  assert.ok(!interest.matches(new Gvk("", "v1", "Node"), "MODIFIED"));
  assert.ok(!interest.matches(new Gvk("apps", "v1", "Deployment"), "ADDED"));
});

test("bad configuration is rejected with the key", () => {
  const cases = [
    [{ minRestarts: -1 }, "config key `minRestarts`: must be at least 0"],
    [{ minRestarts: 1.5 }, "config key `minRestarts`: expected an integer, got 1.5"],
    [{ minRestarts: "2" }, 'config key `minRestarts`: expected an integer, got "2"'],
    [{ min: 2 }, "unknown config key `min`; accepted: minRestarts"],
  ];
  for (const [config, message] of cases) {
    assert.throws(() => filter(config), { message }, JSON.stringify(config));
  }
  assert.throws(() => testing.init(restartFilter, "{"), /^ConfigError: config is not valid JSON/);
});
