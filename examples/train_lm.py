"""Trains a small transformer language model through brt on a bundled toy
corpus (examples/data/corpus.txt, character level), saves a checkpoint that
JAX reloads, and generates text from it through brt's decode step with
key/value caches: growing a row a token, one executable over a symbolic
cache length (--decode growing, the default), or of fixed size, kept in
place (--decode fixed).

    python3 examples/train_lm.py [--steps 800] [--checkpoint lm.safetensors] [--decode growing|fixed]

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


CACHES = {"fixed": "KV caches in place",
          "growing": "KV caches growing a row a token (one executable for every length)"}


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
    """next-token logits of a window of tokens, a token at a time through
    `step(token, position)` -> logits [1, vocab], whose caches keep the
    window's prefix, so only its new tokens run; a window that does not
    extend the cached one starts over at position 0."""

    def __init__(self, step):
        self.step = step
        self.cached = []
        self.history = []  # (window, logits) of every call

    def __call__(self, window):
        if window[:len(self.cached)] != self.cached:
            self.cached = []
        for token in window[len(self.cached):]:
            self.logits = self.step(token, len(self.cached))
            self.cached.append(token)
        self.history.append((list(window), self.logits[0]))
        return self.logits[0]


def fixed_cache_step(path, params, config):
    """step(token, position) through decode_step compiled to `path`: caches
    of context rows, bound once and written in place."""
    keys, values = tiny_lm.empty_caches(config, 1)
    brt.compile(tiny_lm.decode_step(config), params, keys, values, np.zeros(1, np.int32), np.int32(0),
                path=path)
    ctx = brt.Session(path).new_request()
    for name, array in tiny_lm.decode_arguments(params, keys, values).items():
        ctx.bind(name, array)

    def step(token, position):
        ctx.bind("tokens", np.array([token], np.int32))
        ctx.bind("pos", np.array(position, np.int32))
        ctx.run()
        return np.array(ctx.outputs()[-1])

    return step


def growing_cache_step(path, params, config):
    """step(token, position) through growing_decode_step: caches of
    `position` rows in, one more out. Position 0 runs it compiled for empty
    caches; every other position one executable compiled over a symbolic
    cache length (and batch)."""
    step = tiny_lm.growing_decode_step(config)
    empty = tiny_lm.empty_growing_caches(config, 1)
    first = path.replace(".brtx", ".first.brtx")
    sessions = [brt.Session(brt.compile(step, params, *empty, np.zeros(1, np.int32), path=first)),
                brt.Session(brt.compile(step, params, *tiny_lm.growing_decode_specs(config), path=path))]
    caches = empty

    def run(token, position):
        nonlocal caches
        # A new request a token: a context checks each bind's sizes against
        # those bound, and the caches all change size at once.
        ctx = sessions[position > 0].new_request()
        for name, array in tiny_lm.decode_arguments(params, *(caches if position else empty)).items():
            ctx.bind(name, array)
        ctx.bind("tokens", np.array([token], np.int32))
        ctx.run()
        outputs = [np.array(o) for o in ctx.outputs()]
        caches = outputs[:config.layers], outputs[config.layers:-1]
        return outputs[-1]

    return run


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
    parser.add_argument("--decode", choices=sorted(CACHES), default="growing",
                        help="the decode step's key/value caches (default: growing)")
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
    # with key/value caches (--decode); JAX's full forward pass over the same
    # windows checks every token's logits.
    decoder_path = str(pathlib.Path(args.checkpoint).with_suffix(f".{args.decode}.brtx"))
    make_step = growing_cache_step if args.decode == "growing" else fixed_cache_step
    decoder = BrtDecoder(make_step(decoder_path, reloaded, config))
    prompt = [alphabet.index(c) for c in "the runtime "]
    text = greedy(decoder, prompt, 40, config.context)
    print(f"brt, greedy with {CACHES[args.decode]}: " + repr("".join(alphabet[i] for i in text)))
    worst = max(rel_diff(logits, jax_next_logits(config, reloaded, window))
                for window, logits in decoder.history)
    print(f"JAX's full forward pass over the same {len(decoder.history)} windows: logits within {worst:.1e}")
    if worst > 1e-4:
        return 1
    return 0 if np.mean(losses[-10:]) < np.mean(losses[:10]) else 1


if __name__ == "__main__":
    sys.exit(main())
