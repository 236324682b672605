"""A small decoder-only transformer language model in plain JAX, and its
AdamW train step: token and position embeddings, pre-norm blocks of causal
multi-head attention and a GELU MLP, a final layer norm, logits through the
tied embedding. `train_lm.py` trains it through brt; the tests check every
step against JAX."""
from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np
import optax


@dataclass(frozen=True)
class Config:
    vocab: int = 64
    dim: int = 32
    heads: int = 4
    layers: int = 2
    context: int = 16
    batch: int = 4
    learning_rate: float = 3e-3
    weight_decay: float = 0.01


def init_params(config, rng):
    def normal(*shape):
        return (rng.standard_normal(shape) * 0.02).astype(np.float32)

    def norm():
        return {"g": np.ones(config.dim, np.float32), "b": np.zeros(config.dim, np.float32)}

    d = config.dim
    params = {"embed": normal(config.vocab, d), "pos": normal(config.context, d), "ln_f": norm()}
    for layer in range(config.layers):
        params[f"block{layer}"] = {"ln1": norm(), "ln2": norm(), "qkv": normal(d, 3 * d),
                                   "proj": normal(d, d), "fc1": normal(d, 4 * d), "fc2": normal(4 * d, d)}
    return params


def layer_norm(x, p):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + 1e-5) * p["g"] + p["b"]


def block(config, x, p):
    batch, context, dim = x.shape
    head = dim // config.heads

    def heads(t):
        return t.reshape(batch, context, config.heads, head).transpose(0, 2, 1, 3)

    q, k, v = (heads(t) for t in jnp.split(layer_norm(x, p["ln1"]) @ p["qkv"], 3, -1))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(head)
    scores = jnp.where(jnp.tril(jnp.ones((context, context), bool)), scores, -1e9)
    attended = (jax.nn.softmax(scores, -1) @ v).transpose(0, 2, 1, 3).reshape(batch, context, dim)
    x = x + attended @ p["proj"]
    return x + jax.nn.gelu(layer_norm(x, p["ln2"]) @ p["fc1"]) @ p["fc2"]


def loss_fn(config, params, tokens, targets):
    """Mean next-token cross-entropy; tokens and targets are [batch, context] i32."""
    x = params["embed"][tokens] + params["pos"]
    for layer in range(config.layers):
        x = block(config, x, params[f"block{layer}"])
    logits = layer_norm(x, params["ln_f"]) @ params["embed"].T
    log_probs = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(log_probs, targets[..., None], -1))


def optimizer(config):
    return optax.adamw(config.learning_rate, weight_decay=config.weight_decay)


def train_step(config):
    """step(params, opt_state, tokens, targets) -> (params, opt_state, loss),
    jitted with params and optimizer state donated (brt keeps them in place)."""
    opt = optimizer(config)

    def step(params, opt_state, tokens, targets):
        loss, grads = jax.value_and_grad(lambda p: loss_fn(config, p, tokens, targets))(params)
        updates, opt_state = opt.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    return jax.jit(step, donate_argnums=(0, 1))


def initial_state(config, seed=0):
    """(params, opt_state) as NumPy pytrees: donating them to JAX copies them
    instead of deleting them, so one initial state serves several runs."""
    params = init_params(config, np.random.default_rng(seed))
    opt_state = jax.tree_util.tree_map(np.asarray, optimizer(config).init(params))
    return params, opt_state
