#!/usr/bin/env bash
# The main job end to end: installs dependencies, builds brt, writes an MLP
# executable with the builder API (3 dense layers, relu, softmax), and runs it
# with brt-run through the dlopen'ed CPU provider plugin.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/bootstrap.sh
scripts/build.sh
out=build/demo
mkdir -p "$out"
build/tests/make_mlp "$out"
build/bin/brt-run "$out/mlp.brtx" --inputs "$out/x.npy" --out "$out"
python3 - "$out" <<'PY'
import sys, pathlib
import numpy as np
d = pathlib.Path(sys.argv[1])
h = np.load(d / "x.npy").astype(np.float64)
for l in (1, 2, 3):
    h = h @ np.load(d / f"w{l}.npy") + np.load(d / f"b{l}.npy")
    h = np.maximum(h, 0) if l < 3 else h
e = np.exp(h - h.max(1, keepdims=True))
ref = e / e.sum(1, keepdims=True)
out = np.load(d / "out0.npy")
print(f"brt vs NumPy float64: relative error {np.linalg.norm(out - ref) / np.linalg.norm(ref):.2e}")
PY
