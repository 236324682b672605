"""brt differs from JAX: mismatch: the mean over a dim of size 1 of -0.0 is
-0.0 in XLA and +0.0 in brt (and in PyTorch and NumPy), so rsqrt of it is
-inf against +inf. Not brt's bug: kept so that the fuzzer knows it.

Found by `python3 tests/fuzz/models/fuzz.py --frontend jax --seed 100`
(program 100056640: `fuzz.py --frontend jax --show 100056640`), then
minimized.
"""
FRONTEND = 'jax'
X64 = True  # jax_enable_x64
KINDS = ['mean', 'rsqrt']  # the fuzzer's op kinds: a failure with these and STATUS is this one
STATUS = 'mismatch'
REASON = 'output 0: 1 of 72 elements differ first at (3, 3, 2): framework np.float32(-inf), brt np.float32(inf)'
PRECISION = 'f32'  # the roughest float it computes in: the tolerance
INEXACT = ['v0', 'v1']  # the values rounding may change
XFAIL = ("not brt's bug, XLA's choice: XLA's reduce of one element returns that element (-0.0), where "
         "StableHLO's reduce adds the init value 0.0 (+0.0), as brt does and PyTorch and NumPy sums give")

from numpy import inf, nan  # noqa: F401  (in INPUTS)
import jax
import jax.numpy as jnp
from jax import lax
f32, f16, bf16, f64 = jnp.float32, jnp.float16, jnp.bfloat16, jnp.float64
i32, i64, boolean = jnp.int32, jnp.int64, jnp.bool_


def program(x0):
    v0 = jnp.mean(x0, axis=(-4,), keepdims=False)
    v1 = lax.rsqrt(v0)
    return (v1,)


# (dtype, shape, values) per argument, in order.
INPUTS = [
    ('f32', (1, 4, 6, 3), [[[[0.625, 2.125, -3.75], [1.25, -4.25, -0.625], [1.75, -1.5, -1.125], [3.875, -0.375, -0.25], [2.25, -0.5, -0.625], [-0.625, -4.375, 1.375]], [[-0.375, 3.5, 0.875], [4.5, 3.875, 2.875], [0.375, -0.5, 0.875], [1.125, 1.875, -1.0], [-5.375, 0.125, -1.0], [0.5, -2.875, -3.25]], [[-0.875, -3.875, 1.125], [-3.0, 4.5, -0.25], [0.75, 0.125, 2.125], [-0.25, 2.0, -1.0], [-0.5, -0.5, -1.25], [-2.125, -2.375, -0.875]], [[0.625, -0.375, -2.75], [4.5, -2.125, -1.625], [1.0, -2.0, -1.5], [-2.25, 2.875, -0.0], [-0.125, 3.125, 0.125], [-2.5, -3.5, -0.875]]]]),  # x0
]
