#!/usr/bin/env bash
# Builds the js-restart-filter plugin into OUT_DIR/js-restart-filter.wasm and copies
# its manifest, js-restart-filter.json, beside it. Needs node 20 and the
# JavaScript toolchain (tests/setup.sh); see sdk/js/README.md. `--aot`
# compiles it ahead of time (needs weval: tests/setup.sh --aot).
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 || ( $# -eq 2 && "$2" != "--aot" ) ]]; then
    echo "usage: $0 OUT_DIR [--aot]" >&2
    exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$1"
out="$(cd "$1" && pwd)"

node "$here/../../sdk/js/build.mjs" --world filter-plugin --source "$here/plugin.js" --out "$out/js-restart-filter.wasm" "${@:2}"
cp "$here/js-restart-filter.json" "$out/js-restart-filter.json"
