// Write GRW plugins in JavaScript: filters, notifiers and analyzers that GRW
// runs as WebAssembly components (contract `grw:plugin@0.2.0`,
// `wit/plugin.wit`).
//
// A plugin is one ES module that exports the interface of its world, made
// from a plain object by an export adapter:
//
//     import { exportFilter, Interest } from "./grw-sdk.js";
//
//     export const podFilter = {
//       init(config) {
//         this.phase = config.string("phase", { default: "Failed" });
//         return new Interest({ kinds: ["Pod"] });
//       },
//       decide(event) {
//         return event.field("status.phase") === this.phase;
//       },
//     };
//
//     export const filter = exportFilter(podFilter);
//
// `sdk/js/build.mjs` turns it into a component. The module has no
// dependencies and imports nothing from the host: inside a component the
// build wires the host's interfaces in, and under node (`node --test`) the
// same code runs against the stand-ins in `testing`.

// ---------------------------------------------------------------------------
// The host

/** Where the build puts the host's imports (`log`, `send`, `cache`). */
const HOST = Symbol.for("grw-sdk.host");

function host() {
  return globalThis[HOST];
}

function hostPart(name) {
  const part = host()?.[name];
  if (part === undefined) {
    throw new Error(`the host's ${name} interface is not available here: it is imported only by the worlds that grant it`);
  }
  return part;
}

/**
 * The message of anything thrown. Errors from the host's imports come from
 * the bindings' realm, where `instanceof Error` does not hold, so this
 * looks for a message instead.
 */
function messageOf(error) {
  if (typeof error === "string") return error;
  if (typeof error?.message === "string") return error.message;
  return String(error);
}

/** Compares strings by code point, as Rust orders them (UTF-16 code unit order differs past U+FFFF). */
function compareCodePoints(a, b) {
  const left = a[Symbol.iterator]();
  const right = b[Symbol.iterator]();
  for (;;) {
    const x = left.next();
    const y = right.next();
    if (x.done || y.done) return x.done === y.done ? 0 : x.done ? -1 : 1;
    const d = x.value.codePointAt(0) - y.value.codePointAt(0);
    if (d !== 0) return d;
  }
}

