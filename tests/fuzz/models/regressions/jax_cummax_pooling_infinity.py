"""brt differs from JAX: mismatch: lax.cummax of -inf is -inf and of NaN is
NaN; brt gives -3.4028235e+38 (the lowest float) for both where the array
has 3 or more dims.

Found by `python3 tests/fuzz/models/fuzz.py --frontend jax --seed 100`
(programs 100057579 and 100058156), then minimized.

Cause (fixed): oneDNN's max pooling starts from the lowest finite float
(its padding too) and its max drops NaN; the CPU provider now runs a max
reduce_window whose input holds -inf or NaN, or with a window wholly in the
padding, as its loop (providers/cpu/reduce.cc, dnnl_elementwise.cc).
"""
FRONTEND = 'jax'
X64 = False  # jax_enable_x64
KINDS = ['cumsum']  # the fuzzer's op kinds: a failure with these and STATUS is this one
STATUS = 'mismatch'
REASON = 'output 0: 2 of 2 elements differ first at (0, 0, 0): framework np.float32(-inf), brt np.float32(-3.4028235e+38)'
PRECISION = 'f32'  # the roughest float it computes in: the tolerance
INEXACT = []  # the values rounding may change
XFAIL = None  # the cause while brt has it; None once fixed

from numpy import inf, nan  # noqa: F401  (in INPUTS)
import jax
import jax.numpy as jnp
from jax import lax
f32, f16, bf16, f64 = jnp.float32, jnp.float16, jnp.bfloat16, jnp.float64
i32, i64, boolean = jnp.int32, jnp.int64, jnp.bool_


def program(x0):
    v0 = lax.cummax(x0, axis=0)
    return (v0,)


# (dtype, shape, values) per argument, in order.
INPUTS = [
    ('f32', (1, 1, 2), [[[-inf, nan]]]),  # x0
]
