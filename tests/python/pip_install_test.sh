#!/usr/bin/env bash
# `pip install .` into a fresh venv, then the installed package loads and runs
# the end-to-end MLP and matches NumPy float64.
# usage: pip_install_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1 build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m venv --system-site-packages "$work/venv"
"$work/venv/bin/pip" install -q --no-build-isolation --disable-pip-version-check "$src"
"$build/tests/make_mlp" "$work" >/dev/null
cd "$work"  # not the source tree: the installed package must be the one imported
"$work/venv/bin/python" - "$work" <<'PY'
import pathlib, sys
import numpy as np
import brt
d = pathlib.Path(sys.argv[1])
assert "site-packages" in brt.__file__, brt.__file__
x = np.load(d / "x.npy")
(out,) = brt.Session(str(d / "mlp.brtx")).run(x)
h = x.astype(np.float64)
for l in (1, 2, 3):
    h = h @ np.load(d / f"w{l}.npy") + np.load(d / f"b{l}.npy")
    h = np.maximum(h, 0) if l < 3 else h
e = np.exp(h - h.max(1, keepdims=True))
ref = e / e.sum(1, keepdims=True)
err = np.linalg.norm(out - ref) / np.linalg.norm(ref)
print(f"installed brt: {brt.__file__}, relative error {err:.2e}")
assert err <= 1e-5
PY
