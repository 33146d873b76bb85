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
// `sdk/js/build.mjs` turns it into a component. The SDK has no dependencies
// and imports nothing from the host: inside a component the build wires the
// host's interfaces in, and under node (`node --test`) the same code runs
// against the stand-ins in `testing`.
//
// This file is the SDK's only public module: it names what plugins may
// use. The code is in src/, one module per concept, which rolldown bundles
// into the plugin's one module anyway, so the split costs a plugin nothing
// at run time. Types come from the JSDoc there; types/ holds the
// declarations tsc generates from it (see README.md, "Types").

export { exportAnalyzer, exportFilter, exportNotifier } from "./src/adapters.js";
export { Cache } from "./src/cache.js";
export { Config, ConfigError } from "./src/config.js";
export { Event } from "./src/event.js";
export { DeliveryError, GiveUp, Http, HttpRequest, HttpResponse, Retry } from "./src/http.js";
export { Interest } from "./src/interest.js";
export { Gvk, KindPattern } from "./src/kinds.js";
export { log } from "./src/log.js";
export { FieldPath } from "./src/paths.js";
export { Relationship } from "./src/relationship.js";
export { Requirement } from "./src/requirement.js";
export { SelectorError } from "./src/selector-parser.js";
export { LabelSelector } from "./src/selector.js";
export { testing } from "./src/testing.js";
export { JsonSource, ObjectRef, ObjectView } from "./src/view.js";

// The public types that are not classes.
/** @typedef {import("./src/adapters.js").FilterDefinition} FilterDefinition */
/** @typedef {import("./src/adapters.js").NotifierDefinition} NotifierDefinition */
/** @typedef {import("./src/adapters.js").AnalyzerDefinition} AnalyzerDefinition */
/** @typedef {import("./src/adapters.js").FilterExport} FilterExport */
/** @typedef {import("./src/adapters.js").NotifierExport} NotifierExport */
/** @typedef {import("./src/adapters.js").AnalyzerExport} AnalyzerExport */
/** @typedef {import("./src/config.js").Required} Required */
/**
 * @template T
 * @typedef {import("./src/config.js").Optional<T>} Optional
 */
/** @typedef {import("./src/http.js").Body} Body */
/** @typedef {import("./src/http.js").Headers} Headers */
/** @typedef {import("./src/interest.js").EventType} EventType */
/** @typedef {import("./src/interest.js").Origin} Origin */
/** @typedef {import("./src/interest.js").InterestInit} InterestInit */
/** @typedef {import("./src/kinds.js").GvkLike} GvkLike */
/** @typedef {import("./src/log.js").LogLevel} LogLevel */
/** @typedef {import("./src/paths.js").PathLike} PathLike */
/** @typedef {import("./src/relationship.js").Direction} Direction */
/** @typedef {import("./src/selector.js").LabelsLike} LabelsLike */
/** @typedef {import("./src/requirement.js").Operator} Operator */
/** @typedef {import("./src/view.js").ObjectSource} ObjectSource */
/** @typedef {import("./src/view.js").ObjectLike} ObjectLike */
