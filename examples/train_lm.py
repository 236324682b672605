"""Trains a small transformer language model through brt on a bundled toy
corpus (examples/data/corpus.txt, character level), saves a checkpoint that
JAX reloads, and generates text from it through brt's decode step with
key/value caches kept in place.

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


class BrtDecoder:
    """next-token logits of a window of tokens through the compiled decode
    step: the caches (bound once, updated in place) keep the window's prefix,
    so only its new tokens run; a window that does not extend the cached one
    starts over at position 0."""

    def __init__(self, session, params, keys, values):
        self.ctx = session.new_request()
        for name, array in tiny_lm.decode_arguments(params, keys, values).items():
            self.ctx.bind(name, array)
        self.cached = []
        self.history = []  # (window, logits) of every call

    def __call__(self, window):
        if window[:len(self.cached)] != self.cached:
            self.cached = []
        for token in window[len(self.cached):]:
            self.ctx.bind("tokens", np.array([token], np.int32))
            self.ctx.bind("pos", np.array(len(self.cached), np.int32))
            self.ctx.run()
            self.cached.append(token)
        logits = np.array(self.ctx.outputs()[-1][0])
        self.history.append((list(window), logits))
        return logits


def greedy(next_logits, prompt, count, context):
    """`prompt` and `count` tokens after it, each the argmax of next_logits
    over the window the model sees: every token since the window's start, which
    moves to the last half once the window outgrows the context."""
    tokens, start = list(prompt), 0
    for _ in range(count):
        if len(tokens) - start > context:
            start = len(tokens) - context // 2
        tokens.append(int(np.argmax(next_logits(tokens[start:]))))
    return tokens


def jax_next_logits(config, params, window):
    padded = np.zeros((1, config.context), np.int32)
    padded[0, :len(window)] = window
    return np.asarray(tiny_lm.forward(config, params, padded)[0, len(window) - 1])


def rel_diff(a, b):
    return float(np.abs(a - b).max() / np.abs(b).max())


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

    # Text from the trained weights, decoded through brt one token at a time
    # with key/value caches it updates in place; JAX's full forward pass over
    # the same windows checks every token's logits.
    decode = tiny_lm.decode_step(config)
    keys, values = tiny_lm.empty_caches(config, 1)
    decoder_path = str(pathlib.Path(args.checkpoint).with_suffix(".decode.brtx"))
    brt.compile(decode, reloaded, keys, values, np.zeros(1, np.int32), np.int32(0), path=decoder_path)
    decoder = BrtDecoder(brt.Session(decoder_path), reloaded, keys, values)
    prompt = [alphabet.index(c) for c in "the runtime "]
    text = greedy(decoder, prompt, 40, config.context)
    print("brt, greedy with KV caches in place: " + repr("".join(alphabet[i] for i in text)))
    worst = max(rel_diff(logits, jax_next_logits(config, reloaded, window))
                for window, logits in decoder.history)
    print(f"JAX's full forward pass over the same {len(decoder.history)} windows: logits within {worst:.1e}")
    if worst > 1e-4:
        return 1
    return 0 if np.mean(losses[-10:]) < np.mean(losses[:10]) else 1


if __name__ == "__main__":
    sys.exit(main())
