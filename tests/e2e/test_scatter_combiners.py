"""scatter with a max, min or multiply body (x.at[idx].max(v), .min(v),
.multiply(v); lax.scatter_max/min/mul), and gather and scatter with unsigned
indices (u8, u32, u64), compiled by brt-compile, run by brt-run on the CPU
provider and on the emulated CUDA provider (its own kernels compiled for the
host), and compared with JAX on the CPU bit for bit (-0 and +0 told apart).
Duplicate indices combine, out-of-bounds updates are dropped (JAX's default
FILL_OR_DROP: a window that does not fit is skipped whole), NaN propagates
through max and min as XLA's does. Products use powers of two, so every order
of the factors rounds alike; i32 products wrap."""
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
FLOATS = {"f32": np.float32, "f16": np.float16, "bf16": jnp.bfloat16}
# Duplicates (0 three times, 3 twice), a negative index jnp wraps (-1: the
# last row) and two it drops (7 and -9 are outside the 6 rows).
IDX = np.array([0, 3, 0, 5, -1, 7, 3, 0, -9, 2], np.int32)
DROP = lax.GatherScatterMode.FILL_OR_DROP


def floats(*shape):
    return RNG.uniform(-4, 4, shape).astype(np.float32)


def factors(*shape):
    return RNG.choice(np.array([-2, -1, -0.5, 0.5, 1, 2, 0.25, 4], np.float32), shape)


def combine(how):
    return {"max": lambda x, i, v: x.at[i].max(v), "min": lambda x, i, v: x.at[i].min(v),
            "multiply": lambda x, i, v: x.at[i].multiply(v)}[how]


def in_dtype(fn, dtype):
    # brt-run reads no bf16 .npy: 16-bit floats come in and go out as f32.
    if dtype == np.float32:
        return fn
    return lambda x, i, v: fn(x.astype(dtype), i, v.astype(dtype)).astype(jnp.float32)


def float_case(how, kind, rows):
    shape = (6, rows) if rows else (6,)
    vshape = (len(IDX), rows) if rows else (len(IDX),)
    if how == "multiply":
        x, v = factors(*shape), factors(*vshape)
    else:
        x, v = floats(*shape), floats(*vshape)
        x.flat[1], v.flat[2], v.flat[4] = np.nan, np.nan, -np.inf  # NaN in the operand and in an update
        x.flat[4], v.flat[len(v.flat) // 2] = -0.0, 0.0
    return in_dtype(combine(how), FLOATS[kind]), [x, IDX, v]


def int_case(how, dtype, rows):
    shape = (6, rows) if rows else (6,)
    vshape = (len(IDX), rows) if rows else (len(IDX),)
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)
    v = RNG.integers(info.min, info.max, vshape, dtype=dtype, endpoint=True)
    return combine(how), [x, IDX, v]


def window_scatter(x, i, v):
    # 2x3 windows into an 8x6 operand at (row, column) starts: duplicates
    # overlap, a window reaching past the edge (start (7, 0) or (2, 4)) is
    # skipped whole.
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(),
                                     scatter_dims_to_operand_dims=(0, 1))
    return (lax.scatter_mul(x, i, v, dn, mode=DROP), lax.scatter_max(x, i, v * 3, dn, mode=DROP),
            lax.scatter_min(x, i, -v, dn, mode=DROP))


WINDOW_STARTS = np.array([[0, 0], [1, 2], [0, 0], [6, 3], [7, 0], [2, 4], [1, 1], [5, 3]], np.int32)


def unsigned_gather(x, i):
    # CLIP: the indices go to stablehlo.gather as they are, which clamps them.
    dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    return lax.gather(x, i, dn, (1, x.shape[1]), mode=lax.GatherScatterMode.CLIP)


def unsigned_scatter(x, i, v):
    # FILL_OR_DROP: the indices go to stablehlo.scatter as they are, which
    # drops the rows they put outside.
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))
    return (lax.scatter_add(x, i, v, dn, mode=DROP), lax.scatter_max(x, i, v, dn, mode=DROP),
            lax.scatter(x, i[:2], v[:2], dn, mode=DROP))


def unsigned_indices(dtype):
    # In range with a duplicate, just past the end, and the largest value
    # (above every signed one of its width for u64).
    top = np.iinfo(dtype).max
    return np.array([[3], [1], [3], [6], [top], [0]], dtype)


CASES = [
    *[(f"{how}_{kind}_{'rows' if rows else 'elements'}", *float_case(how, kind, rows))
      for how in ("max", "min", "multiply") for kind in FLOATS for rows in (0, 3)],
    *[(f"{how}_{np.dtype(t).name}_{'rows' if rows else 'elements'}", *int_case(how, t, rows))
      for how in ("max", "min", "multiply") for t in (np.int32, np.uint8, np.int8) for rows in (0, 3)],
    ("max_min_bool", lambda x, i, v: (x.at[i].max(v), x.at[i].min(v)),
     [RNG.integers(0, 2, 6).astype(bool), IDX, RNG.integers(0, 2, len(IDX)).astype(bool)]),
    ("windows_2d_f32", window_scatter, [factors(8, 6), WINDOW_STARTS, factors(len(WINDOW_STARTS), 2, 3)]),
    ("windows_2d_i32", window_scatter, [RNG.integers(-50, 50, (8, 6)).astype(np.int32), WINDOW_STARTS,
                                        RNG.integers(-50, 50, (len(WINDOW_STARTS), 2, 3)).astype(np.int32)]),
    *[(f"gather_{np.dtype(t).name}_indices", unsigned_gather, [floats(6, 4), unsigned_indices(t)])
      for t in (np.uint8, np.uint32, np.uint64)],
    *[(f"scatter_{np.dtype(t).name}_indices", unsigned_scatter,
       [floats(6, 4), unsigned_indices(t), floats(6, 4)]) for t in (np.uint8, np.uint32, np.uint64)],
]


@pytest.mark.parametrize("target", ["cpu", "emulated_cuda"])
@pytest.mark.parametrize("name,fn,args", CASES, ids=[c[0] for c in CASES])
def test_matches_jax(have_compiler, build_dir, tmp_path, target, name, fn, args):
    device, env = target_env(build_dir, target)
    with jax.enable_x64(True):  # u64 indices stay 64-bit
        path = brt.compile(fn, *args, target=device, path=tmp_path / f"{name}.brtx")
        want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
    outs = run_on_npy(build_dir, path, args, tmp_path, device, env)
    assert len(outs) == len(want), name
    for i, (got, w) in enumerate(zip(outs, want)):
        w = np.asarray(w)
        assert got.dtype == w.dtype and got.shape == w.shape, name
        np.testing.assert_array_equal(got, w, err_msg=f"{name} result {i}")
        if np.issubdtype(w.dtype, np.floating):  # the sign of zero too
            zeros = w == 0
            np.testing.assert_array_equal(np.signbit(got[zeros]), np.signbit(w[zeros]),
                                          err_msg=f"{name} result {i}: signs of zero")

