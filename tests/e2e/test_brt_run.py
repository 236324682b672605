"""End to end: an MLP written with the builder API, run by brt-run through the
dlopen'ed CPU plugin on .npy inputs, compared with NumPy in float64."""
import numpy as np

from conftest import brt_run


def mlp_reference(d, x):
    h = x.astype(np.float64)
    for layer in (1, 2, 3):
        w = np.load(d / f"w{layer}.npy").astype(np.float64)
        b = np.load(d / f"b{layer}.npy").astype(np.float64)
        h = h @ w + b
        if layer < 3:
            h = np.maximum(h, 0)
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def rel_error(out, ref):
    return np.linalg.norm(out - ref) / np.linalg.norm(ref)


def test_mlp_matches_numpy_float64(build_dir, mlp_dir, tmp_path):
    r = brt_run(build_dir, mlp_dir / "mlp.brtx", "--inputs", mlp_dir / "x.npy", "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    out = np.load(tmp_path / "out0.npy")
    assert out.shape == (16, 10) and out.dtype == np.float32
    assert rel_error(out, mlp_reference(mlp_dir, np.load(mlp_dir / "x.npy"))) <= 1e-5
    assert "out0 probabilities: f32[16,10] min=" in r.stdout


def test_inputs_by_name_and_fresh_random_data(build_dir, mlp_dir, tmp_path):
    x = np.random.default_rng(3).standard_normal((16, 64)).astype(np.float32)
    np.save(tmp_path / "mine.npy", x)
    r = brt_run(build_dir, mlp_dir / "mlp.brtx", "--function", "mlp", "--input", f"x={tmp_path / 'mine.npy'}",
                "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    assert rel_error(np.load(tmp_path / "out0.npy"), mlp_reference(mlp_dir, x)) <= 1e-5


def test_random_inputs_are_reproducible(build_dir, mlp_dir, tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    assert brt_run(build_dir, mlp_dir / "mlp.brtx", "--random-inputs", 5, "--out", a).returncode == 0
    assert brt_run(build_dir, mlp_dir / "mlp.brtx", "--random-inputs", 5, "--out", b).returncode == 0
    np.testing.assert_array_equal(np.load(a / "out0.npy"), np.load(b / "out0.npy"))
    assert np.allclose(np.load(a / "out0.npy").sum(axis=1), 1, atol=1e-5)


def test_input_errors_exit_2_with_a_clear_message(build_dir, mlp_dir, tmp_path):
    model = mlp_dir / "mlp.brtx"
    r = brt_run(build_dir, model)
    assert r.returncode == 2 and "missing inputs: x" in r.stderr
    r = brt_run(build_dir, model, "--inputs", mlp_dir / "x.npy", mlp_dir / "x.npy")
    assert r.returncode == 2 and "got 2 input files but function 'mlp' takes 1 inputs" in r.stderr
    np.save(tmp_path / "f64.npy", np.zeros((16, 64)))
    r = brt_run(build_dir, model, "--inputs", tmp_path / "f64.npy")
    assert r.returncode == 2 and "expected dtype f32, got f64" in r.stderr
    np.save(tmp_path / "shape.npy", np.ones((4, 64), np.float32))
    r = brt_run(build_dir, model, "--inputs", tmp_path / "shape.npy")
    assert r.returncode == 2 and "expected shape [16,64], got [4,64]" in r.stderr
    r = brt_run(build_dir, model, "--input", f"y={mlp_dir / 'x.npy'}")
    assert r.returncode == 2 and "no input named 'y'" in r.stderr
    r = brt_run(build_dir, model, "--bogus")
    assert r.returncode == 2 and "unknown option '--bogus'" in r.stderr
    r = brt_run(build_dir, tmp_path / "absent.brtx")
    assert r.returncode == 2 and "cannot open" in r.stderr


def test_malformed_executables_exit_3(build_dir, mlp_dir, tmp_path):
    data = (mlp_dir / "mlp.brtx").read_bytes()
    cases = {"truncated": data[: len(data) // 3], "garbage": bytes(range(256)) * 4, "empty": b""}
    flipped = bytearray(data)
    flipped[200] ^= 0x10
    cases["flipped"] = bytes(flipped)
    for name, payload in cases.items():
        path = tmp_path / f"{name}.brtx"
        path.write_bytes(payload)
        r = brt_run(build_dir, path, "--inputs", mlp_dir / "x.npy")
        assert r.returncode == 3, (name, r.returncode, r.stderr)
        assert r.stderr.startswith("brt-run: ") and str(path) in r.stderr, (name, r.stderr)


def test_a_symbolic_batch_runs_at_any_size(build_dir, mlp_dir, tmp_path):
    """mlp_dynamic.brtx: the same MLP over a symbolic batch "b >= 1". Inputs of
    5 and 16 rows run on one executable and match NumPy; random inputs take
    their size from --symbols, and a missing or bad one is named."""
    x = np.random.default_rng(3).standard_normal((5, 64)).astype(np.float32)
    np.save(tmp_path / "x5.npy", x)
    for path, rows in ((tmp_path / "x5.npy", 5), (mlp_dir / "x.npy", 16)):
        out_dir = tmp_path / f"out{rows}"
        r = brt_run(build_dir, mlp_dir / "mlp_dynamic.brtx", "--inputs", path, "--out", out_dir)
        assert r.returncode == 0, r.stderr
        out = np.load(out_dir / "out0.npy")
        assert out.shape == (rows, 10)
        assert rel_error(out, mlp_reference(mlp_dir, np.load(path))) <= 1e-5
    r = brt_run(build_dir, mlp_dir / "mlp_dynamic.brtx", "--random-inputs", 1, "--symbols", "b=3", "--out", tmp_path)
    assert r.returncode == 0, r.stderr
    assert np.load(tmp_path / "out0.npy").shape == (3, 10)
    r = brt_run(build_dir, mlp_dir / "mlp_dynamic.brtx", "--random-inputs", 1)
    assert r.returncode == 2 and "'b'" in r.stderr and "--symbols" in r.stderr
    r = brt_run(build_dir, mlp_dir / "mlp_dynamic.brtx", "--random-inputs", 1, "--symbols", "b=x")
    assert r.returncode == 2 and "NAME=SIZE" in r.stderr and "'b=x'" in r.stderr
    np.save(tmp_path / "empty.npy", np.zeros((0, 64), np.float32))
    r = brt_run(build_dir, mlp_dir / "mlp_dynamic.brtx", "--inputs", tmp_path / "empty.npy")
    assert r.returncode != 0 and "constraint 'b >= 1'" in r.stderr and "b = 0" in r.stderr
