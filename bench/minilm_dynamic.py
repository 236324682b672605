"""Symbolic shapes against static functions and padded buckets (issue 37's
benchmark), side by side in one process, medians of interleaved rounds:

- dynamic / static latency at the same shape, on a plan-cache hit:
  all-MiniLM-L6-v2 (real weights) at 1x128 and 32x128, where the static
  function is the old example's bucket of that shape, and the JAX encoder
  block (d=256, 4 heads) at 2x64;
- peak host memory of the two at 32x128 (brt-bench's allocator peak);
- the first-seen-shape cost (the plan) per new shape;
- MiniLM at batch 1 over sequence lengths 1..512: one dynamic function at the
  request's own length against the old buckets (16 and 128 tokens, padded;
  none past 128).

`--load nice19` runs it all beside a build-like job at nice 19
(load_bench.BuildLikeLoad). Writes a Markdown table to stdout.

    PYTHONPATH=build/python:python:examples:bench python3 bench/minilm_dynamic.py [--rounds N] [--load nice19]
"""
import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(ROOT / "bench"))
import brt  # noqa: E402
import minilm_embeddings  # noqa: E402
from machine import header_lines  # noqa: E402

BUCKET_BATCHES, BUCKET_SEQUENCES = (1, 32), (16, 128)
SWEEP = (1, 8, 16, 17, 32, 48, 64, 96, 128, 192, 256, 384, 512)


def median_ms(fn, runs):
    fn()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1e3)
    return float(np.median(samples))


def interleaved(fns, rounds, runs):
    """Median over rounds of each function's median of `runs`, the functions
    taking turns so that a slow stretch of the machine hits all alike."""
    per = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            per[name].append(median_ms(fn, runs))
    return {name: float(np.median(v)) for name, v in per.items()}


def tokens(batch, seq, rng):
    ids = rng.integers(1000, 30000, (batch, seq))
    mask = np.ones((batch, seq), np.int64)
    return ids, mask, np.zeros((batch, seq), np.int64)


def bucketed(st, path):
    import torch

    def example(batch, seq):
        ids = torch.full((batch, seq), 101, dtype=torch.int64)
        return ids, torch.ones_like(ids), torch.zeros_like(ids)

    shapes = [(b, s) for b in BUCKET_BATCHES for s in BUCKET_SEQUENCES]
    return brt.compile_torch(minilm_embeddings.embedding_module(st), *example(*shapes[0]),
                             specializations=[example(*s) for s in shapes[1:]], path=path)


def padded_run(session, batch, seq, rng):
    """The old example's request: padded to the smallest bucket that holds it."""
    fit = min(s for s in BUCKET_SEQUENCES if s >= seq)
    ids, mask, types = (np.zeros((batch, fit), np.int64) for _ in range(3))
    real = tokens(batch, seq, rng)
    ids[:, :seq], mask[:, :seq], types[:, :seq] = real
    return lambda: session.run(ids, mask, types)


def encoder_pair(tmp):
    import jax
    import jax.numpy as jnp
    from jax_models import encoder_args, encoder_block

    args = encoder_args(np.random.default_rng(0))
    b, s = jax.export.symbolic_shape("b, s")
    specs = [jax.ShapeDtypeStruct((b, s, 256), jnp.float32)] + [jax.ShapeDtypeStruct(a.shape, a.dtype)
                                                                 for a in args[1:]]
    dynamic = brt.Session(brt.compile(encoder_block, *specs, path=tmp / "encoder_dyn.brtx"))
    static = brt.Session(brt.compile(encoder_block, *args, path=tmp / "encoder_static.brtx"))
    return (lambda: dynamic.run(*args)), (lambda: static.run(*args))


