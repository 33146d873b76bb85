// Export adapters: a plugin written as a plain object becomes the export
// of its world, converting between the WIT shapes componentize-js passes
// and the SDK's classes, and turning exceptions into WIT errors.

import { Cache, HostCache } from "./cache.js";
import { Config } from "./config.js";
import { Event } from "./event.js";
import { GiveUp, HostHttp, Http, Retry } from "./http.js";
import { Interest } from "./interest.js";
import { witGvk } from "./kinds.js";
import { log } from "./log.js";
import { Relationship } from "./relationship.js";
import { messageOf } from "./values.js";
import { ObjectView } from "./view.js";

/** @import { WitGvk } from "./host.js" */
/** @import { EventType, InterestInit, Origin } from "./interest.js" */
/** @import { ObjectSource } from "./view.js" */

/**
 * What `init` may return: an Interest, `{kinds, eventTypes}`, or nothing for every event.
 *
 * @typedef {Interest | InterestInit | undefined | void} InitResult
 */

/**
 * A filter, for `exportFilter`: `decide` says whether GRW passes the event on.
 *
 * @typedef {{ init?(config: Config): InitResult, decide(event: Event): boolean }} FilterDefinition
 */

/**
 * A notifier, for `exportNotifier`: `deliver` sends the event, throwing Retry or GiveUp on failure.
 *
 * @typedef {{ init?(config: Config): InitResult, deliver(event: Event, http: Http): void }} NotifierDefinition
 */

/**
 * An analyzer, for `exportAnalyzer`: `analyze` answers an object's relationships.
 *
 * @typedef {{ init?(config: Config): InitResult, analyze(object: ObjectView, cache: Cache): Iterable<Relationship> }} AnalyzerDefinition
 */

/** @typedef {{ eventType: "added" | "modified" | "deleted", origin: Origin }} WitEvent */
/**
 * @typedef {{
 *   kinds: Array<{ group: string | undefined, version: string | undefined, kind: string | undefined }>,
 *   eventTypes: string[],
 * }} WitInterest
 */
/** @typedef {WitInterest | { tag: "err", val: string }} WitInitResult */
/** @typedef {{ tag: "ok" } | { tag: "err", val: { tag: "retry" | "give-up", val: string } }} WitDeliveryResult */
/**
 * @typedef {{
 *   relation: string,
 *   direction: "outgoing" | "incoming",
 *   target: { gvk: WitGvk, namespace: string, name: string },
 *   attributes: Array<[string, string]>,
 * }} WitRelationship
 */

/**
 * The exports componentize-js calls, in the WIT shapes (see README.md,
 * "How WIT types appear in JavaScript").
 *
 * @typedef {{
 *   init(config: string): WitInitResult,
 *   decide(event: WitEvent, object: ObjectSource, oldObject?: ObjectSource): boolean,
 * }} FilterExport
 */
/**
 * @typedef {{
 *   init(config: string): WitInitResult,
 *   deliver(event: WitEvent, object: ObjectSource, oldObject?: ObjectSource): WitDeliveryResult,
 * }} NotifierExport
 */
/**
 * @typedef {{
 *   init(config: string): WitInitResult,
 *   analyze(object: ObjectSource): WitRelationship[],
 * }} AnalyzerExport
 */

/** @type {Record<WitEvent["eventType"], EventType>} */
const WIT_EVENT_TYPES = { added: "ADDED", modified: "MODIFIED", deleted: "DELETED" };

/**
 * @param {Interest | InterestInit | undefined | null} value
 * @returns {WitInterest}
 */
function witInterest(value) {
  const interest = Interest.from(value);
  return {
    kinds: interest.kinds.map(({ group, version, kind }) => ({ group, version, kind })),
    eventTypes: interest.eventTypes.map((t) => t.toLowerCase()),
  };
}

/**
 * @param {WitEvent} event
 * @param {ObjectSource} object
 * @param {ObjectSource | undefined} oldObject
 */
function hostEvent(event, object, oldObject) {
  return new Event(WIT_EVENT_TYPES[event.eventType], object, { oldObject, origin: event.origin });
}

/**
 * Makes a plugin instance from its definition: a fresh object inheriting the
 * definition's methods, so `init` keeps its state on `this`. Returns the
 * instance and its Interest; throws what `init` or the configuration throw.
 *
 * @param {object} definition
 * @param {string | object | Config} config
 * @returns {{ plugin: any, interest: Interest }}
 */
