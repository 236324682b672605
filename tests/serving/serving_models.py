"""The brt models the serving test and benchmark put behind Triton: the JAX
MLP of examples/jax_models.py and all-MiniLM-L6-v2 (examples/
minilm_embeddings.py), each compiled for several batch sizes into one
executable, so the backend auto-completes max_batch_size and pads a batch up
to the nearest function; and tests/e2e/make_mlp's MLP over a symbolic batch."""
import os
import pathlib
import subprocess
import sys

import numpy as np

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))

MLP_BATCHES = (1, 4, 8)
MLP_WIDTHS = (32, 64, 64, 10)


def mlp_weights(seed=0):
    rng = np.random.default_rng(seed)
    weights = []
    for fan_in, fan_out in zip(MLP_WIDTHS[:-1], MLP_WIDTHS[1:]):
        weights += [(rng.standard_normal((fan_in, fan_out)) / np.sqrt(fan_in)).astype(np.float32),
                    (rng.standard_normal(fan_out) * 0.1).astype(np.float32)]
    return weights


def compile_mlp(path, seed=0, batches=MLP_BATCHES, target="cpu"):
    """The MLP with its weights folded in: input 'x' [batch, 32] f32, one
    function per batch size, for `target` (brt-compile --target)."""
    import jax
    import jax.numpy as jnp

    import brt
    import jax_models

    weights = [jnp.asarray(w) for w in mlp_weights(seed)]

    def classify(x):
        return jax_models.mlp(x, *weights)

    texts = {f"main_{b}": brt.export_stablehlo(classify, jax.ShapeDtypeStruct((b, MLP_WIDTHS[0]), jnp.float32))
             for b in batches}
    return brt.compile_stablehlo(texts, path=str(path), target=target)


def make_symbolic_mlp(build_dir, directory):
    """tests/e2e/make_mlp's executables, written by the builder:
    mlp_dynamic.brtx takes x [b, 64] f32 for any batch b >= 1 (a symbolic
    dim, which compiling from JAX does not make) and returns
    'probabilities' [b, 10]; its weights beside it as {w,b}{1,2,3}.npy."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(pathlib.Path(build_dir) / "tests" / "make_mlp"), str(directory)], check=True,
                   capture_output=True)
    return directory / "mlp_dynamic.brtx"


def symbolic_mlp_reference(directory, x):
    """make_mlp's MLP in float64 NumPy from the weights it wrote."""
    h = x.astype(np.float64)
    for layer in (1, 2, 3):
        w, b = (np.load(pathlib.Path(directory) / f"{n}{layer}.npy").astype(np.float64) for n in "wb")
        h = h @ w + b
        if layer < 3:
            h = np.maximum(h, 0)
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def compile_minilm(path, batches=(1, 8), sequences=(16,)):
    """all-MiniLM-L6-v2's sentence embeddings: inputs input_ids,
    attention_mask and token_type_ids [batch, sequence] i64, output [batch,
    384] f32; a function per (batch, sequence)."""
    import torch

    import brt
    import minilm_embeddings

    st = minilm_embeddings.load_sentence_transformer()

    def example(batch, seq):
        ids = torch.full((batch, seq), 101, dtype=torch.int64)
        return ids, torch.ones_like(ids), torch.zeros_like(ids)

    shapes = [(b, s) for b in batches for s in sequences]
    return brt.compile_torch(minilm_embeddings.embedding_module(st), *example(*shapes[0]),
                             specializations=[example(*s) for s in shapes[1:]], path=str(path))


def minilm_inputs(rng, batch, seq, vocab=30522):
    """Random token ids with a random-length attention mask (at least one
    token per row), as int64 arrays keyed by input name."""
    ids = rng.integers(1000, vocab, size=(batch, seq), dtype=np.int64)
    ids[:, 0] = 101
    lengths = rng.integers(1, seq + 1, size=batch)
    mask = (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int64)
    return {"input_ids": ids * mask, "attention_mask": mask,
            "token_type_ids": np.zeros((batch, seq), np.int64)}


def write_model(repository, name, version, executable, config=None):
    """<repository>/<name>/<version>/model.brtx and config.pbtxt (the
    backend line, then `config`)."""
    directory = pathlib.Path(repository) / name
    (directory / str(version)).mkdir(parents=True, exist_ok=True)
    target = directory / str(version) / "model.brtx"
    if os.path.exists(target):
        os.remove(target)
    os.link(executable, target) if os.stat(executable).st_dev == os.stat(directory).st_dev else \
        target.write_bytes(pathlib.Path(executable).read_bytes())
    (directory / "config.pbtxt").write_text('backend: "brt"\n' + (config or ""))
    return directory
