// The grammar of label selectors as the API server parses them, with its
// key and value validation, ported from GRW's `selector` crate with the
// same messages, so that a selector a plugin accepts is one GRW accepts.

import { I64_MAX, I64_MIN, parseI64, Requirement } from "./requirement.js";
import { charCount } from "./values.js";

/** @typedef {{ type: "word", text: string, at: number }} WordToken */
/** @typedef {{ type: "end" | "=" | "==" | "!=" | "!" | "(" | ")" | "," | "<" | ">", at: number }} SymbolToken */
/** @typedef {WordToken | SymbolToken} Token */
/** @typedef {{ text: string, at: number }} ValueText A value as written, and where. */

const MAX_NAME_LEN = 63;
const MAX_PREFIX_LEN = 253;
const INTEGER_RULE = "for 'Gt', 'Lt' operators, the value must be an integer";

/** @param {string} c */
const isWhitespace = (c) => c === " " || c === "\t" || c === "\r" || c === "\n";
/** @param {string} c */
const isSpecial = (c) => "=!(),<>".includes(c);
/** @param {string} c */
const isAsciiAlnum = (c) => /^[A-Za-z0-9]$/.test(c);

/**
 * Splits a selector into `{type, text, at}` tokens (`at`: UTF-16 offset), as the API server's lexer does.
 *
 * @param {string} input
 * @returns {Token[]}
 */
function tokenize(input) {
  /** @type {Token[]} */
  const tokens = [];
  let pos = 0;
  for (;;) {
    while (pos < input.length && isWhitespace(input[pos])) pos++;
    const start = pos;
    const first = input[pos];
    if (first === undefined || first === "\0") {
      tokens.push({ type: "end", at: start });
      return tokens;
    }
    /** @type {Token} */
    let token;
    if (isSpecial(first)) {
      const pair = first + (input[pos + 1] ?? "");
      const symbol = pair === "==" || pair === "!=" ? pair : first;
      pos += symbol.length;
      token = { type: /** @type {SymbolToken["type"]} */ (symbol), at: start };
    } else {
      while (pos < input.length && input[pos] !== "\0" && !isWhitespace(input[pos]) && !isSpecial(input[pos])) pos++;
      token = { type: "word", text: input.slice(start, pos), at: start };
    }
    tokens.push(token);
    if (input[pos] === "\0") pos++;
  }
}

/** @param {Token} token */
function describeToken(token) {
  if (token.type === "end") return "the end of the selector";
  return `\`${token.type === "word" ? token.text : token.type}\``;
}

/**
 * `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, or empty.
 *
 * @param {string} text
 */
function isLabelName(text) {
  if (text === "") return true;
  return isAsciiAlnum(text[0]) && isAsciiAlnum(text[text.length - 1]) && /^[-A-Za-z0-9_.]*$/.test(text);
}

/** @param {string} text */
function isDnsSubdomain(text) {
  return text.split(".").every((part) => /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(part));
}

/**
 * What is wrong with a label key, or `undefined`.
 *
 * @param {string} key
 * @returns {string | undefined}
 */
function keyProblem(key) {
  let name = key;
  const slash = key.indexOf("/");
  if (slash >= 0) {
    const prefix = key.slice(0, slash);
    name = key.slice(slash + 1);
    if (name.includes("/")) return "a key may contain at most one `/`";
    if (prefix === "") return "the prefix before `/` is empty";
    if (charCount(prefix) > MAX_PREFIX_LEN) return `the prefix before \`/\` is longer than ${MAX_PREFIX_LEN} characters`;
    if (!isDnsSubdomain(prefix)) {
      return "the prefix before `/` must be a DNS subdomain: lowercase letters, digits, `-` and `.`, with each dot-separated part starting and ending with a letter or digit";
    }
  }
  if (name === "") return "the name is empty";
  if (charCount(name) > MAX_NAME_LEN) return `the name is longer than ${MAX_NAME_LEN} characters`;
  if (!isLabelName(name)) {
    return "the name must consist of letters, digits, `-`, `_` and `.`, and start and end with a letter or digit";
  }
  return undefined;
}

/**
 * What is wrong with a label value, or `undefined`.
 *
 * @param {string} key
 * @param {string} value
 * @returns {string | undefined}
 */
function valueProblem(key, value) {
  if (charCount(value) > MAX_NAME_LEN) return `value of \`${key}\` is longer than ${MAX_NAME_LEN} characters`;
  if (!isLabelName(value)) {
    return `value \`${value}\` of \`${key}\` is not a valid label value: it must consist of letters, digits, \`-\`, \`_\` and \`.\`, and start and end with a letter or digit`;
  }
  return undefined;
}

