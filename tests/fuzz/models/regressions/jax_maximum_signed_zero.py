"""brt differs from JAX: mismatch: maximum(+0.0, -0.0) is +0.0 (IEEE-754
maximum, as StableHLO and XLA have it) and minimum(-0.0, +0.0) is -0.0; brt
returns its second operand when the two compare equal, so the zero's sign
depends on the operands' order (1 / maximum(0.0, -0.0) is -inf in brt).

Found by hand while minimizing `fuzz.py --frontend torch` program 900009
(relu of -0.0, then rsqrt), which led to maximum; JAX's form, minimized.

Cause (fixed): include/brt/ops.def's maximum and minimum returned their
second operand when the two compare equal; they now order -0 below +0.
"""
FRONTEND = 'jax'
X64 = False  # jax_enable_x64
KINDS = ['maximum']  # the fuzzer's op kinds: a failure with these and STATUS is this one
STATUS = 'mismatch'
REASON = 'output 0: 1 of 2 elements differ first at (1,): framework np.float32(inf), brt np.float32(-inf)'
PRECISION = 'f32'  # the roughest float it computes in: the tolerance
INEXACT = ['v1', 'v3']  # the values rounding may change
XFAIL = None  # the cause while brt has it; None once fixed

from numpy import inf, nan  # noqa: F401  (in INPUTS)
import jax
import jax.numpy as jnp
from jax import lax
f32, f16, bf16, f64 = jnp.float32, jnp.float16, jnp.bfloat16, jnp.float64
i32, i64, boolean = jnp.int32, jnp.int64, jnp.bool_


def program(x0, x1):
    v0 = jnp.maximum(x0, x1)
    v1 = jnp.reciprocal(v0)
    v2 = jnp.minimum(x0, x1)
    v3 = jnp.reciprocal(v2)
    return (v1, v3)


# (dtype, shape, values) per argument, in order.
INPUTS = [
    ('f32', (2,), [-0.0, 0.0]),  # x0
    ('f32', (2,), [0.0, -0.0]),  # x1
]
