// One object as a plugin sees it (ObjectView), read from GRW's `object`
// resource or from a plain value (JsonSource) only as far as asked, and
// the reference that names an object (ObjectRef).

import { Gvk } from "./kinds.js";
import { FieldPath, valueAt } from "./paths.js";
import { compareCodePoints, isPlainObject } from "./values.js";

/** @import { GvkLike } from "./kinds.js" */
/** @import { PathLike } from "./paths.js" */

/**
 * What an ObjectView reads from: GRW's `object` resource, or anything with
 * the same methods. `json` answers the whole object as JSON text, `get` the
 * JSON text of the value at a path (`undefined`: nothing there); the other
 * methods are shortcuts a source may offer.
 *
 * @typedef {{
 *   json(): string,
 *   get(path: readonly string[]): string | undefined,
 *   labels?(): Array<[string, string]>,
 *   annotations?(): Array<[string, string]>,
 *   label?(key: string): string | undefined,
 *   annotation?(key: string): string | undefined,
 *   gvk?(): { group: string, version: string, kind: string },
 *   namespace?(): string,
 *   name?(): string,
 *   uid?(): string,
 *   resourceVersion?(): string,
 * }} ObjectSource
 */

/**
 * What an Event accepts as its object: a view, a source, or a plain value.
 *
 * @typedef {ObjectView | ObjectSource | object} ObjectLike
 */

/**
 * The string-valued entries of a JSON object, sorted by key as GRW sorts them.
 *
 * @param {unknown} map
 * @returns {Array<[string, string]>}
 */
function sortedStringPairs(map) {
  if (!isPlainObject(map)) return [];
  return /** @type {Array<[string, string]>} */ (Object.entries(map))
    .filter(([, v]) => typeof v === "string")
    .sort(([a], [b]) => compareCodePoints(a, b));
}

/**
 * @param {ReadonlyArray<readonly [string, string]>} pairs
 * @param {string} key
 * @returns {string | undefined}
 */
export function lookup(pairs, key) {
  return pairs.find(([k]) => k === key)?.[1];
}

/**
 * @param {ReadonlyArray<readonly [string, string]>} pairs
 * @returns {Readonly<Record<string, string>>}
 */
function pairsToObject(pairs) {
  const object = {};
  for (const [k, v] of pairs) Object.defineProperty(object, k, { value: v, enumerable: true });
  return Object.freeze(object);
}

/**
 * The string at `segments` in a source, or "" for anything else.
 *
 * @param {ObjectSource} source
 * @param {readonly string[]} segments
 * @returns {string}
 */
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
 *
 * @implements {ObjectSource}
 */
export class JsonSource {
  /** @type {any} */
  #value;
  /** @type {string | undefined} */
  #text;

  /** @param {unknown} value */
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

  /** @returns {string} */
  json() {
    return this.#text ?? JSON.stringify(this.#value);
  }

  /**
   * @param {readonly string[]} path
   * @returns {string | undefined}
   */
  get(path) {
    const value = valueAt(this.#value, path);
    return value === undefined ? undefined : JSON.stringify(value);
  }

  /** @returns {Array<[string, string]>} */
  labels() {
    return sortedStringPairs(this.#value?.metadata?.labels);
  }

  /** @returns {Array<[string, string]>} */
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
  /** @type {ObjectSource} */
  #source;
  /** @type {string | undefined} */
  #json;
  /** @type {{ value?: any, error?: Error } | undefined} */
  #parsed; // {value} or {error}
  /** @type {Map<string, any> | undefined} */
  #meta; // a Map, made on first use

  /** @param {ObjectSource} source */
  constructor(source) {
    if (typeof source?.json !== "function" || typeof source?.get !== "function") {
      throw new TypeError("an ObjectView reads from a source with json() and get(); use ObjectView.of for a plain value");
    }
    this.#source = source;
  }

  /**
   * A view of a plain JS value (or JSON text), already at hand.
   *
   * @param {unknown} value
   * @returns {ObjectView}
   */
  static of(value) {
    const view = new ObjectView(new JsonSource(value));
    if (typeof value !== "string") view.#parsed = { value };
    return view;
  }

  /** The source: what the view reads through. */
  get source() {
    return this.#source;
  }

  /**
   * @template T
   * @param {string} key
   * @param {() => T} read
   * @returns {T}
   */
  #cached(key, read) {
    this.#meta ??= new Map();
    if (!this.#meta.has(key)) this.#meta.set(key, read());
    return this.#meta.get(key);
  }

  /** @returns {any} */
  #parsedValue() {
    return this.#parsed && !this.#parsed.error ? this.#parsed.value : undefined;
  }

  /**
   * The string at `segments`, or "": from the parsed object if there is one, else from the source.
   *
   * @param {readonly string[]} segments
   * @returns {string}
   */
  #string(segments) {
    const value = this.#parsedValue();
    if (value === undefined) return stringAt(this.#source, segments);
    const found = valueAt(value, segments);
    return typeof found === "string" ? found : "";
  }

  /**
   * A metadata string, asking the source's own method for it when it has one.
   *
   * @param {"namespace" | "name" | "uid" | "resourceVersion"} method
   * @param {readonly string[]} segments
   * @returns {string}
   */
  #metadata(method, segments) {
    return this.#cached(method, () =>
      this.#parsedValue() === undefined && typeof this.#source[method] === "function"
        ? /** @type {Required<ObjectSource>} */ (this.#source)[method]()
        : this.#string(segments),
    );
  }

