#!/usr/bin/env bash
# The whole GPU suite and the GPU benchmarks, on a machine with a GPU, from
# build/gpu made by scripts/gpu_pack.sh on a machine with brt's build
# dependencies (carry build/gpu).
#   scripts/gpu_suite.sh [STAGE...]     (default: every stage, in this order)
#   tests      the op tests on the CUDA provider (BRT_TEST_DEVICE=cuda) and
#              the NCCL provider's, a world of one
#   memcheck   the op tests under compute-sanitizer memcheck
#   racecheck  the same under racecheck
#   e2e        the JAX end-to-end cases compiled for --target=cuda, against
#              JAX's outputs
#   python     the Python extension, rebuilt here against build/gpu/install,
#              and its tests (CUDA tensors)
#   bench      bench/gpu_bench.py (bandwidth, matmul vs cuBLAS, encoder block
#              vs PyTorch eager, torch.compile and JAX/XLA, graph replay vs
#              stream launches, MiniLM's BERT f32 and f16 vs PyTorch eager and
#              torch.compile) and bench/chunked_gemm_bench (the overlapped
#              ops' chunk GEMMs at FLUX's shapes against one GEMM)
# A device call runs 10 minutes at most: `tests e2e python`, `memcheck
# racecheck` and `bench` fit one call each. Every step runs under a time
# limit (BRT_GPU_STEP_TIMEOUT seconds, default 240; the benchmarks 480) and
# one that runs over is a failure, so a hang costs one step, not the call.
# Writes two files, which is what a device call brings back: the report
# $OUT/gpu-results.md (default OUT: ./gpu-out/), and every step's log in
# $OUT/gpu-logs.tar.gz, brought up to date after each step.
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
all_stages="tests memcheck racecheck e2e python bench"
stages=${*:-$all_stages}
for s in $stages; do
  [[ " $all_stages " == *" $s "* ]] || { echo "gpu_suite.sh: unknown stage '$s' (stages: $all_stages)" >&2; exit 2; }
