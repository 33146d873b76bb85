// Kubernetes label selectors: parsed with the API server's grammar
// (selector-parser.js), matched against whatever holds labels.

import { SelectorParser } from "./selector-parser.js";
import { describe, hasOwn, isPlainObject } from "./values.js";

/** @import { Requirement } from "./requirement.js" */

/**
 * Anything labels can be looked up in: a `{key: value}` object, a Map,
 * `[key, value]` pairs, a function, or anything with `label(key)`.
 *
 * @typedef {{ label(key: string): string | undefined }
 *   | Readonly<Record<string, string>>
 *   | ReadonlyMap<string, string>
 *   | ReadonlyArray<readonly [string, string]>
 *   | ((key: string) => string | undefined)} LabelsLike
 */

/**
 * How to look up one label in whatever holds labels (LabelsLike, or
 * anything an untyped caller passes).
 *
 * @param {any} labels
 * @returns {(key: string) => string | undefined}
 */
function labelGetter(labels) {
  if (typeof labels === "function") return labels;
  if (labels instanceof Map) return (key) => labels.get(key);
  if (Array.isArray(labels)) return (key) => labels.find(([k]) => k === key)?.[1];
  if (labels && typeof labels.label === "function") return (key) => labels.label(key);
  if (isPlainObject(labels)) return (key) => (hasOwn(labels, key) ? labels[key] : undefined);
  if (labels === undefined || labels === null) return () => undefined;
  throw new TypeError(`cannot look labels up in ${describe(labels)}`);
}

/**
 * A Kubernetes label selector, with the API server's grammar and validation:
 * `app=web`, `app==web`, `app!=web`, `app in (web,api)`, `app notin (web)`,
 * `app`, `!app`, `replicas>2`, `n<10`, joined by commas; `""` matches
 * everything.
 *
 *     const selector = LabelSelector.parse("app in (web,api),tier!=cache");
 *     selector.matches({ app: "web" }); // true
 *     selector.matches(event);          // an Event's or ObjectView's labels
 */
export class LabelSelector {
  /** @param {Requirement[]} [requirements] */
  constructor(requirements = []) {
    /** @readonly */
    this.requirements = Object.freeze([...requirements]);
  }

  /**
   * Parses a selector; throws a SelectorError saying what is wrong and where.
   *
   * @param {string} text
   * @returns {LabelSelector}
   */
  static parse(text) {
    if (typeof text !== "string") throw new TypeError(`a label selector is a string, not ${describe(text)}`);
    return new LabelSelector(new SelectorParser(text).selector());
  }

  /** The selector that matches everything. */
  static everything() {
    return new LabelSelector();
  }

  get isEmpty() {
    return this.requirements.length === 0;
  }

  /**
   * Whether `labels` satisfy every requirement: a `{key: value}` object, a
   * Map, `[key, value]` pairs, a `key => value` function, or anything with a
   * `label(key)` method (Event, ObjectView).
   *
   * @param {LabelsLike | undefined | null} labels
   * @returns {boolean}
   */
  matches(labels) {
    const get = labelGetter(labels);
    return this.requirements.every((r) => r.matches(get(r.key)));
  }

  /** The canonical form, which parses back to the same selector. */
  toString() {
    return this.requirements.join(",");
  }

  toJSON() {
    return this.toString();
  }
}
