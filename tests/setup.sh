#!/usr/bin/env bash
# What the test suite needs besides Cargo: cargo-nextest, the WebAssembly
# target (plugins are built as components), the musl target and musl-gcc
# (the image's static binary), a NATS server with JetStream
# (the broker tests start their own on loopback), the Kafka broker tansu
# (built from crates.io once, about 7 minutes on two cores, and kept beside
# Cargo's bin directory), clang and wasi-libc for C
# plugins, the Python and JavaScript plugin toolchains and the API fuzzer
# schemathesis at pinned versions, in target/toolchains (or
# $GRW_TOOLCHAINS); the web console's
# Node.js packages and Chromium for its browser tests.
# Safe to run again: what is there at the right version is kept.
#
# `tests/setup.sh --aot` also installs weval, for JavaScript plugins compiled
# ahead of time (`sdk/js/build.mjs --aot`, and the benchmark's rows for it).
# It is built from crates.io, about 8 minutes on two cores, so CI (whose
# plugins are built without it) does not install it.
set -euo pipefail

aot=false
for arg in "$@"; do
    case "$arg" in
        --aot) aot=true ;;
        *)
            echo "usage: $0 [--aot]" >&2
            exit 2
            ;;
    esac
done

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
toolchains="${GRW_TOOLCHAINS:-$root/target/toolchains}"
componentize_py=0.25.1
pytest=9.2.0
# The official Kubernetes clients the tests read GRW with (tests/clients).
kubernetes_python=37.0.2
kubernetes_js=1.4.0
# The Kafka consumer the Kafka tests read GRW's messages with, and the
# zstd codec it decompresses with.
kafka_python=3.0.12
zstandard=0.25.0
# The API fuzzer tests/tests/openapi.rs runs against /api/v1/openapi.json.
schemathesis=4.32.5
# The Kafka-compatible broker of the Kafka tests, in memory.
tansu=0.6.0
componentize_js=0.23.0
weval=0.5.1
rolldown=1.3.2
typescript=7.0.2

rustup target add wasm32-wasip2
# The image's static binary (tests/tests/image.rs builds it): Rust's musl
# target, and musl-gcc for the C code of ring.
rustup target add x86_64-unknown-linux-musl
if ! command -v musl-gcc >/dev/null 2>&1; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends musl-tools >/dev/null
fi

# kubectl renders manifests/ with its built-in kustomize (no cluster needed).
if ! command -v kubectl >/dev/null 2>&1; then
    echo "error: kubectl is needed (tests render manifests/ with kubectl kustomize): https://kubernetes.io/docs/tasks/tools/" >&2
    exit 1
fi

# The test runner: one process per test, the test binaries side by side.
if ! cargo nextest --version >/dev/null 2>&1; then
    cargo install --locked cargo-nextest
fi

if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends nats-server >/dev/null
fi
# The package may also start a system service; the tests do not use it.
if command -v nats-server >/dev/null 2>&1; then nats-server --version; else /usr/sbin/nats-server --version; fi

# The Kafka tests' broker: tansu, storing in memory (`dynostore`) or in
# SQLite (`libsql`: kept across restarts), in a Cargo root of its own that
# names its version, outside the clone, so that one build serves every
# clone of this machine (tests/src/kafka.rs looks there). A debug build
# without debug information: 6.8 minutes on two cores (7.3 with it, 15 for
# a release build) and 115 MB instead of 490, fast enough for the tests
# (the benchmarks' figures are from a release build; see BENCHMARKS.md).
# Without debug assertions and overflow checks either, as a release build
# has none: less code to generate.
tansu_root="${CARGO_HOME:-$HOME/.cargo}/grw-tansu-$tansu"
if [ "$("$tansu_root/bin/tansu" --version 2>/dev/null)" != "tansu $tansu" ]; then
    CARGO_PROFILE_DEV_DEBUG=false CARGO_PROFILE_DEV_DEBUG_ASSERTIONS=false \
        CARGO_PROFILE_DEV_OVERFLOW_CHECKS=false CARGO_INCREMENTAL=0 \
        cargo install --locked --quiet --debug --features dynostore,libsql \
        --root "$tansu_root" tansu --version "$tansu"
