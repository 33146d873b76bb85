import { Gvk } from "./kinds.js";
import type { GvkLike } from "./kinds.js";
import type { PathLike } from "./paths.js";
export type ObjectSource = {
    json(): string;
    get(path: readonly string[]): string | undefined;
    labels?(): Array<[string, string]>;
    annotations?(): Array<[string, string]>;
    label?(key: string): string | undefined;
    annotation?(key: string): string | undefined;
    gvk?(): {
        group: string;
        version: string;
        kind: string;
    };
    namespace?(): string;
    name?(): string;
    uid?(): string;
    resourceVersion?(): string;
};
export type ObjectLike = ObjectView | ObjectSource | object;
/**
 * @param {ReadonlyArray<readonly [string, string]>} pairs
 * @param {string} key
 * @returns {string | undefined}
 */
export declare function lookup(pairs: ReadonlyArray<readonly [string, string]>, key: string): string | undefined;
/**
 * Answers for a plain JS value (or JSON text) the way GRW answers for the
 * objects it holds; the source behind `ObjectView.of` and the test objects.
 *
 * @implements {ObjectSource}
 */
export declare class JsonSource implements ObjectSource {
    #private;
    /** @param {unknown} value */
    constructor(value: unknown);
    /** @returns {string} */
    json(): string;
    /**
     * @param {readonly string[]} path
     * @returns {string | undefined}
     */
    get(path: readonly string[]): string | undefined;
    /** @returns {Array<[string, string]>} */
    labels(): Array<[string, string]>;
    /** @returns {Array<[string, string]>} */
    annotations(): Array<[string, string]>;
}
/**
 * One object as a plugin sees it, read where it is (inside GRW: in the host)
 * only as far as the plugin asks; what was read is kept for later calls.
 *
 * The source is GRW's `object` resource inside a component, or anything
 * with the same methods: `json()`, `get(segments)`, `labels()`,
 * `annotations()` and optionally `label(key)`, `annotation(key)`, `gvk()`,
 * `namespace()`, `name()`, `uid()`, `resourceVersion()`.
 */
export declare class ObjectView {
    #private;
    /** @param {ObjectSource} source */
    constructor(source: ObjectSource);
    /**
     * A view of a plain JS value (or JSON text), already at hand.
     *
     * @param {unknown} value
     * @returns {ObjectView}
     */
    static of(value: unknown): ObjectView;
    /** The source: what the view reads through. */
    get source(): ObjectSource;
    /**
     * The object's group/version/kind.
     *
     * @returns {Gvk}
     */
    get gvk(): Gvk;
    get kind(): string;
    get apiVersion(): string;
    /** `metadata.namespace`; empty for cluster-scoped objects. */
    get namespace(): string;
    /** `metadata.name`. */
    get name(): string;
    /** `metadata.uid`. */
    get uid(): string;
    /** `metadata.resourceVersion`. */
    get resourceVersion(): string;
    get isClusterScoped(): boolean;
    /**
     * One label's value, or `undefined`. Asks for that label alone unless all were fetched.
     *
     * @param {string} key
     * @returns {string | undefined}
     */
    label(key: string): string | undefined;
    /** All labels, as a frozen `{key: value}` object. */
    get labels(): Readonly<Record<string, string>>;
    /**
     * One annotation's value (string annotations only), or `undefined`.
     *
     * @param {string} key
     * @returns {string | undefined}
     */
    annotation(key: string): string | undefined;
    /** The annotations whose values are strings, as a frozen `{key: value}` object. */
    get annotations(): Readonly<Record<string, string>>;
    /**
     * The value at `path` (`"status.phase"`, `"/metadata/labels/a~1b"`,
     * `["spec", "containers", "0", "image"]` or a FieldPath), or `undefined`.
     * Fetches just that value unless the whole object was fetched already.
     *
     * @param {PathLike} path
     * @returns {any}
     */
    field(path: PathLike): any;
    /**
     * The whole object as JSON text; fetched on first use.
     *
     * @returns {string}
     */
    get json(): string;
    /**
     * The whole object, fetched and parsed on first use; throws if it is not valid JSON.
     *
     * @returns {any}
     */
    get object(): any;
    /**
     * A reference to this object.
     *
     * @returns {ObjectRef}
     */
    toRef(): ObjectRef;
}
/**
 * A view of what an Event was given: a view, a source, or a plain value.
 *
 * @param {any} object
 * @returns {ObjectView}
 */
export declare function viewOf(object: any): ObjectView;
/** Names one object. */
export declare class ObjectRef {
    gvk: Gvk;
    namespace: string;
    name: string;
    /**
     * @param {GvkLike} gvk
     * @param {string} [namespace]
     * @param {string} [name]
     */
    constructor(gvk: GvkLike, namespace?: string, name?: string);
    /**
     * A reference to an ObjectView, or to a plain object with `apiVersion`, `kind` and a name (else undefined).
     *
     * @param {ObjectView | object} object
     * @returns {ObjectRef | undefined}
     */
    static of(object: ObjectView | object): ObjectRef | undefined;
}
