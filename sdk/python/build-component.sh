#!/usr/bin/env bash
# Builds a Python GRW plugin into a WebAssembly component with componentize-py.
#
#   build-component.sh WORLD NAME PLUGIN_DIR OUT_DIR
#
# WORLD is filter-plugin, notifier-plugin or analyzer-plugin. PLUGIN_DIR
# holds the module `app` (app.py, plus any helper modules) and the manifest
# NAME.json; test_*.py and conftest.py stay out of the component. Writes
# OUT_DIR/NAME.wasm and copies NAME.json beside it.
#
# componentize-py is taken from $GRW_TOOLCHAINS/python/bin (default:
# <repo>/target/toolchains), where tests/setup.sh installs it.
set -euo pipefail

if [[ $# -ne 4 ]]; then
    echo "usage: $0 WORLD NAME PLUGIN_DIR OUT_DIR" >&2
    exit 2
fi
world="$1" name="$2" plugin_dir="$3" out_dir="$4"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
toolchains="${GRW_TOOLCHAINS:-$root/target/toolchains}"
[[ "$toolchains" == /* ]] || toolchains="$PWD/$toolchains"
componentize="$toolchains/python/bin/componentize-py"
if [[ ! -x "$componentize" ]]; then
    echo "error: componentize-py not found at $componentize;" \
        "run tests/setup.sh to install the Python plugin toolchain" \
        "(or point GRW_TOOLCHAINS at a directory that has python/bin/componentize-py)" >&2
    exit 1
fi
if [[ ! -f "$plugin_dir/app.py" || ! -f "$plugin_dir/$name.json" ]]; then
    echo "error: $plugin_dir needs app.py and $name.json" >&2
    exit 1
fi

mkdir -p "$out_dir"
out_dir="$(cd "$out_dir" && pwd)"

# Only the plugin's modules and the SDK go into the component: no tests,
# caches or documents.
stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
for module in "$plugin_dir"/*.py; do
    case "$(basename "$module")" in
    test_*.py | conftest.py) ;;
    *) cp "$module" "$stage/" ;;
    esac
done
mkdir "$stage/grw_sdk"
cp "$root"/sdk/python/grw_sdk/*.py "$stage/grw_sdk/"

wasm="$out_dir/$name.wasm"
(cd "$stage" && "$componentize" -d "$root/wit" -w "$world" componentize app -p "$stage" -o "$wasm")

# A component starts with `\0asm`, version 0x0d, layer 1; a core module
# (layer 0) would mean the build did not produce a component.
magic="$(od -An -tx1 -N8 "$wasm" | tr -d ' \n')"
if [[ "$magic" != "0061736d0d000100" ]]; then
    echo "error: $wasm is not a WebAssembly component (header $magic)" >&2
    exit 1
fi
cp "$plugin_dir/$name.json" "$out_dir/$name.json"
printf '%s: %d bytes\n' "$wasm" "$(wc -c <"$wasm")"
