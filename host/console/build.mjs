// Builds the console into dist/: app.js (the code and its libraries, one
// minified module), app.css and index.html, each beside its gzip. dist/ is
// committed, so that the daemon's build needs no Node.js; `--check`
// rebuilds into a temporary folder and fails if dist/ differs from it.
import { build } from "rolldown";
import { gzipSync } from "node:zlib";
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const check = process.argv.includes("--check");
const out = check ? mkdtempSync(join(tmpdir(), "grw-console-")) : join(here, "dist");
mkdirSync(out, { recursive: true });

await build({
  input: join(here, "src/main.jsx"),
  cwd: here,
  logLevel: "warn",
  transform: { jsx: { runtime: "automatic", importSource: "preact" } },
  output: { file: join(out, "app.js"), format: "esm", minify: true, comments: { legal: true } },
});
for (const file of ["index.html", "app.css"]) {
  writeFileSync(join(out, file), readFileSync(join(here, "src", file)));
}
for (const file of ["index.html", "app.css", "app.js"]) {
  // Level 9, no name and no time in the header: the same input, the same bytes.
  writeFileSync(join(out, `${file}.gz`), gzipSync(readFileSync(join(out, file)), { level: 9 }));
}

if (check) {
  const committed = join(here, "dist");
  const differ = readdirSync(out).filter((file) => {
    try {
      return !readFileSync(join(out, file)).equals(readFileSync(join(committed, file)));
    } catch {
      return true;
    }
  });
  rmSync(out, { recursive: true });
  if (differ.length > 0) {
    console.error(`dist/ is not what src/ builds (${differ.join(", ")}): run \`npm run build\` in host/console`);
    process.exit(1);
  }
  console.log("dist/ is what src/ builds");
}