export function instantiate(definition, config) {
  const parsed = Config.parse(config);
  const plugin = Object.create(definition);
  const interest = Interest.from(typeof plugin.init === "function" ? plugin.init(parsed) : undefined);
  parsed.finish();
  return { plugin, interest };
}

/**
 * @param {any} definition
 * @param {string} method
 * @param {string} adapter
 */
function requireMethod(definition, method, adapter) {
  if (typeof definition?.[method] !== "function") {
    throw new TypeError(`${adapter} needs an object with a \`${method}\` method (and optionally \`init\`)`);
  }
}

/**
 * @param {object} definition
 * @param {(plugin: any) => void} keep
 * @returns {(text: string) => WitInitResult}
 */
function adapterInit(definition, keep) {
  return (text) => {
    try {
      const { plugin, interest } = instantiate(definition, text);
      keep(plugin);
      return witInterest(interest);
    } catch (e) {
      return { tag: "err", val: messageOf(e) };
    }
  };
}

/**
 * @template T
 * @param {T | undefined} plugin
 * @returns {T}
 */
function initialized(plugin) {
  if (plugin === undefined) throw new Error("the plugin was called before init succeeded");
  return plugin;
}

/**
 * The `filter` export of the filter-plugin world, from a definition with
 * `init(config)` (optional; returns an Interest) and `decide(event)`.
 * An exception in `decide` fails the call, and the manifest's `failMode`
 * decides the event.
 *
 * @template {FilterDefinition} T
 * @param {T & ThisType<T & Record<string, any>>} definition
 * @returns {FilterExport}
 */
export function exportFilter(definition) {
  requireMethod(definition, "decide", "exportFilter");
  /** @type {FilterDefinition | undefined} */
  let plugin;
  return {
    init: adapterInit(definition, (p) => (plugin = p)),
    decide(event, object, oldObject) {
      return Boolean(initialized(plugin).decide(hostEvent(event, object, oldObject)));
    },
  };
}

/**
 * The `notifier` export of the notifier-plugin world, from a definition
 * with `init(config)` and `deliver(event, http)`. `deliver` throws Retry or
 * GiveUp to report a failed delivery; any other exception is reported as
 * Retry, as GRW treats a failed call.
 *
 * @template {NotifierDefinition} T
 * @param {T & ThisType<T & Record<string, any>>} definition
 * @returns {NotifierExport}
 */
export function exportNotifier(definition) {
  requireMethod(definition, "deliver", "exportNotifier");
  /** @type {NotifierDefinition | undefined} */
  let plugin;
  const http = new HostHttp();
  return {
    init: adapterInit(definition, (p) => (plugin = p)),
    deliver(event, object, oldObject) {
      try {
        initialized(plugin).deliver(hostEvent(event, object, oldObject), http);
        return { tag: "ok" };
      } catch (e) {
        if (e instanceof GiveUp) return { tag: "err", val: { tag: "give-up", val: e.message } };
        if (!(e instanceof Retry)) log.error(`deliver failed: ${typeof e?.stack === "string" ? e.stack : messageOf(e)}`);
        return { tag: "err", val: { tag: "retry", val: messageOf(e) } };
      }
    },
  };
}

/**
 * @param {Relationship | { relation: string, direction: "outgoing" | "incoming", target: Relationship["target"], attributes?: Array<[string, string]> }} relationship
 * @returns {WitRelationship}
 */
function witRelationship(relationship) {
  const r = relationship instanceof Relationship ? relationship : new Relationship(relationship.relation, relationship.direction, relationship.target, relationship.attributes);
  return {
    relation: r.relation,
    direction: r.direction,
    target: { gvk: witGvk(r.target.gvk), namespace: r.target.namespace, name: r.target.name },
    attributes: r.attributes,
  };
}

/**
 * The `analyzer` export of the analyzer-plugin world, from a definition
 * with `init(config)` and `analyze(object, cache)` returning Relationships.
 *
 * @template {AnalyzerDefinition} T
 * @param {T & ThisType<T & Record<string, any>>} definition
 * @returns {AnalyzerExport}
 */
export function exportAnalyzer(definition) {
  requireMethod(definition, "analyze", "exportAnalyzer");
  /** @type {AnalyzerDefinition | undefined} */
  let plugin;
  const cache = new HostCache();
  return {
    init: adapterInit(definition, (p) => (plugin = p)),
    analyze(object) {
      const relationships = initialized(plugin).analyze(new ObjectView(object), cache) ?? [];
      return [...relationships].map(witRelationship);
    },
  };
}
