// Field paths: dotted or JSON pointers, parsed once into segments, and the
// lookup of a path's value inside a plain JSON value.

import { describe, hasOwn, isPlainObject } from "./values.js";

/**
 * A path: dotted (`spec.replicas`), a JSON pointer (`/a/b`), segments, or a FieldPath.
 *
 * @typedef {string | readonly string[] | FieldPath} PathLike
 */

/**
 * One JSON pointer token with `~1` and `~0` undone; `undefined` for a `~`
 * followed by anything else.
 *
 * @param {string} token
 * @returns {string | undefined}
 */
function unescapePointerToken(token) {
  let out = "";
  for (let i = 0; i < token.length; i++) {
    const c = token[i];
    if (c !== "~") {
      out += c;
    } else if (token[i + 1] === "0") {
      out += "~";
      i++;
    } else if (token[i + 1] === "1") {
      out += "/";
      i++;
    } else {
      return undefined;
    }
  }
  return out;
}

/**
 * The value at `segments` inside `value`: object keys, or decimal array indices.
 *
 * @param {unknown} value
 * @param {readonly string[]} segments
 * @returns {unknown}
 */
export function valueAt(value, segments) {
  let current = value;
  for (const segment of segments) {
    if (Array.isArray(current)) {
      if (!/^\+?[0-9]+$/.test(segment)) return undefined;
      current = current[Number(segment)];
    } else if (isPlainObject(current) && hasOwn(current, segment)) {
      current = current[segment];
    } else {
      return undefined;
    }
    if (current === undefined) return undefined;
  }
  return current;
}

/** Paths parsed from text, by text; at most PARSED_PATHS_KEPT of them. */
/** @type {Map<string, FieldPath>} */
const PARSED_PATHS = new Map();
const PARSED_PATHS_KEPT = 1024;

/**
 * A checked path to a field of an object, written dotted
 * (`spec.containers.0.image`; a number indexes an array) or as a JSON
 * pointer starting with `/` (`/metadata/labels/app.kubernetes.io~1name`).
 */
export class FieldPath {
  /**
   * A path from its text and its segments, taken as they are; `parse` and
   * `from` check them.
   *
   * @param {string} text
   * @param {Iterable<string>} segments
   */
  constructor(text, segments) {
    /** @readonly */
    this.text = text;
    /** @readonly */
    this.segments = Object.freeze([...segments]);
  }

  /**
   * Parses a dotted path or a JSON pointer; throws on a malformed one.
   *
   * @param {string} text
   * @returns {FieldPath}
   */
  static parse(text) {
    if (typeof text !== "string") throw new TypeError(`a field path is a string, not ${describe(text)}`);
    if (text === "") throw new Error("field path is empty");
    if (text.startsWith("/")) {
      const segments = text.slice(1).split("/").map(unescapePointerToken);
      if (segments.includes(undefined)) {
        throw new Error(`field path \`${text}\`: \`~\` must be followed by \`0\` or \`1\` in a JSON pointer`);
      }
      return new FieldPath(text, /** @type {string[]} */ (segments));
    }
    const segments = text.split(".");
    if (segments.includes("")) {
      throw new Error(`field path \`${text}\` has an empty segment; write \`a.b.c\`, or a JSON pointer like \`/a/b\``);
    }
    return new FieldPath(text, segments);
  }

  /**
   * A path from its text, from segments (`["status", "phase"]`, taken as
   * they are), or a path. Texts are parsed once and remembered: a plugin
   * names the same few paths on every event.
   *
   * @param {PathLike} path
   * @returns {FieldPath}
   */
  static from(path) {
    if (typeof path === "string") {
      let parsed = PARSED_PATHS.get(path);
      if (parsed === undefined) {
        parsed = FieldPath.parse(path);
        if (PARSED_PATHS.size < PARSED_PATHS_KEPT) PARSED_PATHS.set(path, parsed);
      }
      return parsed;
    }
    if (path instanceof FieldPath) return path;
    if (Array.isArray(path)) {
      const segments = path.map(String);
      return new FieldPath(segments.join("."), segments);
    }
    // Only an untyped caller gets here; parse says what is wrong.
    return FieldPath.parse(/** @type {any} */ (path));
  }

  /**
   * The value at this path inside `value`, or `undefined`.
   *
   * @param {unknown} value
   * @returns {unknown}
   */
  get(value) {
    return valueAt(value, this.segments);
  }

  /**
   * Whether `other` (a path or segments) lies under this path or is it.
   *
   * @param {FieldPath | readonly string[]} other
   * @returns {boolean}
   */
  covers(other) {
    const segments = other instanceof FieldPath ? other.segments : other;
    return this.segments.length <= segments.length && this.segments.every((s, i) => s === segments[i]);
  }

  toString() {
    return this.text;
  }

  toJSON() {
    return this.text;
  }
}
