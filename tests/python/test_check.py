"""check=True: brt.compile and brt.compile_torch run the framework and the
compiled program on the same random inputs, and a planted wrong lowering or
rewrite is caught, naming the output, how far off it is and the seed."""
import numpy as np
import pytest

from conftest import require  # noqa: E402

import brt  # noqa: E402
import brt.compiler  # noqa: E402


def planted(monkeypatch, module, name, old, new):
    """Makes module.name's StableHLO text say `new` where it says `old`."""
    export = getattr(module, name)

    def wrong(*args, **kwargs):
        text = export(*args, **kwargs)
        assert old in text
        return text.replace(old, new)

    monkeypatch.setattr(module, name, wrong)


def test_jax_check_passes_and_catches_a_wrong_lowering(monkeypatch):
    jax = require("jax")
    jnp = jax.numpy

    def fn(x, w, i):
        return jnp.tanh(x @ w) - x[:, :1], jnp.take(x, i, axis=1)

    rng = np.random.default_rng(1)
    args = (rng.standard_normal((4, 8), np.float32), rng.standard_normal((8, 8), np.float32),
            np.array([0, 7, 3], np.int32))
    path = brt.compile(fn, *args, check=True, check_seed=3)
    assert brt.Session(path).run(*args)[0].shape == (4, 8)

    planted(monkeypatch, brt.compiler, "export_stablehlo", '"stablehlo.subtract"', '"stablehlo.add"')
    with pytest.raises(brt.CheckError, match=r"output 'result0' differs .* inputs from seed 3"):
        brt.compile(fn, *args, check=True, check_seed=3)


def test_torch_check_catches_the_frontend_fixes_turned_off(monkeypatch):
    torch = require("torch")
    require("torch_mlir")
    import brt.torch_frontend as torch_frontend

    class Split(torch.nn.Module):
        def forward(self, qkv):
            return qkv[..., [-2], :] * 2.0, qkv.sum(-1) % 0.7

    class Remainder(torch.nn.Module):
        def forward(self, x):
            return x * 3.0, x.sum(-1) % 0.7

    qkv = torch.randn(2, 3, 5, 4)
    path = brt.compile_torch(Split(), qkv, check=True)
    assert len(brt.Session(path).run(qkv.numpy())) == 2

    monkeypatch.setattr(torch_frontend, "keep_pytorch_meaning", lambda program: 0)
    with pytest.raises(brt.CheckError, match=r"output 'result1' differs .* inputs from seed 0"):
        brt.compile_torch(Remainder(), qkv, check=True)
    # Without the wrap, -2 reaches the gather, whose index check stops the run.
    with pytest.raises(ValueError, match=r"index -2 .* is not in \[0, 5\)"):
        brt.compile_torch(Split(), qkv, check=True)


def test_torch_check_covers_every_specialization(monkeypatch):
    torch = require("torch")
    require("torch_mlir")
    import brt.torch_frontend as torch_frontend

    linear = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.ReLU()).eval()
    small, big = torch.randn(1, 6), torch.randn(3, 6)
    brt.compile_torch(linear, small, specializations=[(big,)], check=True)

    # relu is select(x < 0, 0, x): made select(x > 0, 0, x)
    planted(monkeypatch, torch_frontend, "export_torch_stablehlo", "comparison_direction LT", "comparison_direction GT")
    with pytest.raises(brt.CheckError, match=r"function 'main_1x6'.*output 'result0'"):
        brt.compile_torch(linear, small, specializations=[(big,)], check=True)


def test_random_inputs_keep_integer_examples_in_range():
    from brt.check import random_like

    index = np.array([[0, 4], [2, 1]], np.int64)
    a, b, c = random_like([index, np.zeros(3, np.float32), np.ones(5, bool)], seed=5)
    assert a.dtype == np.int64 and a.min() >= 0 and a.max() <= 4
    assert b.dtype == np.float32 and np.all(b != 0)
    assert c.dtype == np.bool_
    assert np.array_equal(a, random_like([index], seed=5)[0])


def test_check_refuses_a_function_with_donated_state():
    jax = require("jax")
    step = jax.jit(lambda w, x: (w - 0.1 * x, (w * x).sum()), donate_argnums=0)
    w, x = np.ones(4, np.float32), np.arange(4, dtype=np.float32)
    with pytest.raises(brt.CheckError, match="keeps state"):
        brt.compile(step, w, x, check=True)


def test_compare_takes_infinities_and_large_integers_exactly():
    from brt.check import compare

    inf = np.float32(np.inf)
    for wrong in (0.0, -inf, 1e30):
        with pytest.raises(brt.CheckError, match="output 'y'"):
            compare([np.array([1.0, wrong], np.float32)], [np.array([1.0, inf], np.float32)], ["y"], 0, "t")
    compare([np.array([inf, np.nan], np.float32)], [np.array([inf, np.nan], np.float32)], ["y"], 0, "t")
    with pytest.raises(brt.CheckError, match="brt 1152921504606846976, framework 1152921504606846977"):
        compare([np.array([2**60], np.int64)], [np.array([2**60 + 1], np.int64)], ["i"], 0, "t")


def test_check_runs_bfloat16_torch_modules_and_refuses_other_targets(tmp_path):
    torch = require("torch")
    require("torch_mlir")
    linear = torch.nn.Linear(8, 4).to(torch.bfloat16).eval()
    brt.compile_torch(linear, torch.randn(2, 8, dtype=torch.bfloat16), check=True)
    with pytest.raises(brt.CheckError, match="runs the executable on the CPU"):
        brt.compile_torch(linear, torch.randn(2, 8, dtype=torch.bfloat16), target="cuda", check=True)


def test_a_failed_check_leaves_no_temporary_file(monkeypatch, tmp_path):
    jax = require("jax")
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    planted(monkeypatch, brt.compiler, "export_stablehlo", '"stablehlo.add"', '"stablehlo.subtract"')
    with pytest.raises(brt.CheckError):
        brt.compile(lambda x: x + 1.0, np.ones(3, np.float32), check=True)
    assert not list(tmp_path.glob("*.brtx"))
    del jax


def test_an_executable_compiled_without_a_path_is_removed_at_exit(tmp_path):
    require("jax")
    import os
    import subprocess
    import sys

    program = (
        "import numpy as np, brt\n"
        "path = brt.compile(lambda x: x * 2.0, np.ones(3, np.float32))\n"
        "kept = brt.compile(lambda x: x * 3.0, np.ones(3, np.float32), path=%r)\n"
        "out = brt.Session(path).new_request()\n"
        "print(path, flush=True)\n" % str(tmp_path / "kept.brtx"))
    package_root = os.path.dirname(os.path.dirname(brt.__file__))
    env = dict(os.environ, TMPDIR=str(tmp_path),
               PYTHONPATH=os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr
    made = run.stdout.strip().splitlines()[-1]
    assert made.startswith(str(tmp_path)) and made.endswith(".brtx")
    assert not os.path.exists(made)
    assert (tmp_path / "kept.brtx").exists()
