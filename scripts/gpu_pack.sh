#!/usr/bin/env bash
# Prepares build/gpu/ for a GPU machine that has none of this machine's
# packages (MLIR, oneDNN, FlatBuffers) and another Python, where
# scripts/gpu_suite.sh then runs from it:
#   install/  brt installed (libbrt, providers, headers, CMake package: the
#             Python extension is rebuilt there against it)
#   bin/      the op-test executables, session_test and brt-run
#   cases/    the JAX end-to-end cases compiled for --target=cuda, with their
#             inputs and JAX's outputs (tests/e2e/cuda_cases.py)
#   models/   the benchmark executables (bench/gpu_bench.py --prepare)
# Carry build/gpu (well under the 64 MiB a device call takes).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
rm -rf build/gpu
mkdir -p build/gpu/bin
cmake --install build --prefix build/gpu/install >/dev/null
# Only what runs there: no compiler tools, no CPU provider (its oneDNN is
# not there); symbols stripped to stay small.
rm -rf build/gpu/install/bin build/gpu/install/lib/libbrt_provider_cpu.so
for t in ops_elementwise_test ops_data_test ops_index_reduce_test ops_dnnl_test session_test; do
  cp build/tests/$t build/gpu/bin/
done
cp build/bin/brt-run build/gpu/bin/
strip --strip-unneeded build/gpu/bin/* build/gpu/install/lib/*.so*
export PYTHONPATH=build/python:python:examples
python3 tests/e2e/cuda_cases.py pack build/gpu/cases
python3 bench/gpu_bench.py --prepare build/gpu/models
git rev-parse --short HEAD >build/gpu/COMMIT 2>/dev/null || echo unknown >build/gpu/COMMIT
du -sh build/gpu
