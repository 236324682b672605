#!/usr/bin/env bash
# Fuzzes the executable loader with libFuzzer (clang, ASan+UBSan) and records
# the run in tests/fuzz/RESULTS.md.
#   scripts/fuzz.sh [SECONDS]        (default 600)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-600}
prefix=$(python3 -c 'import sys; print(sys.prefix)')
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!tests/fuzz/RESULTS.md' || echo "+uncommitted changes")

# Seeds: every executable the unit tests build, plus the end-to-end MLP.
cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
cmake --build build >/dev/null
seeds=build/fuzz-seeds
rm -rf "$seeds" && mkdir -p "$seeds"
for t in build/tests/*_test; do BRT_SAVE_EXECUTABLES=$seeds "$t" >/dev/null 2>&1 || true; done
build/tests/make_mlp "$seeds" >/dev/null && rm -f "$seeds"/*.npy

CC=clang CXX=clang++ cmake -S . -B build-fuzz -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DBRT_BUILD_FUZZERS=ON -DBRT_SANITIZE="address;undefined" -DBRT_BUILD_TESTS=OFF -DBRT_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz --target fuzz_loader >/dev/null

corpus=build-fuzz/corpus
rm -rf "$corpus" build-fuzz/crash-* build-fuzz/leak-* build-fuzz/timeout-* build-fuzz/oom-*
mkdir -p "$corpus"
log=build-fuzz/fuzz.log
status=0
build-fuzz/bin/fuzz_loader -max_total_time="$seconds" -print_final_stats=1 -rss_limit_mb=4096 -max_len=65536 \
  -artifact_prefix=build-fuzz/ "$corpus" "$seeds" >"$log" 2>&1 || status=$?

execs=$(grep -E "^stat::number_of_executed_units" "$log" | awk '{print $2}')
cov=$(grep -E "^#[0-9]+.*cov:" "$log" | tail -1 | sed -E 's/.*cov: ([0-9]+) ft: ([0-9]+).*/\1 edges, \2 features/')
crashes=$(find build-fuzz -maxdepth 1 \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
cat > tests/fuzz/RESULTS.md <<EOT
# Loader fuzzing results

Latest run of \`scripts/fuzz.sh $seconds\` (libFuzzer, clang $(clang --version | head -1 | sed -E 's/.*version ([0-9.]+).*/\1/'), ASan+UBSan):

| field | value |
|---|---|
| date | $(date -u +%Y-%m-%d) |
| commit | ${commit} |
| machine | $(nproc) cores, $(grep -m1 "model name" /proc/cpuinfo | cut -d: -f2 | sed 's/^ //') |
| duration | ${seconds} s |
| seeds | $(ls "$seeds" | wc -l) executables written by the unit tests and make_mlp |
| executions | ${execs:-unknown} |
| coverage | ${cov:-unknown} |
| corpus after the run | $(ls "$corpus" | wc -l) inputs |
| crashes, leaks, timeouts | ${crashes} |
| libFuzzer exit status | ${status} |
EOT
cat tests/fuzz/RESULTS.md
[ "$status" -eq 0 ] && [ "$crashes" -eq 0 ]
