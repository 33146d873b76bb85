// The export adapters, called as componentize-js calls them inside a
// component: WIT records in, WIT records (or `{tag, val}` results) out, and
// the host's imports found where the build's prelude puts them.

import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import { runInNewContext } from "node:vm";

import {
  exportAnalyzer,
  exportFilter,
  exportNotifier,
  GiveUp,
  Gvk,
  Interest,
  log,
  ObjectRef,
  Relationship,
  Retry,
  testing,
} from "../grw-sdk.js";

const HOST = Symbol.for("grw-sdk.host");

let logged;
let sent;
let answers;

beforeEach(() => {
  logged = [];
  sent = [];
  answers = [];
  const objects = new testing.MemoryCache().with({
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name: "web-7d9f", namespace: "shop", uid: "rs-1" },
  });
  globalThis[HOST] = {
    log: (level, message) => logged.push([level, message]),
    send(request) {
      sent.push(request);
      const answer = answers.shift() ?? { status: 200, headers: [], body: new Uint8Array() };
      // The bindings throw their own realm's errors, which are not
      // `instanceof Error` here.
      if (typeof answer === "string") throw runInNewContext("(message) => new Error(message)")(answer);
      return answer;
    },
    cache: {
      get: (gvk, namespace, name) => {
        const view = objects.get(gvk, namespace, name);
        return view && new testing.HostObject(view.object);
      },
      list: () => {
        throw runInNewContext("new Error('invalid label selector')");
      },
      ownedBy: () => [],
    },
  };
});

afterEach(() => {
  delete globalThis[HOST];
});

function pod(restarts) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "web-0",
      namespace: "shop",
      labels: { app: "web" },
      ownerReferences: [{ apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-7d9f", uid: "rs-1", controller: true }],
    },
    status: { containerStatuses: [{ restartCount: restarts }] },
  };
}

const appFilter = {
  init(config) {
    this.selector = config.selector("selector", { required: true });
    this.types = config.strings("eventTypes", { default: [] });
    return new Interest({ kinds: ["Pod", { group: "apps", kind: "Deployment" }], eventTypes: this.types });
  },
  decide(event) {
    return this.selector.matches(event) ? "yes" : 0;
  },
};

test("filter: init returns the interest as a WIT record, or the error text", () => {
  const filter = exportFilter(appFilter);
  assert.deepEqual(filter.init('{"selector": "app=web", "eventTypes": ["MODIFIED"]}'), {
    kinds: [
      { group: undefined, version: undefined, kind: "Pod" },
      { group: "apps", version: undefined, kind: "Deployment" },
    ],
    eventTypes: ["modified"],
  });
  assert.deepEqual(filter.init("{}"), { tag: "err", val: "config is not valid: missing field `selector`" });
  assert.deepEqual(filter.init('{"selector": "a", "extra": 1}'), {
    tag: "err",
    val: "unknown config key `extra`; accepted: selector, eventTypes",
  });
  assert.deepEqual(filter.init('{"selector": "a", "eventTypes": ["LATER"]}'), {
    tag: "err",
    val: 'unknown event type "LATER"; use one of ADDED, MODIFIED, DELETED',
  });
  assert.deepEqual(exportFilter({ decide: () => true }).init(""), { kinds: [], eventTypes: [] });
  assert.deepEqual(exportFilter({ decide: () => true }).init('{"x": 1}'), {
    tag: "err",
    val: "unknown config key `x`; accepted: none, this plugin takes no configuration",
  });
  assert.deepEqual(exportFilter({ init: () => ({ eventTypes: ["DELETED"] }), decide: () => true }).init(""), {
    kinds: [],
    eventTypes: ["deleted"],
  });
});

test("filter: decide sees an Event over the host's object and answers a boolean", () => {
  const filter = exportFilter(appFilter);
  filter.init('{"selector": "app=web"}');
  const object = new testing.HostObject(pod(0));
  assert.equal(filter.decide({ eventType: "added", origin: "initial" }, object, undefined), true);
  assert.deepEqual(object.calls, [["label", "app"]]);
  const other = new testing.HostObject({ metadata: { labels: { app: "api" } } });
  assert.equal(filter.decide({ eventType: "modified", origin: "watch" }, other, object), false);
});

test("filter: state lives on the instance, one per init", () => {
  const filter = exportFilter(appFilter);
  filter.init('{"selector": "app=web"}');
  filter.init('{"selector": "app=api"}');
  assert.equal(appFilter.selector, undefined);
  const object = new testing.HostObject(pod(0));
  assert.equal(filter.decide({ eventType: "added", origin: "watch" }, object), false);
  assert.throws(() => exportFilter(appFilter).decide({ eventType: "added", origin: "watch" }, object), /before init/);
  assert.throws(() => exportFilter({ init() {} }), /exportFilter needs an object with a `decide` method/);
});

const hook = {
  init(config) {
    this.url = config.string("url", { required: true });
  },
  deliver(event, http) {
    if (event.name === "boom") throw new TypeError("cannot read that");
    if (event.name === "never") throw new GiveUp("not for this receiver");
    log.info(`delivering ${event}`);
    http.postJson(this.url, { type: event.type, name: event.name, old: event.oldField("metadata.name") });
  },
};

