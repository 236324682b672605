"""brt.compile_torch: PyTorch modules through torch.export and torch-mlir,
each checked against the same module run by PyTorch in float64 (random
weights and inputs), within 1e-4."""
import copy
import os

import numpy as np
import pytest

from conftest import require  # noqa: E402

torch = require("torch")
require("torch_mlir")
import brt  # noqa: E402

nn = torch.nn
F = torch.nn.functional


class SelfAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.attention = nn.MultiheadAttention(32, 4, batch_first=True)

    def forward(self, x):
        return self.attention(x, x, x, need_weights=False)[0]


class CausalAttention(nn.Module):
    """scaled_dot_product_attention with a causal mask: torch-mlir writes
    its mask with dynamic_iota."""

    def __init__(self):
        super().__init__()
        self.qkv = nn.Linear(32, 96)

    def forward(self, x):
        batch, seq, _ = x.shape
        q, k, v = self.qkv(x).view(batch, seq, 3, 4, 8).permute(2, 0, 3, 1, 4)
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class AttentionThenView(nn.Module):
    """GPT-2's attention output: sdpa, heads moved back, then `view`, which
    the decomposition of sdpa into its math made fail (on other strides than
    eager's)."""

    def __init__(self):
        super().__init__()
        self.proj = nn.Linear(32, 32)

    def forward(self, q, k, v):
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(2, 16, 32)
        return self.proj(o.view(-1, 32))


class InPlaceThroughView(nn.Module):
    """An in-place op on a view writes its base (the view becomes a reshape
    only after functionalization)."""

    def forward(self, x):
        y = x * 2
        y.view(-1)[5:17].mul_(-1.0)
        return y.transpose(0, 1).contiguous().view(-1) * 3


class Embeddings(nn.Module):
    """BERT's input: word and token-type embeddings (integer gathers)."""

    def __init__(self):
        super().__init__()
        self.words = nn.Embedding(100, 16)
        self.token_types = nn.Embedding(2, 16)
        self.norm = nn.LayerNorm(16)

    def forward(self, ids, token_types):
        return self.norm(self.words(ids) + self.token_types(token_types))


class Pools(nn.Module):
    def forward(self, x):
        return F.max_pool2d(x, 3, 2, 1) + F.avg_pool2d(x, 3, 2, 1)


class MaskedMeanPool(nn.Module):
    """sentence-transformers' pooling: the mean over unmasked tokens, L2
    normalized."""

    def forward(self, hidden, mask):
        m = mask.unsqueeze(-1).to(hidden.dtype)
        return F.normalize((hidden * m).sum(1) / m.sum(1).clamp(min=1e-9), p=2, dim=1)


def randomize_batch_norms(model):
    """Batch-norm statistics and affine parameters other than the initial 0
    and 1, so folding them into the convolutions wrongly shows."""
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, nn.BatchNorm2d):
                m.running_mean.uniform_(-0.5, 0.5)
                m.running_var.uniform_(0.5, 2.0)
                m.weight.uniform_(0.5, 1.5)
                m.bias.uniform_(-0.5, 0.5)
    return model


class ResidualBlock(nn.Module):
    """ResNet's basic block: conv, batch norm, relu, conv, batch norm, the
    input added, relu."""

    def __init__(self, c):
        super().__init__()
        self.body = randomize_batch_norms(nn.Sequential(
            nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(),
            nn.Conv2d(c, c, 3, padding=1, bias=False), nn.BatchNorm2d(c)))

    def forward(self, x):
        return torch.relu(self.body(x) + x)


class Lambda(nn.Module):
    def __init__(self, fn):
        super().__init__()
        self.fn = fn

    def forward(self, *args):
        return self.fn(*args)


def _randn(*shape):
    return torch.randn(*shape)


