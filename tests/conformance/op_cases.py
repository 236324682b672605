"""The conformance cases: every jax.lax primitive that runs on one device, and
the jnp / jax.nn functions that lower to a StableHLO form of their own (or to
a pattern brt fuses), each tried on every dtype of op_inputs.DTYPES.

A case gives its function, how to make its inputs for a dtype and a shape
variant, and its tolerance class (see generate.TOLERANCES). Dtypes JAX does
not accept for an op (its trace raises) are marked as such in the table, so a
case lists all dtypes unless an input must be of one kind for the op to make
sense (e.g. a float exponent).

Not covered, since they need more than one device or host I/O: the collectives
(psum, pmax, pmin, all_gather, all_to_all, psum_scatter, ppermute, pshuffle,
pswapaxes, axis_index, ragged_all_to_all; tests/distributed runs them), tokens
(after_all, create_token, psend, precv), and sharding annotations
(with_sharding_constraint, pcast, pbroadcast).
"""
import dataclasses
from typing import Callable

import numpy as np

import jax
import jax.numpy as jnp
from jax import lax

from op_inputs import COMPLEX, DTYPES, FLOATS, INTS, SIGNED, kind

ALL = tuple(DTYPES)
REAL = FLOATS + INTS + ("bool",)
INEXACT = FLOATS + COMPLEX

# The shape variants of an elementwise op: a matrix, a scalar, an empty array.
ELEMENTWISE = {"3x4": (3, 4), "rank-0": (), "0-sized": (0, 3)}


@dataclasses.dataclass
class Case:
    name: str  # the table's row: the function as one calls it
    section: str
    fn: Callable  # fn(*inputs), or where `factory`, fn(dtype name, variant) -> that function
    inputs: Callable  # inputs(gen, dtype, variant) -> list of arrays
    variants: dict  # label -> variant (a shape, or what inputs and fn need)
    dtypes: tuple = ALL
    tol: str = "arith"
    factory: bool = False

    def function(self, dtype, variant):
        return self.fn(dtype, variant) if self.factory else self.fn


CASES = []
_section = ""


def section(title):
    global _section
    _section = title


def case(name, fn, inputs, variants=ELEMENTWISE, **kw):
    CASES.append(Case(name, _section, fn, inputs, variants, **kw))


def unary(name, fn, domain="any", **kw):
    case(name, fn, lambda g, dt, s: [getattr(g, domain)(dt, s)], **kw)


def binary(name, fn, a="any", b="any", ties=False, **kw):
    def inputs(g, dt, s):
        x, y = getattr(g, a)(dt, s), getattr(g, b)(dt, s)
        return [x, g.like(x, y) if ties else y]
    case(name, fn, inputs, **kw)


def lowest(dtype):
    """The identity of max: -inf, or the dtype's least value."""
    dtype = np.dtype(dtype)
    if kind(dtype) == "bool":
        return np.bool_(False)
    if kind(dtype) in ("signed", "unsigned"):
        return np.iinfo(dtype).min
    return -np.inf


def highest(dtype):
    dtype = np.dtype(dtype)
    if kind(dtype) == "bool":
        return np.bool_(True)
    if kind(dtype) in ("signed", "unsigned"):
        return np.iinfo(dtype).max
    return np.inf


# --------------------------------------------------------------------------
section("Elementwise, one operand")

unary("lax.abs", lax.abs)
unary("lax.neg", lax.neg)
unary("lax.sign", lax.sign)
unary("lax.floor", lax.floor)
unary("lax.ceil", lax.ceil)
unary("lax.round (away from zero)", lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO))
unary("lax.round (to nearest even)", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN))
unary("lax.is_finite", lax.is_finite, "special")
unary("lax.exp", lax.exp, tol="trans")
unary("lax.exp2", lax.exp2, tol="trans")
unary("lax.expm1", lax.expm1, tol="trans")
unary("lax.log", lax.log, "positive", tol="trans")
unary("lax.log1p", lax.log1p, "positive", tol="trans")
unary("lax.sqrt", lax.sqrt, "positive", tol="trans")
unary("lax.rsqrt", lax.rsqrt, "positive", tol="trans")
unary("lax.cbrt", lax.cbrt, tol="trans")
unary("lax.logistic", lax.logistic, tol="trans")
unary("lax.tanh", lax.tanh, tol="trans")
unary("lax.sin", lax.sin, tol="trans")
unary("lax.cos", lax.cos, tol="trans")
unary("lax.tan", lax.tan, "unit", tol="trans")
unary("lax.asin", lax.asin, "unit", tol="trans")
unary("lax.acos", lax.acos, "unit", tol="trans")
unary("lax.atan", lax.atan, tol="trans")
unary("lax.sinh", lax.sinh, tol="trans")
unary("lax.cosh", lax.cosh, tol="trans")
unary("lax.asinh", lax.asinh, tol="trans")
unary("lax.acosh", lambda x: lax.acosh(x + 1), "positive", tol="trans")
unary("lax.atanh", lax.atanh, "unit", tol="trans")
unary("lax.erf", lax.erf, tol="trans")
unary("lax.erfc", lax.erfc, tol="trans")
unary("lax.erf_inv", lax.erf_inv, "unit", tol="special")
unary("lax.lgamma", lax.lgamma, "positive", tol="special")
unary("lax.digamma", lax.digamma, "positive", tol="special")
unary("lax.bessel_i0e", lax.bessel_i0e, tol="special")
unary("lax.bessel_i1e", lax.bessel_i1e, tol="special")
unary("lax.square", lax.square)
unary("lax.reciprocal", lax.reciprocal, "nonzero")
unary("lax.integer_pow (x^3)", lambda x: lax.integer_pow(x, 3), "small")
unary("lax.integer_pow (x^-2)", lambda x: lax.integer_pow(x, -2), "nonzero")
unary("lax.bitwise_not", lax.bitwise_not)
unary("lax.population_count", lax.population_count)
unary("lax.clz", lax.clz)
unary("lax.real", lax.real)
unary("lax.imag", lax.imag)
unary("lax.conj", lax.conj)
unary("lax.reduce_precision (e5m10)", lambda x: lax.reduce_precision(x, 5, 10), "special", tol="exact")
unary("lax.stop_gradient", lax.stop_gradient, tol="exact")

