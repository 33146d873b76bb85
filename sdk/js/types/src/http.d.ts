export type Body = string | Uint8Array | ArrayBuffer | ArrayBufferView | number[];
export type Headers = Array<[string, string]>;
/** Why a delivery failed; throw a Retry or a GiveUp from `deliver`. */
export declare class DeliveryError extends Error {
}
/** Worth trying again later (receiver down, 5xx, timeout). */
export declare class Retry extends DeliveryError {
    /** @param {string} message */
    constructor(message: string);
}
/** Will never succeed (rejected as invalid). */
export declare class GiveUp extends DeliveryError {
    /** @param {string} message */
    constructor(message: string);
}
/** An HTTP request a notifier sends through GRW. */
export declare class HttpRequest {
    method: string;
    url: string;
    /** @type {Headers} */
    headers: Headers;
    body: Uint8Array<ArrayBufferLike>;
    /**
     * @param {string} method
     * @param {string} url
     * @param {{ headers?: Headers, body?: Body }} [init]
     */
    constructor(method: string, url: string, { headers, body }?: {
        headers?: Headers;
        body?: Body;
    });
    /** @param {string} url */
    static get(url: string): HttpRequest;
    /** @param {string} url */
    static post(url: string): HttpRequest;
    /** @param {string} url */
    static put(url: string): HttpRequest;
    /**
     * Adds a header.
     *
     * @param {string} name
     * @param {string} value
     * @returns {this}
     */
    header(name: string, value: string): this;
    /**
     * Sets the body: a string (sent as UTF-8) or bytes.
     *
     * @param {Body} body
     * @returns {this}
     */
    withBody(body: Body): this;
    /**
     * Sets a JSON body and the `content-type: application/json` header.
     *
     * @param {unknown} value
     * @returns {this}
     */
    json(value: unknown): this;
    /** The body as text. */
    get bodyText(): string;
    /**
     * The body parsed as JSON.
     *
     * @returns {any}
     */
    bodyJson(): any;
}
/** The answer to an HttpRequest. */
export declare class HttpResponse {
    status: number;
    headers: Headers;
    body: Uint8Array<ArrayBufferLike>;
    /**
     * @param {number} status
     * @param {{ headers?: Headers, body?: Body }} [init]
     */
    constructor(status: number, { headers, body }?: {
        headers?: Headers;
        body?: Body;
    });
    /**
     * The first value of a header; names compare case-insensitively.
     *
     * @param {string} name
     * @returns {string | undefined}
     */
    header(name: string): string | undefined;
    /** Whether the status is 2xx. */
    get isSuccess(): boolean;
    /** The body as text, invalid UTF-8 replaced. */
    get text(): string;
    /**
     * The body parsed as JSON.
     *
     * @returns {any}
     */
    json(): any;
    /**
     * Throws the matching DeliveryError for a failure status: 408, 429 and
     * 5xx are worth retrying, other 4xx are not. Any other status returns the
     * response.
     *
     * @returns {this}
     */
    errorForStatus(): this;
}
/**
 * Outbound HTTP, as GRW grants it to notifiers: only to hosts that both the
 * manifest (`allowedHosts`) and the operator allow. `deliver` receives one;
 * in tests, pass a `testing.RecordingHttp`.
 */
export declare class Http {
    /**
     * Sends a request; throws an Error saying why when it cannot be sent. Error statuses are answers, not errors.
     *
     * @param {HttpRequest} _request
     * @returns {HttpResponse}
     */
    send(_request: HttpRequest): HttpResponse;
    /**
     * Sends a request and judges the outcome: 2xx returns the response;
     * failures to send, 408, 429 and 5xx throw Retry; any other status throws
     * GiveUp (GRW does not follow redirects, so a 3xx means the URL needs
     * fixing).
     *
     * @param {HttpRequest} request
     * @returns {HttpResponse}
     */
    deliver(request: HttpRequest): HttpResponse;
    /**
     * POSTs `value` as JSON to `url` and judges the outcome as `deliver` does.
     *
     * @param {string} url
     * @param {unknown} value
     * @param {{ headers?: Headers }} [options]
     * @returns {HttpResponse}
     */
    postJson(url: string, value: unknown, { headers }?: {
        headers?: Headers;
    }): HttpResponse;
}
/** The Http `deliver` receives inside a component: the host's `send`. */
export declare class HostHttp extends Http {
    /**
     * @param {HttpRequest} request
     * @returns {HttpResponse}
     */
    send(request: HttpRequest): HttpResponse;
}
