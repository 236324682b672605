"""Donated arguments (jax.jit(..., donate_argnums=...)) become state updated in
place: bound once, the caller's arrays hold each step's new values, and every
step matches JAX."""
import numpy as np
import pytest

import brt

jax = pytest.importorskip("jax")
jnp = jax.numpy
RNG = np.random.default_rng(7)


def normal(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def roles(session):
    return {a["name"]: (a["role"], a.get("alias_of")) for a in session.functions[0]["arguments"]}


def rel(a, b):
    return float(np.linalg.norm(np.asarray(a) - np.asarray(b)) / np.linalg.norm(np.asarray(b)))


def test_an_sgd_momentum_step_keeps_its_state_in_the_bound_arrays(tmp_path):
    w, m = normal(8, 4), normal(8, 4, scale=0.1)
    x, y = normal(16, 8), normal(16, 4)

    def step(w, m, x, y):
        loss, g = jax.value_and_grad(lambda w: jnp.mean((jnp.tanh(x @ w) - y) ** 2))(w)
        m = 0.9 * m + g
        return w - 0.1 * m, m, loss

    jitted = jax.jit(step, donate_argnums=(0, 1))
    session = brt.Session(brt.compile(jitted, w, m, x, y, path=str(tmp_path / "step.brtx")))
    assert roles(session) == {"w": ("state", None), "m": ("state", None),
                              "x": ("input", None), "y": ("input", None),
                              "result0": ("output", "w"), "result1": ("output", "m"),
                              "result2": ("output", None)}
    ctx = session.new_request()
    w_state, m_state = w.copy(), m.copy()
    for name, array in (("w", w_state), ("m", m_state), ("x", x), ("y", y)):
        ctx.bind(name, array)
    wj, mj = jnp.array(w), jnp.array(m)
    for _ in range(20):
        ctx.run()
        wj, mj, loss = jitted(wj, mj, x, y)
        assert abs(float(np.asarray(ctx.outputs()[2])) - float(loss)) <= 1e-5 * abs(float(loss))
    new_w, new_m = ctx.outputs()[:2]
    assert np.shares_memory(np.asarray(new_w), w_state) and np.shares_memory(np.asarray(new_m), m_state)
    assert rel(w_state, wj) <= 1e-5 and rel(m_state, mj) <= 1e-5


def test_a_donor_read_after_its_new_value_exists_sees_the_old_value(tmp_path):
    # new_p is computed before p @ p reads p, and the two states trade
    # places: the writes into the donors' buffers must wait for every read.
    p, q = normal(6, 6), normal(6, 6)

    def f(p, q):
        new_p = p + q
        trace = jnp.trace(p @ p)
        return q * 2.0, new_p, trace

    jitted = jax.jit(f, donate_argnums=(0, 1))
    session = brt.Session(brt.compile(jitted, p, q, path=str(tmp_path / "f.brtx")))
    assert roles(session)["result0"] == ("output", "p")
    assert roles(session)["result1"] == ("output", "q")
    ctx = session.new_request()
    p_state, q_state = p.copy(), q.copy()
    ctx.bind("p", p_state)
    ctx.bind("q", q_state)
    pj, qj = jnp.array(p), jnp.array(q)
    for _ in range(3):
        ctx.run()
        pj, qj, trace = jitted(pj, qj)
        assert abs(float(np.asarray(ctx.outputs()[2])) - float(trace)) <= 1e-5 * abs(float(trace))
    assert rel(p_state, pj) <= 1e-6 and rel(q_state, qj) <= 1e-6


def test_a_kv_cache_is_updated_in_place_by_dynamic_update_slice_and_scatter(tmp_path, capfd):
    # A decoding step: this token's key row goes into one cache with
    # lax.dynamic_update_slice, its value row into the other with .at[].set
    # (a scatter); attention then reads both. Each update writes only its row
    # into the state's buffer: no copy of the caches.
    keys, values = normal(32, 16), normal(32, 16)
    q, k, v = normal(16), normal(16), normal(16)

    def step(keys, values, q, k, v, pos):
        keys = jax.lax.dynamic_update_slice(keys, k[None], (pos, 0))
        values = values.at[pos].set(v)
        attention = jax.nn.softmax(keys @ q) @ values
        return keys, values, attention

    jitted = jax.jit(step, donate_argnums=(0, 1))
    pos = np.int32(0)
    brt.compile(jitted, keys, values, q, k, v, pos, path=str(tmp_path / "decode.brtx"), stats=True)
    assert "state: 2 donated arguments, 2 written in place, 0 through a copy" in capfd.readouterr().out
    session = brt.Session(str(tmp_path / "decode.brtx"))
    ctx = session.new_request()
    keys_state, values_state = keys.copy(), values.copy()
    ctx.bind("keys", keys_state)
    ctx.bind("values", values_state)
    kj, vj = jnp.array(keys), jnp.array(values)
    for step_pos in (3, 4, 31, 0):
        q, k, v = normal(16), normal(16), normal(16)
        pos = np.array(step_pos, np.int32)
        for name, array in (("q", q), ("k", k), ("v", v), ("pos", pos)):
            ctx.bind(name, array)
        ctx.run()
        kj, vj, attention = jitted(kj, vj, q, k, v, pos)
        assert rel(ctx.outputs()[2], attention) <= 1e-5
    assert np.array_equal(keys_state, np.asarray(kj)) and np.array_equal(values_state, np.asarray(vj))
