// Unit tests of the analyzer, run natively: node --test
import assert from "node:assert/strict";
import { test } from "node:test";

import { ObjectView, testing } from "./grw-sdk/grw-sdk.js";
import { plugin } from "./plugin.js";

test("a Pod uses the ConfigMaps its volumes name", () => {
  const analyzer = testing.init(plugin).plugin;
  const pod = new ObjectView(new testing.HostObject({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "web", namespace: "shop" },
    spec: { volumes: [{ name: "c", configMap: { name: "settings" } }, { name: "e", emptyDir: {} }] },
  }));
  const found = analyzer.analyze(pod, new testing.MemoryCache());
  assert.deepEqual(found.map((r) => [r.relation, r.target.name]), [["uses", "settings"]]);
});
