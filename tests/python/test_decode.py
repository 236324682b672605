"""Decoding through brt with key/value caches kept in place: the tiny LM's
one-token decode step (examples/tiny_lm.py), its caches donated, run
position by position; every position's logits against JAX's full causal
forward pass over the whole sequence (an independent computation: no cache,
every position at once)."""
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


def test_decoding_with_caches_in_place_matches_the_full_forward_pass(tmp_path, capfd):
    config = tiny_lm.Config()
    rng = np.random.default_rng(3)
    params, _ = tiny_lm.initial_state(config)
    # Weights far from their initial 0.02 scale, so attention is not uniform.
    params = jax.tree_util.tree_map(
        lambda a: (a + rng.standard_normal(a.shape) * 0.3).astype(np.float32), params)
    tokens = rng.integers(0, config.vocab, (config.batch, config.context)).astype(np.int32)
    want = np.asarray(tiny_lm.forward(config, params, tokens), np.float64)

    step = tiny_lm.decode_step(config)
    keys, values = tiny_lm.empty_caches(config, config.batch)
    path = brt.compile(step, params, keys, values, tokens[:, 0], np.int32(0),
                       path=str(tmp_path / "decode.brtx"), stats=True)
    caches = 2 * config.layers
    assert f"state: {caches} donated arguments, {caches} written in place, 0 through a copy" in \
        capfd.readouterr().out
    session = brt.Session(path)
    ctx = session.new_request()
    for name, array in tiny_lm.decode_arguments(params, keys, values).items():
        ctx.bind(name, array)
    for pos in range(config.context):
        ctx.bind("tokens", np.ascontiguousarray(tokens[:, pos]))
        ctx.bind("pos", np.array(pos, np.int32))
        ctx.run()
        outputs = ctx.outputs()
        assert rel(outputs[-1], want[:, pos]) <= 1e-5, pos
    # The caches are the arrays bound at the start, holding every position's
    # keys and values: what JAX's decode steps leave in theirs.
    for layer in range(config.layers):
        assert np.shares_memory(np.asarray(outputs[layer]), keys[layer])
    kj, vj = tiny_lm.empty_caches(config, config.batch)
    for pos in range(config.context):
        kj, vj, _ = step(params, kj, vj, tokens[:, pos], np.int32(pos))
    for layer in range(config.layers):
        assert rel(keys[layer], kj[layer]) <= 1e-5 and rel(values[layer], vj[layer]) <= 1e-5
