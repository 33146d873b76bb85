import { Requirement } from "./requirement.js";
export type WordToken = {
    type: "word";
    text: string;
    at: number;
};
export type SymbolToken = {
    type: "end" | "=" | "==" | "!=" | "!" | "(" | ")" | "," | "<" | ">";
    at: number;
};
export type Token = WordToken | SymbolToken;
export type ValueText = {
    text: string;
    at: number;
};
/** A label selector that does not parse; `position` counts characters from 0. */
export declare class SelectorError extends Error {
    /** @readonly */
    input: string;
    /** @readonly */
    reason: string;
    /** @readonly */
    position: number;
    /**
     * @param {string} input
     * @param {string} reason
     * @param {number} position 0-based, in characters.
     */
    constructor(input: string, reason: string, position: number);
}
/** A recursive-descent parser over the tokens, one method per rule. */
export declare class SelectorParser {
    input: string;
    tokens: Token[];
    next: number;
    /** @param {string} input */
    constructor(input: string);
    peek(): Token;
    bump(): Token;
    /**
     * A SelectorError at UTF-16 offset `at`, its reason given the position in characters.
     *
     * @param {number} at
     * @param {(position: number) => string} reason
     */
    error(at: number, reason: (position: number) => string): SelectorError;
    /** @returns {Requirement[]} */
    selector(): Requirement[];
    /** @returns {Requirement} */
    requirement(): Requirement;
    /**
     * @param {string} key
     * @returns {Requirement}
     */
    operator(key: string): Requirement;
    /**
     * The value after `=`, `==`, `!=`, `>` or `<`; left out, it is the empty value.
     *
     * @param {Token} operator
     * @returns {ValueText}
     */
    exactValue(operator: Token): ValueText;
    /**
     * The values of `in (...)` or `notin (...)`.
     *
     * @param {string} operator
     * @returns {ValueText[]}
     */
    valueSet(operator: string): ValueText[];
    /**
     * @param {WordToken} token
     * @returns {string} the key
     */
    checkKey(token: WordToken): string;
    /**
     * @param {string} key
     * @param {ValueText} value
     */
    checkValue(key: string, value: ValueText): void;
    /**
     * @param {string} key
     * @param {Token} operator
     * @param {ValueText} value
     * @returns {bigint}
     */
    integer(key: string, operator: Token, value: ValueText): bigint;
    /**
     * @param {string} key
     * @param {Token} operator
     * @param {ValueText} value
     */
    checkBound(key: string, operator: Token, value: ValueText): void;
}
