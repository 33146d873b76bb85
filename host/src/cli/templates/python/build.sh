#!/usr/bin/env bash
# Builds the component: dist/{{name}}.wasm, with its manifest beside it.
# Needs componentize-py once: pip install componentize-py=={{componentize_py}}
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"
componentize_py="${COMPONENTIZE_PY:-componentize-py}"
if ! command -v "$componentize_py" >/dev/null; then
    echo "error: componentize-py not found; install it with: pip install componentize-py=={{componentize_py}}" >&2
    exit 1
fi
mkdir -p dist
"$componentize_py" -d wit -w {{world}} componentize app -p . -o "dist/{{name}}.wasm"
cp "{{name}}.json" dist/
echo "built dist/{{name}}.wasm ($(wc -c <"dist/{{name}}.wasm") bytes)"
