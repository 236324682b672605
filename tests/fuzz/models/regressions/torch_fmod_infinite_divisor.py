"""brt differs from PyTorch: mismatch: torch.fmod(0.75, -inf) is 0.75
(C's fmod); brt gives NaN.

Found by `python3 tests/fuzz/models/fuzz.py --frontend torch --seed 1`
(program 1000092: `fuzz.py --frontend torch --show 1000092`), then minimized.

Cause (fixed in cf610cb): torch-mlir lowers aten.fmod as a - sign(a/b) *
floor(|a/b|) * b (no stablehlo.remainder), which is 0 * inf = NaN for an
infinite divisor; python/brt/torch_semantics.py now turns fmod into StableHLO's
remainder (C's fmod, as PyTorch eager) before torch-mlir sees it.
"""
FRONTEND = 'torch'
X64 = False  # jax_enable_x64
KINDS = ['fmod']  # the fuzzer's op kinds: a failure with these and STATUS is this one
STATUS = 'mismatch'
REASON = 'output 0: 1 of 2 elements differ first at (0,): framework np.float32(0.75), brt np.float32(nan)'
PRECISION = 'f32'  # the roughest float it computes in: the tolerance
INEXACT = ['v0']  # the values rounding may change
XFAIL = None  # the cause while brt has it; None once fixed

from numpy import inf, nan  # noqa: F401  (in INPUTS)
import torch
import torch.nn.functional as F
f32, f16, bf16, f64 = torch.float32, torch.float16, torch.bfloat16, torch.float64
i32, i64, boolean = torch.int32, torch.int64, torch.bool


class Program(torch.nn.Module):
    def forward(self, x0, x1):
        v0 = torch.fmod(x0, x1)
        return (v0,)


# (dtype, shape, values) per argument, in order.
INPUTS = [
    ('f32', (2,), [0.75, 0.5]),  # x0
    ('f32', (2,), [-inf, 2.875]),  # x1
]
