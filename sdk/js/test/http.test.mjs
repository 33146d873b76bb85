import assert from "node:assert/strict";
import { test } from "node:test";

import { DeliveryError, GiveUp, Http, HttpRequest, HttpResponse, Retry, testing } from "../grw-sdk.js";

test("building requests", () => {
  const request = HttpRequest.put("http://x/y").header("a", "1").json({ k: 1 });
  assert.equal(request.method, "PUT");
  assert.equal(request.url, "http://x/y");
  assert.deepEqual(request.headers, [
    ["a", "1"],
    ["content-type", "application/json"],
  ]);
  assert.equal(request.bodyText, '{"k":1}');
  assert.deepEqual(request.bodyJson(), { k: 1 });
  assert.deepEqual(HttpRequest.get("u").withBody("b").body, new TextEncoder().encode("b"));
  assert.deepEqual(HttpRequest.post("u").withBody([1, 2]).body, new Uint8Array([1, 2]));
  assert.equal(HttpRequest.post("u").body.length, 0);
  assert.throws(() => HttpRequest.post("u").json(undefined), /cannot encode undefined as JSON/);
});

test("statuses map to retry or give up", () => {
  assert.ok(new HttpResponse(204).errorForStatus() instanceof HttpResponse);
  assert.ok(new HttpResponse(301).errorForStatus() instanceof HttpResponse);
  assert.throws(() => new HttpResponse(503).errorForStatus(), Retry);
  assert.throws(() => new HttpResponse(429).errorForStatus(), Retry);
  assert.throws(() => new HttpResponse(408).errorForStatus(), Retry);
  assert.throws(() => new HttpResponse(400, { body: "bad field" }).errorForStatus(), {
    name: "GiveUp",
    message: "receiver answered 400: bad field",
  });
  assert.throws(() => new HttpResponse(404, { body: "  \n" }).errorForStatus(), { message: "receiver answered 404" });
  // Long answers are cut to 200 characters.
  assert.throws(() => new HttpResponse(500, { body: "é".repeat(300) }).errorForStatus(), {
    message: `receiver answered 500: ${"é".repeat(200)}`,
  });
  const retry = new Retry("later");
  assert.ok(retry instanceof DeliveryError && retry instanceof Error);
  assert.ok(!(new GiveUp("never") instanceof Retry));
});

/** Answers every request with one status and the body `why`, or fails to send. */
class Fixed extends Http {
  constructor(answer) {
    super();
    this.answer = answer;
  }

  send() {
    if (typeof this.answer === "string") throw new Error(this.answer);
    return new HttpResponse(this.answer, { body: "why" });
  }
}

test("deliver judges the outcome", () => {
  const request = HttpRequest.post("http://hook");
  const outcome = (answer) => {
    try {
      return new Fixed(answer).deliver(request).status;
    } catch (e) {
      return [e.name, e.message];
    }
  };
  assert.equal(outcome(200), 200);
  assert.equal(outcome(204), 204);
  for (const status of [408, 429, 500, 503]) {
    assert.deepEqual(outcome(status), ["Retry", `receiver answered ${status}: why`]);
  }
  assert.deepEqual(outcome("host x:443 is not allowed: ..."), ["Retry", "host x:443 is not allowed: ..."]);
  assert.deepEqual(outcome(404), ["GiveUp", "receiver answered 404: why"]);
  const [kind, message] = outcome(302);
  assert.equal(kind, "GiveUp");
  assert.ok(message.startsWith("receiver answered 302; GRW does not follow redirects"), message);
});

test("postJson posts JSON and judges the answer", () => {
  const http = new testing.RecordingHttp().respond(503).respond(301);
  assert.throws(() => http.postJson("https://hooks.example.com/grw", { text: "hi" }), Retry);
  assert.throws(() => http.postJson("https://hooks.example.com/grw", { text: "hi" }), GiveUp);
  const response = http.postJson("https://hooks.example.com/grw", { text: "hi" }, { headers: [["authorization", "Bearer t"]] });
  assert.equal(response.status, 200);
  assert.equal(http.requests.length, 3);
  const last = http.requests[2];
  assert.equal(last.method, "POST");
  assert.deepEqual(last.headers, [
    ["authorization", "Bearer t"],
    ["content-type", "application/json"],
  ]);
  assert.deepEqual(last.bodyJson(), { text: "hi" });
});

test("the recording client scripts its answers", () => {
  const http = new testing.RecordingHttp().fail("host not allowed").respond(new HttpResponse(201, { body: '{"ok":true}' }));
  const request = HttpRequest.post("http://a");
  assert.throws(() => http.send(request), { message: "host not allowed" });
  const created = http.send(request);
  assert.equal(created.status, 201);
  assert.deepEqual(created.json(), { ok: true });
  assert.equal(http.send(request).status, 200);
  assert.deepEqual(http.requests, [request, request, request]);
});

test("response helpers", () => {
  const response = new HttpResponse(200, { headers: [["Content-Type", "text/plain"]], body: "ok" });
  assert.ok(response.isSuccess);
  assert.equal(response.header("content-type"), "text/plain");
  assert.equal(response.header("x-missing"), undefined);
  assert.equal(response.text, "ok");
  assert.equal(new HttpResponse(200, { body: new Uint8Array([0xff]) }).text, "\ufffd");
});
