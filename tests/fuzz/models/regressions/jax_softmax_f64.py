"""brt differs from JAX: refused_at_load: brt-compile fuses a float64 softmax
into brt.softmax, which the CPU provider runs in f32 and bf16 only, so the
executable it wrote does not load.

Found by `python3 tests/fuzz/models/fuzz.py --frontend jax --seed 1` (a
softmax after a cast to f64), minimized by hand.

Cause (fixed in e1e6000): compiler_bridge/passes (fuse-softmax) makes
brt.softmax for any float type, and the CPU provider's brt.softmax takes f32
and bf16 only (docs/ops.md): the f64 softmax now stays unfused for
--target=cpu.
"""
FRONTEND = 'jax'
X64 = True  # jax_enable_x64
KINDS = ['softmax']  # the fuzzer's op kinds: a failure with these and STATUS is this one
STATUS = 'refused_at_load'
REASON = "PATH: function '...' op #N 'brt.softmax' (f64) -> (f64) on cpu: no loaded provider can run it (tried cpu: 'brt.softmax' "
PRECISION = 'f64'  # the roughest float it computes in: the tolerance
INEXACT = ['v0']  # the values rounding may change
XFAIL = None  # the cause while brt has it; None once fixed

from numpy import inf, nan  # noqa: F401  (in INPUTS)
import jax
import jax.numpy as jnp
from jax import lax
f32, f16, bf16, f64 = jnp.float32, jnp.float16, jnp.bfloat16, jnp.float64
i32, i64, boolean = jnp.int32, jnp.int64, jnp.bool_


def program(x0):
    v0 = jax.nn.softmax(x0, axis=-1)
    return (v0,)


# (dtype, shape, values) per argument, in order.
INPUTS = [
    ('f64', (1, 3), [[1.0, 2.0, 3.0]]),  # x0
]
