"""Decoding with key/value caches that grow: the tiny LM's growing decode step
(examples/tiny_lm.py) compiled once over a symbolic cache length t (and a
symbolic batch), run for every t from 1 to context - 1 on the caches its
previous step returned. Every step's logits against JAX running the same
function on its own caches and against JAX's fixed-cache decode step at the
same position (a different computation: caches of context rows, a position
and a mask); one new shape plan per t, none for a t seen before."""
import pathlib
import sys

import numpy as np
import pytest

import brt

jax = pytest.importorskip("jax")
pytest.importorskip("optax")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples"))
import tiny_lm  # noqa: E402


def rel(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(np.asarray(b)))


def random_params(config, rng):
    params, _ = tiny_lm.initial_state(config)
    # Weights far from their initial 0.02 scale, so attention is not uniform.
    return jax.tree_util.tree_map(
        lambda a: (a + rng.standard_normal(a.shape) * 0.3).astype(np.float32), params)


def fixed_cache_logits(config, params, tokens):
    """JAX's decode_step (caches of context rows updated at pos) at every position."""
    step = tiny_lm.decode_step(config)
    keys, values = tiny_lm.empty_caches(config, tokens.shape[1])
    logits = []
    for pos, token in enumerate(tokens):
        keys, values, out = step(params, keys, values, token, np.int32(pos))
        logits.append(np.asarray(out))
    return logits


def run_step(session, params, keys, values, tokens):
    """(keys, values, logits) of one run, in a new request: its caches change
    size together, and each bind checks its sizes against those bound."""
    ctx = session.new_request()
    for name, array in tiny_lm.decode_arguments(params, keys, values).items():
        ctx.bind(name, array)
    ctx.bind("tokens", tokens)
    ctx.run()
    outputs = [np.array(o) for o in ctx.outputs()]
    return outputs[:len(keys)], outputs[len(keys):-1], outputs[-1]


def test_growing_caches_one_executable_for_every_length(tmp_path):
    config = tiny_lm.Config()
    rng = np.random.default_rng(7)
    params = random_params(config, rng)
    tokens = rng.integers(0, config.vocab, (config.context, config.batch)).astype(np.int32)
    step = tiny_lm.growing_decode_step(config)
    fixed = fixed_cache_logits(config, params, tokens)

    # The first token, on empty caches: the same function at a static t = 0
    # (a symbolic size is at least 1).
    empty_keys, empty_values = tiny_lm.empty_growing_caches(config, config.batch)
    first = brt.Session(brt.compile(step, params, empty_keys, empty_values, tokens[0],
                                    path=str(tmp_path / "first.brtx")))
    keys, values, logits = run_step(first, params, empty_keys, empty_values, tokens[0])
    jax_keys, jax_values, want = step(params, empty_keys, empty_values, tokens[0])
    assert rel(logits, want) <= 1e-5 and rel(logits, fixed[0]) <= 1e-5

    # Every later token through one executable over symbolic (b, t).
    path = brt.compile(step, params, *tiny_lm.growing_decode_specs(config), path=str(tmp_path / "grow.brtx"))
    session = brt.Session(path)
    (function,) = session.functions
    shapes = {a["name"]: a["shape"] for a in function["arguments"]}
    head = config.dim // config.heads
    assert shapes["keys.0"] == ("b", config.heads, "t", head)
    assert shapes[f"result{2 * config.layers - 1}"] == ("b", config.heads, "t + 1", head)
    for t in range(1, config.context):
        keys, values, logits = run_step(session, params, keys, values, tokens[t])
        jax_keys, jax_values, want = step(params, jax_keys, jax_values, tokens[t])
        assert keys[0].shape == (config.batch, config.heads, t + 1, head)
        assert rel(logits, want) <= 1e-5, t
        assert rel(logits, fixed[t]) <= 1e-5, t
        stats = session.shape_plan_stats()
        assert (stats["misses"], stats["hits"]) == (t, 0), (t, stats)
    for layer in range(config.layers):
        assert rel(keys[layer], jax_keys[layer]) <= 1e-5 and rel(values[layer], jax_values[layer]) <= 1e-5

    # A length seen before reuses its plan; one past the last position is
    # refused by the constraint the specs give (position t needs an embedding).
    short = [[np.ascontiguousarray(c[:, :, :3]) for c in caches] for caches in (keys, values)]
    assert rel(run_step(session, params, *short, tokens[3])[-1], step(params, *short, tokens[3])[-1]) <= 1e-5
    stats = session.shape_plan_stats()
    assert (stats["misses"], stats["hits"]) == (config.context - 1, 1), stats
    with pytest.raises(ValueError, match=f"constraint .* t = {config.context}"):
        run_step(session, params, keys, values, tokens[0])


def test_growing_caches_over_a_symbolic_batch(tmp_path):
    """The same executable at other batch sizes: a plan per (b, t)."""
    config = tiny_lm.Config()
    rng = np.random.default_rng(8)
    params = random_params(config, rng)
    step = tiny_lm.growing_decode_step(config)
    session = brt.Session(brt.compile(step, params, *tiny_lm.growing_decode_specs(config),
                                      path=str(tmp_path / "grow.brtx")))
    head = config.dim // config.heads
    for batch, t in ((1, 5), (3, 1), (1, config.context - 1)):
        keys, values = ([rng.standard_normal((batch, config.heads, t, head)).astype(np.float32)
                         for _ in range(config.layers)] for _ in range(2))
        tokens = rng.integers(0, config.vocab, batch).astype(np.int32)
        got = session.run(*jax.tree_util.tree_leaves((params, keys, values)), tokens)
        want = jax.tree_util.tree_leaves(step(params, keys, values, tokens))
        for g, w in zip(got, want):
            assert g.shape == w.shape and rel(g, w) <= 1e-5
    assert session.shape_plan_stats()["misses"] == 3
