"""brt differs from JAX: mismatch: a matmul with a contraction of size 1
whose product is -0.0 is -0.0 in XLA and +0.0 in brt (and in PyTorch and
NumPy), so atan2(v, v) is -pi against 0. Not brt's bug: kept so that the
fuzzer knows it.

Found by `python3 tests/fuzz/models/fuzz.py --frontend jax --seed 100`
(program 100043659: `fuzz.py --frontend jax --show 100043659`), then
minimized.
"""
FRONTEND = 'jax'
X64 = True  # jax_enable_x64
KINDS = ['atan2', 'matmul']  # the fuzzer's op kinds: a failure with these and STATUS is this one
STATUS = 'mismatch'
REASON = 'output 0: 4 of 20 elements differ first at (3, 0): framework np.float32(-3.1415927), brt np.float32(0.0)'
PRECISION = 'f32'  # the roughest float it computes in: the tolerance
INEXACT = ['v0', 'v1']  # the values rounding may change
XFAIL = ("not brt's bug, XLA's choice: XLA's dot of one term is that product (-0.0); brt sums from 0.0 "
         "(+0.0), as PyTorch's and NumPy's matmul do")

from numpy import inf, nan  # noqa: F401  (in INPUTS)
import jax
import jax.numpy as jnp
from jax import lax
f32, f16, bf16, f64 = jnp.float32, jnp.float16, jnp.bfloat16, jnp.float64
i32, i64, boolean = jnp.int32, jnp.int64, jnp.bool_


def program(x0, x1):
    v0 = jnp.matmul(x0, x1)
    v1 = jnp.arctan2(v0, v0)
    return (v1,)


# (dtype, shape, values) per argument, in order.
INPUTS = [
    ('f32', (4, 1), [[-1.125], [-1.625], [-0.5], [-0.0]]),  # x0
    ('f32', (1, 5), [[0.125, 2.125, -1.625, 0.875, 0.625]]),  # x1
]
