"""Train-step throughput, brt next to JAX (XLA CPU) and PyTorch eager in one
process: the transformer LM of examples/tiny_lm.py with AdamW. brt keeps the
state in the request context; JAX donates its buffers back to itself;
PyTorch updates its parameters in place (torch.optim.AdamW with the same
hyperparameters as optax.adamw, foreach=True: its faster CPU variant here). All start from the same state and take the
same batches; losses are checked against JAX's before timing. Median of
--rounds rounds of --steps steps each, the runtimes taking turns.

    PYTHONPATH=build/python:examples python3 bench/train_bench.py [--markdown OUT]
        [--dim 256 --heads 8 --layers 4 --context 128 --batch 8 --vocab 4096 ...]

The model's size defaults to tiny_lm.Config's (the size the tests train);
every field of it can be set from the command line.

PyTorch is a peer only where it is installed (scripts/bootstrap.sh installs it).
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

try:
    import torch  # noqa: E402
    import torch.nn.functional as F  # noqa: E402
except ImportError:
    torch = None

import brt  # noqa: E402
import machine  # noqa: E402
import tiny_lm  # noqa: E402


def torch_trainer(config, params):
    """A PyTorch eager train step of the same model: step(tokens, targets) -> loss."""
    torch.set_num_threads(THREADS)
    flat = {}

    def leaf(path, value):
        flat[path] = torch.tensor(np.array(value), requires_grad=True)
        return flat[path]

    p = jax.tree_util.tree_map_with_path(lambda path, v: leaf(jax.tree_util.keystr(path), v), params)
    opt = torch.optim.AdamW(list(flat.values()), lr=config.learning_rate, betas=(0.9, 0.999), eps=1e-8,
                            weight_decay=config.weight_decay, foreach=True)
    d, heads = config.dim, config.heads
    causal = torch.tril(torch.ones(config.context, config.context, dtype=torch.bool))

    def norm(x, q):
        return F.layer_norm(x, (d,), q["g"], q["b"], eps=1e-5)

    def loss_fn(tokens, targets):
        b, t = tokens.shape
        x = p["embed"][tokens] + p["pos"]
        for layer in range(config.layers):
            q = p[f"block{layer}"]
            qkv = (norm(x, q["ln1"]) @ q["qkv"]).view(b, t, 3, heads, d // heads).permute(2, 0, 3, 1, 4)
            scores = qkv[0] @ qkv[1].transpose(-1, -2) / np.sqrt(d // heads)
            attended = torch.softmax(scores.masked_fill(~causal, -1e9), -1) @ qkv[2]
            x = x + attended.transpose(1, 2).reshape(b, t, d) @ q["proj"]
            x = x + F.gelu(norm(x, q["ln2"]) @ q["fc1"], approximate="tanh") @ q["fc2"]
        logits = norm(x, p["ln_f"]) @ p["embed"].T
        return F.cross_entropy(logits.reshape(b * t, -1), targets.reshape(-1))

    def step(tokens, targets):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(tokens, targets)
        loss.backward()
        opt.step()
        return loss

    return step


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--markdown")
    tiny_lm.add_config_arguments(parser)
    args = parser.parse_args()

    config, options = tiny_lm.config_from_arguments(args)
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

    runtimes = {"brt": brt_round, "JAX (XLA CPU)": jax_round}
    if torch is not None:
        torch_step = torch_trainer(config, params)
        torch_batches = [(torch.from_numpy(t).long(), torch.from_numpy(y).long()) for t, y in batches]

        def torch_round(n):
            for i in range(n):
                loss = torch_step(*torch_batches[i % len(torch_batches)])
            return loss

        runtimes["PyTorch eager"] = torch_round

    # Same state, same batches: the losses agree before anything is timed.
    brt_round(5)
    want = float(jax_round(5))
    got = float(ctx.outputs()[-1])
    assert abs(got - want) <= 1e-4 * abs(want), (got, want)
    if torch is not None:
        got = float(torch_round(5))
        assert abs(got - want) <= 1e-4 * abs(want), ("PyTorch", got, want)

    timings = {name: [] for name in runtimes}
    for fn in runtimes.values():
        fn(args.steps)  # warm-up
    for _ in range(args.rounds):
        for name, fn in runtimes.items():
            start = time.perf_counter()
            fn(args.steps)
            timings[name].append((time.perf_counter() - start) / args.steps)
    medians = {k: statistics.median(v) for k, v in timings.items()}
    best_peer = min(v for k, v in medians.items() if k != "brt")

    peers = "JAX and PyTorch eager" if torch is not None else "JAX"
    lines = [f"# Train step: transformer LM (examples/tiny_lm.py), brt vs {peers}, CPU",
             "",
             f"- date: {datetime.date.today()}, commit {machine.commit()}, `python3 bench/train_bench.py{options}`",
             *machine.header_lines(),
             f"- threads: {THREADS} (BRT_NUM_THREADS for brt; XLA's own pool; torch.set_num_threads); "
             f"jax {jax.__version__}" + (f", torch {torch.__version__}" if torch is not None else ""),
             f"- model: {config.layers} blocks, width {config.dim}, {config.heads} heads, vocab {config.vocab}, "
             f"batch {config.batch} x context {config.context}, optax AdamW; "
             f"{len(names)} state tensors donated",
             f"- median of {args.rounds} rounds of {args.steps} steps, the runtimes taking turns; the losses of the "
             "first 5 steps agree (relative 1e-4) before timing",
             "",
             "| runtime | ms / step (median) | steps / s | vs brt |",
             "|---|---|---|---|"]
    for name, m in medians.items():
        lines.append(f"| {name} | {m * 1e3:.3f} | {1 / m:.0f} | {m / medians['brt']:.2f} |")
    lines += ["", f"brt / fastest peer = {medians['brt'] / best_peer:.2f} (target: <= 1.00)"]
    machine.publish(lines, args.markdown)


if __name__ == "__main__":
    main()
