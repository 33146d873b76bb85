export type PathLike = string | readonly string[] | FieldPath;
/**
 * The value at `segments` inside `value`: object keys, or decimal array indices.
 *
 * @param {unknown} value
 * @param {readonly string[]} segments
 * @returns {unknown}
 */
export declare function valueAt(value: unknown, segments: readonly string[]): unknown;
/**
 * A checked path to a field of an object, written dotted
 * (`spec.containers.0.image`; a number indexes an array) or as a JSON
 * pointer starting with `/` (`/metadata/labels/app.kubernetes.io~1name`).
 */
export declare class FieldPath {
    /** @readonly */
    text: string;
    /** @readonly */
    segments: readonly string[];
    /**
     * A path from its text and its segments, taken as they are; `parse` and
     * `from` check them.
     *
     * @param {string} text
     * @param {Iterable<string>} segments
     */
    constructor(text: string, segments: Iterable<string>);
    /**
     * Parses a dotted path or a JSON pointer; throws on a malformed one.
     *
     * @param {string} text
     * @returns {FieldPath}
     */
    static parse(text: string): FieldPath;
    /**
     * A path from its text, from segments (`["status", "phase"]`, taken as
     * they are), or a path. Texts are parsed once and remembered: a plugin
     * names the same few paths on every event.
     *
     * @param {PathLike} path
     * @returns {FieldPath}
     */
    static from(path: PathLike): FieldPath;
    /**
     * The value at this path inside `value`, or `undefined`.
     *
     * @param {unknown} value
     * @returns {unknown}
     */
    get(value: unknown): unknown;
    /**
     * Whether `other` (a path or segments) lies under this path or is it.
     *
     * @param {FieldPath | readonly string[]} other
     * @returns {boolean}
     */
    covers(other: FieldPath | readonly string[]): boolean;
    toString(): string;
    toJSON(): string;
}
