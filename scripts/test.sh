#!/usr/bin/env bash
# The test command: installs dependencies, builds, runs every test (ctest:
# gtest units, the installed-package examples, the end-to-end pytest suite).
# BRT_BUILD_DIR picks the build directory (default build/).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
scripts/build.sh
cd "${BRT_BUILD_DIR:-build}"
ctest --output-on-failure -j "$(nproc)"
