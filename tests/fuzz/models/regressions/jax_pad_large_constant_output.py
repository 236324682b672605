"""brt differs from JAX: refused_at_load: an output that constant folding
turns into a constant of more than 256 bytes is written as a weight, and the
loader refuses an output no op produces.

Found by `python3 tests/fuzz/models/fuzz.py --frontend jax --seed 2`
(program 2000189: x0[..., x2] with an empty index, padded to 72 elements,
which JAX and then brt-compile fold), minimized by hand.

Cause (fixed in 7f9b072): compiler_bridge/serialize/Serialize.cc stores a
constant over kInlineConstantBytes (256) as a weight even where it is a
function's output, and core/format.cc refuses an output that no op defines:
such an output now stays a constant op.
"""
FRONTEND = 'jax'
X64 = False  # jax_enable_x64
KINDS = ['pad']  # the fuzzer's op kinds: a failure with these and STATUS is this one
STATUS = 'refused_at_load'
REASON = "PATH: function '...' output 'resultN': no op produces its value"
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
    v0 = x0 + 1
    v1 = jnp.pad(jnp.array([1.0, 2.0], f32), (0, 70))  # folded: 72 floats, 288 bytes
    return (v0, v1)


# (dtype, shape, values) per argument, in order.
INPUTS = [
    ('f32', (2,), [1.5, -2.0]),  # x0
]
