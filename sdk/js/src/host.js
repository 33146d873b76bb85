// The host's side of a component: the imports of the plugin's world, which
// the build's prelude hands over (see build.mjs) instead of the SDK
// importing them, so that the same modules also run under node.

/** @import { ObjectSource } from "./view.js" */

/**
 * A Gvk as WIT's `gvk` record.
 *
 * @typedef {{ group: string, version: string, kind: string }} WitGvk
 */

/**
 * The host's imports, as componentize-js binds them: `log` in every world,
 * `send` (outbound-http) for notifiers, `cache` for analyzers.
 *
 * @typedef {object} HostImports
 * @property {(level: string, message: string) => void} [log]
 * @property {(request: { method: string, url: string, headers: Array<[string, string]>, body: Uint8Array }) =>
 *   { status: number, headers: Array<[string, string]>, body: Uint8Array }} [send]
 * @property {{
 *   get(gvk: WitGvk, namespace: string, name: string): ObjectSource | undefined,
 *   list(gvk: WitGvk, namespace: string, selector: string): ObjectSource[],
 *   ownedBy(gvk: WitGvk, ownerUid: string): ObjectSource[],
 * }} [cache]
 */

/** Where the build puts the host's imports (`log`, `send`, `cache`). */
const HOST = Symbol.for("grw-sdk.host");

/** @returns {HostImports | undefined} */
export function host() {
  return /** @type {any} */ (globalThis)[HOST];
}

/**
 * One of the host's imports; throws where the world does not grant it.
 *
 * @template {keyof HostImports} K
 * @param {K} name
 * @returns {NonNullable<HostImports[K]>}
 */
export function hostPart(name) {
  const part = host()?.[name];
  if (part === undefined) {
    throw new Error(`the host's ${name} interface is not available here: it is imported only by the worlds that grant it`);
  }
  return part;
}
