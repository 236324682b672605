"""Review cases for symbolic sizes: a reduce_window's static padding of -1
keeps its StableHLO meaning (one element cropped) next to the -1 entries
that mark a cumulative scan over a symbolic dimension."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax import lax

import brt

RNG = np.random.default_rng(77)


def spec(shape, dtype=jnp.float32):
    return jax.ShapeDtypeStruct(shape, dtype)


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def assert_matches_jax(fn, specs, args):
    got = brt.Session(brt.compile(fn, *specs)).run(*args)[0]
    want = np.asarray(jax.jit(fn)(*args), dtype=np.float64)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "padding, reducer, init",
    [(((-1, 0),), lax.add, 0.0), (((0, -1),), lax.add, 0.0), (((-1, 2),), lax.max, -np.inf)],
)
def test_static_reduce_window_padding_of_minus_one_crops(have_compiler, padding, reducer, init):
    fn = lambda x: lax.reduce_window(x, init, reducer, (2,), (1,), padding)  # noqa: E731
    assert_matches_jax(fn, [spec((6,))], (randn(6),))


def test_static_pooling_padding_of_minus_one_crops(have_compiler):
    pads = ((0, 0), (0, 0), (-1, 0), (0, -1))
    fn = lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 1, 2, 2), (1, 1, 1, 1), pads)  # noqa: E731
    assert_matches_jax(fn, [spec((2, 3, 6, 6))], (randn(2, 3, 6, 6),))


def test_symbolic_padding_of_the_extent_less_one_needs_the_whole_window(have_compiler):
    (n,) = jax.export.symbolic_shape("n")
    fn = lambda x: lax.reduce_window(x, 0.0, lax.add, (3,), (1,), ((x.shape[0] - 1, 0),))  # noqa: E731
    with pytest.raises(brt.CompileError, match=r"dynamic_reduce_window with n - 1 in its padding"):
        brt.compile(fn, spec((n,)))