CASES = {
    "mlp": lambda: (nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 8)), (_randn(4, 16),)),
    "conv_batch_norm_max_pool": lambda: (randomize_batch_norms(nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2))), (_randn(2, 3, 16, 16),)),
    "residual_block": lambda: (ResidualBlock(16), (_randn(2, 16, 9, 9),)),
    "layer_norm_gelu": lambda: (nn.Sequential(nn.LayerNorm(32), nn.GELU(), nn.Linear(32, 32),
                                              nn.GELU(approximate="tanh")), (_randn(2, 5, 32),)),
    "group_norm_silu": lambda: (nn.Sequential(nn.Conv2d(4, 8, 3), nn.GroupNorm(2, 8), nn.SiLU()),
                                (_randn(2, 4, 10, 10),)),
    "multi_head_attention": lambda: (SelfAttention(), (_randn(2, 8, 32),)),
    "causal_sdpa": lambda: (CausalAttention(), (_randn(2, 8, 32),)),
    "attention_then_view": lambda: (AttentionThenView(), tuple(_randn(2, 4, 16, 8) for _ in range(3))),
    "in_place_through_view": lambda: (InPlaceThroughView(), (_randn(4, 6),)),
    "embeddings": lambda: (Embeddings(), (torch.randint(0, 100, (2, 7)), torch.randint(0, 2, (2, 7)))),
    "max_and_avg_pool": lambda: (Pools(), (_randn(2, 3, 9, 9),)),
    "strided_conv_adaptive_pool": lambda: (nn.Sequential(nn.Conv2d(3, 4, 3, stride=2), nn.AdaptiveAvgPool2d(1),
                                                         nn.Flatten()), (_randn(2, 3, 15, 15),)),
    "masked_mean_pool": lambda: (MaskedMeanPool(), (_randn(2, 7, 16), torch.tensor([[1, 1, 1, 0, 0, 0, 0], [1] * 7]))),
    "log_softmax": lambda: (nn.Sequential(nn.Linear(8, 5), nn.LogSoftmax(-1)), (_randn(3, 8),)),
    "depthwise_conv_hardswish": lambda: (nn.Sequential(nn.Conv2d(8, 8, 3, groups=8, padding=1), nn.Hardswish()),
                                         (_randn(1, 8, 7, 7),)),
    "conv_transpose": lambda: (nn.ConvTranspose2d(4, 2, 3, stride=2), (_randn(1, 4, 5, 5),)),
    "lstm": lambda: (nn.LSTM(8, 8, batch_first=True), (_randn(2, 5, 8),)),
    "cumsum": lambda: (Lambda(lambda x: torch.cumsum(x, 1)), (_randn(3, 9),)),
    "masked_fill_softmax": lambda: (Lambda(lambda x, m: x.masked_fill(m, float("-inf")).softmax(-1)),
                                    (_randn(3, 7), torch.rand(3, 7) > 0.5)),
    "where_clamp": lambda: (Lambda(lambda x, m: torch.where(m, x.clamp(-0.5, 0.5), torch.zeros(7))),
                            (_randn(3, 7), torch.rand(3, 7) > 0.5)),
}


def float64_reference(module, args):
    """The module and its float inputs in float64, run by PyTorch."""
    wide = copy.deepcopy(module).double()
    with torch.no_grad():
        out = wide(*[a.double() if a.is_floating_point() else a for a in args])
    return (out[0] if isinstance(out, tuple) else out).numpy()


def check(module, args, path, atol=1e-4):
    module.eval()
    compiled = brt.compile_torch(module, *args, path=str(path))
    (out,) = brt.Session(compiled).run(*[a.numpy() for a in args])[:1]
    reference = float64_reference(module, args)
    assert out.shape == reference.shape and out.dtype == np.float32
    # The reference differs from PyTorch's own float32 run by rounding only;
    # a wrong op differs by far more.
    np.testing.assert_allclose(out, reference, rtol=1e-4, atol=atol)
    return out


@pytest.mark.parametrize("name", sorted(CASES))
def test_module_matches_pytorch_in_float64(name, tmp_path):
    torch.manual_seed(sorted(CASES).index(name))
    module, args = CASES[name]()
    check(module, args, tmp_path / f"{name}.brtx")


def test_resnet18_with_random_weights(tmp_path):
    torchvision = require("torchvision")
    torch.manual_seed(18)
    model = randomize_batch_norms(torchvision.models.resnet18())
    out = check(model, (_randn(2, 3, 224, 224),), tmp_path / "resnet18.brtx", atol=1e-3)
    assert out.shape == (2, 1000)


def test_argmax_and_argmin_match_pytorch_ties_included(tmp_path):
    """torch-mlir writes them as a two-operand reduce with a body of its own
    (compare GE, select, minimum of the indices on ties)."""
    torch.manual_seed(3)
    x = torch.round(_randn(6, 9) * 2) / 2  # halves: ties in most rows
    module = Lambda(lambda x: (torch.argmax(x, -1), torch.argmin(x, 0, keepdim=True)))
    path = brt.compile_torch(module.eval(), x, path=str(tmp_path / "arg.brtx"))
    top, bottom = brt.Session(path).run(x.numpy())
    np.testing.assert_array_equal(top, torch.argmax(x, -1).numpy())
    np.testing.assert_array_equal(bottom, torch.argmin(x, 0, keepdim=True).numpy())


