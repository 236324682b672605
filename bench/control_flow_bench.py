"""Control flow on the CPU: what a branch not taken costs, where unrolling a
short loop beats running it as a loop, and a 2000-step scan, brt beside
JAX (jax.jit on the CPU) in one process, quiet and beside a nice-19
build-like load (load_bench.BuildLikeLoad). Medians of single-request
latencies; brt requests are bound once and rerun (ctx.run()).

  cond     lax.cond whose taken branch is cheap (sin(x) * 2 on 384x384)
           and whose other branch is dear (six 384x384 matmuls): brt with
           the cheap branch taken should cost what the cheap branch alone
           costs, not the dear one.
  unroll   lax.fori_loop of T static trips, compiled with every loop
           unrolled (--unroll-max-ops large) and with none
           (--unroll-max-ops=0), for a small elementwise body and a 64x64
           matmul body: the crossover sets brt-compile's default.
  scan     lax.scan of 2000 tanh(h @ w + x) steps (h: 32).

    PYTHONPATH=build/python:python:examples:bench python3 bench/control_flow_bench.py \\
        [--seconds S] [--markdown OUT]
"""
import argparse
import subprocess
import tempfile
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

import brt
import machine
from load_bench import BuildLikeLoad, latencies_ms, summary

RNG = np.random.default_rng(5)


def normal(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def cheap(x):
    return jnp.sin(x) * 2


def dear(x):
    for _ in range(6):
        x = jnp.tanh(x @ x * 0.01)
    return x


def cond(p, x):
    return lax.cond(p > 0, cheap, dear, x)


def fori(trips, body):
    return lambda x: lax.fori_loop(0, trips, lambda i, a: body(a), x)


def small_body(a):
    return jnp.tanh(a * 0.5 + 0.25) - a * 0.1


def matmul_body(a):
    return jnp.tanh(a @ a * 0.01)


def rnn(w, xs, h0):
    def step(h, x):
        h = jnp.tanh(h @ w + x)
        return h, h.sum()
    return lax.scan(step, h0, xs)


def compiled(fn, args, tmp, unroll_max_ops=None):
    """A bound brt request running fn(*args)."""
    text = brt.export_stablehlo(fn, *args)
    src = tempfile.NamedTemporaryFile("w", suffix=".mlir", dir=tmp, delete=False)
    src.write(text)
    src.close()
    path = src.name + ".brtx"
    cmd = [brt.find_tool(), src.name, "-o", path]
    if unroll_max_ops is not None:
        cmd.append(f"--unroll-max-ops={unroll_max_ops}")
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    session = brt.Session(path)
    ctx = session.new_request()
    inputs = [a["name"] for a in session.functions[0]["arguments"] if a["role"] == "input"]
    for name, value in zip(inputs, args):
        ctx.bind(name, np.asarray(value))
    want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
    ctx.run()
    for got, ref in zip(ctx.outputs(), want):
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=2e-4, atol=2e-5)
    return session, ctx.run


def jax_run(fn, args):
    jitted = jax.jit(fn)
    return lambda: jax.block_until_ready(jitted(*args))


def cases(tmp):
    """(group, name, run) for every measured program."""
    x = normal(384, 384)
    out = []
    keep = []  # the sessions stay loaded while their requests run
    for label, p in (("cheap taken", 1.0), ("dear taken", -1.0)):
        s, run = compiled(cond, (np.float32(p), x), tmp)
        keep.append(s)
        out += [("cond", f"brt cond, {label}", run), ("cond", f"jax cond, {label}", jax_run(cond, (np.float32(p), x)))]
    for name, fn in (("cheap alone", cheap), ("dear alone", dear)):
        s, run = compiled(fn, (x,), tmp)
        keep.append(s)
        out += [("cond", f"brt {name}", run), ("cond", f"jax {name}", jax_run(fn, (x,)))]
    for body_name, body, a in (("small", small_body, normal(64)), ("matmul", matmul_body, normal(64, 64))):
        for trips in (1, 2, 4, 8, 16, 32, 64):
            for how, limit in (("unrolled", 10 ** 9), ("loop", 0)):
                s, run = compiled(fori(trips, body), (a,), tmp, unroll_max_ops=limit)
                keep.append(s)
                out.append(("unroll", f"{body_name} body, {trips:2d} trips, {how}", run))
    args = (normal(32, 32, scale=0.2), normal(2000, 32), normal(32))
    s, run = compiled(rnn, args, tmp)
    keep.append(s)
    out += [("scan", "brt scan 2000", run), ("scan", "jax scan 2000", jax_run(rnn, args))]
    return out, keep


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=1.0, help="timed seconds per program and condition")
    ap.add_argument("--markdown", help="write the tables here")
    opts = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        programs, _sessions = cases(tmp)
        results = {}
        for condition in ("quiet", "nice19"):
            load = BuildLikeLoad(19) if condition == "nice19" else None
            try:
                for group, name, run in programs:
                    results[(condition, name)] = summary(latencies_ms(run, opts.seconds))
                    print(f"{condition:7s} {name:40s} p50 {results[(condition, name)]['p50']:.4f} ms", flush=True)
            finally:
                if load:
                    load.stop()
    lines = ["# Control flow on the CPU", "", f"- commit {machine.commit()}, {time.strftime('%Y-%m-%d')}",
             *machine.header_lines(), "- threads: brt Session default (one per CPU); JAX's own", "",
             "Single-request latencies in ms (p50 and p99), brt and JAX in one process; nice19: a build-like "
             "job at nice 19 on every core.", "",
             "| program | quiet p50 | quiet p99 | nice19 p50 | nice19 p99 |", "|---|---|---|---|---|"]
    for group, name, _ in programs:
        q, n = results[("quiet", name)], results[("nice19", name)]
        lines.append(f"| {name} | {q['p50']:.4f} | {q['p99']:.4f} | {n['p50']:.4f} | {n['p99']:.4f} |")
    machine.publish(lines, opts.markdown)

if __name__ == "__main__":
    main()
