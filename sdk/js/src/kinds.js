// Kubernetes kinds: a group/version/kind (Gvk), and the patterns an
// Interest names kinds with.

import { describe, isPlainObject } from "./values.js";

/** @import { WitGvk } from "./host.js" */

/**
 * A Gvk, or anything with its parts; a part left out is empty.
 *
 * @typedef {Gvk | { group?: string, version?: string, kind?: string }} GvkLike
 */

/** A Kubernetes group/version/kind; `group` is empty for the core group. */
export class Gvk {
  /**
   * @param {string} [group]
   * @param {string} [version]
   * @param {string} [kind]
   */
  constructor(group = "", version = "", kind = "") {
    this.group = group;
    this.version = version;
    this.kind = kind;
  }

  /**
   * Splits an object's `apiVersion` (`apps/v1`, or `v1` for the core group) and pairs it with `kind`.
   *
   * @param {string} apiVersion
   * @param {string} kind
   * @returns {Gvk}
   */
  static fromApiVersion(apiVersion, kind) {
    const slash = apiVersion.indexOf("/");
    return slash < 0
      ? new Gvk("", apiVersion, kind)
      : new Gvk(apiVersion.slice(0, slash), apiVersion.slice(slash + 1), kind);
  }

  /**
   * A Gvk from another, or from any `{group, version, kind}`.
   *
   * @param {GvkLike} value
   * @returns {Gvk}
   */
  static from(value) {
    if (value instanceof Gvk) return value;
    if (!isPlainObject(value)) throw new TypeError(`expected {group, version, kind}, got ${describe(value)}`);
    return new Gvk(value.group ?? "", value.version ?? "", value.kind ?? "");
  }

  /** `group/version`, or just `version` for the core group. */
  get apiVersion() {
    return this.group === "" ? this.version : `${this.group}/${this.version}`;
  }

  /**
   * @param {GvkLike} other
   * @returns {boolean}
   */
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
  /** @param {{ group?: string, version?: string, kind?: string }} [parts] */
  constructor({ group, version, kind } = {}) {
    this.group = group;
    this.version = version;
    this.kind = kind;
  }

  static any() {
    return new KindPattern();
  }

  /**
   * A kind in any group and version: `KindPattern.kind("Pod")`.
   *
   * @param {string} kind
   */
  static kind(kind) {
    return new KindPattern({ kind });
  }

  /**
   * A kind in one group, any version; `""` is the core group.
   *
   * @param {string} group
   * @param {string} kind
   */
  static groupKind(group, kind) {
    return new KindPattern({ group, kind });
  }

  /**
   * Exactly one group/version/kind.
   *
   * @param {string} group
   * @param {string} version
   * @param {string} kind
   */
  static gvk(group, version, kind) {
    return new KindPattern({ group, version, kind });
  }

  /**
   * Every kind of one API group.
   *
   * @param {string} group
   */
  static group(group) {
    return new KindPattern({ group });
  }

  /**
   * A pattern from a kind name (`"Pod"`), a pattern, or `{group?, version?, kind?}`.
   *
   * @param {string | KindPattern | { group?: string, version?: string, kind?: string }} value
   * @returns {KindPattern}
   */
  static from(value) {
    if (value instanceof KindPattern) return value;
    if (typeof value === "string") return KindPattern.kind(value);
    if (!isPlainObject(value)) throw new TypeError(`expected a kind name or {group?, version?, kind?}, got ${describe(value)}`);
    return new KindPattern(value);
  }

  /**
   * @param {GvkLike} gvk
   * @returns {boolean}
   */
  matches(gvk) {
    /** @type {(pattern: string | undefined, value: string | undefined) => boolean} */
    const part = (pattern, value) => pattern === undefined || pattern === value;
    return part(this.group, gvk.group) && part(this.version, gvk.version) && part(this.kind, gvk.kind);
  }
}

/**
 * A Gvk as WIT's `gvk` record, for the host's imports and the adapters' answers.
 *
 * @param {GvkLike} gvk
 * @returns {WitGvk}
 */
export function witGvk(gvk) {
  const { group, version, kind } = Gvk.from(gvk);
  return { group, version, kind };
}
