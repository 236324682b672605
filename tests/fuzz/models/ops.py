"""The op kinds programs are made of: the registry, helpers, and the
elementwise ops (unary, binary, comparisons, casts, where, clamp).
ops_shape.py and ops_index.py add the others.

A kind renders one statement for its operands: an expression (or lines that
assign `{out}`) in the frontend's spelling. It may draw from ctx.rng and make
inputs of its own (ctx.input); it returns None where it does not apply, and
the frontend's type inference rejects what the framework would. Operand
choice: `takes` is what the first operand must be; each `partners` entry is
an optional further operand taken from the program (a predicate over the
first operand and a candidate; render gets None where none was taken).
"""
import dataclasses

from program import INT_BITS

KINDS = {}
BOTH = ("jax", "torch")


@dataclasses.dataclass
class OpKind:
    name: str
    render: object
    takes: object
    partners: tuple
    frontends: tuple
    keeps_exact: bool  # data movement and the like: exact operands give an exact, NaN-free-if-they-are result
    weight: float

    def result_flags(self, operands, dtype):
        """(exact, special) of the result, from its operands'."""
        present = [v for v in operands if v is not None]
        if self.keeps_exact:
            return all(v.exact for v in present), any(v.special for v in present)
        if dtype in ("f32", "f16", "bf16", "f64"):
            return False, True
        # Integers and booleans are exact, given operands that are (ops that
        # read floats discontinuously take exact ones only).
        return all(v.exact or not v.is_float for v in present), False


def kind(name, takes, partners=(), frontends=BOTH, keeps_exact=False, weight=1.0):
    def register(render):
        KINDS[name] = OpKind(name, render, takes, tuple(partners), frontends, keeps_exact, weight)
        return render
    return register


# ------------------------------------------------------------ predicates

def is_float(v):
    return v.is_float


def is_int(v):
    return v.is_int


def is_bool(v):
    return v.is_bool


def is_number(v):
    return v.is_float or v.is_int


def is_exact_number(v):
    return v.is_int or (v.is_float and v.exact)


def broadcastable(a, b):
    return all(x == y or x == 1 or y == 1 for x, y in zip(reversed(a), reversed(b)))


def same_dtype_broadcastable(first, candidate):
    return candidate.dtype == first.dtype and broadcastable(first.shape, candidate.shape) \
        and len(candidate.shape) <= len(first.shape) + 1


def bool_broadcastable(first, candidate):
    return candidate.is_bool and broadcastable(first.shape, candidate.shape) and candidate.rank <= first.rank


# ------------------------------------------------------------ rendering helpers

def shape_text(shape):
    return "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def broadcast_variant(rng, shape):
    """A shape that broadcasts with `shape` to `shape`: leading dims dropped,
    some dims made 1."""
    shape = list(shape)
    drop = rng.randint(0, len(shape)) if rng.random() < 0.4 else 0
    shape = shape[drop:]
    return tuple(1 if rng.random() < 0.25 else d for d in shape)


def float_literal(rng):
    return rng.choice(["0.5", "-1.5", "2.0", "0.0", "3.0", "-0.25", "1e-3", "100.0"])


def int_literal(rng):
    return str(rng.choice([0, 1, -1, 2, -3, 5, 7, -8, 100]))


def default_fill(ctx, dtype, special_chance=0.2):
    if dtype in ("f32", "f16", "bf16", "f64"):
        return ("float", ctx.rng.random() < special_chance)
    if dtype == "bool":
        return ("bool",)
    return ("int", -20, 20) if ctx.rng.random() < 0.8 else ("int", -3000, 3000)


def partner_operand(ctx, first, fill=None, literal_chance=0.3, literal=None):
    """Text of a second operand for `first`: a scalar literal or a new input
    whose shape broadcasts with first's."""
    if not first.is_bool and ctx.rng.random() < literal_chance:
        if literal is not None:
            return literal
        return float_literal(ctx.rng) if first.is_float else int_literal(ctx.rng)
    shape = broadcast_variant(ctx.rng, first.shape)
    return ctx.input(first.dtype, shape, fill or default_fill(ctx, first.dtype))


