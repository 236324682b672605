"""PyTorch twins of the JAX models in jax_models.py, for the GPU peer
comparison (bench/gpu_bench.py): the same math, op for op, so the timings
compare implementations and not models. gpu_bench.py checks each against JAX."""
import torch


def layer_norm(x, g, b, eps=1e-5):
    mean = x.mean(dim=-1, keepdim=True)
    var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
    return (x - mean) * torch.rsqrt(var + eps) * g + b


def encoder_block(x, wq, wk, wv, wo, g1, b1, w_up, b_up, w_down, b_down, g2, b2, heads=4):
    """jax_models.encoder_block: multi-head self-attention and an exact-GELU
    feed-forward layer, each with a residual and a layer norm."""
    batch, seq, width = x.shape

    def split(t):
        return t.reshape(batch, seq, heads, width // heads).transpose(1, 2)

    q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / torch.tensor(float(width // heads) ** 0.5,
                                                                   dtype=x.dtype, device=x.device)
    attn = torch.einsum("bhqk,bhkd->bhqd", torch.softmax(scores, dim=-1), v)
    h = layer_norm(x + attn.transpose(1, 2).reshape(batch, seq, width) @ wo, g1, b1)
    ffn = torch.nn.functional.gelu(h @ w_up + b_up, approximate="none") @ w_down + b_down
    return layer_norm(h + ffn, g2, b2)
