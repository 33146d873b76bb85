// Unit tests of the filter, run natively: node --test
import assert from "node:assert/strict";
import { test } from "node:test";

import { testing } from "./grw-sdk/grw-sdk.js";
import { plugin } from "./plugin.js";

const pod = (labels) => ({ apiVersion: "v1", kind: "Pod", metadata: { name: "a", namespace: "shop", labels } });

test("passes objects with the label", () => {
  const filter = testing.init(plugin, { label: "team" }).plugin;
  assert.equal(filter.decide(testing.event("ADDED", pod({ team: "web" }))), true);
  assert.equal(filter.decide(testing.event("ADDED", pod({ app: "web" }))), false);
});

test("a config without the label is refused", () => {
  assert.throws(() => testing.init(plugin, {}), /label/);
});