# --------------------------------------------------------------------------
section("Elementwise, two or more operands")

binary("lax.add", lax.add)
binary("lax.sub", lax.sub)
binary("lax.mul", lax.mul)
binary("lax.div", lax.div, b="nonzero")
binary("lax.rem", lax.rem, b="nonzero")
binary("lax.pow", lax.pow, "positive", "small", tol="trans")
binary("lax.max", lax.max, ties=True)
binary("lax.min", lax.min, ties=True)
binary("lax.atan2", lax.atan2, tol="trans")
binary("lax.nextafter", lax.nextafter, ties=True, tol="exact")
binary("lax.bitwise_and", lax.bitwise_and)
binary("lax.bitwise_or", lax.bitwise_or)
binary("lax.bitwise_xor", lax.bitwise_xor)
binary("lax.shift_left", lax.shift_left, b="shift")
binary("lax.shift_right_logical", lax.shift_right_logical, b="shift")
binary("lax.shift_right_arithmetic", lax.shift_right_arithmetic, b="shift")
for _cmp in ("eq", "ne", "lt", "le", "gt", "ge"):
    binary(f"lax.{_cmp}", getattr(lax, _cmp), ties=True)
binary("lax.eq (NaN, inf)", lax.eq, "special", "special", ties=True)
binary("lax.lt (NaN, inf)", lax.lt, "special", "special", ties=True)
binary("lax.mulhi", lax.mulhi)
binary("lax.complex", lax.complex)
binary("lax.igamma", lax.igamma, "positive", "positive", tol="special")
binary("lax.igammac", lax.igammac, "positive", "positive", tol="special")
binary("lax.igamma_grad_a", lax.igamma_grad_a, "positive", "positive", tol="special")
binary("lax.random_gamma_grad", lax.random_gamma_grad, "positive", "positive", tol="special")
binary("lax.zeta", lambda x, q: lax.zeta(x + 1, q), "positive", "positive", tol="special")


def _polygamma_inputs(g, dt, s):
    return [g.index(dt, s, 3), g.positive(dt, s)]  # orders 0, 1, 2


case("lax.polygamma", lax.polygamma, _polygamma_inputs, tol="special")


def _betainc_inputs(g, dt, s):
    return [g.positive(dt, s, 0.5, 3), g.positive(dt, s, 0.5, 3), g.positive(dt, s, 0.05, 0.95)]


case("lax.betainc", lax.betainc, _betainc_inputs, tol="special")


def _clamp_inputs(g, dt, s):
    x = g.any(dt, s)
    lo, hi = sorted([g.any(dt, ()), g.any(dt, ())])  # scalar bounds, as jnp.clip writes them
    return [np.asarray(lo, dt), x, np.asarray(hi, dt)]


case("lax.clamp", lax.clamp, _clamp_inputs)
case("lax.select_n (bool)", lax.select_n, lambda g, dt, s: [g.bool(s), g.any(dt, s), g.any(dt, s)], tol="exact")
case("lax.select_n (i32, 3 cases)", lax.select_n,
     lambda g, dt, s: [g.index(np.int32, s, 3), g.any(dt, s), g.any(dt, s), g.any(dt, s)], tol="exact")

# --------------------------------------------------------------------------
section("Floats at NaN, ±inf, ±0, halves and overflow")

# Every float op on these values (each pair of them for two operands), where
# libraries' edge handling differs: NaN propagation, signed zeros, poles,
# rounding of halves, overflow to infinity (exp(100) in f32, 100² in f16).
EDGES = [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.5, -2.5, 100.0, -100.0]


def _edges(g, dt, s):
    return [np.array(EDGES, dt)]


def _edge_pairs(g, dt, s):
    a, b = np.meshgrid(np.array(EDGES, dt), np.array(EDGES, dt))
    return [a, b]


for _name in ("abs", "neg", "sign", "floor", "ceil", "square", "reciprocal"):
    case(f"lax.{_name} (edges)", getattr(lax, _name), _edges, {"9": None}, dtypes=FLOATS, tol="exact")
case("lax.round (edges, away from zero)", lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO), _edges,
     {"9": None}, dtypes=FLOATS, tol="exact")
case("lax.round (edges, to nearest even)", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), _edges,
     {"9": None}, dtypes=FLOATS, tol="exact")
for _name in ("exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "cbrt", "logistic", "tanh", "sin", "cos", "tan", "atan",
              "sinh", "cosh", "asin", "acos", "asinh", "acosh", "atanh", "erf", "erfc"):
    case(f"lax.{_name} (edges)", getattr(lax, _name), _edges, {"9": None}, dtypes=FLOATS, tol="trans")
for _name in ("lgamma", "digamma", "erf_inv"):
    case(f"lax.{_name} (edges)", getattr(lax, _name), _edges, {"9": None}, dtypes=FLOATS, tol="special")
for _name in ("add", "sub", "mul", "div", "rem", "max", "min"):
    case(f"lax.{_name} (edges)", getattr(lax, _name), _edge_pairs, {"9x9": None}, dtypes=FLOATS,
         tol="exact" if _name in ("max", "min") else "arith")
for _name in ("pow", "atan2"):
    case(f"lax.{_name} (edges)", getattr(lax, _name), _edge_pairs, {"9x9": None}, dtypes=FLOATS, tol="trans")
case("lax.nextafter (edges)", lax.nextafter, _edge_pairs, {"9x9": None}, dtypes=FLOATS, tol="exact")
# XLA saturates a float out of an integer's range and makes NaN 0, as brt does.
for _target in ("i8", "i32", "i64", "u8", "u32", "u64", "bool", "f16", "bf16"):
    case(f"lax.convert_element_type → {_target} (edges)", lambda x, t=_target: lax.convert_element_type(x, DTYPES[t]),
         _edges, {"9": None}, dtypes=FLOATS, tol="exact")

