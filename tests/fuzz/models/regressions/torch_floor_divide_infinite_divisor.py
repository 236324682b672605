"""brt differs from PyTorch: mismatch: -2.875 // inf is -1.0 in PyTorch (and
Python: the floor of the true quotient, -0.0..., is taken after fmod's
correction); brt gives -0.0.

Found by `python3 tests/fuzz/models/fuzz.py --frontend torch --seed 1`
(program 1000098: `fuzz.py --frontend torch --show 1000098`), then minimized.

Cause (fixed in cf610cb): torch-mlir lowers float aten.floor_divide as floor(a
/ b); PyTorch eager computes (a - fmod(a, b)) / b and subtracts 1 where fmod's
sign differs from b's (Python's //), which differs for an infinite divisor (and
where a / b rounds up to an integer); python/brt/torch_semantics.py now
computes it as eager does.
"""
FRONTEND = 'torch'
X64 = False  # jax_enable_x64
KINDS = ['floor_divide']  # the fuzzer's op kinds: a failure with these and STATUS is this one
STATUS = 'mismatch'
REASON = 'output 0: 1 of 2 elements differ first at (0, 0): framework np.float32(-1.0), brt np.float32(-0.0)'
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
        v0 = x0 // x1
        return (v0,)


# (dtype, shape, values) per argument, in order.
INPUTS = [
    ('f32', (2, 1), [[-2.875], [1.875]]),  # x0
    ('f32', (2, 1), [[inf], [0.0]]),  # x1
]
