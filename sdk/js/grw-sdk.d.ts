// Types for grw-sdk.js: GRW plugins in JavaScript (grw:plugin@0.2.0).

export type EventType = "ADDED" | "MODIFIED" | "DELETED";
export type Origin = "initial" | "watch" | "relist";
export type LogLevel = "trace" | "debug" | "info" | "warn" | "error";
/** A path: dotted (`spec.replicas`), a JSON pointer (`/a/b`), segments, or a FieldPath. */
export type PathLike = string | readonly string[] | FieldPath;
/** Anything labels can be looked up in. */
export type LabelsLike =
  | { label(key: string): string | undefined }
  | Readonly<Record<string, string>>
  | ReadonlyMap<string, string>
  | ReadonlyArray<readonly [string, string]>
  | ((key: string) => string | undefined);
export type GvkLike = Gvk | { group?: string; version?: string; kind?: string };

export declare const log: {
  log(level: LogLevel, message: unknown): void;
  trace(message: unknown): void;
  debug(message: unknown): void;
  info(message: unknown): void;
  warn(message: unknown): void;
  error(message: unknown): void;
};

export declare class Gvk {
  constructor(group?: string, version?: string, kind?: string);
  static fromApiVersion(apiVersion: string, kind: string): Gvk;
  static from(value: GvkLike): Gvk;
  group: string;
  version: string;
  kind: string;
  readonly apiVersion: string;
  equals(other: GvkLike): boolean;
  toString(): string;
}

export declare class KindPattern {
  constructor(parts?: { group?: string; version?: string; kind?: string });
  static any(): KindPattern;
  static kind(kind: string): KindPattern;
  static groupKind(group: string, kind: string): KindPattern;
  static gvk(group: string, version: string, kind: string): KindPattern;
  static group(group: string): KindPattern;
  static from(value: string | KindPattern | { group?: string; version?: string; kind?: string }): KindPattern;
  group?: string;
  version?: string;
  kind?: string;
  matches(gvk: GvkLike): boolean;
}

export interface InterestInit {
  kinds?: Array<string | KindPattern | { group?: string; version?: string; kind?: string }>;
  eventTypes?: Array<EventType | Lowercase<EventType>>;
}

export declare class Interest {
  constructor(init?: InterestInit);
  static all(): Interest;
  static from(value: Interest | InterestInit | undefined | null): Interest;
  readonly kinds: KindPattern[];
  readonly eventTypes: EventType[];
  matches(gvk: GvkLike, eventType: EventType): boolean;
  matchesEvent(event: Event): boolean;
}

export declare class FieldPath {
  static parse(text: string): FieldPath;
  static from(path: PathLike): FieldPath;
  readonly text: string;
  readonly segments: readonly string[];
  get(value: unknown): unknown;
  covers(other: FieldPath | readonly string[]): boolean;
  toString(): string;
  toJSON(): string;
}

/** What an ObjectView reads from: GRW's `object` resource, or anything with the same methods. */
export interface ObjectSource {
  json(): string;
  get(path: string[]): string | undefined;
  labels?(): Array<[string, string]>;
  annotations?(): Array<[string, string]>;
  label?(key: string): string | undefined;
  annotation?(key: string): string | undefined;
  gvk?(): { group: string; version: string; kind: string };
  namespace?(): string;
  name?(): string;
  uid?(): string;
  resourceVersion?(): string;
}

export declare class JsonSource implements ObjectSource {
  constructor(value: unknown);
  json(): string;
  get(path: string[]): string | undefined;
  labels(): Array<[string, string]>;
  annotations(): Array<[string, string]>;
}

export declare class ObjectView {
  constructor(source: ObjectSource);
  static of(value: unknown): ObjectView;
  readonly source: ObjectSource;
  readonly gvk: Gvk;
  readonly kind: string;
  readonly apiVersion: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly isClusterScoped: boolean;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  /** The whole object as JSON text. */
  readonly json: string;
  /** The whole object, parsed once; throws if it is not valid JSON. */
  readonly object: any;
  label(key: string): string | undefined;
  annotation(key: string): string | undefined;
  field(path: PathLike): any;
  toRef(): ObjectRef;
}

export type ObjectLike = ObjectView | ObjectSource | object;

