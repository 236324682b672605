"""Cholesky and triangular solves, compiled by brt-compile and run by brt-run
on the CPU provider: JAX's LAPACK custom_calls (lapack_{s,d}potrf_ffi,
lapack_{s,d}trsm_ffi) for f32 and f64 against JAX on the CPU, and
stablehlo.cholesky / stablehlo.triangular_solve (what JAX keeps for f16 and
bf16, and what other producers write) against a float64 reference. Errors are
bounded by the condition number of each problem times the dtype's epsilon."""
import pathlib
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
from jax import lax  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import brt  # noqa: E402
from conftest import run_on_npy  # noqa: E402

RNG = np.random.default_rng(36)
FLOATS = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "bf16": jnp.bfloat16}
MLIR_TYPES = {"f32": "f32", "f64": "f64", "f16": "f16", "bf16": "bf16"}


def eps(kind):
    return float(jnp.finfo(FLOATS[kind]).eps)


def spd(batch, n, dtype=np.float64):
    """Symmetric positive definite matrices A A^T + n I."""
    a = RNG.standard_normal((*batch, n, n))
    return (a @ np.swapaxes(a, -1, -2) + n * np.eye(n)).astype(dtype)


def io_type(kind):
    # brt-run reads no 16-bit .npy: f16 and bf16 come in and go out as f32.
    return np.float64 if kind == "f64" else np.float32


def rounded(x, kind):
    """x as the op sees it: rounded to the dtype, in float64."""
    return np.asarray(x).astype(FLOATS[kind]).astype(np.float64)


