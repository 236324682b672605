"""Control flow from JAX run as control flow: lax.while_loop with a
data-dependent trip count, fori_loop with a bound given as an input,
lax.scan of 2000 steps, lax.cond and lax.switch (only the taken branch
runs), nested loops and branches, a scan's gradient (loops in a backward
pass). Compiled by brt-compile, run on
the CPU provider and on the emulated CUDA provider (its own kernels compiled
for the host), and compared with JAX on the CPU. tests/python/test_loops.py
runs loops in process: donated state, the Session's loop limit."""
import os
import pathlib
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import brt  # noqa: E402
from conftest import run_on_npy, target_env  # noqa: E402

RNG = np.random.default_rng(36)
TARGETS = ["cpu", "emulated_cuda"]


def normal(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def collatz_steps(n):
    def body(c):
        x, k = c
        return jnp.where(x % 2 == 0, x // 2, 3 * x + 1), k + 1
    return lax.while_loop(lambda c: c[0] != 1, body, (n, jnp.int32(0)))


def damped(n, x):
    return lax.fori_loop(0, n, lambda i, acc: acc * 0.9 + jnp.sin(acc + i.astype(jnp.float32)), x)


def rnn(w, xs, h0):
    def step(h, x):
        h = jnp.tanh(h @ w + x)
        return h, h.sum()
    return lax.scan(step, h0, xs)


def cheap_or_dear(p, x):
    return lax.cond(p > 0, lambda x: jnp.sin(x) * 2, lambda x: jnp.cos(x) @ jnp.cos(x).T, x)


def three_ways(i, x):
    return lax.switch(i, [lambda x: x + 1, lambda x: x * x, lambda x: -x], x)


def nested(n, x):
    # A cond inside a loop, a loop inside a cond's branch.
    def body(i, acc):
        return lax.cond(i % 3 == 0, lambda a: a * 0.5, lambda a: a + jnp.tanh(a), acc)
    looped = lax.fori_loop(0, n, body, x)
    return lax.cond(n > 4, lambda a: lax.fori_loop(0, n, lambda i, b: b * 1.01, a), lambda a: a - 1, looped)


def check(fn, args, build_dir, tmp_path, target, rtol=1e-5, atol=1e-6):
    device, env = target_env(build_dir, target)
    path = brt.compile(fn, *args, target="cpu" if target == "cpu" else "cuda",
                       path=str(tmp_path / "f.brtx"))
    got = run_on_npy(build_dir, path, args, tmp_path, device, env)
    want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, np.asarray(w), rtol=rtol, atol=atol)
    return path


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [27, 97, 1])
def test_while_loop_runs_until_its_data_says_stop(build_dir, tmp_path, target, n):
    check(collatz_steps, (np.int32(n),), build_dir, tmp_path, target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [0, 5, 300])
def test_fori_loop_bound_is_an_input(build_dir, tmp_path, target, n):
    check(damped, (np.int32(n), normal(16)), build_dir, tmp_path, target, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
def test_a_2000_step_scan_is_a_loop_in_a_small_executable(build_dir, tmp_path, target):
    args = (normal(32, 32, scale=0.2), normal(2000, 32), normal(32))
    path = check(rnn, args, build_dir, tmp_path, target, rtol=1e-4, atol=1e-5)
    # Unrolled, it was 4.4 MB; the loop is its body once.
    assert os.path.getsize(path) < 1 << 20


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("p", [1.0, -1.0])
def test_cond_takes_the_branch_its_predicate_names(build_dir, tmp_path, target, p):
    check(cheap_or_dear, (np.float32(p), normal(8, 8)), build_dir, tmp_path, target, rtol=1e-5)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("i", [0, 1, 2, -4, 9])  # out of range: clamped, as lax.switch does
def test_switch_clamps_its_index(build_dir, tmp_path, target, i):
    check(three_ways, (np.int32(i), normal(8)), build_dir, tmp_path, target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("n", [2, 9])
def test_loops_and_branches_nest(build_dir, tmp_path, target, n):
    check(nested, (np.int32(n), normal(8)), build_dir, tmp_path, target, rtol=1e-5)


def test_a_scans_gradient_runs_loops_backwards(build_dir, tmp_path):
    w, xs, h0 = normal(16, 16, scale=0.3), normal(300, 16), normal(16)

    def loss(w, xs, h0):
        h, sums = rnn(w, xs, h0)
        return jnp.sum(h ** 2) + jnp.mean(sums)

    check(jax.grad(loss, argnums=(0, 2)), (w, xs, h0), build_dir, tmp_path, "cpu", rtol=1e-4, atol=1e-5)