def allocator_peak(model, batch, seq, function=None):
    """brt-bench's host allocator peak on real tokens (random ids would fail
    the embedding tables' index checks)."""
    where = pathlib.Path(tempfile.mkdtemp())
    for name, array in zip(minilm_embeddings.INPUTS, tokens(batch, seq, np.random.default_rng(1))):
        np.save(where / f"{name}.npy", array)
    report = where / "bench.json"
    cmd = [str(ROOT / "build" / "bin" / "brt-bench"), str(model), "--inputs", str(where), "--iters", "3",
           "--warmup", "1", "--json", str(report)]
    cmd += ["--function", function] if function else []
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(report.read_text())["allocator"]["cpu"]["peak_bytes_in_use"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--load", choices=["none", "nice19"], default="none")
    opts = parser.parse_args()
    st = minilm_embeddings.load_sentence_transformer()
    tmp = pathlib.Path(tempfile.mkdtemp())
    dyn_path = minilm_embeddings.compile_model(st, str(tmp / "minilm_dyn.brtx"))
    bucket_path = bucketed(st, str(tmp / "minilm_buckets.brtx"))
    dynamic, buckets = brt.Session(dyn_path), brt.Session(bucket_path)
    load = None
    if opts.load == "nice19":
        from load_bench import BuildLikeLoad

        load = BuildLikeLoad(19)
    rng = np.random.default_rng(0)
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print("# Symbolic shapes vs static functions and padded buckets\n")
    print("\n".join(header_lines()))
    print(f"- commit {commit}, {time.strftime('%Y-%m-%d')}; load: {opts.load}; "
          f"{opts.rounds} interleaved rounds x {opts.runs} runs, medians\n")
    print("| model, shape | dynamic ms | static ms | dynamic / static |\n|---|---|---|---|")
    try:
        for batch in BUCKET_BATCHES:
            real = tokens(batch, 128, rng)
            t = interleaved({"dyn": lambda: dynamic.run(*real),
                             "static": lambda: buckets.run(*real)}, opts.rounds, opts.runs)
            print(f"| MiniLM {batch}x128 | {t['dyn']:.3f} | {t['static']:.3f} | {t['dyn'] / t['static']:.3f} |")
        dyn_enc, static_enc = encoder_pair(tmp)
        t = interleaved({"dyn": dyn_enc, "static": static_enc}, opts.rounds, opts.runs)
        print(f"| encoder block 2x64 | {t['dyn']:.3f} | {t['static']:.3f} | {t['dyn'] / t['static']:.3f} |")

        print("\n| MiniLM 1 x seq | dynamic, exact ms | buckets, padded ms | dynamic / buckets | first-seen shape: plan ms |")
        print("|---|---|---|---|---|")
        for seq in SWEEP:
            real = tokens(1, seq, rng)
            before = dynamic.shape_plan_stats()["misses"]
            dynamic.run(*real)
            stats = dynamic.shape_plan_stats()
            plan = f"{stats['last_plan_ms']:.2f}" if stats["misses"] > before else "(seen above)"
            fns = {"dyn": lambda: dynamic.run(*real)}
            if seq <= BUCKET_SEQUENCES[-1]:
                fns["bucket"] = padded_run(buckets, 1, seq, rng)
            t = interleaved(fns, opts.rounds, opts.runs)
            bucket = f"{t['bucket']:.3f}" if "bucket" in t else "(none past 128)"
            ratio = f"{t['dyn'] / t['bucket']:.3f}" if "bucket" in t else "-"
            print(f"| {seq} | {t['dyn']:.3f} | {bucket} | {ratio} | {plan} |")
    finally:
        if load:
            load.stop()
    dyn_peak = allocator_peak(dyn_path, 32, 128)
    static_peak = allocator_peak(bucket_path, 32, 128, function="main_32x128")
    print(f"\nPeak host allocator at 32x128 (brt-bench): dynamic {dyn_peak / 2**20:.1f} MiB, "
          f"static {static_peak / 2**20:.1f} MiB ({dyn_peak / static_peak:.3f}x).")
    print(f"Plan cache: {dynamic.shape_plan_stats()}")


if __name__ == "__main__":
    main()
