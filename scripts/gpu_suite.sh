#!/usr/bin/env bash
# The whole GPU suite and the GPU benchmarks, on a machine with a GPU, from a
# build made elsewhere (scripts/build.sh) and carried along in build/. Writes
# one results file, $OUT/gpu-results.md (default: ./gpu-out/).
#   - the op tests on the CUDA provider (BRT_TEST_DEVICE=cuda), then under
#     compute-sanitizer memcheck and racecheck
#   - the device-queue and session tests, the JAX end-to-end cases compiled
#     for --target=cuda, the Python binding tests (CUDA tensors)
#   - bench/gpu_bench.py (bandwidth, matmul vs cuBLAS, encoder block vs peers,
#     graph replay vs stream launches)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
report="$OUT/gpu-results.md"
export BRT_TEST_DEVICE=cuda PYTHONPATH=build/python:python:examples
# The CUDA provider needs cuBLASLt 13 and cuDNN 9: use the ones PyTorch's
# NVIDIA wheels bring when the system has none.
nvidia_libs=$(python3 -c 'import glob, os, nvidia; print(":".join(sorted({os.path.dirname(p) for d in nvidia.__path__ for p in glob.glob(d + "/**/lib*.so*", recursive=True)})))' 2>/dev/null || true)
[ -n "$nvidia_libs" ] && export LD_LIBRARY_PATH="$nvidia_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ldd build/lib/libbrt_provider_cuda.so | grep "not found"; then
  echo "libbrt_provider_cuda.so misses the libraries above" >&2
fi
{
  echo "# GPU suite"
  echo
  echo "- date: $(date -u +%Y-%m-%d), commit: $(git rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo "- device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo unknown)"
  echo
} >"$report"
status=0
for t in ops_elementwise_test ops_data_test ops_index_reduce_test ops_dnnl_test device_queue_test session_test; do
  if build/tests/$t >"$OUT/$t.log" 2>&1; then r=passed; else r=FAILED; status=1; fi
  echo "- $t (CUDA): $r, $(grep -E '^\[  (PASSED|FAILED) ' "$OUT/$t.log" | tr '\n' ' ')" >>"$report"
done
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    for t in ops_elementwise_test ops_data_test ops_index_reduce_test ops_dnnl_test; do
      if compute-sanitizer --tool $tool --error-exitcode 1 build/tests/$t >"$OUT/$t.$tool.log" 2>&1; then
        r=clean; else r=ERRORS; status=1; fi
      echo "- compute-sanitizer $tool on $t: $r" >>"$report"
    done
  done
else
  echo "- compute-sanitizer: not found" >>"$report"
fi
if python3 -m pytest -q tests/e2e/test_jax.py -k on_cuda >"$OUT/e2e.log" 2>&1; then r=passed; else r=FAILED; status=1; fi
echo "- JAX end-to-end cases on CUDA: $r ($(tail -1 "$OUT/e2e.log"))" >>"$report"
if python3 -m pytest -q tests/python >"$OUT/pytest.log" 2>&1; then r=passed; else r=FAILED; status=1; fi
echo "- Python bindings: $r ($(tail -1 "$OUT/pytest.log"))" >>"$report"
echo >>"$report"
python3 bench/gpu_bench.py >>"$report" 2>"$OUT/gpu_bench.log" || { echo "gpu_bench failed: see gpu_bench.log" >>"$report"; status=1; }
cat "$report"
exit $status