# --------------------------------------------------------------------------
section("Conversions")


def _convert_inputs(target):
    """Values every conversion to `target` defines: within its range (a
    float out of an integer's range is implementation-defined), with
    fractions, and NaN and infinities where both sides are floats."""
    def inputs(g, dt, s):
        if kind(dt) == "float" and kind(DTYPES[target]) in ("float", "complex"):
            return [g.special(dt, s)]
        lo = 0 if kind(DTYPES[target]) == "unsigned" else -100
        if kind(dt) in ("float", "complex"):
            return [g.rng.uniform(lo, 100, s).astype(dt)]
        if kind(dt) == "bool":
            return [g.bool(s)]
        info = np.iinfo(dt)
        return [g.rng.integers(max(lo, info.min), min(100, info.max), s, endpoint=True).astype(dt)]
    return inputs


for _target in DTYPES:
    case(f"lax.convert_element_type → {_target}",
         lambda x, t=_target: lax.convert_element_type(x, DTYPES[t]), _convert_inputs(_target), tol="exact")

_SAME_WIDTH = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}
_OTHER_SIGN = {np.dtype(a): np.dtype(b) for a, b in [(np.int8, np.uint8), (np.int16, np.uint16), (np.int32, np.uint32),
                                                       (np.int64, np.uint64)]}
_OTHER_SIGN.update({v: k for k, v in _OTHER_SIGN.items()})


def _bitcast_same_width(x):
    """Floats to the signed integer of their width, integers to the other signedness."""
    target = _OTHER_SIGN.get(np.dtype(x.dtype), _SAME_WIDTH[np.dtype(x.dtype).itemsize])
    return lax.bitcast_convert_type(x, target)


case("lax.bitcast_convert_type (same width)", _bitcast_same_width, lambda g, dt, s: [g.special(dt, s)],
     dtypes=FLOATS + INTS, tol="exact")  # JAX bitcasts bools and complex numbers only to their own type
case("lax.bitcast_convert_type (→ u8)", lambda x: lax.bitcast_convert_type(x, np.uint8),
     lambda g, dt, s: [g.special(dt, s)], tol="exact")


def _from_bytes_inputs(g, dt, s):
    """Bytes of values of dtype `dt` (finite ones: NaN payloads are not compared)."""
    x = g.any(dt, s)
    return [np.ascontiguousarray(x).view(np.uint8).reshape(*s, np.dtype(dt).itemsize)]


def _from_bytes(dt, variant):
    """u8[..., width] to the column's dtype (u8[...] where the width is 1)."""
    target = DTYPES[dt]
    return lambda b: lax.bitcast_convert_type(b if target.itemsize > 1 else b[..., 0], target)


case("lax.bitcast_convert_type (u8 →)", _from_bytes, _from_bytes_inputs, tol="exact", factory=True)

# --------------------------------------------------------------------------
section("Data movement")

case("lax.broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, *x.shape[:1], 3, *x.shape[1:]), (1, 3)[:x.ndim]),
     lambda g, dt, s: [g.any(dt, s)], {"4": (4,), "rank-0": (), "0-sized": (0,)}, tol="exact")
case("lax.reshape", lambda x: lax.reshape(x, (x.size // 2, 2) if x.ndim else (1, 1)),
     lambda g, dt, s: [g.any(dt, s)], {"3x4": (3, 4), "rank-0": (), "0-sized": (0, 4)}, tol="exact")
case("lax.squeeze", lambda x: lax.squeeze(x, (1,)), lambda g, dt, s: [g.any(dt, s)],
     {"3x1x4": (3, 1, 4), "0-sized": (0, 1, 2)}, tol="exact")
case("lax.transpose", lambda x: lax.transpose(x, (2, 0, 1)), lambda g, dt, s: [g.any(dt, s)],
     {"2x3x4": (2, 3, 4), "0-sized": (2, 0, 3)}, tol="exact")
case("lax.rev", lambda x: lax.rev(x, tuple(range(x.ndim))), lambda g, dt, s: [g.any(dt, s)], tol="exact")
case("lax.slice (strided)", lambda x: lax.slice(x, (1, 0), (5, 6), (2, 4)), lambda g, dt, s: [g.any(dt, s)],
     {"5x7": (5, 7)}, tol="exact")
case("lax.split", lambda x: lax.split(x, (1, 3, 0), axis=1), lambda g, dt, s: [g.any(dt, s)],
     {"2x4": (2, 4), "0-sized": (0, 4)}, tol="exact")
case("lax.concatenate", lambda a, b, c: lax.concatenate([a, b, c], 1),
     lambda g, dt, s: [g.any(dt, (s[0], 2)), g.any(dt, s), g.any(dt, (s[0], 1))],
     {"3x4": (3, 4), "0-sized": (0, 4), "0-sized operand": (3, 0)}, tol="exact")
case("lax.pad (low, high, interior, negative)",
     lambda x, v: lax.pad(x, v, ((1, 2, 1), (-1, 0, 0))), lambda g, dt, s: [g.any(dt, s), g.any(dt, ())],
     {"3x4": (3, 4), "0-sized": (0, 4)}, tol="exact")
case("lax.iota", lambda dt, v: (lambda: lax.iota(DTYPES[dt], 5)), lambda g, dt, s: [], {"5": None}, tol="exact",
     factory=True)
case("lax.broadcasted_iota", lambda dt, v: (lambda: lax.broadcasted_iota(DTYPES[dt], (2, 3), 1)),
     lambda g, dt, s: [], {"2x3": None}, tol="exact", factory=True)


def _starts(g):
    """Start indices of a 2x3 window of a 4x5 array: one in range, one past
    the end (clamped)."""
    return [np.int32(g.rng.integers(0, 3)), np.int32(g.rng.integers(3, 9))]


case("lax.dynamic_slice", lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3)),
     lambda g, dt, s: [g.any(dt, s), *_starts(g)], {"4x5": (4, 5)}, tol="exact")
