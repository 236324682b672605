"""Decoding latency, brt next to JAX (XLA CPU) in one process: the one-token
decode step of examples/tiny_lm.py with its key/value caches donated (brt
keeps them bound and writes each new row in place; JAX donates its buffers
back to itself). A round decodes a whole context, positions 0 to context-1;
per token: the round's time over the context. The logits of the first round
are checked against JAX's before timing. Median of --rounds rounds, the
runtimes taking turns, for each batch size of --batches.

Beside it, the decode step whose caches grow (tiny_lm.growing_decode_step:
brt compiles it once over a symbolic cache length t and batch, a new
request binds each step's caches; JAX retraces it per shape, not timed): one
token's latency at each cache length of --lengths, median of --rounds,
next to the fixed-cache step's at that position.

    PYTHONPATH=build/python:examples python3 bench/decode_bench.py [--markdown OUT]
        [--batches 1,8] [--lengths 1,64,127] [--dim 256 --heads 8 --layers 4 --context 128 --vocab 4096 ...]

The weights are random (the same for both runtimes): latency does not
depend on their values.
"""
import argparse
import datetime
import os
import pathlib
import statistics
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))
THREADS = os.cpu_count()
os.environ.setdefault("BRT_NUM_THREADS", str(THREADS))  # brt Sessions' intra-op threads

import jax  # noqa: E402
import numpy as np  # noqa: E402

import brt  # noqa: E402
import machine  # noqa: E402
import tiny_lm  # noqa: E402


def measure(config, params, batch, rounds, tmp):
    """Median ms per token of brt and of JAX decoding `batch` sequences."""
    step = tiny_lm.decode_step(config)
    rng = np.random.default_rng(batch)
    tokens = rng.integers(0, config.vocab, (config.context, batch)).astype(np.int32)
    keys, values = tiny_lm.empty_caches(config, batch)
    session = brt.Session(brt.compile(step, params, keys, values, tokens[0], np.int32(0),
                                      path=f"{tmp}/decode{batch}.brtx"))
    ctx = session.new_request()
    for name, array in tiny_lm.decode_arguments(params, keys, values).items():
        ctx.bind(name, array)
    positions = [np.array(p, np.int32) for p in range(config.context)]

    def brt_round():
        logits = []
        for pos in range(config.context):
            ctx.bind("tokens", tokens[pos])
            ctx.bind("pos", positions[pos])
            ctx.run()
            logits.append(ctx.outputs()[-1])
        return logits

    kj, vj = tiny_lm.empty_caches(config, batch)
    jax_params = jax.device_put(params)

    def jax_round():
        nonlocal kj, vj
        logits = []
        for pos in range(config.context):
            kj, vj, out = step(jax_params, kj, vj, tokens[pos], positions[pos])
            logits.append(out)
        jax.block_until_ready(logits)
        return logits

    got = [np.array(x) for x in brt_round()]
    want = [np.asarray(x) for x in jax_round()]
    for pos, (g, w) in enumerate(zip(got, want)):
        assert np.linalg.norm(g - w) <= 1e-4 * np.linalg.norm(w), (batch, pos)

    timings = {"brt": [], "JAX (XLA CPU)": []}
    for _ in range(rounds):
        for name, fn in (("brt", brt_round), ("JAX (XLA CPU)", jax_round)):
            start = time.perf_counter()
            fn()
            timings[name].append((time.perf_counter() - start) / config.context)
    return {name: statistics.median(t) * 1e3 for name, t in timings.items()}


