#!/usr/bin/env bash
# Builds an examples/ project against an installed brt and runs its program.
# usage: run_example.sh EXAMPLE_DIR INSTALL_PREFIX BUILD_DIR PROGRAM [ARGS...]
set -euo pipefail
src=$1 prefix=$2 build=$3 program=$4
shift 4
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" >/dev/null
"$build/$program" "$@"
