"""--target=cuda without a GPU: placement, and the generated kernels compiled
to PTX by NVRTC. The generated CUDA C is also compiled as host C++ under
tests/codegen/host_shim.h (several blocks of real, interleaved threads) and
checked against NumPy."""
import ctypes
import math
import pathlib
import re
import subprocess
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import brt  # noqa: E402

from conftest import brt_run, nvrtc_built_in  # noqa: E402

RNG = np.random.default_rng(7)


def compile_cuda(fn, args, tmp_path):
    try:
        tool = brt.find_tool()
    except FileNotFoundError as e:
        pytest.skip(str(e))
    src = tmp_path / "f.mlir"
    src.write_text(brt.export_stablehlo(fn, *args))
    dump = tmp_path / "dump"
    r = subprocess.run([tool, str(src), "-o", str(tmp_path / "f.brtx"), "--target=cuda", "--stats",
                        "--dump-after-each", str(dump)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return dump / "kernels", r.stdout


def host_kernel(cu, tmp_path, grid=3, block=64):
    """The kernel in `cu` as a host function of its arguments (arrays for its
    buffers, ints for its extents), launched with `grid` blocks of `block`
    threads."""
    wrapper = tmp_path / (cu.stem + "_host.cc")
    wrapper.write_text(f'#include "{ROOT / "tests/codegen/host_shim.h"}"\n'
                       f'#include "{cu}"\nBRT_SHIM_LAUNCHER({cu.stem})\n')
    lib = tmp_path / (cu.stem + ".so")
    subprocess.run(["g++", "-std=c++20", "-O1", "-shared", "-fPIC", "-pthread", str(wrapper), "-o", str(lib)],
                   check=True, capture_output=True)
    launch = ctypes.CDLL(str(lib)).brt_host_launch

    def run(*params):
        extents = [ctypes.c_longlong(p) for p in params if isinstance(p, int)]
        pointers, e = [], iter(extents)
        for p in params:
            pointers.append(ctypes.addressof(next(e)) if isinstance(p, int) else p.ctypes.data)
        launch(ctypes.c_uint(grid), ctypes.c_uint(block), (ctypes.c_void_p * len(pointers))(*pointers))
    return run


def test_fused_elementwise_kernel_matches_numpy(nvrtc, tmp_path):
    a = RNG.standard_normal((64, 33)).astype(np.float32)
    b = RNG.standard_normal(33).astype(np.float32)
    fn = lambda a, b: jnp.tanh(a * b + 1.0) * 0.5 + jnp.maximum(a, 0.0)  # noqa: E731
    kernels, stats = compile_cuda(fn, [a, b], tmp_path)
    assert "generated CUDA kernels: 1 (PTX compute_80" in stats
    ptx = (kernels / "brt_kernel_0.ptx").read_text()
    assert ".target sm_80" in ptx and ".entry brt_kernel_0" in ptx
    out = np.full((64, 33), np.nan, np.float32)
    run = host_kernel(kernels / "brt_kernel_0.cu", tmp_path)
    run(a, b, out)
    ref = np.tanh(a.astype(np.float64) * b + 1.0) * 0.5 + np.maximum(a, 0.0)
    assert np.linalg.norm(out - ref) / np.linalg.norm(ref) <= 1e-6
    # The memory planner may write the result over `a` (kInPlace): same bits.
    in_place = a.copy()
    run(in_place, b, in_place)
    np.testing.assert_array_equal(in_place, out)


def test_generated_clamp_keeps_nan(nvrtc, tmp_path):
    """clamp(lo, x, hi) with a NaN in any operand is NaN (StableHLO's maximum
    and minimum propagate it; the kernel once used fmaxf/fminf, which drop it)."""
    nan = np.float32(np.nan)
    lo = np.array([nan, -1, -1, -1, 2, -1], np.float32)
    x = np.array([0.25, nan, 0.25, 3, 0.5, -0.5], np.float32)
    hi = np.array([1, 1, nan, 1, 4, 1], np.float32)
    kernels, _ = compile_cuda(lambda lo, x, hi: jax.lax.clamp(lo, x, hi) + 1.0, [lo, x, hi], tmp_path)
    out = np.zeros(6, np.float32)
    host_kernel(kernels / "brt_kernel_0.cu", tmp_path)(lo, x, hi, out)
    np.testing.assert_array_equal(out, [nan, nan, nan, 2, 3, 0.5])


# Every float elementwise op of the op registry, as JAX writes it and as
# NumPy computes it in float64. Inputs lie in (0.1, 12); ops with a narrower
# domain take a scaled or shifted operand (the scaling fuses too).
ELEMENTWISE = {
    "negate": (jax.lax.neg, np.negative), "abs": (jax.lax.abs, np.abs),
    "exponential": (jax.lax.exp, np.exp), "exponential_minus_one": (jax.lax.expm1, np.expm1),
    "log": (jax.lax.log, np.log), "log_plus_one": (jax.lax.log1p, np.log1p),
    "sqrt": (jax.lax.sqrt, np.sqrt), "rsqrt": (jax.lax.rsqrt, lambda x: 1 / np.sqrt(x)),
    "tanh": (jax.lax.tanh, np.tanh), "logistic": (jax.lax.logistic, lambda x: 1 / (1 + np.exp(-x))),
    "sine": (jax.lax.sin, np.sin), "cosine": (jax.lax.cos, np.cos),
    "floor": (jax.lax.floor, np.floor), "ceil": (jax.lax.ceil, np.ceil),
    "round_nearest_even": (lambda x: jax.lax.round(x, jax.lax.RoundingMethod.TO_NEAREST_EVEN), np.rint),
    "sign": (jax.lax.sign, np.sign), "erf": (jax.lax.erf, None), "erfc": (jax.lax.erfc, np.vectorize(math.erfc)),
    "cbrt": (jax.lax.cbrt, np.cbrt),
    "round_nearest_afz": (lambda x: jax.lax.round(x, jax.lax.RoundingMethod.AWAY_FROM_ZERO),
                          lambda x: np.sign(x) * np.floor(np.abs(x) + 0.5)),
    "tan": (lambda x: jnp.tan(x * 0.1), lambda x: np.tan(x * 0.1)),
    "lgamma": (jax.lax.lgamma, np.vectorize(math.lgamma)),
    "erf_inv": (lambda x: jax.lax.erf_inv(x * 0.08), lambda x: np.vectorize(erf_inverse)(x * 0.08)),
    "sinh": (jnp.sinh, np.sinh), "cosh": (jnp.cosh, np.cosh), "atan": (jnp.arctan, np.arctan),
    "asin": (lambda x: jnp.arcsin(x * 0.05), lambda x: np.arcsin(x * 0.05)),
    "acos": (lambda x: jnp.arccos(x * 0.05), lambda x: np.arccos(x * 0.05)),
    "asinh": (jnp.arcsinh, np.arcsinh), "acosh": (lambda x: jnp.arccosh(x + 1), lambda x: np.arccosh(x + 1)),
    "atanh": (lambda x: jnp.arctanh(x * 0.05), lambda x: np.arctanh(x * 0.05)),
    "add": (jax.lax.add, np.add), "subtract": (jax.lax.sub, np.subtract),
    "multiply": (jax.lax.mul, np.multiply), "divide": (jax.lax.div, np.divide),
    "maximum": (jax.lax.max, np.maximum), "minimum": (jax.lax.min, np.minimum),
    "power": (jax.lax.pow, np.power), "remainder": (jax.lax.rem, np.fmod),
    "atan2": (jax.lax.atan2, np.arctan2),
}


def erf_inverse(y):
    """The x with erf(x) = y, by bisection in float64."""
    lo, hi = -6.0, 6.0
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if math.erf(mid) < y else (lo, mid)
    return (lo + hi) / 2


def registry_float_kinds():
    """The unary and binary kinds of include/brt/ops.def defined on floats."""
    text = (ROOT / "include" / "brt" / "ops.def").read_text()
    rows = re.findall(r"^BRT_(UNARY|BINARY)\((\w+), \"(\w+)\", (\w+),", text, re.M)
    return {kind: arity == "BINARY" for arity, _, kind, domain in rows if domain not in ("kIntegral", "kInteger")}


def test_every_registry_elementwise_op_generates_a_matching_kernel(nvrtc, tmp_path):
    kinds = registry_float_kinds()
    assert set(kinds) == set(ELEMENTWISE), "ELEMENTWISE must list exactly the registry's float ops"
    x = RNG.uniform(0.1, 2.0, (16, 9)).astype(np.float32)
    y = RNG.uniform(0.1, 2.0, (16, 9)).astype(np.float32)
    # One fused kernel: a sum of every op, each on its own scaled operand
    # (so no op is shared with another and each shows in the result).
    scales = {kind: 1.0 + 0.125 * i for i, kind in enumerate(sorted(kinds))}

    def fn(x, y):
        return sum(ELEMENTWISE[k][0](x * w, y) if kinds[k] else ELEMENTWISE[k][0](x * w)
                   for k, w in scales.items())
    kernels, stats = compile_cuda(fn, [x, y], tmp_path)
    assert "generated CUDA kernels: 1 (" in stats, stats
    source = (kernels / "brt_kernel_0.cu").read_text()
    assert source.count("const float* in") == 2, source
    out = np.full(x.shape, np.nan, np.float32)
    host_kernel(kernels / "brt_kernel_0.cu", tmp_path)(x, y, out)
    y64 = y.astype(np.float64)

    def reference(kind, scale):
        scaled = (x * np.float32(scale)).astype(np.float64)  # rounded to f32, as the kernel does
        op = ELEMENTWISE[kind][1] or np.vectorize(math.erf)
        return op(scaled, y64) if kinds[kind] else op(scaled)
    ref = sum(reference(k, w) for k, w in scales.items())
    np.testing.assert_allclose(out, ref, rtol=1e-5, atol=1e-5, err_msg=source)


@pytest.mark.parametrize("reducer,axes", [("sum", (1,)), ("max", (1, 2)), ("min", (2,)), ("sum", (2,))])
def test_row_reduce_kernel_matches_numpy(reducer, axes, nvrtc, tmp_path):
    x = RNG.standard_normal((6, 5, 40)).astype(np.float32)
    fn = lambda x: getattr(jnp, reducer)(x, axis=axes)  # noqa: E731
    kernels, _ = compile_cuda(fn, [x], tmp_path)
    cus = sorted(kernels.glob("*.cu"))
    if axes == (1,):  # not trailing dims: left to the CUDA provider's own kernel
        assert not cus
        return
    assert len(cus) == 1
    ref = getattr(np, reducer)(x.astype(np.float64), axis=axes)
    # The init value joins each row once, whatever the block size: run with
    # the identity and with a value that changes the result.
    combine = {"sum": np.add, "max": np.maximum, "min": np.minimum}[reducer]
    identity = {"sum": 0.0, "max": -np.inf, "min": np.inf}[reducer]
    run = host_kernel(cus[0], tmp_path)
    for init_value in (identity, float(np.median(ref)) if reducer != "sum" else 2.5):
        init = np.array([init_value], np.float32)
        out = np.full(ref.shape, np.nan, np.float32)
        run(x, init, out)
        np.testing.assert_allclose(out, combine(ref, init_value), rtol=1e-5, atol=1e-5)


def test_kernels_over_symbolic_shapes_take_their_extents(nvrtc, tmp_path):
    """Over symbolic shapes a generated kernel reads every operand's and
    result's extents from parameters after its buffers (as the CUDA provider
    passes them per concrete shape): one kernel serves every shape."""
    b, s = jax.export.symbolic_shape("b, s")
    fn = lambda x, y: (jnp.tanh(x * y + 1.0) * 0.5 + jnp.maximum(x, 0.0),  # noqa: E731
                       jnp.sum(jnp.exp(x), axis=-1))
    specs = [jax.ShapeDtypeStruct((b, s, 8), jnp.float32), jax.ShapeDtypeStruct((s, 8), jnp.float32)]
    kernels, stats = compile_cuda(fn, specs, tmp_path)
    assert "generated CUDA kernels: 2 (" in stats, stats
    sources = {cu: cu.read_text() for cu in sorted(kernels.glob("*.cu"))}
    (reduce_cu,) = [cu for cu, text in sources.items() if "partial" in text]
    (fused_cu,) = [cu for cu in sources if cu != reduce_cu]
    assert "long long out0_d0" in sources[fused_cu] and "long long in0_d1" in sources[reduce_cu]
    fused, row_sum = host_kernel(fused_cu, tmp_path), host_kernel(reduce_cu, tmp_path)
    for rows, seq in ((3, 5), (2, 11), (1, 1), (4, 70)):
        x = RNG.standard_normal((rows, seq, 8)).astype(np.float32)
        y = RNG.standard_normal((seq, 8)).astype(np.float32)
        out = np.full(x.shape, np.nan, np.float32)
        fused(x, y, out, rows, seq, 8, seq, 8, rows, seq, 8)
        x64 = x.astype(np.float64)
        np.testing.assert_allclose(out, np.tanh(x64 * y + 1.0) * 0.5 + np.maximum(x64, 0.0), rtol=1e-5, atol=1e-6)
        init, sums = np.zeros(1, np.float32), np.full((rows, seq), np.nan, np.float32)
        row_sum(x, init, sums, rows, seq, 8, rows, seq)
        np.testing.assert_allclose(sums, x64.sum(-1), rtol=1e-5, atol=1e-5)


def test_cuda_executable_is_refused_clearly_without_a_cuda_provider(nvrtc, tmp_path, build_dir):
    x = RNG.standard_normal((4, 8)).astype(np.float32)
    compile_cuda(lambda x: jnp.exp(x) * 2.0, [x], tmp_path)
    r = brt_run(build_dir, tmp_path / "f.brtx", "--random-inputs", 1)
    assert r.returncode == 3 and "on cuda" in r.stderr and "no provider for this device is loaded" in r.stderr


def test_cuda_target_is_refused_without_nvrtc(tmp_path):
    if nvrtc_built_in():
        pytest.skip("this brt-compile has NVRTC")
    with pytest.raises(brt.CompileError, match="built without NVRTC"):
        brt.compile(lambda x: x * 2.0, np.ones(4, np.float32), target="cuda", path=tmp_path / "f.brtx")


def test_kernel_names_are_their_ptx_entries_across_functions(nvrtc, tmp_path):
    """A generated kernel is looked up by its name in the executable's kernel
    table: that name must be its PTX entry's, in branch regions and in an
    executable of several functions alike (on the first GPU run, kernels in
    lax.cond's branches were refused: 'cuModuleGetFunction: named symbol not
    found')."""
    tool = brt.find_tool()
    fn = lambda p, x: jax.lax.cond(p, lambda v: jnp.tanh(v) * 2 + 1, lambda v: jnp.exp(v) - v, x)
    args = (np.bool_(True), np.ones((64, 8), np.float32))
    inputs = []
    for name, shape in (("a", (64, 8)), ("b", (32, 8))):
        src = tmp_path / f"{name}.mlir"
        src.write_text(brt.export_stablehlo(fn, args[0], np.ones(shape, np.float32)))
        inputs.append(f"{name}={src}")
    dump = tmp_path / "dump"
    r = subprocess.run([tool, *inputs, "-o", str(tmp_path / "f.brtx"), "--target=cuda", "--dump-after-each", str(dump)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    ptx = sorted(dump.rglob("kernels/*.ptx"))
    assert len(ptx) >= 4 and len({p.stem for p in ptx}) == len(ptx)  # two branches in each of two functions
    for p in ptx:
        assert re.search(rf"\.entry\s+{re.escape(p.stem)}\s*\(", p.read_text()), p.stem
