"""int16 and uint16 (format 1.4's i16 and u16) end to end: JAX programs on
them compiled by brt-compile, run by brt-run on the CPU provider and on the
emulated CUDA provider (its own kernels compiled for the host), and compared
with JAX on the CPU bit for bit. The data is random with the extremes
(-32768, 32767, 65535, 0, -1) planted, so arithmetic wraps; division and
remainder meet negative divisors and zero (XLA: x / 0 is -1, x % 0 is x,
-32768 / -1 is -32768); shift amounts reach 16 and beyond; float-to-integer
conversions meet NaN, infinities and out-of-range values (XLA saturates, NaN
gives 0) and integer ones wrap."""
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

RNG = np.random.default_rng(1616)
TYPES = (np.int16, np.uint16)


def integers(dtype, *shape):
    """Random values of the whole range with the extremes, 0, 1 and all bits
    set (int16's -1) or its neighbour (uint16's 65534) planted at random
    places."""
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    edges = np.array([info.min, info.max, 0, 1, -1 if info.min else info.max - 1], dtype)
    x.flat[RNG.choice(x.size, len(edges), replace=False)] = edges
    return x


def division(dtype, *shape):
    """Dividends and divisors: random, with zeros, ones, -1s and small
    negative divisors among them, and in row 0 the pairs XLA defines apart:
    the minimum over -1 (int16) and the extremes over 0."""
    a, b = integers(dtype, *shape), integers(dtype, *shape)
    small = np.array([0, 1, 2, 7, 0] + ([-1, -3, -32768] if dtype == np.int16 else [65535, 3, 0]), dtype)
    b.flat[RNG.choice(b.size, len(small) * 3, replace=False)] = np.tile(small, 3)
    info = np.iinfo(dtype)
    pairs = [(info.min, 0), (info.max, 0), (0, 0), (info.max, info.max)]
    if dtype == np.int16:
        pairs += [(info.min, -1), (info.max, -1), (-7, 2), (7, -2), (-7, -2)]
    for k, (x, y) in enumerate(pairs):
        a[0, k], b[0, k] = x, y
    return [a, b]


def shifts(dtype, *shape):
    """Shift amounts: mostly below the width, some of 15, 16, 17 and, for
    int16, negative ones (read as huge unsigned amounts)."""
    x = RNG.integers(0, 20, shape).astype(dtype)
    if dtype == np.int16:
        x.flat[::7] = -1
    return x


def arithmetic(a, b):
    out = (a + b, a - b, a * b, -a, lax.div(a, b), lax.rem(a, b), jnp.maximum(a, b), jnp.minimum(a, b),
           a * a * a, jnp.clip(a, a.dtype.type(3), a.dtype.type(30000)))
    return out + ((jnp.abs(a), jnp.sign(a)) if a.dtype == jnp.int16 else ())


def bits(a, s):
    return (a & s, a | s, a ^ s, ~a, lax.shift_left(a, s), lax.shift_right_logical(a, s),
            lax.shift_right_arithmetic(a, s), lax.population_count(a))


def compare(a, b):
    return (a == b, a != b, a < b, a <= b, a > b, a >= b, jnp.where(a > b, a, b))


def to_wider(a):
    return (a.astype(jnp.float32), a.astype(jnp.int32), a.astype(jnp.float16), a.astype(jnp.int8),
            a.astype(jnp.uint8), a.astype(jnp.int16), a.astype(jnp.uint16), a.astype(jnp.bool_))


def from_float(f, dtype):
    return lax.convert_element_type(f, dtype)


def from_int32(i, dtype):
    return lax.convert_element_type(i, dtype)


def reductions(a):
    return (jnp.sum(a, axis=1, dtype=a.dtype), jnp.sum(a, axis=0, dtype=a.dtype), jnp.sum(a),
            jnp.prod(a, axis=1, dtype=a.dtype), jnp.max(a, axis=0), jnp.min(a, axis=1),
            lax.reduce(a, ~a.dtype.type(0), lax.bitwise_and, (1,)),
            lax.reduce(a, a.dtype.type(0), lax.bitwise_or, (0,)),
            jnp.argmax(a, axis=1), jnp.argmin(a, axis=0))


def scans(a):
    return (jnp.cumsum(a, axis=1, dtype=a.dtype), jnp.cumsum(a, axis=0, dtype=a.dtype),
            lax.cummax(a, axis=1), lax.cummin(a, axis=0), lax.cumprod(a, axis=1))


def sorts(a, payload):
    return (jnp.sort(a, axis=1), jnp.sort(a, axis=0, descending=True), jnp.argsort(a, axis=1, stable=True),
            lax.sort((a, payload), dimension=1, num_keys=1))


def indexing(x, idx, v):
    # Gather with clamped indices, scatters whose duplicates combine (sums
    # and products wrap) and out-of-range updates are dropped.
    drop = lax.GatherScatterMode.FILL_OR_DROP
    return (x[idx], x.at[idx].add(v, mode=drop), x.at[idx].max(v, mode=drop), x.at[idx].min(v, mode=drop),
            x.at[idx].multiply(v, mode=drop), x.at[idx].set(v, mode=drop))


