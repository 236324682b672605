"""Op kinds: reductions, matmul, softmax and norms, views (reshape,
transpose, slices with negative bounds, squeeze, broadcast), concatenation,
padding, sorting."""
from ops import default_fill, float_literal, int_literal, is_bool, is_exact_number, is_float, is_number, kind, shape_text


def _any(v):
    return True


def _axis_subset(rng, rank):
    """A tuple of distinct axes, some negative; may be empty."""
    axes = [a for a in range(rank) if rng.random() < 0.5]
    return tuple(a - rank if rng.random() < 0.3 else a for a in axes)


def _axes_text(axes):
    return "(" + ", ".join(map(str, axes)) + ("," if len(axes) == 1 else "") + ")"


# ------------------------------------------------------------ reductions

_REDUCTIONS = {
    # name: (jax, torch for a tuple of dims, torch for all dims)
    "sum": ("jnp.sum", "torch.sum", "torch.sum"),
    "mean": ("jnp.mean", "torch.mean", "torch.mean"),
    "max": ("jnp.max", "torch.amax", "torch.amax"),
    "min": ("jnp.min", "torch.amin", "torch.amin"),
    "prod": ("jnp.prod", None, "torch.prod"),
    "any": ("jnp.any", "torch.any", "torch.any"),
    "all": ("jnp.all", "torch.all", "torch.all"),
}


def _reduce(name):
    jax_fn, torch_dims, torch_all = _REDUCTIONS[name]

    def render(ctx, x):
        keep = ctx.rng.random() < 0.3
        if x.rank == 0 or ctx.rng.random() < 0.15:
            if ctx.jax:
                return f"{jax_fn}({x.name}" + (", keepdims=True)" if keep else ")")
            return f"{torch_all}({x.name})"
        axes = _axis_subset(ctx.rng, x.rank)
        # torch-mlir lowers prod, any and all over one dim only.
        one_dim = not ctx.jax and name in ("prod", "any", "all")
        if not axes or torch_dims is None or (one_dim and len(axes) > 1):
            axes = (ctx.rng.randrange(-x.rank, x.rank),)
        if ctx.jax:
            return f"{jax_fn}({x.name}, axis={_axes_text(axes)}, keepdims={keep})"
        if one_dim:
            return f"{torch_all}({x.name}, dim={axes[0]}, keepdim={keep})"
        return f"{torch_dims}({x.name}, dim={_axes_text(axes)}, keepdim={keep})"
    takes = is_bool if name in ("any", "all") else is_number
    keeps = name in ("max", "min", "any", "all")
    kind(name, takes, keeps_exact=keeps, weight=1.0 if name in ("sum", "max", "mean") else 0.5)(render)


for _name in _REDUCTIONS:
    _reduce(_name)


@kind("argmax", is_exact_number, weight=1.0)
def _argmax(ctx, x):
    fn = ctx.rng.choice(["argmax", "argmin"])
    keep = ctx.rng.random() < 0.3
    if x.rank == 0 or ctx.rng.random() < 0.2:
        return f"jnp.{fn}({x.name})" if ctx.jax else f"torch.{fn}({x.name})"
    axis = ctx.rng.randrange(-x.rank, x.rank)
    if ctx.jax:
        return f"jnp.{fn}({x.name}, axis={axis}, keepdims={keep})"
    return f"torch.{fn}({x.name}, dim={axis}, keepdim={keep})"


@kind("cumsum", is_number, weight=0.5)
def _cumsum(ctx, x):
    if x.rank == 0:
        return None
    axis = ctx.rng.randrange(-x.rank, x.rank)
    if ctx.jax and ctx.rng.random() < 0.3:  # (torch-mlir does not lower torch.cummax)
        return f"lax.cummax({x.name}, axis={axis % x.rank})"
    return f"jnp.cumsum({x.name}, axis={axis})" if ctx.jax else f"torch.cumsum({x.name}, dim={axis})"


@kind("logsumexp", is_float, weight=0.3)
def _logsumexp(ctx, x):
    if x.rank == 0:
        return None
    axis = ctx.rng.randrange(-x.rank, x.rank)
    return f"jax.nn.logsumexp({x.name}, axis={axis})" if ctx.jax else f"torch.logsumexp({x.name}, dim={axis})"


@kind("var", is_float, weight=0.3)
def _var(ctx, x):
    if x.rank == 0:
        return None
    axis = ctx.rng.randrange(-x.rank, x.rank)
    return f"jnp.var({x.name}, axis={axis})" if ctx.jax else f"torch.var({x.name}, dim={axis}, correction=0)"


# ------------------------------------------------------------ matmul

