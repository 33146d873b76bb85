// Lookups into GRW's caches, for analyzers: the Cache an analyzer receives,
// and the host's `cache` interface behind it.

import { hostPart } from "./host.js";
import { witGvk } from "./kinds.js";
import { LabelSelector } from "./selector.js";
import { messageOf } from "./values.js";
import { ObjectView } from "./view.js";

/** @import { GvkLike } from "./kinds.js" */

/** @param {string | LabelSelector} selector */
function selectorText(selector) {
  return selector instanceof LabelSelector ? selector.toString() : selector;
}

/**
 * Read-only lookups into GRW's caches; answers are ObjectViews. GRW records
 * each lookup an analyzer makes and analyzes again when a change would
 * answer it differently. In tests, use `testing.MemoryCache`.
 */
export class Cache {
  /**
   * One object (`namespace` empty for cluster-scoped ones), or undefined.
   *
   * @param {GvkLike} _gvk
   * @param {string} _namespace
   * @param {string} _name
   * @returns {ObjectView | undefined}
   */
  get(_gvk, _namespace, _name) {
    throw new Error("Cache.get is not implemented");
  }

  /**
   * Objects of a kind, in one namespace (`""`: all) matching a label selector (`""`: all); throws on a bad selector.
   *
   * @param {GvkLike} _gvk
   * @param {string} [_namespace]
   * @param {string | LabelSelector} [_selector]
   * @returns {ObjectView[]}
   */
  list(_gvk, _namespace = "", _selector = "") {
    throw new Error("Cache.list is not implemented");
  }

  /**
   * Objects of a kind with an owner reference to `ownerUid`.
   *
   * @param {GvkLike} _gvk
   * @param {string} _ownerUid
   * @returns {ObjectView[]}
   */
  ownedBy(_gvk, _ownerUid) {
    throw new Error("Cache.ownedBy is not implemented");
  }
}

/** The Cache `analyze` receives inside a component: the host's `cache` interface. */
export class HostCache extends Cache {
  /**
   * @param {GvkLike} gvk
   * @param {string} namespace
   * @param {string} name
   */
  get(gvk, namespace, name) {
    const object = hostPart("cache").get(witGvk(gvk), namespace, name);
    return object === undefined ? undefined : new ObjectView(object);
  }

  /**
   * @param {GvkLike} gvk
   * @param {string} [namespace]
   * @param {string | LabelSelector} [selector]
   */
  list(gvk, namespace = "", selector = "") {
    try {
      return hostPart("cache").list(witGvk(gvk), namespace, selectorText(selector)).map((o) => new ObjectView(o));
    } catch (e) {
      throw new Error(messageOf(e));
    }
  }

  /**
   * @param {GvkLike} gvk
   * @param {string} ownerUid
   */
  ownedBy(gvk, ownerUid) {
    return hostPart("cache").ownedBy(witGvk(gvk), ownerUid).map((o) => new ObjectView(o));
  }
}
