"""An executable written before the compiler's ops were typed (a JAX CNN with
a softmax: convolution, reduce_window, dot_general, broadcasts, the fused
kinds, kept in tests/data) still loads and runs unchanged, against JAX's
output saved with it."""
import pathlib

import numpy as np

import brt

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"


def test_executable_from_before_the_typed_ops_runs():
    session = brt.Session(str(DATA / "cnn_softmax_before_typed_ops.brtx"))
    ctx = session.new_request()
    ctx.bind(0, np.load(DATA / "cnn_softmax_input.npy"))
    ctx.run()
    out, want = ctx.outputs()[0], np.load(DATA / "cnn_softmax_jax_output.npy")
    assert out.shape == want.shape
    assert np.linalg.norm(out - want) / np.linalg.norm(want) < 1e-5
