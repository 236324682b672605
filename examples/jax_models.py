"""The JAX models brt is measured and tested on: one definition each, shared by
the demo (jax_encoder_block.py), the end-to-end tests, bench/peer_compare.py
and scripts/bench.sh."""
import jax
import jax.numpy as jnp
import numpy as np


def mlp(x, w1, b1, w2, b2, w3, b3):
    h = jax.nn.relu(x @ w1 + b1)
    h = jax.nn.relu(h @ w2 + b2)
    return jax.nn.softmax(h @ w3 + b3, axis=-1)


def cnn(x, w1, b1, w2, b2, wd, bd):
    """Two 3x3 conv + relu + 2x2 max-pool stages (NHWC), then a dense layer."""
    dn = ("NHWC", "HWIO", "NHWC")
    h = jax.nn.relu(jax.lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=dn) + b1)
    h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = jax.nn.relu(jax.lax.conv_general_dilated(h, w2, (1, 1), "SAME", dimension_numbers=dn) + b2)
    h = jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return h.reshape(h.shape[0], -1) @ wd + bd


def layer_norm(x, g, b, eps=1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * g + b


def encoder_block(x, wq, wk, wv, wo, g1, b1, w_up, b_up, w_down, b_down, g2, b2, heads=4):
    """Multi-head self-attention and an exact-GELU feed-forward layer, each
    with a residual and a layer norm."""
    batch, seq, width = x.shape

    def split(t):
        return t.reshape(batch, seq, heads, width // heads).transpose(0, 2, 1, 3)

    q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(width // heads).astype(x.dtype)
    attn = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, axis=-1), v)
    h = layer_norm(x + attn.transpose(0, 2, 1, 3).reshape(batch, seq, width) @ wo, g1, b1)
    ffn = jax.nn.gelu(h @ w_up + b_up, approximate=False) @ w_down + b_down
    return layer_norm(h + ffn, g2, b2)


def encoder_args(rng, batch=2, seq=64, width=256):
    """Input and weights for encoder_block, scaled like a trained layer."""
    s = float(1 / np.sqrt(width))

    def normal(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    return [normal(batch, seq, width)] + [normal(width, width) * s for _ in range(4)] + [
        1 + 0.1 * normal(width), 0.1 * normal(width), normal(width, 4 * width) * s, 0.1 * normal(4 * width),
        normal(4 * width, width) * s / 2, 0.1 * normal(width), 1 + 0.1 * normal(width), 0.1 * normal(width)]
