"""brt's outputs against the framework's.

Integers and booleans must be equal. Floats must be within a tolerance per
dtype; where they are not, the program is run again in float64 (the
shadow), plainly and with each rounded value wobbled by a few ulps
(frontends.wobbled_source), and a float output passes where brt is no
further from the framework than a few times the framework's own distance
from float64 plus the wobbled runs' spread: rounding that both sides do
differently (a fused f16 chain, a sum in another order, an erf a few ulps
off, made large by log1p near -1) is not a mismatch; a wrong value is.
"""
import numpy as np

from frontends import dtype_name

# (rtol, atol) per dtype, before the shadow is asked.
TOLERANCES = {"f32": (1e-5, 1e-6), "f64": (1e-12, 1e-13), "f16": (2e-3, 1e-3), "bf16": (1e-2, 1e-2)}
SHADOW_FACTOR = 4.0


def _float64(array):
    return np.asarray(array).astype(np.float64)


def _describe(index, message, expected, got, positions=None):
    where = ""
    if positions is not None and positions.size:
        first = tuple(int(i) for i in np.argwhere(positions)[0])
        where = f" first at {first}: framework {expected[first]!r}, brt {got[first]!r}"
    return f"output {index}: {message}{where}"


def _distance(a, b):
    """|a - b|, 0 where they are equal (the same infinity too), NaN where
    exactly one is NaN."""
    with np.errstate(invalid="ignore"):
        return np.where((a == b) | (np.isnan(a) & np.isnan(b)), 0.0, np.abs(a - b))


def _float_bad_positions(expected, got, tolerance, shadows=None):
    """Where brt's floats are off (NaN where the framework has a number and
    the reverse, infinities of another sign, values outside the tolerance
    of dtype `tolerance`)."""
    rtol, atol = TOLERANCES[tolerance]
    e, g = _float64(expected), _float64(got)
    finite = np.isfinite(e)
    scale = max(1.0, float(np.max(np.abs(e[finite])))) if finite.any() else 1.0
    allowed = atol * scale + rtol * np.abs(np.where(finite, e, 0.0))
    if shadows is not None:
        s = _float64(shadows[0])
        own_error = _distance(e, s)
        for wobbled in shadows[1:]:
            own_error = np.maximum(own_error, _distance(_float64(wobbled), s))
        # Where the framework itself is not finite or far from float64 (an
        # overflow in f16, inf - inf), anything brt says is as good.
        unsure = ~np.isfinite(own_error) | (np.isnan(e) != np.isnan(s))
        allowed = np.where(unsure, np.inf, allowed + SHADOW_FACTOR * np.where(unsure, 0.0, own_error))
    with np.errstate(invalid="ignore"):
        close = np.abs(e - g) <= allowed
    same_special = (np.isnan(e) & np.isnan(g)) | (np.isinf(e) & (e == g))
    return ~(close | same_special | np.isinf(allowed))


def compare(expected_outputs, got_outputs, shadow=None, precision="f64"):
    """None where brt's outputs match, else what differs (one line).
    `shadow`: a callable giving the float64 outputs, plain then wobbled
    (lists of outputs), called only when a float output is outside its
    plain tolerance. `precision`: the roughest
    float dtype the program computes in; no float output is held to a
    tighter tolerance than it."""
    if len(expected_outputs) != len(got_outputs):
        return f"{len(got_outputs)} outputs, the framework has {len(expected_outputs)}"
    shadow_outputs = None
    for i, (e, g) in enumerate(zip(expected_outputs, got_outputs)):
        e, g = np.asarray(e), np.asarray(g)
        e_dtype, g_dtype = dtype_name(e.dtype), dtype_name(g.dtype)
        if e_dtype != g_dtype:
            return f"output {i}: dtype {g_dtype or g.dtype}, the framework's is {e_dtype or e.dtype}"
        if e.shape != g.shape:
            return f"output {i}: shape {g.shape}, the framework's is {e.shape}"
        if e_dtype not in TOLERANCES:
            bad = e != g
            if bad.any():
                return _describe(i, f"{int(bad.sum())} of {bad.size} elements differ", e, g, bad)
            continue
        tolerance = max(e_dtype, precision, key=lambda d: TOLERANCES[d])
        bad = _float_bad_positions(e, g, tolerance)
        if not bad.any():
            continue
        if shadow is not None and shadow_outputs is None:
            shadow_outputs = shadow()
        if shadow_outputs is not None:
            bad = _float_bad_positions(e, g, tolerance, [outputs[i] for outputs in shadow_outputs])
        if bad.any():
            return _describe(i, f"{int(bad.sum())} of {bad.size} elements differ", e, g, bad)
    return None
