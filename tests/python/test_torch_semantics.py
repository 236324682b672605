"""ATen ops whose PyTorch meaning differs from the StableHLO op torch-mlir
lowers them to, at their edges: negative and boundary indices, remainder and
division with mixed signs, shifts, NaN. Each case runs through
brt.compile_torch and is compared with eager PyTorch on the same inputs
(exactly for integers, bit for bit where PyTorch's float result is exact)."""
import numpy as np
import pytest

from conftest import require  # noqa: E402

torch = require("torch")
require("torch_mlir")
import brt  # noqa: E402

F = torch.nn.functional


class Lambda(torch.nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def run_both(fn, *args):
    """(brt's result, eager PyTorch's) of fn(*args), as NumPy arrays."""
    module = Lambda(fn).eval()
    session = brt.Session(brt.compile_torch(module, *args))
    got = session.run(*[as_numpy(a) for a in args])[0]
    with torch.no_grad():
        want = module(*args).numpy()
    return got, want


def as_numpy(tensor):
    """bfloat16 as ml_dtypes' (NumPy has none)."""
    if tensor.dtype == torch.bfloat16:
        import ml_dtypes
        return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return tensor.numpy()


def assert_matches(fn, *args):
    got, want = run_both(fn, *args)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


rng = torch.Generator().manual_seed(40)


def randn(*shape):
    return torch.randn(*shape, generator=rng)


def test_falcon_minimal_case_negative_constant_index():
    """Falcon's fused-QKV split: qkv[..., [-2], :] read position 0."""
    x = randn(2, 3, 5, 4)
    assert_matches(lambda x: x[..., [-2], :] * 1.0, x)
    assert_matches(lambda x: x[..., [-1], :] + x[..., [-5], :], x)


# Index tensors reaching every valid position: the boundaries -n, -1, 0,
# n-1, and in between.
INDEX = torch.tensor([-5, -1, 0, 4, 2, -3])


@pytest.mark.parametrize("name,fn,args", [
    ("index rows", lambda x, i: x[i], (randn(5, 3), INDEX)),
    ("index middle dim", lambda x, i: x[:, i, :], (randn(2, 5, 3), INDEX)),
    ("index two tensors", lambda x, i, j: x[i, j], (randn(5, 4), INDEX, torch.tensor([-4, 3, -1, 0, 1, 2]))),
    ("index 2-d index tensor", lambda x, i: x[:, i], (randn(3, 5), INDEX.view(2, 3))),
    ("index int32 index", lambda x, i: x[i], (randn(5, 3), INDEX.to(torch.int32))),
    ("take", lambda x, i: torch.take(x, i), (randn(3, 4), torch.tensor([-12, -1, 0, 11, 5]))),
    ("take_along_dim", lambda x, i: torch.take_along_dim(x, i, 1), (randn(4, 5), INDEX[:4].view(4, 1).expand(4, 2).contiguous())),
    ("index_put", lambda x, i, v: x.index_put((i,), v), (randn(5, 3), torch.tensor([-1, 0, -5]), randn(3, 3))),
    ("index_put accumulate", lambda x, i, v: x.index_put((i,), v, accumulate=True),
     (randn(5, 3), INDEX, randn(6, 3))),
    ("setitem", lambda x, i, v: x.clone().index_put_((i,), v), (randn(5, 3), torch.tensor([-2, 1]), randn(2, 3))),
    ("index_fill", lambda x, i: x.index_fill(1, i, -7.0), (randn(2, 5), INDEX)),
])
def test_negative_and_boundary_indices(name, fn, args):
    got, want = run_both(fn, *args)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name,fn,args", [
    # PyTorch refuses negative indices here; every valid one, boundaries included.
    ("index_select", lambda x, i: torch.index_select(x, 1, i), (randn(3, 5), torch.tensor([4, 0, 2, 4]))),
    ("gather", lambda x, i: torch.gather(x, -1, i), (randn(3, 5), torch.tensor([[4, 0], [0, 0], [2, 4]]))),
    ("scatter", lambda x, i, v: x.scatter(1, i, v), (randn(3, 5), torch.tensor([[4, 0], [1, 3], [2, 0]]), randn(3, 2))),
    ("scatter_add", lambda x, i, v: x.scatter_add(0, i, v), (randn(3, 5), torch.tensor([[2, 0, 0, 1, 2]]), randn(1, 5))),
    ("embedding", lambda w, i: F.embedding(i, w), (randn(6, 3), torch.tensor([[5, 0], [3, 5]]))),
    ("flip", lambda x: x.flip(0, 1), (randn(3, 5),)),
    ("roll negative shift", lambda x: x.roll(-2, 1), (randn(3, 5),)),
    ("select and slice from the end", lambda x: x[-1, -4:-1] + x[0, -3:], (randn(3, 5),)),
])
def test_boundary_indices(name, fn, args):
    got, want = run_both(fn, *args)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name,fn,args,bad,culprit", [
    ("index past the end", lambda x, i: x[i], (randn(5, 3), torch.tensor([1, -1])), [1, 5], 5),
    ("index before the start", lambda x, i: x[:, i], (randn(3, 5), torch.tensor([1, -1])), [-6, 0], -6),
    ("index_put", lambda x, i, v: x.index_put((i,), v), (randn(5, 3), torch.tensor([1, -1]), randn(2, 3)), [7, 0], 7),
    ("index_select", lambda x, i: torch.index_select(x, 0, i), (randn(5, 3), torch.tensor([1, 4])), [-1, 0], -1),
    ("gather", lambda x, i: torch.gather(x, 1, i), (randn(2, 3), torch.tensor([[0, 2], [1, 1]])), [[0, 3], [1, 1]],
     3),
    ("scatter_add", lambda x, i, v: x.scatter_add(0, i, v), (randn(2, 3), torch.tensor([[0, 1, 1]]), randn(1, 3)),
     [[0, 2, 1]], 2),
    ("embedding", lambda w, i: F.embedding(i, w), (randn(6, 3), torch.tensor([5, 0])), [6, 0], 6),
])
def test_out_of_range_indices_fail_the_run(name, fn, args, bad, culprit):
    """PyTorch refuses an index out of range (and index_select's, gather's,
    scatter's and embedding's negative ones); StableHLO would clamp (gather)
    or drop (scatter) it. The run fails, naming the index, the range of
    valid indices and the Python line the op came from."""
    session = brt.Session(brt.compile_torch(Lambda(fn), *args))
    arrays = [a.numpy() for a in args]
    arrays[1] = np.array(bad, arrays[1].dtype)
    with pytest.raises(ValueError, match=rf"brt.check_indices.*index {culprit} .* is not in \[0, \d+\): "
                       r"(gather|scatter) at .*test_torch_semantics.py:\d+"):
        session.run(*arrays)


