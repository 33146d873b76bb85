#!/usr/bin/env bash
# What the test suite needs besides Cargo: the WebAssembly target (plugins
# are built as components) and a NATS server with JetStream (the broker
# tests start their own on loopback). Safe to run again.
set -euo pipefail

rustup target add wasm32-wasip2

if ! command -v nats-server >/dev/null 2>&1 && [ ! -x /usr/sbin/nats-server ]; then
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends nats-server >/dev/null
fi
# The package may also start a system service; the tests do not use it.
if command -v nats-server >/dev/null 2>&1; then nats-server --version; else /usr/sbin/nats-server --version; fi