case("lax.dynamic_update_slice", lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j)),
     lambda g, dt, s: [g.any(dt, s), g.any(dt, (2, 3)), *_starts(g)], {"4x5": (4, 5)}, tol="exact")
case("lax.dynamic_slice (index dtype)", lambda x, i: lax.dynamic_slice(x, (i, i), (2, 2)),
     lambda g, dt, s: [g.any(np.float32, (4, 5)), g.index(dt, (), 3)], {"4x5": (4, 5)}, dtypes=INTS, tol="exact")


def _optimization_barrier(x, y):
    a, b = lax.optimization_barrier((x, y))
    return a, b


case("lax.optimization_barrier", _optimization_barrier, lambda g, dt, s: [g.any(dt, s), g.any(dt, s)], tol="exact")
case("lax.composite", lax.composite(lambda x: lax.rev(x, (0,)), "conformance.reverse"),
     lambda g, dt, s: [g.any(dt, s)], {"3x4": (3, 4)}, tol="exact")

# --------------------------------------------------------------------------
section("Indexing")

_GATHER_ROWS = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
_SCATTER_ROWS = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                            scatter_dims_to_operand_dims=(0,))


def _gather_inputs(g, dt, s):
    return [g.any(dt, (5, 3)), g.index(np.int32, (s, 1), 5)]


case("lax.gather (rows)", lambda x, i: lax.gather(x, i, _GATHER_ROWS, (1, 3)), _gather_inputs,
     {"4 rows": 4, "0 rows": 0}, tol="exact")
case("lax.gather (clip, out of range)",
     lambda x, i: lax.gather(x, i * 3 - 4, _GATHER_ROWS, (1, 3), mode=lax.GatherScatterMode.CLIP),
     _gather_inputs, {"4 rows": 4}, tol="exact")
case("lax.gather (fill, out of range)",
     lambda x, i: lax.gather(x, i * 3 - 4, _GATHER_ROWS, (1, 3), mode=lax.GatherScatterMode.FILL_OR_DROP),
     _gather_inputs, {"4 rows": 4}, tol="exact")
case("lax.gather (index dtype)", lambda x, i: lax.gather(x, i, _GATHER_ROWS, (1, 3)),
     lambda g, dt, s: [g.any(np.float32, (5, 3)), g.index(dt, (s, 1), 5)], {"4 rows": 4}, dtypes=INTS, tol="exact")


def _scatter_inputs(g, dt, s):
    """Distinct rows: which of two updates of a row a replacing scatter keeps is unspecified."""
    return [g.any(dt, (5, 3)), g.perm(5)[:s].reshape(s, 1), g.any(dt, (s, 3))]


def _scatter_small_inputs(g, dt, s):
    """Duplicate indices and small values: products and sums of several
    updates stay exact in every dtype but the low-precision floats."""
    return [g.small(dt, (5, 3)), g.index(np.int32, (s, 1), 5), g.small(dt, (s, 3))]


case("lax.scatter (replace, unique)", lambda x, i, u: lax.scatter(x, i, u, _SCATTER_ROWS, unique_indices=True),
     _scatter_inputs, {"3 rows": 3, "0 rows": 0}, tol="exact")
for _name, _fn in [("scatter_add", lax.scatter_add), ("scatter_sub", lax.scatter_sub), ("scatter_mul", lax.scatter_mul),
                   ("scatter_min", lax.scatter_min), ("scatter_max", lax.scatter_max)]:
    case(f"lax.{_name} (duplicates)", lambda x, i, u, f=_fn: f(x, i, u, _SCATTER_ROWS), _scatter_small_inputs,
         {"6 rows": 6, "0 rows": 0}, tol="accum")
case("lax.scatter_apply (x²)",
     lambda x, i: lax.scatter_apply(x, i, lambda v: v * v, _SCATTER_ROWS, update_shape=(2, 3), unique_indices=True),
     lambda g, dt, s: [g.small(dt, (5, 3)), g.perm(5)[:2].reshape(2, 1)], {"2 rows": None})
case("lax.scatter_add (index dtype)", lambda x, i, u: lax.scatter_add(x, i, u, _SCATTER_ROWS),
     lambda g, dt, s: [g.small(np.float32, (5, 3)), g.index(dt, (4, 1), 5), g.small(np.float32, (4, 3))],
     {"4 rows": None}, dtypes=INTS, tol="accum")
case("x[idx] (negative indices)", lambda x, i: x[i - 2],
     lambda g, dt, s: [g.any(dt, (5, 3)), g.index(np.int32, (s,), 5)], {"4 rows": 4}, tol="exact")
case("jnp.take_along_axis", lambda x, i: jnp.take_along_axis(x, i, axis=1),
     lambda g, dt, s: [g.any(dt, (3, 5)), g.index(np.int32, (3, s), 5)], {"3x4": 4}, tol="exact")
case("x.at[idx].set (negative indices)", lambda x, i, u: x.at[i - 5].set(u),
     lambda g, dt, s: [g.any(dt, (5, 3)), g.perm(5)[:s], g.any(dt, (s, 3))], {"3 rows": 3}, tol="exact")
case("jnp.bincount (length 6)", lambda i, w: jnp.bincount(i, w, length=6),
     lambda g, dt, s: [g.index(np.int32, s, 6), g.small(dt, s)], {"10": (10,), "0-sized": (0,)}, tol="accum")

# --------------------------------------------------------------------------
section("Reductions and scans")