/** A label selector that does not parse; `position` counts characters from 0. */
export class SelectorError extends Error {
  /**
   * @param {string} input
   * @param {string} reason
   * @param {number} position 0-based, in characters.
   */
  constructor(input, reason, position) {
    super(`invalid label selector \`${input}\`: ${reason}`);
    this.name = "SelectorError";
    /** @readonly */
    this.input = input;
    /** @readonly */
    this.reason = reason;
    /** @readonly */
    this.position = position;
  }
}

/** A recursive-descent parser over the tokens, one method per rule. */
export class SelectorParser {
  /** @param {string} input */
  constructor(input) {
    this.input = input;
    this.tokens = tokenize(input);
    this.next = 0;
  }

  peek() {
    return this.tokens[this.next];
  }

  bump() {
    const token = this.tokens[this.next];
    if (this.next + 1 < this.tokens.length) this.next++;
    return token;
  }

  /**
   * A SelectorError at UTF-16 offset `at`, its reason given the position in characters.
   *
   * @param {number} at
   * @param {(position: number) => string} reason
   */
  error(at, reason) {
    const position = charCount(this.input.slice(0, at));
    return new SelectorError(this.input, reason(position), position);
  }

  /** @returns {Requirement[]} */
  selector() {
    const first = this.peek();
    if (first.type === "end") return [];
    if (first.type === ",") {
      throw this.error(first.at, (pos) => `empty requirement at position ${pos}: expected a label key before \`,\``);
    }
    if (first.type !== "word" && first.type !== "!") {
      throw this.error(first.at, (pos) => `expected a label key or \`!\` at position ${pos}, found ${describeToken(first)}`);
    }
    /** @type {Requirement[]} */
    const requirements = [];
    for (;;) {
      requirements.push(this.requirement());
      const token = this.bump();
      if (token.type === "end") return requirements;
      if (token.type === ",") {
        const after = this.peek();
        if (after.type === "word" || after.type === "!") continue;
        if (after.type === "end") {
          throw this.error(token.at, (pos) => `trailing \`,\` at position ${pos}: expected another requirement after it`);
        }
        if (after.type === ",") {
          throw this.error(after.at, (pos) => `empty requirement at position ${pos}: expected a label key before \`,\``);
        }
        throw this.error(after.at, (pos) => `expected a label key or \`!\` after \`,\` at position ${pos}, found ${describeToken(after)}`);
      }
      if (token.type === ")") {
        throw this.error(token.at, (pos) => `unmatched \`)\` at position ${pos}: there is no \`(\` to close`);
      }
      throw this.error(token.at, (pos) => `unexpected ${describeToken(token)} at position ${pos}: expected \`,\` or the end of the selector`);
    }
  }

  /** @returns {Requirement} */
  requirement() {
    const token = this.bump();
    if (token.type === "!") {
      const keyToken = this.bump();
      if (keyToken.type !== "word") {
        throw this.error(keyToken.at, (pos) => `expected a label key after \`!\` at position ${pos}, found ${describeToken(keyToken)}`);
      }
      const key = this.checkKey(keyToken);
      const after = this.peek();
      if (after.type === "," || after.type === "end") return new Requirement(key, "doesNotExist");
      throw this.error(
        after.at,
        (pos) => `\`!${key}\` only tests that the label is absent and takes no operator or value, but found ${describeToken(after)} at position ${pos}`,
      );
    }
    if (token.type === "word") return this.operator(this.checkKey(token));
    throw this.error(token.at, (pos) => `expected a label key at position ${pos}, found ${describeToken(token)}`);
  }

  /**
   * @param {string} key
   * @returns {Requirement}
   */
  operator(key) {
    const token = this.peek();
    switch (token.type) {
      case ",":
      case "end":
        return new Requirement(key, "exists");
      case "=":
      case "==":
      case "!=": {
        this.bump();
        const value = this.exactValue(token);
        this.checkValue(key, value);
        return new Requirement(key, token.type === "!=" ? "notEquals" : "equals", value.text);
      }
      case ">":
      case "<": {
        this.bump();
        const value = this.exactValue(token);
        const bound = this.integer(key, token, value);
        this.checkBound(key, token, value);
        return new Requirement(key, token.type === ">" ? "greaterThan" : "lessThan", bound);
      }
      case "word":
        if (token.text === "in" || token.text === "notin") {
          this.bump();
          const values = this.valueSet(token.text);
          for (const value of values) this.checkValue(key, value);
          return new Requirement(key, token.text === "in" ? "in" : "notIn", values.map((v) => v.text));
        }
        if (token.text === "gt" || token.text === "lt") {
          const symbol = token.text === "gt" ? ">" : "<";
          throw this.error(
            token.at,
            (pos) => `\`${token.text}\` at position ${pos} is not an operator: write \`${key}${symbol}N\` to compare \`${key}\` with the integer N`,
          );
        }
      // fall through
      default:
        throw this.error(
          token.at,
          (pos) =>
            `expected an operator after key \`${key}\` at position ${pos}, found ${describeToken(token)}: use \`=\`, \`==\`, \`!=\`, \`in\`, \`notin\`, \`>\`, \`<\`, or \`,\` to start the next requirement`,
        );
    }
  }

