// Stand-ins for GRW's side, to test plugins with `node --test` and no
// WebAssembly runtime: objects that answer as GRW's do and record what was
// asked, a cache in memory, and HTTP answered from a script.

import { instantiate } from "./adapters.js";
import { Cache } from "./cache.js";
import { Event } from "./event.js";
import { Http, HttpResponse } from "./http.js";
import { Gvk } from "./kinds.js";
import { valueAt } from "./paths.js";
import { LabelSelector } from "./selector.js";
import { compareCodePoints, isPlainObject } from "./values.js";
import { JsonSource, lookup, ObjectView } from "./view.js";

/** @import { Config } from "./config.js" */
/** @import { Body, HttpRequest } from "./http.js" */
/** @import { EventType, Interest, Origin } from "./interest.js" */
/** @import { GvkLike } from "./kinds.js" */
/** @import { ObjectLike } from "./view.js" */

/**
 * A copy of a JSON value with every object's keys in code point order, as
 * GRW's `json()` answers.
 *
 * @param {unknown} value
 * @returns {unknown}
 */
function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isPlainObject(value)) return value;
  /** @type {Record<string, unknown>} */
  const sorted = {};
  for (const key of Object.keys(value).sort(compareCodePoints)) {
    Object.defineProperty(sorted, key, { value: sortKeys(value[key]), enumerable: true });
  }
  return sorted;
}

/**
 * An object answering like GRW's `object` resource (JSON with sorted keys,
 * labels sorted by key, ...) that records each call in `calls` as
 * `[method, ...arguments]`, to check what a plugin reads.
 */
class HostObject extends JsonSource {
  /** @param {unknown} value */
  constructor(value) {
    super(typeof value === "string" ? value : sortKeys(value));
    /** @readonly */
    this.value = value;
    /**
     * Each request, as `[method, ...arguments]`.
     *
     * @readonly
     * @type {Array<[string, ...unknown[]]>}
     */
    this.calls = [];
  }

  /**
   * @template T
   * @param {string} method
   * @param {unknown[]} args
   * @param {T} answer
   * @returns {T}
   */
  #record(method, args, answer) {
    this.calls.push([method, ...args]);
    return answer;
  }

  json() {
    return this.#record("json", [], super.json());
  }

  /** @param {readonly string[]} path */
  get(path) {
    return this.#record("get", [[...path]], super.get(path));
  }

  labels() {
    return this.#record("labels", [], super.labels());
  }

  annotations() {
    return this.#record("annotations", [], super.annotations());
  }

  /** @param {string} key */
  label(key) {
    return this.#record("label", [key], lookup(super.labels(), key));
  }

  /** @param {string} key */
  annotation(key) {
    return this.#record("annotation", [key], lookup(super.annotations(), key));
  }

  /** @param {readonly string[]} segments */
  #string(segments) {
    const value = valueAt(this.value, segments);
    return typeof value === "string" ? value : "";
  }

  gvk() {
    const { group, version, kind } = Gvk.fromApiVersion(this.#string(["apiVersion"]), this.#string(["kind"]));
    return this.#record("gvk", [], { group, version, kind });
  }

  namespace() {
    return this.#record("namespace", [], this.#string(["metadata", "namespace"]));
  }

  name() {
    return this.#record("name", [], this.#string(["metadata", "name"]));
  }

  uid() {
    return this.#record("uid", [], this.#string(["metadata", "uid"]));
  }

  resourceVersion() {
    return this.#record("resourceVersion", [], this.#string(["metadata", "resourceVersion"]));
  }
}

/**
 * A Cache over objects held in memory; each object's kind comes from its
 * `apiVersion` and `kind`. `list` takes full label selectors and, like GRW,
 * rejects malformed ones.
 */
class MemoryCache extends Cache {
  /** @type {ObjectView[]} */
  #objects = [];

  /** @param {object[]} [objects] */
  constructor(objects = []) {
    super();
    for (const object of objects) this.insert(object);
  }

  /**
   * Adds an object and returns the cache, for chaining.
   *
   * @param {object} object
   * @returns {this}
   */
  with(object) {
    this.insert(object);
    return this;
  }

