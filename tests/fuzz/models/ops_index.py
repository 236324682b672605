"""Op kinds: indexing. Index values include negative ones and the bounds
(-n, n - 1) wherever the framework takes them (PyTorch's gather, scatter and
index_select raise on negative indices; its x[idx], index_put and
take_along_dim count them from the end), and for JAX also out-of-range ones,
which JAX's gathers clamp and its scatters drop. Where the result would
depend on the order of writes (a replacing scatter hitting one place twice)
the indices are distinct per line."""
from ops import broadcast_variant, default_fill, float_literal, int_literal, is_int, kind


def _indexable(v):
    return v.rank >= 1 and any(d >= 1 for d in v.shape)


def _pick_axis(rng, x):
    return rng.choice([d for d in range(x.rank) if x.shape[d] >= 1])


def _index_range(ctx, n, out_of_range_ok=True):
    """Bounds of index values for a dim of size n."""
    if ctx.jax and out_of_range_ok and ctx.rng.random() < 0.2:
        return ("index", -n - 2, n + 1)
    return ("index", -n, n - 1)


def _small_shape(rng, max_rank=2, min_rank=0):
    return tuple(rng.choice([0, 1, 1, 2, 3, 4]) for _ in range(rng.randint(min_rank, max_rank)))


def _at_axis(x, d, index_text):
    """Subscript text putting `index_text` at axis d: x[i], x[:, i],
    x[..., i, :]."""
    if d == 0:
        return index_text
    if d == x.rank - 1 or d > 2:
        return "..., " + index_text + ", :" * (x.rank - 1 - d)
    return ":, " * d + index_text


def _index_text(ctx, n, shape=None, fill=None):
    """A new index input, or sometimes a literal list: x[..., [-2], :].
    (No 0-d index tensors for PyTorch: torch-mlir crashes on index_put with
    one, and cannot import torch.take with one.)"""
    fill = fill or _index_range(ctx, n)
    if shape is None and ctx.rng.random() < 0.3:
        values = sorted({ctx.rng.randint(-n, n - 1) for _ in range(ctx.rng.randint(1, 3))} | {-1})
        return "[" + ", ".join(map(str, values)) + "]", (len(values),)
    shape = _small_shape(ctx.rng, min_rank=0 if ctx.jax else 1) if shape is None else shape
    return ctx.input(ctx.int_dtype(), shape, fill), shape


@kind("index", _indexable, keeps_exact=True, weight=1.5)
def _index(ctx, x):
    """x[idx] on one axis, or two index tensors at once (x[i, :, j])."""
    d = _pick_axis(ctx.rng, x)
    text, _ = _index_text(ctx, x.shape[d])
    others = [e for e in range(x.rank) if e != d and x.shape[e] >= 1]
    if others and ctx.rng.random() < 0.25:
        e = ctx.rng.choice(others)
        second = ctx.input(ctx.int_dtype(), broadcast_variant(ctx.rng, (2, 3))[-1:], _index_range(ctx, x.shape[e]))
        parts = [":"] * x.rank
        parts[d], parts[e] = text, second
        return f"{x.name}[{', '.join(parts)}]"
    return f"{x.name}[{_at_axis(x, d, text)}]"


def _update_operand(ctx, x, indexed_shape):
    """(text, whether it is a scalar literal) of the values written."""
    if ctx.rng.random() < 0.3:
        return ("True" if x.is_bool else float_literal(ctx.rng) if x.is_float else int_literal(ctx.rng)), True
    return ctx.input(x.dtype, broadcast_variant(ctx.rng, indexed_shape), default_fill(ctx, x.dtype)), False


