// One change of one object, as `decide` and `deliver` receive it.

import { eventTypeOf, originOf } from "./interest.js";
import { viewOf } from "./view.js";

/** @import { EventType, Origin } from "./interest.js" */
/** @import { PathLike } from "./paths.js" */
/** @import { ObjectLike, ObjectView } from "./view.js" */

/**
 * One change of one object. `type` is `ADDED`, `MODIFIED` or `DELETED`;
 * `origin` is `initial`, `watch` or `relist`. Everything else is read from
 * the object only as far as asked: `name`, `label(key)` and `field(path)`
 * fetch just that, `object` fetches and parses the whole JSON once.
 *
 * `object` and `oldObject` may be ObjectViews, sources (see ObjectView) or
 * plain values. Inside GRW an event can only be read during its call.
 */
export class Event {
  /** @type {ObjectView} */
  #view;
  /** @type {ObjectView | undefined} */
  #oldView;

  /**
   * @param {EventType | Lowercase<EventType>} type
   * @param {ObjectLike} object
   * @param {{ oldObject?: ObjectLike | null, origin?: Origin }} [options]
   */
  constructor(type, object, { oldObject, origin = "watch" } = {}) {
    /** @readonly */
    this.type = eventTypeOf(type);
    /** @readonly */
    this.origin = originOf(origin);
    this.#view = viewOf(object);
    this.#oldView = oldObject === undefined || oldObject === null ? undefined : viewOf(oldObject);
  }

  /** The object (its new state, or its last state for `DELETED`), as a view. */
  get view() {
    return this.#view;
  }

  /** The previous state, for `MODIFIED` events. */
  get oldView() {
    return this.#oldView;
  }

  get gvk() {
    return this.#view.gvk;
  }

  get kind() {
    return this.#view.kind;
  }

  get namespace() {
    return this.#view.namespace;
  }

  get name() {
    return this.#view.name;
  }

  get uid() {
    return this.#view.uid;
  }

  get resourceVersion() {
    return this.#view.resourceVersion;
  }

  get isClusterScoped() {
    return this.#view.isClusterScoped;
  }

  /** Whether the event carries the previous state (`MODIFIED` events do). */
  get hasOldObject() {
    return this.#oldView !== undefined;
  }

  /** @param {string} key */
  label(key) {
    return this.#view.label(key);
  }

  get labels() {
    return this.#view.labels;
  }

  /** @param {string} key */
  annotation(key) {
    return this.#view.annotation(key);
  }

  get annotations() {
    return this.#view.annotations;
  }

  /**
   * The value at `path` in the object; see ObjectView.field.
   *
   * @param {PathLike} path
   * @returns {any}
   */
  field(path) {
    return this.#view.field(path);
  }

  /**
   * The value at `path` in the previous state; `undefined` without one.
   *
   * @param {PathLike} path
   * @returns {any}
   */
  oldField(path) {
    return this.#oldView?.field(path);
  }

  /**
   * The whole object, parsed on first use.
   *
   * @returns {any}
   */
  get object() {
    return this.#view.object;
  }

  /**
   * The whole previous state, parsed on first use; `undefined` without one.
   *
   * @returns {any}
   */
  get oldObject() {
    return this.#oldView?.object;
  }

  get objectJson() {
    return this.#view.json;
  }

  get oldObjectJson() {
    return this.#oldView?.json;
  }

  toString() {
    const name = this.namespace === "" ? this.name : `${this.namespace}/${this.name}`;
    return `${this.type} ${this.gvk.apiVersion}/${this.kind} ${name}`;
  }
}
