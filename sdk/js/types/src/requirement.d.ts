export type Operator = "equals" | "notEquals" | "in" | "notIn" | "exists" | "doesNotExist" | "greaterThan" | "lessThan";
/** @typedef {"equals" | "notEquals" | "in" | "notIn" | "exists" | "doesNotExist" | "greaterThan" | "lessThan"} Operator */
/** The range of Rust's `i64`, which GRW's selector crate reads `>` and `<` bounds into. */
export declare const I64_MIN: bigint;
export declare const I64_MAX: bigint;
/**
 * A base-10 64-bit integer as Rust's `i64` parse reads it (sign allowed), or undefined.
 *
 * @param {string} text
 * @returns {bigint | undefined}
 */
export declare function parseI64(text: string): bigint | undefined;
/**
 * One condition on one label: `{key, operator}` plus `value` (a string for
 * `equals`/`notEquals`, a BigInt for `greaterThan`/`lessThan`) or `values`
 * (sorted, for `in`/`notIn`).
 */
export declare class Requirement {
    /** @readonly */
    key: string;
    /** @readonly */
    operator: Operator;
    /**
     * `in`/`notIn`: sorted, without duplicates.
     *
     * @readonly
     * @type {string[] | undefined}
     */
    values: string[] | undefined;
    /**
     * `equals`/`notEquals`: a string; `greaterThan`/`lessThan`: a bigint.
     *
     * @readonly
     * @type {string | bigint | undefined}
     */
    value: string | bigint | undefined;
    /**
     * @param {string} key
     * @param {Operator} operator
     * @param {string | string[] | bigint | number} [valueOrValues] a string for
     *   `equals`/`notEquals`, values for `in`/`notIn`, an integer for
     *   `greaterThan`/`lessThan`.
     */
    constructor(key: string, operator: Operator, valueOrValues?: string | string[] | bigint | number);
    /**
     * Whether the requirement holds for a label value (`undefined`: the label is absent).
     *
     * @param {string | undefined | null} value
     * @returns {boolean}
     */
    matches(value: string | undefined | null): boolean;
    toString(): string;
}
