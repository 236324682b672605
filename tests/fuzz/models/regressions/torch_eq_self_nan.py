"""brt differs from PyTorch: mismatch: x == x is False where x is NaN;
brt's program says True everywhere.

Found by `python3 tests/fuzz/models/fuzz.py --frontend torch --seed 100`
(program 100000173: `fuzz.py --frontend torch --show 100000173`), then
minimized.

Cause (fixed): torch-mlir folds aten.eq.Tensor(x, x) to a constant true;
python/brt/torch_semantics.py now writes it as not (x != x), which it keeps.
"""
FRONTEND = 'torch'
X64 = False  # jax_enable_x64
KINDS = ['eq']  # the fuzzer's op kinds: a failure with these and STATUS is this one
STATUS = 'mismatch'
REASON = 'output 0: 1 of 3 elements differ first at (0,): framework np.False_, brt np.True_'
PRECISION = 'f32'  # the roughest float it computes in: the tolerance
INEXACT = []  # the values rounding may change
XFAIL = None  # the cause while brt has it; None once fixed

from numpy import inf, nan  # noqa: F401  (in INPUTS)
import torch
import torch.nn.functional as F
f32, f16, bf16, f64 = torch.float32, torch.float16, torch.bfloat16, torch.float64
i32, i64, boolean = torch.int32, torch.int64, torch.bool


class Program(torch.nn.Module):
    def forward(self, x0):
        v0 = x0 == x0
        return (v0,)


# (dtype, shape, values) per argument, in order.
INPUTS = [
    ('f32', (3,), [nan, -1.375, 0.375]),  # x0
]
