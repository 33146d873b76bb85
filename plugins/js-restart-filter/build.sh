#!/usr/bin/env bash
# Builds the js-restart-filter plugin into OUT_DIR/js-restart-filter.wasm and copies
# its manifest, js-restart-filter.json, beside it. Needs node 20 and the
# JavaScript toolchain (tests/setup.sh); see sdk/js/README.md.
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 OUT_DIR" >&2
    exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$1"
out="$(cd "$1" && pwd)"

node "$here/../../sdk/js/build.mjs" --world filter-plugin --source "$here/plugin.js" --out "$out/js-restart-filter.wasm"
cp "$here/js-restart-filter.json" "$out/js-restart-filter.json"
