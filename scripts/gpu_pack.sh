#!/usr/bin/env bash
# Prepares build/gpu/ for a GPU machine that has none of this machine's
# packages (MLIR, oneDNN, FlatBuffers) and another Python, where
# scripts/gpu_suite.sh then runs from it:
#   install/  brt installed (libbrt, providers, headers, CMake package: the
#             Python extension is rebuilt there against it)
#   bin/      the op-test executables and brt-run
#   cases/    the JAX end-to-end cases compiled for --target=cuda, with their
#             inputs and JAX's outputs (tests/e2e/cuda_cases.py)
#   models/   the benchmark executables (bench/gpu_bench.py --prepare)
# Carry build/gpu (well under the 64 MiB a device call takes).
#   scripts/gpu_pack.sh [BUILD [PACK]]   packs an existing build BUILD into
#   PACK (default: builds build/ first and packs into build/gpu)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
pack=${2:-$build/gpu}
[ $# -ge 1 ] || bash scripts/build.sh
rm -rf "$pack"
mkdir -p "$pack/bin"
cmake --install "$build" --prefix "$pack/install" >/dev/null
# Only what runs there: no compiler tools, no CPU provider (its oneDNN is
# not there); symbols stripped to stay small.
rm -rf "$pack/install/bin" "$pack/install/lib/libbrt_provider_cpu.so"
for t in ops_elementwise_test ops_data_test ops_index_reduce_test ops_window_test ops_dnnl_test \
  state_test ops_complex_test ops_reducers_test control_flow_test shape_graphs_test nccl_test; do
  cp "$build/tests/$t" "$pack/bin/"
done
cp "$build/bin/brt-run" "$pack/bin/"
# Built where NCCL and the benchmarks are (gpu_suite.sh reports it missing).
for b in chunked_gemm_bench flagged_gemm_bench; do
  [ ! -f "$build/bench/$b" ] || cp "$build/bench/$b" "$pack/bin/"
done
strip --strip-unneeded "$pack"/bin/* "$pack"/install/lib/*.so*
export PYTHONPATH=$build/python:python:examples
python3 tests/e2e/cuda_cases.py pack "$pack/cases"
python3 bench/gpu_bench.py --prepare "$pack/models"
git rev-parse --short HEAD >"$pack/COMMIT" 2>/dev/null || echo unknown >"$pack/COMMIT"
du -sh "$pack"
