import type { ObjectSource } from "./view.js";
export type WitGvk = {
    group: string;
    version: string;
    kind: string;
};
export type HostImports = {
    log?: (level: string, message: string) => void;
    send?: (request: {
        method: string;
        url: string;
        headers: Array<[string, string]>;
        body: Uint8Array;
    }) => {
        status: number;
        headers: Array<[string, string]>;
        body: Uint8Array;
    };
    cache?: {
        get(gvk: WitGvk, namespace: string, name: string): ObjectSource | undefined;
        list(gvk: WitGvk, namespace: string, selector: string): ObjectSource[];
        ownedBy(gvk: WitGvk, ownerUid: string): ObjectSource[];
    };
};
/** @returns {HostImports | undefined} */
export declare function host(): HostImports | undefined;
/**
 * One of the host's imports; throws where the world does not grant it.
 *
 * @template {keyof HostImports} K
 * @param {K} name
 * @returns {NonNullable<HostImports[K]>}
 */
export declare function hostPart<K extends keyof HostImports>(name: K): NonNullable<HostImports[K]>;
