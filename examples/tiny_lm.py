"""A small decoder-only transformer language model in plain JAX, its AdamW
train step and its one-token decode steps with key/value caches (fixed-size
and updated in place, or growing by a token a step): token and
position embeddings, pre-norm blocks of causal multi-head attention and a
GELU MLP, a final layer norm, logits through the tied embedding.
`train_lm.py` trains it through brt and generates text with the decode step;
the tests check every step against JAX."""
import dataclasses
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


def add_config_arguments(parser):
    """--vocab, --dim, ... on an argparse parser, Config's defaults."""
    for field in dataclasses.fields(Config):
        parser.add_argument(f"--{field.name.replace('_', '-')}", type=field.type, default=field.default)


def config_from_arguments(args):
    """(Config, the options that differ from its defaults, as a command line would give them)."""
    config = Config(**{f.name: getattr(args, f.name) for f in dataclasses.fields(Config)})
    options = "".join(f" --{f.name.replace('_', '-')} {getattr(config, f.name)}"
                      for f in dataclasses.fields(Config) if getattr(config, f.name) != f.default)
    return config, options


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


def forward(config, params, tokens):
    """Next-token logits [batch, context, vocab] of tokens [batch, context] i32."""
    x = params["embed"][tokens] + params["pos"]
    for layer in range(config.layers):
        x = block(config, x, params[f"block{layer}"])
    return layer_norm(x, params["ln_f"]) @ params["embed"].T


def loss_fn(config, params, tokens, targets):
    """Mean next-token cross-entropy; tokens and targets are [batch, context] i32."""
    log_probs = jax.nn.log_softmax(forward(config, params, tokens))
    return -jnp.mean(jnp.take_along_axis(log_probs, targets[..., None], -1))


def empty_caches(config, batch):
    """(keys, values) for decode_step: per layer [batch, heads, context, head]."""
    shape = (batch, config.heads, config.context, config.dim // config.heads)
    return ([np.zeros(shape, np.float32) for _ in range(config.layers)],
            [np.zeros(shape, np.float32) for _ in range(config.layers)])


def decode_arguments(params, keys, values):
    """{name: array} of the decode step's parameters and caches, named as
    brt.compile names arguments (<parameter>.<pytree path>): bound once."""
    named = {}
    for prefix, tree in (("params", params), ("keys", keys), ("values", values)):
        for path, leaf in jax.tree_util.tree_leaves_with_path(tree):
            named[f"{prefix}.{jax.tree_util.keystr(path, simple=True, separator='.')}"] = leaf
    return named


def decode_step(config):
    """step(params, keys, values, tokens, pos) -> (keys, values, logits): the
    next-token logits [batch, vocab] of tokens [batch] i32 at position pos (an
    i32 scalar), the same as forward's at that position. Earlier positions'
    keys and values come from the caches and this one's go into them;
    jitted with the caches donated (brt writes each new row in place)."""
    head = config.dim // config.heads

    def step(params, keys, values, tokens, pos):
        batch = tokens.shape[0]
        x = params["embed"][tokens] + jax.lax.dynamic_index_in_dim(params["pos"], pos, keepdims=False)
        visible = jnp.arange(config.context) <= pos
        keys, values = list(keys), list(values)
        for layer in range(config.layers):
            p = params[f"block{layer}"]
            q, k, v = (t.reshape(batch, config.heads, 1, head)
                       for t in jnp.split(layer_norm(x, p["ln1"]) @ p["qkv"], 3, -1))
            keys[layer] = jax.lax.dynamic_update_slice(keys[layer], k, (0, 0, pos, 0))
            values[layer] = jax.lax.dynamic_update_slice(values[layer], v, (0, 0, pos, 0))
            scores = (q @ keys[layer].transpose(0, 1, 3, 2))[:, :, 0] / np.sqrt(head)
            weights = jax.nn.softmax(jnp.where(visible, scores, -1e9), -1)
            attended = (weights[:, :, None] @ values[layer]).reshape(batch, config.dim)
            x = x + attended @ p["proj"]
            x = x + jax.nn.gelu(layer_norm(x, p["ln2"]) @ p["fc1"]) @ p["fc2"]
        return keys, values, layer_norm(x, params["ln_f"]) @ params["embed"].T

    return jax.jit(step, donate_argnums=(1, 2))


def growing_decode_step(config):
    """step(params, keys, values, tokens) -> (keys, values, logits): decode_step
    with caches that grow instead of a position and a mask. keys and values
    are per layer [batch, heads, t, head], t the tokens so far, so this
    token's position is t (the caches' size, read as data); its key and value
    are appended and the caches returned hold t + 1 positions, all of them
    visible. Compiled over a symbolic t (growing_decode_specs), one
    executable serves every t from 1; t = 0 is an empty cache of static size."""
    head = config.dim // config.heads

    def step(params, keys, values, tokens):
        batch = tokens.shape[0]
        pos = keys[0].shape[2]
        x = params["embed"][tokens] + jax.lax.dynamic_index_in_dim(params["pos"], pos, keepdims=False)
        keys, values = list(keys), list(values)
        for layer in range(config.layers):
            p = params[f"block{layer}"]
            q, k, v = (t.reshape(batch, config.heads, 1, head)
                       for t in jnp.split(layer_norm(x, p["ln1"]) @ p["qkv"], 3, -1))
            keys[layer] = jnp.concatenate([keys[layer], k], 2)
            values[layer] = jnp.concatenate([values[layer], v], 2)
            # Scores [batch, heads, 1, t + 1] stay 4-D: an integer index into
            # an array of symbolic shape (scores[:, :, 0]) is a dynamic_gather,
            # which brt refuses.
            scores = q @ keys[layer].transpose(0, 1, 3, 2) / np.sqrt(head)
            attended = (jax.nn.softmax(scores, -1) @ values[layer]).reshape(batch, config.dim)
            x = x + attended @ p["proj"]
            x = x + jax.nn.gelu(layer_norm(x, p["ln2"]) @ p["fc1"]) @ p["fc2"]
        return keys, values, layer_norm(x, params["ln_f"]) @ params["embed"].T

    return jax.jit(step)


def empty_growing_caches(config, batch):
    """(keys, values) for growing_decode_step's first token: per layer [batch, heads, 0, head]."""
    shape = (batch, config.heads, 0, config.dim // config.heads)
    return ([np.zeros(shape, np.float32) for _ in range(config.layers)],
            [np.zeros(shape, np.float32) for _ in range(config.layers)])


def growing_decode_specs(config, batch=None):
    """(keys, values, tokens) as jax.ShapeDtypeStructs for compiling
    growing_decode_step once: caches of symbolic length t, 1 <= t < context
    (position t must have an embedding), and a symbolic batch b unless
    `batch` fixes it."""
    b, t = jax.export.symbolic_shape("b, t", constraints=(f"t <= {config.context - 1}",))
    batch = b if batch is None else batch
    cache = jax.ShapeDtypeStruct((batch, config.heads, t, config.dim // config.heads), jnp.float32)
    return ([cache] * config.layers, [cache] * config.layers, jax.ShapeDtypeStruct((batch,), jnp.int32))


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
