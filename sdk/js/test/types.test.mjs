// The SDK's types come from the JSDoc in its modules. These tests fail when
// the code does not type-check against them, when the declarations in
// types/ are not what tsc generates from them today, and when those
// declarations stop typing a plugin the way the README writes one.
//
// tsc is TypeScript from the JavaScript toolchain that tests/setup.sh
// installs, in $GRW_TOOLCHAINS/js/node_modules (default: the repository's
// target/toolchains), at the version setup.sh pins: its output is compared
// byte for byte.

import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { after, test } from "node:test";
import { fileURLToPath } from "node:url";

const sdk = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const toolchains = process.env.GRW_TOOLCHAINS
  ? resolve(process.env.GRW_TOOLCHAINS)
  : join(sdk, "..", "..", "target", "toolchains");
const tsc = join(toolchains, "js", "node_modules", "typescript", "bin", "tsc");
const regenerate = `node ${relative(process.cwd(), tsc)} -p ${relative(process.cwd(), sdk) || "."}`;

const scratch = mkdtempSync(join(tmpdir(), "grw-sdk-types-"));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** Runs tsc with `args` in `cwd`; returns whether it succeeded and what it printed. */
function runTsc(args, cwd = sdk) {
  assert.ok(
    existsSync(tsc),
    `TypeScript is not installed (no ${tsc}); install the JavaScript toolchain with tests/setup.sh, or point GRW_TOOLCHAINS at a directory whose js/node_modules has it`,
  );
  const run = spawnSync(process.execPath, [tsc, ...args], { cwd, encoding: "utf8" });
  return { ok: run.status === 0, output: `${run.stdout}${run.stderr}`.trim() };
}

/** Every file under `dir`, by path relative to it. */
function files(dir, under = "") {
  return readdirSync(join(dir, under), { withFileTypes: true }).flatMap((entry) => {
    const path = join(under, entry.name);
    return entry.isDirectory() ? files(dir, path) : [path];
  });
}

test("the SDK's code type-checks against its JSDoc (tsc --noEmit, strict)", () => {
  const { ok, output } = runTsc(["-p", "tsconfig.json", "--noEmit"]);
  assert.ok(ok, `tsc found type errors in sdk/js:\n${output}`);
});

test("types/ holds the declarations tsc generates from the code", () => {
  const generated = join(scratch, "types");
  const { ok, output } = runTsc(["-p", "tsconfig.json", "--declarationDir", generated]);
  assert.ok(ok, `tsc could not generate the declarations:\n${output}`);
  const committed = join(sdk, "types");
  const want = files(generated).sort();
  const have = existsSync(committed) ? files(committed).sort() : [];
  const problems = [];
  for (const path of want) {
    if (!have.includes(path)) {
      problems.push(`types/${path} is missing`);
      continue;
    }
    const ours = readFileSync(join(committed, path), "utf8").split("\n");
    const theirs = readFileSync(join(generated, path), "utf8").split("\n");
    // The first few lines that differ are enough to see what changed.
    const lines = [];
    for (let i = 0; i < Math.max(ours.length, theirs.length) && lines.length < 4; i++) {
      if (ours[i] === theirs[i]) continue;
      lines.push(`  ${i + 1}: committed ${ours[i]?.trim() ?? "(end of file)"}\n  ${i + 1}: generated ${theirs[i]?.trim() ?? "(end of file)"}`);
    }
    if (lines.length > 0) problems.push(`types/${path} differs:\n${lines.join("\n")}`);
  }
  for (const path of have) if (!want.includes(path)) problems.push(`types/${path} is not generated from any module`);
  if (problems.length > 0) {
    assert.fail(
      `the declarations in sdk/js/types are not what tsc generates from the code's JSDoc; regenerate them with \`rm -r sdk/js/types && ${regenerate}\` and commit them:\n${problems.join("\n")}`,
    );
  }
});

