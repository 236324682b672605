"""Differential checking of a compiled program against its source: the
framework's own run (eager PyTorch, jax.jit) and brt's, on the same random
inputs. What `compile(..., check=True)` and `compile_torch(..., check=True)`
run."""
import numpy as np


class CheckError(AssertionError):
    """The compiled program's results differ from the framework's."""


# (relative, absolute) tolerance per result dtype; the absolute part is
# scaled by the largest magnitude in the framework's result.
_TOLERANCES = {
    np.dtype(np.float64): (1e-9, 1e-12),
    np.dtype(np.float32): (1e-4, 1e-5),
    np.dtype(np.float16): (1e-2, 1e-3),
}
_BFLOAT16 = (2e-2, 4e-3)


def random_like(examples, seed):
    """Random NumPy arrays shaped and typed like `examples` (arrays or
    tensors): floats from N(0, 1); integers uniform over the range the
    example spans (so indices stay valid); booleans fair coins."""
    rng = np.random.default_rng(seed)
    arrays = []
    for example in examples:
        e = np.asarray(example)
        if e.dtype == np.bool_:
            arrays.append(rng.random(e.shape) < 0.5)
        elif np.issubdtype(e.dtype, np.integer):
            low, high = (int(e.min()), int(e.max())) if e.size else (0, 0)
            arrays.append(rng.integers(low, high, size=e.shape, endpoint=True).astype(e.dtype))
        else:
            arrays.append(rng.standard_normal(e.shape).astype(e.dtype))
    return arrays


def _tolerance(dtype):
    if dtype.name == "bfloat16":
        return _BFLOAT16
    return _TOLERANCES.get(dtype, (0.0, 0.0))  # integers and booleans: exact


def compare(got, want, names, seed, what):
    """Raises CheckError naming the first of `names` whose brt result (`got`)
    differs from the framework's (`want`) beyond its dtype's tolerance."""
    if len(got) != len(want):
        raise CheckError(f"{what}: brt returns {len(got)} results, the framework {len(want)}")
    for name, g, w in zip(names, got, want):
        g, w = np.asarray(g), np.asarray(w)
        if g.shape != w.shape or g.dtype != w.dtype:
            raise CheckError(f"{what}: output '{name}' is {g.dtype}{list(g.shape)} from brt, "
                             f"{w.dtype}{list(w.shape)} from the framework (inputs from seed {seed})")
        rtol, atol = _tolerance(w.dtype)
        if rtol == 0 and atol == 0:  # integers and booleans: exactly (int64 beyond 2^53 too)
            g64, w64, scale = g, w, 1.0
            bad = g != w
        else:
            g64, w64 = g.astype(np.float64), w.astype(np.float64)
            finite = np.isfinite(w64)
            scale = float(np.abs(w64[finite]).max()) if finite.any() else 0.0
            same_special = (np.isnan(g64) & np.isnan(w64)) | (np.isinf(w64) & (g64 == w64))
            with np.errstate(invalid="ignore", over="ignore"):  # inf - inf: NaN, not close
                close = finite & (np.abs(g64 - w64) <= atol * max(scale, 1.0) + rtol * np.abs(w64))
            bad = ~(close | same_special)
        if bad.any():
            first = np.unravel_index(int(np.argmax(bad)), bad.shape)
            with np.errstate(invalid="ignore", over="ignore"):
                worst = float(np.nanmax(np.abs(g64.astype(np.float64) - w64.astype(np.float64))[bad]))
            raise CheckError(
                f"{what}: output '{name}' differs from the framework's at {list(map(int, first))}: "
                f"brt {g[first].item()!r}, framework {w[first].item()!r}; {int(bad.sum())} of {bad.size} elements "
                f"off, the worst by {worst:.3g} (tolerance {rtol:g} relative + {atol:g} x {max(scale, 1.0):.3g}); "
                f"inputs from seed {seed}")


def refuse_device(target, what):
    if target != "cpu":
        raise CheckError(f"{what}: check=True runs the executable on the CPU; compile with target='cpu' to "
                         f"check it (target is {target!r})")


def removing_on_error(path, made_path, check):
    """Runs `check`; when it raises, a temporary executable (`made_path`)
    is removed before the error goes on."""
    try:
        check()
    except BaseException:
        if made_path:
            import os

            os.remove(path)
        raise


def check_session(path, function, run_framework, examples, seed, what):
    """Runs `function` of the .brtx at `path` and `run_framework` on the
    same random inputs (shaped like `examples`) and compares every output."""
    from . import _brt

    session = _brt.Session(path)
    info = next(f for f in session.functions if f["name"] == function)
    if any(a["role"] == "state" for a in info["arguments"]):
        raise CheckError(f"{what}: check=True compares functions of inputs and outputs only; "
                         f"'{function}' keeps state (donated arguments)")
    inputs = random_like(examples, seed)
    want = [np.asarray(w) for w in run_framework(inputs)]
    got = session.run(*inputs, function=function)
    names = [a["name"] for a in info["arguments"] if a["role"] == "output"]
    compare(got, want, names, seed, what)
