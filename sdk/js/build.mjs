#!/usr/bin/env node
// Builds a JavaScript GRW plugin into a WebAssembly component.
//
//     node sdk/js/build.mjs --world filter-plugin --source plugin.js --out plugin.wasm
//
// The plugin module, the SDK and anything else it imports are bundled into
// one module, together with a prelude that hands the SDK the host
// interfaces of the world (`log`, and `outbound-http` or `cache`), and the
// bundle is componentized with componentize-js. The toolchain is looked up
// in `$GRW_TOOLCHAINS/js/node_modules`, else in the nearest node_modules
// above the plugin (a plugin project's `npm install`), else in the
// repository's `target/toolchains`, where `tests/setup.sh` installs it.
//
// `--aot` compiles the plugin's JavaScript ahead of time with weval (see
// sdk/js/README.md, "Ahead-of-time compilation"): a cheaper call, a few
// megabytes more component. It needs the weval binary: `$GRW_WEVAL`, else
// `weval/bin/weval` in `$GRW_TOOLCHAINS` or the repository's
// target/toolchains (where `tests/setup.sh --aot` installs it from
// crates.io), else `weval` on the PATH.

import { access, constants, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "node:util";

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, "..", "..");

/** What each world imports and exports: the prelude wires the imports into the SDK. */
const WORLDS = {
  "filter-plugin": { export: "filter", imports: { log: ["log", "log"] } },
  "notifier-plugin": { export: "notifier", imports: { log: ["log", "log"], send: ["outbound-http", "send"] } },
  "analyzer-plugin": { export: "analyzer", imports: { log: ["log", "log"], cache: ["cache", "*"] } },
};
const WIT_PACKAGE = "grw:plugin";
const WIT_VERSION = "0.2.0";
/** A component (not a core module): `\0asm`, version 0x0d, layer 1. */
const COMPONENT_HEADER = Buffer.from([0x00, 0x61, 0x73, 0x6d, 0x0d, 0x00, 0x01, 0x00]);

const USAGE = `usage: node build.mjs --world <filter-plugin|notifier-plugin|analyzer-plugin> --source <plugin.js> --out <plugin.wasm> [--wit <dir or file>] [--aot]`;
/** The weval release componentize-js's ahead-of-time mode is made for. */
const WEVAL_VERSION = "0.5.1";

class BuildError extends Error {}

