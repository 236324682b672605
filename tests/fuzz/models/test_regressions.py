"""Every saved case under regressions/ replayed through brt against the
framework (a case whose XFAIL names a cause brt still has is expected to
fail, strictly: once brt is fixed, set XFAIL = None); and the fuzzer's own
promises (programs reproducible from their seed, saved cases readable)."""
import ast
import pathlib

import numpy as np
import pytest

from conftest import require

REGRESSIONS = pathlib.Path(__file__).resolve().parent / "regressions"


def _constants(path):
    """The module-level constants of a case file, read without running it
    (its frontend may not be installed)."""
    constants = {}
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                constants[node.targets[0].id] = ast.literal_eval(node.value)
            except ValueError:
                pass
    return constants


def _case_params():
    params = []
    for path in sorted(REGRESSIONS.glob("*.py")):
        xfail = _constants(path).get("XFAIL")
        marks = [pytest.mark.xfail(reason=xfail, strict=True)] if xfail else []
        params.append(pytest.param(path, marks=marks, id=path.stem))
    return params


def _pipeline(frontend_name):
    if frontend_name == "jax":
        require("jax")
    else:
        require("torch")
        require("torch_mlir")
    from frontends import make_frontend
    from runner import Pipeline
    return Pipeline(make_frontend(frontend_name))


@pytest.mark.parametrize("path", _case_params())
def test_saved_case(path):
    from cases import load_case
    case = load_case(path)
    result = _pipeline(case.frontend).run([case])[0]
    assert result.status == "passed", f"{result.status}: {result.reason}"


@pytest.mark.parametrize("frontend_name", ["jax", "torch"])
def test_programs_are_reproducible(frontend_name):
    """A program is its seed: generated twice, the same source and inputs."""
    from generator import generate
    from program import build
    frontend = _pipeline(frontend_name).frontend
    for seed in range(5):
        first, second = build(generate(seed, frontend), frontend), build(generate(seed, frontend), frontend)
        assert first.source == second.source
        assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(first.inputs, second.inputs))


def test_saved_case_reads_back(tmp_path):
    """case_text writes what load_case reads: the same program and inputs."""
    from cases import case_text, load_case, save_case
    from generator import generate
    from program import build
    from runner import Result
    frontend = _pipeline("jax").frontend
    program = build(generate(3, frontend), frontend)
    path = save_case(case_text(program, frontend, Result("mismatch", "a test"), "test_saved_case_reads_back"), "jax",
                     program.recipe.kinds(), tmp_path)
    case = load_case(path)
    assert case.input_names == program.input_names
    for a, b in zip(case.inputs, program.inputs):
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)


def test_empty_numpy_array_binds():
    """NumPy gives an empty array zero strides; brt's binding refused it as
    not C-contiguous (found by the fuzzer; fixed in FromArray)."""
    jax = require("jax")
    import brt
    x = np.zeros((0, 5, 4), np.float32)
    session = brt.Session(brt.compile(lambda a: a + 1, x))
    (out,) = session.run(x)
    assert out.shape == (0, 5, 4)
    del jax
