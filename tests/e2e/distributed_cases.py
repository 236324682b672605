"""JAX shard_map programs run by brt on several ranks, checked against JAX.

  python3 distributed_cases.py prepare N DIR   # JAX on 4 host CPU devices: compiles
                                               # each case for a mesh of N, saves
                                               # inputs and JAX's outputs
  mpirun -np N python3 distributed_cases.py run DIR
                                               # every rank: brt.Session, its slice
                                               # of the inputs, its outputs checked

test_distributed.py drives both for N = 2 and 4.
"""
import json
import os
import pathlib
import sys

import numpy as np

TOLERANCE = 1e-5  # f32, relative (norm)


def cases(n):
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    def tp_mlp(x, w1, w2):
        # Column-parallel (all_gather + matmul), then row-parallel
        # (matmul + reduce_scatter): the AG+GEMM and GEMM+RS of Megatron-style
        # sequence parallelism.
        xg = jax.lax.all_gather(x, "x", axis=0, tiled=True)
        h = jax.nn.relu(xg @ w1)
        return jax.lax.psum_scatter(h @ w2, "x", scatter_dimension=0, tiled=True)

    heads, dh, d, s = 4, 8, 32, 16

    def tp_attention(x, wq, wk, wv, wo):
        # Heads split over the ranks; the output projection's partial sums psum'd.
        local_heads = wq.shape[1] // dh
        def split(t):
            return t.reshape(s, local_heads, dh).transpose(1, 0, 2)
        q, k, v = split(x @ wq), split(x @ wk), split(x @ wv)
        p = jax.nn.softmax(q @ k.transpose(0, 2, 1) / np.sqrt(dh), axis=-1)
        o = (p @ v).transpose(1, 0, 2).reshape(s, local_heads * dh)
        return jax.lax.psum(o @ wo, "x")

    def dp_gradient(w, x, y):
        def loss(w):
            return jnp.mean((jnp.tanh(x @ w) - y) ** 2)
        return jax.lax.psum(jax.grad(loss)(w), "x") / n

    def all_to_all(x):
        return jax.lax.all_to_all(x, "x", 1, 0, tiled=True)

    def ring(x):
        shifted = jax.lax.ppermute(x, "x", [(i, (i + 1) % n) for i in range(n)])
        return shifted + jax.lax.axis_index("x").astype(jnp.float32)

    def pmax(x):
        return jax.lax.pmax(x, "x")

    one_d = {
        "tp_mlp": (tp_mlp, (P("x"), P(None, "x"), P("x", None)), P("x"), [(8 * n, 32), (32, 64), (64, 32)]),
        "tp_attention": (tp_attention, (P(), P(None, "x"), P(None, "x"), P(None, "x"), P("x", None)), P(),
                         [(s, d), (d, heads * dh), (d, heads * dh), (d, heads * dh), (heads * dh, d)]),
        "dp_gradient": (dp_gradient, (P(), P("x"), P("x")), P(), [(16, 8), (8 * n, 16), (8 * n, 8)]),
        "all_to_all": (all_to_all, (P("x"),), P(None, "x"), [(4 * n, 4 * n)]),
        "ring_permute": (ring, (P("x"),), P("x"), [(4 * n, 6)]),
        "pmax": (pmax, (P("x"),), P(), [(5 * n, 7)]),
    }
    out = {name: (fn, ins, outs, shapes, (("x", n),)) for name, (fn, ins, outs, shapes) in one_d.items()}
    if n == 4:
        # A 2x2 mesh: collectives over one axis are split communicators
        # (groups [[0,1],[2,3]] over "model", [[0,2],[1,3]] over "data").
        def mesh_2d(x, w):
            return jax.lax.psum(x @ w, "model"), jax.lax.psum(x, "data")
        out["mesh_2d"] = (mesh_2d, (P("data", "model"), P("model", None)), (P("data", None), P(None, "model")),
                          [(8, 6), (6, 10)], (("data", 2), ("model", 2)))
    return out


def prepare(n, directory):
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "python"))
    import jax
    from jax.sharding import Mesh, NamedSharding
    import brt

    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(20261123)
    index = []
    for name, (fn, in_specs, out_specs, shapes, axes) in cases(n).items():
        devices = np.array(jax.devices()[:n]).reshape([size for _, size in axes])
        mesh = Mesh(devices, tuple(a for a, _ in axes))
        f = jax.shard_map(fn, mesh=mesh, in_specs=in_specs, out_specs=out_specs)
        inputs = [rng.standard_normal(s).astype(np.float32) for s in shapes]
        placed = [jax.device_put(x, NamedSharding(mesh, spec)) for x, spec in zip(inputs, in_specs)]
        expected = jax.jit(f)(*placed)
        expected = list(expected) if isinstance(expected, (tuple, list)) else [expected]
        brt.compile(f, *placed, path=str(directory / f"{name}.brtx"))
        np.savez(directory / f"{name}.npz", *inputs)
        np.savez(directory / f"{name}.expected.npz", *[np.asarray(e) for e in expected])
        index.append(name)
        if name == "tp_mlp":
            # The same program through JAX's older GSPMD lowering
            # (@SPMDFullToShardShape and a call of the body).
            jax.config.update("jax_use_shardy_partitioner", False)
            try:
                brt.compile(f, *placed, path=str(directory / "tp_mlp_gspmd.brtx"))
            finally:
                jax.config.update("jax_use_shardy_partitioner", True)
            for suffix in (".npz", ".expected.npz"):
                (directory / f"tp_mlp_gspmd{suffix}").write_bytes((directory / f"{name}{suffix}").read_bytes())
            index.append("tp_mlp_gspmd")
    (directory / "cases.json").write_text(json.dumps(index))


def run(directory):
    import brt

    directory = pathlib.Path(directory)
    failures = []
    for name in json.loads((directory / "cases.json").read_text()):
        session = brt.Session(str(directory / f"{name}.brtx"))
        fn = session.functions[0]
        inputs = np.load(directory / f"{name}.npz")
        expected = np.load(directory / f"{name}.expected.npz")
        names = [a["name"] for a in fn["arguments"] if a["role"] == "input"]
        local = [brt.distributed.shard(inputs[f"arr_{i}"], fn, names[i], session.rank)
                 for i in range(len(inputs.files))]
        outputs = session.run(*local)
        for i, out in enumerate(outputs):
            want = brt.distributed.shard(expected[f"arr_{i}"], fn, f"result{i}", session.rank)
            out = np.asarray(out)
            ok = out.shape == want.shape
            err = np.linalg.norm(out - want) / max(np.linalg.norm(want), 1e-30) if ok else np.inf
            ok = ok and err <= TOLERANCE
            print(f"rank {session.rank}/{session.world_size} {name} result{i}: "
                  f"shape {out.shape} rel err {err:.2e} {'ok' if ok else 'MISMATCH'}", flush=True)
            if not ok:
                failures.append(f"{name} result{i}")
    if failures:
        sys.exit(f"rank {session.rank}: mismatches: {', '.join(failures)}")


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare(int(sys.argv[2]), sys.argv[3])
    elif sys.argv[1] == "run":
        run(sys.argv[2])
    else:
        sys.exit(__doc__)
