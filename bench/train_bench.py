"""Train-step throughput, brt next to JAX (XLA CPU) in one process: the
transformer LM of examples/tiny_lm.py with optax AdamW, its parameters and
optimizer state donated. brt keeps the state in the request context; JAX
donates its buffers back to itself. Both start from the same state and take
the same batches; losses are checked against each other before timing.
Median of --rounds rounds of --steps steps each.

    PYTHONPATH=build/python:examples python3 bench/train_bench.py [--markdown OUT]

PyTorch eager is not in this table: the `torch` wheel from PyPI pulls the
CUDA libraries (several GB), which the bootstrap does not install.
"""
import argparse
import datetime
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "examples"))
THREADS = os.cpu_count()
os.environ.setdefault("OMP_NUM_THREADS", str(THREADS))

import jax  # noqa: E402
import numpy as np  # noqa: E402

import brt  # noqa: E402
import machine  # noqa: E402
import tiny_lm  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--markdown")
    args = parser.parse_args()

    config = tiny_lm.Config()
    step = tiny_lm.train_step(config)
    params, opt_state = tiny_lm.initial_state(config)
    rng = np.random.default_rng(0)
    data = [rng.integers(0, config.vocab, (config.batch, config.context + 1)).astype(np.int32) for _ in range(16)]
    batches = [(np.ascontiguousarray(d[:, :-1]), np.ascontiguousarray(d[:, 1:])) for d in data]

    with tempfile.TemporaryDirectory() as tmp:
        session = brt.Session(brt.compile(step, params, opt_state, *batches[0], path=f"{tmp}/lm.brtx"))
    ctx = session.new_request()
    names = [a["name"] for a in session.functions[0]["arguments"] if a["role"] == "state"]
    ctx.bind_state(dict(zip(names, jax.tree_util.tree_leaves((params, opt_state)))))

    def brt_round(n):
        for i in range(n):
            tokens, targets = batches[i % len(batches)]
            ctx.bind("tokens", tokens)
            ctx.bind("targets", targets)
            ctx.run()

    p, o = params, opt_state

    def jax_round(n):
        nonlocal p, o
        for i in range(n):
            p, o, loss = step(p, o, *batches[i % len(batches)])
        loss.block_until_ready()
        return loss

    # Same state, same batches: the losses agree before anything is timed.
    brt_round(5)
    want = float(jax_round(5))
    got = float(ctx.outputs()[-1])
    assert abs(got - want) <= 1e-4 * abs(want), (got, want)

    timings = {"brt": [], "JAX (XLA CPU)": []}
    for fn, name in ((brt_round, "brt"), (jax_round, "JAX (XLA CPU)")):
        fn(args.steps)  # warm-up
        for _ in range(args.rounds):
            start = time.perf_counter()
            fn(args.steps)
            timings[name].append((time.perf_counter() - start) / args.steps)
    medians = {k: statistics.median(v) for k, v in timings.items()}
    best_peer = min(v for k, v in medians.items() if k != "brt")

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                            cwd=HERE).stdout.strip()
    lines = [f"# Train step: transformer LM (examples/tiny_lm.py), brt vs JAX, CPU",
             "",
             f"- date: {datetime.date.today()}, commit {commit}, `python3 bench/train_bench.py`",
             *machine.header_lines(),
             f"- threads: {THREADS} (OMP_NUM_THREADS for brt's oneDNN; XLA's own pool); jax {jax.__version__}",
             f"- model: {config.layers} blocks, width {config.dim}, {config.heads} heads, vocab {config.vocab}, "
             f"batch {config.batch} x context {config.context}, optax AdamW; "
             f"{len(names)} state tensors donated",
             f"- median of {args.rounds} rounds of {args.steps} steps; losses agree before timing",
             "",
             "| runtime | ms / step (median) | steps / s | vs brt |",
             "|---|---|---|---|"]
    for name, m in medians.items():
        lines.append(f"| {name} | {m * 1e3:.3f} | {1 / m:.0f} | {m / medians['brt']:.2f} |")
    lines += ["", f"brt / fastest peer = {medians['brt'] / best_peer:.2f} (target: <= 1.00)"]
    text = "\n".join(lines) + "\n"
    print(text)
    if args.markdown:
        pathlib.Path(args.markdown).write_text(text)


if __name__ == "__main__":
    main()
