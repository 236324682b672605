"""Element types brt-compile accepts must load and run: programs that once
compiled and were then refused at load (negate on unsigned integers, add and
multiply on booleans, reduce_window on narrow and unsigned integers or with a
multiply body, unsigned start indices of dynamic_slice and
dynamic_update_slice), compiled by brt-compile, run by brt-run on the CPU
provider, and compared with JAX on the CPU, bit for bit."""
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
from conftest import brt_run  # noqa: E402

RNG = np.random.default_rng(4242)


def integers(dtype, *shape):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def window_product(x):
    return lax.reduce_window(x, np.array(1, x.dtype), lax.mul, (2, 3), (1, 2), ((1, 0), (1, 1)))


def window_sum(x):
    return lax.reduce_window(x, np.array(0, x.dtype), lax.add, (3, 2), (2, 1), "SAME")


def window_max(x):
    return lax.reduce_window(x, np.array(np.iinfo(x.dtype).min, x.dtype), lax.max, (2, 2), (1, 1), "VALID")


def window_min(x):
    return lax.reduce_window(x, np.array(np.iinfo(x.dtype).max, x.dtype), lax.min, (2, 3), (2, 2), "SAME")


def slice_at(x, i, j):
    return lax.dynamic_slice(x, (i, j), (3, 2))


def update_at(x, u, i, j):
    return lax.dynamic_update_slice(x, u, (i, j))


def starts(dtype):
    # In range, past the end (clamped to the last window) and, for the
    # largest unsigned values, above every signed one (clamped there too).
    info = np.iinfo(dtype)
    return [(dtype(1), dtype(2)), (dtype(7), dtype(0)), (dtype(info.max), dtype(info.max - 1))]


CASES = [
    *[(f"negate_{t.__name__}", jnp.negative, [integers(t, 5, 7)]) for t in (np.uint8, np.uint32, np.uint64)],
    *[(f"reduce_window_{f.__name__}_{t.__name__}", f, [integers(t, 6, 7)])
      for t in (np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64)
      for f in (window_product, window_sum, window_max, window_min)],
    ("reduce_window_product_f32", window_product, [RNG.uniform(0.5, 1.5, (6, 7)).astype(np.float32)]),
    *[(f"dynamic_slice_{t.__name__}_{k}", slice_at, [integers(np.int32, 6, 5), i, j])
      for t in (np.uint8, np.uint32, np.uint64, np.int8) for k, (i, j) in enumerate(starts(t))],
    *[(f"dynamic_update_slice_{t.__name__}_{k}", update_at, [integers(np.int32, 6, 5), integers(np.int32, 3, 2), i, j])
      for t in (np.uint8, np.uint32, np.uint64, np.int8) for k, (i, j) in enumerate(starts(t))],
]


@pytest.mark.parametrize("name,fn,args", CASES, ids=[c[0] for c in CASES])
def test_compiles_loads_and_matches_jax(have_compiler, build_dir, tmp_path, name, fn, args):
    with jax.enable_x64(True):  # u64 and i64 stay 64-bit
        path = brt.compile(fn, *args, path=tmp_path / f"{name}.brtx")
        want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
    inputs = []
    for i, a in enumerate(args):
        inputs.append(tmp_path / f"in{i}.npy")
        np.save(inputs[-1], np.asarray(a))
    r = brt_run(build_dir, path, "--inputs", *inputs, "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    for i, w in enumerate(want):
        got, w = np.load(tmp_path / "out" / f"out{i}.npy"), np.asarray(w)
        assert got.dtype == w.dtype and got.shape == w.shape, name
        np.testing.assert_array_equal(got, w, err_msg=name)


def test_add_and_multiply_on_booleans(have_compiler, build_dir, tmp_path):
    """stablehlo.add and multiply on i1 (StableHLO's logical or and and; JAX
    refuses lax.add on bools, so the module is written by hand, as other
    producers write it) against jnp.logical_or and logical_and."""
    t = "tensor<6x5xi1>"
    (tmp_path / "bool.mlir").write_text(
        '"builtin.module"() ({\n"func.func"() <{function_type = '
        f'({t}, {t}) -> ({t}, {t}), sym_name = "main"}}> ({{\n'
        f'^bb0(%a: {t}, %b: {t}):\n'
        f'  %0 = "stablehlo.add"(%a, %b) : ({t}, {t}) -> {t}\n'
        f'  %1 = "stablehlo.multiply"(%a, %b) : ({t}, {t}) -> {t}\n'
        f'  "func.return"(%0, %1) : ({t}, {t}) -> ()\n}}) : () -> ()\n}}) : () -> ()\n')
    path = brt.compile_stablehlo((tmp_path / "bool.mlir").read_text(), path=tmp_path / "bool.brtx")
    a, b = RNG.integers(0, 2, (2, 6, 5)).astype(bool)
    np.save(tmp_path / "a.npy", a)
    np.save(tmp_path / "b.npy", b)
    r = brt_run(build_dir, path, "--inputs", tmp_path / "a.npy", tmp_path / "b.npy", "--out", tmp_path / "out")
    assert r.returncode == 0, r.stderr
    for i, want in enumerate((jnp.logical_or(a, b), jnp.logical_and(a, b))):
        got = np.load(tmp_path / "out" / f"out{i}.npy")
        assert got.dtype == np.bool_
        np.testing.assert_array_equal(got, np.asarray(want))
