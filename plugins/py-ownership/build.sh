#!/usr/bin/env bash
# Builds py-ownership.wasm into OUT_DIR, with py-ownership.json beside it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../../sdk/python/build-component.sh" analyzer-plugin py-ownership "$here" "${1:?usage: build.sh OUT_DIR}"
