import { ObjectRef } from "./view.js";
import type { GvkLike } from "./kinds.js";
export type Direction = "outgoing" | "incoming";
/** @import { GvkLike } from "./kinds.js" */
/** @typedef {"outgoing" | "incoming"} Direction */
/** One relationship between the analyzed object and another. */
export declare class Relationship {
    relation: string;
    direction: Direction;
    target: ObjectRef;
    /** @type {Array<[string, string]>} */
    attributes: Array<[string, string]>;
    /**
     * @param {string} relation
     * @param {Direction} direction
     * @param {ObjectRef | { gvk: GvkLike, namespace: string, name: string }} target
     * @param {Array<[string, string]>} [attributes]
     */
    constructor(relation: string, direction: Direction, target: ObjectRef | {
        gvk: GvkLike;
        namespace: string;
        name: string;
    }, attributes?: Array<[string, string]>);
    /**
     * The analyzed object `relation` `target`: this Service `selects` that Pod.
     *
     * @param {string} relation
     * @param {ObjectRef} target
     */
    static outgoing(relation: string, target: ObjectRef): Relationship;
    /**
     * `source` `relation` the analyzed object: that ReplicaSet `owns` this Pod.
     *
     * @param {string} relation
     * @param {ObjectRef} source
     */
    static incoming(relation: string, source: ObjectRef): Relationship;
    /**
     * Adds an attribute, e.g. `with("controller", "true")`.
     *
     * @param {string} key
     * @param {string} value
     * @returns {this}
     */
    with(key: string, value: string): this;
}
