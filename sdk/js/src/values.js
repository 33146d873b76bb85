// Small helpers on strings and JSON values that every other module uses:
// messages that quote a value, strings ordered as Rust orders them, and the
// checks that tell a JSON object from other values.

/**
 * The message of anything thrown. Errors from the host's imports come from
 * the bindings' realm, where `instanceof Error` does not hold, so this
 * looks for a message instead.
 *
 * @param {any} error
 * @returns {string}
 */
export function messageOf(error) {
  if (typeof error === "string") return error;
  if (typeof error?.message === "string") return error.message;
  return String(error);
}

/**
 * Compares strings by code point, as Rust orders them (UTF-16 code unit order differs past U+FFFF).
 *
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
export function compareCodePoints(a, b) {
  const left = a[Symbol.iterator]();
  const right = b[Symbol.iterator]();
  for (;;) {
    const x = left.next();
    const y = right.next();
    if (x.done || y.done) return x.done === y.done ? 0 : x.done ? -1 : 1;
    const d = /** @type {number} */ (x.value.codePointAt(0)) - /** @type {number} */ (y.value.codePointAt(0));
    if (d !== 0) return d;
  }
}

/**
 * The length of `text` in characters (code points), as Rust counts them.
 *
 * @param {string} text
 */
export function charCount(text) {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/**
 * @param {object} object
 * @param {PropertyKey} key
 */
export function hasOwn(object, key) {
  return Object.prototype.hasOwnProperty.call(object, key);
}

/**
 * Whether `value` is a JSON object: not null, not an array.
 *
 * @param {unknown} value
 * @returns {value is Record<string, any>}
 */
export function isPlainObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * JSON text of a value for messages, cut to a readable length.
 *
 * @param {unknown} value
 * @returns {string}
 */
export function describe(value) {
  let text;
  try {
    text = value === undefined ? "nothing" : JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return charCount(text) > 80 ? `${[...text].slice(0, 79).join("")}…` : text;
}
