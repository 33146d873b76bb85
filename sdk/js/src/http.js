// Outbound HTTP for notifiers: requests and responses, the rules that turn
// an answer into delivered, Retry or GiveUp, and the host's `send` behind
// them.

import { hostPart } from "./host.js";
import { describe, messageOf } from "./values.js";

/** @typedef {string | Uint8Array | ArrayBuffer | ArrayBufferView | number[]} Body */
/** @typedef {Array<[string, string]>} Headers */

const encoder = /* @__PURE__ */ new TextEncoder();
const decoder = /* @__PURE__ */ new TextDecoder();

/**
 * @param {Body | undefined | null} body
 * @returns {Uint8Array}
 */
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
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "Retry";
  }
}

/** Will never succeed (rejected as invalid). */
export class GiveUp extends DeliveryError {
  /** @param {string} message */
  constructor(message) {
    super(message);
    this.name = "GiveUp";
  }
}

/** An HTTP request a notifier sends through GRW. */
export class HttpRequest {
  /**
   * @param {string} method
   * @param {string} url
   * @param {{ headers?: Headers, body?: Body }} [init]
   */
  constructor(method, url, { headers = [], body } = {}) {
    this.method = method;
    this.url = url;
    /** @type {Headers} */
    this.headers = headers.map(([name, value]) => [String(name), String(value)]);
    this.body = bytesOf(body);
  }

  /** @param {string} url */
  static get(url) {
    return new HttpRequest("GET", url);
  }

  /** @param {string} url */
  static post(url) {
    return new HttpRequest("POST", url);
  }

  /** @param {string} url */
  static put(url) {
    return new HttpRequest("PUT", url);
  }

  /**
   * Adds a header.
   *
   * @param {string} name
   * @param {string} value
   * @returns {this}
   */
  header(name, value) {
    this.headers.push([String(name), String(value)]);
    return this;
  }

  /**
   * Sets the body: a string (sent as UTF-8) or bytes.
   *
   * @param {Body} body
   * @returns {this}
   */
  withBody(body) {
    this.body = bytesOf(body);
    return this;
  }

  /**
   * Sets a JSON body and the `content-type: application/json` header.
   *
   * @param {unknown} value
   * @returns {this}
   */
  json(value) {
    const text = JSON.stringify(value);
    if (text === undefined) throw new TypeError(`cannot encode ${typeof value} as JSON`);
    return this.header("content-type", "application/json").withBody(text);
  }

  /** The body as text. */
  get bodyText() {
    return decoder.decode(this.body);
  }

  /**
   * The body parsed as JSON.
   *
   * @returns {any}
   */
  bodyJson() {
    return JSON.parse(this.bodyText);
  }
}

/** The answer to an HttpRequest. */
export class HttpResponse {
  /**
   * @param {number} status
   * @param {{ headers?: Headers, body?: Body }} [init]
   */
  constructor(status, { headers = [], body } = {}) {
    this.status = status;
    this.headers = headers;
    this.body = bytesOf(body);
  }

  /**
   * The first value of a header; names compare case-insensitively.
   *
   * @param {string} name
   * @returns {string | undefined}
   */
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

  /**
   * The body parsed as JSON.
   *
   * @returns {any}
   */
  json() {
    return JSON.parse(this.text);
  }

  /**
   * Throws the matching DeliveryError for a failure status: 408, 429 and
   * 5xx are worth retrying, other 4xx are not. Any other status returns the
   * response.
   *
   * @returns {this}
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
  /**
   * Sends a request; throws an Error saying why when it cannot be sent. Error statuses are answers, not errors.
   *
   * @param {HttpRequest} _request
   * @returns {HttpResponse}
   */
  send(_request) {
    throw new Error("Http.send is not implemented");
  }

  /**
   * Sends a request and judges the outcome: 2xx returns the response;
   * failures to send, 408, 429 and 5xx throw Retry; any other status throws
   * GiveUp (GRW does not follow redirects, so a 3xx means the URL needs
   * fixing).
   *
   * @param {HttpRequest} request
   * @returns {HttpResponse}
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

  /**
   * POSTs `value` as JSON to `url` and judges the outcome as `deliver` does.
   *
   * @param {string} url
   * @param {unknown} value
   * @param {{ headers?: Headers }} [options]
   * @returns {HttpResponse}
   */
  postJson(url, value, { headers = [] } = {}) {
    const request = HttpRequest.post(url);
    for (const [name, v] of headers) request.header(name, v);
    return this.deliver(request.json(value));
  }
}

/** The Http `deliver` receives inside a component: the host's `send`. */
export class HostHttp extends Http {
  /**
   * @param {HttpRequest} request
   * @returns {HttpResponse}
   */
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