  /**
   * The value after `=`, `==`, `!=`, `>` or `<`; left out, it is the empty value.
   *
   * @param {Token} operator
   * @returns {ValueText}
   */
  exactValue(operator) {
    const token = this.peek();
    if (token.type === "," || token.type === "end") return { text: "", at: token.at };
    if (token.type === "word") {
      this.bump();
      return { text: token.text, at: token.at };
    }
    throw this.error(token.at, (pos) => `expected a value after ${describeToken(operator)} at position ${pos}, found ${describeToken(token)}`);
  }

  /**
   * The values of `in (...)` or `notin (...)`.
   *
   * @param {string} operator
   * @returns {ValueText[]}
   */
  valueSet(operator) {
    const open = this.bump();
    if (open.type !== "(") {
      throw this.error(open.at, (pos) => `expected \`(\` after \`${operator}\` at position ${pos}, found ${describeToken(open)}`);
    }
    const unclosed = () => this.error(open.at, (pos) => `missing \`)\` to close the \`(\` at position ${pos}`);
    /** @type {ValueText[]} */
    const values = [];
    for (;;) {
      const item = this.peek();
      if (item.type === "word") {
        this.bump();
        values.push({ text: item.text, at: item.at });
      } else if (item.type === "," || item.type === ")") {
        values.push({ text: "", at: item.at });
      } else if (item.type === "end") {
        throw unclosed();
      } else {
        throw this.error(item.at, (pos) => `expected a value, \`,\` or \`)\` at position ${pos}, found ${describeToken(item)}`);
      }
      const after = this.bump();
      if (after.type === ",") continue;
      if (after.type === ")") return values;
      if (after.type === "end") throw unclosed();
      throw this.error(after.at, (pos) => `expected \`,\` or \`)\` at position ${pos}, found ${describeToken(after)}`);
    }
  }

  /**
   * @param {WordToken} token
   * @returns {string} the key
   */
  checkKey(token) {
    const problem = keyProblem(token.text);
    if (problem === undefined) return token.text;
    throw this.error(token.at, (pos) => `key \`${token.text}\` is not a valid label key: ${problem} (at position ${pos})`);
  }

  /**
   * @param {string} key
   * @param {ValueText} value
   */
  checkValue(key, value) {
    const problem = valueProblem(key, value.text);
    if (problem !== undefined) throw this.error(value.at, (pos) => `${problem} (at position ${pos})`);
  }

  /**
   * @param {string} key
   * @param {Token} operator
   * @param {ValueText} value
   * @returns {bigint}
   */
  integer(key, operator, value) {
    const number = parseI64(value.text);
    if (number !== undefined) return number;
    const symbol = describeToken(operator);
    throw this.error(value.at, (pos) => {
      if (value.text === "") return `missing value after ${symbol} at position ${pos}: ${INTEGER_RULE}`;
      if (/^[+-]?[0-9]+$/.test(value.text)) {
        return `value \`${value.text}\` of \`${key}\` after ${symbol} (at position ${pos}) is out of range: ${INTEGER_RULE} from ${I64_MIN} to ${I64_MAX}`;
      }
      return `value \`${value.text}\` of \`${key}\` after ${symbol} (at position ${pos}) is not a number: ${INTEGER_RULE}`;
    });
  }

  /**
   * @param {string} key
   * @param {Token} operator
   * @param {ValueText} value
   */
  checkBound(key, operator, value) {
    const problem = valueProblem(key, value.text);
    if (problem === undefined) return;
    const hint = /^[+-]/.test(value.text) ? `, so the bound of ${describeToken(operator)} cannot have a sign` : "";
    throw this.error(value.at, (pos) => `${problem}${hint} (at position ${pos})`);
  }
}
