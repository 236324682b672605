"""The native extension: metadata, runs against NumPy float64, zero-copy
binding (checked by mutating the bound array and by pointer identity),
output lifetimes, errors, and no memory growth over 10 000 runs."""
import gc
import os
import sys

import numpy as np
import pytest

import brt

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from gpu_expectation import skip_or_fail  # noqa: E402


def reference(d, x):
    h = x.astype(np.float64)
    for layer in (1, 2, 3):
        h = h @ np.load(d / f"w{layer}.npy") + np.load(d / f"b{layer}.npy")
        h = np.maximum(h, 0) if layer < 3 else h
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def rel(a, b):
    return np.linalg.norm(a - b) / np.linalg.norm(b)


def test_metadata(mlp_dir):
    s = brt.Session(str(mlp_dir / "mlp.brtx"))
    assert s.providers == ["cpu"]
    (f,) = s.functions
    assert f["name"] == "mlp"
    assert f["arguments"][0] == {"name": "x", "role": "input", "dtype": "f32", "shape": (16, 64), "device": "cpu:0"}
    assert [a["role"] for a in f["arguments"]].count("weight") == 6
    assert f["arguments"][-1]["role"] == "output"


def test_session_run_matches_numpy(mlp_dir):
    s = brt.Session(str(mlp_dir / "mlp.brtx"))
    x = np.load(mlp_dir / "x.npy")
    (out,) = s.run(x)
    assert out.shape == (16, 10) and out.dtype == np.float32
    assert rel(out, reference(mlp_dir, x)) <= 1e-5
    (named,) = s.run(x=x)
    np.testing.assert_array_equal(named, out)


def test_thread_options(mlp_dir):
    x = np.load(mlp_dir / "x.npy")
    want = reference(mlp_dir, x)
    for threads, spinning in ((1, True), (2, False), (3, True)):
        s = brt.Session(str(mlp_dir / "mlp.brtx"), threads=threads, spinning=spinning)
        assert (s.threads, s.spinning) == (threads, spinning)
        assert rel(s.run(x)[0], want) <= 1e-5
    assert brt.Session(str(mlp_dir / "mlp.brtx")).threads >= 1
    with pytest.raises(ValueError, match="intra_op_threads is -1"):
        brt.Session(str(mlp_dir / "mlp.brtx"), threads=-1)


def test_linger_option(mlp_dir):
    path = str(mlp_dir / "mlp.brtx")
    x = np.load(mlp_dir / "x.npy")
    assert brt.Session(path, threads=2).linger_us == 0
    s = brt.Session(path, threads=2, linger_us=200)
    assert s.linger_us == 200
    assert rel(s.run(x)[0], reference(mlp_dir, x)) <= 1e-5
    # Lingering needs spinning and more than one thread.
    assert brt.Session(path, threads=2, spinning=False, linger_us=200).linger_us == 0
    assert brt.Session(path, threads=1, linger_us=200).linger_us == 0
    for bad in (-1, 1001):
        with pytest.raises(ValueError, match=f"linger_microseconds is {bad}: give 0"):
            brt.Session(path, threads=2, linger_us=bad)


def test_inputs_are_bound_without_copy(mlp_dir):
    s = brt.Session(str(mlp_dir / "mlp.brtx"))
    ctx = s.new_request()
    x = np.random.default_rng(1).standard_normal((16, 64)).astype(np.float32)
    ctx.bind("x", x)
    x *= 3.0  # the runtime reads the caller's memory at run time
    ctx.run()
    assert rel(ctx.outputs()[0], reference(mlp_dir, x)) <= 1e-5


def test_outputs_share_the_runtime_buffer_and_outlive_the_session(mlp_dir):
    s = brt.Session(str(mlp_dir / "mlp.brtx"))
    ctx = s.new_request()
    x = np.load(mlp_dir / "x.npy")
    ctx.bind(0, x)
    ctx.run()
    a, b = ctx.outputs()[0], ctx.outputs()[0]
    assert a.__array_interface__["data"][0] == b.__array_interface__["data"][0]
    kept = a.copy()
    del ctx, s, b
    gc.collect()
    np.testing.assert_array_equal(a, kept)  # still valid: the array owns a reference to the buffer


