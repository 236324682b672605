"""The main job end to end: a transformer encoder block written in JAX is
exported to StableHLO, compiled by brt-compile, run by brt-run through the CPU
provider plugin, and compared with JAX.

    PYTHONPATH=python python3 examples/jax_encoder_block.py [BUILD_DIR]
"""
import pathlib
import subprocess
import sys
import tempfile

import jax
import jax.numpy as jnp
import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
import brt  # noqa: E402


def layer_norm(x, g, b, eps=1e-5):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * g + b


def encoder_block(x, wq, wk, wv, wo, g1, b1, w_up, b_up, w_down, b_down, g2, b2, heads=4):
    batch, seq, width = x.shape

    def split(t):
        return t.reshape(batch, seq, heads, width // heads).transpose(0, 2, 1, 3)

    q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
    scores = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.sqrt(width // heads).astype(x.dtype)
    attn = jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(scores, axis=-1), v)
    h = layer_norm(x + attn.transpose(0, 2, 1, 3).reshape(batch, seq, width) @ wo, g1, b1)
    return layer_norm(h + jax.nn.gelu(h @ w_up + b_up, approximate=False) @ w_down + b_down, g2, b2)


def main():
    build = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build"
    rng = np.random.default_rng(0)
    batch, seq, width = 2, 64, 256
    s = float(1 / np.sqrt(width))
    normal = lambda *shape: rng.standard_normal(shape).astype(np.float32)  # noqa: E731
    args = [normal(batch, seq, width)] + [normal(width, width) * s for _ in range(4)] + [
        1 + 0.1 * normal(width), 0.1 * normal(width), normal(width, 4 * width) * s, 0.1 * normal(4 * width),
        normal(4 * width, width) * s / 2, 0.1 * normal(width), 1 + 0.1 * normal(width), 0.1 * normal(width)]
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
