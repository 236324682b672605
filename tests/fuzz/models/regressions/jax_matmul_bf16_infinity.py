"""brt differs from JAX: mismatch: a bfloat16 batched matmul [2, 2, 1] x
[2, 1, 4] whose lhs holds inf gives NaN in brt for the whole row, where the
products are +-inf (f32 and f16 are right, and so are K = 2 and 3, M = 1).

Found by `python3 tests/fuzz/models/fuzz.py --frontend jax --seed 100`
(program 100056299: a [2, 2, 1, 1] x [2, 1, 1, 4] bf16 matmul), minimized
by hand.

Cause (fixed): oneDNN 3.2's gemm:jit bf16 matmul kernel, which it takes for
some batched layouts (here the strides brt gives a size-1 contraction),
makes NaN of an infinite operand where K = 1 (K = 2 and 3 are right; not
traced inside oneDNN). The CPU provider runs those matmuls as its loop
(providers/cpu/dnnl_kernels.cc).
"""
FRONTEND = 'jax'
X64 = False  # jax_enable_x64
KINDS = ['matmul']  # the fuzzer's op kinds: a failure with these and STATUS is this one
STATUS = 'mismatch'
REASON = 'output 0: 4 of 16 elements differ first at (0, 0, 0): framework inf, brt nan'
PRECISION = 'bf16'  # the roughest float it computes in: the tolerance
INEXACT = ['v0']  # the values rounding may change
XFAIL = None  # the cause while brt has it; None once fixed

from numpy import inf, nan  # noqa: F401  (in INPUTS)
import jax
import jax.numpy as jnp
from jax import lax
f32, f16, bf16, f64 = jnp.float32, jnp.float16, jnp.bfloat16, jnp.float64
i32, i64, boolean = jnp.int32, jnp.int64, jnp.bool_


def program(x0, x1):
    v0 = jnp.matmul(x0, x1)
    return (v0,)


# (dtype, shape, values) per argument, in order.
INPUTS = [
    ('bf16', (2, 2, 1), [[[inf], [1.0]], [[1.0], [1.0]]]),  # x0
    ('bf16', (2, 1, 4), [[[2.0, 2.0, 2.0, 2.0]], [[2.0, 2.0, 2.0, 2.0]]]),  # x1
]
