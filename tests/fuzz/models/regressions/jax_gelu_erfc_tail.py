"""brt differs from JAX: mismatch: 1 / gelu(-5.25) in bf16 is -2.49e6 in
JAX, -6.39e6 in brt: gelu's erfc far in the tail has no relative precision
left, and the reciprocal shows it.

Found by `python3 tests/fuzz/models/fuzz.py --frontend jax --seed 100`
(program 100002042: `fuzz.py --frontend jax --show 100002042`), then
minimized.

Cause (fixed with the erfc op): compiler_bridge/import/Import.cc imported
chlo.erfc as 1 - erf(x), which has no relative precision left where erfc(x)
is tiny (x > ~3.5 in f32), so gelu(x) for x < -5 was off by a factor;
`erfc` is now an op of its own (include/brt/ops.def), computed as C's erfc.
"""
FRONTEND = 'jax'
X64 = True  # jax_enable_x64
KINDS = ['gelu']  # the fuzzer's op kinds: a failure with these and STATUS is this one
STATUS = 'mismatch'
REASON = 'output 0: 1 of 1 elements differ first at (0,): framework -2.49037e+06, brt -6.38976e+06'
PRECISION = 'bf16'  # the roughest float it computes in: the tolerance
INEXACT = ['v0', 'v1']  # the values rounding may change
XFAIL = None  # the cause while brt has it; None once fixed

from numpy import inf, nan  # noqa: F401  (in INPUTS)
import jax
import jax.numpy as jnp
from jax import lax
f32, f16, bf16, f64 = jnp.float32, jnp.float16, jnp.bfloat16, jnp.float64
i32, i64, boolean = jnp.int32, jnp.int64, jnp.bool_


def program(x0):
    v0 = jax.nn.gelu(x0, approximate=False)
    v1 = jnp.reciprocal(v0)
    return (v1,)


# (dtype, shape, values) per argument, in order.
INPUTS = [
    ('bf16', (1,), [-5.25]),  # x0
]
