#!/usr/bin/env bash
# The GPU suite and the GPU benchmarks, on a machine with a GPU, from
# build/gpu made by scripts/gpu_pack.sh on a machine with brt's build
# dependencies (carry build/gpu).
#   scripts/gpu_suite.sh [--budget SECONDS] [STAGE...]
#   tests      the op tests on the CUDA provider (BRT_TEST_DEVICE=cuda) and
#              the NCCL provider's, a world of one
#   e2e        the JAX end-to-end cases compiled for --target=cuda, against
#              JAX's outputs
#   python     the Python extension, rebuilt here against build/gpu/install,
#              and its CUDA binding tests (PyTorch CUDA tensors)
#   bench      bench/gpu_bench.py (bandwidth, matmul vs cuBLAS, encoder block
#              vs PyTorch eager, torch.compile and JAX/XLA, graph replay vs
#              stream launches, MiniLM's BERT vs PyTorch eager and
#              torch.compile) and bench/chunked_gemm_bench (the overlapped
#              ops' chunk GEMMs at FLUX's shapes against one GEMM: alpha) and
#              bench/flagged_gemm_bench (the fine-grained AG+GEMM on two streams)
#   memcheck   op tests under compute-sanitizer memcheck
#   racecheck  the same under racecheck
# Without --budget every stage runs (default: all, in the order above).
# --budget SECONDS is the first contact with a lent GPU, whose minutes are
# few: the stages run in the order above (default: tests e2e python bench
# memcheck; the benchmarks in their compact form, memcheck on two op tests),
# a stage starts only if the time it needs (STAGE_SECONDS below) is left,
# every step's limit is cut to what is left, and a stage that was not started
# or was cut short is reported "not run" or "not finished", never passed.
# Every step runs under a time limit (BRT_GPU_STEP_TIMEOUT seconds, default
# 240; gpu_bench.py 480, flagged_gemm_bench 120) and one that runs over is a
# failure, so a hang costs one step, not the call.
# Writes two files, which is what a device call brings back: the report
# $OUT/gpu-results.md (default OUT: ./gpu-out/), and every step's log in
# $OUT/gpu-logs.tar.gz, brought up to date after each step.
# Exits non-zero when anything fails or is not run for the budget, and,
# where a GPU is visible, when anything was skipped. Rehearsed without a GPU
# by tests/gpu_rehearsal.sh (the emulated provider through BRT_PROVIDER_PATH,
# a "GPU visible but provider broken" run that must fail, and budgets too
# small for a stage).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-gpu-out}
mkdir -p "$OUT"
report="$OUT/gpu-results.md"
gpu=${BRT_GPU_PACK:-build/gpu}
[ -d "$gpu/install" ] || { echo "no $gpu: run scripts/gpu_pack.sh first (where brt builds) and carry it" >&2; exit 2; }
gpu=$(cd "$gpu" && pwd)
budget=""
if [ "${1:-}" = --budget ]; then
  [[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "gpu_suite.sh: --budget takes a number of seconds, got '${2:-}'" >&2; exit 2; }
  budget=$((10#$2))
  shift 2
fi
all_stages="tests e2e python bench memcheck racecheck"
if [ -n "$budget" ]; then default_stages="tests e2e python bench memcheck"; else default_stages=$all_stages; fi
stages=${*:-$default_stages}
for s in $stages; do
  [[ " $all_stages " == *" $s "* ]] || { echo "gpu_suite.sh: unknown stage '$s' (stages: $all_stages)" >&2; exit 2; }
done
# The seconds a stage needs on an H100, from its first runs there; a stage
# starts under --budget only when they are left.
declare -A STAGE_SECONDS=([tests]=90 [e2e]=60 [python]=60 [bench]=150 [memcheck]=60 [racecheck]=60)
started=$(date +%s)
seconds_left() { echo $((budget - ($(date +%s) - started))); }
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
# step NAME LIMIT COMMAND...: runs COMMAND under the time limit (cut to the
# budget left) with its output in NAME.log, brings the logs' archive up to
# date, and leaves in $result "passed", "FAILED", "FAILED (timed out after
# LIMIT s)" or "not finished (the budget ran out after LIMIT s)".
step() {
  local name=$1 limit=$2 rc cut=""
  shift 2
  if [ -n "$budget" ] && [ "$(seconds_left)" -lt "$limit" ]; then
    limit=$(seconds_left)
    cut=1
  fi
  if [ "$limit" -le 0 ]; then
    result="not run (the budget ran out)"
    status=1
    return 1
  fi
  timeout --kill-after=10 "$limit" "$@" >"$logs/$name.log" 2>&1
  rc=$?
  tar czf "$OUT/gpu-logs.tar.gz" -C "$logs" .
  case $rc in
    0) result=passed ;;
    124 | 137) if [ -n "$cut" ]; then result="not finished (the budget ran out after $limit s)"; else result="FAILED (timed out after $limit s)"; fi; status=1 ;;
    *) result=FAILED; status=1 ;;
  esac
  return $rc
}
# Whether stage $1 may start: always without a budget; with one, when the
# seconds it needs are left (else it is reported "not run").
may_start() {
  [ -z "$budget" ] && return 0
  local left
  left=$(seconds_left)
  [ "$left" -ge "${STAGE_SECONDS[$1]}" ] && return 0
  echo "- $1: not run ($left s of the $budget s budget left; it needs about ${STAGE_SECONDS[$1]} s)" >>"$report"
  status=1
  return 1
}
# A skip where a GPU is expected is a failure: $1 is the step, $2 its log.
# A skip where a GPU is visible fails the suite, except a test of the CPU
# provider's own ops, which skips on CUDA saying so ("... the CPU provider's").
no_skips() {
  local skipped cpu_only
  skipped=$(grep -cE '^\[  SKIPPED \] .*\([0-9]+ ms\)$' "$2")
  cpu_only=$(grep -A1 -E ': Skipped$' "$2" | grep -c "the CPU provider's")
  if [ "$BRT_EXPECT_GPU" = 1 ] && { [ "$skipped" -gt "$cpu_only" ] || grep -qE '[0-9]+ skipped' "$2"; }; then
    echo "- $1: SKIPPED tests although a GPU is visible (see $(basename "$2") in gpu-logs.tar.gz): FAILED" >>"$report"
    status=1
  fi
}
missing_libs=$(ldd $gpu/install/lib/libbrt_provider_cuda.so | grep "not found" || true)
{
  echo "# GPU suite: $stages${budget:+ (budget $budget s)}"
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
op_tests="ops_elementwise_test ops_data_test ops_index_reduce_test ops_window_test ops_dnnl_test state_test
  ops_complex_test ops_reducers_test control_flow_test shape_graphs_test"

stage_tests() {
  # nccl_test: the nccl provider, a world of one (needs libnccl.so.2: the
  # system's or PyTorch's nvidia-nccl wheel, found through nvidia_libs above).
  for t in $op_tests nccl_test; do
    step "$t" "$step_timeout" env BRT_TEST_DEVICE=cuda $gpu/bin/$t
    summary=$(grep -E '^\[  (PASSED|FAILED|SKIPPED) +\] [0-9]+ tests?' "$logs/$t.log" 2>/dev/null | sed 's/, listed below://' | tr '\n' ' ')
    why=$(grep -m1 -E "a GPU is visible|no usable CUDA device" "$logs/$t.log" 2>/dev/null || true)
    first=$(grep -m1 -E "^\[  FAILED  \] [A-Za-z]" "$logs/$t.log" 2>/dev/null || true)
    echo "- $t (CUDA): $result, $summary${why:+ -- $why}${first:+ -- first: $first}" >>"$report"
    [ -f "$logs/$t.log" ] && no_skips "$t" "$logs/$t.log"
  done
}

# compute-sanitizer over the op tests: under a budget, the two whose kernels
# are brt's own (elementwise and data movement; reductions and indexing).
stage_sanitizer() {
  local tool=$1 tests=$op_tests
  [ -n "$budget" ] && tests="ops_elementwise_test ops_index_reduce_test ops_window_test"
  if [ "$BRT_EXPECT_GPU" != 1 ]; then
    echo "- compute-sanitizer $tool: not run (no GPU)" >>"$report"
  elif ! command -v compute-sanitizer >/dev/null; then
    echo "- compute-sanitizer: not found: FAILED" >>"$report"
    status=1
  else
    for t in $tests; do
      step "$t.$tool" "$step_timeout" env BRT_TEST_DEVICE=cuda compute-sanitizer --tool $tool --error-exitcode 1 $gpu/bin/$t
      [ "$result" = passed ] && result=clean
      echo "- compute-sanitizer $tool on $t: $result" >>"$report"
    done
  fi
}

stage_e2e() {
  step e2e "$step_timeout" python3 tests/e2e/cuda_cases.py check $gpu/cases $gpu/bin/brt-run
  first=$(grep -m1 "^FAILED" "$logs/e2e.log" 2>/dev/null | cut -c1-300 || true)
  last=$(tail -1 "$logs/e2e.log" 2>/dev/null)
  echo "- JAX end-to-end cases on CUDA: $result${last:+ ($last)}${first:+ -- first: $first}" >>"$report"
  [ -f "$logs/e2e.log" ] && no_skips "JAX end-to-end cases" "$logs/e2e.log"
}

# The Python extension for this machine's Python, built once for the
# python and bench stages; 1 when it cannot be.
python_built=""
build_python() {
  [ -n "$python_built" ] && return "$python_built"
  if step python-build "$step_timeout" bash -c 'cmake -S python -B "$0" -G Ninja -DCMAKE_PREFIX_PATH="$1/install" -DPython_EXECUTABLE="$(command -v python3)" && cmake --build "$0"' "$py" "$gpu"; then
    export PYTHONPATH=$py/python:python:examples
    python_built=0
  else
    echo "- Python extension: build $result (see python-build.log); bindings and benchmarks not run" >>"$report"
    python_built=1
  fi
  return "$python_built"
}

stage_python() {
  build_python || return
  # The CUDA binding tests only: the CPU provider (oneDNN) is not carried,
  # and the other test files need brt-compile or torch-mlir.
  step pytest "$step_timeout" env BRT_GPU_MODELS=$gpu/models python3 -m pytest -q tests/python/test_bindings.py -k cuda
  last=$(tail -1 "$logs/pytest.log" 2>/dev/null)
  echo "- Python bindings with CUDA tensors: $result${last:+ ($last)}" >>"$report"
  [ -f "$logs/pytest.log" ] && no_skips "Python bindings with CUDA tensors" "$logs/pytest.log"
}

stage_bench() {
  echo >>"$report"
  if [ "$BRT_EXPECT_GPU" != 1 ]; then
    echo "- benchmarks: not run (no GPU)" >>"$report"
    return
  fi
  local quick="" iters=""
  [ -n "$budget" ] && quick=--quick iters="--iters 5 --tp 8 --dtype bf16"
  bench_timeout=${BRT_GPU_STEP_TIMEOUT:-480}
  # The tables go to the report, section by section as they end. The C++
  # benches below need no Python.
  if build_python; then
    step gpu_bench "$bench_timeout" bash -c 'python3 bench/gpu_bench.py --models "$0" $2 >"$1"' "$gpu/models" "$logs/gpu_bench.md" "$quick"
    cat "$logs/gpu_bench.md" >>"$report" 2>/dev/null
    [ "$result" = passed ] || echo "- gpu_bench: $result (see gpu_bench.log)" >>"$report"
  fi
  echo >>"$report"
  # alpha at FLUX's shapes, and the fine-grained AG+GEMM on two streams.
  for b in chunked_gemm_bench flagged_gemm_bench; do
    if [ ! -x $gpu/bin/$b ]; then
      echo "- $b: not packed (built with NCCL and the benchmarks): FAILED" >>"$report"
      status=1
      continue
    fi
    # flagged_gemm_bench stops a form that hangs itself, within a minute or so.
    local args=$iters limit=$step_timeout
    if [ "$b" = flagged_gemm_bench ]; then
      limit=${BRT_GPU_STEP_TIMEOUT:-120}
      args=""
      [ -n "$budget" ] && args="--iters 5"
    fi
    step $b "$limit" bash -c '"$0" $2 >"$1"' "$gpu/bin/$b" "$logs/$b.md" "$args"
    cat "$logs/$b.md" >>"$report" 2>/dev/null
    echo >>"$report"
    [ "$result" = passed ] || echo "- $b: $result (see $b.log)" >>"$report"
  done
}

for s in $stages; do
  may_start "$s" || continue
  case $s in
    tests) stage_tests ;;
    e2e) stage_e2e ;;
    python) stage_python ;;
    bench) stage_bench ;;
    memcheck | racecheck) stage_sanitizer "$s" ;;
  esac
done
[ -n "$budget" ] && echo "- budget: $budget s, used $(( $(date +%s) - started )) s" >>"$report"
cat "$report"
exit $status
