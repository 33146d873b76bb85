#!/usr/bin/env bash
# Builds a C GRW plugin into a WebAssembly component.
#
#   build-component.sh WORLD NAME PLUGIN_DIR OUT_DIR
#
# WORLD is filter-plugin, notifier-plugin or analyzer-plugin. Every *.c in
# PLUGIN_DIR but test_*.c is compiled, with sdk/c/grw_json.c and the
# world's bindings, by clang for wasm32-wasi (a reactor: no main); grw-c
# then makes the module a component. Writes OUT_DIR/NAME.wasm and copies
# the manifest NAME.json beside it.
#
# Needs clang with the wasm32-wasi target and wasi-libc (Debian: clang-14
# lld-14 wasi-libc libclang-rt-14-dev-wasm32; tests/setup.sh installs them;
# CC overrides the compiler) and grw-c, which this script builds with Cargo
# from this repository unless GRW_C names one.
set -euo pipefail

if [[ $# -ne 4 ]]; then
    echo "usage: $0 WORLD NAME PLUGIN_DIR OUT_DIR" >&2
    exit 2
fi
world="$1" name="$2" plugin_dir="$3" out_dir="$4"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

cc="${CC:-}"
if [[ -z "$cc" ]]; then
    for candidate in clang-14 clang; do
        if command -v "$candidate" >/dev/null; then cc="$candidate" && break; fi
    done
fi
if [[ -z "$cc" ]]; then
    echo "error: no clang found; install clang, lld and wasi-libc (tests/setup.sh does), or set CC" >&2
    exit 1
fi
if [[ ! -f "$plugin_dir/$name.json" ]]; then
    echo "error: $plugin_dir needs the manifest $name.json" >&2
    exit 1
fi

grw_c="${GRW_C:-}"
if [[ -z "$grw_c" ]]; then
    cargo build --quiet --manifest-path "$root/Cargo.toml" -p grw-c
    target_dir="$(cargo metadata --manifest-path "$root/Cargo.toml" --format-version 1 --no-deps |
        sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')"
    grw_c="$target_dir/debug/grw-c"
fi

mkdir -p "$out_dir"
out_dir="$(cd "$out_dir" && pwd)"
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT

"$grw_c" bindings "$root/wit" "$world" "$stage"
bindings="${world//-/_}"
sources=()
for source in "$plugin_dir"/*.c; do
    case "$(basename "$source")" in
    test_*.c) ;;
    *) sources+=("$source") ;;
    esac
done
"$cc" --target=wasm32-wasi -mexec-model=reactor -O2 -Wall -Wextra -Werror \
    -I "$stage" -I "$root/sdk/c" -I "$plugin_dir" \
    -o "$stage/module.wasm" "${sources[@]}" "$root/sdk/c/grw_json.c" \
    "$stage/$bindings.c" "$stage/${bindings}_component_type.o"
wasm="$out_dir/$name.wasm"
"$grw_c" component "$stage/module.wasm" "$wasm"
cp "$plugin_dir/$name.json" "$out_dir/$name.json"
printf '%s: %d bytes\n' "$wasm" "$(wc -c <"$wasm")"
