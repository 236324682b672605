"""brt differs from PyTorch: mismatch: torch.clamp(x, min=t) is NaN where t
is NaN; brt gives x.

Found by `python3 tests/fuzz/models/fuzz.py --frontend torch --seed 100`
(program 100001935: `fuzz.py --frontend torch --show 100001935`), then
minimized.

Cause (fixed): providers/cpu/fused_blocks.inc's ClampBlock was
std::min(std::max(x, lo), hi), which drops a NaN bound; it, CUDA's own clamp
kernel (which dropped a NaN x) and the generated CUDA kernels (fminf/fmaxf)
now all use the registry's NaN-propagating maximum and minimum.
"""
FRONTEND = 'torch'
X64 = False  # jax_enable_x64
KINDS = ['clamp']  # the fuzzer's op kinds: a failure with these and STATUS is this one
STATUS = 'mismatch'
REASON = 'output 0: 1 of 1 elements differ first at (0, 0): framework np.float32(nan), brt np.float32(-0.875)'
PRECISION = 'f32'  # the roughest float it computes in: the tolerance
INEXACT = []  # the values rounding may change
XFAIL = None  # the cause while brt has it; None once fixed

from numpy import inf, nan  # noqa: F401  (in INPUTS)
import torch
import torch.nn.functional as F
f32, f16, bf16, f64 = torch.float32, torch.float16, torch.bfloat16, torch.float64
i32, i64, boolean = torch.int32, torch.int64, torch.bool


class Program(torch.nn.Module):
    def forward(self, x0, x1):
        v0 = torch.clamp(x0, min=x1)
        return (v0,)


# (dtype, shape, values) per argument, in order.
INPUTS = [
    ('f32', (1, 1), [[-0.875]]),  # x0
    ('f32', (1, 1), [[nan]]),  # x1
]
