"""fuse-softmax and fuse-layer-norm on square inputs, where a broadcast of
the reduced values along the wrong dim has the right type: JAX functions that
mix rows with columns (x - jnp.max(x, axis=1)[None, :]) must compile to what
they compute, not to a softmax or layer norm over the last axis; the real
ones still fuse. Each is checked pass by pass (--check-passes) and run
against NumPy in float64."""
import subprocess

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import brt
from brt.compiler import export_stablehlo

N = 6
RNG = np.random.default_rng(61)


def softmax_rows(x, xp, max_at, sum_at):
    """exp(x - max) / sum over axis 1, the max and the sum spread by max_at
    and sum_at (rows: [:, None], the softmax; columns: [None, :])."""
    e = xp.exp(x - max_at(xp.max(x, axis=1)))
    return e / sum_at(xp.sum(e, axis=1))


def layer_norm_rows(x, g, b, xp, mean_at, scale_at):
    """(x - mean) * rsqrt(var + eps) * g + b over axis 1, the mean spread by
    mean_at and g by scale_at (features: g[None, :], the layer norm)."""
    d = x - mean_at(xp.mean(x, axis=1))
    var = xp.mean(d * d, axis=1, keepdims=True)
    rsqrt = jax.lax.rsqrt if xp is jnp else (lambda v: 1 / np.sqrt(v))
    return d * rsqrt(var + 1e-5) * scale_at(g) + b


ROWS, COLUMNS = (lambda v: v[:, None]), (lambda v: v[None, :])

# name: (function of (xp, *args), its inputs, the fused op it compiles to or None)
CASES = {
    "softmax": (lambda xp, x: softmax_rows(x, xp, ROWS, ROWS), 1, "brt.softmax("),
    "softmax_max_by_column": (lambda xp, x: softmax_rows(x, xp, COLUMNS, ROWS), 1, None),
    "softmax_sum_by_column": (lambda xp, x: softmax_rows(x, xp, ROWS, COLUMNS), 1, None),
    "layer_norm": (lambda xp, x, g, b: layer_norm_rows(x, g, b, xp, ROWS, COLUMNS), 3, "brt.layer_norm("),
    "layer_norm_mean_by_column": (lambda xp, x, g, b: layer_norm_rows(x, g, b, xp, COLUMNS, COLUMNS), 3, None),
    "layer_norm_scale_by_row": (lambda xp, x, g, b: layer_norm_rows(x, g, b, xp, ROWS, ROWS), 3, None),
}


@pytest.mark.parametrize("name", CASES)
def test_square_broadcasts(have_compiler, tmp_path, name):
    f, arity, fused = CASES[name]
    args = [RNG.standard_normal((N, N) if i == 0 else (N,)).astype(np.float32) for i in range(arity)]
    src, out = tmp_path / f"{name}.mlir", tmp_path / f"{name}.brtx"
    src.write_text(export_stablehlo(lambda *a: f(jnp, *a), *[jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]))
    check = subprocess.run([brt.find_tool(), str(src), "-o", str(out), "--check-passes"],
                           capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    subprocess.run([brt.find_tool(), str(src), "-o", str(out), "--dump-after-each", str(tmp_path / "dump")],
                   check=True, capture_output=True)
    (program,) = (tmp_path / "dump").glob("*-fuse-layer-norm.mlir")
    text = program.read_text()
    if fused:
        assert fused in text
    else:
        assert "brt.softmax(" not in text and "brt.layer_norm(" not in text
    (got,) = brt.Session(str(out)).run(*args)
    want = f(np, *[a.astype(np.float64) for a in args])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
