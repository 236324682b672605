#!/usr/bin/env bash
# Rehearses the GPU machine's path on this one, so that every step that needs
# no GPU is known to work before device time is spent:
#   1. scripts/gpu_pack.sh packs BUILD;
#   2. scripts/gpu_suite.sh runs from the pack against the emulated CUDA
#      provider (BRT_PROVIDER_PATH) and must pass;
#   3. it runs again against the real provider, which sees no device here,
#      with BRT_EXPECT_GPU=1 ("a GPU is visible but the provider is broken"),
#      and must fail, naming why.
#   tests/gpu_rehearsal.sh BUILD
set -euo pipefail
build=$(cd "$1" && pwd)
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/gpu_pack.sh "$build" "$work/gpu"
echo "== the suite against the emulated provider (must pass)"
BRT_GPU_PACK="$work/gpu" BRT_PROVIDER_PATH="$build/tests/emulated_cuda" BRT_EXPECT_GPU=0 \
  OUT="$work/emulated" scripts/gpu_suite.sh
echo "== the suite with a visible GPU and a provider that cannot run (must fail)"
if BRT_GPU_PACK="$work/gpu" BRT_EXPECT_GPU=1 OUT="$work/broken" scripts/gpu_suite.sh; then
  echo "FAILED: gpu_suite.sh passed although the provider cannot run" >&2
  exit 1
fi
grep -q "a GPU is visible" "$work/broken/ops_elementwise_test.log" ||
  { echo "FAILED: the op tests did not say why they failed" >&2; exit 1; }
grep -q "FAILED" "$work/broken/gpu-results.md"
echo "gpu rehearsal: the emulated suite passed; the broken-provider suite failed as it must"
