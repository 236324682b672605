"""Loops through the Python Session: a loop inside a donated-state step
updates the state in place and matches JAX; a loop running past the
Session's max_loop_iterations fails the run, naming it."""
import numpy as np
import pytest

import brt

jax = pytest.importorskip("jax")
jnp = jax.numpy
lax = jax.lax
RNG = np.random.default_rng(11)


def normal(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def collatz_steps(n):
    def body(c):
        x, k = c
        return jnp.where(x % 2 == 0, x // 2, 3 * x + 1), k + 1
    return lax.while_loop(lambda c: c[0] != 1, body, (n, jnp.int32(0)))


def test_a_loop_in_a_donated_state_step_updates_the_state(tmp_path):
    w, x = normal(8, 8, scale=0.3), normal(4, 8)

    def step(w, x, n):
        def inner(i, w):
            g = jax.grad(lambda w: jnp.mean(jnp.tanh(x @ w) ** 2))(w)
            return w - 0.1 * g
        return lax.fori_loop(0, n, inner, w)

    jitted = jax.jit(step, donate_argnums=0)
    n = np.int32(7)
    session = brt.Session(brt.compile(jitted, w, x, n, path=str(tmp_path / "step.brtx")))
    ctx = session.new_request()
    state = w.copy()
    ctx.bind("w", state)
    ctx.bind("x", x)
    ctx.bind("n", n)
    want = jnp.array(w)
    for _ in range(3):
        ctx.run()
        want = jitted(want, x, n)
    np.testing.assert_allclose(state, np.asarray(want), rtol=1e-5, atol=1e-6)


def test_a_runaway_loop_stops_at_the_sessions_limit(tmp_path):
    path = brt.compile(collatz_steps, np.int32(27), path=str(tmp_path / "c.brtx"))
    session = brt.Session(path, max_loop_iterations=50)
    with pytest.raises(RuntimeError, match=r"op #\d+ 'while'.*ran 50 iterations"):
        session.run(np.int32(27))  # 111 steps
    assert [int(np.asarray(v)) for v in session.run(np.int32(16))] == [1, 4]
