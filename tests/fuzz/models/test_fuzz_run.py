"""A fixed, reproducible stretch of fuzzing for CI: the same programs every
run (seed and counts below, or $BRT_FUZZ_SEED), both frontends. New
failures are saved under the build tree, not the source tree."""
import os
import pathlib
import subprocess
import sys

from conftest import BUILD, MODELS, require

JAX_PROGRAMS = 1000  # about 60 s
TORCH_PROGRAMS = 250  # about 60 s: torch.export costs 0.2-0.4 s a program


def test_fuzz_fixed_budget(tmp_path):
    require("jax")
    require("torch")
    require("torch_mlir")
    seed = os.environ.get("BRT_FUZZ_SEED", "20261126")
    save_dir = pathlib.Path(os.environ.get("BRT_FUZZ_SAVE_DIR", tmp_path / "found"))
    r = subprocess.run([sys.executable, str(MODELS / "fuzz.py"), "--frontend", "both", "--seed", seed,
                        "--programs", str(JAX_PROGRAMS), "--torch-programs", str(TORCH_PROGRAMS),
                        "--budget-seconds", "400", "--build", str(BUILD),
                        "--save-dir", str(save_dir), "--progress-seconds", "30"],
                       capture_output=True, text=True, timeout=900)
    print(r.stdout[-20000:])
    print(r.stderr[-5000:], file=sys.stderr)
    assert r.returncode == 0, f"fuzz.py found failures (saved in {save_dir}):\n{r.stdout[-5000:]}"