def dtype_alias(dtype):
    return "boolean" if dtype == "bool" else dtype


def cast_expr(ctx, text, dtype):
    return f"{text}.astype({dtype_alias(dtype)})" if ctx.jax else f"{text}.to({dtype_alias(dtype)})"


# ------------------------------------------------------------ unary

def _unary(name, jax_fn, torch_fn, takes=is_float, keeps_exact=False, weight=1.0, frontends=BOTH):
    def render(ctx, x):
        fn = jax_fn if ctx.jax else torch_fn
        return fn.format(x=x.name)
    kind(name, takes, frontends=frontends, keeps_exact=keeps_exact, weight=weight)(render)


def _exact_float(v):
    return v.is_float and v.exact


_unary("neg", "-{x}", "-{x}", takes=is_number, keeps_exact=True)
_unary("abs", "jnp.abs({x})", "torch.abs({x})", takes=is_number, keeps_exact=True)
_unary("relu", "jax.nn.relu({x})", "torch.relu({x})", keeps_exact=True)
_unary("exp", "jnp.exp({x})", "torch.exp({x})")
_unary("log", "jnp.log({x})", "torch.log({x})")
_unary("sqrt", "jnp.sqrt({x})", "torch.sqrt({x})")
_unary("rsqrt", "lax.rsqrt({x})", "torch.rsqrt({x})")
_unary("tanh", "jnp.tanh({x})", "torch.tanh({x})")
_unary("sigmoid", "jax.nn.sigmoid({x})", "torch.sigmoid({x})")
_unary("sin", "jnp.sin({x})", "torch.sin({x})", weight=0.5)
_unary("cos", "jnp.cos({x})", "torch.cos({x})", weight=0.5)
_unary("erf", "lax.erf({x})", "torch.erf({x})", weight=0.5)
_unary("log1p", "jnp.log1p({x})", "torch.log1p({x})", weight=0.5)
_unary("expm1", "jnp.expm1({x})", "torch.expm1({x})", weight=0.5)
_unary("square", "jnp.square({x})", "torch.square({x})", takes=is_number, weight=0.5)
_unary("reciprocal", "jnp.reciprocal({x})", "torch.reciprocal({x})", weight=0.5)
_unary("gelu", "jax.nn.gelu({x}, approximate=False)", "F.gelu({x})", weight=0.5)
_unary("gelu_tanh", "jax.nn.gelu({x}, approximate=True)", "F.gelu({x}, approximate='tanh')", weight=0.3)
_unary("silu", "jax.nn.silu({x})", "F.silu({x})", weight=0.5)
_unary("atan", "jnp.arctan({x})", "torch.atan({x})", weight=0.3)
_unary("sinh", "jnp.sinh({x})", "torch.sinh({x})", weight=0.3)
_unary("asinh", "jnp.arcsinh({x})", "torch.asinh({x})", weight=0.3)
# Discontinuous in their operand: exact operands only.
_unary("floor", "jnp.floor({x})", "torch.floor({x})", takes=_exact_float, keeps_exact=True)
_unary("ceil", "jnp.ceil({x})", "torch.ceil({x})", takes=_exact_float, keeps_exact=True)
_unary("round", "jnp.round({x})", "torch.round({x})", takes=_exact_float, keeps_exact=True)
_unary("trunc", "jnp.trunc({x})", "torch.trunc({x})", takes=_exact_float, keeps_exact=True, weight=0.5)
_unary("sign", "jnp.sign({x})", "torch.sign({x})", takes=is_exact_number, keeps_exact=True)
_unary("isfinite", "jnp.isfinite({x})", "torch.isfinite({x})", takes=_exact_float, keeps_exact=True, weight=0.5)
_unary("isnan", "jnp.isnan({x})", "torch.isnan({x})", takes=_exact_float, keeps_exact=True, weight=0.5)
_unary("bitwise_not", "~{x}", "~{x}", takes=lambda v: v.is_int or v.is_bool, keeps_exact=True)