def measure_growing(config, params, batch, lengths, rounds, tmp):
    """{t: median ms of one token at cache length t}, brt's growing step, its
    fixed-cache step at position t and JAX's growing step, taking turns."""
    step = tiny_lm.growing_decode_step(config)
    session = brt.Session(brt.compile(step, params, *tiny_lm.growing_decode_specs(config),
                                      path=f"{tmp}/grow{batch}.brtx"))
    fixed = tiny_lm.decode_step(config)
    keys, values = tiny_lm.empty_caches(config, batch)
    fixed_ctx = brt.Session(brt.compile(fixed, params, keys, values, np.zeros(batch, np.int32), np.int32(0),
                                        path=f"{tmp}/fixed{batch}.brtx")).new_request()
    for name, array in tiny_lm.decode_arguments(params, keys, values).items():
        fixed_ctx.bind(name, array)
    jax_params = jax.device_put(params)
    rng = np.random.default_rng(batch)
    tokens = rng.integers(0, config.vocab, batch).astype(np.int32)
    fixed_ctx.bind("tokens", tokens)
    head = config.dim // config.heads
    results = {}
    for t in lengths:
        caches = [[rng.standard_normal((batch, config.heads, t, head)).astype(np.float32)
                   for _ in range(config.layers)] for _ in range(2)]
        arguments = tiny_lm.decode_arguments(params, *caches)
        pos = np.array(t, np.int32)

        def brt_growing():
            ctx = session.new_request()
            for name, array in arguments.items():
                ctx.bind(name, array)
            ctx.bind("tokens", tokens)
            ctx.run()
            return [np.array(o) for o in ctx.outputs()]

        def brt_fixed():
            fixed_ctx.bind("pos", pos)
            fixed_ctx.run()

        def jax_growing():
            return jax.block_until_ready(step(jax_params, *caches, tokens))

        want = jax.tree_util.tree_leaves(jax_growing())
        for g, w in zip(brt_growing(), want):
            assert np.linalg.norm(g - np.asarray(w)) <= 1e-4 * np.linalg.norm(w), (batch, t)
        timings = {"growing": [], "fixed": [], "JAX growing": []}
        for _ in range(rounds):
            for name, fn in (("growing", brt_growing), ("fixed", brt_fixed), ("JAX growing", jax_growing)):
                start = time.perf_counter()
                fn()
                timings[name].append(time.perf_counter() - start)
        results[t] = {name: statistics.median(v) * 1e3 for name, v in timings.items()}
    assert session.shape_plan_stats()["misses"] == len(lengths)
    return results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=11)
    parser.add_argument("--batches", default="1,8")
    parser.add_argument("--lengths",
                        help="cache lengths of the growing step (default 1, context/2, context-1)")
    parser.add_argument("--markdown")
    tiny_lm.add_config_arguments(parser)
    args = parser.parse_args()
    config, options = tiny_lm.config_from_arguments(args)
    params, _ = tiny_lm.initial_state(config)
    lengths = ([int(t) for t in args.lengths.split(",")] if args.lengths
               else [1, config.context // 2, config.context - 1])

    results, growing = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        for batch in (int(b) for b in args.batches.split(",")):
            results[batch] = measure(config, params, batch, args.rounds, tmp)
            growing[batch] = measure_growing(config, params, batch, lengths, args.rounds, tmp)

    lines = ["# Decode step with KV caches in place: transformer LM (examples/tiny_lm.py), brt vs JAX, CPU",
             "",
             f"- date: {datetime.date.today()}, commit {machine.commit()}, "
             f"`python3 bench/decode_bench.py --batches {args.batches} "
             f"--lengths {','.join(map(str, lengths))}{options}`",
             *machine.header_lines(),
             f"- threads: {THREADS} (BRT_NUM_THREADS for brt; XLA's own pool); jax {jax.__version__}",
             f"- model: {config.layers} blocks, width {config.dim}, {config.heads} heads, vocab {config.vocab}, "
             f"context {config.context}; caches per layer [batch, {config.heads}, {config.context}, "
             f"{config.dim // config.heads}] donated",
             f"- median of {args.rounds} rounds of {config.context} tokens (positions 0 to {config.context - 1}), "
             "the runtimes taking turns; every position's logits agree (relative 1e-4) before timing",
             "",
             "| batch | brt ms / token | JAX ms / token | brt / JAX |",
             "|---|---|---|---|"]
    for batch, m in results.items():
        lines.append(f"| {batch} | {m['brt']:.3f} | {m['JAX (XLA CPU)']:.3f} | "
                     f"{m['brt'] / m['JAX (XLA CPU)']:.2f} |")
    lines += ["",
              "Caches that grow (one executable over a symbolic length t; a new request a token), "
              "one token at cache length t:",
              "",
              "| batch | t | brt growing ms | brt fixed ms (position t) | JAX growing ms | growing / fixed |",
              "|---|---|---|---|---|---|"]
    for batch, by_length in growing.items():
        for t, m in by_length.items():
            lines.append(f"| {batch} | {t} | {m['growing']:.3f} | {m['fixed']:.3f} | "
                         f"{m['JAX growing']:.3f} | {m['growing'] / m['fixed']:.2f} |")
    machine.publish(lines, args.markdown)


if __name__ == "__main__":
    main()
