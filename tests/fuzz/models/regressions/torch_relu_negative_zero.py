"""brt differs from PyTorch: mismatch: torch.relu(-0.0) is -0.0 in PyTorch
(clamp_min keeps x where it is not below 0), +0.0 in brt's program, so
rsqrt of it is -inf against +inf and tanh -1 against 1.

Found by `fuzz.py --frontend torch` (program 900009: `fuzz.py --frontend
torch --show 900009`), then minimized.

Cause (fixed): torch-mlir lowers aten.relu to stablehlo.maximum(x, 0);
python/brt/torch_semantics.py now writes relu as where(x < 0, 0, x), and
fuse-epilogues fuses that form into a matmul or convolution as the
relu_select activation, which keeps -0 and NaN.
"""
FRONTEND = 'torch'
X64 = False  # jax_enable_x64
KINDS = ['relu']  # the fuzzer's op kinds: a failure with these and STATUS is this one
STATUS = 'mismatch'
REASON = 'output 0: 1 of 18 elements differ first at (5, 1): framework np.float16(-1.0), brt np.float16(1.0)'
PRECISION = 'f16'  # the roughest float it computes in: the tolerance
INEXACT = ['v1', 'v2']  # the values rounding may change
XFAIL = None  # the cause while brt has it; None once fixed

from numpy import inf, nan  # noqa: F401  (in INPUTS)
import torch
import torch.nn.functional as F
f32, f16, bf16, f64 = torch.float32, torch.float16, torch.bfloat16, torch.float64
i32, i64, boolean = torch.int32, torch.int64, torch.bool


class Program(torch.nn.Module):
    def forward(self, x0):
        v0 = torch.relu(x0)
        v1 = torch.rsqrt(v0)
        v2 = torch.tanh(v1)
        return (v2,)


# (dtype, shape, values) per argument, in order.
INPUTS = [
    ('f16', (6, 3), [[1.75, 0.625, 1.875], [1.25, 1.625, 3.625], [-3.75, 1.25, -1.125], [2.25, -4.5, 1.0], [3.125, 4.625, 0.75], [0.25, -0.0, -0.5]]),  # x0
]
