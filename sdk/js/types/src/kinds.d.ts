import type { WitGvk } from "./host.js";
export type GvkLike = Gvk | {
    group?: string;
    version?: string;
    kind?: string;
};
/** @import { WitGvk } from "./host.js" */
/**
 * A Gvk, or anything with its parts; a part left out is empty.
 *
 * @typedef {Gvk | { group?: string, version?: string, kind?: string }} GvkLike
 */
/** A Kubernetes group/version/kind; `group` is empty for the core group. */
export declare class Gvk {
    group: string;
    version: string;
    kind: string;
    /**
     * @param {string} [group]
     * @param {string} [version]
     * @param {string} [kind]
     */
    constructor(group?: string, version?: string, kind?: string);
    /**
     * Splits an object's `apiVersion` (`apps/v1`, or `v1` for the core group) and pairs it with `kind`.
     *
     * @param {string} apiVersion
     * @param {string} kind
     * @returns {Gvk}
     */
    static fromApiVersion(apiVersion: string, kind: string): Gvk;
    /**
     * A Gvk from another, or from any `{group, version, kind}`.
     *
     * @param {GvkLike} value
     * @returns {Gvk}
     */
    static from(value: GvkLike): Gvk;
    /** `group/version`, or just `version` for the core group. */
    get apiVersion(): string;
    /**
     * @param {GvkLike} other
     * @returns {boolean}
     */
    equals(other: GvkLike): boolean;
    /** As Kubernetes writes it in messages: `apps/v1, Kind=Deployment`. */
    toString(): string;
}
/** A set of kinds: each part left undefined matches anything. */
export declare class KindPattern {
    group: string | undefined;
    version: string | undefined;
    kind: string | undefined;
    /** @param {{ group?: string, version?: string, kind?: string }} [parts] */
    constructor({ group, version, kind }?: {
        group?: string;
        version?: string;
        kind?: string;
    });
    static any(): KindPattern;
    /**
     * A kind in any group and version: `KindPattern.kind("Pod")`.
     *
     * @param {string} kind
     */
    static kind(kind: string): KindPattern;
    /**
     * A kind in one group, any version; `""` is the core group.
     *
     * @param {string} group
     * @param {string} kind
     */
    static groupKind(group: string, kind: string): KindPattern;
    /**
     * Exactly one group/version/kind.
     *
     * @param {string} group
     * @param {string} version
     * @param {string} kind
     */
    static gvk(group: string, version: string, kind: string): KindPattern;
    /**
     * Every kind of one API group.
     *
     * @param {string} group
     */
    static group(group: string): KindPattern;
    /**
     * A pattern from a kind name (`"Pod"`), a pattern, or `{group?, version?, kind?}`.
     *
     * @param {string | KindPattern | { group?: string, version?: string, kind?: string }} value
     * @returns {KindPattern}
     */
    static from(value: string | KindPattern | {
        group?: string;
        version?: string;
        kind?: string;
    }): KindPattern;
    /**
     * @param {GvkLike} gvk
     * @returns {boolean}
     */
    matches(gvk: GvkLike): boolean;
}
/**
 * A Gvk as WIT's `gvk` record, for the host's imports and the adapters' answers.
 *
 * @param {GvkLike} gvk
 * @returns {WitGvk}
 */
export declare function witGvk(gvk: GvkLike): WitGvk;
