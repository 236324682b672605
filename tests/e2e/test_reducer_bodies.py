"""Reducer bodies JAX writes that brt takes by running them (issue 36):
lax.reduce_xor on integers and bools; lax.cumlogsumexp (a reduce_window
whose body is logaddexp written out), in floats and complex numbers, stable
for large values; complex maximum and minimum (compares of the real and
imaginary parts and selects: lexicographic order) in reduce, cummax/cummin,
reduce_window and scatter with duplicate indices; and lax.sort, argsort and
unique on complex numbers. Compiled by brt-compile, run by brt-run on the CPU
provider and the emulated CUDA provider, and compared with JAX on the CPU, and cumlogsumexp with NumPy's float64
logaddexp too."""
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

RNG = np.random.default_rng(3637)
SCATTER_ROWS = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                           scatter_dims_to_operand_dims=(0,))


def integers(dtype, *shape):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def complexes(dtype, *shape):
    """Parts in quarter steps of [-3, 3]: real parts repeat, so the imaginary
    part decides between them."""
    parts = RNG.integers(-12, 13, (2, *shape)) / 4
    return (parts[0] + 1j * parts[1]).astype(dtype)


def run(build_dir, tmp_path, target, name, fn, args):
    device, env = target_env(build_dir, target)
    path = brt.compile(fn, *args, target=device, path=tmp_path / f"{name}.brtx")
    return run_on_npy(build_dir, path, args, tmp_path, device, env)


XOR_CASES = [(f"reduce_xor_{np.dtype(t).name}", lambda x: lax.reduce_xor(x, (1,)), [integers(t, 4, 37)])
             for t in (np.int8, np.uint16, np.int32, np.uint64)]
XOR_CASES += [("reduce_xor_bool", lambda x: lax.reduce_xor(x, (0,)), [RNG.integers(0, 2, (9, 5)).astype(bool)]),
              ("reduce_xor_all_i64", lambda x: lax.reduce_xor(x, (0, 1)), [integers(np.int64, 3, 8)])]


@pytest.mark.parametrize("target", ["cpu", "emulated_cuda"])
@pytest.mark.parametrize("name,fn,args", XOR_CASES, ids=[c[0] for c in XOR_CASES])
def test_reduce_xor_matches_jax(have_compiler, build_dir, tmp_path, target, name, fn, args):
    with jax.enable_x64(True):
        want = np.asarray(jax.jit(fn)(*args))
        got = run(build_dir, tmp_path, target, name, fn, args)[0]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("target", ["cpu", "emulated_cuda"])
@pytest.mark.parametrize("dtype,rtol", [(np.float32, 2e-6), (np.float64, 1e-13)], ids=["f32", "f64"])
@pytest.mark.parametrize("reverse", [False, True], ids=["forward", "reverse"])
def test_cumlogsumexp_is_stable_for_large_values(have_compiler, build_dir, tmp_path, target, dtype, rtol, reverse):
    """Rows offset by +-1000 (exp overflows there in both types) and a row
    with -inf elements."""
    x = RNG.uniform(-5, 5, (4, 12))
    x[0] += 1000
    x[1] -= 1000
    x[2, 1::3] = -np.inf
    x = x.astype(dtype)

    def fn(v):
        return lax.cumlogsumexp(v, axis=1, reverse=reverse)
    with jax.enable_x64(True):
        want = np.asarray(jax.jit(fn)(x))
        got = run(build_dir, tmp_path, target, "cumlogsumexp", fn, [x])[0]
    exact = np.logaddexp.accumulate(x.astype(np.float64)[:, ::-1] if reverse else x.astype(np.float64), axis=1)
    exact = exact[:, ::-1] if reverse else exact
    assert got.dtype == dtype and np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=rtol)
    np.testing.assert_allclose(got, exact, rtol=rtol)


COMPLEX_CASES = [
    ("reduce_max", lambda x: lax.reduce_max(x, (1,))),
    ("reduce_min", lambda x: lax.reduce_min(x, (0,))),
    ("cummax", lambda x: lax.cummax(x, axis=1)),
    ("cummin_reverse", lambda x: lax.cummin(x, axis=0, reverse=True)),
    ("window_max", lambda x: lax.reduce_window(x, np.array(-np.inf, x.dtype), lax.max, (2, 3), (1, 2),
                                               ((0, 1), (1, 1)))),
    ("sort", lambda x: lax.sort(x, dimension=1)),
    ("argsort", lambda x: jnp.argsort(x, axis=0)),
    ("unique", lambda x: jnp.unique(x.ravel(), size=8, fill_value=x[0, 0])),
    ("reduce_two_operands", lambda x: lax.reduce((x, -x), (np.zeros((), x.dtype), np.zeros((), x.dtype)),
                                                 lambda a, b: (lax.max(a[0], b[0]), lax.min(a[1], b[1])), (1,))),
]


@pytest.mark.parametrize("target", ["cpu", "emulated_cuda"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["c64", "c128"])
@pytest.mark.parametrize("name,fn", COMPLEX_CASES, ids=[c[0] for c in COMPLEX_CASES])
def test_complex_order_matches_jax(have_compiler, build_dir, tmp_path, target, dtype, name, fn):
    x = complexes(dtype, 5, 7)
    with jax.enable_x64(True):
        want = jax.tree_util.tree_leaves(jax.jit(fn)(x))
        got = run(build_dir, tmp_path, target, name, fn, [x])
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, name
        np.testing.assert_array_equal(g, w, err_msg=name)


@pytest.mark.parametrize("target", ["cpu", "emulated_cuda"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128], ids=["c64", "c128"])
@pytest.mark.parametrize("combine", [lax.scatter_max, lax.scatter_min], ids=["max", "min"])
def test_complex_scatter_with_duplicates_matches_jax(have_compiler, build_dir, tmp_path, target, dtype, combine):
    x, updates = complexes(dtype, 5, 3), complexes(dtype, 9, 3)
    indices = RNG.integers(0, 5, (9, 1)).astype(np.int32)

    def fn(x, i, u):
        return combine(x, i, u, SCATTER_ROWS)
    with jax.enable_x64(True):
        want = np.asarray(jax.jit(fn)(x, indices, updates))
        got = run(build_dir, tmp_path, target, "scatter", fn, [x, indices, updates])[0]
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("target", ["cpu", "emulated_cuda"])
@pytest.mark.parametrize("dtype,rtol", [(np.complex64, 2e-6), (np.complex128, 1e-13)], ids=["c64", "c128"])
def test_complex_cumlogsumexp_matches_jax(have_compiler, build_dir, tmp_path, target, dtype, rtol):
    """Real parts offset by 300: exp overflows in c64, and the imaginary
    parts wrap into [-pi, pi)."""
    x = (complexes(np.complex128, 3, 10) + 300).astype(dtype)

    def fn(v):
        return lax.cumlogsumexp(v, axis=1)
    with jax.enable_x64(True):
        want = np.asarray(jax.jit(fn)(x))
        got = run(build_dir, tmp_path, target, "cumlogsumexp_complex", fn, [x])[0]
    exact = np.log(np.cumsum(np.exp(x.astype(np.complex128) - 300), axis=1)) + 300
    assert got.dtype == dtype
    np.testing.assert_allclose(got, want, rtol=rtol)
    np.testing.assert_allclose(got, exact, rtol=rtol)
