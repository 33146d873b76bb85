// Unit tests of the notifier, run natively: node --test
import assert from "node:assert/strict";
import { test } from "node:test";

import { Retry, testing } from "./grw-sdk/grw-sdk.js";
import { plugin } from "./plugin.js";

const pod = { apiVersion: "v1", kind: "Pod", metadata: { name: "a", namespace: "shop" } };

test("posts the event", () => {
  const notifier = testing.init(plugin, { url: "https://example.com/hook" }).plugin;
  const http = new testing.RecordingHttp().respond(204);
  notifier.deliver(testing.event("ADDED", pod), http);
  assert.equal(http.requests[0].url, "https://example.com/hook");
  const body = JSON.parse(new TextDecoder().decode(http.requests[0].body));
  assert.deepEqual(body, { type: "ADDED", kind: "Pod", namespace: "shop", name: "a" });
});

test("server errors are retried", () => {
  const notifier = testing.init(plugin, { url: "https://example.com/hook" }).plugin;
  assert.throws(() => notifier.deliver(testing.event("ADDED", pod), new testing.RecordingHttp().respond(503)), Retry);
});
