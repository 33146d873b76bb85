import { Cache } from "./cache.js";
import { Event } from "./event.js";
import { Http, HttpResponse } from "./http.js";
import { LabelSelector } from "./selector.js";
import { JsonSource, ObjectView } from "./view.js";
import type { Config } from "./config.js";
import type { Body, HttpRequest } from "./http.js";
import type { EventType, Interest, Origin } from "./interest.js";
import type { GvkLike } from "./kinds.js";
import type { ObjectLike } from "./view.js";
/**
 * An object answering like GRW's `object` resource (JSON with sorted keys,
 * labels sorted by key, ...) that records each call in `calls` as
 * `[method, ...arguments]`, to check what a plugin reads.
 */
declare class HostObject extends JsonSource {
    #private;
    /** @readonly */
    value: unknown;
    /**
     * Each request, as `[method, ...arguments]`.
     *
     * @readonly
     * @type {Array<[string, ...unknown[]]>}
     */
    calls: Array<[string, ...unknown[]]>;
    /** @param {unknown} value */
    constructor(value: unknown);
    json(): string;
    /** @param {readonly string[]} path */
    get(path: readonly string[]): string | undefined;
    labels(): [string, string][];
    annotations(): [string, string][];
    /** @param {string} key */
    label(key: string): string | undefined;
    /** @param {string} key */
    annotation(key: string): string | undefined;
    gvk(): {
        group: string;
        version: string;
        kind: string;
    };
    namespace(): string;
    name(): string;
    uid(): string;
    resourceVersion(): string;
}
/**
 * A Cache over objects held in memory; each object's kind comes from its
 * `apiVersion` and `kind`. `list` takes full label selectors and, like GRW,
 * rejects malformed ones.
 */
declare class MemoryCache extends Cache {
    #private;
    /** @param {object[]} [objects] */
    constructor(objects?: object[]);
    /**
     * Adds an object and returns the cache, for chaining.
     *
     * @param {object} object
     * @returns {this}
     */
    with(object: object): this;
    /**
     * Adds an object, replacing any of the same kind, namespace and name.
     *
     * @param {object} object
     */
    insert(object: object): void;
    get size(): number;
    /**
     * @param {GvkLike} gvk
     * @param {string} namespace
     * @param {string} name
     */
    get(gvk: GvkLike, namespace: string, name: string): ObjectView | undefined;
    /**
     * @param {GvkLike} gvk
     * @param {string} [namespace]
     * @param {string | LabelSelector} [selector]
     */
    list(gvk: GvkLike, namespace?: string, selector?: string | LabelSelector): ObjectView[];
    /**
     * @param {GvkLike} gvk
     * @param {string} ownerUid
     */
    ownedBy(gvk: GvkLike, ownerUid: string): ObjectView[];
}
/**
 * An Http that records every request (`requests`) and answers from a
 * script: responses queued with `respond` and failures with `fail`, in
 * order; after them, `200 OK` with an empty body.
 */
declare class RecordingHttp extends Http {
    #private;
    /**
     * @readonly
     * @type {HttpRequest[]}
     */
    requests: HttpRequest[];
    constructor();
    /**
     * Queues a response: an HttpResponse, or a status and optional body.
     *
     * @param {HttpResponse | number} response
     * @param {Body} [body]
     * @returns {this}
     */
    respond(response: HttpResponse | number, body?: Body): this;
    /**
     * Queues a failure to send, as when the host is not allowed or the connection is refused.
     *
     * @param {string} reason
     * @returns {this}
     */
    fail(reason: string): this;
    /** @param {HttpRequest} request */
    send(request: HttpRequest): HttpResponse;
}
/**
 * Stand-ins for GRW's side, to test plugin logic with `node --test` and no
 * WebAssembly runtime.
 */
export declare const testing: Readonly<{
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
    event(type: EventType | Lowercase<EventType>, object: ObjectLike, { oldObject, origin }?: {
        oldObject?: ObjectLike;
        origin?: Origin;
    }): Event;
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
    init<T extends object>(definition: T, config?: string | object | Config): {
        plugin: T & Record<string, any>;
        interest: Interest;
    };
    HostObject: typeof HostObject;
    MemoryCache: typeof MemoryCache;
    RecordingHttp: typeof RecordingHttp;
}>;
export {};
