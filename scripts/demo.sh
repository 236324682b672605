#!/usr/bin/env bash
# The main job end to end: installs dependencies, builds brt, compiles a
# transformer encoder block written in JAX with brt-compile, runs it with
# brt-run through the dlopen'ed CPU provider plugin, and compares with JAX.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
scripts/build.sh
python3 examples/jax_encoder_block.py build