# (shape, axes): along the last axis, over every axis, and over an empty axis
# (which gives the reducer's identity).
REDUCE = {"3x4 axis 1": ((3, 4), (1,)), "all axes": ((3, 4), (0, 1)), "0-sized axis": ((0, 3), (0,))}
for _name in ("reduce_sum", "reduce_prod", "reduce_max", "reduce_min", "reduce_and", "reduce_or", "reduce_xor"):
    case(f"lax.{_name}", lambda dt, v, f=getattr(lax, _name): (lambda x: f(x, v[1])),
         (lambda g, dt, v: [g.small(dt, v[0])]) if _name == "reduce_prod" else (lambda g, dt, v: [g.any(dt, v[0])]),
         REDUCE, tol="accum" if _name in ("reduce_sum", "reduce_prod") else "exact", factory=True)
for _name in ("argmax", "argmin"):
    case(f"lax.{_name}", lambda x, f=getattr(lax, _name): f(x, 1, np.int32), lambda g, dt, s: [g.special(dt, s)],
         {"3x5": (3, 5)}, tol="exact")


def _reduce_variadic(x, y):
    """A two-operand reduce whose body is neither argmax's nor argmin's."""
    return lax.reduce((x, y), (np.zeros((), x.dtype), np.zeros((), y.dtype)),
                      lambda a, b: (lax.max(a[0], b[0]), lax.min(a[1], b[1])), (1,))


case("lax.reduce (two operands)", _reduce_variadic, lambda g, dt, s: [g.any(dt, s), g.any(dt, s)], {"3x4": (3, 4)},
     tol="exact")

_WINDOW = dict(window_dimensions=(2, 3), window_strides=(1, 2), padding=((0, 1), (1, 1)))
_WINDOW_DILATED = dict(window_dimensions=(2, 2), window_strides=(2, 1), padding=((1, 0), (0, 2)),
                       base_dilation=(2, 1), window_dilation=(1, 2))
WINDOWS = {"4x6": ((4, 6), _WINDOW), "dilated": ((4, 6), _WINDOW_DILATED)}


def _reduce_window(op, init):
    return lambda dt, v: (lambda x: lax.reduce_window(x, init(x.dtype), op, **v[1]))


case("lax.reduce_window (sum)", _reduce_window(lax.add, lambda d: np.zeros((), d)),
     lambda g, dt, v: [g.small(dt, v[0])], WINDOWS, tol="accum", factory=True)
case("lax.reduce_window (max)", _reduce_window(lax.max, lambda d: np.asarray(lowest(d), d)),
     lambda g, dt, v: [g.any(dt, v[0])], WINDOWS, tol="exact", factory=True)
case("lax.reduce_window (min)", _reduce_window(lax.min, lambda d: np.asarray(highest(d), d)),
     lambda g, dt, v: [g.any(dt, v[0])], WINDOWS, tol="exact", factory=True)
case("lax.reduce_window (mul)", _reduce_window(lax.mul, lambda d: np.ones((), d)),
     lambda g, dt, v: [g.small(dt, v[0])], WINDOWS, tol="accum", factory=True)


def _max_pool_grad(x, t):
    """select_and_scatter_add: the vjp of a max pool."""
    _, vjp = jax.vjp(lambda x: lax.reduce_window(x, np.asarray(lowest(x.dtype), x.dtype), lax.max, (2, 2), (2, 1),
                                                 "VALID"), x)
    return vjp(t)[0]