// A plugin of each kind as a TypeScript user would write it, checked
// against the declarations a user gets (grw-sdk.d.ts, and types/ behind it)
// with no DOM library: they must stand on their own. Each
// `@ts-expect-error` line is a mistake the types must catch.
const CONSUMER = `
import {
  Config, ConfigError, Event, FieldPath, GiveUp, Gvk, HttpRequest, HttpResponse, Interest, KindPattern,
  LabelSelector, ObjectRef, ObjectView, Relationship, Retry, exportAnalyzer, exportFilter, exportNotifier,
  log, testing,
} from ${JSON.stringify(join(sdk, "grw-sdk.js"))};
import type { EventType, FilterExport, PathLike } from ${JSON.stringify(join(sdk, "grw-sdk.js"))};

export const filter: FilterExport = exportFilter({
  init(config) {
    this.phases = config.strings("phases", { default: ["Failed"] });
    return new Interest({ kinds: ["Pod", KindPattern.groupKind("apps", "Deployment")], eventTypes: ["ADDED", "modified"] });
  },
  decide(event) {
    const phase: unknown = event.field("status.phase");
    return this.phases.includes(phase) && event.label("app") !== undefined;
  },
});

export const notifier = exportNotifier({
  init(config) {
    this.url = config.string("url", { required: true });
    this.selector = config.selector("selector", { default: LabelSelector.everything() });
  },
  deliver(event, http) {
    if (!this.selector.matches(event)) return;
    http.postJson(this.url, { type: event.type, name: event.name });
    if (event.hasOldObject) throw new Retry("again");
    throw new GiveUp("never");
  },
});

export const analyzer = exportAnalyzer({
  analyze(pod, cache) {
    const owner = cache.get(new Gvk("apps", "v1", "ReplicaSet"), pod.namespace, "rs");
    const listed: ObjectView[] = cache.list({ version: "v1", kind: "Service" }, pod.namespace, "app=web");
    const ref: ObjectRef | undefined = owner ? ObjectRef.of(owner) : undefined;
    return [
      ...(ref ? [Relationship.incoming("owns", ref).with("controller", "true")] : []),
      ...listed.map((service) => Relationship.outgoing("selects", service.toRef())),
    ];
  },
});

declare const config: Config;
const min: number = config.int("minRestarts", { default: 1, minimum: 0 });
const url: string = config.string("url", { required: true });
const channel: string | undefined = config.string("channel", { oneOf: ["#ops"] });
const ignore: FieldPath[] = config.fieldPaths("ignore", { default: [FieldPath.parse("status")] });
// @ts-expect-error a key neither required nor defaulted may be absent
const absent: string = config.string("channel");
// @ts-expect-error the default must have the key's type
config.int("n", { default: "1" });

const type: EventType = testing.event("ADDED", { apiVersion: "v1", kind: "Pod" }).type;
// @ts-expect-error event types are ADDED, MODIFIED and DELETED, in either case
new Event("CHANGED", {});
const path: PathLike = ["spec", "replicas"];
const { plugin, interest } = testing.init({ decide: (event: Event) => event.kind === "Pod" }, { x: 1 });
const decided: boolean = plugin.decide(testing.event("MODIFIED", new testing.HostObject({})));
const matched: boolean = interest.matches(new Gvk("", "v1", "Pod"), "ADDED");
const cache = new testing.MemoryCache().with({ apiVersion: "v1", kind: "Pod", metadata: { name: "a" } });
const size: number = cache.size;
const http = new testing.RecordingHttp().respond(503).respond(new HttpResponse(200, { body: "ok" })).fail("refused");
const sent: HttpRequest[] = http.requests;
const request: HttpRequest = HttpRequest.post("http://x").header("a", "b").json({ a: 1 });
const text: string = http.send(request).errorForStatus().text;
log.info(new ConfigError("x"));
// @ts-expect-error log levels are trace, debug, info, warn and error
log.log("fatal", "x");
export { min, url, channel, ignore, absent, type, path, decided, matched, size, sent, text };
`;

test("the declarations type plugins as the README writes them", () => {
  const dir = join(scratch, "consumer");
  mkdirSync(dir);
  writeFileSync(join(dir, "consumer.ts"), CONSUMER);
  writeFileSync(
    join(dir, "tsconfig.json"),
    JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: "es2022", lib: ["es2022"], module: "preserve", types: [] },
      files: ["consumer.ts"],
    }),
  );
  const { ok, output } = runTsc(["-p", "tsconfig.json"], dir);
  assert.ok(ok, `a plugin written against grw-sdk.d.ts does not type-check:\n${output}`);
});
