#!/usr/bin/env bash
# Runs the CPU microbenchmarks and records medians in bench/results/.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
json=$(mktemp)
build/bench/dispatch_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true \
  --benchmark_out="$json" --benchmark_out_format=json >/dev/null
out=bench/results/$(date -u +%Y-%m-%d)-dispatch-cpu.md
python3 - "$json" "$out" "$(git rev-parse --short HEAD)" <<'PY'
import json, sys, platform, subprocess, datetime
data = json.load(open(sys.argv[1]))
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "unknown")
rows = []
for b in data["benchmarks"]:
    if b.get("aggregate_name") not in ("median", "mean", "stddev"):
        continue
    ops = int(b["run_name"].split("/")[1])
    per_op_ns = b["real_time"] * {"us": 1e3, "ns": 1, "ms": 1e6}[b["time_unit"]] / ops
    rows.append((b["run_name"], b["aggregate_name"], b["real_time"], b["time_unit"], per_op_ns))
lines = [
    "# Host dispatch overhead (CPU provider)", "",
    f"- date: {datetime.date.today()}", f"- commit: {sys.argv[3]}",
    f"- machine: {cpu}, {data['context']['num_cpus']} cores",
    "- benchmark: `bench/dispatch_bench` -- a chain of 10 000 elementwise ops on 1-element f32 tensors;",
    "  `Unary` is negate, `Binary` is add with a second input (broadcasting path); 10 repetitions.",
    "- target: <= 100 ns per op", "",
    "| benchmark | statistic | time per run | ns per op |", "|---|---|---|---|",
]
for name, agg, t, unit, per_op in rows:
    lines.append(f"| {name} | {agg} | {t:.1f} {unit} | {per_op:.2f} |")
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
rm -f "$json"
