#!/usr/bin/env bash
# The whole GPU suite and the GPU benchmarks, on a machine with a GPU, from
# build/gpu made by scripts/gpu_pack.sh on a machine with brt's build
# dependencies (carry build/gpu). Writes one results file,
# $OUT/gpu-results.md (default: ./gpu-out/):
#   - the op tests on the CUDA provider (BRT_TEST_DEVICE=cuda), then under
#     compute-sanitizer memcheck and racecheck
#   - the JAX end-to-end cases compiled for --target=cuda, against JAX's outputs
#   - the Python extension, rebuilt here against build/gpu/install, and its
#     tests (CUDA tensors)
#   - bench/gpu_bench.py (bandwidth, matmul vs cuBLAS, encoder block vs
#     PyTorch eager, torch.compile and JAX/XLA, graph replay vs stream launches,
#     MiniLM's BERT f32 and f16 vs PyTorch eager and torch.compile)
#   - bench/chunked_gemm_bench (the overlapped ops' chunk GEMMs at FLUX's
#     shapes against one GEMM)
# Exits non-zero when anything fails, and, where a GPU is visible, when
# anything was skipped. Rehearsed without a GPU by tests/gpu_rehearsal.sh
# (the emulated provider through BRT_PROVIDER_PATH, and a "GPU visible but
# provider broken" run that must fail).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
report="$OUT/gpu-results.md"
gpu=${BRT_GPU_PACK:-build/gpu}
[ -d "$gpu/install" ] || { echo "no $gpu: run scripts/gpu_pack.sh first (where brt builds) and carry it" >&2; exit 2; }
gpu=$(cd "$gpu" && pwd)
# The CUDA provider needs cuBLASLt 13 and cuDNN 9: use the ones PyTorch's
# NVIDIA wheels bring when the system has none.
nvidia_libs=$(python3 -c 'import glob, os, nvidia; print(":".join(sorted({os.path.dirname(p) for d in nvidia.__path__ for p in glob.glob(d + "/**/lib*.so*", recursive=True)})))' 2>/dev/null || true)
export LD_LIBRARY_PATH="$gpu/install/lib${nvidia_libs:+:$nvidia_libs}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
status=0
# Where a GPU is visible, nothing may skip: a probe that fails is a failure
# (tests/gpu_expectation.py, tests/unit/test_util.cc). BRT_EXPECT_GPU=1 set
# by hand rehearses that rule on a machine without one.
if [ -z "${BRT_EXPECT_GPU:-}" ]; then
  if nvidia-smi -L 2>/dev/null | grep -q "^GPU "; then BRT_EXPECT_GPU=1; else BRT_EXPECT_GPU=0; fi
fi
export BRT_EXPECT_GPU
missing_libs=$(ldd $gpu/install/lib/libbrt_provider_cuda.so | grep "not found" || true)
{
  echo "# GPU suite"
  echo
  echo "- date: $(date -u +%Y-%m-%d), commit: $(cat $gpu/COMMIT 2>/dev/null || echo unknown) (packed)"
  echo "- device: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo unknown)"
  echo "- GPU expected: $BRT_EXPECT_GPU (a skipped test fails the suite when 1)"
  echo
} >"$report"
if [ -n "$missing_libs" ]; then
  echo "- libbrt_provider_cuda.so: MISSING LIBRARIES (cuBLASLt 13 / cuDNN 9 / ...): $(echo $missing_libs)" >>"$report"
  status=1