function options() {
  let values;
  try {
    ({ values } = parseArgs({
      options: {
        world: { type: "string" },
        source: { type: "string" },
        out: { type: "string" },
        wit: { type: "string" },
        aot: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (e) {
    throw new BuildError(`${e.message}\n${USAGE}`);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  for (const name of ["world", "source", "out"]) {
    if (values[name] === undefined) throw new BuildError(`--${name} is required\n${USAGE}`);
  }
  const world = values.world.endsWith("-plugin") ? values.world : `${values.world}-plugin`;
  if (!WORLDS[world]) {
    throw new BuildError(`unknown world \`${values.world}\`; GRW's worlds are ${Object.keys(WORLDS).join(", ")}`);
  }
  return {
    world,
    source: resolve(values.source),
    out: resolve(values.out),
    wit: resolve(values.wit ?? join(repoRoot, "wit")),
    aot: values.aot === true,
  };
}

/**
 * Where componentize-js and rolldown are: `$GRW_TOOLCHAINS/js/node_modules`
 * when set; else the nearest node_modules above the plugin that has them
 * (a project's own `npm install`); else the repository's target/toolchains.
 */
async function toolchainModules(source) {
  if (process.env.GRW_TOOLCHAINS) return join(resolve(process.env.GRW_TOOLCHAINS), "js", "node_modules");
  for (let dir = dirname(source); ; dir = dirname(dir)) {
    const candidate = join(dir, "node_modules");
    if (await stat(join(candidate, "@bytecodealliance", "componentize-js")).catch(() => false)) return candidate;
    if (dirname(dir) === dir) break;
  }
  return join(repoRoot, "target", "toolchains", "js", "node_modules");
}

/** The weval binary for `--aot`: `$GRW_WEVAL`, the toolchains directory's, or the PATH's. */
async function wevalBinary() {
  const toolchains = process.env.GRW_TOOLCHAINS ? resolve(process.env.GRW_TOOLCHAINS) : join(repoRoot, "target", "toolchains");
  const candidates = process.env.GRW_WEVAL
    ? [resolve(process.env.GRW_WEVAL)]
    : [join(toolchains, "weval", "bin", "weval"), ...(process.env.PATH ?? "").split(":").filter(Boolean).map((dir) => join(dir, "weval"))];
  for (const candidate of candidates) {
    if (await access(candidate, constants.X_OK).then(() => true, () => false)) return candidate;
  }
  throw new BuildError(
    `--aot needs weval ${WEVAL_VERSION}, which is not in ${candidates[0]}${process.env.GRW_WEVAL ? "" : " or on the PATH"}; install it with \`tests/setup.sh --aot\` (or \`cargo install weval --version ${WEVAL_VERSION} --locked\`), or point GRW_WEVAL at it`,
  );
}

/** Imports an ES module package from the toolchain's node_modules, by its package.json. */
async function importPackage(nodeModules, name) {
  const dir = join(nodeModules, ...name.split("/"));
  let manifest;
  try {
    manifest = JSON.parse(await readFile(join(dir, "package.json"), "utf8"));
  } catch {
    throw new BuildError(
      `${name} is not installed in ${nodeModules}; install the JavaScript toolchain with tests/setup.sh, or point GRW_TOOLCHAINS at a directory whose js/node_modules has it`,
    );
  }
  let entry = manifest.exports?.["."] ?? manifest.exports ?? manifest.main ?? "index.js";
  if (typeof entry === "object") entry = entry.import ?? entry.default;
  if (typeof entry === "object") entry = entry.default;
  return import(pathToFileURL(join(dir, entry)).href);
}

/** The module that hands the SDK the world's host interfaces, evaluated before the plugin. */
function prelude(world) {
  const lines = [];
  const parts = [];
  for (const [part, [iface, name]] of Object.entries(WORLDS[world].imports)) {
    const specifier = `${WIT_PACKAGE}/${iface}@${WIT_VERSION}`;
    const binding = `host_${part}`;
    lines.push(
      name === "*"
        ? `import * as ${binding} from ${JSON.stringify(specifier)};`
        : `import { ${name} as ${binding} } from ${JSON.stringify(specifier)};`,
    );
    parts.push(`${part}: ${binding}`);
  }
  lines.push(`globalThis[Symbol.for("grw-sdk.host")] = { ${parts.join(", ")} };`);
  return `${lines.join("\n")}\n`;
}

async function bundle(rolldown, { world, source }, work) {
  const preludePath = join(work, "prelude.js");
  const entryPath = join(work, "entry.js");
  const name = WORLDS[world].export;
  await writeFile(preludePath, prelude(world));
  await writeFile(entryPath, `import "./prelude.js";\nexport { ${name} } from ${JSON.stringify(source)};\n`);
  const bundled = join(work, "plugin.bundle.js");
  try {
    await rolldown.build({
      input: entryPath,
      external: [new RegExp(`^${WIT_PACKAGE}/`)],
      logLevel: "warn",
      // Without JSDoc comments: the SDK's types live in them, and the
      // bundle's text goes into the component (they made the example
      // plugins' components 18 and 30 KB bigger).
      output: { file: bundled, format: "esm", codeSplitting: false, comments: { jsdoc: false } },
    });
  } catch (e) {
    if (/\bMISSING_EXPORT\b/.test(e.message) && e.message.includes(`"${name}" is not exported`)) {
      const adapter = `export${name[0].toUpperCase()}${name.slice(1)}`;
      throw new BuildError(
        `${source} does not export \`${name}\`, which the ${world} world needs: export it with \`export const ${name} = ${adapter}({...})\``,
      );
    }
    throw new BuildError(`cannot bundle ${source}: ${e.message}`);
  }
  return bundled;
}

async function main() {
  const opts = options();
  await stat(opts.source).catch(() => {
    throw new BuildError(`no plugin source at ${opts.source}`);
  });
  const nodeModules = await toolchainModules(opts.source);
  const { componentize } = await importPackage(nodeModules, "@bytecodealliance/componentize-js");
  const rolldown = await importPackage(nodeModules, "rolldown");
  const wevalBin = opts.aot ? await wevalBinary() : undefined;

  const started = Date.now();
  const work = await mkdtemp(join(tmpdir(), "grw-js-build-"));
  const cwd = process.cwd();
  try {
    const bundled = await bundle(rolldown, opts, work);
    // componentize-js maps the source's directory into the component, or
    // the working directory when the source is under it: work from the
    // build directory so that only the bundle is seen.
    process.chdir(work);
    let component;
    try {
      ({ component } = await componentize({
        sourcePath: bundled,
        witPath: opts.wit,
        worldName: opts.world,
        // GRW grants no wasi:http; the fetch features would import it.
        disableFeatures: ["http", "fetch-event"],
        ...(opts.aot ? { enableAot: true, wevalBin } : {}),
      }));
    } catch (e) {
      throw new BuildError(`componentize-js failed: ${e.message}`);
    } finally {
      process.chdir(cwd);
    }
    const bytes = Buffer.from(component);
    if (!bytes.subarray(0, COMPONENT_HEADER.length).equals(COMPONENT_HEADER)) {
      const header = bytes.subarray(0, 8).toString("hex");
      throw new BuildError(`componentize-js did not produce a WebAssembly component (header ${header})`);
    }
    await writeFile(opts.out, bytes);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    const mode = opts.aot ? ", compiled ahead of time" : "";
    console.error(`built ${opts.out} (${opts.world}${mode}, ${bytes.length} bytes) in ${seconds} s`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(`error: ${e instanceof BuildError ? e.message : e.stack ?? e}`);
  process.exit(1);
});
