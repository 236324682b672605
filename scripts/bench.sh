#!/usr/bin/env bash
# Runs the CPU benchmarks and records them in bench/results/: dispatch
# overhead, key kernels, the encoder block under brt-bench, and (when
# onnxruntime and IREE are installed) the peer comparison.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh >/dev/null
json=$(mktemp)
build/bench/dispatch_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true \
  --benchmark_out="$json" --benchmark_out_format=json >/dev/null
out=bench/results/$(date -u +%Y-%m-%d)-dispatch-cpu.md
python3 - "$json" "$out" "$(git rev-parse --short HEAD)" <<'PY'
import json, sys, datetime
sys.path.insert(0, "bench")
import machine
data = json.load(open(sys.argv[1]))
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
    *machine.header_lines(),
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
sys.path.insert(0, "bench")
import machine
b = json.load(open(sys.argv[1]))
lat = b["latency_ms"]
lines = ["# Transformer encoder block on the CPU provider", "",
         f"- date: {datetime.date.today()}", f"- commit: {sys.argv[3]}",
         *machine.header_lines(),
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
lines += ["", "Peers on the same models: the `peers-cpu` file of the same date."]
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
rm -rf "$tmp"

# Key kernels through the runtime (bench/kernel_bench.cc), medians of 5.
json=$(mktemp)
build/bench/kernel_bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true \
  --benchmark_out="$json" --benchmark_out_format=json >/dev/null
out=bench/results/$(date -u +%Y-%m-%d)-kernels-cpu.md
python3 - "$json" "$out" "$(git rev-parse --short HEAD)" <<'PY'
import json, sys, datetime
sys.path.insert(0, "bench")
import machine
data = json.load(open(sys.argv[1]))
lines = ["# Key CPU kernels through the runtime", "", f"- date: {datetime.date.today()}", f"- commit: {sys.argv[3]}",
         *machine.header_lines(),
         "- benchmark: `bench/kernel_bench` (one-op executables run by a request context), median of 5 repetitions", "",
         "| benchmark | time per run | rate |", "|---|---|---|"]
for b in data["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    rate = next(((k, v) for k, v in b.items() if k in ("FLOP/s", "bytes/s")), None)
    if rate and rate[0] == "FLOP/s":
        shown = machine.checked_gflops(rate[1] / 1e9)
    else:
        shown = f"{rate[1] / 1e9:.1f} Gbytes/s" if rate else ""
    lines.append(f"| {b['run_name']} | {b['real_time']:.2f} {b['time_unit']} | {shown} |")
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
rm -f "$json"

# brt vs ONNX Runtime vs IREE (scripts/bootstrap.sh --peers installs them).
if python3 -c "import onnx, onnxruntime, iree.compiler, iree.runtime" 2>/dev/null; then
  out=bench/results/$(date -u +%Y-%m-%d)-peers-cpu.md
  table=$(mktemp)
  PYTHONPATH=build/python:python:examples python3 bench/peer_compare.py --runs 100 --markdown "$table" >/dev/null
  versions=$(python3 -c "import importlib.metadata as m; print(f\"onnxruntime {m.version('onnxruntime')}, IREE {m.version('iree-base-compiler')}, torch {m.version('torch')}\")")
  {
    echo "# brt vs ONNX Runtime vs IREE (vs PyTorch) on the CPU"
    echo
    echo "- date: $(date -u +%Y-%m-%d)"
    echo "- commit: $(git rev-parse --short HEAD)"
    python3 bench/machine.py
    echo "- peers: $versions (IREE: llvm-cpu, host CPU)"
    echo "- command: \`PYTHONPATH=build/python:python:examples python3 bench/peer_compare.py --runs 100\`"
    echo "- JAX models: MLP 32x256 -> 512 -> 512 -> 10; CNN 8x32x32x3, two 3x3 conv+relu+maxpool, dense; transformer encoder block 2x64x256, 4 heads, exact GELU"
    echo "- PyTorch models: all-MiniLM-L6-v2 (real weights, sentence embeddings, batch 1 and 32 x sequence 128, rows of random length 64-128); torchvision ResNet-18 (random weights, batch 1 and 8, 224x224)"
    echo
    cat "$table"
  } >"$out"
  cat "$out"
  rm -f "$table"
else
  echo "peer comparison skipped: scripts/bootstrap.sh --peers installs its peers"
fi

# The LM train step, brt vs JAX (and PyTorch eager where installed), and the
# data-parallel step's all-reduce hidden by the backward pass on 2 ranks.
PYTHONPATH=build/python:examples python3 bench/train_bench.py \
  --markdown "bench/results/$(date -u +%Y-%m-%d)-train-lm-cpu.md"
PYTHONPATH=build/python python3 bench/dp_overlap_bench.py --ranks 2 \
  --markdown "bench/results/$(date -u +%Y-%m-%d)-dp-overlap-cpu.md"