fi
"$tansu_root/bin/tansu" --version

# C plugins: clang for wasm32-wasi with wasi-libc, from Debian (the C
# bindings and the component come from grw-c, built by Cargo).
c_packages=(clang-14 lld-14 wasi-libc libclang-rt-14-dev-wasm32)
if ! dpkg -s "${c_packages[@]}" >/dev/null 2>&1; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends \
        "${c_packages[@]}" >/dev/null
fi
clang-14 --version | head -1

# Python plugins: componentize-py (and pytest for their native tests) in a
# virtual environment of their own, with the Kubernetes client.
python="$toolchains/python"
if [ "$("$python/bin/componentize-py" --version 2>/dev/null)" != "componentize-py $componentize_py" ] ||
    ! "$python/bin/pytest" --version 2>/dev/null | grep -qx "pytest $pytest" ||
    [ "$("$python/bin/python" -c 'import kubernetes; print(kubernetes.__version__)' 2>/dev/null)" != "$kubernetes_python" ] ||
    [ "$("$python/bin/python" -c 'import kafka, zstandard; print(kafka.__version__, zstandard.__version__)' 2>/dev/null)" != "$kafka_python $zstandard" ]; then
    python3 -m venv "$python"
    "$python/bin/pip" install --quiet --disable-pip-version-check \
        "componentize-py==$componentize_py" "pytest==$pytest" "kubernetes==$kubernetes_python" \
        "kafka-python==$kafka_python" "zstandard==$zstandard"
fi
"$python/bin/componentize-py" --version

# schemathesis, in a virtual environment of its own: its dependencies
# (hypothesis, jsonschema...) are not the plugin toolchain's to pin.
fuzzer="$toolchains/schemathesis"
if [ "$("$fuzzer/bin/schemathesis" --version 2>/dev/null)" != "schemathesis, version $schemathesis" ]; then
    python3 -m venv "$fuzzer"
    "$fuzzer/bin/pip" install --quiet --disable-pip-version-check "schemathesis==$schemathesis"
fi
"$fuzzer/bin/schemathesis" --version

# JavaScript plugins: componentize-js, driven through its API by
# sdk/js/build.mjs, which bundles a plugin with the SDK by rolldown first;
# Node.js's own test runner runs their native tests. TypeScript checks the
# SDK's code against its JSDoc types and generates its declarations
# (sdk/js/test/types.test.mjs); pinned, as its output is compared.
js="$toolchains/js"
version() { node -p "require('$js/node_modules/$1/package.json').version" 2>/dev/null || true; }
if [ "$(version @bytecodealliance/componentize-js)" != "$componentize_js" ] ||
    [ "$(version rolldown)" != "$rolldown" ] ||
    [ "$(version typescript)" != "$typescript" ] ||
    [ "$(version @kubernetes/client-node)" != "$kubernetes_js" ]; then
    npm install --silent --no-audit --no-fund --prefix "$js" \
        "@bytecodealliance/componentize-js@$componentize_js" "rolldown@$rolldown" "typescript@$typescript" \
        "@kubernetes/client-node@$kubernetes_js"
fi
echo "componentize-js $componentize_js, typescript $typescript (node $(node --version))"

# The web console's build (rolldown) and its browser tests' driver
# (playwright-core), from its lockfile, into host/console/node_modules; the
# browser is Debian's Chromium.
console="$root/host/console"
if [ "$(node -p "require('$console/node_modules/playwright-core/package.json').version" 2>/dev/null)" != \
    "$(node -p "require('$console/package-lock.json').packages['node_modules/playwright-core'].version")" ]; then
    npm ci --silent --no-audit --no-fund --prefix "$console"
fi
if [ ! -x /usr/lib/chromium/chromium ]; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
/usr/lib/chromium/chromium --version

# weval, for componentize-js's ahead-of-time mode (--aot only).
if $aot; then
    if [ "$("$toolchains/weval/bin/weval" --version 2>/dev/null)" != "weval $weval" ]; then
        cargo install --locked --quiet --root "$toolchains/weval" weval --version "$weval"
    fi
    "$toolchains/weval/bin/weval" --version
fi
