"""Complex numbers through the Python Session: complex64/complex128 arrays
bind without copies and come back as NumPy complex arrays; FFTs (a
spectrogram, a 2-D transform, irfft of odd and even lengths) and rotary
embeddings in complex form match NumPy's float64 FFT and complex arithmetic."""
import numpy as np
import pytest

import brt

jax = pytest.importorskip("jax")
jnp = jax.numpy
RNG = np.random.default_rng(64)


def complex_normal(*shape, dtype=np.complex64):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(dtype)


def run(tmp_path, fn, *args):
    with jax.enable_x64(True):  # complex128 and float64 stay what they are
        path = brt.compile(fn, *args, path=str(tmp_path / "f.brtx"))
    session = brt.Session(path)
    outputs = session.run(*args)
    return outputs if isinstance(outputs, (list, tuple)) else [outputs]


def rel_err(got, want):
    want = np.asarray(want, np.complex128)
    return np.abs(np.asarray(got, np.complex128) - want).max() / max(np.abs(want).max(), 1e-30)


def test_a_spectrogram_matches_numpy(tmp_path):
    frames = RNG.standard_normal((6, 256)).astype(np.float32)  # 6 frames of 256 samples
    window = np.hanning(256).astype(np.float32)

    def power_spectrum(x, w):
        spectrum = jnp.fft.rfft(x * w, axis=-1)
        return jnp.abs(spectrum) ** 2, spectrum

    power, spectrum = run(tmp_path, power_spectrum, frames, window)
    want = np.fft.rfft(frames.astype(np.float64) * window, axis=-1)
    assert spectrum.dtype == np.complex64 and spectrum.shape == (6, 129)
    assert rel_err(spectrum, want) < 1e-5
    assert rel_err(power, np.abs(want) ** 2) < 1e-5


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_two_dimensional_fft_and_its_inverse(tmp_path, dtype):
    z = complex_normal(3, 12, 10, dtype=dtype)

    def transforms(z):
        return jnp.fft.fft2(z), jnp.fft.ifft2(z)

    forward, inverse = run(tmp_path, transforms, z)
    tol = 1e-5 if dtype == np.complex64 else 1e-12
    assert forward.dtype == dtype
    assert rel_err(forward, np.fft.fft2(z.astype(np.complex128))) < tol
    assert rel_err(inverse, np.fft.ifft2(z.astype(np.complex128))) < tol


@pytest.mark.parametrize("n", [15, 16])
def test_irfft_of_odd_and_even_lengths(tmp_path, n):
    half = complex_normal(4, n // 2 + 1, dtype=np.complex128)
    (got,) = run(tmp_path, lambda h: jnp.fft.irfft(h, n=n), half)
    assert got.dtype == np.float64 and got.shape == (4, n)
    assert rel_err(got, np.fft.irfft(half, n=n)) < 1e-12


def test_rotary_embedding_in_complex_form(tmp_path):
    """Llama's rotary embedding: pairs of features as complex numbers, each
    rotated by its position's angle."""
    q = RNG.standard_normal((2, 8, 16)).astype(np.float32)  # batch, positions, features
    angles = np.outer(np.arange(8), 1.0 / 10000 ** (np.arange(0, 16, 2) / 16)).astype(np.float32)

    def rotate(q, angles):
        pairs = q.reshape(*q.shape[:-1], -1, 2)
        z = jax.lax.complex(pairs[..., 0], pairs[..., 1])
        rotated = z * jnp.exp(1j * angles.astype(jnp.complex64))
        return jnp.stack([rotated.real, rotated.imag], axis=-1).reshape(q.shape)

    (got,) = run(tmp_path, rotate, q, angles)
    z = q[..., 0::2].astype(np.float64) + 1j * q[..., 1::2]
    rotated = z * np.exp(1j * angles.astype(np.float64))
    want = np.stack([rotated.real, rotated.imag], axis=-1).reshape(q.shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_complex_arrays_bind_and_mismatches_name_the_dtype(tmp_path):
    z = complex_normal(5)
    session = brt.Session(brt.compile(lambda z: z * z.conj(), z, path=str(tmp_path / "f.brtx")))
    assert session.functions[0]["arguments"][0]["dtype"] == "c64"
    (got,) = session.run(z)
    np.testing.assert_allclose(got, np.abs(z.astype(np.complex128)) ** 2, rtol=1e-6)
    with pytest.raises(Exception, match="c64"):
        session.run(z.astype(np.complex128))


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_cholesky_adjoint_solve_and_lu_solve(tmp_path, dtype):
    """LAPACK's c/z routines: a Hermitian positive definite system solved
    through its Cholesky factor (L then L^H, an ADJOINT triangular solve),
    and a general complex system through LU, against NumPy in complex128."""
    import jax.scipy.linalg as jsl
    a = complex_normal(4, 6, 6, dtype=np.complex128)
    hermitian = (a @ np.conj(np.swapaxes(a, -1, -2)) + 6 * np.eye(6)).astype(dtype)
    general = complex_normal(4, 6, 6, dtype=dtype)
    rhs = complex_normal(4, 6, 2, dtype=dtype)

    def solves(h, g, b):
        factor = jnp.linalg.cholesky(h)
        y = jsl.solve_triangular(factor, b, lower=True)
        x = jsl.solve_triangular(factor, y, lower=True, trans="C")
        return factor, x, jnp.linalg.solve(g, b)

    factor, x, x_general = run(tmp_path, solves, hermitian, general, rhs)
    h64, g64, b64 = (v.astype(np.complex128) for v in (hermitian, general, rhs))
    tol = 1e-4 if dtype == np.complex64 else 1e-11
    assert rel_err(factor, np.linalg.cholesky(h64)) < tol
    assert rel_err(x, np.linalg.solve(h64, b64)) < tol
    assert rel_err(x_general, np.linalg.solve(g64, b64)) < tol