export declare class Event {
  constructor(type: EventType | Lowercase<EventType>, object: ObjectLike, options?: { oldObject?: ObjectLike; origin?: Origin });
  readonly type: EventType;
  readonly origin: Origin;
  readonly view: ObjectView;
  readonly oldView: ObjectView | undefined;
  readonly gvk: Gvk;
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  readonly isClusterScoped: boolean;
  readonly hasOldObject: boolean;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly object: any;
  readonly oldObject: any;
  readonly objectJson: string;
  readonly oldObjectJson: string | undefined;
  label(key: string): string | undefined;
  annotation(key: string): string | undefined;
  field(path: PathLike): any;
  oldField(path: PathLike): any;
  toString(): string;
}

export declare class SelectorError extends Error {
  readonly input: string;
  readonly reason: string;
  /** 0-based, in characters. */
  readonly position: number;
}

export type Operator = "equals" | "notEquals" | "in" | "notIn" | "exists" | "doesNotExist" | "greaterThan" | "lessThan";

export declare class Requirement {
  constructor(key: string, operator: Operator, valueOrValues?: string | string[] | bigint | number);
  readonly key: string;
  readonly operator: Operator;
  /** `equals`/`notEquals`: a string; `greaterThan`/`lessThan`: a bigint. */
  readonly value?: string | bigint;
  /** `in`/`notIn`: sorted, without duplicates. */
  readonly values?: string[];
  matches(value: string | undefined): boolean;
  toString(): string;
}

export declare class LabelSelector {
  constructor(requirements?: Requirement[]);
  static parse(text: string): LabelSelector;
  static everything(): LabelSelector;
  readonly requirements: readonly Requirement[];
  readonly isEmpty: boolean;
  matches(labels: LabelsLike | undefined | null): boolean;
  toString(): string;
  toJSON(): string;
}

export declare class ConfigError extends Error {}

export interface Required {
  required: true;
}
export interface Optional<T> {
  required?: false;
  default?: T;
}
type Options<T, Extra = {}> = (Required | Optional<T>) & Extra;
type Result<T, O> = O extends Required ? T : O extends { default: T } ? T : T | undefined;
interface Bounds {
  minimum?: number;
  maximum?: number;
}
interface OneOf {
  oneOf?: readonly string[];
}

export declare class Config {
  constructor(value?: object);
  static parse(text: string | object | Config): Config;
  /** The whole configuration; reading it turns the unknown-key check off. */
  readonly value: Record<string, unknown>;
  readonly accepted: string[];
  has(key: string): boolean;
  string<O extends Options<string, OneOf> = {}>(key: string, options?: O): Result<string, O>;
  strings<O extends Options<string[], OneOf> = {}>(key: string, options?: O): Result<string[], O>;
  int<O extends Options<number, Bounds> = {}>(key: string, options?: O): Result<number, O>;
  number<O extends Options<number, Bounds> = {}>(key: string, options?: O): Result<number, O>;
  bool<O extends Options<boolean> = {}>(key: string, options?: O): Result<boolean, O>;
  fieldPath<O extends Options<FieldPath> = {}>(key: string, options?: O): Result<FieldPath, O>;
  fieldPaths<O extends Options<FieldPath[]> = {}>(key: string, options?: O): Result<FieldPath[], O>;
  selector<O extends Options<LabelSelector> = {}>(key: string, options?: O): Result<LabelSelector, O>;
  object<O extends Options<Record<string, unknown>> = {}>(key: string, options?: O): Result<Record<string, unknown>, O>;
  any<O extends Options<unknown> = {}>(key: string, options?: O): unknown;
  finish(): void;
}

export declare class DeliveryError extends Error {}
export declare class Retry extends DeliveryError {
  constructor(message: string);
}
export declare class GiveUp extends DeliveryError {
  constructor(message: string);
}

export type Body = string | Uint8Array | ArrayBuffer | ArrayBufferView | number[];
export type Headers = Array<[string, string]>;

export declare class HttpRequest {
  constructor(method: string, url: string, init?: { headers?: Headers; body?: Body });
  static get(url: string): HttpRequest;
  static post(url: string): HttpRequest;
  static put(url: string): HttpRequest;
  method: string;
  url: string;
  headers: Headers;
  body: Uint8Array;
  header(name: string, value: string): this;
  withBody(body: Body): this;
  json(value: unknown): this;
  readonly bodyText: string;
  bodyJson(): any;
}

