"""Where a brt executable's time goes on a GPU: every CUDA kernel it launches,
traced by PyTorch's profiler (CUPTI sees all kernels in the process,
brt's own, cuBLASLt's and cuDNN's), grouped by name, most time first.

  python3 bench/gpu_profile.py MODEL.brtx [--runs 20] [--top 15]

Inputs are random, shaped and typed from the executable's signature, on the
GPU; the context runs op by op (no graph) so that each kernel shows up.
"""
import argparse
import sys

import numpy as np
import torch

import brt

TORCH_DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16,
                "i64": torch.int64, "i32": torch.int32, "i1": torch.bool}


def random_input(arg, rng):
    dtype = TORCH_DTYPES[arg["dtype"]]
    shape = tuple(arg["shape"])
    if dtype.is_floating_point:
        return torch.from_numpy(rng.standard_normal(shape).astype(np.float32) * 0.1).to("cuda", dtype)
    return torch.from_numpy(rng.integers(0, 2, shape)).to("cuda", dtype)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--top", type=int, default=15)
    opts = ap.parse_args()
    torch.cuda.set_stream(torch.cuda.Stream())
    session = brt.Session(opts.model, providers=["cuda"])
    ctx = session.new_request()
    ctx.set_stream(torch.cuda.current_stream().cuda_stream)
    ctx.set_graph_capture(False)
    rng = np.random.default_rng(0)
    for i, arg in enumerate(session.functions[0]["arguments"]):
        if arg["role"] == "input":
            ctx.bind(i, random_input(arg, rng))
    for _ in range(3):
        ctx.run()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(opts.runs):
            ctx.run()
        torch.cuda.synchronize()
    totals = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            t, n = totals.get(e.name, (0.0, 0))
            totals[e.name] = (t + e.device_time, n + 1)
    whole = sum(t for t, _ in totals.values())
    print(f"{opts.model}: {whole / opts.runs / 1e3:.3f} ms of kernels per run, {len(totals)} kernels")
    print("| kernel | ms per run | share | launches per run |\n|---|---|---|---|")
    for name, (t, n) in sorted(totals.items(), key=lambda kv: -kv[1][0])[:opts.top]:
        print(f"| {name[:90]} | {t / opts.runs / 1e3:.3f} | {t / whole:.0%} | {n / opts.runs:g} |")


if __name__ == "__main__":
    sys.exit(main())
