// A plugin's configuration, read key by key with the Rust SDK's messages;
// after `init`, keys nobody asked for are rejected.

import { FieldPath } from "./paths.js";
import { LabelSelector } from "./selector.js";
import { describe, hasOwn, isPlainObject, messageOf } from "./values.js";

/** @typedef {{ required: true }} Required The key must be given. */
/**
 * The key may be left out (or null); then the getter returns `default`.
 *
 * @template T
 * @typedef {{ required?: false, default?: T }} Optional
 */
/**
 * @template T
 * @template [Extra={}]
 * @typedef {(Required | Optional<T>) & Extra} Options
 */
/**
 * What a getter returns: `T` when the key is required or has a default, else `T | undefined`.
 *
 * @template T, O
 * @typedef {O extends Required ? T : O extends { default: T } ? T : T | undefined} Result
 */
/** @typedef {{ minimum?: number, maximum?: number }} Bounds */
/** @typedef {{ oneOf?: readonly string[] }} OneOf */
/** @typedef {(value: any, key: string, index?: number) => any} Convert */

/**
 * @param {string} key
 * @param {number} [index]
 */
function keyName(key, index) {
  return index === undefined ? key : `${key}[${index}]`;
}

/** A configuration error: its message names the key and is shown to the operator. */
export class ConfigError extends Error {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "ConfigError";
  }
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
export class Config {
  /** @type {Record<string, any>} */
  #value;
  /** @type {string[]} */
  #accepted = [];
  #checkUnknown = true;

  /** @param {object} [value] */
  constructor(value = {}) {
    if (!isPlainObject(value)) throw new ConfigError(`config is not valid: expected a JSON object, got ${describe(value)}`);
    this.#value = value;
  }

  /**
   * Parses the configuration text GRW passes to `init`; empty text is `{}`.
   *
   * @param {string | object | Config} text
   * @returns {Config}
   */
  static parse(text) {
    if (text instanceof Config) return text;
    if (typeof text !== "string") return new Config(text);
    if (text.trim() === "") return new Config({});
    let value;
    try {
      value = JSON.parse(text);
    } catch (e) {
      throw new ConfigError(`config is not valid JSON: ${e.message}`);
    }
    return new Config(value);
  }

  /**
   * The whole configuration; reading it turns the unknown-key check off.
   *
   * @returns {Record<string, unknown>}
   */
  get value() {
    this.#checkUnknown = false;
    return this.#value;
  }

  /** The keys asked for so far, in order. */
  get accepted() {
    return [...this.#accepted];
  }

  /**
   * Whether `key` is set (to anything but null).
   *
   * @param {string} key
   * @returns {boolean}
   */
  has(key) {
    return hasOwn(this.#value, key) && this.#value[key] !== null;
  }

  /**
   * @param {string} key
   * @param {{ required?: boolean, default?: unknown }} options
   * @param {Convert} convert
   * @returns {any}
   */
  #read(key, options, convert) {
    if (!this.#accepted.includes(key)) this.#accepted.push(key);
    if (!this.has(key)) {
      if (options.required) throw new ConfigError(`config is not valid: missing field \`${key}\``);
      return options.default;
    }
    return convert(this.#value[key], key);
  }

  /**
   * @param {string} key
   * @param {number | undefined} index
   * @param {string} message
   */
  #fail(key, index, message) {
    return new ConfigError(`config key \`${keyName(key, index)}\`: ${message}`);
  }

  /**
   * @param {unknown} value
   * @param {(value: any) => boolean} check
   * @param {string} what
   * @param {string} key
   * @param {number} [index]
   * @returns {any} `value`
   */
  #expect(value, check, what, key, index) {
    if (!check(value)) throw this.#fail(key, index, `expected ${what}, got ${describe(value)}`);
    return value;
  }

  /**
   * @param {unknown} value
   * @param {string} key
   * @param {Convert} item
   * @returns {any[]}
   */
  #list(value, key, item) {
    this.#expect(value, Array.isArray, "a list", key);
    return /** @type {unknown[]} */ (value).map((element, index) => item(element, key, index));
  }

