import { LabelSelector } from "./selector.js";
import { ObjectView } from "./view.js";
import type { GvkLike } from "./kinds.js";
/**
 * Read-only lookups into GRW's caches; answers are ObjectViews. GRW records
 * each lookup an analyzer makes and analyzes again when a change would
 * answer it differently. In tests, use `testing.MemoryCache`.
 */
export declare class Cache {
    /**
     * One object (`namespace` empty for cluster-scoped ones), or undefined.
     *
     * @param {GvkLike} _gvk
     * @param {string} _namespace
     * @param {string} _name
     * @returns {ObjectView | undefined}
     */
    get(_gvk: GvkLike, _namespace: string, _name: string): ObjectView | undefined;
    /**
     * Objects of a kind, in one namespace (`""`: all) matching a label selector (`""`: all); throws on a bad selector.
     *
     * @param {GvkLike} _gvk
     * @param {string} [_namespace]
     * @param {string | LabelSelector} [_selector]
     * @returns {ObjectView[]}
     */
    list(_gvk: GvkLike, _namespace?: string, _selector?: string | LabelSelector): ObjectView[];
    /**
     * Objects of a kind with an owner reference to `ownerUid`.
     *
     * @param {GvkLike} _gvk
     * @param {string} _ownerUid
     * @returns {ObjectView[]}
     */
    ownedBy(_gvk: GvkLike, _ownerUid: string): ObjectView[];
}
/** The Cache `analyze` receives inside a component: the host's `cache` interface. */
export declare class HostCache extends Cache {
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
