#!/usr/bin/env bash
# Builds py-restart-filter.wasm into OUT_DIR, with py-restart-filter.json beside it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../../sdk/python/build-component.sh" filter-plugin py-restart-filter "$here" "${1:?usage: build.sh OUT_DIR}"
