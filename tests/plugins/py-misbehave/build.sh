#!/usr/bin/env bash
# Builds py-misbehave.wasm into OUT_DIR, with py-misbehave.json beside it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../../../sdk/python/build-component.sh" filter-plugin py-misbehave "$here" "${1:?usage: build.sh OUT_DIR}"