def index_of_type(x, i):
    # int16/uint16 indices as they are (CLIP clamps them into the operand).
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    return lax.gather(x, i[:, None], dn, (1, x.shape[1]), mode=lax.GatherScatterMode.CLIP)


def dynamic(x, u, i, j):
    return lax.dynamic_slice(x, (i, j), (3, 2)), lax.dynamic_update_slice(x, u, (i, j))


def movement(a, b):
    return (jnp.concatenate([a, b], axis=1), jnp.pad(a, ((1, 2), (0, 3)), constant_values=~a.dtype.type(0)),
            a.T, a[::-1, 1::2], jnp.broadcast_to(a[:, :1], (a.shape[0], 5)), a.reshape(-1)[3:40],
            jnp.arange(70000, dtype=a.dtype), jnp.tile(b, (2, 1)))


def dots(a, b):
    return jnp.dot(a, b), jnp.einsum("ij,ij->i", a, a)


def bitcasts(a):
    return (lax.bitcast_convert_type(a, jnp.float16), lax.bitcast_convert_type(a, jnp.uint8),
            lax.bitcast_convert_type(a.reshape(-1, 2), jnp.uint32))


def from_bits(bytes_, words):
    return lax.bitcast_convert_type(bytes_, jnp.int16), lax.bitcast_convert_type(words, jnp.uint16)


SPECIAL_FLOATS = np.array([np.nan, np.inf, -np.inf, 1e9, -1e9, 32767.9, -32768.9, 65535.5, 65536,
                           -0.5, -1.5, 0.9, 40000, -40000], np.float32)


def type_cases(t):
    name = np.dtype(t).name
    a, b = integers(t, 12, 37), integers(t, 12, 37)
    floats = np.concatenate([SPECIAL_FLOATS, RNG.uniform(-80000, 80000, 50).astype(np.float32)])
    wide = np.concatenate([np.array([70000, -70000, 65535, 65536, -1, 32768, -32769], np.int32),
                           RNG.integers(-2**31, 2**31 - 1, 50, dtype=np.int32)])
    idx = np.array([0, 3, 0, 5, -1, 7, 3, 0, -9, 2, 5, 5], np.int32)
    index_values = np.array([0, 11, 3, 65535 if t == np.uint16 else -32768, 32767, 2], t)
    rows, cols = (np.iinfo(t).max, 2) if t == np.uint16 else (-3, 1)
    return [
        (f"arithmetic_{name}", arithmetic, division(t, 12, 37)),
        (f"bits_{name}", bits, [a, shifts(t, 12, 37)]),
        (f"compare_{name}", compare, [a, np.where(RNG.random((12, 37)) < 0.3, a, b)]),
        (f"convert_from_{name}", to_wider, [a]),
        (f"convert_f32_to_{name}", lambda f: from_float(f, t), [floats]),
        (f"convert_i32_to_{name}", lambda i: from_int32(i, t), [wide]),
        (f"reductions_{name}", reductions, [a]),
        (f"scans_{name}", scans, [a]),
        (f"sort_{name}", sorts, [np.where(RNG.random((12, 37)) < 0.2, t(7), a), b]),
        (f"gather_scatter_{name}", indexing, [integers(t, 6, 3), idx, integers(t, len(idx), 3)]),
        (f"gather_{name}_indices", index_of_type, [integers(np.int32, 12, 4), index_values]),
        (f"dynamic_slice_{name}", dynamic, [a, integers(t, 3, 2), t(rows), t(cols)]),
        (f"data_movement_{name}", movement, [a, b]),
        (f"dot_{name}", dots, [a[:, :8], b[:8, :5]]),
        (f"bitcast_{name}", bitcasts, [a]),
    ]


CASES = [c for t in TYPES for c in type_cases(t)] + [
    ("bitcast_to_16_bits", from_bits, [integers(np.uint8, 6, 2), integers(np.uint32, 5)]),
]


@pytest.mark.parametrize("target", ["cpu", "emulated_cuda"])
@pytest.mark.parametrize("name,fn,args", CASES, ids=[c[0] for c in CASES])
def test_matches_jax(have_compiler, build_dir, tmp_path, target, name, fn, args):
    device, env = target_env(build_dir, target)
    path = brt.compile(fn, *args, target=device, path=tmp_path / f"{name}.brtx")
    want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
    outs = run_on_npy(build_dir, path, args, tmp_path, device, env)
    assert len(outs) == len(want), name
    for i, (got, w) in enumerate(zip(outs, want)):
        w = np.asarray(w)
        assert got.dtype == w.dtype and got.shape == w.shape, f"{name} result {i}: {got.dtype}{got.shape}"
        np.testing.assert_array_equal(got, w, err_msg=f"{name} result {i}")


def test_the_data_holds_the_extremes():
    """The cases above meet every extreme (or the comparisons prove little)."""
    for t in TYPES:
        x = integers(t, 4, 5)
        info = np.iinfo(t)
        assert {info.min, info.max, 0} <= set(x.ravel().tolist())