case("select_and_scatter_add (max pool vjp)", _max_pool_grad,
     lambda g, dt, s: [g.any(dt, s), g.small(dt, (s[0] // 2, s[1] - 1))], {"4x5": (4, 5)}, dtypes=INEXACT,
     tol="accum")  # integers have no gradient (float0)

SCAN = {"3x4 axis 1": ((3, 4), False), "reverse": ((3, 4), True), "0-sized": ((0, 4), False)}
for _name in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"):
    case(f"lax.{_name}", lambda dt, v, f=getattr(lax, _name): (lambda x: f(x, axis=1, reverse=v[1])),
         lambda g, dt, v: [g.small(dt, v[0])], SCAN, tol="trans" if _name == "cumlogsumexp" else "accum",
         factory=True)
case("lax.associative_scan (max)", lambda x: lax.associative_scan(lax.max, x, axis=1),
     lambda g, dt, s: [g.any(dt, s)], {"3x5": (3, 5)}, tol="exact")

# --------------------------------------------------------------------------
section("Sorting")

SORT = {"3x5": (3, 5), "rank-1": (7,), "0-sized": (0, 4)}
case("lax.sort", lambda x: lax.sort(x, dimension=-1), lambda g, dt, s: [g.special(dt, s)], SORT, tol="exact")
case("lax.sort (2 operands, 1 key)", lambda k, v: lax.sort((k, v), dimension=0, num_keys=1),
     lambda g, dt, s: [g.small(dt, s), g.any(dt, s)], SORT, tol="exact")
case("lax.sort (2 keys)", lambda k, v: lax.sort((k, v), dimension=0, num_keys=2),
     lambda g, dt, s: [g.small(dt, s), g.any(dt, s)], {"3x5": (3, 5)}, tol="exact")
case("lax.sort_key_val", lambda k, v: lax.sort_key_val(k, v, dimension=1),
     lambda g, dt, s: [g.small(dt, s), g.any(dt, s)], {"3x5": (3, 5)}, tol="exact")
case("lax.top_k (k=3)", lambda x: lax.top_k(x, 3), lambda g, dt, s: [g.special(dt, s)], {"3x6": (3, 6), "rank-1": (5,)},
     tol="exact")
case("lax.approx_max_k (k=2)", lambda x: lax.approx_max_k(x, 2), lambda g, dt, s: [g.any(dt, s)], {"3x6": (3, 6)},
     tol="exact")
case("jnp.argsort", lambda x: jnp.argsort(x, axis=0), lambda g, dt, s: [g.small(dt, s)], {"6x3": (6, 3)}, tol="exact")
case("jnp.median", lambda x: jnp.median(x, axis=1), lambda g, dt, s: [g.any(dt, s)], {"3x5": (3, 5)})
case("jnp.searchsorted", lambda a, v: jnp.searchsorted(a, v), lambda g, dt, s: [np.sort(g.any(dt, (8,))), g.any(dt, s)],
     {"3x4": (3, 4)}, tol="exact")

# --------------------------------------------------------------------------
section("Linear algebra, convolution, FFT")

DOT = {"3x4·4x5": ((3, 4), (4, 5), (((1,), (0,)), ((), ()))),
       "batched": ((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))),
       "0-sized contraction": ((3, 0), (0, 5), (((1,), (0,)), ((), ()))),
       "0-sized rows": ((0, 4), (4, 5), (((1,), (0,)), ((), ())))}
case("lax.dot_general", lambda dt, v: (lambda a, b: lax.dot_general(a, b, v[2])),
     lambda g, dt, v: [g.any(dt, v[0]), g.any(dt, v[1])], DOT, tol="accum", factory=True)
case("lax.dot_general (i8 → i32)",
     lambda a, b: lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=np.int32),
     lambda g, dt, s: [g.any(dt, (3, 4)), g.any(dt, (4, 5))], {"3x4·4x5": None}, dtypes=("i8", "u8"), tol="exact")

_NCHW = ("NCHW", "OIHW", "NCHW")
CONV = {"3x3 same": ((1, 2, 5, 5), (3, 2, 3, 3), dict(window_strides=(1, 1), padding="SAME")),
        "strided, dilated": ((2, 2, 6, 7), (3, 2, 2, 3), dict(window_strides=(2, 1), padding=((1, 1), (0, 1)),
                                                               rhs_dilation=(2, 1))),
        "lhs dilation": ((1, 2, 4, 4), (2, 2, 3, 3), dict(window_strides=(1, 1), padding=((2, 2), (1, 2)),
                                                          lhs_dilation=(2, 2))),
        "grouped": ((1, 4, 5, 5), (4, 2, 3, 3), dict(window_strides=(1, 1), padding="VALID", feature_group_count=2)),
        "0-sized batch": ((0, 2, 5, 5), (3, 2, 3, 3), dict(window_strides=(1, 1), padding="SAME"))}
case("lax.conv_general_dilated",
     lambda dt, v: (lambda x, w: lax.conv_general_dilated(x, w, dimension_numbers=_NCHW, **v[2])),
     lambda g, dt, v: [g.small(dt, v[0]), g.small(dt, v[1])], CONV, tol="accum", factory=True)
case("jnp.convolve", lambda a, b: jnp.convolve(a, b, mode="same"), lambda g, dt, s: [g.small(dt, s), g.small(dt, (3,))],
     {"8": (8,)}, tol="accum")
case("lax.ragged_dot", lambda a, b, n: lax.ragged_dot(a, b, n),
     lambda g, dt, s: [g.small(dt, (5, 3)), g.small(dt, (2, 3, 4)), np.array([2, 3], np.int32)],
     {"5x3, 2 groups": None}, tol="accum")


def _spd(g, dt, n):
    a = g.small(dt, (n, n)).astype(np.complex128 if kind(dt) == "complex" else np.float64)
    return (a @ a.conj().T + n * np.eye(n)).astype(dt)


case("lax.linalg.cholesky", lambda a: lax.linalg.cholesky(a), lambda g, dt, s: [_spd(g, dt, 4)], {"4x4": None},
     dtypes=INEXACT, tol="trans")
case("lax.linalg.triangular_solve", lambda a, b: lax.linalg.triangular_solve(a, b, left_side=True, lower=True),
     lambda g, dt, s: [_spd(g, dt, 4), g.small(dt, (4, 2))], {"4x4": None}, dtypes=INEXACT, tol="trans")
case("lax.linalg.lu", lambda a: lax.linalg.lu(a), lambda g, dt, s: [g.small(dt, (4, 4))], {"4x4": None},
     dtypes=INEXACT, tol="trans")
case("lax.linalg.qr (q·r)", lambda a: jnp.matmul(*lax.linalg.qr(a)), lambda g, dt, s: [g.small(dt, (4, 3))],
     {"4x3": None}, dtypes=INEXACT, tol="trans")
case("lax.linalg.eigh (eigenvalues)", lambda a: lax.linalg.eigh(a)[1], lambda g, dt, s: [_spd(g, dt, 4)], {"4x4": None},
     dtypes=INEXACT, tol="trans")
case("lax.linalg.svd (singular values)", lambda a: lax.linalg.svd(a, compute_uv=False),
     lambda g, dt, s: [g.small(dt, (4, 3))], {"4x3": None}, dtypes=INEXACT, tol="trans")
case("lax.linalg.eig (sorted eigenvalue magnitudes)", lambda a: jnp.sort(jnp.abs(lax.linalg.eig(
    a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0])), lambda g, dt, s: [_spd(g, dt, 4)],
     {"4x4": None}, dtypes=INEXACT, tol="trans")
case("lax.linalg.hessenberg", lambda a: lax.linalg.hessenberg(a), lambda g, dt, s: [g.small(dt, (4, 4))], {"4x4": None},
     dtypes=INEXACT, tol="trans")
case("lax.linalg.tridiagonal", lambda a: lax.linalg.tridiagonal(a), lambda g, dt, s: [_spd(g, dt, 4)], {"4x4": None},
     dtypes=INEXACT, tol="trans")
case("lax.linalg.tridiagonal_solve", lax.linalg.tridiagonal_solve,
     lambda g, dt, s: [np.concatenate([np.zeros(1, dt), g.small(dt, (3,))]), g.positive(dt, (4,), 4, 6),
                       np.concatenate([g.small(dt, (3,)), np.zeros(1, dt)]), g.small(dt, (4, 2))], {"4": None},
     dtypes=INEXACT, tol="trans")
case("lax.linalg.householder_product", lax.linalg.householder_product,
     lambda g, dt, s: [g.small(dt, (4, 3)), g.unit(dt, (3,))], {"4x3": None}, dtypes=INEXACT, tol="trans")
case("lax.linalg.symmetric_product", lambda a, c: lax.linalg.symmetric_product(a, c, alpha=2.0, beta=0.5),
     lambda g, dt, s: [g.small(dt, (4, 3)), _spd(g, dt, 4)], {"4x3": None}, dtypes=INEXACT, tol="accum")
case("lax.linalg.lu_pivots_to_permutation", lambda p: lax.linalg.lu_pivots_to_permutation(p, 5),
     lambda g, dt, s: [np.array([g.rng.integers(i, 5) for i in range(3)], np.int32)], {"3 pivots": None},
     dtypes=("i32",), tol="exact")
case("lax.custom_linear_solve", lambda a, b: lax.custom_linear_solve(lambda x: a * x, b, lambda mv, r: r / a),
     lambda g, dt, s: [g.nonzero(dt, s), g.any(dt, s)], {"3x4": (3, 4)}, dtypes=INEXACT)
case("lax.custom_root", lambda y: lax.custom_root(lambda x: x * x - y, y, lambda f, x0: lax.sqrt(x0),
                                                  lambda f, r: r), lambda g, dt, s: [g.positive(dt, s)],
     {"3x4": (3, 4)}, dtypes=INEXACT, tol="trans")
case("jnp.linalg.solve", jnp.linalg.solve, lambda g, dt, s: [_spd(g, dt, 4), g.small(dt, (4, 2))], {"4x4": None},
     dtypes=INEXACT, tol="trans")
for _name in ("FFT", "IFFT", "RFFT", "IRFFT"):  # length 8 (IRFFT: from 5 complex values)
    case(f"lax.fft ({_name})", lambda x, t=getattr(lax.FftType, _name): lax.fft(x, t, (8,)),
         lambda g, dt, s, n=_name: [g.small(dt, (3, 5 if n == "IRFFT" else 8))], {"3x8": None}, dtypes=INEXACT,
         tol="trans")

# --------------------------------------------------------------------------
section("Control flow")


def _pair_max(x):
    return lax.max(x, lax.rev(x, (0,)))


def _pair_min(x):
    return lax.min(x, lax.rev(x, (0,)))


case("lax.cond", lambda p, x: lax.cond(p, _pair_max, _pair_min, x), lambda g, dt, s: [g.bool(()), g.any(dt, s)],
     {"5": (5,)}, tol="exact")
case("lax.switch (index clamped)", lambda i, x: lax.switch(i, [_pair_max, _pair_min, lambda x: lax.rev(x, (0,))], x),
     lambda g, dt, s: [np.int32(g.rng.integers(-2, 5)), g.any(dt, s)], {"5": (5,)}, tol="exact")
case("lax.fori_loop (static trip count)",
     lambda x: lax.fori_loop(0, 3, lambda i, c: lax.max(lax.rev(c, (0,)), lax.slice(lax.pad(c, c[0], ((1, -1, 0),)),
                                                                                      (0,), c.shape)), x),
     lambda g, dt, s: [g.any(dt, s)], {"6": (6,)}, tol="exact")
case("lax.while_loop (data-dependent)",
     lambda n, x: lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, lax.rev(c[1], (0,))), (np.int32(0), x))[1],
     lambda g, dt, s: [np.int32(g.rng.integers(1, 4)), g.any(dt, s)], {"5": (5,)}, tol="exact")
