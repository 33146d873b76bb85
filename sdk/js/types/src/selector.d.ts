import type { Requirement } from "./requirement.js";
export type LabelsLike = {
    label(key: string): string | undefined;
} | Readonly<Record<string, string>> | ReadonlyMap<string, string> | ReadonlyArray<readonly [string, string]> | ((key: string) => string | undefined);
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
export declare class LabelSelector {
    /** @readonly */
    requirements: readonly Requirement[];
    /** @param {Requirement[]} [requirements] */
    constructor(requirements?: Requirement[]);
    /**
     * Parses a selector; throws a SelectorError saying what is wrong and where.
     *
     * @param {string} text
     * @returns {LabelSelector}
     */
    static parse(text: string): LabelSelector;
    /** The selector that matches everything. */
    static everything(): LabelSelector;
    get isEmpty(): boolean;
    /**
     * Whether `labels` satisfy every requirement: a `{key: value}` object, a
     * Map, `[key, value]` pairs, a `key => value` function, or anything with a
     * `label(key)` method (Event, ObjectView).
     *
     * @param {LabelsLike | undefined | null} labels
     * @returns {boolean}
     */
    matches(labels: LabelsLike | undefined | null): boolean;
    /** The canonical form, which parses back to the same selector. */
    toString(): string;
    toJSON(): string;
}
