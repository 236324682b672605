"""reduce_precision, a registry op added by its ops.def row alone on the
compiler's side, compiled by brt-compile and run by brt-run, against JAX."""
import pathlib
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import brt  # noqa: E402
from conftest import brt_run  # noqa: E402

RNG = np.random.default_rng(35)


def test_reduce_precision_bit_exact(have_compiler, build_dir, tmp_path):
    """lax.reduce_precision bit for bit against JAX (XLA): rounding to nearest
    even, overflow to inf, flushing below the narrower exponent range, NaN
    payloads, on random values across the whole exponent range and the
    special ones, for f32, f16 and bf16 operands (f16 and bf16 converted
    from f32 in the program and their results back, exactly: brt has no
    16-bit integers to bitcast them to, so their NaNs are compared as NaN)."""
    import ml_dtypes
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 65504.0, 65520.0, 1e-5, -1e-5, 1 + 2.0**-8, 1 + 3 * 2.0**-8,
                3e38, 1e-40, -2.5]
    for dtype, widths in [(np.float32, [(5, 10), (8, 7), (4, 3), (8, 0), (2, 1), (11, 52)]),
                          (np.float16, [(4, 3), (5, 2), (3, 0)]),
                          (ml_dtypes.bfloat16, [(5, 3), (8, 2)])]:
        info = ml_dtypes.finfo(dtype)
        exponents = RNG.uniform(np.log2(float(info.smallest_subnormal)), np.log2(float(info.max)), 500)
        values = np.exp2(exponents) * RNG.choice([-1.0, 1.0], 500)
        x = np.concatenate([np.array(specials), values]).astype(np.float32)
        x.view(np.uint32)[0] |= np.uint32(1)  # the smallest positive denormal, in place of 0.0 (-0.0 stays)
        x.view(np.uint32)[4] |= np.uint32(5 << 16)  # a NaN with a payload that survives narrowing

        def fn(x, dtype=dtype, widths=widths):
            narrow = x.astype(dtype)
            return tuple(jax.lax.reduce_precision(narrow, exponent_bits=e, mantissa_bits=m).astype(jnp.float32)
                         for e, m in widths)

        name = np.dtype(dtype).name
        path = brt.compile(fn, x, path=tmp_path / f"{name}.brtx")
        np.save(tmp_path / f"{name}.npy", x)
        r = brt_run(build_dir, path, "--inputs", tmp_path / f"{name}.npy", "--out", tmp_path / name)
        assert r.returncode == 0, r.stderr
        for i, (want, (e, m)) in enumerate(zip(fn(jnp.asarray(x)), widths)):
            got, want = np.load(tmp_path / name / f"out{i}.npy"), np.asarray(want)
            what = f"{name} to {e} exponent and {m} mantissa bits"
            nan = np.isnan(want) if dtype != np.float32 else np.zeros(want.shape, bool)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=what)
            np.testing.assert_array_equal(got.view(np.uint32)[~nan], want.view(np.uint32)[~nan], err_msg=what)
