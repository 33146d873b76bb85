// What an analyzer answers: relationships between the analyzed object and
// others.

import { describe } from "./values.js";
import { ObjectRef } from "./view.js";

/** @import { GvkLike } from "./kinds.js" */

/** @typedef {"outgoing" | "incoming"} Direction */

/** One relationship between the analyzed object and another. */
export class Relationship {
  /**
   * @param {string} relation
   * @param {Direction} direction
   * @param {ObjectRef | { gvk: GvkLike, namespace: string, name: string }} target
   * @param {Array<[string, string]>} [attributes]
   */
  constructor(relation, direction, target, attributes = []) {
    if (direction !== "outgoing" && direction !== "incoming") {
      throw new TypeError(`a direction is "outgoing" or "incoming", not ${describe(direction)}`);
    }
    this.relation = relation;
    this.direction = direction;
    this.target = target instanceof ObjectRef ? target : new ObjectRef(target.gvk, target.namespace, target.name);
    /** @type {Array<[string, string]>} */
    this.attributes = attributes.map(([k, v]) => [String(k), String(v)]);
  }

  /**
   * The analyzed object `relation` `target`: this Service `selects` that Pod.
   *
   * @param {string} relation
   * @param {ObjectRef} target
   */
  static outgoing(relation, target) {
    return new Relationship(relation, "outgoing", target);
  }

  /**
   * `source` `relation` the analyzed object: that ReplicaSet `owns` this Pod.
   *
   * @param {string} relation
   * @param {ObjectRef} source
   */
  static incoming(relation, source) {
    return new Relationship(relation, "incoming", source);
  }

  /**
   * Adds an attribute, e.g. `with("controller", "true")`.
   *
   * @param {string} key
   * @param {string} value
   * @returns {this}
   */
  with(key, value) {
    this.attributes.push([String(key), String(value)]);
    return this;
  }
}