  /**
   * The object's group/version/kind.
   *
   * @returns {Gvk}
   */
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

  /**
   * Sorted `[key, value]` pairs of `metadata.<field>` (string values only), fetched once.
   *
   * @param {"labels" | "annotations"} field
   * @returns {{ pairs: Array<[string, string]>, object: Readonly<Record<string, string>> }}
   */
  #pairs(field) {
    return this.#cached(field, () => {
      const value = this.#parsedValue();
      let pairs;
      if (value !== undefined) {
        pairs = sortedStringPairs(value?.metadata?.[field]);
      } else if (typeof this.#source[field] === "function") {
        pairs = /** @type {Required<ObjectSource>} */ (this.#source)[field]();
      } else {
        const text = this.#source.get(["metadata", field]);
        pairs = sortedStringPairs(text === undefined ? undefined : JSON.parse(text));
      }
      return { pairs, object: pairsToObject(pairs) };
    });
  }

  /**
   * One label's value, or `undefined`. Asks for that label alone unless all were fetched.
   *
   * @param {string} key
   * @returns {string | undefined}
   */
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

  /**
   * One annotation's value (string annotations only), or `undefined`.
   *
   * @param {string} key
   * @returns {string | undefined}
   */
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
   *
   * @param {PathLike} path
   * @returns {any}
   */
  field(path) {
    const { segments } = FieldPath.from(path);
    const value = this.#parsedValue();
    if (value !== undefined) return valueAt(value, segments);
    const text = this.#source.get(segments);
    if (text === undefined || text === null) return undefined;
    return JSON.parse(text);
  }

  /**
   * The whole object as JSON text; fetched on first use.
   *
   * @returns {string}
   */
  get json() {
    this.#json ??= this.#source.json();
    return this.#json;
  }

  /**
   * The whole object, fetched and parsed on first use; throws if it is not valid JSON.
   *
   * @returns {any}
   */
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

  /**
   * A reference to this object.
   *
   * @returns {ObjectRef}
   */
  toRef() {
    return new ObjectRef(this.gvk, this.namespace, this.name);
  }
}

/**
 * A view of what an Event was given: a view, a source, or a plain value.
 *
 * @param {any} object
 * @returns {ObjectView}
 */
export function viewOf(object) {
  if (object instanceof ObjectView) return object;
  if (typeof object?.json === "function" && typeof object?.get === "function") return new ObjectView(object);
  return ObjectView.of(object);
}

/** Names one object. */
export class ObjectRef {
  /**
   * @param {GvkLike} gvk
   * @param {string} [namespace]
   * @param {string} [name]
   */
  constructor(gvk, namespace = "", name = "") {
    this.gvk = Gvk.from(gvk);
    this.namespace = namespace;
    this.name = name;
  }

  /**
   * A reference to an ObjectView, or to a plain object with `apiVersion`, `kind` and a name (else undefined).
   *
   * @param {ObjectView | object} object
   * @returns {ObjectRef | undefined}
   */
  static of(object) {
    if (object instanceof ObjectView) return object.toRef();
    const { apiVersion, kind, metadata } = /** @type {any} */ (object) ?? {};
    if (typeof apiVersion !== "string" || typeof kind !== "string" || typeof metadata?.name !== "string") return undefined;
    return new ObjectRef(Gvk.fromApiVersion(apiVersion, kind), metadata.namespace ?? "", metadata.name);
  }
}
