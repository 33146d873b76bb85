import { KindPattern } from "./kinds.js";
import type { Event } from "./event.js";
import type { GvkLike } from "./kinds.js";
export type EventType = "ADDED" | "MODIFIED" | "DELETED";
export type Origin = "initial" | "watch" | "relist";
export type InterestInit = {
    kinds?: Array<string | KindPattern | {
        group?: string;
        version?: string;
        kind?: string;
    }>;
    eventTypes?: Array<EventType | Lowercase<EventType>>;
};
/**
 * An event type in either case, checked; throws on anything else.
 *
 * @param {unknown} value
 * @returns {EventType}
 */
export declare function eventTypeOf(value: unknown): EventType;
/**
 * An origin in either case, checked; throws on anything else.
 *
 * @param {unknown} value
 * @returns {Origin}
 */
export declare function originOf(value: unknown): Origin;
/**
 * What a plugin wants to see, returned from `init`: GRW never calls it for
 * other events. Empty lists mean everything.
 *
 *     new Interest({ kinds: ["Pod", KindPattern.gvk("apps", "v1", "Deployment")], eventTypes: ["MODIFIED"] })
 */
export declare class Interest {
    /** @readonly */
    kinds: KindPattern[];
    /** @readonly */
    eventTypes: EventType[];
    /** @param {InterestInit} [init] */
    constructor({ kinds, eventTypes }?: InterestInit);
    /** Every event of every kind. */
    static all(): Interest;
    /**
     * An Interest from another, from `{kinds, eventTypes}`, or `undefined` (everything).
     *
     * @param {Interest | InterestInit | undefined | null} value
     * @returns {Interest}
     */
    static from(value: Interest | InterestInit | undefined | null): Interest;
    /**
     * Whether an event of this kind and type would be delivered.
     *
     * @param {GvkLike} gvk
     * @param {EventType} eventType
     * @returns {boolean}
     */
    matches(gvk: GvkLike, eventType: EventType): boolean;
    /**
     * Whether `event` would be delivered; handy in tests.
     *
     * @param {Event} event
     * @returns {boolean}
     */
    matchesEvent(event: Event): boolean;
}
