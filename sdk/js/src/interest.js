// What a plugin wants to see: the kinds and event types it returns from
// `init`, and the event types and origins GRW names events with.

import { KindPattern } from "./kinds.js";
import { describe, isPlainObject } from "./values.js";

/** @import { Event } from "./event.js" */
/** @import { GvkLike } from "./kinds.js" */

/** @typedef {"ADDED" | "MODIFIED" | "DELETED"} EventType */
/** @typedef {"initial" | "watch" | "relist"} Origin */

/**
 * `kinds` as names (`"Pod"`: any group), KindPatterns or their parts;
 * `eventTypes` in either case.
 *
 * @typedef {object} InterestInit
 * @property {Array<string | KindPattern | { group?: string, version?: string, kind?: string }>} [kinds]
 * @property {Array<EventType | Lowercase<EventType>>} [eventTypes]
 */

/** @type {readonly unknown[]} */
const EVENT_TYPES = ["ADDED", "MODIFIED", "DELETED"];
/** @type {readonly unknown[]} */
const ORIGINS = ["initial", "watch", "relist"];

/**
 * An event type in either case, checked; throws on anything else.
 *
 * @param {unknown} value
 * @returns {EventType}
 */
export function eventTypeOf(value) {
  if (value === "ADDED" || value === "MODIFIED" || value === "DELETED") return value;
  const type = typeof value === "string" ? value.toUpperCase() : value;
  if (!EVENT_TYPES.includes(type)) {
    throw new TypeError(`unknown event type ${describe(value)}; use one of ${EVENT_TYPES.join(", ")}`);
  }
  return /** @type {EventType} */ (type);
}

/**
 * An origin in either case, checked; throws on anything else.
 *
 * @param {unknown} value
 * @returns {Origin}
 */
export function originOf(value) {
  if (value === "watch" || value === "initial" || value === "relist") return value;
  const origin = typeof value === "string" ? value.toLowerCase() : value;
  if (!ORIGINS.includes(origin)) {
    throw new TypeError(`unknown origin ${describe(value)}; use one of ${ORIGINS.join(", ")}`);
  }
  return /** @type {Origin} */ (origin);
}

/**
 * What a plugin wants to see, returned from `init`: GRW never calls it for
 * other events. Empty lists mean everything.
 *
 *     new Interest({ kinds: ["Pod", KindPattern.gvk("apps", "v1", "Deployment")], eventTypes: ["MODIFIED"] })
 */
export class Interest {
  /** @param {InterestInit} [init] */
  constructor({ kinds = [], eventTypes = [] } = {}) {
    /** @readonly */
    this.kinds = kinds.map(KindPattern.from);
    /** @readonly */
    this.eventTypes = [...new Set(eventTypes.map(eventTypeOf))];
  }

  /** Every event of every kind. */
  static all() {
    return new Interest();
  }

  /**
   * An Interest from another, from `{kinds, eventTypes}`, or `undefined` (everything).
   *
   * @param {Interest | InterestInit | undefined | null} value
   * @returns {Interest}
   */
  static from(value) {
    if (value === undefined || value === null) return Interest.all();
    if (value instanceof Interest) return value;
    if (!isPlainObject(value)) throw new TypeError(`init must return an Interest, {kinds, eventTypes} or nothing, not ${describe(value)}`);
    return new Interest(value);
  }

  /**
   * Whether an event of this kind and type would be delivered.
   *
   * @param {GvkLike} gvk
   * @param {EventType} eventType
   * @returns {boolean}
   */
  matches(gvk, eventType) {
    return (
      (this.kinds.length === 0 || this.kinds.some((k) => k.matches(gvk))) &&
      (this.eventTypes.length === 0 || this.eventTypes.includes(eventTypeOf(eventType)))
    );
  }

  /**
   * Whether `event` would be delivered; handy in tests.
   *
   * @param {Event} event
   * @returns {boolean}
   */
  matchesEvent(event) {
    return this.matches(event.gvk, event.type);
  }
}