case("lax.scan (running max)", lambda x: lax.scan(lambda c, r: (lax.max(c, r), lax.min(c, r)), x[0], x[1:]),
     lambda g, dt, s: [g.any(dt, s)], {"4x3": (4, 3)}, tol="exact")
case("lax.platform_dependent", lambda x: lax.platform_dependent(x, cpu=_pair_max, default=_pair_min),
     lambda g, dt, s: [g.any(dt, s)], {"5": (5,)}, tol="exact")
case("lax.map", lambda x: lax.map(lambda r: lax.rev(r, (0,)), x), lambda g, dt, s: [g.any(dt, s)], {"3x4": (3, 4)},
     tol="exact")

# --------------------------------------------------------------------------
section("Random numbers")

for _alg in ("RNG_DEFAULT", "RNG_PHILOX", "RNG_THREE_FRY"):
    case(f"lax.rng_bit_generator ({_alg})",
         lambda dt, v, a=getattr(lax.RandomAlgorithm, _alg): (lambda k: lax.rng_bit_generator(k, (3, 4), DTYPES[dt], a)),
         lambda g, dt, s: [g.any(np.uint64, (2,))], {"3x4": None}, dtypes=INTS, tol="exact", factory=True)
# XLA's CPU backend aborts on rng_uniform of 8- and 16-bit integers and bools.
case("lax.rng_uniform", lambda a, b: lax.rng_uniform(a, b, (3, 4)),
     lambda g, dt, s: [np.asarray(0, dt), np.asarray(1, dt)], {"3x4": None},
     dtypes=FLOATS + ("i32", "i64", "u32", "u64"), tol="exact")
case("jax.random.normal (threefry)",
     lambda dt, v: (lambda k: jax.random.normal(jax.random.wrap_key_data(k), (3, 4), DTYPES[dt])),
     lambda g, dt, s: [g.any(np.uint32, (2,))], {"3x4": None}, dtypes=INEXACT, tol="trans", factory=True)
case("jax.random.randint (threefry)",
     lambda dt, v: (lambda k: jax.random.randint(jax.random.wrap_key_data(k), (3, 4), -50, 50, DTYPES[dt])),
     lambda g, dt, s: [g.any(np.uint32, (2,))], {"3x4": None}, dtypes=SIGNED, tol="exact", factory=True)

# --------------------------------------------------------------------------
section("jnp and jax.nn functions")