done
want() { [[ " $stages " == *" $1 "* ]]; }
step_timeout=${BRT_GPU_STEP_TIMEOUT:-240}
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
logs=$(mktemp -d)
py=$(mktemp -d)
trap 'rm -rf "$logs" "$py"' EXIT
# step NAME LIMIT COMMAND...: runs COMMAND under the time limit with its
# output in NAME.log, brings the logs' archive up to date, and leaves in
# $result "passed", "FAILED" or "FAILED (timed out after LIMIT s)".
step() {
  local name=$1 limit=$2 rc
  shift 2
  timeout --kill-after=10 "$limit" "$@" >"$logs/$name.log" 2>&1
  rc=$?
  tar czf "$OUT/gpu-logs.tar.gz" -C "$logs" .
  case $rc in
    0) result=passed ;;
    124 | 137) result="FAILED (timed out after $limit s)"; status=1 ;;
    *) result=FAILED; status=1 ;;
  esac
  return $rc
}
# A skip where a GPU is expected is a failure: $1 is the step, $2 its log.
no_skips() {
  if [ "$BRT_EXPECT_GPU" = 1 ] && grep -qE '^\[  SKIPPED \]|[0-9]+ skipped' "$2"; then
    echo "- $1: SKIPPED tests although a GPU is visible (see $(basename "$2") in gpu-logs.tar.gz): FAILED" >>"$report"
    status=1
  fi
}
missing_libs=$(ldd $gpu/install/lib/libbrt_provider_cuda.so | grep "not found" || true)
{
  echo "# GPU suite: $stages"
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
op_tests="ops_elementwise_test ops_data_test ops_index_reduce_test ops_dnnl_test state_test"
export BRT_TEST_DEVICE=cuda
if want tests; then
  # nccl_test: the nccl provider, a world of one (needs libnccl.so.2: the
  # system's or PyTorch's nvidia-nccl wheel, found through nvidia_libs above).
  for t in $op_tests nccl_test; do
    step "$t" "$step_timeout" $gpu/bin/$t
    summary=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ tests?' "$logs/$t.log" | sed 's/, listed below://' | tr '\n' ' ')
    why=$(grep -m1 -E "a GPU is visible|no usable CUDA device" "$logs/$t.log" || true)
    first=$(grep -m1 -E "^\[  FAILED  \] [A-Za-z]" "$logs/$t.log" || true)
    echo "- $t (CUDA): $result, $summary${why:+ -- $why}${first:+ -- first: $first}" >>"$report"
    no_skips "$t" "$logs/$t.log"
  done
fi
for tool in memcheck racecheck; do
  want $tool || continue
  if [ "$BRT_EXPECT_GPU" != 1 ]; then
    echo "- compute-sanitizer $tool: not run (no GPU)" >>"$report"
  elif ! command -v compute-sanitizer >/dev/null; then
    echo "- compute-sanitizer: not found: FAILED" >>"$report"
    status=1
  else
    for t in $op_tests; do
      step "$t.$tool" "$step_timeout" compute-sanitizer --tool $tool --error-exitcode 1 $gpu/bin/$t
      [ "$result" = passed ] && result=clean
      echo "- compute-sanitizer $tool on $t: $result" >>"$report"
    done
  fi
done
unset BRT_TEST_DEVICE
if want e2e; then
  step e2e "$step_timeout" python3 tests/e2e/cuda_cases.py check $gpu/cases $gpu/bin/brt-run
  first=$(grep -m1 "^FAILED" "$logs/e2e.log" | cut -c1-300 || true)
  last=$(tail -1 "$logs/e2e.log")
  echo "- JAX end-to-end cases on CUDA: $result${last:+ ($last)}${first:+ -- first: $first}" >>"$report"
  no_skips "JAX end-to-end cases" "$logs/e2e.log"
fi
if want python || want bench; then
  # The Python extension for this machine's Python.
  if step python-build "$step_timeout" bash -c 'cmake -S python -B "$0" -G Ninja -DCMAKE_PREFIX_PATH="$1/install" && cmake --build "$0"' "$py" "$gpu"; then
    export PYTHONPATH=$py/python:python:examples
  else
    echo "- Python extension: build $result (see python-build.log); bindings and benchmarks not run" >>"$report"
    stages=$(echo " $stages " | sed 's/ python / /; s/ bench / /')
  fi
fi
if want python; then
  # The CUDA binding test only: the CPU provider (oneDNN) is not carried.
  step pytest "$step_timeout" env BRT_GPU_MODELS=$gpu/models python3 -m pytest -q tests/python -k cuda
  last=$(tail -1 "$logs/pytest.log")
  echo "- Python bindings with CUDA tensors: $result${last:+ ($last)}" >>"$report"
  no_skips "Python bindings with CUDA tensors" "$logs/pytest.log"
fi
if want bench; then
  echo >>"$report"
  if [ "$BRT_EXPECT_GPU" = 1 ]; then
    bench_timeout=${BRT_GPU_STEP_TIMEOUT:-480}
    # The tables go to the report, section by section as they end.
    step gpu_bench "$bench_timeout" bash -c 'python3 bench/gpu_bench.py --models "$0" >"$1"' "$gpu/models" "$logs/gpu_bench.md"
    cat "$logs/gpu_bench.md" >>"$report"
    [ "$result" = passed ] || echo "- gpu_bench: $result (see gpu_bench.log)" >>"$report"
    echo >>"$report"
    if [ ! -x $gpu/bin/chunked_gemm_bench ]; then
      echo "- chunked_gemm_bench: not packed (built with NCCL and the benchmarks): FAILED" >>"$report"
      status=1
    else
      step chunked_gemm_bench "$step_timeout" bash -c '"$0" >"$1"' $gpu/bin/chunked_gemm_bench "$logs/chunked_gemm_bench.md"
      cat "$logs/chunked_gemm_bench.md" >>"$report"
      [ "$result" = passed ] || echo "- chunked_gemm_bench: $result (see chunked_gemm_bench.log)" >>"$report"
    fi
  else
    echo "- benchmarks: not run (no GPU)" >>"$report"
  fi
fi
cat "$report"
exit $status
