#!/usr/bin/env bash
# Configures and builds brt into build/ ($BRT_BUILD_DIR if set; extra
# arguments go to cmake).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BRT_BUILD_DIR:-build}
prefix=$(python3 -c 'import sys; print(sys.prefix)')
cmake -S . -B "$build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" "$@" >/dev/null
cmake --build "$build"
