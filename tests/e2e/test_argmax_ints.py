"""jnp.argmax / argmin on integers and bool (lax.argmax / argmin with i32
and i64 indices), compiled by brt-compile, run by brt-run on the CPU provider
and on the emulated CUDA provider (its own kernels compiled for the host),
and compared with JAX on the CPU. The values come from a few, including the
type's extremes (the reduce's init value), so most rows hold ties: the index
is the first among equal maxima (minima). torch.argmax / argmin through
torch-mlir (CLIP's pooling, `(ids == eos).int().argmax(-1)`) is compared with
PyTorch eager."""
import pathlib
import sys

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
import brt  # noqa: E402
from conftest import run_on_npy, target_env  # noqa: E402

RNG = np.random.default_rng(41)
DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]
SHAPE = (4, 6, 5)


def tied_values(dtype, shape=SHAPE):
    """Values from five (two for bool), the type's minimum and maximum among
    them. The first slice on axis 0 is all the largest value and the first
    on axis 1 all the smallest, so that some rows tie at every index."""
    if dtype == np.bool_:
        x = RNG.integers(0, 2, shape).astype(bool)
    else:
        info = np.iinfo(dtype)
        x = RNG.choice(np.array([info.min, info.min + 1, info.max // 2, info.max - 1, info.max], dtype), shape)
    x[0] = x.max()
    x[:, 0] = x.min()
    return x


def arg_reductions(index_dtype):
    """argmax and argmin along each axis and over all of them (jnp's axis=None)."""
    def fn(x):
        outs = []
        for axis in range(x.ndim):
            outs += [lax.argmax(x, axis, index_dtype), lax.argmin(x, axis, index_dtype)]
        return (*outs, jnp.argmax(x), jnp.argmin(x))
    return fn


CASES = [(f"{np.dtype(t).name}_{np.dtype(i).name}_indices", t, i) for t in DTYPES for i in (np.int32, np.int64)]


@pytest.mark.parametrize("target", ["cpu", "emulated_cuda"])
@pytest.mark.parametrize("name,dtype,index_dtype", CASES, ids=[c[0] for c in CASES])
def test_matches_jax(have_compiler, build_dir, tmp_path, target, name, dtype, index_dtype):
    device, env = target_env(build_dir, target)
    x = tied_values(dtype)
    fn = arg_reductions(index_dtype)
    with jax.enable_x64(True):  # i64 and u64 values, i64 indices
        path = brt.compile(fn, x, target=device, path=tmp_path / f"{name}.brtx")
        want = [np.asarray(w) for w in jax.jit(fn)(x)]
    outs = run_on_npy(build_dir, path, [x], tmp_path, device, env)
    assert len(outs) == len(want), name
    for i, (got, w) in enumerate(zip(outs, want)):
        assert got.dtype == w.dtype and got.shape == w.shape, f"{name} result {i}"
        np.testing.assert_array_equal(got, w, err_msg=f"{name} result {i}")


def torch_module(torch):
    class Module(torch.nn.Module):
        def forward(self, x):
            return torch.argmax(x, -1), torch.argmin(x, 0), torch.argmax(x)
    return Module()


@pytest.mark.parametrize("target", ["cpu", "emulated_cuda"])
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_torch_matches_eager(have_compiler, build_dir, tmp_path, target, dtype):
    torch = pytest.importorskip("torch")
    pytest.importorskip("torch_mlir")
    device, env = target_env(build_dir, target)
    x = tied_values(dtype, (2, 8))
    module = torch_module(torch)
    path = brt.compile_torch(module, torch.from_numpy(x), target=device, path=tmp_path / "argmax.brtx")
    want = [w.numpy() for w in module(torch.from_numpy(x))]
    outs = run_on_npy(build_dir, path, [x], tmp_path, device, env)
    assert len(outs) == len(want)
    for i, (got, w) in enumerate(zip(outs, want)):
        assert got.dtype == w.dtype and got.shape == w.shape, f"result {i}"
        np.testing.assert_array_equal(got, w, err_msg=f"result {i}")


def test_torch_uint8_is_refused(have_compiler, tmp_path):
    # torch-mlir writes i8's bounds as the init on ui8 (128 for argmax) and a
    # SIGNED compare, which is no argmax of unsigned values: brt refuses it
    # rather than give another index than PyTorch's.
    torch = pytest.importorskip("torch")
    pytest.importorskip("torch_mlir")
    x = torch.from_numpy(tied_values(np.uint8, (2, 8)))
    with pytest.raises(brt.CompileError, match=r"stablehlo.reduce computing argmax on ui8 is supported with the "
                                               r"inits \(0, 0\)"):
        brt.compile_torch(torch_module(torch), x, path=tmp_path / "argmax.brtx")
