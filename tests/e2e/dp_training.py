"""Data-parallel training on N ranks against JAX on an N-device mesh: a train
step under jax.shard_map, gradients and loss pmean-ed over the "data" axis,
optax AdamW, parameters and optimizer state donated (replicated on every rank,
kept in place by brt between steps), each rank taking its slice of every
step's batch. Two models: an MLP, and the transformer LM of
examples/tiny_lm.py (61 state tensors, each gradient all-reduced).

  python3 dp_training.py prepare MODEL N DIR [BATCH]
                                               # JAX on N host CPU devices:
                                               # compiles the step for a mesh
                                               # of N, runs STEPS steps, saves
                                               # state, batches, losses (BATCH
                                               # rows per rank; the model's own
                                               # by default)
  mpirun -np N python3 dp_training.py run DIR  # every rank: STEPS steps
                                               # through brt, each loss and
                                               # the final state checked

test_distributed.py drives both for N = 2 and 4.
"""
import os
import pathlib
import sys

import numpy as np

STEPS = 20
LOSS_TOLERANCE = 1e-5  # f32, relative, every step
STATE_TOLERANCE = 1e-4  # f32, relative (norm), each state tensor after the last step
ROOT = pathlib.Path(__file__).resolve().parents[2]


def mlp(rng, n, batch=None):
    """(loss_fn, params, optimizer, batches): batches is {argument: [STEPS, global batch...]}."""
    import jax.numpy as jnp
    import optax

    def loss_fn(p, x, y):
        h = jnp.tanh(x @ p["w1"] + p["b1"])
        return jnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)

    params = {"w1": rng.standard_normal((16, 32)).astype(np.float32) * 0.3,
              "b1": rng.standard_normal(32).astype(np.float32) * 0.1,
              "w2": rng.standard_normal((32, 4)).astype(np.float32) * 0.3,
              "b2": rng.standard_normal(4).astype(np.float32) * 0.1}
    rows = (batch or 8) * n
    batches = {"x": rng.standard_normal((STEPS, rows, 16)).astype(np.float32),
               "y": rng.standard_normal((STEPS, rows, 4)).astype(np.float32)}
    return loss_fn, params, optax.adamw(1e-2), batches


def lm(rng, n, batch=None):
    import dataclasses

    sys.path.insert(0, str(ROOT / "examples"))
    import tiny_lm

    config = tiny_lm.Config()
    config = dataclasses.replace(config, batch=batch or config.batch)
    params, _ = tiny_lm.initial_state(config, seed=1)
    rows = rng.integers(0, config.vocab, (STEPS, config.batch * n, config.context + 1)).astype(np.int32)
    batches = {"tokens": np.ascontiguousarray(rows[:, :, :-1]), "targets": np.ascontiguousarray(rows[:, :, 1:])}
    return (lambda p, tokens, targets: tiny_lm.loss_fn(config, p, tokens, targets)), params, \
        tiny_lm.optimizer(config), batches


MODELS = {"mlp": mlp, "lm": lm}


def prepare(model, n, out, batch=None):
    os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={max(n, 4)}"
    import jax
    import optax
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    import brt

    loss_fn, params, opt, batches = MODELS[model](np.random.default_rng(0), n, batch)
    mesh = jax.make_mesh((n,), ("data",), devices=jax.devices()[:n])

    def body(p, o, *batch):
        loss, g = jax.value_and_grad(loss_fn)(p, *batch)
        g = jax.lax.pmean(g, "data")
        u, o = opt.update(g, o, p)
        return optax.apply_updates(p, u), o, jax.lax.pmean(loss, "data")

    names = list(batches)
    step = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P(), P()) + (P("data"),) * len(names),
                                 out_specs=(P(), P(), P())), donate_argnums=(0, 1))
    replicated, split = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    state = jax.device_put((params, opt.init(params)), replicated)

    def batch(i):
        return [jax.device_put(batches[k][i], split) for k in names]

    brt.compile(step, *state, *batch(0), path=str(out / "step.brtx"))
    (out / "step.mlir").write_text(brt.export_stablehlo(step, *state, *batch(0)))  # for benchmarks
    initial = [np.asarray(v) for v in jax.tree_util.tree_leaves(state)]
    losses = []
    p, o = state
    for i in range(STEPS):
        p, o, loss = step(p, o, *batch(i))
        losses.append(float(loss))
    final = [np.asarray(v) for v in jax.tree_util.tree_leaves((p, o))]
    # State leaves in pytree order, which is the order of brt's state arguments.
    # Batch arrays in the order of the step's batch arguments.
    np.savez(out / "data.npz", losses=np.array(losses), batches=np.array(names), **batches)
    np.savez(out / "initial.npz", *initial)
    np.savez(out / "final.npz", *final)
    (out / "model").write_text(model)


def start(cases, executable):
    """This rank's request context for `executable`, its state bound to the
    prepared initial state, and a function binding this rank's slice of step
    i's batch: (session, ctx, state names, bind_batch)."""
    import brt
    import brt.distributed as bd

    session = brt.Session(str(executable))
    function = session.functions[0]
    data, initial = np.load(cases / "data.npz"), np.load(cases / "initial.npz")
    ctx = session.new_request()
    state_names = [a["name"] for a in function["arguments"] if a["role"] == "state"]
    batch_names = [a["name"] for a in function["arguments"] if a["role"] == "input"]
    assert len(state_names) == len(initial.files), (state_names, initial.files)
    assert len(batch_names) == len(data["batches"]), (batch_names, data["batches"])
    ctx.bind_state(dict(zip(state_names, [initial[f"arr_{i}"] for i in range(len(state_names))])))
    batches = {name: data[key] for name, key in zip(batch_names, data["batches"])}

    def bind_batch(i):
        for name, steps in batches.items():
            ctx.bind(name, bd.shard(steps[i % len(steps)], function, name, session.rank))
    return session, ctx, state_names, bind_batch


def run(cases):
    session, ctx, state_names, bind_batch = start(cases, cases / "step.brtx")
    rank, world = session.rank, session.world_size
    data, final = np.load(cases / "data.npz"), np.load(cases / "final.npz")
    final = [final[f"arr_{i}"] for i in range(len(state_names))]
    worst_loss = 0.0
    for i in range(STEPS):
        bind_batch(i)
        ctx.run()
        got, want = float(np.asarray(ctx.outputs()[-1])), float(data["losses"][i])
        worst_loss = max(worst_loss, abs(got - want) / abs(want))
    state = ctx.state()
    worst_state = max(float(np.linalg.norm(np.asarray(state[k]) - want) / max(np.linalg.norm(want), 1e-30))
                      for k, want in zip(state_names, final))
    ok = worst_loss <= LOSS_TOLERANCE and worst_state <= STATE_TOLERANCE
    model = (cases / "model").read_text()
    print(f"rank {rank}/{world} dp_train {model}: {STEPS} steps, {len(state_names)} state tensors, "
          f"loss rel err {worst_loss:.2e}, state rel err {worst_state:.2e} {'ok' if ok else 'MISMATCH'}",
          flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    if sys.argv[1] == "prepare":
        prepare(sys.argv[2], int(sys.argv[3]), pathlib.Path(sys.argv[4]),
                int(sys.argv[5]) if len(sys.argv) > 5 else None)
    else:
        sys.exit(run(pathlib.Path(sys.argv[2])))
