#!/usr/bin/env bash
# The whole GPU suite and the GPU benchmarks, on a machine with a GPU, from
# build/gpu made by scripts/gpu_pack.sh on a machine with brt's build
# dependencies (carry build/gpu). Writes one results file,
# $OUT/gpu-results.md (default: ./gpu-out/):
#   - the op tests on the CUDA provider (BRT_TEST_DEVICE=cuda), then under
#     compute-sanitizer memcheck and racecheck; the session tests
#   - the JAX end-to-end cases compiled for --target=cuda, against JAX's outputs
#   - the Python extension, rebuilt here against build/gpu/install, and its
#     tests (CUDA tensors)
#   - bench/gpu_bench.py (bandwidth, matmul vs cuBLAS, encoder block vs
#     PyTorch eager, torch.compile and JAX/XLA, graph replay vs stream launches)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
report="$OUT/gpu-results.md"
gpu=build/gpu
[ -d "$gpu/install" ] || { echo "no $gpu: run scripts/gpu_pack.sh first (where brt builds) and carry it" >&2; exit 2; }
# The CUDA provider needs cuBLASLt 13 and cuDNN 9: use the ones PyTorch's
# NVIDIA wheels bring when the system has none.
nvidia_libs=$(python3 -c 'import glob, os, nvidia; print(":".join(sorted({os.path.dirname(p) for d in nvidia.__path__ for p in glob.glob(d + "/**/lib*.so*", recursive=True)})))' 2>/dev/null || true)
export LD_LIBRARY_PATH="$PWD/$gpu/install/lib${nvidia_libs:+:$nvidia_libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
if ldd $gpu/install/lib/libbrt_provider_cuda.so | grep "not found"; then
  echo "libbrt_provider_cuda.so misses the libraries above" >&2
fi
{
  echo "# GPU suite"
  echo
  echo "- date: $(date -u +%Y-%m-%d), commit: $(cat $gpu/COMMIT 2>/dev/null || echo unknown) (packed)"
  echo "- device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo unknown)"
  echo
} >"$report"
status=0
export BRT_TEST_DEVICE=cuda
for t in ops_elementwise_test ops_data_test ops_index_reduce_test ops_dnnl_test session_test; do
  if $gpu/bin/$t >"$OUT/$t.log" 2>&1; then r=passed; else r=FAILED; status=1; fi
  echo "- $t (CUDA): $r, $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$OUT/$t.log" | tr '\n' ' ')" >>"$report"
done
if command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    for t in ops_elementwise_test ops_data_test ops_index_reduce_test ops_dnnl_test; do
      if compute-sanitizer --tool $tool --error-exitcode 1 $gpu/bin/$t >"$OUT/$t.$tool.log" 2>&1; then
        r=clean; else r=ERRORS; status=1; fi
      echo "- compute-sanitizer $tool on $t: $r" >>"$report"
    done
  done
else
  echo "- compute-sanitizer: not found" >>"$report"
fi
unset BRT_TEST_DEVICE
if python3 tests/e2e/cuda_cases.py check $gpu/cases $gpu/bin/brt-run >"$OUT/e2e.log" 2>&1; then r=passed; else r=FAILED; status=1; fi
echo "- JAX end-to-end cases on CUDA: $r ($(tail -1 "$OUT/e2e.log"))" >>"$report"
# The Python extension for this machine's Python.
py=/tmp/brt-python
if cmake -S python -B $py -G Ninja -DCMAKE_PREFIX_PATH="$PWD/$gpu/install" >"$OUT/python-build.log" 2>&1 &&
   cmake --build $py >>"$OUT/python-build.log" 2>&1; then
  export PYTHONPATH=$py/python:python:examples
  # The CUDA binding test only: the CPU provider (oneDNN) is not carried.
  if BRT_GPU_MODELS=$gpu/models python3 -m pytest -q tests/python -k cuda >"$OUT/pytest.log" 2>&1; then
    r=passed; else r=FAILED; status=1; fi
  echo "- Python bindings with CUDA tensors: $r ($(tail -1 "$OUT/pytest.log"))" >>"$report"
  echo >>"$report"
  python3 bench/gpu_bench.py --models $gpu/models >>"$report" 2>"$OUT/gpu_bench.log" ||
    { echo "gpu_bench failed: see gpu_bench.log" >>"$report"; status=1; }
else
  echo "- Python extension: build FAILED (see python-build.log); bindings and benchmarks not run" >>"$report"
  status=1
fi
cat "$report"
exit $status