binary("jnp.remainder", jnp.remainder, b="nonzero")
binary("jnp.floor_divide", jnp.floor_divide, b="nonzero")
case("jnp.power (integer exponent array)", jnp.power, lambda g, dt, s: [g.small(dt, s), g.index(dt, s, 4)])
binary("jnp.logaddexp", jnp.logaddexp, tol="trans")
binary("jnp.hypot", jnp.hypot, tol="trans")
binary("jnp.copysign", jnp.copysign, "any", "special", tol="exact")
binary("jnp.ldexp", lambda x, e: jnp.ldexp(x, e.astype(np.int32) % 8), "any", "small", tol="exact")
binary("jnp.gcd", jnp.gcd, "small", "small")
unary("jnp.sinc", jnp.sinc, tol="trans")
unary("jnp.frexp", jnp.frexp, "special", tol="exact")
unary("jnp.signbit", jnp.signbit, "special")
unary("jnp.nan_to_num", jnp.nan_to_num, "special", tol="exact")
unary("jnp.isnan", jnp.isnan, "special")
unary("jnp.round (2 decimals)", lambda x: jnp.round(x, 2))
case("jnp.where (broadcast)", jnp.where, lambda g, dt, s: [g.bool((s[0], 1)), g.any(dt, s), g.any(dt, (1,))],
     {"3x4": (3, 4)}, tol="exact")
case("jnp.clip", lambda x: jnp.clip(x, -1, 2), lambda g, dt, s: [g.small(dt, s)], tol="exact")
case("jnp.mean", lambda x: jnp.mean(x, axis=0), lambda g, dt, s: [g.any(dt, s)], {"3x4": (3, 4), "0-sized": (0, 4)},
     tol="accum")
case("jnp.var", lambda x: jnp.var(x, axis=1), lambda g, dt, s: [g.small(dt, s)], {"3x4": (3, 4)}, tol="accum")
case("jnp.linalg.norm", lambda x: jnp.linalg.norm(x, axis=1), lambda g, dt, s: [g.small(dt, s)], {"3x4": (3, 4)},
     tol="trans")
case("jnp.roll (traced shift)", lambda x, n: jnp.roll(x, n, axis=1),
     lambda g, dt, s: [g.any(dt, s), np.int32(g.rng.integers(-6, 6))], {"3x4": (3, 4)}, tol="exact")
case("jnp.tril", lambda x: jnp.tril(x, -1), lambda g, dt, s: [g.any(dt, s)], {"4x4": (4, 4)}, tol="exact")
case("jnp.diagonal", lambda x: jnp.diagonal(x, 1), lambda g, dt, s: [g.any(dt, s)], {"4x5": (4, 5)}, tol="exact")
case("jnp.unique (size=6)", lambda x: jnp.unique(x, size=6, fill_value=x[0]), lambda g, dt, s: [g.small(dt, s)],
     {"10": (10,)}, tol="exact")
case("jnp.nonzero (size=5)", lambda x: jnp.nonzero(x, size=5), lambda g, dt, s: [g.small(dt, s)], {"3x4": (3, 4)},
     tol="exact")
case("jnp.interp", lambda x, xp, fp: jnp.interp(x, xp, fp),
     lambda g, dt, s: [g.small(dt, s), np.sort(g.small(dt, (6,))), g.small(dt, (6,))], {"8": (8,)}, tol="trans")
case("jnp.cross", lambda a, b: jnp.cross(a, b), lambda g, dt, s: [g.small(dt, s), g.small(dt, s)], {"4x3": (4, 3)},
     tol="accum")
case("jnp.einsum (ij,kj->ki)", lambda a, b: jnp.einsum("ij,kj->ki", a, b),
     lambda g, dt, s: [g.small(dt, s), g.small(dt, (2, 4))], {"3x4": (3, 4)}, tol="accum")
case("jax.nn.one_hot", lambda i: jax.nn.one_hot(i, 5, dtype=np.float32), lambda g, dt, s: [g.index(dt, s, 5)],
     {"4": (4,)}, dtypes=INTS, tol="exact")
case("jax.nn.softmax", lambda x: jax.nn.softmax(x, axis=-1), lambda g, dt, s: [g.any(dt, s)],
     {"3x5": (3, 5), "rank-1": (6,)}, tol="trans")
case("jax.nn.log_softmax", lambda x: jax.nn.log_softmax(x, axis=-1), lambda g, dt, s: [g.any(dt, s)],
     {"3x5": (3, 5)}, tol="trans")
case("jax.nn.logsumexp", lambda x: jax.nn.logsumexp(x, axis=0), lambda g, dt, s: [g.any(dt, s)], {"3x5": (3, 5)},
     tol="trans")


def _layer_norm(x, w, b):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * w + b


case("layer norm", _layer_norm, lambda g, dt, s: [g.any(dt, s), g.any(dt, s[-1:]), g.any(dt, s[-1:])],
     {"3x8": (3, 8)}, tol="trans")
case("jax.nn.gelu (erf)", lambda x: jax.nn.gelu(x, approximate=False), lambda g, dt, s: [g.any(dt, s)], tol="trans")
case("jax.nn.gelu (tanh)", lambda x: jax.nn.gelu(x, approximate=True), lambda g, dt, s: [g.any(dt, s)], tol="trans")
case("jax.nn.relu", jax.nn.relu, lambda g, dt, s: [g.special(dt, s)], tol="exact")
case("dense layer (x·w + b, relu)", lambda x, w, b: jax.nn.relu(x @ w + b),
     lambda g, dt, s: [g.small(dt, s), g.small(dt, (s[1], 5)), g.small(dt, (5,))], {"3x4": (3, 4), "0 rows": (0, 4)},
     tol="accum")
case("attention (softmax(q·kᵀ/√d)·v)",
     lambda q, k, v: jax.nn.softmax(jnp.einsum("bqd,bkd->bqk", q, k) / np.sqrt(4.0).astype(q.dtype), -1) @ v,
     lambda g, dt, s: [g.small(dt, s), g.small(dt, (s[0], 5, s[2])), g.small(dt, (s[0], 5, s[2]))],
     {"2x3x4": (2, 3, 4)}, tol="trans")
