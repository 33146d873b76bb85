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
export type FilterDefinition = import("./src/adapters.js").FilterDefinition;
export type NotifierDefinition = import("./src/adapters.js").NotifierDefinition;
export type AnalyzerDefinition = import("./src/adapters.js").AnalyzerDefinition;
export type FilterExport = import("./src/adapters.js").FilterExport;
export type NotifierExport = import("./src/adapters.js").NotifierExport;
export type AnalyzerExport = import("./src/adapters.js").AnalyzerExport;
export type Required = import("./src/config.js").Required;
export type Optional<T> = import("./src/config.js").Optional<T>;
export type Body = import("./src/http.js").Body;
export type Headers = import("./src/http.js").Headers;
export type EventType = import("./src/interest.js").EventType;
export type Origin = import("./src/interest.js").Origin;
export type InterestInit = import("./src/interest.js").InterestInit;
export type GvkLike = import("./src/kinds.js").GvkLike;
export type LogLevel = import("./src/log.js").LogLevel;
export type PathLike = import("./src/paths.js").PathLike;
export type Direction = import("./src/relationship.js").Direction;
export type LabelsLike = import("./src/selector.js").LabelsLike;
export type Operator = import("./src/requirement.js").Operator;
export type ObjectSource = import("./src/view.js").ObjectSource;
export type ObjectLike = import("./src/view.js").ObjectLike;
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
