import { FieldPath } from "./paths.js";
import { LabelSelector } from "./selector.js";
export type Required = {
    required: true;
};
export type Optional<T> = {
    required?: false;
    default?: T;
};
export type Options<T, Extra = {}> = (Required | Optional<T>) & Extra;
export type Result<T, O> = O extends Required ? T : O extends {
    default: T;
} ? T : T | undefined;
export type Bounds = {
    minimum?: number;
    maximum?: number;
};
export type OneOf = {
    oneOf?: readonly string[];
};
export type Convert = (value: any, key: string, index?: number) => any;
/** A configuration error: its message names the key and is shown to the operator. */
export declare class ConfigError extends Error {
    /** @param {string} message */
    constructor(message: string);
}
/**
 * A plugin's configuration (the manifest's `config`), read key by key with
 * errors that name the key:
 *
 *     const min = config.int("minRestarts", { default: 1, minimum: 0 });
 *     const url = config.string("url", { required: true });
 *
 * Each getter takes `required` (absent is an error) or `default` (the value
 * when absent or null). Once `init` returns, keys no getter asked for are
 * rejected ("unknown config key `x`; accepted: a, b"); reading the whole
 * `value` turns that check off.
 */
export declare class Config {
    #private;
    /** @param {object} [value] */
    constructor(value?: object);
    /**
     * Parses the configuration text GRW passes to `init`; empty text is `{}`.
     *
     * @param {string | object | Config} text
     * @returns {Config}
     */
    static parse(text: string | object | Config): Config;
    /**
     * The whole configuration; reading it turns the unknown-key check off.
     *
     * @returns {Record<string, unknown>}
     */
    get value(): Record<string, unknown>;
    /** The keys asked for so far, in order. */
    get accepted(): string[];
    /**
     * Whether `key` is set (to anything but null).
     *
     * @param {string} key
     * @returns {boolean}
     */
    has(key: string): boolean;
    /**
     * A string; `oneOf` limits it to some values.
     *
     * @template {Options<string, OneOf>} [O={}]
     * @param {string} key
     * @param {O} [options]
     * @returns {Result<string, O>}
     */
    string<O extends Options<string, OneOf> = {}>(key: string, options?: O): Result<string, O>;
    /**
     * A list of strings.
     *
     * @template {Options<string[], OneOf>} [O={}]
     * @param {string} key
     * @param {O} [options]
     * @returns {Result<string[], O>}
     */
    strings<O extends Options<string[], OneOf> = {}>(key: string, options?: O): Result<string[], O>;
    /**
     * An integer, within `minimum` and `maximum` if given.
     *
     * @template {Options<number, Bounds>} [O={}]
     * @param {string} key
     * @param {O} [options]
     * @returns {Result<number, O>}
     */
    int<O extends Options<number, Bounds> = {}>(key: string, options?: O): Result<number, O>;
    /**
     * A number, within `minimum` and `maximum` if given.
     *
     * @template {Options<number, Bounds>} [O={}]
     * @param {string} key
     * @param {O} [options]
     * @returns {Result<number, O>}
     */
    number<O extends Options<number, Bounds> = {}>(key: string, options?: O): Result<number, O>;
    /**
     * `true` or `false`.
     *
     * @template {Options<boolean>} [O={}]
     * @param {string} key
     * @param {O} [options]
     * @returns {Result<boolean, O>}
     */
    bool<O extends Options<boolean> = {}>(key: string, options?: O): Result<boolean, O>;
    /**
     * A field path (FieldPath), dotted or a JSON pointer.
     *
     * @template {Options<FieldPath>} [O={}]
     * @param {string} key
     * @param {O} [options]
     * @returns {Result<FieldPath, O>}
     */
    fieldPath<O extends Options<FieldPath> = {}>(key: string, options?: O): Result<FieldPath, O>;
    /**
     * A list of field paths.
     *
     * @template {Options<FieldPath[]>} [O={}]
     * @param {string} key
     * @param {O} [options]
     * @returns {Result<FieldPath[], O>}
     */
    fieldPaths<O extends Options<FieldPath[]> = {}>(key: string, options?: O): Result<FieldPath[], O>;
    /**
     * A label selector (LabelSelector).
     *
     * @template {Options<LabelSelector>} [O={}]
     * @param {string} key
     * @param {O} [options]
     * @returns {Result<LabelSelector, O>}
     */
    selector<O extends Options<LabelSelector> = {}>(key: string, options?: O): Result<LabelSelector, O>;
    /**
     * A JSON object, as it is.
     *
     * @template {Options<Record<string, unknown>>} [O={}]
     * @param {string} key
     * @param {O} [options]
     * @returns {Result<Record<string, unknown>, O>}
     */
    object<O extends Options<Record<string, unknown>> = {}>(key: string, options?: O): Result<Record<string, unknown>, O>;
    /**
     * Any JSON value, as it is.
     *
     * @template {Options<unknown>} [O={}]
     * @param {string} key
     * @param {O} [options]
     * @returns {unknown}
     */
    any<O extends Options<unknown> = {}>(key: string, options?: O): unknown;
    /** Rejects keys no getter asked for (export adapters call this after `init`). */
    finish(): void;
}
