"""Data-parallel training on N ranks against JAX on an N-device mesh: an MLP
train step under jax.shard_map, gradients and loss pmean-ed over the "data"
axis, optax AdamW, parameters and optimizer state donated (replicated on every
rank, kept in place by brt between steps), each rank taking its slice of
every step's batch.

  python3 dp_training.py prepare N DIR   # JAX on N host CPU devices: compiles
                                         # the step for a mesh of N, runs STEPS
                                         # steps, saves state, batches, losses
  mpirun -np N python3 dp_training.py run DIR
                                         # every rank: STEPS steps through brt,
                                         # each loss and the final state checked

test_distributed.py drives both for N = 2 and 4.
"""
import os
import pathlib
import sys

import numpy as np

STEPS = 20
ROWS_PER_RANK = 8
LOSS_TOLERANCE = 1e-5  # f32, relative, every step
STATE_TOLERANCE = 1e-4  # f32, relative (norm), each state tensor after the last step


def train_step(n):
    import jax
    import jax.numpy as jnp
    import optax
    from jax.sharding import PartitionSpec as P

    mesh = jax.make_mesh((n,), ("data",), devices=jax.devices()[:n])
    opt = optax.adamw(1e-2)

    def loss_fn(p, x, y):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)

    def body(p, o, x, y):
        loss, g = jax.value_and_grad(loss_fn)(p, x, y)
        g = jax.lax.pmean(g, "data")
        u, o = opt.update(g, o, p)
        return optax.apply_updates(p, u), o, jax.lax.pmean(loss, "data")

    step = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P(), P(), P("data"), P("data")),
                                 out_specs=(P(), P(), P())), donate_argnums=(0, 1))
    rng = np.random.default_rng(0)
    params = {"w1": rng.standard_normal((16, 32)).astype(np.float32) * 0.3,
              "b1": rng.standard_normal(32).astype(np.float32) * 0.1,
              "w2": rng.standard_normal((32, 4)).astype(np.float32) * 0.3,
              "b2": rng.standard_normal(4).astype(np.float32) * 0.1}
    return mesh, step, params, opt.init(params)


def prepare(n, out):
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={max(n, 4)}"
    import jax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    import brt

    mesh, step, params, opt_state = train_step(n)
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((STEPS, ROWS_PER_RANK * n, 16)).astype(np.float32)
    ys = rng.standard_normal((STEPS, ROWS_PER_RANK * n, 4)).astype(np.float32)
    replicated, split = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    state = jax.device_put((params, opt_state), replicated)
    brt.compile(step, *state, jax.device_put(xs[0], split), jax.device_put(ys[0], split),
                path=str(out / "step.brtx"))
    initial = [np.asarray(v) for v in jax.tree_util.tree_leaves(state)]
    losses = []
    p, o = state
    for i in range(STEPS):
        p, o, loss = step(p, o, jax.device_put(xs[i], split), jax.device_put(ys[i], split))
        losses.append(float(loss))
    final = [np.asarray(v) for v in jax.tree_util.tree_leaves((p, o))]
    # State leaves in pytree order, which is the order of brt's state arguments.
    np.savez(out / "data.npz", xs=xs, ys=ys, losses=np.array(losses))
    np.savez(out / "initial.npz", *initial)
    np.savez(out / "final.npz", *final)


def run(cases):
    import brt
    import brt.distributed as bd

    session = brt.Session(str(cases / "step.brtx"))
    function = session.functions[0]
    rank, world = session.rank, session.world_size
    data, initial, final = np.load(cases / "data.npz"), np.load(cases / "initial.npz"), np.load(cases / "final.npz")
    ctx = session.new_request()
    state_names = [a["name"] for a in function["arguments"] if a["role"] == "state"]
    assert len(state_names) == len(initial.files), (state_names, initial.files)
    initial = [initial[f"arr_{i}"] for i in range(len(state_names))]
    final = [final[f"arr_{i}"] for i in range(len(state_names))]
    ctx.bind_state(dict(zip(state_names, initial)))
    worst_loss = 0.0
    for i in range(STEPS):
        ctx.bind("x", bd.shard(data["xs"][i], function, "x", rank))
        ctx.bind("y", bd.shard(data["ys"][i], function, "y", rank))
        ctx.run()
        got, want = float(np.asarray(ctx.outputs()[-1])), float(data["losses"][i])
        worst_loss = max(worst_loss, abs(got - want) / abs(want))
    state = ctx.state()
    worst_state = max(float(np.linalg.norm(np.asarray(state[k]) - want) / max(np.linalg.norm(want), 1e-30))
                      for k, want in zip(state_names, final))
    ok = worst_loss <= LOSS_TOLERANCE and worst_state <= STATE_TOLERANCE
    print(f"rank {rank}/{world} dp_train: {STEPS} steps, loss rel err {worst_loss:.2e}, "
          f"state rel err {worst_state:.2e} {'ok' if ok else 'MISMATCH'}", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare(int(sys.argv[2]), pathlib.Path(sys.argv[3]))
    else:
        sys.exit(run(pathlib.Path(sys.argv[2])))