def assert_close(got, want, cond, kind, what):
    """|got - want| within the result's rounding plus n * cond * eps of the
    compute type (f32 for f16 and bf16), relative to the largest |want|; NaNs
    where want has them."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    assert got.shape == want.shape, what
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f"{what}: NaNs")
    ok = ~np.isnan(want)
    compute = kind if kind == "f64" else "f32"
    tol = (2 * eps(kind) + 8 * want.shape[-1] * np.max(cond) * eps(compute)) * np.abs(want[ok]).max(initial=1)
    err = np.abs(got[ok] - want[ok]).max(initial=0)
    assert err <= tol, f"{what}: error {err:.3g} above {tol:.3g}"


def compile_and_run(build_dir, tmp_path, name, fn, args):
    path = brt.compile(fn, *args, target="cpu", path=tmp_path / f"{name}.brtx")
    return run_on_npy(build_dir, path, args, tmp_path, "cpu")


def run_text(build_dir, tmp_path, name, text, args):
    path = brt.compile_stablehlo(text, target="cpu", path=tmp_path / f"{name}.brtx")
    return run_on_npy(build_dir, path, args, tmp_path, "cpu")


def hlo_module(kind, arg_shapes, result_shape, op):
    """A module of one op on operands of dtype `kind`, converted from and to
    the io type; `op` is its text with %a, %b the converted operands."""
    t = MLIR_TYPES[kind]
    io = "f64" if kind == "f64" else "f32"

    def tensor(shape, e):
        return f"tensor<{'x'.join(map(str, shape))}x{e}>"

    args = ", ".join(f"%arg{i}: {tensor(s, io)}" for i, s in enumerate(arg_shapes))
    converts = "\n".join(f'    %{n} = "stablehlo.convert"(%arg{i}) : ({tensor(s, io)}) -> {tensor(s, t)}'
                         for i, (n, s) in enumerate(zip("ab", arg_shapes)))
    inputs = ", ".join(tensor(s, t) for s in arg_shapes)
    return f'''"builtin.module"() ({{
  "func.func"() <{{function_type = ({", ".join(tensor(s, io) for s in arg_shapes)}) -> {tensor(result_shape, io)},
                  sym_name = "main"}}> ({{
  ^bb0({args}):
{converts}
    %r = {op} : ({inputs}) -> {tensor(result_shape, t)}
    %o = "stablehlo.convert"(%r) : ({tensor(result_shape, t)}) -> {tensor(result_shape, io)}
    "func.return"(%o) : ({tensor(result_shape, io)}) -> ()
  }}) : () -> ()
}}) : () -> ()
'''


# --- cholesky ----------------------------------------------------------------

@pytest.mark.parametrize("kind", ["f32", "f64"])
@pytest.mark.parametrize("batch", [(), (2, 3)], ids=["unbatched", "batched"])
@pytest.mark.parametrize("upper", [False, True], ids=["lower", "upper"])
def test_cholesky_matches_jax(have_compiler, build_dir, tmp_path, kind, batch, upper):
    """jnp.linalg.cholesky: lapack_?potrf_ffi, its info checked (NaN where it is not 0)."""
    a = spd(batch, 6, FLOATS[kind])
    fn = lambda a: jnp.linalg.cholesky(a, upper=upper)  # noqa: E731
    with jax.enable_x64(kind == "f64"):
        (got,) = compile_and_run(build_dir, tmp_path, "cholesky", fn, [a])
        want = np.asarray(jax.jit(fn)(a))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got == 0, want == 0, err_msg="the other triangle is zero")
    assert_close(got, want, np.linalg.cond(a.astype(np.float64)), kind, "cholesky")


@pytest.mark.parametrize("kind", ["f32", "f64"])
def test_cholesky_not_positive_definite_is_nan(have_compiler, build_dir, tmp_path, kind):
    """JAX selects NaN for a factorization whose info is not 0; the other
    matrices of the batch are factored."""
    a = spd((3,), 5, FLOATS[kind])
    a[1, 2, 2] = -40  # a negative leading minor of order 3
    a[2] = np.nan  # LAPACK stops at the NaN
    fn = jnp.linalg.cholesky
    with jax.enable_x64(kind == "f64"):
        (got,) = compile_and_run(build_dir, tmp_path, "not_pd", fn, [a])
        want = np.asarray(jax.jit(fn)(a))
    rows, cols = np.tril_indices(5)
    assert np.isnan(want[1:, rows, cols]).all() and not np.isnan(want[0]).any()
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[1:], want[1:])
    assert_close(got[0], want[0], np.linalg.cond(a[0].astype(np.float64)), kind, "cholesky")


def test_potrf_keeps_the_other_triangle(have_compiler, build_dir, tmp_path):
    """LAPACK's potrf leaves the other triangle as it was: with uplo 'U' (no
    JAX lowering asks for it, so the exported text is edited), JAX's masking
    of the upper triangle leaves the input's strict lower triangle and U's
    diagonal."""
    a = spd((2,), 5, np.float64)
    with jax.enable_x64(True):
        text = brt.export_stablehlo(lax.linalg.cholesky, a)
    assert text.count("uplo = 76 : ui8") == 1
    (got,) = run_text(build_dir, tmp_path, "potrf_upper", text.replace("uplo = 76 : ui8", "uplo = 85 : ui8"), [a])
    diagonal = np.diagonal(np.linalg.cholesky(a), axis1=-2, axis2=-1)
    want = np.tril(a, -1) + diagonal[..., None] * np.eye(5)
    assert_close(got, want, np.linalg.cond(a), "f64", "potrf uplo U")
    np.testing.assert_array_equal(np.tril(got, -1), np.tril(a, -1))


def test_potrf_info_used_otherwise_is_refused(have_compiler, tmp_path):
    """brt knows only whether info is 0: a program returning it is refused."""
    text = '''"builtin.module"() ({
  "func.func"() <{function_type = (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<3x3xf32>):
    %0:2 = "stablehlo.custom_call"(%arg0) <{call_target_name = "lapack_spotrf_ffi"}> {mhlo.backend_config = {uplo = 76 : ui8}} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<i32>)
    "func.return"(%0#0, %0#1) : (tensor<3x3xf32>, tensor<i32>) -> ()
  }) : () -> ()
}) : () -> ()
'''
    with pytest.raises(brt.CompileError, match=r"lapack_spotrf_ffi's info result is used other than compared with 0"):
        brt.compile_stablehlo(text, target="cpu", path=tmp_path / "info.brtx")


@pytest.mark.parametrize("kind", list(FLOATS))
@pytest.mark.parametrize("batch", [(), (3,)], ids=["unbatched", "batched"])
@pytest.mark.parametrize("lower", [True, False], ids=["lower", "upper"])
def test_stablehlo_cholesky(have_compiler, build_dir, tmp_path, kind, batch, lower):
    """stablehlo.cholesky reads only its triangle and zeroes the other; a
    matrix that is not positive definite gives NaN in the triangle."""
    n = 7
    a = spd((*batch, 2), n)
    a[..., 1, :, :][..., 3, 3] = -n  # the second matrix of each pair: not positive definite
    # The triangle not read holds garbage.
    a = np.where(np.tri(n, dtype=bool) if lower else np.tri(n, dtype=bool).T, a, 1e3).astype(io_type(kind))
    shape = (*batch, 2, n, n)
    text = hlo_module(kind, [shape], shape, f'"stablehlo.cholesky"(%a) <{{lower = {str(lower).lower()}}}>')
    (got,) = run_text(build_dir, tmp_path, "cholesky_op", text, [a])
    x = rounded(a, kind)
    sym = np.where(np.tri(n, dtype=bool), x, np.swapaxes(x, -1, -2)) if lower else \
        np.where(np.tri(n, dtype=bool).T, x, np.swapaxes(x, -1, -2))
    ok = sym[..., 0, :, :]
    want_ok = np.linalg.cholesky(ok)
    if not lower:
        want_ok = np.swapaxes(want_ok, -1, -2)
    other = ~(np.tri(n, dtype=bool) if lower else np.tri(n, dtype=bool).T)
    np.testing.assert_array_equal(got[..., other], 0, err_msg="the other triangle is zero")
    assert np.isnan(got[..., 1, :, :][..., ~other]).all(), "NaN where not positive definite"
    assert_close(got[..., 0, :, :], want_ok, np.linalg.cond(ok), kind, "cholesky")


# --- triangular_solve --------------------------------------------------------

def triangular_case(batch, k, m, n, lower, unit, left):
    """a with a well conditioned triangle and garbage elsewhere (and on the
    diagonal when unit), b, and the triangular matrix a stands for."""
    t = RNG.uniform(-1, 1, (*batch, k, k))
    diagonal = np.ones(k) if unit else RNG.uniform(2, 4, k) * RNG.choice([-1, 1], k)
    t = (np.tril(t, -1) if lower else np.triu(t, 1)) + diagonal * np.eye(k)
    keep = np.tri(k, k, -1, dtype=bool) if lower else np.tri(k, k, -1, dtype=bool).T
    a = np.where(keep, t, RNG.uniform(50, 100, (*batch, k, k)))
    if not unit:
        a = np.where(np.eye(k, dtype=bool), t, a)
    b = RNG.standard_normal((*batch, m, n))
    return a, b, t


def solve_reference(t, b, left, transpose):
    op = np.swapaxes(t, -1, -2) if transpose else t
    if left:
        return np.linalg.solve(op, b), np.linalg.cond(op)
    return np.swapaxes(np.linalg.solve(np.swapaxes(op, -1, -2), np.swapaxes(b, -1, -2)), -1, -2), np.linalg.cond(op)


SOLVES = [(left, lower, transpose, unit) for left in (True, False) for lower in (True, False)
          for transpose in (False, True) for unit in (False, True)]
SOLVE_IDS = ["-".join(name for name, on in zip(("left", "lower", "transpose", "unit"), case) if on) or "right-upper"
             for case in SOLVES]


@pytest.mark.parametrize("kind", list(FLOATS))
@pytest.mark.parametrize("left,lower,transpose,unit", SOLVES, ids=SOLVE_IDS)
def test_triangular_solve(have_compiler, build_dir, tmp_path, kind, left, lower, transpose, unit):
    """lax.linalg.triangular_solve, batched: LAPACK's trsm for f32 and f64
    (against JAX too), stablehlo.triangular_solve for f16 and bf16."""
    batch, m, n = (2, 3), 5, 4
    k = m if left else n
    a, b, t = triangular_case(batch, k, m, n, lower, unit, left)
    a, b = a.astype(io_type(kind)), b.astype(io_type(kind))
    dtype = FLOATS[kind]

    def fn(a, b):
        x = lax.linalg.triangular_solve(a.astype(dtype), b.astype(dtype), left_side=left, lower=lower,
                                        transpose_a=transpose, unit_diagonal=unit)
        return x.astype(b.dtype)

    with jax.enable_x64(kind == "f64"):
        text = brt.export_stablehlo(fn, a, b)
        assert ("lapack_" in text) == (kind in ("f32", "f64")), "JAX's lowering changed"
        (got,) = compile_and_run(build_dir, tmp_path, "trsm", fn, [a, b])
        if kind in ("f32", "f64"):
            want = np.asarray(jax.jit(fn)(a, b))
    # t as the op sees it: a's triangle, rounded.
    mask = np.tri(k, dtype=bool) if lower else np.tri(k, dtype=bool).T
    t = np.where(mask, rounded(a, kind), 0)
    if unit:
        t = np.where(np.eye(k, dtype=bool), 1.0, t)
    reference, cond = solve_reference(t, rounded(b, kind), left, transpose)
    assert_close(got, reference, cond, kind, "triangular_solve vs float64")
    if kind in ("f32", "f64"):
        assert_close(got, want, cond, kind, "triangular_solve vs JAX")


@pytest.mark.parametrize("kind", ["f32", "f64"])
@pytest.mark.parametrize("batch", [(), (3,)], ids=["unbatched", "batched"])
def test_cho_solve(have_compiler, build_dir, tmp_path, kind, batch):
    """jax.scipy.linalg.cho_factor then cho_solve: a potrf and two trsm."""
    a = spd(batch, 6, FLOATS[kind])
    b = RNG.standard_normal((*batch, 6, 3)).astype(FLOATS[kind])

    def fn(a, b):
        solve = lambda a, b: jsl.cho_solve(jsl.cho_factor(a, lower=True), b)  # noqa: E731
        return jax.vmap(solve)(a, b) if batch else solve(a, b)

    with jax.enable_x64(kind == "f64"):
        (got,) = compile_and_run(build_dir, tmp_path, "cho_solve", fn, [a, b])
        want = np.asarray(jax.jit(fn)(a, b))
    cond = np.linalg.cond(a.astype(np.float64))
    assert_close(got, want, cond, kind, "cho_solve vs JAX")
    assert_close(got, np.linalg.solve(a.astype(np.float64), b.astype(np.float64)), cond, kind, "cho_solve vs float64")


# --- lu ------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["f32", "f64"])
@pytest.mark.parametrize("shape", [(5, 5), (4, 6), (6, 4)], ids=["square", "wide", "tall"])
def test_lu_matches_jax(have_compiler, build_dir, tmp_path, kind, shape):
    """lax.linalg.lu (lapack_?getrf_ffi), batched, one matrix singular: the
    factors, the pivots and the permutation JAX makes of them."""
    a = RNG.standard_normal((3, *shape)).astype(FLOATS[kind])
    a[1, :, 2] = 0  # an exact zero pivot: LAPACK goes on
    with jax.enable_x64(kind == "f64"):
        got = compile_and_run(build_dir, tmp_path, "lu", lax.linalg.lu, [a])
        want = [np.asarray(w) for w in jax.jit(lax.linalg.lu)(a)]
    np.testing.assert_array_equal(got[1], want[1], err_msg="pivots")
    np.testing.assert_array_equal(got[2], want[2], err_msg="permutation")
    # P A = L U within the rounding of a stable factorization.
    k = min(shape)
    lower = np.tril(got[0][..., :k], -1) + np.eye(*shape[:1], k)
    upper = np.triu(got[0][..., :k, :])
    permuted = np.take_along_axis(a.astype(np.float64), got[2][..., None].astype(np.int64), axis=-2)
    assert_close(lower @ upper, permuted, 4, kind, "P A = L U")
    assert_close(got[0], want[0], 4 * np.linalg.cond(a[[0, 2]]).max(), kind, "lu vs JAX")


def test_getrf_info_is_lapacks(have_compiler, build_dir, tmp_path):
    """lapack_dgetrf_ffi's info is the first exact zero pivot (1-based), as
    LAPACK's (scipy's dgetrf here); 0 where there is none."""
    scipy_lapack = pytest.importorskip("scipy.linalg.lapack")
    a = RNG.standard_normal((4, 5, 5))
    a[1, :, 3] = 0  # elimination keeps a zero column zero: U(3, 3) is 0
    a[2, :, 1] = 0
    a[3] = 0
    text = '''"builtin.module"() ({
  "func.func"() <{function_type = (tensor<4x5x5xf64>) -> (tensor<4x5x5xf64>, tensor<4x5xi32>, tensor<4xi32>), sym_name = "main"}> ({
  ^bb0(%arg0: tensor<4x5x5xf64>):
    %0:3 = "stablehlo.custom_call"(%arg0) <{call_target_name = "lapack_dgetrf_ffi"}> : (tensor<4x5x5xf64>) -> (tensor<4x5x5xf64>, tensor<4x5xi32>, tensor<4xi32>)
    "func.return"(%0#0, %0#1, %0#2) : (tensor<4x5x5xf64>, tensor<4x5xi32>, tensor<4xi32>) -> ()
  }) : () -> ()
}) : () -> ()
'''
    lu, pivots, info = run_text(build_dir, tmp_path, "getrf", text, [a])
    for i in range(4):
        want_lu, want_pivots, want_info = scipy_lapack.dgetrf(a[i])
        assert info[i] == want_info, f"matrix {i}: info {info[i]}, LAPACK's {want_info}"
        np.testing.assert_array_equal(pivots[i], want_pivots + 1, err_msg=f"matrix {i}: pivots")
        assert_close(lu[i], want_lu, 10, "f64", f"matrix {i}: lu")
    np.testing.assert_array_equal(info, [0, 4, 2, 1])


@pytest.mark.parametrize("kind", ["f32", "f64"])
@pytest.mark.parametrize("batch", [(), (3,)], ids=["unbatched", "batched"])
def test_solve(have_compiler, build_dir, tmp_path, kind, batch):
    """jnp.linalg.solve: getrf, the permutation, two trsm."""
    a = (RNG.standard_normal((*batch, 6, 6)) + 3 * np.eye(6)).astype(FLOATS[kind])
    b = RNG.standard_normal((*batch, 6, 2)).astype(FLOATS[kind])
    with jax.enable_x64(kind == "f64"):
        (got,) = compile_and_run(build_dir, tmp_path, "solve", jnp.linalg.solve, [a, b])
        want = np.asarray(jax.jit(jnp.linalg.solve)(a, b))
    cond = np.linalg.cond(a.astype(np.float64))
    assert_close(got, want, cond, kind, "solve vs JAX")
    assert_close(got, np.linalg.solve(a.astype(np.float64), b.astype(np.float64)), cond, kind, "solve vs float64")
