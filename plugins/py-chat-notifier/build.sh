#!/usr/bin/env bash
# Builds py-chat-notifier.wasm into OUT_DIR, with py-chat-notifier.json beside it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
exec "$here/../../sdk/python/build-component.sh" notifier-plugin py-chat-notifier "$here" "${1:?usage: build.sh OUT_DIR}"