export declare class HttpResponse {
  constructor(status: number, init?: { headers?: Headers; body?: Body });
  status: number;
  headers: Headers;
  body: Uint8Array;
  readonly isSuccess: boolean;
  readonly text: string;
  header(name: string): string | undefined;
  json(): any;
  /** Throws Retry for 408, 429 and 5xx, GiveUp for other 4xx; returns the response otherwise. */
  errorForStatus(): this;
}

export declare class Http {
  send(request: HttpRequest): HttpResponse;
  deliver(request: HttpRequest): HttpResponse;
  postJson(url: string, value: unknown, options?: { headers?: Headers }): HttpResponse;
}

export declare class ObjectRef {
  constructor(gvk: GvkLike, namespace?: string, name?: string);
  static of(object: ObjectView | object): ObjectRef | undefined;
  gvk: Gvk;
  namespace: string;
  name: string;
}

export type Direction = "outgoing" | "incoming";

export declare class Relationship {
  constructor(relation: string, direction: Direction, target: ObjectRef | { gvk: GvkLike; namespace: string; name: string }, attributes?: Array<[string, string]>);
  static outgoing(relation: string, target: ObjectRef): Relationship;
  static incoming(relation: string, source: ObjectRef): Relationship;
  relation: string;
  direction: Direction;
  target: ObjectRef;
  attributes: Array<[string, string]>;
  with(key: string, value: string): this;
}

export declare class Cache {
  get(gvk: GvkLike, namespace: string, name: string): ObjectView | undefined;
  list(gvk: GvkLike, namespace?: string, selector?: string | LabelSelector): ObjectView[];
  ownedBy(gvk: GvkLike, ownerUid: string): ObjectView[];
}

type InitResult = Interest | InterestInit | undefined | void;

export interface FilterDefinition {
  init?(config: Config): InitResult;
  decide(event: Event): boolean;
}
export interface NotifierDefinition {
  init?(config: Config): InitResult;
  deliver(event: Event, http: Http): void;
}
export interface AnalyzerDefinition {
  init?(config: Config): InitResult;
  analyze(object: ObjectView, cache: Cache): Iterable<Relationship>;
}

/** The WIT-level export objects componentize-js calls. */
export interface FilterExport {
  init(config: string): unknown;
  decide(event: unknown, object: unknown, oldObject?: unknown): boolean;
}
export interface NotifierExport {
  init(config: string): unknown;
  deliver(event: unknown, object: unknown, oldObject?: unknown): unknown;
}
export interface AnalyzerExport {
  init(config: string): unknown;
  analyze(object: unknown): unknown[];
}

export declare function exportFilter<T extends FilterDefinition>(definition: T & ThisType<T & Record<string, any>>): FilterExport;
export declare function exportNotifier<T extends NotifierDefinition>(definition: T & ThisType<T & Record<string, any>>): NotifierExport;
export declare function exportAnalyzer<T extends AnalyzerDefinition>(definition: T & ThisType<T & Record<string, any>>): AnalyzerExport;

declare class HostObject extends JsonSource {
  constructor(value: unknown);
  readonly value: unknown;
  /** Each request, as `[method, ...arguments]`. */
  readonly calls: Array<[string, ...unknown[]]>;
  label(key: string): string | undefined;
  annotation(key: string): string | undefined;
  gvk(): { group: string; version: string; kind: string };
  namespace(): string;
  name(): string;
  uid(): string;
  resourceVersion(): string;
}

declare class MemoryCache extends Cache {
  constructor(objects?: object[]);
  with(object: object): this;
  insert(object: object): void;
  readonly size: number;
}

declare class RecordingHttp extends Http {
  readonly requests: HttpRequest[];
  respond(response: HttpResponse | number, body?: Body): this;
  fail(reason: string): this;
}

export declare const testing: {
  event(type: EventType | Lowercase<EventType>, object: ObjectLike, options?: { oldObject?: ObjectLike; origin?: Origin }): Event;
  init<T extends object>(definition: T, config?: object | string): { plugin: T & Record<string, any>; interest: Interest };
  HostObject: typeof HostObject;
  MemoryCache: typeof MemoryCache;
  RecordingHttp: typeof RecordingHttp;
};