def test_jax_arrays_bind_through_dlpack(mlp_dir):
    jnp = pytest.importorskip("jax.numpy")
    s = brt.Session(str(mlp_dir / "mlp.brtx"))
    x = np.load(mlp_dir / "x.npy")
    (out,) = s.run(jnp.asarray(x))
    assert rel(out, reference(mlp_dir, x)) <= 1e-5


def test_errors_carry_the_core_message(mlp_dir):
    s = brt.Session(str(mlp_dir / "mlp.brtx"))
    ctx = s.new_request()
    with pytest.raises(ValueError, match="expected dtype f32, got f64"):
        ctx.bind("x", np.zeros((16, 64)))
    with pytest.raises(ValueError, match=r"expected shape \[16,64\], got \[4,64\]"):
        ctx.bind("x", np.ones((4, 64), np.float32))
    with pytest.raises(ValueError, match="no argument named 'y'"):
        ctx.bind("y", np.ones((16, 64), np.float32))
    with pytest.raises(ValueError, match="not C-contiguous"):
        ctx.bind("x", np.ones((64, 16), np.float32).T)
    with pytest.raises(RuntimeError, match="input 'x' .* is not bound"):
        s.new_request().run()
    with pytest.raises(ValueError, match="cannot open"):
        brt.Session("/nonexistent.brtx")


def test_read_only_arrays_bind_as_inputs_without_a_copy(mlp_dir):
    """np.asarray(jax_array) is read-only: exactly what JAX and optax users pass."""
    jnp = pytest.importorskip("jax.numpy")
    s = brt.Session(str(mlp_dir / "mlp.brtx"))
    x = np.asarray(jnp.asarray(np.load(mlp_dir / "x.npy")))
    assert not x.flags.writeable
    (out,) = s.run(x)
    assert rel(out, reference(mlp_dir, x)) <= 1e-5
    frozen = np.load(mlp_dir / "x.npy")
    frozen.flags.writeable = False
    ctx = s.new_request()
    ctx.bind("x", frozen)
    ctx.run()
    assert rel(ctx.outputs()[0], reference(mlp_dir, frozen)) <= 1e-5
    # An output is written: a read-only one is refused, naming it.
    out_index = [a["role"] for a in s.functions[0]["arguments"]].index("output")
    out_name = s.functions[0]["arguments"][out_index]["name"]
    y = np.zeros(ctx.outputs()[0].shape, np.float32)
    y.flags.writeable = False
    with pytest.raises(ValueError, match=f"argument '{out_name}': the array is read-only"):
        ctx.bind(out_index, y)


def test_binding_errors_name_the_argument_and_never_leak_cpp_text(mlp_dir):
    s = brt.Session(str(mlp_dir / "mlp.brtx"))
    ctx = s.new_request()
    x = np.load(mlp_dir / "x.npy")
    cases = [
        (lambda: ctx.bind("x", [[1.0] * 64] * 16), TypeError, "argument 'x': expected an array .* got list"),
        (lambda: ctx.bind("x", x.astype(">f4")), TypeError, "argument 'x': .*non-native byte order"),
        (lambda: ctx.bind("x", x.astype(np.longdouble)), TypeError, "argument 'x': element type float128 is not supported"),
        (lambda: ctx.bind(99, x), IndexError, r"has \d+ arguments; got index 99"),
        (lambda: ctx.bind(-1, x), IndexError, "got index -1"),
        (lambda: ctx.bind(1.5, x), TypeError, "index \\(int\\) or name \\(str\\), got float"),
        (lambda: s.run(x.astype(">f4")), TypeError, "non-native byte order"),
    ]
    for call, error, message in cases:
        with pytest.raises(error, match=message) as e:
            call()
        assert "bad_cast" not in str(e.value) and "std::" not in str(e.value)


