"""Ops of issue 36, compiled by brt-compile, run by brt-run on the CPU provider
and on the emulated CUDA provider (its own kernels compiled for the host), and
compared with JAX on the CPU: stablehlo.popcnt (lax.population_count) and
stablehlo.count_leading_zeros (lax.clz) on
every integer type brt has, bit for bit; tan (stablehlo.tan from jnp.tan, and
chlo.tan, which JAX before StableHLO had tan wrote) in f32, f64, f16 and bf16
away from the poles and next to them, by relative error; and the cumulative
reductions JAX writes as a reduce_window (jnp.cumprod, lax.cumprod, cummax,
cummin), exact on integers and on products of powers of two."""
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

RNG = np.random.default_rng(3636)
TARGETS = ["cpu", "emulated_cuda"]


def integers(dtype, *shape):
    info = np.iinfo(dtype)
    x = RNG.integers(info.min, info.max, shape, dtype=dtype, endpoint=True).ravel()
    x[:6] = [0, 1, info.max, info.min, info.max // 2 + 1, dtype(-1) if info.min < 0 else 3]
    return x.reshape(shape)


def tan_inputs(dtype):
    """Values over (-10, 10) at least 0.05 from a pole, then values just
    beside each pole in the range: (k + 1/2) pi rounded to the type, and
    neighbours a few steps of the type's spacing away on either side."""
    x = RNG.uniform(-10, 10, 400)
    x = x[np.abs(np.remainder(x, np.pi) - np.pi / 2) > 0.05]
    poles = (np.arange(-3, 3) + 0.5) * np.pi
    near = [p + s * d for p in poles for s in (-1, 1) for d in (1e-3, 1e-2)]
    out = np.concatenate([x, poles, near]).astype(dtype)
    if dtype in (np.float32, np.float64):  # the representable neighbours of each pole
        steps = [np.nextafter(np.nextafter(p, np.inf), np.inf) for p in poles.astype(dtype)]
        steps += [np.nextafter(p, -np.inf) for p in poles.astype(dtype)]
        out = np.concatenate([out, np.array(steps, dtype)])
    return out


# Relative tolerance per dtype: a few units in the last place of the result
# (the 16-bit floats compute in f32 and round once, as XLA's CPU does).
TAN_RTOL = {np.float32: 2e-6, np.float64: 1e-14, np.float16: 1e-3, jnp.bfloat16: 8e-3}

POPCNT_CASES = [(f"{name}_{t.__name__}", fn, [integers(t, 5, 9)])
                for name, fn in (("popcnt", lax.population_count), ("clz", lax.clz))
                for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64)]

CUMULATIVE_CASES = [
    ("jnp_cumprod_f32", lambda x: jnp.cumprod(x, axis=1),
     [RNG.choice(np.array([-2, -1, -0.5, 0.5, 1, 2, 0.25, 4], np.float32), (4, 9))]),
    ("lax_cumprod_i32_wraps", lambda x: lax.cumprod(x, axis=0), [integers(np.int32, 12, 3)]),
    ("lax_cumprod_reverse_u8", lambda x: lax.cumprod(x, axis=1, reverse=True), [integers(np.uint8, 3, 10)]),
    ("jnp_cumprod_i64", lambda x: jnp.cumprod(x), [RNG.integers(-3, 4, (3, 5)).astype(np.int64)]),
    ("lax_cummax_f32", lambda x: lax.cummax(x, axis=1), [RNG.uniform(-4, 4, (3, 11)).astype(np.float32)]),
    ("lax_cummax_i32_reverse", lambda x: lax.cummax(x, axis=0, reverse=True), [integers(np.int32, 7, 4)]),
    ("lax_cummin_u32", lambda x: lax.cummin(x, axis=1), [integers(np.uint32, 2, 9)]),
]


def run(build_dir, tmp_path, target, name, compile_fn, args):
    """Compiles with compile_fn(device, path), runs brt-run on args, returns its outputs."""
    device, env = target_env(build_dir, target)
    return run_on_npy(build_dir, compile_fn(device, tmp_path / f"{name}.brtx"), args, tmp_path, device, env)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name,fn,args", POPCNT_CASES + CUMULATIVE_CASES,
                         ids=[c[0] for c in POPCNT_CASES + CUMULATIVE_CASES])
def test_exact_ops_match_jax(have_compiler, build_dir, tmp_path, target, name, fn, args):
    with jax.enable_x64(True):  # u64 and i64 stay 64-bit
        want = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
        got = run(build_dir, tmp_path, target, name,
                  lambda device, path: brt.compile(fn, *args, target=device, path=path), args)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, name
        np.testing.assert_array_equal(g, w, err_msg=name)


def check_tan(got, x, dtype):
    want = np.asarray(jax.jit(jnp.tan)(x))
    assert got.dtype == want.dtype and got.shape == want.shape
    g, w = got.astype(np.float64), want.astype(np.float64)
    np.testing.assert_allclose(g, w, rtol=TAN_RTOL[dtype], atol=0)
    if dtype in (np.float32, np.float64):  # beside a pole tan is huge, of either sign
        assert np.abs(w).max() > (1e6 if dtype == np.float32 else 1e14)


def io(x):
    """brt-run reads and writes no bf16 .npy: bf16 goes in and out as f32."""
    return x.astype(np.float32) if x.dtype == jnp.bfloat16 else x


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, jnp.bfloat16],
                         ids=["f32", "f64", "f16", "bf16"])
def test_tan_matches_jax(have_compiler, build_dir, tmp_path, target, dtype):
    x = tan_inputs(dtype)

    def fn(v):
        return jnp.tan(v.astype(dtype)).astype(v.dtype)
    with jax.enable_x64(True):
        got = run(build_dir, tmp_path, target, "tan",
                  lambda device, path: brt.compile(fn, io(x), target=device, path=path), [io(x)])
        check_tan(got[0].astype(dtype), x, dtype)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("dtype,mlir", [(np.float32, "f32"), (np.float64, "f64"), (np.float16, "f16"),
                                        (jnp.bfloat16, "bf16")], ids=["f32", "f64", "f16", "bf16"])
def test_chlo_tan_matches_jax(have_compiler, build_dir, tmp_path, target, dtype, mlir):
    """chlo.tan, written by hand as older JAX wrote it, imports as tan."""
    x = tan_inputs(dtype)
    t = f"tensor<{x.size}x{mlir}>"
    if dtype == jnp.bfloat16:
        f = f"tensor<{x.size}xf32>"
        body = (f'  %b = "stablehlo.convert"(%a) : ({f}) -> {t}\n'
                f'  %t = "chlo.tan"(%b) : ({t}) -> {t}\n'
                f'  %0 = "stablehlo.convert"(%t) : ({t}) -> {f}\n')
    else:
        f = t
        body = f'  %0 = "chlo.tan"(%a) : ({t}) -> {t}\n'
    text = ('"builtin.module"() ({\n"func.func"() <{function_type = '
            f'({f}) -> {f}, sym_name = "main"}}> ({{\n^bb0(%a: {f}):\n{body}'
            f'  "func.return"(%0) : ({f}) -> ()\n}}) : () -> ()\n}}) : () -> ()\n')
    with jax.enable_x64(True):
        got = run(build_dir, tmp_path, target, "chlo_tan",
                  lambda device, path: brt.compile_stablehlo(text, target=device, path=path), [io(x)])
        check_tan(got[0].astype(dtype), x, dtype)