@kind("index_put", _indexable, keeps_exact=True, weight=1.5)
def _index_put(ctx, x):
    """x.at[idx].set/add/... (JAX); y[idx] = v and index_put (PyTorch)."""
    rng = ctx.rng
    d = _pick_axis(rng, x)
    n = x.shape[d]
    mode = rng.choice(["set", "set", "add", "add"] + ([rng.choice(["mul", "min", "max"])] if ctx.jax and not x.is_bool
                                                       else []))
    if x.is_bool and mode != "set":
        mode = "set"
    if mode == "set":
        # Distinct places (after counting negatives from the end): the last
        # write to a place would otherwise be either one.
        length = rng.randint(0, n)
        text, idx_shape = _index_text(ctx, n, shape=(length,), fill=("perm", 0, n, True))
    else:
        text, idx_shape = _index_text(ctx, n)
    indexed_shape = x.shape[:d] + idx_shape + x.shape[d + 1:]
    value, literal = _update_operand(ctx, x, indexed_shape)
    subscript = _at_axis(x, d, text)
    if ctx.jax:
        return f"{x.name}.at[{subscript}].{'multiply' if mode == 'mul' else mode}({value})"
    if mode == "add" or (d == 0 and rng.random() < 0.5 and not text.startswith("[")):
        if literal:  # index_put takes a tensor
            value = f"torch.tensor({value}, dtype={x.name}.dtype)"
        if d != 0:
            return None
        return f"{x.name}.index_put(({text},), {value}, accumulate={mode == 'add'})"
    return ["{out} = %s.clone()" % x.name, "{out}[%s] = %s" % (subscript, value)]


@kind("take_along", _indexable, keeps_exact=True, weight=1.0)
def _take_along(ctx, x):
    """torch.gather (indices >= 0), take_along_dim, jnp.take_along_axis."""
    rng = ctx.rng
    d = _pick_axis(rng, x)
    n = x.shape[d]
    use_gather = not ctx.jax and rng.random() < 0.5
    if use_gather:  # every dim but d at most x's
        shape = tuple(rng.randint(0, 4) if e == d else rng.randint(0, x.shape[e]) for e in range(x.rank))
        idx = ctx.input(ctx.int_dtype(), shape, ("index", 0, n - 1))
        return f"torch.gather({x.name}, {d}, {idx})"
    shape = tuple(rng.randint(0, 4) if e == d else (1 if rng.random() < 0.3 else x.shape[e]) for e in range(x.rank))
    idx = ctx.input(ctx.int_dtype(), shape, ("index", -n, n - 1))
    axis = d - x.rank if rng.random() < 0.4 else d
    if ctx.jax:
        return f"jnp.take_along_axis({x.name}, {idx}, axis={axis})"
    return f"torch.take_along_dim({x.name}, {idx}, dim={axis})"


@kind("take", _indexable, keeps_exact=True, weight=0.7)
def _take(ctx, x):
    """index_select (PyTorch, indices >= 0), jnp.take, torch.take (flat)."""
    rng = ctx.rng
    if rng.random() < 0.3 and x.size >= 1:
        shape = _small_shape(rng, min_rank=0 if ctx.jax else 1)
        idx = ctx.input(ctx.int_dtype(), shape, ("index", -x.size, x.size - 1))
        return f"jnp.take({x.name}, {idx})" if ctx.jax else f"torch.take({x.name}, {idx})"
    d = _pick_axis(rng, x)
    n = x.shape[d]
    if ctx.jax:
        idx = ctx.input(ctx.int_dtype(), _small_shape(rng), ("index", -n, n - 1))
        return f"jnp.take({x.name}, {idx}, axis={d})"
    idx = ctx.input(ctx.int_dtype(), (rng.randint(0, 4),), ("index", 0, n - 1))
    return f"torch.index_select({x.name}, {d}, {idx})"


