#!/usr/bin/env bash
# Builds the component: dist/{{name}}.wasm, with its manifest beside it.
# Needs componentize-js once: npm install (package.json pins it)
# ./build.sh --aot compiles its JavaScript ahead of time, for a cheaper
# call; needs weval (cargo install weval --version 0.5.1 --locked).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
if [ ! -d node_modules/@bytecodealliance/componentize-js ] && [ -z "${GRW_TOOLCHAINS:-}" ]; then
    echo "error: componentize-js is not installed here; run: npm install" >&2
    exit 1
fi
mkdir -p dist
node grw-sdk/build.mjs --world {{world}} --source plugin.js --wit wit --out "dist/{{name}}.wasm" "$@"
cp "{{name}}.json" dist/
echo "built dist/{{name}}.wasm ($(wc -c <"dist/{{name}}.wasm") bytes)"
