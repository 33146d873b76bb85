/**
 * The message of anything thrown. Errors from the host's imports come from
 * the bindings' realm, where `instanceof Error` does not hold, so this
 * looks for a message instead.
 *
 * @param {any} error
 * @returns {string}
 */
export declare function messageOf(error: any): string;
/**
 * Compares strings by code point, as Rust orders them (UTF-16 code unit order differs past U+FFFF).
 *
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
export declare function compareCodePoints(a: string, b: string): number;
/**
 * The length of `text` in characters (code points), as Rust counts them.
 *
 * @param {string} text
 */
export declare function charCount(text: string): number;
/**
 * @param {object} object
 * @param {PropertyKey} key
 */
export declare function hasOwn(object: object, key: PropertyKey): boolean;
/**
 * Whether `value` is a JSON object: not null, not an array.
 *
 * @param {unknown} value
 * @returns {value is Record<string, any>}
 */
export declare function isPlainObject(value: unknown): value is Record<string, any>;
/**
 * JSON text of a value for messages, cut to a readable length.
 *
 * @param {unknown} value
 * @returns {string}
 */
export declare function describe(value: unknown): string;