def test_parameters_become_weights_and_arguments_keep_their_names(tmp_path):
    torch.manual_seed(1)
    module, args = CASES["embeddings"]()
    compiled = brt.compile_torch(module.eval(), *args, path=str(tmp_path / "m.brtx"))
    (f,) = brt.Session(compiled).functions
    inputs = [a for a in f["arguments"] if a["role"] == "input"]
    assert [(a["name"], a["dtype"], a["shape"]) for a in inputs] == [("ids", "i64", (2, 7)),
                                                                      ("token_types", "i64", (2, 7))]
    # The word embeddings are a weight segment of the file, not an input.
    weights = [a for a in f["arguments"] if a["role"] == "weight"]
    assert [(a["dtype"], a["shape"]) for a in weights] == [("f32", (100, 16))]
    assert os.path.getsize(compiled) > 100 * 16 * 4


def test_sort_topk_and_argsort_match_pytorch(tmp_path):
    """torch-mlir writes them as stablehlo.sort of (values, iota) with a
    compare FLOAT comparator, then slices for topk; a NaN sorts last
    ascending and first descending, as in PyTorch eager."""
    torch.manual_seed(4)
    x = _randn(5, 9)
    x[2, 4] = float("nan")
    module = Lambda(lambda x: (*torch.sort(x, dim=-1), *torch.topk(x, 3), *torch.sort(x, dim=0, descending=True),
                               torch.argsort(x, dim=1)))
    path = brt.compile_torch(module.eval(), x, path=str(tmp_path / "sort.brtx"))
    got = brt.Session(path).run(x.numpy())
    want = [t.numpy() for t in module(x)]
    assert len(got) == len(want) == 7
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)


def test_an_unsupported_op_is_named(tmp_path):
    class Noise(nn.Module):
        def forward(self, x):
            return x + torch.rand_like(x)

    with pytest.raises(brt.CompileError, match="stablehlo.rng"):
        brt.compile_torch(Noise().eval(), _randn(3, 5), path=str(tmp_path / "s.brtx"))


def test_one_executable_serves_several_shapes_sharing_its_weights(tmp_path):
    """specializations: a function per input shape, the weights stored once,
    Session.run picking the function by the arrays' shapes."""
    torch.manual_seed(5)
    module = nn.Sequential(nn.Linear(64, 256), nn.GELU(), nn.Linear(256, 8)).eval()
    shapes = [(1, 16, 64), (4, 16, 64), (4, 128, 64)]
    args = [(_randn(*s),) for s in shapes]
    one = brt.compile_torch(module, *args[0], path=str(tmp_path / "one.brtx"))
    several = brt.compile_torch(module, *args[0], specializations=args[1:], path=str(tmp_path / "several.brtx"))
    session = brt.Session(several)
    assert [f["name"] for f in session.functions] == ["main_1x16x64", "main_4x16x64", "main_4x128x64"]
    # 64*256 + 256*8 floats of weights: in the file once, not three times.
    weight_bytes = (64 * 256 + 256 * 8) * 4
    assert os.path.getsize(several) < os.path.getsize(one) + weight_bytes
    for (x,) in reversed(args):
        (out,) = session.run(x.numpy())
        np.testing.assert_allclose(out, float64_reference(module, (x,)), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match=r"no function .* shapes \[2,16,64\].*main_4x16x64 \(\[4,16,64\]\)"):
        session.run(_randn(2, 16, 64).numpy())
    with pytest.raises(TypeError, match=r"an input is a <class 'list'>, not an array with a shape"):
        session.run([[1.0] * 64] * 16)


def test_torch_compile_backend_runs_graphs_through_brt(monkeypatch):
    from brt import torch_frontend

    compiled = []
    real = torch_frontend.compile_torch

    def counting(*args, **kwargs):
        compiled.append(real(*args, **kwargs))
        return compiled[-1]

    monkeypatch.setattr(torch_frontend, "compile_torch", counting)
    torch_frontend.register_backend()
    torch._dynamo.reset()
    torch.manual_seed(7)
    module, (x,) = CASES["layer_norm_gelu"]()
    module.eval()
    fast = torch.compile(module, backend="brt")
    with torch.no_grad():
        out = fast(x)
    assert len(compiled) == 1
    np.testing.assert_allclose(out.numpy(), float64_reference(module, (x,)), rtol=1e-4, atol=1e-4)


def test_torch_compile_falls_back_to_eager_naming_the_op():
    class NoiseThenScale(nn.Module):
        def forward(self, x):
            return (x + torch.rand_like(x)) * 2

    torch._dynamo.reset()
    x = _randn(3, 5)
    with pytest.warns(UserWarning, match=r"^brt: running a torch.compile graph eagerly: unsupported op 'stablehlo.rng'"):
        out = torch.compile(NoiseThenScale(), backend=brt.torch_backend)(x)
    assert out.shape == x.shape and bool(((out / 2 - x >= 0) & (out / 2 - x < 1)).all())
