"""Linear algebra compiled by brt-compile and run by brt-run on the CPU
provider: JAX's LAPACK custom_calls (lapack_{s,d}potrf_ffi,
lapack_{s,d}trsm_ffi, lapack_{s,d}getrf_ffi) for f32 and f64 against JAX on
the CPU, and stablehlo.cholesky / stablehlo.triangular_solve (what JAX keeps
for f16 and bf16, and what other producers write) against a float64
reference; the decompositions (eigh, svd, qr, householder_product, eig,
hessenberg, tridiagonal, tridiagonal_solve) on f32, f64, c64 and c128, each
checked by its defining property in float64 and against JAX. Errors are
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


# --- decompositions ------------------------------------------------------------

LAPACK_KINDS = {"f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}


def random_matrices(shape, kind):
    x = RNG.standard_normal(shape)
    if kind.startswith("c"):
        x = x + 1j * RNG.standard_normal(shape)
    return x.astype(LAPACK_KINDS[kind])


def adjoint(x):
    return np.conj(np.swapaxes(x, -1, -2))


def run_with_jax(build_dir, tmp_path, name, fn, args, kind):
    """brt's outputs and JAX's, float64 or complex128."""
    with jax.enable_x64(kind in ("f64", "c128")):
        got = compile_and_run(build_dir, tmp_path, name, fn, args)
        want = jax.jit(fn)(*args)
    want = want if isinstance(want, (tuple, list)) else [want]
    assert [g.dtype for g in got] == [np.asarray(w).dtype for w in want], name
    return [g.astype(np.complex128) for g in got], [np.asarray(w).astype(np.complex128) for w in want]


def assert_small(residual, scale, cond, kind, what):
    """|residual| within 16 n cond eps of `scale` (n: the matrices' order)."""
    n = max(residual.shape[-2:]) if residual.ndim > 1 else residual.shape[-1]
    tol = 16 * n * np.max(cond) * np.finfo(LAPACK_KINDS[kind]).eps * scale
    err = np.abs(residual).max(initial=0)
    assert err <= tol, f"{kind} {what}: error {err:.3g} above {tol:.3g}"


def assert_orthonormal_columns(q, kind, what):
    k = q.shape[-1]
    assert_small(adjoint(q) @ q - np.eye(k), 1, 1, kind, what + ": Q^H Q = I")


KINDS_BATCHES = [(kind, batch) for kind in LAPACK_KINDS for batch in [(), (2, 3)]]
KB_IDS = [f"{kind}-{'batched' if batch else 'unbatched'}" for kind, batch in KINDS_BATCHES]


@pytest.mark.parametrize("kind,batch", KINDS_BATCHES, ids=KB_IDS)
@pytest.mark.parametrize("lower", [True, False], ids=["lower", "upper"])
def test_eigh(have_compiler, build_dir, tmp_path, kind, batch, lower):
    """lax.linalg.eigh (lapack_?syevd_ffi, ?heevd for complex) reading one
    triangle (garbage in the other): H V = V diag(w), V unitary, w ascending
    and LAPACK's (numpy's eigvalsh, and JAX's)."""
    n = 6
    a = random_matrices((*batch, n, n), kind)
    triangle = np.tri(n, dtype=bool) if lower else np.tri(n, dtype=bool).T
    h = np.where(triangle, a, adjoint(a)).astype(np.complex128)
    h[..., range(n), range(n)] = h[..., range(n), range(n)].real
    a = np.where(triangle, h if kind.startswith("c") else h.real, 1e3).astype(a.dtype)
    fn = lambda a: lax.linalg.eigh(a, lower=lower, symmetrize_input=False)  # noqa: E731
    (v, w), (_, want_w) = run_with_jax(build_dir, tmp_path, "eigh", fn, [a], kind)
    scale = np.abs(h).max()
    assert np.all(np.diff(w.real, axis=-1) >= 0), "ascending"
    assert_orthonormal_columns(v, kind, "eigh")
    assert_small(h @ v - v * w[..., None, :], scale, 1, kind, "H V = V diag(w)")
    assert_small(w - np.linalg.eigvalsh(h, UPLO="L"), scale, 1, kind, "w vs numpy")
    assert_small(w - want_w, scale, 1, kind, "w vs JAX")


SVD_SHAPES = [(5, 5), (6, 3), (3, 6)]


@pytest.mark.parametrize("kind,batch", KINDS_BATCHES, ids=KB_IDS)
@pytest.mark.parametrize("shape", SVD_SHAPES, ids=["square", "tall", "wide"])
@pytest.mark.parametrize("mode", ["full", "reduced", "values"])
def test_svd(have_compiler, build_dir, tmp_path, kind, batch, shape, mode):
    """lax.linalg.svd (lapack_?gesdd_ffi, modes A, S and N): A = U diag(s)
    V^H, U and V with orthonormal columns, s descending and LAPACK's."""
    a = random_matrices((*batch, *shape), kind)
    k = min(shape)
    x = a.astype(np.complex128)
    scale = np.linalg.norm(x, 2, axis=(-2, -1)).max()
    if mode == "values":
        fn = lambda a: lax.linalg.svd(a, compute_uv=False)  # noqa: E731
        (s,), (want_s,) = run_with_jax(build_dir, tmp_path, "svd", fn, [a], kind)
    else:
        fn = lambda a: lax.linalg.svd(a, full_matrices=mode == "full")  # noqa: E731
        (u, s, vt), (_, want_s, _) = run_with_jax(build_dir, tmp_path, "svd", fn, [a], kind)
        rows = shape if mode == "full" else (k, k)
        assert u.shape[-2:] == (shape[0], rows[0]) and vt.shape[-2:] == (rows[1], shape[1])
        assert_orthonormal_columns(u, kind, "svd U")
        assert_orthonormal_columns(adjoint(vt), kind, "svd V")
        assert_small(u[..., :k] * s[..., None, :] @ vt[..., :k, :] - x, scale, 1, kind, "A = U S V^H")
    assert np.all(np.diff(s.real, axis=-1) <= 0), "descending"
    assert_small(s - np.linalg.svd(x, compute_uv=False), scale, 1, kind, "s vs numpy")
    assert_small(s - want_s, scale, 1, kind, "s vs JAX")


@pytest.mark.parametrize("kind,batch", KINDS_BATCHES, ids=KB_IDS)
@pytest.mark.parametrize("shape", SVD_SHAPES, ids=["square", "tall", "wide"])
@pytest.mark.parametrize("full", [True, False], ids=["full", "reduced"])
def test_qr(have_compiler, build_dir, tmp_path, kind, batch, shape, full):
    """lax.linalg.qr (lapack_?geqrf_ffi, then ?orgqr/?ungqr): A = Q R, Q with
    orthonormal columns, R upper triangular; both JAX's (LAPACK's signs)."""
    a = random_matrices((*batch, *shape), kind)
    fn = lambda a: lax.linalg.qr(a, full_matrices=full)  # noqa: E731
    (q, r), (want_q, want_r) = run_with_jax(build_dir, tmp_path, "qr", fn, [a], kind)
    x = a.astype(np.complex128)
    scale = np.abs(x).max()
    assert_orthonormal_columns(q, kind, "qr")
    np.testing.assert_array_equal(np.tril(r, -1), 0, err_msg="R is upper triangular")
    assert_small(q @ r - x, scale, 1, kind, "A = Q R")
    cond = np.linalg.cond(x)
    assert_small(r - want_r, scale, cond, kind, "R vs JAX")
    assert_small(q[..., :min(shape)] - want_q[..., :min(shape)], 1, cond, kind, "Q vs JAX")


def reflectors_product(a, taus, first_row):
    """The product of I - tau_i v_i v_i^H, v_i zero above row first_row + i,
    1 there, and a's column i below (LAPACK's storage of Householder vectors)."""
    n = a.shape[-2]
    product = np.broadcast_to(np.eye(n, dtype=np.complex128), a.shape[:-2] + (n, n)).copy()
    for i in range(taus.shape[-1]):
        row = np.arange(n)
        v = np.where(row < first_row + i, 0, np.where(row == first_row + i, 1, a[..., :, i]))[..., None]
        product = product @ (np.eye(n) - taus[..., i, None, None] * v @ adjoint(v))
    return product


@pytest.mark.parametrize("kind", list(LAPACK_KINDS))
def test_householder_product(have_compiler, build_dir, tmp_path, kind):
    """lax.linalg.householder_product (?orgqr/?ungqr) of geqrf's reflectors,
    fewer than the columns: the product of I - tau v v^H, in float64."""
    m, n, k = 6, 4, 3
    a = random_matrices((2, m, n), kind)
    taus = RNG.uniform(1, 2, (2, k))
    if kind.startswith("c"):
        taus = taus * np.exp(1j * RNG.uniform(0, 2 * np.pi, (2, k)))
    taus = taus.astype(a.dtype)
    (q,), (want,) = run_with_jax(build_dir, tmp_path, "householder", lax.linalg.householder_product, [a, taus], kind)
    product = reflectors_product(a, taus, 0)
    assert_small(q - product[..., :n], np.abs(product).max(), 1, kind, "householder_product vs float64")
    assert_small(q - want, np.abs(product).max(), 1, kind, "householder_product vs JAX")


@pytest.mark.parametrize("kind,batch", KINDS_BATCHES, ids=KB_IDS)
def test_eig(have_compiler, build_dir, tmp_path, kind, batch):
    """lax.linalg.eig (lapack_?geev_ffi; a real matrix's complex pairs
    unpacked): A vr = vr diag(w), vl^H A = diag(w) vl^H, unit columns, w as
    JAX's."""
    n = 5
    a = random_matrices((*batch, n, n), kind)
    (w, vl, vr), (want_w, _, _) = run_with_jax(build_dir, tmp_path, "eig", lax.linalg.eig, [a], kind)
    x = a.astype(np.complex128)
    scale = np.linalg.norm(x, 2, axis=(-2, -1)).max()
    # Eigenvectors are as well conditioned as the eigenvector matrix.
    cond = np.linalg.cond(vr)
    assert_small(x @ vr - vr * w[..., None, :], scale, cond, kind, "A vr = vr diag(w)")
    assert_small(adjoint(vl) @ x - w[..., :, None] * adjoint(vl), scale, cond, kind, "vl^H A = w vl^H")
    assert_small(np.linalg.norm(vr, axis=-2) - 1, 1, 1, kind, "unit right eigenvectors")
    assert_small(w - want_w, scale, cond, kind, "w vs JAX")


@pytest.mark.parametrize("kind,batch", KINDS_BATCHES, ids=KB_IDS)
def test_hessenberg(have_compiler, build_dir, tmp_path, kind, batch):
    """lax.linalg.hessenberg (lapack_?gehrd_ffi): Q^H A Q is the upper
    Hessenberg part, Q the reflectors below the subdiagonal."""
    n = 6
    a = random_matrices((*batch, n, n), kind)
    (h, taus), (want_h, want_taus) = run_with_jax(build_dir, tmp_path, "hessenberg", lax.linalg.hessenberg, [a], kind)
    q = reflectors_product(h, taus, 1)
    x = a.astype(np.complex128)
    scale = np.abs(x).max()
    assert_orthonormal_columns(q, kind, "hessenberg Q")
    assert_small(adjoint(q) @ x @ q - np.triu(h, -1), scale, 1, kind, "Q^H A Q = H")
    assert_small(h - want_h, scale, 1, kind, "vs JAX")
    assert_small(taus - want_taus, 1, 1, kind, "taus vs JAX")


@pytest.mark.parametrize("kind,batch", KINDS_BATCHES, ids=KB_IDS)
@pytest.mark.parametrize("lower", [True, False], ids=["lower", "upper"])
def test_tridiagonal(have_compiler, build_dir, tmp_path, kind, batch, lower):
    """lax.linalg.tridiagonal (lapack_?sytrd_ffi, ?hetrd): the tridiagonal
    matrix of d and e has the eigenvalues of A; d, e and the reflectors as
    JAX's."""
    n = 6
    a = random_matrices((*batch, n, n), kind)
    a = (a + adjoint(a)) / 2
    fn = lambda a: lax.linalg.tridiagonal(a, lower=lower)  # noqa: E731
    got, want = run_with_jax(build_dir, tmp_path, "tridiagonal", fn, [a], kind)
    _, d, e, _ = got
    t = np.stack([np.diag(dd) + np.diag(ee, 1) + np.diag(ee, -1)
                  for dd, ee in zip(d.real.reshape(-1, n), e.real.reshape(-1, n - 1))]).reshape(*batch, n, n)
    x = a.astype(np.complex128)
    scale = np.abs(x).max()
    assert_small(np.linalg.eigvalsh(t) - np.linalg.eigvalsh(x), scale, 1, kind, "eigenvalues of T")
    for g, w, what in zip(got, want, ["a", "d", "e", "taus"]):
        assert_small(g - w, scale, 1, kind, f"{what} vs JAX")


@pytest.mark.parametrize("kind,batch", KINDS_BATCHES, ids=KB_IDS)
def test_tridiagonal_solve(have_compiler, build_dir, tmp_path, kind, batch):
    """lax.linalg.tridiagonal_solve (lapack_?gtsv_ffi): T x = b, dl[0] and
    du[-1] outside T; a singular T gives NaN, as JAX's info check."""
    m = 6
    dl, du = random_matrices((*batch, 2, m), kind), random_matrices((*batch, 2, m), kind)
    d = random_matrices((*batch, 2, m), kind) + 4
    b = random_matrices((*batch, 2, m, 3), kind)
    d[..., 1, :], dl[..., 1, :], du[..., 1, :] = 0, 0, 0  # the second system of each pair: singular
    (x,), (want,) = run_with_jax(build_dir, tmp_path, "gtsv", lax.linalg.tridiagonal_solve, [dl, d, du, b], kind)
    t = (d[..., :, None] * np.eye(m) + dl[..., :, None] * np.eye(m, k=-1) + du[..., :, None] * np.eye(m, k=1))
    t = t.astype(np.complex128)[..., 0, :, :]
    assert np.isnan(x[..., 1, :, :]).all() and np.isnan(want[..., 1, :, :]).all(), "singular: NaN"
    cond = np.linalg.cond(t)
    assert_small(x[..., 0, :, :] - np.linalg.solve(t, b[..., 0, :, :].astype(np.complex128)), 1, cond, kind,
                 "T x = b")
    assert_small(x[..., 0, :, :] - want[..., 0, :, :], 1, cond, kind, "x vs JAX")
