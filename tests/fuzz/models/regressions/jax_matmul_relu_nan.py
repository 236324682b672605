"""brt differs from JAX: mismatch: relu(x @ w) of a NaN product is NaN in
JAX (maximum(NaN, 0) propagates it), 0 in brt.

Found while fixing issue 40 (brt.matmul's relu epilogue on the oneDNN path),
written by hand.

Cause (fixed): compiler_bridge fuses maximum(x @ w, 0) into brt.matmul with
activation relu, which the CPU provider ran as oneDNN's eltwise_relu post-op
(vmaxps(x, 0), which gives 0 for NaN); the relu now runs after the oneDNN
call, keeping NaN (providers/cpu/dnnl_kernel.h), for brt.conv too.
"""
FRONTEND = 'jax'
X64 = False  # jax_enable_x64
KINDS = ['matmul', 'relu']  # the fuzzer's op kinds: a failure with these and STATUS is this one
STATUS = 'mismatch'
REASON = 'output 0: 3 of 6 elements differ first at (0, 0): framework np.float32(nan), brt np.float32(0.0)'
PRECISION = 'f32'  # the roughest float it computes in: the tolerance
INEXACT = ['v0', 'v1']  # the values rounding may change
XFAIL = None  # the cause while brt has it; None once fixed

from numpy import inf, nan  # noqa: F401  (in INPUTS)
import jax
import jax.numpy as jnp
from jax import lax
f32, f16, bf16, f64 = jnp.float32, jnp.float16, jnp.bfloat16, jnp.float64
i32, i64, boolean = jnp.int32, jnp.int64, jnp.bool_


def program(x0, x1):
    v0 = jnp.matmul(x0, x1)
    v1 = jax.nn.relu(v0)
    return (v1,)


# (dtype, shape, values) per argument, in order.
INPUTS = [
    ('f32', (2, 3), [[nan, -1.25, 2.0], [1.5, 0.25, -0.75]]),  # x0
    ('f32', (3, 3), [[1.0, -0.5, 2.0], [0.25, 2.0, -1.0], [-1.5, 0.75, 0.5]]),  # x1
]
