import type { EventType, Origin } from "./interest.js";
import type { PathLike } from "./paths.js";
import type { ObjectLike, ObjectView } from "./view.js";
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
export declare class Event {
    #private;
    /** @readonly */
    type: EventType;
    /** @readonly */
    origin: Origin;
    /**
     * @param {EventType | Lowercase<EventType>} type
     * @param {ObjectLike} object
     * @param {{ oldObject?: ObjectLike | null, origin?: Origin }} [options]
     */
    constructor(type: EventType | Lowercase<EventType>, object: ObjectLike, { oldObject, origin }?: {
        oldObject?: ObjectLike | null;
        origin?: Origin;
    });
    /** The object (its new state, or its last state for `DELETED`), as a view. */
    get view(): ObjectView;
    /** The previous state, for `MODIFIED` events. */
    get oldView(): ObjectView | undefined;
    get gvk(): import("./kinds.js").Gvk;
    get kind(): string;
    get namespace(): string;
    get name(): string;
    get uid(): string;
    get resourceVersion(): string;
    get isClusterScoped(): boolean;
    /** Whether the event carries the previous state (`MODIFIED` events do). */
    get hasOldObject(): boolean;
    /** @param {string} key */
    label(key: string): string | undefined;
    get labels(): Readonly<Record<string, string>>;
    /** @param {string} key */
    annotation(key: string): string | undefined;
    get annotations(): Readonly<Record<string, string>>;
    /**
     * The value at `path` in the object; see ObjectView.field.
     *
     * @param {PathLike} path
     * @returns {any}
     */
    field(path: PathLike): any;
    /**
     * The value at `path` in the previous state; `undefined` without one.
     *
     * @param {PathLike} path
     * @returns {any}
     */
    oldField(path: PathLike): any;
    /**
     * The whole object, parsed on first use.
     *
     * @returns {any}
     */
    get object(): any;
    /**
     * The whole previous state, parsed on first use; `undefined` without one.
     *
     * @returns {any}
     */
    get oldObject(): any;
    get objectJson(): string;
    get oldObjectJson(): string | undefined;
    toString(): string;
}