DTYPES = ["float32", "float16", "bfloat16", "float64", "bool", "int8", "int16", "int32", "int64", "uint8", "uint16"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_binds_and_round_trips(dtype, tmp_path):
    """Each element type NumPy, JAX and ml_dtypes produce, through a flip (any dtype), 0-d included."""
    jnp = pytest.importorskip("jax.numpy")
    ml_dtypes = pytest.importorskip("ml_dtypes")
    np_dtype = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((3, 5)) * 50).astype(np_dtype) if dtype != "bool" else rng.random((3, 5)) > 0.5
    import jax
    with jax.enable_x64(True):  # float64 and int64 stay 64-bit
        path = brt.compile(lambda a, b: (jnp.flip(a, 0), b), jnp.asarray(x), jnp.asarray(x[0, 0]),
                           path=str(tmp_path / f"{dtype}.brtx"))
        read_only = np.asarray(jnp.asarray(x))  # as JAX hands it over: read-only
    s = brt.Session(path)

    def same_bits(a, b):
        return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a.reshape(-1).view(np.uint8),
                                                                            b.reshape(-1).view(np.uint8))
    for a, b in ((x, x[0, 0].copy()), (read_only, read_only[1, 2])):
        flipped, scalar = s.run(a, b)
        assert same_bits(flipped, np.flip(x, 0).astype(np_dtype))
        assert same_bits(np.asarray(scalar), np.asarray(b))


def test_async_run(mlp_dir):
    s = brt.Session(str(mlp_dir / "mlp.brtx"))
    ctx = s.new_request()
    x = np.load(mlp_dir / "x.npy")
    ctx.bind("x", x)
    ctx.run_async()
    ctx.wait()
    assert rel(ctx.outputs()[0], reference(mlp_dir, x)) <= 1e-5


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


def test_no_growth_over_ten_thousand_runs(mlp_dir):
    s = brt.Session(str(mlp_dir / "mlp.brtx"))
    ctx = s.new_request()
    x = np.load(mlp_dir / "x.npy")
    for _ in range(1000):  # warm up: allocator pools, oneDNN caches
        ctx.bind("x", x)
        ctx.run()
        ctx.outputs()
    gc.collect()
    before = rss_bytes()
    for _ in range(10000):
        ctx.bind("x", x)
        ctx.run()
        ctx.outputs()
    gc.collect()
    after = rss_bytes()
    assert after <= before * 1.01, (before, after)


def test_run_releases_the_gil(tmp_path):
    """Python code on another thread keeps running during one long run()."""
    import threading
    import time

    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    path = brt.compile(lambda a: a @ a @ a @ a @ a @ a, jnp.zeros((768, 768), jnp.float32),
                       path=str(tmp_path / "chain.brtx"))
    ctx = brt.Session(path).new_request()
    a = np.random.default_rng(7).standard_normal((768, 768)).astype(np.float32) / 30
    ctx.bind(0, a)
    ctx.run()  # first run: allocations, primitive caches
    window = {}

    def run():
        window["start"] = time.perf_counter()
        ctx.run()
        window["end"] = time.perf_counter()

    worker = threading.Thread(target=run)
    stamps = []
    interval = sys.getswitchinterval()
    sys.setswitchinterval(0.0005)
    try:
        worker.start()
        while worker.is_alive():
            stamps.append(time.perf_counter())
        worker.join()
    finally:
        sys.setswitchinterval(interval)
    start, end = window["start"], window["end"]
    assert end - start > 0.008, "the run is too short to tell"
    # Holding the GIL would stop this thread for the whole run: one long gap.
    inside = [start] + [t for t in stamps if start < t < end] + [end]
    longest_gap = max(b - a for a, b in zip(inside, inside[1:]))
    assert longest_gap < 0.5 * (end - start), (longest_gap, end - start)
    ref = np.linalg.matrix_power(a.astype(np.float64), 6)
    assert rel(ctx.outputs()[0], ref) <= 1e-4


