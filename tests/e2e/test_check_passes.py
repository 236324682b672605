"""brt-compile --check-passes on real programs: every JAX case of test_jax.py
runs on the CPU provider after import and after each pass with the same
results, and the executable is still written. The planted wrong pass is in
tests/unit/check_passes_test.cc."""
import re
import subprocess

import numpy as np
import pytest

from test_jax import CASES  # skips without JAX; puts python/ on the path
from test_int16 import CASES as INT16_CASES

import brt  # noqa: E402

STEP = re.compile(r"--check-passes: step +(\d+) (\S+) +"
                  r"(program unchanged|max abs difference \S+ +\(\d+ runtime ops\))$")


def check_passes(tmp_path, *args):
    return subprocess.run([brt.find_tool(), *map(str, args), "-o", str(tmp_path / "out.brtx"), "--check-passes"],
                          capture_output=True, text=True)


def expect_passes_keep_the_results(tmp_path, name, fn, args):
    src = tmp_path / f"{name}.mlir"
    src.write_text(brt.export_stablehlo(fn, *[np.asarray(a) for a in args]))
    r = check_passes(tmp_path, src)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("--check-passes: after import: ") and lines[0].endswith("inputs from seed 0")
    steps = [STEP.match(line) for line in lines[1:-1]]
    assert all(steps), r.stdout
    assert [int(m.group(1)) for m in steps] == list(range(1, len(steps) + 1))
    assert steps[-1].group(2) == "place"
    assert lines[-1] == "--check-passes: no step changes the results"
    assert (tmp_path / "out.brtx").stat().st_size > 0


@pytest.mark.parametrize("name", sorted(CASES))
def test_passes_keep_the_results(name, tmp_path):
    expect_passes_keep_the_results(tmp_path, name, *CASES[name])


@pytest.mark.parametrize("name,fn,args", INT16_CASES, ids=[c[0] for c in INT16_CASES])
def test_passes_keep_int16_results(name, fn, args, tmp_path):
    """The same over test_int16.py's int16 and uint16 programs, on random i16 and u16 inputs."""
    expect_passes_keep_the_results(tmp_path, name, fn, args)


def test_collectives_are_refused(tmp_path):
    src = tmp_path / "rank.mlir"
    src.write_text(""""builtin.module"() ({
  "func.func"() <{function_type = (tensor<4xf32>) -> (tensor<4xf32>, tensor<ui32>), sym_name = "main"}> ({
  ^bb0(%x: tensor<4xf32>):
    %0 = "stablehlo.partition_id"() : () -> tensor<ui32>
    "func.return"(%x, %0) : (tensor<4xf32>, tensor<ui32>) -> ()
  }) : () -> ()
}) : () -> ()
""")
    r = check_passes(tmp_path, src)
    assert r.returncode == 1
    assert r.stderr.startswith("brt-compile: --check-passes: cannot check this program: 'partition_id' at "), r.stderr
    assert "is a collective" in r.stderr
    assert not (tmp_path / "out.brtx").exists()


def test_seed_needs_check_passes(tmp_path):
    r = subprocess.run([brt.find_tool(), "in.mlir", "-o", str(tmp_path / "out.brtx"), "--check-seed=3"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.startswith("brt-compile: --check-seed is for --check-passes")
