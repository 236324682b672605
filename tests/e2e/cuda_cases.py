"""The JAX end-to-end cases for a GPU machine where brt-compile cannot run
(it links this machine's MLIR):

  python3 tests/e2e/cuda_cases.py pack DIR    # here: compile each case for
                                              # --target=cuda, save its inputs
                                              # and JAX's outputs
  python3 tests/e2e/cuda_cases.py check DIR   # there: run each with brt-run on
                                              # the CUDA provider and compare

scripts/gpu_pack.sh and scripts/gpu_suite.sh call it. The comparison is
test_jax.py's (output_check.py). `check` needs only NumPy: the GPU machine
has neither brt's Python extension nor the JAX version test_jax.py is
written for."""
import os
import pathlib
import subprocess
import sys

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from output_check import check_outputs  # noqa: E402


def pack(out):
    os.environ.setdefault("JAX_PLATFORMS", "cpu")  # references in float64-capable, exact CPU math
    from test_jax import CASES, brt, expected_outputs
    from test_symbolic_cuda import SYMBOLIC_CASES, pack_case
    for name in sorted(SYMBOLIC_CASES):  # one executable, a directory per shape
        pack_case(name, pathlib.Path(out) / name)
    for name, (fn, args) in sorted(CASES.items()):
        d = pathlib.Path(out) / name
        d.mkdir(parents=True, exist_ok=True)
        args = [np.asarray(a) for a in args]
        brt.compile(fn, *args, target="cuda", path=d / "model.brtx")
        for i, a in enumerate(args):
            np.save(d / f"in{i}.npy", a)
        for i, e in enumerate(expected_outputs(fn, args)):
            np.save(d / f"expected{i}.npy", e)
    print(f"packed {len(CASES)} cases and {len(SYMBOLIC_CASES)} symbolic ones into {out}")


def check(cases_dir, brt_run):
    """Runs every case: a directory with model.brtx and its inputs, or (a
    symbolic case) model.brtx and a subdirectory of inputs per shape."""
    failed = []
    cases = []
    for p in sorted(p for p in pathlib.Path(cases_dir).iterdir() if p.is_dir()):
        shapes = sorted(s for s in p.iterdir() if s.is_dir() and s.name.startswith("shape"))
        cases += [(f"{p.name}/{s.name}", p / "model.brtx", s) for s in shapes] or [(p.name, p / "model.brtx", p)]
    for name, model, d in cases:
        inputs = sorted(d.glob("in*.npy"), key=lambda p: int(p.stem[2:]))
        r = subprocess.run([brt_run, str(model), "--inputs", *map(str, inputs), "--out",
                            str(d / "out"), "--provider", "cuda"], capture_output=True, text=True)
        try:
            assert r.returncode == 0, r.stderr.strip()
            expected = [np.load(p) for p in sorted(d.glob("expected*.npy"), key=lambda p: int(p.stem[8:]))]
            check_outputs(expected, d / "out")
        except AssertionError as e:
            failed.append(name)
            print(f"FAILED {name}: {e}")
    print(f"{len(cases) - len(failed)} of {len(cases)} cases match JAX on CUDA")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "pack":
        pack(sys.argv[2])
    elif len(sys.argv) >= 4 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3]))
    else:
        sys.exit(__doc__)
