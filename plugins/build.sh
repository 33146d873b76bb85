#!/usr/bin/env bash
# Builds GRW's bundled plugins as WebAssembly components and collects them,
# with their example manifests, in plugins/dist/: the Rust ones with Cargo,
# the Python, JavaScript and C ones (py-*, js-*, c-*) with their own build.sh.
#
# Needs the wasm32-wasip2 target and the plugin toolchains: tests/setup.sh
# installs both.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dist="$root/plugins/dist"
plugins=(namespace-filter label-filter changed-fields field-filter chat-notifier webhook-template
    ownership services references istio-gateways restart-filter)

packages=()
for plugin in "${plugins[@]}"; do
    packages+=(-p "grw-plugin-$plugin")
done

# The workspace's release profile keeps line tables for the daemon's
# backtraces; in a plugin they would be most of the file (megabytes of std
# debug info), so drop them here.
CARGO_PROFILE_RELEASE_DEBUG=false CARGO_PROFILE_RELEASE_STRIP=debuginfo \
    cargo build --manifest-path "$root/Cargo.toml" --release --target wasm32-wasip2 "${packages[@]}"

target_dir="$(cargo metadata --manifest-path "$root/Cargo.toml" --format-version 1 --no-deps |
    sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
mkdir -p "$dist"
for plugin in "${plugins[@]}"; do
    wasm="$target_dir/wasm32-wasip2/release/grw_plugin_${plugin//-/_}.wasm"
    # A component starts with `\0asm` and version 0x0d, layer 1; a core
    # module (layer 0) would mean the build did not produce a component.
    magic="$(od -An -tx1 -N8 "$wasm" | tr -d ' \n')"
    if [[ "$magic" != "0061736d0d000100" ]]; then
        echo "error: $wasm is not a WebAssembly component (header $magic)" >&2
        exit 1
    fi
    cp "$wasm" "$dist/$plugin.wasm"
    cp "$root/plugins/$plugin/$plugin.json" "$dist/$plugin.json"
    printf '%-22s %8d bytes\n' "$plugin.wasm" "$(wc -c <"$dist/$plugin.wasm")"
done
for build in "$root"/plugins/py-*/build.sh "$root"/plugins/js-*/build.sh "$root"/plugins/c-*/build.sh; do
    plugin="$(basename "$(dirname "$build")")"
    bash "$build" "$dist"
    printf '%-22s %8d bytes\n' "$plugin.wasm" "$(wc -c <"$dist/$plugin.wasm")"
done
echo "plugins and manifests are in $dist"
