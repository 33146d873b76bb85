#!/usr/bin/env bash
# Builds the component: dist/{{name}}.wasm, with its manifest beside it.
# Needs the WebAssembly target once: rustup target add wasm32-wasip2
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
cargo build --release --target wasm32-wasip2
mkdir -p dist
cp "${CARGO_TARGET_DIR:-target}/wasm32-wasip2/release/{{crate}}.wasm" "dist/{{name}}.wasm"
cp "{{name}}.json" dist/
echo "built dist/{{name}}.wasm ($(wc -c <"dist/{{name}}.wasm") bytes)"
