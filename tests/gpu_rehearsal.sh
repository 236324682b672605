#!/usr/bin/env bash
# Rehearses the GPU machine's path on this one, so that every step that needs
# no GPU is known to work before device time is spent:
#   1. scripts/gpu_pack.sh packs BUILD, the pack and the tracked tree fit the
#      64 MiB a device call carries, and every PTX kernel brt-compile
#      generated into the pack assembles with ptxas (tests/ptx_check.py);
#   2. scripts/gpu_suite.sh runs from the pack against the emulated CUDA
#      provider (BRT_PROVIDER_PATH) and must pass;
#   3. it runs again against the real provider, which sees no device here,
#      with BRT_EXPECT_GPU=1 ("a GPU is visible but the provider is broken"),
#      and must fail, naming why, in no more files than a device call brings
#      back;
#   4. one stage with a 1 s step limit must fail, saying it timed out;
#   5. --budget: the first contact's form passes within 420 s, and stages the
#      budget cannot hold are reported "not run" and fail the suite.
#   tests/gpu_rehearsal.sh BUILD
set -euo pipefail
build=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/gpu_pack.sh "$build" "$work/gpu"
echo "== the pack and the working tree fit a device call (64 MiB carried in all)"
pack_bytes=$(du -sb "$work/gpu" | cut -f1)
# Every "total" line: xargs may split the list over several du calls.
tree_bytes=$(git ls-files -z 2>/dev/null | xargs -0 -r du -cb 2>/dev/null | awk '$2 == "total" { s += $1 } END { print s + 0 }') || true
tree_bytes=${tree_bytes:-0}
echo "pack $((pack_bytes >> 20)) MiB + tracked tree $((tree_bytes >> 20)) MiB"
[ $((pack_bytes + tree_bytes)) -lt $((64 << 20)) ] ||
  { echo "FAILED: the pack and the tree take more than the 64 MiB a device call carries" >&2; exit 1; }
echo "== every kernel brt-compile generated assembles for sm_80 and sm_90 (ptxas)"
nvcc=$(grep -m1 '^CMAKE_CUDA_COMPILER:' "$build/CMakeCache.txt" | cut -d= -f2)
python3 tests/ptx_check.py --ptxas "$(dirname "$nvcc")/ptxas" "$work/gpu"
echo "== the suite against the emulated provider (must pass)"
# Without PYTHONPATH: the GPU machine has no brt module until the python stage builds one.
env -u PYTHONPATH BRT_GPU_PACK="$work/gpu" BRT_PROVIDER_PATH="$build/tests/emulated_cuda" \
  BRT_EXPECT_GPU=0 OUT="$work/emulated" scripts/gpu_suite.sh
echo "== the suite with a visible GPU and a provider that cannot run (must fail)"
if BRT_GPU_PACK="$work/gpu" BRT_EXPECT_GPU=1 OUT="$work/broken" scripts/gpu_suite.sh; then
  echo "FAILED: gpu_suite.sh passed although the provider cannot run" >&2
  exit 1
fi
# What a device call brings back: the report and the logs' archive, no more.
[ "$(ls "$work/broken")" = "$(printf 'gpu-logs.tar.gz\ngpu-results.md')" ] ||
  { echo "FAILED: the suite wrote more than its two files: $(ls "$work/broken")" >&2; exit 1; }
mkdir "$work/broken-logs"
tar xzf "$work/broken/gpu-logs.tar.gz" -C "$work/broken-logs"
grep -q "a GPU is visible" "$work/broken-logs/ops_elementwise_test.log" ||
  { echo "FAILED: the op tests did not say why they failed" >&2; exit 1; }
grep -q "FAILED" "$work/broken/gpu-results.md"
echo "== one stage with a step over its time limit (must fail, saying so)"
# The python stage: building the extension takes several seconds, however
# fast the machine (the e2e cases can take under one).
if BRT_GPU_PACK="$work/gpu" BRT_PROVIDER_PATH="$build/tests/emulated_cuda" BRT_EXPECT_GPU=0 \
  BRT_GPU_STEP_TIMEOUT=1 OUT="$work/slow" scripts/gpu_suite.sh python; then
  echo "FAILED: gpu_suite.sh passed although its step ran over the limit" >&2
  exit 1
fi
grep -q "timed out after 1 s" "$work/slow/gpu-results.md" ||
  { echo "FAILED: the report does not say the step timed out" >&2; exit 1; }
echo "== the first contact's form, --budget 420 (must pass)"
env -u PYTHONPATH BRT_GPU_PACK="$work/gpu" BRT_PROVIDER_PATH="$build/tests/emulated_cuda" \
  BRT_EXPECT_GPU=0 OUT="$work/budget" scripts/gpu_suite.sh --budget 420
grep -q "budget: 420 s, used" "$work/budget/gpu-results.md"
echo "== a budget too small for the stages (must fail, reporting them not run)"
if BRT_GPU_PACK="$work/gpu" BRT_PROVIDER_PATH="$build/tests/emulated_cuda" BRT_EXPECT_GPU=0 \
  OUT="$work/small" scripts/gpu_suite.sh --budget 50 tests e2e; then
  echo "FAILED: gpu_suite.sh passed although its stages did not run" >&2
  exit 1
fi
for stage in tests e2e; do
  grep -q -- "- $stage: not run (.* of the 50 s budget left; it needs about" "$work/small/gpu-results.md" ||
    { echo "FAILED: the report does not say that $stage was not run" >&2; exit 1; }
done
if grep -q passed "$work/small/gpu-results.md"; then
  echo "FAILED: a stage that did not run is reported passed" >&2
  exit 1
fi
echo "gpu rehearsal: the emulated suite passed, in full and in its budgeted form; the broken-provider, timed-out and over-budget suites failed as they must"
