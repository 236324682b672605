"""brt-run's .npy outputs against a reference's, shared by test_jax.py and
cuda_cases.py (which runs on a GPU machine where neither brt's Python
extension nor test_jax.py's imports are available): NumPy only."""
import pathlib

import numpy as np


def check_outputs(expected, out_dir):
    """brt-run's outputs in out_dir against JAX's: exact for integers and
    booleans, relative error at most 1e-4 for floats; NaN and infinities
    where JAX has them, and nowhere else."""
    for i, e in enumerate(expected):
        out = np.load(pathlib.Path(out_dir) / f"out{i}.npy")
        assert out.shape == e.shape and out.dtype == e.dtype, (out.shape, out.dtype, e.shape, e.dtype)
        if e.dtype.kind in "biu":
            np.testing.assert_array_equal(out, e)
        else:
            ref = e.astype(np.float64)
            finite = np.isfinite(ref)
            np.testing.assert_array_equal(out[~finite], ref[~finite], err_msg=f"output {i}: non-finite values")
            err = np.linalg.norm(out[finite] - ref[finite]) / max(np.linalg.norm(ref[finite]), 1e-30)
            assert err <= 1e-4, f"output {i}: relative error {err:.2e}"
