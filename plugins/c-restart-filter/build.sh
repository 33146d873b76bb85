#!/usr/bin/env bash
# Builds c-restart-filter.wasm into OUT_DIR, with c-restart-filter.json beside it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../../sdk/c/build-component.sh" filter-plugin c-restart-filter "$here" "${1:?usage: build.sh OUT_DIR}"