def _matmul_partner(first, candidate):
    if candidate.dtype != first.dtype or first.rank == 0 or candidate.rank == 0:
        return False
    k = first.shape[-1]
    if candidate.rank == 1:
        return candidate.shape[0] == k
    if candidate.shape[-2] != k:
        return False
    batch_a, batch_b = first.shape[:-2], candidate.shape[:-2]
    return all(x == y or x == 1 or y == 1 for x, y in zip(reversed(batch_a), reversed(batch_b)))


@kind("matmul", lambda v: is_number(v) and v.rank >= 1, partners=(_matmul_partner,), weight=1.5)
def _matmul(ctx, a, b):
    if b is None:
        rng = ctx.rng
        k = a.shape[-1]
        n = rng.choice([1, 2, 3, 4, 5, 8, 16])
        shape = (k, n) if rng.random() < 0.8 else (k,)
        if a.rank >= 3 and rng.random() < 0.4:
            shape = tuple(d if rng.random() < 0.7 else 1 for d in a.shape[:-2]) + (k, n)
        fill = ("float", False) if a.is_float else ("int", -5, 5)
        b_text = ctx.input(a.dtype, shape, fill)
    else:
        b_text = b.name
    if ctx.rng.random() < 0.2 and a.rank >= 2 and b is None and len(shape) >= 2:
        # The rhs transposed, as attention's q k^T: contraction over both last dims.
        t = ctx.input(a.dtype, shape[:-2] + (shape[-1], shape[-2]), fill)
        return (f"jnp.einsum('...ij,...kj->...ik', {a.name}, {t})" if ctx.jax
                else f"torch.einsum('...ij,...kj->...ik', {a.name}, {t})")
    return f"jnp.matmul({a.name}, {b_text})" if ctx.jax else f"torch.matmul({a.name}, {b_text})"


# ------------------------------------------------------------ softmax and norms

@kind("softmax", is_float, weight=1.0)
def _softmax(ctx, x):
    if x.rank == 0:
        return None
    axis = ctx.rng.randrange(-x.rank, x.rank)
    log = ctx.rng.random() < 0.3
    if ctx.jax:
        return f"jax.nn.{'log_softmax' if log else 'softmax'}({x.name}, axis={axis})"
    return f"torch.{'log_softmax' if log else 'softmax'}({x.name}, dim={axis})"


@kind("layer_norm", is_float, weight=1.0)
def _layer_norm(ctx, x):
    if x.rank == 0:
        return None
    c = x.shape[-1]
    affine = ctx.rng.random() < 0.7
    w = ctx.input(x.dtype, (c,), ("float", False)) if affine else None
    b = ctx.input(x.dtype, (c,), ("float", False)) if affine else None
    rms = ctx.rng.random() < 0.25
    if not ctx.jax:
        if rms:
            return f"F.rms_norm({x.name}, ({c},), {w}, eps=1e-05)"
        return f"F.layer_norm({x.name}, ({c},), {w}, {b}, eps=1e-05)"
    scale = f" * {w}" if affine else ""
    if rms:
        return f"{x.name} * lax.rsqrt(jnp.mean(jnp.square({x.name}), axis=-1, keepdims=True) + 1e-05){scale}"
    shift = f" + {b}" if affine else ""
    return ["{out}_mean = jnp.mean(%s, axis=-1, keepdims=True)" % x.name,
            "{out}_var = jnp.mean(jnp.square(%s - {out}_mean), axis=-1, keepdims=True)" % x.name,
            "{out} = (%s - {out}_mean) * lax.rsqrt({out}_var + 1e-05)%s%s" % (x.name, scale, shift)]


# ------------------------------------------------------------ views

def _factor_shape(rng, size):
    """A random shape of `size` elements, rank 1 to 4."""
    rank = rng.randint(1, 4)
    if size == 0:
        return tuple(0 if i == 0 else rng.randint(0, 3) for i in range(rank))[::rng.choice([1, -1])]
    dims = [1] * rank
    n, p = size, 2
    while n > 1:
        while n % p:
            p += 1
        dims[rng.randrange(rank)] *= p
        n //= p
    return tuple(dims)


@kind("reshape", _any, keeps_exact=True, weight=1.5)
def _reshape(ctx, x):
    shape = _factor_shape(ctx.rng, x.size)
    text = list(map(str, shape))
    if x.size and ctx.rng.random() < 0.3:
        text[ctx.rng.randrange(len(shape))] = "-1"
    target = "(" + ", ".join(text) + ("," if len(text) == 1 else "") + ")"
    return f"jnp.reshape({x.name}, {target})" if ctx.jax else f"{x.name}.reshape{target}"


