import { Cache } from "./cache.js";
import { Config } from "./config.js";
import { Event } from "./event.js";
import { Http } from "./http.js";
import { Interest } from "./interest.js";
import { Relationship } from "./relationship.js";
import { ObjectView } from "./view.js";
import type { WitGvk } from "./host.js";
import type { InterestInit, Origin } from "./interest.js";
import type { ObjectSource } from "./view.js";
export type InitResult = Interest | InterestInit | undefined | void;
export type FilterDefinition = {
    init?(config: Config): InitResult;
    decide(event: Event): boolean;
};
export type NotifierDefinition = {
    init?(config: Config): InitResult;
    deliver(event: Event, http: Http): void;
};
export type AnalyzerDefinition = {
    init?(config: Config): InitResult;
    analyze(object: ObjectView, cache: Cache): Iterable<Relationship>;
};
export type WitEvent = {
    eventType: "added" | "modified" | "deleted";
    origin: Origin;
};
export type WitInterest = {
    kinds: Array<{
        group: string | undefined;
        version: string | undefined;
        kind: string | undefined;
    }>;
    eventTypes: string[];
};
export type WitInitResult = WitInterest | {
    tag: "err";
    val: string;
};
export type WitDeliveryResult = {
    tag: "ok";
} | {
    tag: "err";
    val: {
        tag: "retry" | "give-up";
        val: string;
    };
};
export type WitRelationship = {
    relation: string;
    direction: "outgoing" | "incoming";
    target: {
        gvk: WitGvk;
        namespace: string;
        name: string;
    };
    attributes: Array<[string, string]>;
};
export type FilterExport = {
    init(config: string): WitInitResult;
    decide(event: WitEvent, object: ObjectSource, oldObject?: ObjectSource): boolean;
};
export type NotifierExport = {
    init(config: string): WitInitResult;
    deliver(event: WitEvent, object: ObjectSource, oldObject?: ObjectSource): WitDeliveryResult;
};
export type AnalyzerExport = {
    init(config: string): WitInitResult;
    analyze(object: ObjectSource): WitRelationship[];
};
/**
 * Makes a plugin instance from its definition: a fresh object inheriting the
 * definition's methods, so `init` keeps its state on `this`. Returns the
 * instance and its Interest; throws what `init` or the configuration throw.
 *
 * @param {object} definition
 * @param {string | object | Config} config
 * @returns {{ plugin: any, interest: Interest }}
 */
export declare function instantiate(definition: object, config: string | object | Config): {
    plugin: any;
    interest: Interest;
};
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
export declare function exportFilter<T extends FilterDefinition>(definition: T & ThisType<T & Record<string, any>>): FilterExport;
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
export declare function exportNotifier<T extends NotifierDefinition>(definition: T & ThisType<T & Record<string, any>>): NotifierExport;
/**
 * The `analyzer` export of the analyzer-plugin world, from a definition
 * with `init(config)` and `analyze(object, cache)` returning Relationships.
 *
 * @template {AnalyzerDefinition} T
 * @param {T & ThisType<T & Record<string, any>>} definition
 * @returns {AnalyzerExport}
 */
export declare function exportAnalyzer<T extends AnalyzerDefinition>(definition: T & ThisType<T & Record<string, any>>): AnalyzerExport;