# ------------------------------------------------------------ binary

def _binary(name, jax_fmt, torch_fmt, takes, partner=same_dtype_broadcastable, fill=None, keeps_exact=False,
            weight=1.0, frontends=BOTH, literal_chance=0.3):
    """`fill(ctx, first)`: the fill of a second operand made for this op
    (divisors, shift amounts), None for the default."""
    def render(ctx, a, b):
        other = b.name if b is not None else partner_operand(
            ctx, a, fill(ctx, a) if fill else None, literal_chance=literal_chance if fill is None else 0.0)
        return (jax_fmt if ctx.jax else torch_fmt).format(a=a.name, b=other)
    kind(name, takes, partners=(partner,) if partner else (), frontends=frontends, keeps_exact=keeps_exact,
         weight=weight)(render)


def _nonzero_divisor(ctx, a):
    # PyTorch raises on an integer division by zero; JAX (XLA) defines it.
    if a.is_int and not ctx.jax:
        return ("nonzero", -9, 9)
    return ("int", -9, 9) if a.is_int else ("float", ctx.rng.random() < 0.2)


def _shift_amount(ctx, a):
    bits = INT_BITS[a.dtype]
    return ("int", 0, bits + 1) if ctx.rng.random() < 0.3 else ("int", 0, bits - 1)


def _no_partner_from_program(first, candidate):
    return False


def _float_partner(first, candidate):
    """A divisor from the program: exact floats only (x % d jumps where
    rounding moves d past a multiple). Integer divisors are new inputs or
    literals: XLA folds a divisor it can compute (x ^ x) and crashes
    (SIGFPE) dividing by its zero."""
    return first.is_float and candidate.exact and same_dtype_broadcastable(first, candidate)


_binary("add", "{a} + {b}", "{a} + {b}", is_number, weight=2.0)
_binary("sub", "{a} - {b}", "{a} - {b}", is_number, weight=1.5)
_binary("mul", "{a} * {b}", "{a} * {b}", is_number, weight=1.5)
_binary("div", "{a} / {b}", "{a} / {b}", is_float)
_binary("maximum", "jnp.maximum({a}, {b})", "torch.maximum({a}, {b})", is_number, keeps_exact=True)
_binary("minimum", "jnp.minimum({a}, {b})", "torch.minimum({a}, {b})", is_number, keeps_exact=True)
def _pow_exponent(first, candidate):
    """pow(x, NaN) is 1 at x = 1 only: a rounded base takes no NaN exponent."""
    return same_dtype_broadcastable(first, candidate) and (first.exact or not candidate.special)


def _pow_exponent_fill(ctx, a):
    return ("float", a.exact and ctx.rng.random() < 0.2)


_binary("pow", "jnp.power({a}, {b})", "torch.pow({a}, {b})", is_float, partner=_pow_exponent,
        fill=_pow_exponent_fill, weight=0.5)
_binary("atan2", "jnp.arctan2({a}, {b})", "torch.atan2({a}, {b})", is_float, weight=0.3)
# Python's % and // on integers (the divisor's sign), and on exact floats.
_binary("remainder", "{a} % {b}", "{a} % {b}", is_exact_number, partner=_float_partner, fill=_nonzero_divisor,
        weight=1.5)
_binary("floor_divide", "{a} // {b}", "{a} // {b}", is_exact_number, partner=_float_partner, fill=_nonzero_divisor)
_binary("fmod", "jnp.fmod({a}, {b})", "torch.fmod({a}, {b})", is_exact_number, partner=_float_partner,
        fill=_nonzero_divisor, weight=0.5)
_binary("trunc_divide", "lax.div({a}, {b})", "torch.div({a}, {b}, rounding_mode='trunc')", is_int,
        partner=_no_partner_from_program, fill=_nonzero_divisor, weight=0.5)