@kind("transpose", lambda v: v.rank >= 2, keeps_exact=True, weight=1.0)
def _transpose(ctx, x):
    if ctx.rng.random() < 0.5:
        a, b = ctx.rng.sample(range(-x.rank, 0), 2)
        return f"jnp.swapaxes({x.name}, {a}, {b})" if ctx.jax else f"{x.name}.transpose({a}, {b})"
    perm = list(range(x.rank))
    ctx.rng.shuffle(perm)
    return f"jnp.transpose({x.name}, {tuple(perm)})" if ctx.jax else f"{x.name}.permute{tuple(perm)}"


@kind("unsqueeze", lambda v: v.rank < 5, keeps_exact=True, weight=0.5)
def _unsqueeze(ctx, x):
    axis = ctx.rng.randint(-x.rank - 1, x.rank)
    return f"jnp.expand_dims({x.name}, {axis})" if ctx.jax else f"{x.name}.unsqueeze({axis})"


@kind("squeeze", lambda v: 1 in v.shape, keeps_exact=True, weight=0.5)
def _squeeze(ctx, x):
    ones = [i for i, d in enumerate(x.shape) if d == 1]
    if ctx.rng.random() < 0.3:
        return f"jnp.squeeze({x.name})" if ctx.jax else f"{x.name}.squeeze()"
    axis = ctx.rng.choice(ones) - (x.rank if ctx.rng.random() < 0.5 else 0)
    return f"jnp.squeeze({x.name}, {axis})" if ctx.jax else f"{x.name}.squeeze({axis})"


@kind("broadcast_to", _any, keeps_exact=True, weight=0.5)
def _broadcast_to(ctx, x):
    lead = tuple(ctx.rng.randint(0, 3) for _ in range(ctx.rng.randint(0, 2)))
    shape = lead + tuple(ctx.rng.randint(1, 3) if d == 1 else d for d in x.shape)
    return f"jnp.broadcast_to({x.name}, {shape_text(shape)})" if ctx.jax else f"{x.name}.expand{shape_text(shape)}"


def _slice_text(rng, n, negative_steps):
    """A slice of a dim of size n: negative and out-of-range bounds too."""
    def bound():
        return rng.choice([None, 0, 1, -1, -2, n, n + 2, -n - 1, rng.randint(-n, n)])
    start, stop = bound(), bound()
    step = rng.choice([None, None, 1, 2, 3] + ([-1, -2] if negative_steps else []))
    text = ("" if start is None else str(start)) + ":" + ("" if stop is None else str(stop))
    return text + (f":{step}" if step is not None else "")


@kind("slice", lambda v: v.rank >= 1, keeps_exact=True, weight=2.0)
def _slice(ctx, x):
    rng = ctx.rng
    parts = []
    for n in x.shape:
        r = rng.random()
        if r < 0.15 and n > 0:
            parts.append(str(rng.randint(-n, n - 1)))  # an integer index drops the dim
        elif r < 0.6:
            parts.append(_slice_text(rng, n, negative_steps=ctx.jax))
        else:
            parts.append(":")
    if x.rank > 1 and rng.random() < 0.3:
        parts = ["..."] + parts[rng.randint(1, x.rank - 1):]  # the leading dims taken whole
    else:
        while len(parts) > 1 and parts[-1] == ":":
            parts.pop()
    if rng.random() < 0.15:
        parts.insert(rng.randint(0, len(parts)), "None")
    return f"{x.name}[{', '.join(parts)}]"


@kind("flip", lambda v: v.rank >= 1, keeps_exact=True, weight=0.5)
def _flip(ctx, x):
    axes = _axis_subset(ctx.rng, x.rank) or (0,)
    return f"jnp.flip({x.name}, axis={_axes_text(axes)})" if ctx.jax else f"torch.flip({x.name}, dims={_axes_text(axes)})"


@kind("roll", lambda v: v.rank >= 1, keeps_exact=True, weight=0.5)
def _roll(ctx, x):
    axis = ctx.rng.randrange(-x.rank, x.rank)
    shift = ctx.rng.choice([1, -1, 2, -3, 7])
    return f"jnp.roll({x.name}, {shift}, axis={axis})" if ctx.jax else f"torch.roll({x.name}, {shift}, dims={axis})"


def _concat_partner(first, candidate):
    if candidate.dtype != first.dtype or candidate.rank != first.rank or first.rank == 0:
        return False
    return sum(a != b for a, b in zip(first.shape, candidate.shape)) <= 1