  /**
   * Adds an object, replacing any of the same kind, namespace and name.
   *
   * @param {object} object
   */
  insert(object) {
    const view = ObjectView.of(object);
    /** @param {ObjectView} other */
    const same = (other) => other.gvk.equals(view.gvk) && other.namespace === view.namespace && other.name === view.name;
    this.#objects = this.#objects.filter((other) => !same(other));
    this.#objects.push(view);
  }

  get size() {
    return this.#objects.length;
  }

  /** @param {GvkLike} gvk */
  #ofKind(gvk) {
    const wanted = Gvk.from(gvk);
    return this.#objects.filter((o) => o.gvk.equals(wanted));
  }

  /**
   * @param {GvkLike} gvk
   * @param {string} namespace
   * @param {string} name
   */
  get(gvk, namespace, name) {
    return this.#ofKind(gvk).find((o) => o.namespace === namespace && o.name === name);
  }

  /**
   * @param {GvkLike} gvk
   * @param {string} [namespace]
   * @param {string | LabelSelector} [selector]
   */
  list(gvk, namespace = "", selector = "") {
    const parsed = selector instanceof LabelSelector ? selector : LabelSelector.parse(selector);
    return this.#ofKind(gvk).filter((o) => (namespace === "" || o.namespace === namespace) && parsed.matches(o));
  }

  /**
   * @param {GvkLike} gvk
   * @param {string} ownerUid
   */
  ownedBy(gvk, ownerUid) {
    return this.#ofKind(gvk).filter((o) => {
      const refs = o.field(["metadata", "ownerReferences"]);
      return Array.isArray(refs) && refs.some((r) => r?.uid === ownerUid);
    });
  }
}

/**
 * An Http that records every request (`requests`) and answers from a
 * script: responses queued with `respond` and failures with `fail`, in
 * order; after them, `200 OK` with an empty body.
 */
class RecordingHttp extends Http {
  /** @type {Array<{ response: HttpResponse, failure?: undefined } | { failure: string, response?: undefined }>} */
  #answers = [];

  constructor() {
    super();
    /**
     * @readonly
     * @type {HttpRequest[]}
     */
    this.requests = [];
  }

  /**
   * Queues a response: an HttpResponse, or a status and optional body.
   *
   * @param {HttpResponse | number} response
   * @param {Body} [body]
   * @returns {this}
   */
  respond(response, body) {
    this.#answers.push({ response: response instanceof HttpResponse ? response : new HttpResponse(response, { body }) });
    return this;
  }

  /**
   * Queues a failure to send, as when the host is not allowed or the connection is refused.
   *
   * @param {string} reason
   * @returns {this}
   */
  fail(reason) {
    this.#answers.push({ failure: reason });
    return this;
  }

  /** @param {HttpRequest} request */
  send(request) {
    this.requests.push(request);
    const answer = this.#answers.shift() ?? { response: new HttpResponse(200) };
    if (answer.failure !== undefined) throw new Error(answer.failure);
    return answer.response;
  }
}

/**
 * Stand-ins for GRW's side, to test plugin logic with `node --test` and no
 * WebAssembly runtime.
 */
export const testing = /* @__PURE__ */ Object.freeze({
  /**
   * An event for a plain object, read the way GRW serves it (through a
   * HostObject unless given a view or source). `options`: `oldObject`,
   * `origin` (default `watch`).
   *
   * @param {EventType | Lowercase<EventType>} type
   * @param {ObjectLike} object
   * @param {{ oldObject?: ObjectLike, origin?: Origin }} [options]
   * @returns {Event}
   */
  event(type, object, { oldObject, origin = "watch" } = {}) {
    /** @param {any} value */
    const source = (value) => (value instanceof ObjectView || typeof value?.json === "function" ? value : new HostObject(value));
    return new Event(type, source(object), { oldObject: oldObject === undefined ? undefined : source(oldObject), origin });
  },

  /**
   * Initializes a plugin definition as its export adapter would, with
   * `config` (a value or JSON text; default `{}`). Returns `{plugin,
   * interest}`; throws the error GRW would show the operator.
   *
   * @template {object} T
   * @param {T} definition
   * @param {string | object | Config} [config]
   * @returns {{ plugin: T & Record<string, any>, interest: Interest }}
   */
  init(definition, config = {}) {
    return instantiate(definition, config);
  },

  HostObject,
  MemoryCache,
  RecordingHttp,
});