_binary("bitwise_and", "{a} & {b}", "{a} & {b}", lambda v: v.is_int or v.is_bool)
_binary("bitwise_or", "{a} | {b}", "{a} | {b}", lambda v: v.is_int or v.is_bool)
_binary("bitwise_xor", "{a} ^ {b}", "{a} ^ {b}", lambda v: v.is_int or v.is_bool)
_binary("shift_left", "{a} << {b}", "{a} << {b}", is_int, partner=_no_partner_from_program, fill=_shift_amount)
_binary("shift_right", "{a} >> {b}", "{a} >> {b}", is_int, partner=_no_partner_from_program, fill=_shift_amount)
_binary("shift_right_logical", "lax.shift_right_logical({a}, {b})", None, is_int,
        partner=_no_partner_from_program, fill=_shift_amount, frontends=("jax",), weight=0.5)

for _name, _op in [("lt", "<"), ("le", "<="), ("gt", ">"), ("ge", ">="), ("eq", "=="), ("ne", "!=")]:
    _binary(_name, "{a} %s {b}" % _op, "{a} %s {b}" % _op, is_exact_number,
            partner=lambda first, c: c.exact and same_dtype_broadcastable(first, c), weight=0.5)
_binary("logical_and", "jnp.logical_and({a}, {b})", "torch.logical_and({a}, {b})", is_bool)


# ------------------------------------------------------------ select, clamp, cast

@kind("where", is_number, partners=(same_dtype_broadcastable, bool_broadcastable), keeps_exact=True, weight=1.5)
def _where(ctx, a, b, cond):
    if cond is None:
        if (a.exact or not a.is_float) and ctx.rng.random() < 0.5:
            literal = float_literal(ctx.rng) if a.is_float else int_literal(ctx.rng)
            cond = f"{a.name} > {literal}"
        else:
            cond = ctx.input("bool", broadcast_variant(ctx.rng, a.shape), ("bool",))
    else:
        cond = cond.name
    other = b.name if b is not None else partner_operand(ctx, a)
    return f"{'jnp' if ctx.jax else 'torch'}.where({cond}, {a.name}, {other})"


@kind("clamp", is_number, keeps_exact=True)
def _clamp(ctx, x):
    literal = float_literal if x.is_float else int_literal
    lo, hi = sorted([literal(ctx.rng), literal(ctx.rng)], key=float)
    form = ctx.rng.choice(["both", "min", "max", "tensor", "lax"] if ctx.jax else ["both", "min", "max", "tensor"])
    if form == "lax":  # StableHLO's clamp itself, a bound a tensor (NaN too) and the other a constant
        lo = partner_operand(ctx, x, literal_chance=0.0)
        return f"lax.clamp({lo}, {x.name}, jnp.full_like({x.name}, {hi}))"
    if form == "tensor":
        lo = partner_operand(ctx, x, literal_chance=0.0)
        return f"jnp.clip({x.name}, min={lo})" if ctx.jax else f"torch.clamp({x.name}, min={lo})"
    args = {"both": f"min={lo}, max={hi}", "min": f"min={lo}", "max": f"max={hi}"}[form]
    return f"jnp.clip({x.name}, {args})" if ctx.jax else f"torch.clamp({x.name}, {args})"


@kind("cast", lambda v: True, keeps_exact=True, weight=1.5)
def _cast(ctx, x):
    targets = ["f32", "f16", "bf16", "i32", "bool"]
    if ctx.x64 or not ctx.jax:
        targets += ["i64", "f64"]
    target = ctx.rng.choice([t for t in targets if t != x.dtype])
    if x.is_float and target not in ("f32", "f16", "bf16", "f64"):
        # Float -> integer jumps with the value: exact values only; PyTorch's
        # conversion of NaN and infinity is the CPU's, not a definition.
        if not x.exact or (x.special and not ctx.jax):
            return None
    return cast_expr(ctx, x.name, target)


import ops_index  # noqa: E402,F401  (registers the indexing kinds)
import ops_shape  # noqa: E402,F401  (registers the shape, reduction and matmul kinds)
