#!/usr/bin/env bash
# The test command: installs dependencies, builds, runs every test (ctest:
# gtest units, the installed-package examples, the end-to-end pytest suite).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
scripts/build.sh
cd build
ctest --output-on-failure -j "$(nproc)"