test("notifier: outcomes become the WIT result and delivery-error", () => {
  const notifier = exportNotifier(hook);
  assert.deepEqual(notifier.init('{"url": "https://hooks.example.com/x"}'), { kinds: [], eventTypes: [] });
  const object = new testing.HostObject(pod(1));
  const old = new testing.HostObject(pod(0));
  const modified = { eventType: "modified", origin: "watch" };

  assert.deepEqual(notifier.deliver(modified, object, old), { tag: "ok" });
  assert.equal(sent.length, 1);
  assert.equal(sent[0].method, "POST");
  assert.equal(sent[0].url, "https://hooks.example.com/x");
  assert.deepEqual(sent[0].headers, [["content-type", "application/json"]]);
  assert.ok(sent[0].body instanceof Uint8Array);
  assert.deepEqual(JSON.parse(new TextDecoder().decode(sent[0].body)), { type: "MODIFIED", name: "web-0", old: "web-0" });
  assert.deepEqual(logged, [["info", "delivering MODIFIED v1/Pod shop/web-0"]]);

  answers.push({ status: 503, headers: [], body: new TextEncoder().encode("busy") });
  assert.deepEqual(notifier.deliver(modified, object, old), { tag: "err", val: { tag: "retry", val: "receiver answered 503: busy" } });
  answers.push("host hooks.example.com:443 is not allowed");
  assert.deepEqual(notifier.deliver(modified, object, old), {
    tag: "err",
    val: { tag: "retry", val: "host hooks.example.com:443 is not allowed" },
  });
  answers.push({ status: 403, headers: [], body: new Uint8Array() });
  assert.deepEqual(notifier.deliver(modified, object, old), { tag: "err", val: { tag: "give-up", val: "receiver answered 403" } });

  const named = (name) => new testing.HostObject({ metadata: { name } });
  assert.deepEqual(notifier.deliver(modified, named("never")), { tag: "err", val: { tag: "give-up", val: "not for this receiver" } });
  // Anything else thrown is logged and retried, as GRW treats a failed call.
  assert.deepEqual(notifier.deliver(modified, named("boom")), { tag: "err", val: { tag: "retry", val: "cannot read that" } });
  assert.equal(logged.at(-1)[0], "error");
  assert.match(logged.at(-1)[1], /^deliver failed: TypeError: cannot read that/);
});

test("notifier: plugin code throws Retry and GiveUp natively too", () => {
  const { plugin } = testing.init(hook, { url: "https://x" });
  const http = new testing.RecordingHttp().respond(500);
  delete globalThis[HOST];
  assert.throws(() => plugin.deliver(testing.event("ADDED", pod(0)), http), Retry);
  assert.throws(() => plugin.deliver(testing.event("ADDED", { metadata: { name: "never" } }), http), GiveUp);
});

const owners = {
  init() {
    return new Interest({ kinds: ["Pod"] });
  },
  analyze(object, cache) {
    const edges = [];
    for (const ref of object.field("metadata.ownerReferences") ?? []) {
      const gvk = Gvk.fromApiVersion(ref.apiVersion, ref.kind);
      const owner = cache.get(gvk, object.namespace, ref.name);
      const edge = Relationship.incoming("owns", owner ? owner.toRef() : new ObjectRef(gvk, object.namespace, ref.name));
      if (ref.controller) edge.with("controller", "true");
      edges.push(edge);
    }
    edges.push({ relation: "runs-on", direction: "outgoing", target: { gvk: { group: "", version: "", kind: "Node" }, namespace: "", name: "n1" } });
    return edges;
  },
};

test("analyzer: relationships become WIT records, lookups go to the host cache", () => {
  const analyzer = exportAnalyzer(owners);
  assert.deepEqual(analyzer.init(""), { kinds: [{ group: undefined, version: undefined, kind: "Pod" }], eventTypes: [] });
  assert.deepEqual(analyzer.analyze(new testing.HostObject(pod(0))), [
    {
      relation: "owns",
      direction: "incoming",
      target: { gvk: { group: "apps", version: "v1", kind: "ReplicaSet" }, namespace: "shop", name: "web-7d9f" },
      attributes: [["controller", "true"]],
    },
    {
      relation: "runs-on",
      direction: "outgoing",
      target: { gvk: { group: "", version: "", kind: "Node" }, namespace: "", name: "n1" },
      attributes: [],
    },
  ]);
});

test("analyzer: the same logic runs natively against a memory cache", () => {
  const { plugin, interest } = testing.init(owners);
  assert.deepEqual(interest.kinds.map((k) => k.kind), ["Pod"]);
  const edges = plugin.analyze(new testing.MemoryCache().with(pod(0)).get(new Gvk("", "v1", "Pod"), "shop", "web-0"), new testing.MemoryCache());
  assert.equal(edges[0].target.name, "web-7d9f");
  assert.equal(edges.length, 2);
});

test("host lookups that fail throw an Error with the host's message", () => {
  const analyzer = exportAnalyzer({
    analyze(object, cache) {
      assert.throws(() => cache.list(new Gvk("", "v1", "Pod"), "", "app in web"), { message: "invalid label selector" });
      assert.deepEqual(cache.ownedBy(new Gvk("", "v1", "Pod"), "x"), []);
      return [];
    },
  });
  analyzer.init("");
  assert.deepEqual(analyzer.analyze(new testing.HostObject({})), []);
});

test("without a host, log lines go to stderr", () => {
  delete globalThis[HOST];
  const original = console.error;
  const lines = [];
  console.error = (line) => lines.push(line);
  try {
    log.warn("careful");
    log.log("debug", 42);
  } finally {
    console.error = original;
  }
  assert.deepEqual(lines, ["[warn] careful", "[debug] 42"]);
  assert.throws(() => log.log("loud", "x"), /unknown log level "loud"/);
});
