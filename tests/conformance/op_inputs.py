"""Seeded random inputs per dtype and input domain (never all zeros)."""
import numpy as np

import ml_dtypes

# The table's columns, in order: name -> NumPy dtype.
DTYPES = {
    "f32": np.dtype(np.float32), "f16": np.dtype(np.float16), "bf16": np.dtype(ml_dtypes.bfloat16),
    "f64": np.dtype(np.float64), "i8": np.dtype(np.int8), "i16": np.dtype(np.int16), "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64), "u8": np.dtype(np.uint8), "u16": np.dtype(np.uint16), "u32": np.dtype(np.uint32),
    "u64": np.dtype(np.uint64), "bool": np.dtype(np.bool_), "c64": np.dtype(np.complex64),
    "c128": np.dtype(np.complex128),
}
FLOATS = ("f32", "f16", "bf16", "f64")
COMPLEX = ("c64", "c128")
SIGNED = ("i8", "i16", "i32", "i64")
UNSIGNED = ("u8", "u16", "u32", "u64")
INTS = SIGNED + UNSIGNED


def kind(dtype):
    """'float', 'complex', 'signed', 'unsigned' or 'bool'."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return "bool"
    if dtype.kind == "c":
        return "complex"
    if dtype.kind in "iu":
        return "signed" if dtype.kind == "i" else "unsigned"
    return "float"  # f16, f32, f64 and ml_dtypes' bfloat16 (kind 'V')


class Gen:
    """Random arrays of a dtype and shape from one seeded generator. Each
    method is an input domain; integers and bools ignore the float ranges
    where a domain has no integer meaning."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)

    def _floats(self, dtype, shape, lo, hi):
        return self.rng.uniform(lo, hi, shape).astype(dtype)

    def _complex(self, dtype, shape, lo, hi):
        return (self.rng.uniform(lo, hi, shape) + 1j * self.rng.uniform(lo, hi, shape)).astype(dtype)

    def _ints(self, dtype, shape, lo, hi):
        info = np.iinfo(dtype)
        return self.rng.integers(max(lo, info.min), min(hi, info.max), shape, endpoint=True, dtype=dtype)

    def _real(self, dtype, shape, lo, hi, int_lo, int_hi):
        k = kind(dtype)
        if k == "float":
            return self._floats(dtype, shape, lo, hi)
        if k == "complex":
            return self._complex(dtype, shape, lo, hi)
        if k == "bool":
            return self.rng.integers(0, 2, shape).astype(np.bool_)
        return self._ints(dtype, shape, int_lo, int_hi)

    def any(self, dtype, shape):
        """Floats in [-3, 3]; integers over their whole range (so integer
        arithmetic wraps); bools at random."""
        if kind(dtype) in ("signed", "unsigned"):
            info = np.iinfo(dtype)
            return self._ints(dtype, shape, int(info.min), int(info.max))
        return self._real(dtype, shape, -3, 3, 0, 0)

    def small(self, dtype, shape):
        """[-3, 3] ([0, 6] unsigned): values whose products and powers stay small."""
        unsigned = kind(dtype) == "unsigned"
        return self._real(dtype, shape, -3, 3, 0 if unsigned else -3, 6 if unsigned else 3)

    def positive(self, dtype, shape, lo=0.25, hi=4.0):
        """(0, 4]; integers in [1, 40]."""
        return self._real(dtype, shape, lo, hi, 1, 40)

    def unit(self, dtype, shape):
        """(-0.9, 0.9): the domain of asin, acos, atanh, erf_inv."""
        return self._real(dtype, shape, -0.9, 0.9, 0, 0)

    def nonzero(self, dtype, shape):
        """Like `any`, without zeros (divisors) and, for signed integers,
        without -1 (INT_MIN / -1 is the one overflowing quotient)."""
        x = self.any(dtype, shape) if kind(dtype) != "float" else self._floats(dtype, shape, 0.25, 3)
        if kind(dtype) == "float":
            x = np.where(self.rng.integers(0, 2, shape).astype(bool), x, -x).astype(dtype)
        bad = (x == 0) | ((x == -1) if kind(dtype) == "signed" else False)
        return np.where(bad, np.ones_like(x), x)

    def shift(self, dtype, shape):
        """Shift amounts in [0, bit width + 1]: one or two past the width too
        (small values for the dtypes that have no shifts)."""
        if kind(dtype) not in ("signed", "unsigned"):
            return self.small(dtype, shape)
        return self._ints(dtype, shape, 0, np.dtype(dtype).itemsize * 8 + 1)

    def special(self, dtype, shape):
        """Floats with inf, -inf, NaN and signed zeros among finite values."""
        x = self.any(dtype, shape)
        if kind(dtype) == "float" and x.size:
            flat = x.reshape(-1)
            picks = self.rng.choice([np.inf, -np.inf, np.nan, 0.0, -0.0], size=flat.size)
            mask = self.rng.integers(0, 3, flat.size) == 0
            flat[mask] = picks[mask].astype(dtype)
        return x

    def like(self, a, b):
        """b with about a third of its elements equal to a's (comparisons see ties)."""
        mask = self.rng.integers(0, 3, np.shape(a)) == 0
        return np.where(mask, a, b).astype(b.dtype)

    def index(self, dtype, shape, high):
        """Indices in [0, high)."""
        return self.rng.integers(0, high, shape).astype(dtype)

    def perm(self, n, dtype=np.int32):
        """A permutation of range(n) (distinct scatter indices)."""
        return self.rng.permutation(n).astype(dtype)

    def bool(self, shape):
        return self.rng.integers(0, 2, shape).astype(np.bool_)
