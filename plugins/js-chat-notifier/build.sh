#!/usr/bin/env bash
# Builds the js-chat-notifier plugin into OUT_DIR/js-chat-notifier.wasm and copies
# its manifest, js-chat-notifier.json, beside it. Needs node 20 and the
# JavaScript toolchain (tests/setup.sh); see sdk/js/README.md.
set -euo pipefail

if [[ $# -ne 1 ]]; then
    echo "usage: $0 OUT_DIR" >&2
    exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
mkdir -p "$1"
out="$(cd "$1" && pwd)"

node "$here/../../sdk/js/build.mjs" --world notifier-plugin --source "$here/plugin.js" --out "$out/js-chat-notifier.wasm"
cp "$here/js-chat-notifier.json" "$out/js-chat-notifier.json"
