"""brt differs from JAX: mismatch: lax.clamp(lo, x, hi) with lo NaN is NaN
(StableHLO's clamp is min(max(x, lo), hi), and its max and min propagate
NaN); brt gives x where a bound is a constant, which fuses the clamp.

Found through `fuzz.py --frontend torch --seed 100` (program 100001935:
torch.clamp(x, min=t) with t NaN, which torch-mlir writes as
stablehlo.clamp(t, x, +inf)); JAX's form, minimized by hand.

Cause (fixed): providers/cpu/fused_blocks.inc's ClampBlock was
std::min(std::max(x, lo), hi), which drops a NaN bound; it, CUDA's own clamp
kernel (which dropped a NaN x) and the generated CUDA kernels (fminf/fmaxf)
now all use the registry's NaN-propagating maximum and minimum.
"""
FRONTEND = 'jax'
X64 = False  # jax_enable_x64
KINDS = ['clamp']  # the fuzzer's op kinds: a failure with these and STATUS is this one
STATUS = 'mismatch'
REASON = 'output 0: 1 of 2 elements differ first at (0,): framework np.float32(nan), brt np.float32(-0.875)'
PRECISION = 'f32'  # the roughest float it computes in: the tolerance
INEXACT = []  # the values rounding may change
XFAIL = None  # the cause while brt has it; None once fixed

from numpy import inf, nan  # noqa: F401  (in INPUTS)
import jax
import jax.numpy as jnp
from jax import lax
f32, f16, bf16, f64 = jnp.float32, jnp.float16, jnp.bfloat16, jnp.float64
i32, i64, boolean = jnp.int32, jnp.int64, jnp.bool_


def program(x0, x1):
    v0 = lax.clamp(x1, x0, jnp.full_like(x0, 5.0))
    return (v0,)


# (dtype, shape, values) per argument, in order.
INPUTS = [
    ('f32', (2,), [-0.875, 1.0]),  # x0
    ('f32', (2,), [nan, 0.0]),  # x1
]