  /**
   * @param {number} value
   * @param {string} key
   * @param {Bounds} options
   */
  #bounded(value, key, options) {
    if (options.minimum !== undefined && value < options.minimum) throw this.#fail(key, undefined, `must be at least ${options.minimum}`);
    if (options.maximum !== undefined && value > options.maximum) throw this.#fail(key, undefined, `must be at most ${options.maximum}`);
    return value;
  }

  /**
   * @param {OneOf} options
   * @returns {Convert}
   */
  #stringItem(options) {
    return (value, key, index) => {
      this.#expect(value, (v) => typeof v === "string", "a string", key, index);
      if (options.oneOf && !options.oneOf.includes(value)) {
        throw this.#fail(key, index, `expected one of ${options.oneOf.map((v) => `\`${v}\``).join(", ")}, got ${describe(value)}`);
      }
      return value;
    };
  }

  /**
   * @param {(text: string) => unknown} parse
   * @returns {Convert}
   */
  #parsed(parse) {
    return (value, key, index) => {
      this.#expect(value, (v) => typeof v === "string", "a string", key, index);
      try {
        return parse(value);
      } catch (e) {
        throw this.#fail(key, index, messageOf(e));
      }
    };
  }

  /**
   * A string; `oneOf` limits it to some values.
   *
   * @template {Options<string, OneOf>} [O={}]
   * @param {string} key
   * @param {O} [options]
   * @returns {Result<string, O>}
   */
  string(key, options = /** @type {O} */ ({})) {
    return this.#read(key, options, this.#stringItem(options));
  }

  /**
   * A list of strings.
   *
   * @template {Options<string[], OneOf>} [O={}]
   * @param {string} key
   * @param {O} [options]
   * @returns {Result<string[], O>}
   */
  strings(key, options = /** @type {O} */ ({})) {
    return this.#read(key, options, (value) => this.#list(value, key, this.#stringItem(options)));
  }

  /**
   * An integer, within `minimum` and `maximum` if given.
   *
   * @template {Options<number, Bounds>} [O={}]
   * @param {string} key
   * @param {O} [options]
   * @returns {Result<number, O>}
   */
  int(key, options = /** @type {O} */ ({})) {
    return this.#read(key, options, (value) =>
      this.#bounded(this.#expect(value, Number.isSafeInteger, "an integer", key), key, options),
    );
  }

  /**
   * A number, within `minimum` and `maximum` if given.
   *
   * @template {Options<number, Bounds>} [O={}]
   * @param {string} key
   * @param {O} [options]
   * @returns {Result<number, O>}
   */
  number(key, options = /** @type {O} */ ({})) {
    return this.#read(key, options, (value) =>
      this.#bounded(this.#expect(value, (v) => typeof v === "number", "a number", key), key, options),
    );
  }

  /**
   * `true` or `false`.
   *
   * @template {Options<boolean>} [O={}]
   * @param {string} key
   * @param {O} [options]
   * @returns {Result<boolean, O>}
   */
  bool(key, options = /** @type {O} */ ({})) {
    return this.#read(key, options, (value) => this.#expect(value, (v) => typeof v === "boolean", "`true` or `false`", key));
  }

  /**
   * A field path (FieldPath), dotted or a JSON pointer.
   *
   * @template {Options<FieldPath>} [O={}]
   * @param {string} key
   * @param {O} [options]
   * @returns {Result<FieldPath, O>}
   */
  fieldPath(key, options = /** @type {O} */ ({})) {
    return this.#read(key, options, this.#parsed(FieldPath.parse));
  }

  /**
   * A list of field paths.
   *
   * @template {Options<FieldPath[]>} [O={}]
   * @param {string} key
   * @param {O} [options]
   * @returns {Result<FieldPath[], O>}
   */
  fieldPaths(key, options = /** @type {O} */ ({})) {
    return this.#read(key, options, (value) => this.#list(value, key, this.#parsed(FieldPath.parse)));
  }

  /**
   * A label selector (LabelSelector).
   *
   * @template {Options<LabelSelector>} [O={}]
   * @param {string} key
   * @param {O} [options]
   * @returns {Result<LabelSelector, O>}
   */
  selector(key, options = /** @type {O} */ ({})) {
    return this.#read(key, options, this.#parsed(LabelSelector.parse));
  }

  /**
   * A JSON object, as it is.
   *
   * @template {Options<Record<string, unknown>>} [O={}]
   * @param {string} key
   * @param {O} [options]
   * @returns {Result<Record<string, unknown>, O>}
   */
  object(key, options = /** @type {O} */ ({})) {
    return this.#read(key, options, (value) => this.#expect(value, isPlainObject, "an object", key));
  }

  /**
   * Any JSON value, as it is.
   *
   * @template {Options<unknown>} [O={}]
   * @param {string} key
   * @param {O} [options]
   * @returns {unknown}
   */
  any(key, options = /** @type {O} */ ({})) {
    return this.#read(key, options, (value) => value);
  }

  /** Rejects keys no getter asked for (export adapters call this after `init`). */
  finish() {
    if (!this.#checkUnknown) return;
    const unknown = Object.keys(this.#value).filter((key) => !this.#accepted.includes(key));
    if (unknown.length === 0) return;
    const named = unknown.map((key) => `\`${key}\``).join(", ");
    const accepted = this.#accepted.length === 0 ? "none, this plugin takes no configuration" : this.#accepted.join(", ");
    throw new ConfigError(`unknown config ${unknown.length === 1 ? "key" : "keys"} ${named}; accepted: ${accepted}`);
  }
}