SIGNED = torch.tensor([-7, -3, 3, 7, 0, -5, 5, 9])
DIVISORS = torch.tensor([5, 5, -5, -5, 3, -5, 5, -2])


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float32])
def test_remainder_takes_the_divisors_sign(dtype):
    a, b = SIGNED.to(dtype), DIVISORS.to(dtype)
    assert_matches(lambda a, b: a % b, a, b)
    assert_matches(lambda a: a % 3, a)
    assert_matches(lambda a: torch.remainder(a, -4), a)
    assert_matches(lambda b: 7 % b, b)
    assert_matches(lambda a, b: torch.fmod(a, b), a, b)


def test_remainder_float_edges():
    a = torch.tensor([-0.0, 0.0, 1e-30, -1e-30, 5.5, -5.5, float("inf"), float("nan"), 2.0, -2.0])
    b = torch.tensor([3.0, -3.0, 2.0, 2.0, -2.0, 2.0, 2.0, 2.0, float("inf"), float("inf")])
    got, want = run_both(lambda a, b: a % b, a, b)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64, torch.float32])
@pytest.mark.parametrize("mode", [None, "floor", "trunc"])
def test_division_rounding_modes(dtype, mode):
    a, b = SIGNED.to(dtype), DIVISORS.to(dtype)
    if mode is None and not dtype.is_floating_point:
        return  # true division of integers is a float result: covered by float32
    got, want = run_both(lambda a, b: torch.div(a, b, rounding_mode=mode), a, b)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    if not dtype.is_floating_point:
        assert_matches(lambda a, b: a // b, a, b)


@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_shifts(dtype):
    a = torch.tensor([-9, -1, 1, 7, 2**20, -(2**20), 3, -3]).to(dtype)
    s = torch.tensor([0, 1, 2, 3, 4, 5, 31, 40]).to(dtype)
    assert_matches(lambda a, s: a << s, a, s)
    assert_matches(lambda a, s: a >> s, a, s)
    assert_matches(lambda a: (a >> 2) + (a << 3), a)
    assert_matches(lambda a, s: torch.bitwise_right_shift(a, s) - torch.bitwise_left_shift(a, 1), a, s)
    assert_matches(lambda s: (1 << s) + (-64 >> s), s)


def test_nan_propagation():
    nan = float("nan")
    a = torch.tensor([nan, 1.0, -1.0, nan, 0.0, 2.0])
    b = torch.tensor([1.0, nan, nan, nan, -0.0, 1.0])
    for fn in (torch.maximum, torch.minimum, lambda a, b: torch.clamp(a, -0.5, 0.5) + b,
               lambda a, b: F.relu(a) * b, lambda a, b: torch.where(a > b, a, b),
               lambda a, b: (a == a) | (b != b)):
        got, want = run_both(fn, a, b)
        np.testing.assert_array_equal(got, want)
    x = torch.tensor([[1.0, nan, 3.0], [2.0, 0.0, -1.0]])
    for fn in (lambda x: x.amax(1), lambda x: x.amin(0), lambda x: x.sum(1), lambda x: x.argmax(1),
               lambda x: x.argmin(1), lambda x: torch.softmax(x, 1)):
        got, want = run_both(fn, x)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("attention", [
    {"multi_query": True},
    {"new_decoder_architecture": True, "num_kv_heads": 2},
    {"multi_query": False, "alibi": True},
])
def test_falcon_matches_pytorch(attention):
    """Hugging Face's Falcon splits its fused QKV with qkv[..., [-2], :]:
    with one or grouped KV heads brt's logits were 58-64% off (rel L2)."""
    transformers = require("transformers")
    torch.manual_seed(7)
    config = transformers.FalconConfig(vocab_size=256, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                                       **attention)
    model = transformers.FalconForCausalLM(config).eval()

    class Logits(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = model

        def forward(self, ids):
            return self.model(input_ids=ids, use_cache=False).logits

    ids = torch.randint(0, 256, (2, 16), generator=rng)
    got, want = run_both(Logits().forward, ids)
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-5


def test_index_checks_are_for_the_cpu(tmp_path):
    """brt.check_indices runs on the host: --target=cuda refuses it (it
    would copy every gather's indices across and stop CUDA graphs), and
    compile_torch leaves it out there."""
    import subprocess

    r = subprocess.run([brt.find_tool(), str(tmp_path / "none.mlir"), "-o", str(tmp_path / "x.brtx"), "--target=cuda",
                        "--check-indices"], capture_output=True, text=True)
    assert r.returncode == 2 and "--check-indices is for --target=cpu" in r.stderr


INF = float("inf")
DIVIDENDS = torch.tensor([-2.875, 1.875, 7.0, -7.0, 0.0, -0.0, 5.5, 1e-30, -3.0, 0.3, 0.75, 1.0])
FLOAT_DIVISORS = torch.tensor([INF, 0.0, 2.0, 2.0, -3.0, 3.0, -INF, 1.0, 0.1, 0.1, -INF, 0.0])


@pytest.mark.parametrize("name,fn", [
    ("floor_divide", lambda a, b: a // b),
    ("floor_divide by a scalar", lambda a, b: a // -0.1 + a // 2.5),
    ("fmod", lambda a, b: torch.fmod(a, b)),
    ("fmod by a scalar", lambda a, b: torch.fmod(a, -0.7)),
    ("remainder", lambda a, b: a % b),
])
def test_float_division_edges_bit_for_bit(name, fn):
    """Infinite and zero divisors, quotients that round up to an integer,
    signed zeros: torch-mlir's floor(a / b) and a - trunc(a / b) * b differ
    from PyTorch's fmod-based results there (-2.875 // inf, fmod(0.75, -inf))."""
    got, want = run_both(fn, DIVIDENDS, FLOAT_DIVISORS)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("name,fn,args", [
    ("int tensor // float", lambda a: a // 2.5, (torch.tensor([1, -2, 3, 4, 5, -6]),)),
    ("float // int tensor", lambda x, k: x // k, (randn(6) * 5, torch.tensor([2, -3, 1, 4, -1, 7]))),
    ("number // tensor", lambda x: 2.5 // x, (randn(6) * 3,)),
])
def test_floor_division_of_mixed_dtypes(name, fn, args):
    """Where the operands' dtypes differ, torch-mlir's own floor(a / b) stays
    (the fmod form once crashed torch-mlir here)."""
    got, want = run_both(fn, *args)
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_trunc_keeps_the_sign_of_zero(dtype):
    """trunc(-0.0) is -0.0 (rsqrt shows it: -inf); torch-mlir's form gave +0
    (found by the model fuzzer, CI's seed)."""
    x = torch.tensor([-0.0, -0.75, 0.5, 2.5, -3.5, float("nan")], dtype=dtype)
    got, want = run_both(lambda x: torch.rsqrt(torch.trunc(x)).float(), x)
    np.testing.assert_allclose(got, want, rtol=1e-2)  # bf16 may skip a rounding when fused
    signed = ~np.isnan(want)  # a NaN's sign means nothing
    np.testing.assert_array_equal(np.signbit(got[signed]), np.signbit(want[signed]))


def test_roll_by_more_than_the_size():
    x = randn(2, 3)
    assert_matches(lambda x: x.roll((-3, 5), (0, 1)) + x.roll(-7, 1), x)


@pytest.mark.parametrize("fill", [2.5, -2.5, 0.0])
def test_comparisons_of_constants_with_scalars(fill):
    """torch-mlir folded a float constant compared with an int scalar to the
    inverted result (full_like(x, 2.5) < 0 was true), and crashed on an
    integer constant compared with a float scalar."""
    x, ints = randn(4), torch.tensor([1, -2, 3, 4])

    def fn(x, ints):
        c, k = torch.full_like(x, fill), torch.full_like(ints, int(fill))
        return ((c < 0).float() + (c >= 1).float() * 2 + (c == -3).float() * 4 + (k < 2.5).float() * 8
                + (k != -2.5).float() * 16 + x)
    got, want = run_both(fn, x, ints)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_relu_keeps_the_sign_of_zero(dtype):
    """relu(-0.0) is -0.0 and relu(NaN) NaN (rsqrt shows the zero's sign:
    -inf); torch-mlir's maximum(x, 0) gave +0 (found by the model fuzzer)."""
    x = torch.tensor([-0.0, 0.0, -0.75, 0.5, -float("inf"), float("inf"), float("nan")], dtype=dtype)
    got, want = run_both(lambda x: torch.rsqrt(torch.relu(x)).float(), x)
    np.testing.assert_allclose(got, want, rtol=1e-2)  # bf16 may skip a rounding when fused
    signed = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[signed]), np.signbit(want[signed]))


def _compiled_program(module, *args):
    """module's compiled program for the CPU as text (brt-compile's last pass
    dump)."""
    import pathlib
    import subprocess
    import tempfile

    from brt.compiler import find_tool
    from brt.torch_frontend import export_torch_stablehlo
    with tempfile.TemporaryDirectory() as tmp:
        source = f"{tmp}/model.mlir"
        with open(source, "w") as f:
            f.write(export_torch_stablehlo(module, *args))
        subprocess.run([find_tool("brt-compile"), source, "-o", f"{tmp}/model.brtx", "--dump-after-each",
                        f"{tmp}/passes"], check=True, capture_output=True)
        return sorted(pathlib.Path(tmp, "passes").glob("*.mlir"))[-1].read_text()


def _fused_activations(module, *args):
    """The activation of every brt.matmul and brt.conv in module's compiled
    program, in order."""
    import re
    # An activation of "none", the default, is left out of the printed form.
    fused = [line for line in _compiled_program(module, *args).splitlines()
             if re.search(r"= brt\.(?:matmul|conv)\(", line)]
    return [m.group(1) if (m := re.search(r'activation = "(\w+)"', line)) else "none" for line in fused]


def test_relu_after_linear_and_conv_still_fuses_and_keeps_nan():
    """The where(x < 0, 0, x) form of relu still fuses into a convolution
    and a linear layer (as relu_select), and keeps NaN there. (The linear
    layer has no bias: fold-constants makes a [batch, out] constant of a
    small one's broadcast, which fuse-epilogues does not take as a bias.)"""
    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.fc = torch.nn.Linear(8 * 6 * 6, 10, bias=False)

        def forward(self, x):
            return torch.relu(self.fc(torch.relu(self.conv(x)).flatten(1)))

    torch.manual_seed(40)
    net = Net().eval()
    x = randn(2, 3, 6, 6)
    x[1, :, 2, 3] = float("nan")
    assert _fused_activations(net, x) == ["relu_select", "relu_select"]
    got, want = run_both(net, x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert np.isnan(got[1]).all() and np.isnan(want[1]).all()


def test_resnet18_convolutions_keep_their_relu():
    """Every convolution of ResNet-18 followed by a relu (the stem's, each
    block's first, and each block's last with the residual added before the
    relu: 17 of 20) still carries it as relu_select, and the result is
    PyTorch's. (channels-last left a transpose unused beside the select
    form, which stopped the fusion.)"""
    torchvision = require("torchvision")
    torch.manual_seed(40)
    net = torchvision.models.resnet18(weights=None).eval()
    x = randn(1, 3, 64, 64)
    activations = _fused_activations(net, x)
    assert len(activations) == 21 and activations.count("relu_select") == 17, activations  # 20 convs, fc
    got, want = run_both(net, x)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_residual_add_and_relu_fold_into_the_convolution_and_keep_nan():
    """ResNet's stem and basic block: the block's second convolution takes
    the block's input as brt.conv's residual operand, with the relu, leaving
    no add; a NaN in the input reaches the result as in PyTorch."""
    import re

    class StemAndBlock(torch.nn.Module):
        def __init__(self, c):
            super().__init__()
            self.stem = torch.nn.Conv2d(3, c, 3, padding=1)
            self.conv1 = torch.nn.Conv2d(c, c, 3, padding=1)
            self.conv2 = torch.nn.Conv2d(c, c, 3, padding=1)

        def forward(self, x):
            h = torch.relu(self.stem(x))
            return torch.relu(self.conv2(torch.relu(self.conv1(h))) + h)

    torch.manual_seed(41)
    net = StemAndBlock(16).eval()
    x = randn(2, 3, 9, 9)
    x[1, 2, 4, 4] = float("nan")
    program = _compiled_program(net, x)
    convs = [m.group(1) for m in re.finditer(r"= brt\.conv\(([^)]*)\)", program)]
    assert [len(c.split(",")) for c in convs] == [3, 3, 4], program
    assert "brt.add" not in program and "brt.fused_elementwise" not in program, program
    assert _fused_activations(net, x) == ["relu_select"] * 3
    got, want = run_both(net, x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert (np.isnan(got) == np.isnan(want)).all() and np.isnan(got[1]).any()
    assert not np.isnan(got[0]).any()


def test_writes_to_open_ended_slices():
    """`y[:, 1:] = v` and in-place ops on open-ended slices become
    slice_scatters ending at INT64_MAX, on which torch-mlir ran out of memory
    (std::bad_alloc); negative starts and steps too."""
    def write(x, v):
        y = x * 2
        y[:, 1:] = v
        y[-2:] += 1
        y[:, ::2] *= 3
        y.view(-1)[::5].add_(7.0)
        return y

    assert_matches(write, randn(4, 6), randn(4, 5))