function charCount(text) {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

function hasOwn(object, key) {
  return Object.prototype.hasOwnProperty.call(object, key);
}

function isPlainObject(value) {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** JSON text of a value for messages, cut to a readable length. */
function describe(value) {
  let text;
  try {
    text = value === undefined ? "nothing" : JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return charCount(text) > 80 ? `${[...text].slice(0, 79).join("")}…` : text;
}

// ---------------------------------------------------------------------------
// Log

const LEVELS = ["trace", "debug", "info", "warn", "error"];

function writeLog(level, message) {
  if (!LEVELS.includes(level)) {
    throw new TypeError(`unknown log level ${describe(level)}; use one of ${LEVELS.join(", ")}`);
  }
  const text = String(message);
  const hostLog = host()?.log;
  if (hostLog) {
    hostLog(level, text);
  } else {
    console.error(`[${level}] ${text}`);
  }
}

/**
 * Log lines, written into GRW's log under the plugin's name; natively they
 * go to stderr.
 */
export const log = /* @__PURE__ */ Object.freeze({
  log: writeLog,
  trace: (message) => writeLog("trace", message),
  debug: (message) => writeLog("debug", message),
  info: (message) => writeLog("info", message),
  warn: (message) => writeLog("warn", message),
  error: (message) => writeLog("error", message),
});

// ---------------------------------------------------------------------------
// Kinds, event types and interest

const EVENT_TYPES = ["ADDED", "MODIFIED", "DELETED"];
const ORIGINS = ["initial", "watch", "relist"];

function eventTypeOf(value) {
  if (value === "ADDED" || value === "MODIFIED" || value === "DELETED") return value;
  const type = typeof value === "string" ? value.toUpperCase() : value;
  if (!EVENT_TYPES.includes(type)) {
    throw new TypeError(`unknown event type ${describe(value)}; use one of ${EVENT_TYPES.join(", ")}`);
  }
  return type;
}

function originOf(value) {
  if (value === "watch" || value === "initial" || value === "relist") return value;
  const origin = typeof value === "string" ? value.toLowerCase() : value;
  if (!ORIGINS.includes(origin)) {
    throw new TypeError(`unknown origin ${describe(value)}; use one of ${ORIGINS.join(", ")}`);
  }
  return origin;
}

/** A Kubernetes group/version/kind; `group` is empty for the core group. */
export class Gvk {
  constructor(group = "", version = "", kind = "") {
    this.group = group;
    this.version = version;
    this.kind = kind;
  }

  /** Splits an object's `apiVersion` (`apps/v1`, or `v1` for the core group) and pairs it with `kind`. */
  static fromApiVersion(apiVersion, kind) {
    const slash = apiVersion.indexOf("/");
    return slash < 0
      ? new Gvk("", apiVersion, kind)
      : new Gvk(apiVersion.slice(0, slash), apiVersion.slice(slash + 1), kind);
  }

  /** A Gvk from another, or from any `{group, version, kind}`. */
  static from(value) {
    if (value instanceof Gvk) return value;
    if (!isPlainObject(value)) throw new TypeError(`expected {group, version, kind}, got ${describe(value)}`);
    return new Gvk(value.group ?? "", value.version ?? "", value.kind ?? "");
  }

  /** `group/version`, or just `version` for the core group. */
  get apiVersion() {
    return this.group === "" ? this.version : `${this.group}/${this.version}`;
  }

  equals(other) {
    return this.group === other.group && this.version === other.version && this.kind === other.kind;
  }

  /** As Kubernetes writes it in messages: `apps/v1, Kind=Deployment`. */
  toString() {
    return `${this.apiVersion}, Kind=${this.kind}`;
  }
}

/** A set of kinds: each part left undefined matches anything. */
export class KindPattern {
  constructor({ group, version, kind } = {}) {
    this.group = group;
    this.version = version;
    this.kind = kind;
  }

  static any() {
    return new KindPattern();
  }

  /** A kind in any group and version: `KindPattern.kind("Pod")`. */
  static kind(kind) {
    return new KindPattern({ kind });
  }

  /** A kind in one group, any version; `""` is the core group. */
  static groupKind(group, kind) {
    return new KindPattern({ group, kind });
  }

  /** Exactly one group/version/kind. */
  static gvk(group, version, kind) {
    return new KindPattern({ group, version, kind });
  }

  /** Every kind of one API group. */
  static group(group) {
    return new KindPattern({ group });
  }

  /** A pattern from a kind name (`"Pod"`), a pattern, or `{group?, version?, kind?}`. */
  static from(value) {
    if (value instanceof KindPattern) return value;
    if (typeof value === "string") return KindPattern.kind(value);
    if (!isPlainObject(value)) throw new TypeError(`expected a kind name or {group?, version?, kind?}, got ${describe(value)}`);
    return new KindPattern(value);
  }

  matches(gvk) {
    const part = (pattern, value) => pattern === undefined || pattern === value;
    return part(this.group, gvk.group) && part(this.version, gvk.version) && part(this.kind, gvk.kind);
  }
}

/**
 * What a plugin wants to see, returned from `init`: GRW never calls it for
 * other events. Empty lists mean everything.
 *
 *     new Interest({ kinds: ["Pod", KindPattern.gvk("apps", "v1", "Deployment")], eventTypes: ["MODIFIED"] })
 */
export class Interest {
  constructor({ kinds = [], eventTypes = [] } = {}) {
    this.kinds = kinds.map(KindPattern.from);
    this.eventTypes = [...new Set(eventTypes.map(eventTypeOf))];
  }

  /** Every event of every kind. */
  static all() {
    return new Interest();
  }

  /** An Interest from another, from `{kinds, eventTypes}`, or `undefined` (everything). */
  static from(value) {
    if (value === undefined || value === null) return Interest.all();
    if (value instanceof Interest) return value;
    if (!isPlainObject(value)) throw new TypeError(`init must return an Interest, {kinds, eventTypes} or nothing, not ${describe(value)}`);
    return new Interest(value);
  }

  /** Whether an event of this kind and type would be delivered. */
  matches(gvk, eventType) {
    return (
      (this.kinds.length === 0 || this.kinds.some((k) => k.matches(gvk))) &&
      (this.eventTypes.length === 0 || this.eventTypes.includes(eventTypeOf(eventType)))
    );
  }

  /** Whether `event` would be delivered; handy in tests. */
  matchesEvent(event) {
    return this.matches(event.gvk, event.type);
  }
}

// ---------------------------------------------------------------------------
// Field paths

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

/** The value at `segments` inside `value`: object keys, or decimal array indices. */
function valueAt(value, segments) {
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
const PARSED_PATHS = new Map();
const PARSED_PATHS_KEPT = 1024;

/**
 * A checked path to a field of an object, written dotted
 * (`spec.containers.0.image`; a number indexes an array) or as a JSON
 * pointer starting with `/` (`/metadata/labels/app.kubernetes.io~1name`).
 */
export class FieldPath {
  constructor(text, segments) {
    this.text = text;
    this.segments = Object.freeze([...segments]);
  }

  /** Parses a dotted path or a JSON pointer; throws on a malformed one. */
  static parse(text) {
    if (typeof text !== "string") throw new TypeError(`a field path is a string, not ${describe(text)}`);
    if (text === "") throw new Error("field path is empty");
    if (text.startsWith("/")) {
      const segments = text.slice(1).split("/").map(unescapePointerToken);
      if (segments.includes(undefined)) {
        throw new Error(`field path \`${text}\`: \`~\` must be followed by \`0\` or \`1\` in a JSON pointer`);
      }
      return new FieldPath(text, segments);
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
    return FieldPath.parse(path);
  }

  /** The value at this path inside `value`, or `undefined`. */
  get(value) {
    return valueAt(value, this.segments);
  }

  /** Whether `other` (a path or segments) lies under this path or is it. */
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

// ---------------------------------------------------------------------------
// Objects

function sortedStringPairs(map) {
  if (!isPlainObject(map)) return [];
  return Object.entries(map)
    .filter(([, v]) => typeof v === "string")
    .sort(([a], [b]) => compareCodePoints(a, b));
}

function lookup(pairs, key) {
  return pairs.find(([k]) => k === key)?.[1];
}

function pairsToObject(pairs) {
  const object = {};
  for (const [k, v] of pairs) Object.defineProperty(object, k, { value: v, enumerable: true });
  return Object.freeze(object);
}

function stringAt(source, segments) {
  const text = source.get(segments);
  if (text === undefined) return "";
  try {
    const value = JSON.parse(text);
    return typeof value === "string" ? value : "";
  } catch {
    return "";
  }
}

/**
 * Answers for a plain JS value (or JSON text) the way GRW answers for the
 * objects it holds; the source behind `ObjectView.of` and the test objects.
 */
export class JsonSource {
  #value;
  #text;

  constructor(value) {
    if (typeof value === "string") {
      this.#text = value;
      try {
        this.#value = JSON.parse(value);
      } catch {
        this.#value = undefined;
      }
    } else {
      this.#value = value;
    }
  }

  json() {
    return this.#text ?? JSON.stringify(this.#value);
  }

  get(path) {
    const value = valueAt(this.#value, path);
    return value === undefined ? undefined : JSON.stringify(value);
  }

  labels() {
    return sortedStringPairs(this.#value?.metadata?.labels);
  }

  annotations() {
    return sortedStringPairs(this.#value?.metadata?.annotations);
  }
}

/**
 * One object as a plugin sees it, read where it is (inside GRW: in the host)
 * only as far as the plugin asks; what was read is kept for later calls.
 *
 * The source is GRW's `object` resource inside a component, or anything
 * with the same methods: `json()`, `get(segments)`, `labels()`,
 * `annotations()` and optionally `label(key)`, `annotation(key)`, `gvk()`,
 * `namespace()`, `name()`, `uid()`, `resourceVersion()`.
 */
export class ObjectView {
  #source;
  #json;
  #parsed; // {value} or {error}
  #meta; // a Map, made on first use

  constructor(source) {
    if (typeof source?.json !== "function" || typeof source?.get !== "function") {
      throw new TypeError("an ObjectView reads from a source with json() and get(); use ObjectView.of for a plain value");
    }
    this.#source = source;
  }

  /** A view of a plain JS value (or JSON text), already at hand. */
  static of(value) {
    const view = new ObjectView(new JsonSource(value));
    if (typeof value !== "string") view.#parsed = { value };
    return view;
  }

  /** The source: what the view reads through. */
  get source() {
    return this.#source;
  }

  #cached(key, read) {
    this.#meta ??= new Map();
    if (!this.#meta.has(key)) this.#meta.set(key, read());
    return this.#meta.get(key);
  }

  #parsedValue() {
    return this.#parsed && !this.#parsed.error ? this.#parsed.value : undefined;
  }

  /** The string at `segments`, or "": from the parsed object if there is one, else from the source. */
  #string(segments) {
    const value = this.#parsedValue();
    if (value === undefined) return stringAt(this.#source, segments);
    const found = valueAt(value, segments);
    return typeof found === "string" ? found : "";
  }

  /** A metadata string, asking the source's own method for it when it has one. */
  #metadata(method, segments) {
    return this.#cached(method, () =>
      this.#parsedValue() === undefined && typeof this.#source[method] === "function"
        ? this.#source[method]()
        : this.#string(segments),
    );
  }

  /** The object's group/version/kind. */
  get gvk() {
    return this.#cached("gvk", () =>
      this.#parsedValue() === undefined && typeof this.#source.gvk === "function"
        ? Gvk.from(this.#source.gvk())
        : Gvk.fromApiVersion(this.#string(["apiVersion"]), this.#string(["kind"])),
    );
  }

  get kind() {
    return this.gvk.kind;
  }

  get apiVersion() {
    return this.gvk.apiVersion;
  }

  /** `metadata.namespace`; empty for cluster-scoped objects. */
  get namespace() {
    return this.#metadata("namespace", ["metadata", "namespace"]);
  }

  /** `metadata.name`. */
  get name() {
    return this.#metadata("name", ["metadata", "name"]);
  }

  /** `metadata.uid`. */
  get uid() {
    return this.#metadata("uid", ["metadata", "uid"]);
  }

  /** `metadata.resourceVersion`. */
  get resourceVersion() {
    return this.#metadata("resourceVersion", ["metadata", "resourceVersion"]);
  }

  get isClusterScoped() {
    return this.namespace === "";
  }

  /** Sorted `[key, value]` pairs of `metadata.<field>` (string values only), fetched once. */
  #pairs(field) {
    return this.#cached(field, () => {
      const value = this.#parsedValue();
      let pairs;
      if (value !== undefined) {
        pairs = sortedStringPairs(value?.metadata?.[field]);
      } else if (typeof this.#source[field] === "function") {
        pairs = this.#source[field]();
      } else {
        const text = this.#source.get(["metadata", field]);
        pairs = sortedStringPairs(text === undefined ? undefined : JSON.parse(text));
      }
      return { pairs, object: pairsToObject(pairs) };
    });
  }

  /** One label's value, or `undefined`. Asks for that label alone unless all were fetched. */
  label(key) {
    if (this.#meta?.has("labels") || this.#parsedValue() !== undefined || typeof this.#source.label !== "function") {
      return lookup(this.#pairs("labels").pairs, key);
    }
    return this.#source.label(key) ?? undefined;
  }

  /** All labels, as a frozen `{key: value}` object. */
  get labels() {
    return this.#pairs("labels").object;
  }

  /** One annotation's value (string annotations only), or `undefined`. */
  annotation(key) {
    if (this.#meta?.has("annotations") || this.#parsedValue() !== undefined || typeof this.#source.annotation !== "function") {
      return lookup(this.#pairs("annotations").pairs, key);
    }
    return this.#source.annotation(key) ?? undefined;
  }

  /** The annotations whose values are strings, as a frozen `{key: value}` object. */
  get annotations() {
    return this.#pairs("annotations").object;
  }

  /**
   * The value at `path` (`"status.phase"`, `"/metadata/labels/a~1b"`,
   * `["spec", "containers", "0", "image"]` or a FieldPath), or `undefined`.
   * Fetches just that value unless the whole object was fetched already.
   */
  field(path) {
    const { segments } = FieldPath.from(path);
    const value = this.#parsedValue();
    if (value !== undefined) return valueAt(value, segments);
    const text = this.#source.get(segments);
    if (text === undefined || text === null) return undefined;
    return JSON.parse(text);
  }

  /** The whole object as JSON text; fetched on first use. */
  get json() {
    this.#json ??= this.#source.json();
    return this.#json;
  }

  /** The whole object, fetched and parsed on first use; throws if it is not valid JSON. */
  get object() {
    this.#parsed ??= (() => {
      try {
        return { value: JSON.parse(this.json) };
      } catch (e) {
        return { error: new Error(`object is not valid JSON: ${e.message}`) };
      }
    })();
    if (this.#parsed.error) throw this.#parsed.error;
    return this.#parsed.value;
  }

  /** A reference to this object. */
  toRef() {
    return new ObjectRef(this.gvk, this.namespace, this.name);
  }
}

function viewOf(object) {
  if (object instanceof ObjectView) return object;
  if (typeof object?.json === "function" && typeof object?.get === "function") return new ObjectView(object);
  return ObjectView.of(object);
}

// ---------------------------------------------------------------------------
// Events

/**
 * One change of one object. `type` is `ADDED`, `MODIFIED` or `DELETED`;
 * `origin` is `initial`, `watch` or `relist`. Everything else is read from
 * the object only as far as asked: `name`, `label(key)` and `field(path)`
 * fetch just that, `object` fetches and parses the whole JSON once.
 *
 * `object` and `oldObject` may be ObjectViews, sources (see ObjectView) or
 * plain values. Inside GRW an event can only be read during its call.
 */
export class Event {
  #view;
  #oldView;

  constructor(type, object, { oldObject, origin = "watch" } = {}) {
    this.type = eventTypeOf(type);
    this.origin = originOf(origin);
    this.#view = viewOf(object);
    this.#oldView = oldObject === undefined || oldObject === null ? undefined : viewOf(oldObject);
  }

  /** The object (its new state, or its last state for `DELETED`), as a view. */
  get view() {
    return this.#view;
  }

  /** The previous state, for `MODIFIED` events. */
  get oldView() {
    return this.#oldView;
  }

  get gvk() {
    return this.#view.gvk;
  }

  get kind() {
    return this.#view.kind;
  }

  get namespace() {
    return this.#view.namespace;
  }

  get name() {
    return this.#view.name;
  }

  get uid() {
    return this.#view.uid;
  }

  get resourceVersion() {
    return this.#view.resourceVersion;
  }

  get isClusterScoped() {
    return this.#view.isClusterScoped;
  }

  /** Whether the event carries the previous state (`MODIFIED` events do). */
  get hasOldObject() {
    return this.#oldView !== undefined;
  }

  label(key) {
    return this.#view.label(key);
  }

  get labels() {
    return this.#view.labels;
  }

  annotation(key) {
    return this.#view.annotation(key);
  }

  get annotations() {
    return this.#view.annotations;
  }

  /** The value at `path` in the object; see ObjectView.field. */
  field(path) {
    return this.#view.field(path);
  }

  /** The value at `path` in the previous state; `undefined` without one. */
  oldField(path) {
    return this.#oldView?.field(path);
  }

  /** The whole object, parsed on first use. */
  get object() {
    return this.#view.object;
  }

  /** The whole previous state, parsed on first use; `undefined` without one. */
  get oldObject() {
    return this.#oldView?.object;
  }

  get objectJson() {
    return this.#view.json;
  }

  get oldObjectJson() {
    return this.#oldView?.json;
  }

  toString() {
    const name = this.namespace === "" ? this.name : `${this.namespace}/${this.name}`;
    return `${this.type} ${this.gvk.apiVersion}/${this.kind} ${name}`;
  }
}

// ---------------------------------------------------------------------------
// Label selectors (the grammar and validation of the API server)

const MAX_NAME_LEN = 63;
const MAX_PREFIX_LEN = 253;
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
const INTEGER_RULE = "for 'Gt', 'Lt' operators, the value must be an integer";

const isWhitespace = (c) => c === " " || c === "\t" || c === "\r" || c === "\n";
const isSpecial = (c) => "=!(),<>".includes(c);
const isAsciiAlnum = (c) => /^[A-Za-z0-9]$/.test(c);

/** Splits a selector into `{type, text, at}` tokens (`at`: UTF-16 offset), as the API server's lexer does. */
function tokenize(input) {
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
    let token;
    if (isSpecial(first)) {
      const pair = first + (input[pos + 1] ?? "");
      const symbol = pair === "==" || pair === "!=" ? pair : first;
      pos += symbol.length;
      token = { type: symbol, at: start };
    } else {
      while (pos < input.length && input[pos] !== "\0" && !isWhitespace(input[pos]) && !isSpecial(input[pos])) pos++;
      token = { type: "word", text: input.slice(start, pos), at: start };
    }
    tokens.push(token);
    if (input[pos] === "\0") pos++;
  }
}

function describeToken(token) {
  if (token.type === "end") return "the end of the selector";
  return `\`${token.type === "word" ? token.text : token.type}\``;
}

/** `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`, or empty. */
function isLabelName(text) {
  if (text === "") return true;
  return isAsciiAlnum(text[0]) && isAsciiAlnum(text[text.length - 1]) && /^[-A-Za-z0-9_.]*$/.test(text);
}

function isDnsSubdomain(text) {
  return text.split(".").every((part) => /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(part));
}

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

function valueProblem(key, value) {
  if (charCount(value) > MAX_NAME_LEN) return `value of \`${key}\` is longer than ${MAX_NAME_LEN} characters`;
  if (!isLabelName(value)) {
    return `value \`${value}\` of \`${key}\` is not a valid label value: it must consist of letters, digits, \`-\`, \`_\` and \`.\`, and start and end with a letter or digit`;
  }
  return undefined;
}

/** A base-10 64-bit integer as Rust's `i64` parse reads it (sign allowed), or undefined. */
function parseI64(text) {
  if (!/^[+-]?[0-9]+$/.test(text)) return undefined;
  const value = BigInt(text);
  return value < I64_MIN || value > I64_MAX ? undefined : value;
}

/** A label selector that does not parse; `position` counts characters from 0. */
export class SelectorError extends Error {
  constructor(input, reason, position) {
    super(`invalid label selector \`${input}\`: ${reason}`);
    this.name = "SelectorError";
    this.input = input;
    this.reason = reason;
    this.position = position;
  }
}

const OPERATORS = ["equals", "notEquals", "in", "notIn", "exists", "doesNotExist", "greaterThan", "lessThan"];

/**
 * One condition on one label: `{key, operator}` plus `value` (a string for
 * `equals`/`notEquals`, a BigInt for `greaterThan`/`lessThan`) or `values`
 * (sorted, for `in`/`notIn`).
 */
export class Requirement {
  constructor(key, operator, valueOrValues) {
    if (!OPERATORS.includes(operator)) throw new TypeError(`unknown operator ${describe(operator)}`);
    this.key = key;
    this.operator = operator;
    if (operator === "in" || operator === "notIn") {
      this.values = [...new Set(valueOrValues)].sort(compareCodePoints);
    } else if (operator === "greaterThan" || operator === "lessThan") {
      this.value = BigInt(valueOrValues);
    } else if (operator === "equals" || operator === "notEquals") {
      this.value = valueOrValues;
    }
  }

  /** Whether the requirement holds for a label value (`undefined`: the label is absent). */
  matches(value) {
    const present = value !== undefined && value !== null;
    switch (this.operator) {
      case "equals":
        return present && value === this.value;
      case "notEquals":
        return !present || value !== this.value;
      case "in":
        return present && this.values.includes(value);
      case "notIn":
        return !present || !this.values.includes(value);
      case "exists":
        return present;
      case "doesNotExist":
        return !present;
      default: {
        const number = present ? parseI64(value) : undefined;
        if (number === undefined) return false;
        return this.operator === "greaterThan" ? number > this.value : number < this.value;
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
        return `${this.key} in (${this.values.join(",")})`;
      case "notIn":
        return `${this.key} notin (${this.values.join(",")})`;
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

class SelectorParser {
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

  error(at, reason) {
    const position = charCount(this.input.slice(0, at));
    return new SelectorError(this.input, reason(position), position);
  }

  selector() {
    const first = this.peek();
    if (first.type === "end") return [];
    if (first.type === ",") {
      throw this.error(first.at, (pos) => `empty requirement at position ${pos}: expected a label key before \`,\``);
    }
    if (first.type !== "word" && first.type !== "!") {
      throw this.error(first.at, (pos) => `expected a label key or \`!\` at position ${pos}, found ${describeToken(first)}`);
    }
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

  /** The value after `=`, `==`, `!=`, `>` or `<`; left out, it is the empty value. */
  exactValue(operator) {
    const token = this.peek();
    if (token.type === "," || token.type === "end") return { text: "", at: token.at };
    if (token.type === "word") {
      this.bump();
      return { text: token.text, at: token.at };
    }
    throw this.error(token.at, (pos) => `expected a value after ${describeToken(operator)} at position ${pos}, found ${describeToken(token)}`);
  }

  valueSet(operator) {
    const open = this.bump();
    if (open.type !== "(") {
      throw this.error(open.at, (pos) => `expected \`(\` after \`${operator}\` at position ${pos}, found ${describeToken(open)}`);
    }
    const unclosed = () => this.error(open.at, (pos) => `missing \`)\` to close the \`(\` at position ${pos}`);
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

  checkKey(token) {
    const problem = keyProblem(token.text);
    if (problem === undefined) return token.text;
    throw this.error(token.at, (pos) => `key \`${token.text}\` is not a valid label key: ${problem} (at position ${pos})`);
  }

  checkValue(key, value) {
    const problem = valueProblem(key, value.text);
    if (problem !== undefined) throw this.error(value.at, (pos) => `${problem} (at position ${pos})`);
  }

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

  checkBound(key, operator, value) {
    const problem = valueProblem(key, value.text);
    if (problem === undefined) return;
    const hint = /^[+-]/.test(value.text) ? `, so the bound of ${describeToken(operator)} cannot have a sign` : "";
    throw this.error(value.at, (pos) => `${problem}${hint} (at position ${pos})`);
  }
}

/** How to look up one label in whatever holds labels. */
function labelGetter(labels) {
  if (typeof labels === "function") return labels;
  if (labels instanceof Map) return (key) => labels.get(key);
  if (Array.isArray(labels)) return (key) => labels.find(([k]) => k === key)?.[1];
  if (labels && typeof labels.label === "function") return (key) => labels.label(key);
  if (isPlainObject(labels)) return (key) => (hasOwn(labels, key) ? labels[key] : undefined);
  if (labels === undefined || labels === null) return () => undefined;
  throw new TypeError(`cannot look labels up in ${describe(labels)}`);
}

/**
 * A Kubernetes label selector, with the API server's grammar and validation:
 * `app=web`, `app==web`, `app!=web`, `app in (web,api)`, `app notin (web)`,
 * `app`, `!app`, `replicas>2`, `n<10`, joined by commas; `""` matches
 * everything.
 *
 *     const selector = LabelSelector.parse("app in (web,api),tier!=cache");
 *     selector.matches({ app: "web" }); // true
 *     selector.matches(event);          // an Event's or ObjectView's labels
 */
export class LabelSelector {
  constructor(requirements = []) {
    this.requirements = Object.freeze([...requirements]);
  }

  /** Parses a selector; throws a SelectorError saying what is wrong and where. */
  static parse(text) {
    if (typeof text !== "string") throw new TypeError(`a label selector is a string, not ${describe(text)}`);
    return new LabelSelector(new SelectorParser(text).selector());
  }

  /** The selector that matches everything. */
  static everything() {
    return new LabelSelector();
  }

  get isEmpty() {
    return this.requirements.length === 0;
  }

  /**
   * Whether `labels` satisfy every requirement: a `{key: value}` object, a
   * Map, `[key, value]` pairs, a `key => value` function, or anything with a
   * `label(key)` method (Event, ObjectView).
   */
  matches(labels) {
    const get = labelGetter(labels);
    return this.requirements.every((r) => r.matches(get(r.key)));
  }

  /** The canonical form, which parses back to the same selector. */
  toString() {
    return this.requirements.join(",");
  }

  toJSON() {
    return this.toString();
  }
}

// ---------------------------------------------------------------------------
// Configuration

function keyName(key, index) {
  return index === undefined ? key : `${key}[${index}]`;
}

/** A configuration error: its message names the key and is shown to the operator. */
export class ConfigError extends Error {
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
  #value;
  #accepted = [];
  #checkUnknown = true;

  constructor(value = {}) {
    if (!isPlainObject(value)) throw new ConfigError(`config is not valid: expected a JSON object, got ${describe(value)}`);
    this.#value = value;
  }

  /** Parses the configuration text GRW passes to `init`; empty text is `{}`. */
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

  /** The whole configuration; reading it turns the unknown-key check off. */
  get value() {
    this.#checkUnknown = false;
    return this.#value;
  }

  /** The keys asked for so far, in order. */
  get accepted() {
    return [...this.#accepted];
  }

  /** Whether `key` is set (to anything but null). */
  has(key) {
    return hasOwn(this.#value, key) && this.#value[key] !== null;
  }

  #read(key, options, convert) {
    if (!this.#accepted.includes(key)) this.#accepted.push(key);
    if (!this.has(key)) {
      if (options.required) throw new ConfigError(`config is not valid: missing field \`${key}\``);
      return options.default;
    }
    return convert(this.#value[key], key);
  }

  #fail(key, index, message) {
    return new ConfigError(`config key \`${keyName(key, index)}\`: ${message}`);
  }

  #expect(value, check, what, key, index) {
    if (!check(value)) throw this.#fail(key, index, `expected ${what}, got ${describe(value)}`);
    return value;
  }

  #list(value, key, item) {
    this.#expect(value, Array.isArray, "a list", key);
    return value.map((element, index) => item(element, key, index));
  }

  #bounded(value, key, options) {
    if (options.minimum !== undefined && value < options.minimum) throw this.#fail(key, undefined, `must be at least ${options.minimum}`);
    if (options.maximum !== undefined && value > options.maximum) throw this.#fail(key, undefined, `must be at most ${options.maximum}`);
    return value;
  }

  #stringItem(options) {
    return (value, key, index) => {
      this.#expect(value, (v) => typeof v === "string", "a string", key, index);
      if (options.oneOf && !options.oneOf.includes(value)) {
        throw this.#fail(key, index, `expected one of ${options.oneOf.map((v) => `\`${v}\``).join(", ")}, got ${describe(value)}`);
      }
      return value;
    };
  }

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

  /** A string; `oneOf` limits it to some values. */
  string(key, options = {}) {
    return this.#read(key, options, this.#stringItem(options));
  }

  /** A list of strings. */
  strings(key, options = {}) {
    return this.#read(key, options, (value) => this.#list(value, key, this.#stringItem(options)));
  }

  /** An integer, within `minimum` and `maximum` if given. */
  int(key, options = {}) {
    return this.#read(key, options, (value) =>
      this.#bounded(this.#expect(value, Number.isSafeInteger, "an integer", key), key, options),
    );
  }

  /** A number, within `minimum` and `maximum` if given. */
  number(key, options = {}) {
    return this.#read(key, options, (value) =>
      this.#bounded(this.#expect(value, (v) => typeof v === "number", "a number", key), key, options),
    );
  }

  /** `true` or `false`. */
  bool(key, options = {}) {
    return this.#read(key, options, (value) => this.#expect(value, (v) => typeof v === "boolean", "`true` or `false`", key));
  }

  /** A field path (FieldPath), dotted or a JSON pointer. */
  fieldPath(key, options = {}) {
    return this.#read(key, options, this.#parsed(FieldPath.parse));
  }

  /** A list of field paths. */
  fieldPaths(key, options = {}) {
    return this.#read(key, options, (value) => this.#list(value, key, this.#parsed(FieldPath.parse)));
  }

  /** A label selector (LabelSelector). */
  selector(key, options = {}) {
    return this.#read(key, options, this.#parsed(LabelSelector.parse));
  }

  /** A JSON object, as it is. */
  object(key, options = {}) {
    return this.#read(key, options, (value) => this.#expect(value, isPlainObject, "an object", key));
  }

  /** Any JSON value, as it is. */
  any(key, options = {}) {
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

// ---------------------------------------------------------------------------
// Outbound HTTP, for notifiers

const encoder = /* @__PURE__ */ new TextEncoder();
const decoder = /* @__PURE__ */ new TextDecoder();

function bytesOf(body) {
  if (body === undefined || body === null) return new Uint8Array();
  if (typeof body === "string") return encoder.encode(body);
  if (body instanceof Uint8Array) return body;
  if (ArrayBuffer.isView(body)) return new Uint8Array(body.buffer, body.byteOffset, body.byteLength);
  if (body instanceof ArrayBuffer || Array.isArray(body)) return new Uint8Array(body);
  throw new TypeError(`a body is a string or bytes, not ${describe(body)}`);
}

/** Why a delivery failed; throw a Retry or a GiveUp from `deliver`. */
export class DeliveryError extends Error {}

/** Worth trying again later (receiver down, 5xx, timeout). */
export class Retry extends DeliveryError {
  constructor(message) {
    super(message);
    this.name = "Retry";
  }
}

/** Will never succeed (rejected as invalid). */
export class GiveUp extends DeliveryError {
  constructor(message) {
    super(message);
    this.name = "GiveUp";
  }
}

/** An HTTP request a notifier sends through GRW. */
export class HttpRequest {
  constructor(method, url, { headers = [], body } = {}) {
    this.method = method;
    this.url = url;
    this.headers = headers.map(([name, value]) => [String(name), String(value)]);
    this.body = bytesOf(body);
  }

  static get(url) {
    return new HttpRequest("GET", url);
  }

  static post(url) {
    return new HttpRequest("POST", url);
  }

  static put(url) {
    return new HttpRequest("PUT", url);
  }

  /** Adds a header. */
  header(name, value) {
    this.headers.push([String(name), String(value)]);
    return this;
  }

  /** Sets the body: a string (sent as UTF-8) or bytes. */
  withBody(body) {
    this.body = bytesOf(body);
    return this;
  }

  /** Sets a JSON body and the `content-type: application/json` header. */
  json(value) {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`cannot encode ${typeof value} as JSON`);
    return this.header("content-type", "application/json").withBody(text);
  }

  /** The body as text. */
  get bodyText() {
    return decoder.decode(this.body);
  }

  /** The body parsed as JSON. */
  bodyJson() {
    return JSON.parse(this.bodyText);
  }
}

/** The answer to an HttpRequest. */
export class HttpResponse {
  constructor(status, { headers = [], body } = {}) {
    this.status = status;
    this.headers = headers;
    this.body = bytesOf(body);
  }

  /** The first value of a header; names compare case-insensitively. */
  header(name) {
    const wanted = name.toLowerCase();
    return this.headers.find(([n]) => n.toLowerCase() === wanted)?.[1];
  }

  /** Whether the status is 2xx. */
  get isSuccess() {
    return this.status >= 200 && this.status < 300;
  }

  /** The body as text, invalid UTF-8 replaced. */
  get text() {
    return decoder.decode(this.body);
  }

  /** The body parsed as JSON. */
  json() {
    return JSON.parse(this.text);
  }

  /**
   * Throws the matching DeliveryError for a failure status: 408, 429 and
   * 5xx are worth retrying, other 4xx are not. Any other status returns the
   * response.
   */
  errorForStatus() {
    const reason = () => {
      const text = this.text.trim();
      return text === "" ? `receiver answered ${this.status}` : `receiver answered ${this.status}: ${[...text].slice(0, 200).join("")}`;
    };
    if (this.status === 408 || this.status === 429 || (this.status >= 500 && this.status <= 599)) throw new Retry(reason());
    if (this.status >= 400 && this.status <= 499) throw new GiveUp(reason());
    return this;
  }
}

/**
 * Outbound HTTP, as GRW grants it to notifiers: only to hosts that both the
 * manifest (`allowedHosts`) and the operator allow. `deliver` receives one;
 * in tests, pass a `testing.RecordingHttp`.
 */
export class Http {
  /** Sends a request; throws an Error saying why when it cannot be sent. Error statuses are answers, not errors. */
  send(_request) {
    throw new Error("Http.send is not implemented");
  }

  /**
   * Sends a request and judges the outcome: 2xx returns the response;
   * failures to send, 408, 429 and 5xx throw Retry; any other status throws
   * GiveUp (GRW does not follow redirects, so a 3xx means the URL needs
   * fixing).
   */
  deliver(request) {
    let response;
    try {
      response = this.send(request);
    } catch (e) {
      throw new Retry(messageOf(e));
    }
    response.errorForStatus();
    if (!response.isSuccess) {
      throw new GiveUp(
        `receiver answered ${response.status}; GRW does not follow redirects, so point the plugin at the final URL`,
      );
    }
    return response;
  }

  /** POSTs `value` as JSON to `url` and judges the outcome as `deliver` does. */
  postJson(url, value, { headers = [] } = {}) {
    const request = HttpRequest.post(url);
    for (const [name, v] of headers) request.header(name, v);
    return this.deliver(request.json(value));
  }
}

class HostHttp extends Http {
  send(request) {
    const answer = hostPart("send")({
      method: request.method,
      url: request.url,
      headers: request.headers,
      body: request.body,
    });
    return new HttpResponse(answer.status, { headers: answer.headers, body: answer.body });
  }
}

// ---------------------------------------------------------------------------
// Cache lookups and relationships, for analyzers

/** Names one object. */
export class ObjectRef {
  constructor(gvk, namespace = "", name = "") {
    this.gvk = Gvk.from(gvk);
    this.namespace = namespace;
    this.name = name;
  }

  /** A reference to an ObjectView, or to a plain object with `apiVersion`, `kind` and a name (else undefined). */
  static of(object) {
    if (object instanceof ObjectView) return object.toRef();
    const { apiVersion, kind, metadata } = object ?? {};
    if (typeof apiVersion !== "string" || typeof kind !== "string" || typeof metadata?.name !== "string") return undefined;
    return new ObjectRef(Gvk.fromApiVersion(apiVersion, kind), metadata.namespace ?? "", metadata.name);
  }
}

/** One relationship between the analyzed object and another. */
export class Relationship {
  constructor(relation, direction, target, attributes = []) {
    if (direction !== "outgoing" && direction !== "incoming") {
      throw new TypeError(`a direction is "outgoing" or "incoming", not ${describe(direction)}`);
    }
    this.relation = relation;
    this.direction = direction;
    this.target = target instanceof ObjectRef ? target : new ObjectRef(target.gvk, target.namespace, target.name);
    this.attributes = attributes.map(([k, v]) => [String(k), String(v)]);
  }

  /** The analyzed object `relation` `target`: this Service `selects` that Pod. */
  static outgoing(relation, target) {
    return new Relationship(relation, "outgoing", target);
  }

  /** `source` `relation` the analyzed object: that ReplicaSet `owns` this Pod. */
  static incoming(relation, source) {
    return new Relationship(relation, "incoming", source);
  }

  /** Adds an attribute, e.g. `with("controller", "true")`. */
  with(key, value) {
    this.attributes.push([String(key), String(value)]);
    return this;
  }
}

function selectorText(selector) {
  return selector instanceof LabelSelector ? selector.toString() : selector;
}

/**
 * Read-only lookups into GRW's caches; answers are ObjectViews. GRW records
 * each lookup an analyzer makes and analyzes again when a change would
 * answer it differently. In tests, use `testing.MemoryCache`.
 */
export class Cache {
  /** One object (`namespace` empty for cluster-scoped ones), or undefined. */
  get(_gvk, _namespace, _name) {
    throw new Error("Cache.get is not implemented");
  }

  /** Objects of a kind, in one namespace (`""`: all) matching a label selector (`""`: all); throws on a bad selector. */
  list(_gvk, _namespace = "", _selector = "") {
    throw new Error("Cache.list is not implemented");
  }

  /** Objects of a kind with an owner reference to `ownerUid`. */
  ownedBy(_gvk, _ownerUid) {
    throw new Error("Cache.ownedBy is not implemented");
  }
}

function witGvk(gvk) {
  const { group, version, kind } = Gvk.from(gvk);
  return { group, version, kind };
}

class HostCache extends Cache {
  get(gvk, namespace, name) {
    const object = hostPart("cache").get(witGvk(gvk), namespace, name);
    return object === undefined ? undefined : new ObjectView(object);
  }

  list(gvk, namespace = "", selector = "") {
    try {
      return hostPart("cache").list(witGvk(gvk), namespace, selectorText(selector)).map((o) => new ObjectView(o));
    } catch (e) {
      throw new Error(messageOf(e));
    }
  }

  ownedBy(gvk, ownerUid) {
    return hostPart("cache").ownedBy(witGvk(gvk), ownerUid).map((o) => new ObjectView(o));
  }
}

// ---------------------------------------------------------------------------
// Export adapters

const WIT_EVENT_TYPES = { added: "ADDED", modified: "MODIFIED", deleted: "DELETED" };

function witInterest(value) {
  const interest = Interest.from(value);
  return {
    kinds: interest.kinds.map(({ group, version, kind }) => ({ group, version, kind })),
    eventTypes: interest.eventTypes.map((t) => t.toLowerCase()),
  };
}

function hostEvent(event, object, oldObject) {
  return new Event(WIT_EVENT_TYPES[event.eventType], object, { oldObject, origin: event.origin });
}

/**
 * Makes a plugin instance from its definition: a fresh object inheriting the
 * definition's methods, so `init` keeps its state on `this`. Returns the
 * instance and its Interest; throws what `init` or the configuration throw.
 */
function instantiate(definition, config) {
  const parsed = Config.parse(config);
  const plugin = Object.create(definition);
  const interest = Interest.from(typeof plugin.init === "function" ? plugin.init(parsed) : undefined);
  parsed.finish();
  return { plugin, interest };
}

function requireMethod(definition, method, adapter) {
  if (typeof definition?.[method] !== "function") {
    throw new TypeError(`${adapter} needs an object with a \`${method}\` method (and optionally \`init\`)`);
  }
}

function adapterInit(definition, keep) {
  return (text) => {
    try {
      const { plugin, interest } = instantiate(definition, text);
      keep(plugin);
      return witInterest(interest);
    } catch (e) {
      return { tag: "err", val: messageOf(e) };
    }
  };
}

function initialized(plugin) {
  if (plugin === undefined) throw new Error("the plugin was called before init succeeded");
  return plugin;
}

/**
 * The `filter` export of the filter-plugin world, from a definition with
 * `init(config)` (optional; returns an Interest) and `decide(event)`.
 * An exception in `decide` fails the call, and the manifest's `failMode`
 * decides the event.
 */
export function exportFilter(definition) {
  requireMethod(definition, "decide", "exportFilter");
  let plugin;
  return {
    init: adapterInit(definition, (p) => (plugin = p)),
    decide(event, object, oldObject) {
      return Boolean(initialized(plugin).decide(hostEvent(event, object, oldObject)));
    },
  };
}

/**
 * The `notifier` export of the notifier-plugin world, from a definition
 * with `init(config)` and `deliver(event, http)`. `deliver` throws Retry or
 * GiveUp to report a failed delivery; any other exception is reported as
 * Retry, as GRW treats a failed call.
 */
export function exportNotifier(definition) {
  requireMethod(definition, "deliver", "exportNotifier");
  let plugin;
  const http = new HostHttp();
  return {
    init: adapterInit(definition, (p) => (plugin = p)),
    deliver(event, object, oldObject) {
      try {
        initialized(plugin).deliver(hostEvent(event, object, oldObject), http);
        return { tag: "ok" };
      } catch (e) {
        if (e instanceof GiveUp) return { tag: "err", val: { tag: "give-up", val: e.message } };
        if (!(e instanceof Retry)) log.error(`deliver failed: ${typeof e?.stack === "string" ? e.stack : messageOf(e)}`);
        return { tag: "err", val: { tag: "retry", val: messageOf(e) } };
      }
    },
  };
}

function witRelationship(relationship) {
  const r = relationship instanceof Relationship ? relationship : new Relationship(relationship.relation, relationship.direction, relationship.target, relationship.attributes);
  return {
    relation: r.relation,
    direction: r.direction,
    target: { gvk: witGvk(r.target.gvk), namespace: r.target.namespace, name: r.target.name },
    attributes: r.attributes,
  };
}

/**
 * The `analyzer` export of the analyzer-plugin world, from a definition
 * with `init(config)` and `analyze(object, cache)` returning Relationships.
 */
export function exportAnalyzer(definition) {
  requireMethod(definition, "analyze", "exportAnalyzer");
  let plugin;
  const cache = new HostCache();
  return {
    init: adapterInit(definition, (p) => (plugin = p)),
    analyze(object) {
      const relationships = initialized(plugin).analyze(new ObjectView(object), cache) ?? [];
      return [...relationships].map(witRelationship);
    },
  };
}

// ---------------------------------------------------------------------------
// Testing

function sortKeys(value) {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (!isPlainObject(value)) return value;
  const sorted = {};
  for (const key of Object.keys(value).sort(compareCodePoints)) {
    Object.defineProperty(sorted, key, { value: sortKeys(value[key]), enumerable: true });
  }
  return sorted;
}

/**
 * An object answering like GRW's `object` resource (JSON with sorted keys,
 * labels sorted by key, ...) that records each call in `calls` as
 * `[method, ...arguments]`, to check what a plugin reads.
 */
class HostObject extends JsonSource {
  constructor(value) {
    super(typeof value === "string" ? value : sortKeys(value));
    this.value = value;
    this.calls = [];
  }

  #record(method, args, answer) {
    this.calls.push([method, ...args]);
    return answer;
  }

  json() {
    return this.#record("json", [], super.json());
  }

  get(path) {
    return this.#record("get", [[...path]], super.get(path));
  }

  labels() {
    return this.#record("labels", [], super.labels());
  }

  annotations() {
    return this.#record("annotations", [], super.annotations());
  }

  label(key) {
    return this.#record("label", [key], lookup(super.labels(), key));
  }

  annotation(key) {
    return this.#record("annotation", [key], lookup(super.annotations(), key));
  }

  #string(segments) {
    const value = valueAt(this.value, segments);
    return typeof value === "string" ? value : "";
  }

  gvk() {
    const { group, version, kind } = Gvk.fromApiVersion(this.#string(["apiVersion"]), this.#string(["kind"]));
    return this.#record("gvk", [], { group, version, kind });
  }

  namespace() {
    return this.#record("namespace", [], this.#string(["metadata", "namespace"]));
  }

  name() {
    return this.#record("name", [], this.#string(["metadata", "name"]));
  }

  uid() {
    return this.#record("uid", [], this.#string(["metadata", "uid"]));
  }

  resourceVersion() {
    return this.#record("resourceVersion", [], this.#string(["metadata", "resourceVersion"]));
  }
}

/**
 * A Cache over objects held in memory; each object's kind comes from its
 * `apiVersion` and `kind`. `list` takes full label selectors and, like GRW,
 * rejects malformed ones.
 */
class MemoryCache extends Cache {
  #objects = [];

  constructor(objects = []) {
    super();
    for (const object of objects) this.insert(object);
  }

  /** Adds an object and returns the cache, for chaining. */
  with(object) {
    this.insert(object);
    return this;
  }

  /** Adds an object, replacing any of the same kind, namespace and name. */
  insert(object) {
    const view = ObjectView.of(object);
    const same = (other) => other.gvk.equals(view.gvk) && other.namespace === view.namespace && other.name === view.name;
    this.#objects = this.#objects.filter((other) => !same(other));
    this.#objects.push(view);
  }

  get size() {
    return this.#objects.length;
  }

  #ofKind(gvk) {
    const wanted = Gvk.from(gvk);
    return this.#objects.filter((o) => o.gvk.equals(wanted));
  }

  get(gvk, namespace, name) {
    return this.#ofKind(gvk).find((o) => o.namespace === namespace && o.name === name);
  }

  list(gvk, namespace = "", selector = "") {
    const parsed = selector instanceof LabelSelector ? selector : LabelSelector.parse(selector);
    return this.#ofKind(gvk).filter((o) => (namespace === "" || o.namespace === namespace) && parsed.matches(o));
  }

  ownedBy(gvk, ownerUid) {
    return this.#ofKind(gvk).filter((o) => {
      const refs = o.field(["metadata", "ownerReferences"]);
      return Array.isArray(refs) && refs.some((r) => r?.uid === ownerUid);
    });
  }
}

/**
 * An Http that records every request (`requests`) and answers from a
 * script: responses queued with `respond` and failures with `fail`, in
 * order; after them, `200 OK` with an empty body.
 */
class RecordingHttp extends Http {
  #answers = [];

  constructor() {
    super();
    this.requests = [];
  }

  /** Queues a response: an HttpResponse, or a status and optional body. */
  respond(response, body) {
    this.#answers.push({ response: response instanceof HttpResponse ? response : new HttpResponse(response, { body }) });
    return this;
  }

  /** Queues a failure to send, as when the host is not allowed or the connection is refused. */
  fail(reason) {
    this.#answers.push({ failure: reason });
    return this;
  }

  send(request) {
    this.requests.push(request);
    const answer = this.#answers.shift() ?? { response: new HttpResponse(200) };
    if (answer.failure !== undefined) throw new Error(answer.failure);
    return answer.response;
  }
}

/**
 * Stand-ins for GRW's side, to test plugin logic with `node --test` and no
 * WebAssembly runtime.
 */
export const testing = /* @__PURE__ */ Object.freeze({
  /**
   * An event for a plain object, read the way GRW serves it (through a
   * HostObject unless given a view or source). `options`: `oldObject`,
   * `origin` (default `watch`).
   */
  event(type, object, { oldObject, origin = "watch" } = {}) {
    const source = (value) => (value instanceof ObjectView || typeof value?.json === "function" ? value : new HostObject(value));
    return new Event(type, source(object), { oldObject: oldObject === undefined ? undefined : source(oldObject), origin });
  },

  /**
   * Initializes a plugin definition as its export adapter would, with
   * `config` (a value or JSON text; default `{}`). Returns `{plugin,
   * interest}`; throws the error GRW would show the operator.
   */
  init(definition, config = {}) {
    return instantiate(definition, config);
  },

  HostObject,
  MemoryCache,
  RecordingHttp,
});
