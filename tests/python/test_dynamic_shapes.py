"""A function over a symbolic batch through the Python Session: one
executable serves every batch size, matching NumPy in float64; plans are
kept per shape (bounded, counted); a violated constraint names it and the
Session stays usable."""
import numpy as np
import pytest

import brt

RNG = np.random.default_rng(37)


def mlp_reference(d, x):
    h = x.astype(np.float64)
    for layer in (1, 2, 3):
        h = h @ np.load(d / f"w{layer}.npy").astype(np.float64) + np.load(d / f"b{layer}.npy")
        if layer < 3:
            h = np.maximum(h, 0)
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_one_executable_serves_every_batch(mlp_dir):
    session = brt.Session(str(mlp_dir / "mlp_dynamic.brtx"), max_shape_plans=2)
    assert session.functions[0]["arguments"][0]["shape"][0] == "b"
    for rows in (1, 7, 33, 7, 1, 2):
        x = RNG.standard_normal((rows, 64)).astype(np.float32)
        (probabilities,) = session.run(x)
        assert probabilities.shape == (rows, 10)
        np.testing.assert_allclose(probabilities, mlp_reference(mlp_dir, x), rtol=1e-5, atol=1e-6)
    stats = session.shape_plan_stats()
    # Plans: 1, 7, then 33 drops 1; 7 is kept; 1 again drops 33; 2 drops 7.
    assert stats["misses"] == 5 and stats["hits"] == 1 and stats["evictions"] == 3
    assert stats["plans"] == 2 and stats["last_plan_ms"] > 0
    with pytest.raises(Exception, match=r"constraint 'b >= 1'.*b = 0"):
        session.run(np.zeros((0, 64), np.float32))
    (again,) = session.run(np.ones((3, 64), np.float32))
    assert again.shape == (3, 10)
