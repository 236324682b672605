"""The fusion passes on symbolic shapes (issue 37): a JAX program of batch b
and sequence s (jax.export.symbolic_shape) compiles once into the fused ops a
static one gets (layer norm, a matmul with its bias and relu, attention with
an additive key mask) and matches JAX at several shapes."""
import subprocess

import jax
import jax.numpy as jnp
import numpy as np

import brt
from brt.compiler import export_stablehlo

RNG = np.random.default_rng(37)
D, HEADS = 32, 2


def randn(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def spec(shape):
    return jax.ShapeDtypeStruct(shape, jnp.float32)


def encoder(p, x, key_mask):
    """Post-norm attention (an additive mask of the padded keys) and a relu
    MLP, each with its bias and layer norm."""
    batch, seq, d = x.shape

    def norm(h, g, b):
        mean = h.mean(-1, keepdims=True)
        var = ((h - mean) ** 2).mean(-1, keepdims=True)
        return (h - mean) * jax.lax.rsqrt(var + 1e-5) * g + b

    split = lambda t: t.reshape(batch, seq, HEADS, d // HEADS).transpose(0, 2, 1, 3)
    q, k, v = (split(x @ p[w]) for w in ("wq", "wk", "wv"))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d // HEADS) + key_mask[:, None, None, :]
    att = (jax.nn.softmax(scores, axis=-1) @ v).transpose(0, 2, 1, 3).reshape(batch, seq, d)
    h = norm(x + att @ p["wo"], p["g1"], p["b1"])
    return norm(h + jax.nn.relu(h @ p["w1"] + p["c1"]) @ p["w2"], p["g2"], p["b2"])


def params():
    p = {w: randn(D, D) / 6 for w in ("wq", "wk", "wv", "wo")}
    p.update(w1=randn(D, 4 * D) / 6, c1=randn(4 * D), w2=randn(4 * D, D) / 12)
    for i in ("1", "2"):
        p["g" + i], p["b" + i] = 1 + 0.1 * randn(D), 0.1 * randn(D)
    return p


def test_encoder_fuses_over_batch_and_sequence(have_compiler, tmp_path):
    b, s = jax.export.symbolic_shape("b, s")
    p = params()
    specs = (jax.tree_util.tree_map(lambda a: spec(a.shape), p), spec((b, s, D)), spec((b, s)))
    (tmp_path / "encoder.mlir").write_text(export_stablehlo(encoder, *specs))
    subprocess.run([brt.find_tool(), str(tmp_path / "encoder.mlir"), "-o", str(tmp_path / "encoder.brtx"),
                    "--dump-after-each", str(tmp_path / "dump")], check=True, capture_output=True)
    (placed,) = (tmp_path / "dump").glob("*-place.mlir")
    program = placed.read_text()
    assert program.count("brt.layer_norm(") == 2 and program.count("brt.attention(") == 1
    assert 'brt.matmul(' in program and 'activation = "relu"' in program
    assert '-> tensor<?x?x32xf32, ["b", "s", ""]>' in program  # the fused ops keep the expressions
    session = brt.Session(str(tmp_path / "encoder.brtx"))
    for rows, cols in ((1, 1), (2, 7), (3, 16), (1, 33)):
        x, mask = randn(rows, cols, D), np.where(RNG.random((rows, cols)) < 0.2, -1e9, 0).astype(np.float32)
        mask[:, 0] = 0  # every query sees a key
        (got,) = session.run(*jax.tree_util.tree_leaves((p, x, mask)))
        np.testing.assert_allclose(got, np.asarray(jax.jit(encoder)(p, x, mask)), rtol=2e-4, atol=2e-4)