@kind("concat", lambda v: v.rank >= 1, partners=(_concat_partner,), keeps_exact=True, weight=1.0)
def _concat(ctx, a, b):
    rng = ctx.rng
    differing = [i for i in range(a.rank) if b is not None and a.shape[i] != b.shape[i]]
    axis = differing[0] if differing else rng.randrange(a.rank)
    if b is not None:
        others = [b.name]
    elif rng.random() < 0.3:
        others = [a.name]
    else:
        shape = list(a.shape)
        shape[axis] = rng.choice([0, 1, 2, 3])
        others = [ctx.input(a.dtype, shape, default_fill(ctx, a.dtype))]
    axis_text = axis - a.rank if rng.random() < 0.4 else axis
    items = ", ".join([a.name] + others)
    if rng.random() < 0.2 and b is None:  # stack: a new axis
        return f"jnp.stack([{a.name}, {a.name}], axis={axis_text})" if ctx.jax \
            else f"torch.stack([{a.name}, {a.name}], dim={axis_text})"
    return f"jnp.concatenate([{items}], axis={axis_text})" if ctx.jax else f"torch.cat([{items}], dim={axis_text})"


@kind("pad", lambda v: v.rank >= 1, keeps_exact=True, weight=0.7)
def _pad(ctx, x):
    rng = ctx.rng
    value = float_literal(rng) if x.is_float else ("False" if x.is_bool else int_literal(rng))
    if x.is_bool:
        value = "True" if rng.random() < 0.5 else "False"
    if ctx.jax:
        if rng.random() < 0.3 and not x.is_bool:
            # lax.pad: negative (cropping) and interior padding.
            config = [(rng.randint(-1, 2), rng.randint(-1, 2), rng.randint(0, 1)) for _ in x.shape]
            config = [(lo, hi, i) if n + lo + hi + max(n - 1, 0) * i >= 0 else (0, 0, 0)
                      for (lo, hi, i), n in zip(config, x.shape)]
            return f"lax.pad({x.name}, jnp.array({value}, {x.name}.dtype), {config})"
        widths = tuple((rng.randint(0, 2), rng.randint(0, 2)) for _ in x.shape)
        return f"jnp.pad({x.name}, {widths}, constant_values={value})"
    count = rng.randint(1, x.rank)
    flat = []
    for n in reversed(x.shape[-count:]):
        lo, hi = rng.randint(-1, 2), rng.randint(-1, 2)
        if n + lo + hi < 0:
            lo = hi = 0
        flat += [lo, hi]
    return f"F.pad({x.name}, {tuple(flat)}, value={value})"


@kind("triu", lambda v: v.rank >= 2, keeps_exact=True, weight=0.4)
def _triu(ctx, x):
    fn = ctx.rng.choice(["triu", "tril"])
    k = ctx.rng.choice([0, 1, -1, 2])
    return f"jnp.{fn}({x.name}, {k})" if ctx.jax else f"torch.{fn}({x.name}, {k})"


@kind("tile", lambda v: v.rank >= 1 and v.size <= 64, keeps_exact=True, weight=0.4)
def _tile(ctx, x):
    rng = ctx.rng
    if rng.random() < 0.5:
        axis = rng.randrange(-x.rank, x.rank)
        r = rng.choice([0, 1, 2, 3])
        return f"jnp.repeat({x.name}, {r}, axis={axis})" if ctx.jax else f"torch.repeat_interleave({x.name}, {r}, dim={axis})"
    reps = tuple(rng.choice([1, 1, 2, 3]) for _ in x.shape)
    return f"jnp.tile({x.name}, {reps})" if ctx.jax else f"{x.name}.repeat{reps}"


# ------------------------------------------------------------ sorting

@kind("sort", lambda v: is_number(v) and v.rank >= 1, keeps_exact=True, weight=0.5)
def _sort(ctx, x):
    axis = ctx.rng.randrange(-x.rank, x.rank)
    descending = ctx.rng.random() < 0.3
    if ctx.jax:
        return f"jnp.sort({x.name}, axis={axis}, descending={descending})"
    return f"torch.sort({x.name}, dim={axis}, descending={descending}).values"


@kind("argsort", lambda v: is_exact_number(v) and v.rank >= 1, frontends=("jax",), weight=0.5)
def _argsort(ctx, x):
    """Stable, so that ties have one answer (torch-mlir does not lower
    PyTorch's stable sort, and its other sort leaves ties open)."""
    axis = ctx.rng.randrange(-x.rank, x.rank)
    descending = ctx.rng.random() < 0.3
    return f"jnp.argsort({x.name}, axis={axis}, stable=True, descending={descending})"


@kind("topk", lambda v: is_exact_number(v) and v.rank >= 1 and v.shape[-1] >= 1, keeps_exact=True, weight=0.4)
def _topk(ctx, x):
    """Of exact values: lax.top_k orders NaN by its sign bit, which IEEE
    leaves to each implementation for the NaN an op makes."""
    k = ctx.rng.randint(1, min(x.shape[-1], 4))
    return f"lax.top_k({x.name}, {k})[0]" if ctx.jax else f"torch.topk({x.name}, {k}).values"

