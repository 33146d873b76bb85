// One condition of a label selector on one label: how it matches a label
// value, and how it is written back.

import { compareCodePoints, describe } from "./values.js";

/** @typedef {"equals" | "notEquals" | "in" | "notIn" | "exists" | "doesNotExist" | "greaterThan" | "lessThan"} Operator */

/** The range of Rust's `i64`, which GRW's selector crate reads `>` and `<` bounds into. */
export const I64_MIN = -(2n ** 63n);
export const I64_MAX = 2n ** 63n - 1n;

/**
 * A base-10 64-bit integer as Rust's `i64` parse reads it (sign allowed), or undefined.
 *
 * @param {string} text
 * @returns {bigint | undefined}
 */
export function parseI64(text) {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value < I64_MIN || value > I64_MAX ? undefined : value;
}

/** @type {readonly unknown[]} */
const OPERATORS = ["equals", "notEquals", "in", "notIn", "exists", "doesNotExist", "greaterThan", "lessThan"];

/**
 * One condition on one label: `{key, operator}` plus `value` (a string for
 * `equals`/`notEquals`, a BigInt for `greaterThan`/`lessThan`) or `values`
 * (sorted, for `in`/`notIn`).
 */
export class Requirement {
  /**
   * @param {string} key
   * @param {Operator} operator
   * @param {string | string[] | bigint | number} [valueOrValues] a string for
   *   `equals`/`notEquals`, values for `in`/`notIn`, an integer for
   *   `greaterThan`/`lessThan`.
   */
  constructor(key, operator, valueOrValues) {
    if (!OPERATORS.includes(operator)) throw new TypeError(`unknown operator ${describe(operator)}`);
    /** @readonly */
    this.key = key;
    /** @readonly */
    this.operator = operator;
    if (operator === "in" || operator === "notIn") {
      /**
       * `in`/`notIn`: sorted, without duplicates.
       *
       * @readonly
       * @type {string[] | undefined}
       */
      this.values = [...new Set(/** @type {string[]} */ (valueOrValues))].sort(compareCodePoints);
    } else if (operator === "greaterThan" || operator === "lessThan") {
      /**
       * `equals`/`notEquals`: a string; `greaterThan`/`lessThan`: a bigint.
       *
       * @readonly
       * @type {string | bigint | undefined}
       */
      this.value = BigInt(/** @type {bigint | number | string} */ (valueOrValues));
    } else if (operator === "equals" || operator === "notEquals") {
      this.value = /** @type {string} */ (valueOrValues);
    }
  }

  /**
   * Whether the requirement holds for a label value (`undefined`: the label is absent).
   *
   * @param {string | undefined | null} value
   * @returns {boolean}
   */
  matches(value) {
    const present = value !== undefined && value !== null;
    switch (this.operator) {
      case "equals":
        return present && value === this.value;
      case "notEquals":
        return !present || value !== this.value;
      case "in":
        return present && /** @type {string[]} */ (this.values).includes(value);
      case "notIn":
        return !present || !/** @type {string[]} */ (this.values).includes(value);
      case "exists":
        return present;
      case "doesNotExist":
        return !present;
      default: {
        const number = present ? parseI64(value) : undefined;
        if (number === undefined) return false;
        return this.operator === "greaterThan" ? number > /** @type {bigint} */ (this.value) : number < /** @type {bigint} */ (this.value);
      }
    }
  }

  toString() {
    switch (this.operator) {
      case "equals":
        return `${this.key}=${this.value}`;
      case "notEquals":
        return `${this.key}!=${this.value}`;
      case "in":
        return `${this.key} in (${/** @type {string[]} */ (this.values).join(",")})`;
      case "notIn":
        return `${this.key} notin (${/** @type {string[]} */ (this.values).join(",")})`;
      case "exists":
        return this.key;
      case "doesNotExist":
        return `!${this.key}`;
      case "greaterThan":
        return `${this.key}>${this.value}`;
      default:
        return `${this.key}<${this.value}`;
    }
  }
}
