"""JAX's indexing at its edges through brt.compile: negative and boundary
indices, static and at run time, jnp.take's and .at[]'s modes ("clip",
"fill", "drop", "promise_in_bounds"), and out-of-range indices, each against
jax.jit on the same inputs. JAX writes its own index arithmetic into the
StableHLO (negative indices wrapped, fill masks), so brt has to keep
gather's clamping and scatter's dropping exactly."""
import numpy as np
import pytest

from conftest import require  # noqa: E402

jax = require("jax")
jnp = jax.numpy
import brt  # noqa: E402

rng = np.random.default_rng(36)
X = rng.standard_normal((5, 4)).astype(np.float32)
V = rng.standard_normal((6, 4)).astype(np.float32)
# Every valid position (-5..4) and out of range both ways.
IN_RANGE = np.array([-5, -1, 0, 4, 2, -3], np.int32)
OUT_OF_RANGE = np.array([-7, 5, 9, -6, 0, -1], np.int32)


def assert_matches(fn, *args):
    session = brt.Session(brt.compile(fn, *args))
    got = session.run(*args)
    want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, np.asarray(w))


@pytest.mark.parametrize("index", [IN_RANGE, OUT_OF_RANGE], ids=["in range", "out of range"])
@pytest.mark.parametrize("name,fn", [
    ("x[i]", lambda x, i: x[i]),
    ("x[:, i]", lambda x, i: x[:, i % 4 - 4 * (i < 0)]),
    ("take", lambda x, i: jnp.take(x, i, axis=0)),
    ("take clip", lambda x, i: jnp.take(x, i, axis=0, mode="clip")),
    ("take fill", lambda x, i: jnp.take(x, i, axis=0, mode="fill", fill_value=-9.0)),
    ("take_along_axis", lambda x, i: jnp.take_along_axis(x, jnp.broadcast_to(i[:, None], (6, 4))[:5], axis=0)),
    ("x[i, j]", lambda x, i: x[i, jnp.flip(i) % 4]),
])
def test_gathers(name, fn, index):
    assert_matches(fn, X, index)


@pytest.mark.parametrize("index", [IN_RANGE, OUT_OF_RANGE], ids=["in range", "out of range"])
@pytest.mark.parametrize("name,fn", [
    ("at set", lambda x, i, v: x.at[i].set(v)),
    ("at add", lambda x, i, v: x.at[i].add(v)),
    ("at set drop", lambda x, i, v: x.at[i].set(v, mode="drop")),
    ("at add clip", lambda x, i, v: x.at[i].add(v, mode="clip")),
    ("at get fill", lambda x, i, v: x.at[i].get(mode="fill", fill_value=3.5) + v),
    ("at set column", lambda x, i, v: x.at[:, i % 4].set(v[:5, :1])),
])
def test_scatters(name, fn, index):
    assert_matches(fn, X, index, V)


def test_static_negative_indices_and_slices():
    assert_matches(lambda x: (x[-1], x[-3:-1, ::-1], x[:, -2], x[::-2, 1:-1], jnp.flip(x, 0)), X)


def test_dynamic_slice_clamps_like_jax():
    starts = np.array([-3, 3, 7], np.int32)
    assert_matches(lambda x, s: [jax.lax.dynamic_slice(x, (s[k], s[k]), (2, 3)) for k in range(3)], X, starts)
    assert_matches(lambda x, s, v: jax.lax.dynamic_update_slice(x, v[:2, :2], (s[2], s[0])), X, starts, V)
