"""brt differs from PyTorch: mismatch: torch.roll by -3 along a dim of 2
rolls by 1 in PyTorch; brt's program leaves the tensor as it is.

Found by `python3 tests/fuzz/models/fuzz.py --frontend torch --seed 4`
(program 4000168: `fuzz.py --frontend torch --show 4000168`), then minimized.

Cause (fixed in cf610cb): torch-mlir lowers aten.roll with slices at the shift
as given, not taken modulo the dim's size: shift -3 of 2 becomes slice [2:2] ++
[0:2], no rotation (PyTorch rolls by -3 mod 2 = 1);
python/brt/torch_semantics.py now takes the shifts modulo the sizes before
torch-mlir sees them.
"""
FRONTEND = 'torch'
X64 = False  # jax_enable_x64
KINDS = ['roll']  # the fuzzer's op kinds: a failure with these and STATUS is this one
STATUS = 'mismatch'
REASON = 'output 0: 2 of 2 elements differ first at (0, 0): framework np.float16(-1.75), brt np.float16(1.625)'
PRECISION = 'f16'  # the roughest float it computes in: the tolerance
INEXACT = []  # the values rounding may change
XFAIL = None  # the cause while brt has it; None once fixed

from numpy import inf, nan  # noqa: F401  (in INPUTS)
import torch
import torch.nn.functional as F
f32, f16, bf16, f64 = torch.float32, torch.float16, torch.bfloat16, torch.float64
i32, i64, boolean = torch.int32, torch.int64, torch.bool


class Program(torch.nn.Module):
    def forward(self, x0):
        v0 = torch.roll(x0, -3, dims=-2)
        return (v0,)


# (dtype, shape, values) per argument, in order.
INPUTS = [
    ('f16', (2, 1), [[1.625], [-1.75]]),  # x0
]