@kind("scatter", lambda v: _indexable(v) and not v.is_bool, keeps_exact=True, weight=1.0)
def _scatter(ctx, x):
    """torch.scatter / scatter_add / scatter_reduce / index_add;
    jnp.put_along_axis."""
    rng = ctx.rng
    d = _pick_axis(rng, x)
    n = x.shape[d]
    form = "put" if ctx.jax else rng.choice(["scatter", "scatter_add", "scatter_reduce", "index_add"])
    if form == "index_add":
        count = rng.randint(0, 4)
        idx = ctx.input("i64", (count,), ("index", 0, n - 1))
        shape = x.shape[:d] + (count,) + x.shape[d + 1:]
        src = ctx.input(x.dtype, shape, default_fill(ctx, x.dtype))
        return f"{x.name}.index_add({d}, {idx}, {src})"
    unique = form in ("scatter", "put")
    shape = tuple(rng.randint(0, n) if e == d else rng.randint(0, x.shape[e]) for e in range(x.rank))
    negative = ctx.jax
    fill = ("perm", d, n, negative) if unique else ("index", 0, n - 1)
    idx = ctx.input("i64" if not ctx.jax else ctx.int_dtype(), shape, fill)
    src = ctx.input(x.dtype, shape, default_fill(ctx, x.dtype))
    if form == "put":
        return f"jnp.put_along_axis({x.name}, {idx}, {src}, axis={d}, inplace=False)"
    if form == "scatter":
        return f"torch.scatter({x.name}, {d}, {idx}, {src})"
    if form == "scatter_add":
        return f"torch.scatter_add({x.name}, {d}, {idx}, {src})"
    reduce = rng.choice(["sum", "prod", "amax", "amin", "mean"])
    include_self = rng.random() < 0.5
    return f"torch.scatter_reduce({x.name}, {d}, {idx}, {src}, '{reduce}', include_self={include_self})"


@kind("one_hot", is_int, weight=0.4)
def _one_hot(ctx, x):
    n = ctx.rng.randint(1, 5)
    if ctx.jax:  # values outside [0, n) give a row of zeros
        return f"jax.nn.one_hot({x.name}, {n}, dtype={ctx.rng.choice(['f32', 'i32', 'boolean'])})"
    return f"F.one_hot(torch.clamp({x.name}, 0, {n - 1}).to(i64), {n})"


@kind("dynamic_slice", _indexable, frontends=("jax",), keeps_exact=True, weight=0.7)
def _dynamic_slice(ctx, x):
    """Start indices from inputs, out of range too: JAX moves them so that
    the slice fits."""
    rng = ctx.rng
    dtype = ctx.int_dtype()
    # All inputs or all literals: dynamic_slice takes starts of one type,
    # and a literal's is i64 under jax_enable_x64 (the float64 shadow).
    from_inputs = rng.random() < 0.8
    starts = [ctx.input(dtype, (), ("index", -n - 1, n + 1)) if from_inputs else str(rng.randint(-n, n))
              for n in x.shape]
    sizes = tuple(rng.randint(0, n) for n in x.shape)
    if rng.random() < 0.5:
        update = ctx.input(x.dtype, sizes, default_fill(ctx, x.dtype))
        return f"lax.dynamic_update_slice({x.name}, {update}, ({', '.join(starts)},))"
    return f"lax.dynamic_slice({x.name}, ({', '.join(starts)},), {sizes})"


@kind("embedding", lambda v: v.rank == 2 and v.shape[0] >= 1, frontends=("torch",), keeps_exact=True, weight=0.4)
def _embedding(ctx, x):
    idx = ctx.input(ctx.int_dtype(), _small_shape(ctx.rng), ("index", 0, x.shape[0] - 1))
    return f"F.embedding({idx}, {x.name})"


@kind("masked_fill", lambda v: v.rank >= 0, frontends=("torch",), keeps_exact=True, weight=0.4)
def _masked_fill(ctx, x):
    mask = ctx.input("bool", broadcast_variant(ctx.rng, x.shape), ("bool",))
    value = "True" if x.is_bool else float_literal(ctx.rng) if x.is_float else int_literal(ctx.rng)
    return f"{x.name}.masked_fill({mask}, {value})"
