"""brt differs from PyTorch: mismatch: output 0: 1 of 20 elements differ first at (3, 3): framework -inf, brt inf

Found by `python3 tests/fuzz/models/fuzz.py --frontend torch --seed 20261126` (program 20261126000013: `fuzz.py --frontend torch --show 20261126000013`), then minimized.

Cause (fixed): torch-mlir writes aten.trunc as sign(x) * floor(|x|), with a
sign of 0 at zero, so trunc(-0.0) was +0 and its rsqrt +inf;
python/brt/torch_semantics.py writes trunc as ceil below zero, floor elsewhere.
"""
FRONTEND = 'torch'
X64 = False  # jax_enable_x64
KINDS = ['rsqrt', 'trunc']  # the fuzzer's op kinds: a failure with these and STATUS is this one
STATUS = 'mismatch'
REASON = 'output 0: 1 of 20 elements differ first at (3, 3): framework -inf, brt inf'
PRECISION = 'bf16'  # the roughest float it computes in: the tolerance
INEXACT = ['v1']  # the values rounding may change
XFAIL = None  # the cause while brt has it; None once fixed

from numpy import inf, nan  # noqa: F401  (in INPUTS)
import torch
import torch.nn.functional as F
f32, f16, bf16, f64 = torch.float32, torch.float16, torch.bfloat16, torch.float64
i32, i64, boolean = torch.int32, torch.int64, torch.bool


class Program(torch.nn.Module):
    def forward(self, x0):
        v0 = torch.trunc(x0)
        v1 = torch.rsqrt(v0)
        return (v1,)


# (dtype, shape, values) per argument, in order.
INPUTS = [
    ('bf16', (4, 5), [[2.0, -1.625, -1.0, -0.75, -1.5], [-0.875, -3.25, -0.375, 0.375, 0.375], [-3.25, -1.75, -1.125, 2.25, -3.375], [1.75, 2.25, -2.625, -0.0, 3.125]]),  # x0
]
