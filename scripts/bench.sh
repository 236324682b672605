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

# The transformer encoder block (2x64x256) from examples/, compiled by
# brt-compile and measured by brt-bench.
tmp=$(mktemp -d)
PYTHONPATH=python:examples python3 - "$tmp" <<'PY'
import sys, numpy as np, brt, jax_models as m
brt.compile(m.encoder_block, *m.encoder_args(np.random.default_rng(0)), path=f"{sys.argv[1]}/encoder.brtx")
PY
build/bin/brt-bench "$tmp/encoder.brtx" --random-inputs 1 --warmup 20 --iters 500 --json "$tmp/encoder.json" >/dev/null
out=bench/results/$(date -u +%Y-%m-%d)-encoder-block-cpu.md
python3 - "$tmp/encoder.json" "$out" "$(git rev-parse --short HEAD)" <<'PY'
import json, sys, datetime
b = json.load(open(sys.argv[1]))
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "unknown")
lat = b["latency_ms"]
lines = ["# Transformer encoder block on the CPU provider", "",
         f"- date: {datetime.date.today()}", f"- commit: {sys.argv[3]}", f"- machine: {cpu}",
         "- model: `encoder_block` in `examples/jax_models.py` (batch 2, sequence 64, width 256, 4 heads, exact GELU), "
         "compiled by brt-compile (111 StableHLO ops -> 21 runtime ops)",
         "- measured: `brt-bench --warmup 20 --iters 500`, one thread", "",
         "| statistic | value |", "|---|---|"]
for k in ("min", "p50", "p90", "p99", "p999", "max"):
    lines.append(f"| latency {k} | {lat[k]:.3f} ms |")
lines += [f"| throughput | {b['throughput_runs_per_s']:.1f} runs/s |", f"| load | {b['load_ms']:.1f} ms |",
          f"| first run | {b['first_run_ms']:.1f} ms |", f"| peak RSS | {b['peak_rss_bytes'] / 2**20:.1f} MiB |", "",
          "| op kind | ms per run | share | ops per run |", "|---|---|---|---|"]
for p in b["profile"]:
    lines.append(f"| `{p['kind']}` | {p['ms_per_run']:.3f} | {100 * p['share']:.1f}% | {p['ops_per_run']} |")
lines += ["", "No peer (onnxruntime, IREE) was measured beside it yet: that comparison belongs to the benchmark-runner issue."]
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
rm -rf "$tmp"
