"""The main job end to end: a transformer encoder block written in JAX is
exported to StableHLO, compiled by brt-compile, run by brt-run through the CPU
provider plugin, and compared with JAX.

    PYTHONPATH=python python3 examples/jax_encoder_block.py [BUILD_DIR]
"""
import pathlib
import subprocess
import sys
import tempfile

import jax.numpy as jnp
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
import brt  # noqa: E402
from jax_models import encoder_args, encoder_block  # noqa: E402


def main():
    build = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build"
    args = encoder_args(np.random.default_rng(0))
    with tempfile.TemporaryDirectory() as tmp:
        tmp = pathlib.Path(tmp)
        model = brt.compile(encoder_block, *args, path=tmp / "encoder.brtx", stats=True)
        files = []
        for i, a in enumerate(args):
            files.append(tmp / f"arg{i}.npy")
            np.save(files[-1], a)
        r = subprocess.run([str(build / "bin" / "brt-run"), model, "--inputs", *map(str, files), "--out", str(tmp)],
                           capture_output=True, text=True)
        print(r.stdout, end="")
        if r.returncode != 0:
            sys.exit(f"brt-run failed: {r.stderr}")
        out = np.load(tmp / "out0.npy")
    ref = np.asarray(encoder_block(*[jnp.asarray(a) for a in args]), np.float64)
    err = np.linalg.norm(out - ref) / np.linalg.norm(ref)
    print(f"brt vs JAX: relative error {err:.2e}")
    sys.exit(0 if err <= 1e-4 else 1)


if __name__ == "__main__":
    main()
