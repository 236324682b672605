"""brt differs from JAX: refused_at_load: brt-compile fuses an f64 matmul
and the tanh after it into brt.matmul, which the CPU provider runs in f32,
f16 and bf16 only, so the executable it wrote does not load.

Found while fixing issue 40 (the same shape as jax_softmax_f64.py, for the
epilogue fusion), written by hand.

Cause (fixed): compiler_bridge/passes/FuseEpilogues.cc fused an epilogue into
a dot_general or convolution of any float type; it now takes the target and,
for --target=cpu, leaves matmuls and convolutions of element types the CPU's
brt.matmul / brt.conv do not take unfused.
"""
FRONTEND = 'jax'
X64 = True  # jax_enable_x64
KINDS = ['matmul', 'tanh']  # the fuzzer's op kinds: a failure with these and STATUS is this one
STATUS = 'refused_at_load'
REASON = "PATH: function '...' op #N 'brt.matmul' (f64, f64) -> (f64) on cpu: no loaded provider can run it"
PRECISION = 'f64'  # the roughest float it computes in: the tolerance
INEXACT = ['v0', 'v1', 'v2']  # the values rounding may change
XFAIL = None  # the cause while brt has it; None once fixed

from numpy import inf, nan  # noqa: F401  (in INPUTS)
import jax
import jax.numpy as jnp
from jax import lax
f32, f16, bf16, f64 = jnp.float32, jnp.float16, jnp.bfloat16, jnp.float64
i32, i64, boolean = jnp.int32, jnp.int64, jnp.bool_


def program(x0, x1):
    v0 = jnp.matmul(x0, x1)
    v1 = jnp.tanh(v0)
    v2 = jax.nn.relu(jnp.matmul(x0, x1) + 1.0)
    return (v1, v2)


# (dtype, shape, values) per argument, in order.
INPUTS = [
    ('f64', (2, 3), [[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]]),  # x0
    ('f64', (3, 2), [[1.0, -0.5], [0.25, 2.0], [-1.5, 0.75]]),  # x1
]
