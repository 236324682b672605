"""Trains a small transformer language model through brt on a bundled toy
corpus (examples/data/corpus.txt, character level), then saves a checkpoint
that JAX reloads.

    python3 examples/train_lm.py [--steps 800] [--checkpoint lm.safetensors]

(with brt's Python package on PYTHONPATH: build/python after
scripts/build.sh). The train step is plain JAX + optax AdamW
(examples/tiny_lm.py), compiled once with its parameters and optimizer
state donated: brt keeps that state in the request context and updates it
in place, step after step.
"""
import argparse
import pathlib
import sys
import time

import numpy as np

import brt

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import tiny_lm  # noqa: E402


def batches(text_ids, config, rng):
    """Random windows of context + 1 characters: inputs and next characters."""
    while True:
        starts = rng.integers(0, len(text_ids) - config.context - 1, config.batch)
        window = np.stack([text_ids[s:s + config.context + 1] for s in starts])
        yield np.ascontiguousarray(window[:, :-1]), np.ascontiguousarray(window[:, 1:])


def progress(step, steps, loss, started):
    width = 30
    done = int(width * step / steps)
    rate = step / max(time.perf_counter() - started, 1e-9)
    sys.stderr.write(f"\r[{'#' * done}{'.' * (width - done)}] step {step}/{steps}  loss {loss:.3f}  "
                     f"{rate:.0f} steps/s")
    sys.stderr.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=800)
    parser.add_argument("--checkpoint", default="lm.safetensors")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    import jax
    import jax.numpy as jnp

    text = (HERE / "data" / "corpus.txt").read_text()
    alphabet = sorted(set(text))
    config = tiny_lm.Config()
    assert len(alphabet) <= config.vocab, "the corpus has more characters than the model's vocabulary"
    ids = np.array([alphabet.index(c) for c in text], np.int32)
    print(f"corpus: {len(text)} characters, {len(alphabet)} distinct; model: {config.layers} blocks, "
          f"width {config.dim}, {config.heads} heads, context {config.context}")

    step = tiny_lm.train_step(config)
    params, opt_state = tiny_lm.initial_state(config, seed=args.seed)
    data = batches(ids, config, np.random.default_rng(args.seed))
    tokens, targets = next(data)
    executable = str(pathlib.Path(args.checkpoint).with_suffix(".brtx"))
    brt.compile(step, params, opt_state, tokens, targets, path=executable)
    session = brt.Session(executable)
    ctx = session.new_request()
    names = [a["name"] for a in session.functions[0]["arguments"] if a["role"] == "state"]
    ctx.bind_state(dict(zip(names, jax.tree_util.tree_leaves((params, opt_state)))))
    print(f"compiled {executable}: {len(names)} state tensors kept in place across steps")

    losses = []
    started = time.perf_counter()
    for i in range(1, args.steps + 1):
        tokens, targets = next(data)
        ctx.bind("tokens", tokens)
        ctx.bind("targets", targets)
        ctx.run()
        losses.append(float(ctx.outputs()[-1]))
        if i % 10 == 0 or i == args.steps:
            progress(i, args.steps, np.mean(losses[-10:]), started)
        if i % 100 == 0 or i == args.steps:
            sys.stderr.write("\n")
    elapsed = time.perf_counter() - started
    print(f"loss: first 10 steps {np.mean(losses[:10]):.3f}, last 10 steps {np.mean(losses[-10:]):.3f} "
          f"({args.steps / elapsed:.0f} steps/s)")

    ctx.save_state(args.checkpoint)
    print(f"saved {args.checkpoint}")

    # JAX reloads the checkpoint by name and agrees with brt on a fresh batch.
    import safetensors.numpy

    arrays = safetensors.numpy.load_file(args.checkpoint)
    treedef = jax.tree_util.tree_structure((params, opt_state))
    reloaded, _ = jax.tree_util.tree_unflatten(treedef, [jnp.asarray(arrays[n]) for n in names])
    tokens, targets = next(data)
    jax_loss = float(tiny_lm.loss_fn(config, reloaded, tokens, targets))
    print(f"JAX, from the checkpoint: loss {jax_loss:.4f} on a new batch")

    prompt = "the runtime "
    context = [alphabet.index(c) for c in prompt]
    for _ in range(40):
        window = np.array(context[-config.context:], np.int32)
        padded = np.zeros((config.batch, config.context), np.int32)
        padded[0, :len(window)] = window
        x = reloaded["embed"][padded] + reloaded["pos"]
        for layer in range(config.layers):
            x = tiny_lm.block(config, x, reloaded[f"block{layer}"])
        logits = tiny_lm.layer_norm(x, reloaded["ln_f"]) @ reloaded["embed"].T
        context.append(int(jnp.argmax(logits[0, len(window) - 1])))
    print("JAX, greedy from the checkpoint: " + repr("".join(alphabet[i] for i in context)))
    return 0 if np.mean(losses[-10:]) < np.mean(losses[:10]) else 1


if __name__ == "__main__":
    sys.exit(main())
