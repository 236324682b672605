"""Programs over symbolic shapes compiled for --target=cuda: one executable,
run at several shapes on the CUDA provider, against JAX. Its generated
kernels take their extents at run time (docs/format.md, 1.7), and cuBLASLt,
softmax and layer norm are prepared per shape. Here they run on the emulated
CUDA provider; scripts/gpu_pack.sh packs the same cases (cuda_cases.py) for a
GPU."""
import os
import subprocess

import numpy as np
import pytest

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

import brt  # noqa: E402
from output_check import check_outputs  # noqa: E402

RNG = np.random.default_rng(37)


def normal(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def spec(shape):
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def mlp(w1, b1, w2, b2, x):
    return jax.nn.log_softmax(jax.nn.gelu(x @ w1 + b1) @ w2 + b2, axis=-1)


def causal_block(wqkv, wo, g, x):
    """One-head causal attention and a layer norm over (b, s, 32)."""
    seq = x.shape[1]
    mean = x.mean(-1, keepdims=True)
    h = (x - mean) * jax.lax.rsqrt(((x - mean) ** 2).mean(-1, keepdims=True) + 1e-5) * g
    q, k, v = jnp.split(h @ wqkv, 3, axis=-1)
    scores = q @ k.transpose(0, 2, 1) / np.sqrt(32.0)
    causal = jnp.arange(seq)[:, None] >= jnp.arange(seq)[None, :]
    return x + jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1) @ v @ wo


def doubled_and_padded(x):
    """A concatenation doubling a dimension, then a round-up to a multiple of 8."""
    y = jnp.tanh(jnp.concatenate([x, x * 2.0], axis=1))
    return jnp.pad(y, ((0, 0), (0, -y.shape[1] % 8))) + 1.0


def _symbols(text):
    return jax.export.symbolic_shape(text)


def _cases():
    b, s = _symbols("b, s")
    (n,) = _symbols("n")
    w = [normal(16, 32, scale=0.3), normal(32, scale=0.1), normal(32, 10, scale=0.3), normal(10, scale=0.1)]
    block = [normal(32, 96, scale=0.2), normal(32, 32, scale=0.2), normal(32, scale=0.5) + 1.0]
    return {
        # name: (fn, argument specs, concrete argument lists)
        "sym_mlp_batch": (mlp, [spec(a.shape) for a in w] + [spec((b, 16))],
                          [w + [normal(rows, 16)] for rows in (1, 5, 64)]),
        "sym_causal_block": (causal_block, [spec(a.shape) for a in block] + [spec((b, s, 32))],
                             [block + [normal(bb, ss, 32)] for bb, ss in ((1, 1), (2, 9), (3, 40))]),
        "sym_elementwise_rows": (lambda x, y: (jnp.tanh(x * y + 1.0) * 0.5 + jnp.maximum(x, 0.0),
                                               jnp.sum(jnp.exp(x), axis=-1)),
                                 [spec((b, s, 8)), spec((s, 8))],
                                 [[normal(bb, ss, 8), normal(ss, 8)] for bb, ss in ((3, 5), (1, 1), (2, 300))]),
        "sym_doubled_padded": (doubled_and_padded, [spec((3, n))], [[normal(3, k)] for k in (1, 4, 13)]),
        "sym_loop_and_branch": (lambda x, n: jax.lax.cond(
            n > 1, lambda v: v.mean(0) * v.shape[0], lambda v: v.sum(0),
            jax.lax.fori_loop(0, n, lambda i, h: jnp.tanh(h * 1.5 + 0.1), x)),
                                [spec((b, s)), jax.ShapeDtypeStruct((), jnp.int32)],
                                [[normal(bb, ss), np.int32(k)] for bb, ss, k in ((1, 1, 0), (2, 9, 3), (3, 70, 1))]),
        "sym_cumulative_scans": (lambda x: (jnp.cumsum(x, axis=1), jax.lax.cummax(x, axis=0)), [spec((b, s))],
                                 [[normal(bb, ss)] for bb, ss in ((1, 1), (2, 9), (3, 70))]),
    }


SYMBOLIC_CASES = _cases()


def pack_case(name, directory):
    """Compiles case `name` for --target=cuda into directory/model.brtx and
    writes one subdirectory per shape: its inputs and JAX's outputs."""
    fn, specs, arg_lists = SYMBOLIC_CASES[name]
    directory.mkdir(parents=True, exist_ok=True)
    model = brt.compile(fn, *specs, target="cuda", path=directory / "model.brtx")
    shapes = []
    for k, args in enumerate(arg_lists):
        d = directory / f"shape{k}"
        d.mkdir(exist_ok=True)
        for i, a in enumerate(args):
            np.save(d / f"in{i}.npy", a)
        expected = jax.jit(fn)(*args)
        for i, e in enumerate(expected if isinstance(expected, (tuple, list)) else [expected]):
            np.save(d / f"expected{i}.npy", np.asarray(e))
        shapes.append(d)
    return model, shapes


def run_shape(brt_run, model, d, env=None):
    inputs = sorted(d.glob("in*.npy"), key=lambda p: int(p.stem[2:]))
    r = subprocess.run([str(brt_run), str(model), "--inputs", *map(str, inputs), "--out", str(d / "out"),
                        "--provider", "cuda"], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr.strip()
    expected = [np.load(p) for p in sorted(d.glob("expected*.npy"), key=lambda p: int(p.stem[8:]))]
    check_outputs(expected, d / "out")


@pytest.mark.parametrize("name", sorted(SYMBOLIC_CASES))
def test_symbolic_program_matches_jax_on_emulated_cuda(name, have_compiler, nvrtc, build_dir, tmp_path):
    emulated = build_dir / "tests" / "emulated_cuda"
    if not (emulated / "libbrt_provider_cuda.so").exists():
        pytest.skip("the emulated CUDA provider is built only where a CUDA toolkit is found")
    model, shapes = pack_case(name, tmp_path / name)
    env = dict(os.environ, BRT_PROVIDER_PATH=str(emulated))
    for d in shapes:
        run_shape(build_dir / "bin" / "brt-run", model, d, env)