def _cuda_session(tmp_path):
    try:
        import torch
    except ImportError as e:
        skip_or_fail(f"PyTorch, which this test binds CUDA tensors from, does not import: {e}")
    if not torch.cuda.is_available():
        skip_or_fail("torch.cuda.is_available() is False")
    # On a GPU machine without brt-compile, bench/gpu_bench.py --prepare made it.
    path = os.path.join(os.environ.get("BRT_GPU_MODELS", ""), "bindings.brtx")
    if not os.path.exists(path):
        jnp = pytest.importorskip("jax.numpy")
        path = brt.compile(lambda a, b: jnp.tanh(a @ b) + a, jnp.zeros((64, 64), jnp.float32),
                           jnp.zeros((64, 64), jnp.float32), target="cuda", path=str(tmp_path / "m.brtx"))
    return torch, brt.Session(path, providers=["cuda"])


def _run_on_random_inputs(torch, ctx):
    """Binds random CUDA inputs, runs, checks the DLPack output against
    float64 and returns the reference (tanh(a @ b) + a)."""
    a = torch.randn(64, 64, device="cuda")
    b = torch.randn(64, 64, device="cuda") / 8
    ctx.bind(0, a)
    ctx.bind(1, b)
    ctx.run()
    out = torch.from_dlpack(ctx.outputs()[0])
    assert out.device.type == "cuda"
    ref = torch.tanh(a.double() @ b.double()) + a.double()
    assert float((out.double() - ref).norm() / ref.norm()) <= 1e-5
    return ref


def test_cuda_tensors_bind_without_copy(tmp_path):
    """PyTorch CUDA tensors in and DLPack CUDA arrays out, on the caller's
    (non-default) stream, whose third run replays a recorded graph."""
    torch, s = _cuda_session(tmp_path)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        ctx = s.new_request()
        ctx.set_stream(stream.cuda_stream)
        ref = _run_on_random_inputs(torch, ctx)
        y = torch.empty(64, 64, device="cuda")
        ctx.bind(2, y)
        ctx.run()
        assert float((y.double() - ref).norm() / ref.norm()) <= 1e-5  # written in place: zero copy
        y.fill_(float("nan"))
        ctx.run()
        assert ctx.last_run_replayed_graph
        assert float((y.double() - ref).norm() / ref.norm()) <= 1e-5


def test_cuda_default_stream_runs_op_by_op_every_time(tmp_path):
    """PyTorch's default stream (handle 0, CUDA's legacy stream) cannot be
    recorded into a graph: the context runs op by op, and the refused capture
    must not fail the runs after it."""
    torch, s = _cuda_session(tmp_path)
    ctx = s.new_request()
    ctx.set_stream(torch.cuda.default_stream().cuda_stream)
    for _ in range(4):
        _run_on_random_inputs(torch, ctx)
        assert not ctx.last_run_replayed_graph


def test_empty_arrays_bind_whatever_their_strides():
    """NumPy gives an empty array zero strides (and flags it contiguous);
    binding refused it as not C-contiguous."""
    from conftest import require
    require("jax")
    empty = np.zeros((0, 5, 4), np.float32)
    session = brt.Session(brt.compile(lambda a: a * 2 + 1, empty))
    for array in (empty, np.ones((3, 5, 4), np.float32)[:0, ::-1], np.empty((0, 5, 4), np.float32)):
        (out,) = session.run(array)
        assert out.shape == (0, 5, 4) and out.dtype == np.float32
    with pytest.raises(ValueError, match="not C-contiguous"):
        brt.Session(brt.compile(lambda a: a * 2, np.ones((2, 3), np.float32))).run(np.ones((3, 2), np.float32).T)