fi
# A skip where a GPU is expected is a failure: $1 is the step, $2 its log.
no_skips() {
  if [ "$BRT_EXPECT_GPU" = 1 ] && grep -qE '^\[  SKIPPED \]|[0-9]+ skipped' "$2"; then
    echo "- $1: SKIPPED tests although a GPU is visible (see $(basename "$2")): FAILED" >>"$report"
    status=1
  fi
}
export BRT_TEST_DEVICE=cuda
# nccl_test: the nccl provider, a world of one (needs libnccl.so.2: the
# system's or PyTorch's nvidia-nccl wheel, found through nvidia_libs above).
for t in ops_elementwise_test ops_data_test ops_index_reduce_test ops_dnnl_test state_test nccl_test; do
  if $gpu/bin/$t >"$OUT/$t.log" 2>&1; then r=passed; else r=FAILED; status=1; fi
  summary=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ tests?' "$OUT/$t.log" | sed 's/, listed below://' | tr '\n' ' ')
  why=$(grep -m1 -E "a GPU is visible|no usable CUDA device" "$OUT/$t.log" || true)
  echo "- $t (CUDA): $r, $summary${why:+ -- $why}" >>"$report"
  no_skips "$t" "$OUT/$t.log"
done

if [ "$BRT_EXPECT_GPU" != 1 ]; then
  echo "- compute-sanitizer: not run (no GPU)" >>"$report"
elif command -v compute-sanitizer >/dev/null; then
  for tool in memcheck racecheck; do
    for t in ops_elementwise_test ops_data_test ops_index_reduce_test ops_dnnl_test state_test; do
      if compute-sanitizer --tool $tool --error-exitcode 1 $gpu/bin/$t >"$OUT/$t.$tool.log" 2>&1; then
        r=clean; else r=ERRORS; status=1; fi
      echo "- compute-sanitizer $tool on $t: $r" >>"$report"
    done
  done
else
  echo "- compute-sanitizer: not found: FAILED" >>"$report"
  status=1
fi
unset BRT_TEST_DEVICE
if python3 tests/e2e/cuda_cases.py check $gpu/cases $gpu/bin/brt-run >"$OUT/e2e.log" 2>&1; then r=passed; else r=FAILED; status=1; fi
first_failure=$(grep -m1 "^FAILED" "$OUT/e2e.log" | cut -c1-300 || true)
echo "- JAX end-to-end cases on CUDA: $r ($(tail -1 "$OUT/e2e.log"))${first_failure:+ -- first: $first_failure}" >>"$report"
no_skips "JAX end-to-end cases" "$OUT/e2e.log"
# The Python extension for this machine's Python.
py=$(mktemp -d)
if cmake -S python -B $py -G Ninja -DCMAKE_PREFIX_PATH="$gpu/install" >"$OUT/python-build.log" 2>&1 &&
   cmake --build $py >>"$OUT/python-build.log" 2>&1; then
  export PYTHONPATH=$py/python:python:examples
  # The CUDA binding test only: the CPU provider (oneDNN) is not carried.
  if BRT_GPU_MODELS=$gpu/models python3 -m pytest -q tests/python -k cuda >"$OUT/pytest.log" 2>&1; then
    r=passed; else r=FAILED; status=1; fi
  echo "- Python bindings with CUDA tensors: $r ($(tail -1 "$OUT/pytest.log"))" >>"$report"
  no_skips "Python bindings with CUDA tensors" "$OUT/pytest.log"
  echo >>"$report"
  if [ "$BRT_EXPECT_GPU" = 1 ]; then
    python3 bench/gpu_bench.py --models $gpu/models >>"$report" 2>"$OUT/gpu_bench.log" ||
      { echo "gpu_bench failed: see gpu_bench.log" >>"$report"; status=1; }
    echo >>"$report"
    if [ ! -x $gpu/bin/chunked_gemm_bench ]; then
      echo "- chunked_gemm_bench: not packed (built with NCCL and the benchmarks): FAILED" >>"$report"
      status=1
    elif ! $gpu/bin/chunked_gemm_bench >>"$report" 2>"$OUT/chunked_gemm_bench.log"; then
      echo "chunked_gemm_bench failed: see chunked_gemm_bench.log" >>"$report"
      status=1
    fi
  else
    echo "- benchmarks: not run (no GPU)" >>"$report"
  fi
else
  echo "- Python extension: build FAILED (see python-build.log); bindings and benchmarks not run" >>"$report"
  status=1
fi
cat "$report"
exit $status
