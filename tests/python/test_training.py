"""Training through brt: an optax AdamW train step of an MLP, its state bound
once (ctx.bind_state) and updated in place, every step against JAX; the
state saved to .safetensors (read by the safetensors package, reloaded by
JAX and by brt); 1000 steps with the state never moving and RSS flat."""
import os

import numpy as np
import pytest

import brt

jax = pytest.importorskip("jax")
optax = pytest.importorskip("optax")
safetensors_numpy = pytest.importorskip("safetensors.numpy")
jnp = jax.numpy

SIZES = [16, 32, 32, 4]


def init_params(rng):
    return {f"dense{i}": {"w": (rng.standard_normal((a, b)) / np.sqrt(a)).astype(np.float32),
                          "b": (rng.standard_normal(b) * 0.1).astype(np.float32)}
            for i, (a, b) in enumerate(zip(SIZES[:-1], SIZES[1:]))}


def loss_fn(params, x, y):
    h = x
    for i in range(len(SIZES) - 1):
        h = h @ params[f"dense{i}"]["w"] + params[f"dense{i}"]["b"]
        if i < len(SIZES) - 2:
            h = jax.nn.gelu(h)
    return jnp.mean((h - y) ** 2)


OPTIMIZER = optax.adamw(1e-2, weight_decay=1e-2)


def step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = OPTIMIZER.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


def batches(rng, n):
    return [(rng.standard_normal((64, SIZES[0])).astype(np.float32),
             rng.standard_normal((64, SIZES[-1])).astype(np.float32)) for _ in range(n)]


def state_names(session):
    return [a["name"] for a in session.functions[0]["arguments"] if a["role"] == "state"]


def flat_state(session, params, opt_state):
    """JAX's (params, opt_state) as brt's state: name -> array, names in
    pytree order (brt names each argument after its parameter and path)."""
    return dict(zip(state_names(session), jax.tree_util.tree_leaves((params, opt_state))))


def rel(a, b):
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    return float(np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30))


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    rng = np.random.default_rng(11)
    params = init_params(rng)
    # NumPy leaves: donating them to JAX's step (below) copies, never deletes them.
    opt_state = jax.tree_util.tree_map(np.asarray, OPTIMIZER.init(params))
    jitted = jax.jit(step, donate_argnums=(0, 1))
    x, y = batches(rng, 1)[0]
    path = tmp_path_factory.mktemp("train") / "mlp_adamw.brtx"
    brt.compile(jitted, params, opt_state, x, y, path=str(path))
    return str(path), params, opt_state, jitted


def test_mlp_adamw_trains_50_steps_like_jax(compiled, capfd):
    path, params, opt_state, jitted = compiled
    session = brt.Session(path)
    names = state_names(session)
    assert names[:2] == ["params.dense0.b", "params.dense0.w"]
    assert "opt_state.0.mu.dense2.w" in names and "opt_state.0.count" in names
    ctx = session.new_request()
    ctx.bind_state(flat_state(session, params, opt_state))  # JAX arrays: read-only, copied once
    pj, oj = params, opt_state
    for x, y in batches(np.random.default_rng(12), 50):
        ctx.bind("x", x)
        ctx.bind("y", y)
        ctx.run()
        pj, oj, loss = jitted(pj, oj, x, y)
        assert rel(ctx.outputs()[-1], loss) <= 1e-5
    state = ctx.state()
    want = flat_state(session, pj, oj)
    for name in names:
        assert rel(state[name], want[name]) <= 1e-4, name
    assert int(state["opt_state.0.count"]) == 50


def test_every_donated_argument_is_written_in_place(compiled, tmp_path, capfd):
    _, params, opt_state, jitted = compiled
    x, y = batches(np.random.default_rng(0), 1)[0]
    brt.compile(jitted, params, opt_state, x, y, path=str(tmp_path / "again.brtx"), stats=True)
    n = len(jax.tree_util.tree_leaves((params, opt_state)))
    assert f"state: {n} donated arguments, {n} written in place, 0 through a copy" in capfd.readouterr().out


def test_saved_state_is_a_safetensors_checkpoint_jax_and_brt_resume_from(compiled, tmp_path):
    path, params, opt_state, jitted = compiled
    session = brt.Session(path)
    ctx = session.new_request()
    ctx.bind_state(flat_state(session, params, opt_state))
    data = batches(np.random.default_rng(13), 20)
    for x, y in data[:10]:
        ctx.bind("x", x)
        ctx.bind("y", y)
        ctx.run()
    checkpoint = str(tmp_path / "step10.safetensors")
    ctx.save_state(checkpoint)

    # The safetensors package reads exactly the state.
    read = safetensors_numpy.load_file(checkpoint)
    assert sorted(read) == sorted(state_names(session))
    for name, value in ctx.state().items():
        np.testing.assert_array_equal(read[name], value)
    assert brt.load_safetensors(checkpoint).keys() == read.keys()

    # JAX rebuilds its pytrees from the names and goes on; brt goes on from the
    # file in a fresh context; and the first context goes on. All agree.
    treedef = jax.tree_util.tree_structure((params, opt_state))
    pj, oj = jax.tree_util.tree_unflatten(treedef, [jnp.asarray(read[n]) for n in state_names(session)])
    resumed = session.new_request()
    resumed.load_state(checkpoint)
    for x, y in data[10:]:
        for c in (ctx, resumed):
            c.bind("x", x)
            c.bind("y", y)
            c.run()
        pj, oj, loss = jitted(pj, oj, x, y)
        assert rel(resumed.outputs()[-1], loss) <= 1e-5
    want = flat_state(session, pj, oj)
    for name, value in resumed.state().items():
        np.testing.assert_array_equal(value, ctx.state()[name])
        assert rel(value, want[name]) <= 1e-4, name


def test_bind_state_and_load_state_refuse_what_does_not_fit(compiled, tmp_path):
    path, params, opt_state, _ = compiled
    session = brt.Session(path)
    ctx = session.new_request()
    state = {k: np.asarray(v) for k, v in flat_state(session, params, opt_state).items()}
    with pytest.raises(ValueError, match="no value for state params.dense0.b"):
        ctx.bind_state({k: v for k, v in state.items() if k != "params.dense0.b"})
    with pytest.raises(ValueError, match="'x' is input, not state"):
        ctx.bind_state({**state, "x": np.zeros((64, 16), np.float32)})
    ctx.bind_state(state)
    before = {k: v.copy() for k, v in ctx.state().items()}
    wrong = dict(state, **{"params.dense0.w": np.ones((3, 3), np.float32)})
    brt.save_safetensors(str(tmp_path / "wrong.safetensors"), wrong)
    with pytest.raises(ValueError, match=r"params.dense0.w.*expected shape \[16,32\], got \[3,3\]"):
        ctx.load_state(str(tmp_path / "wrong.safetensors"))
    safetensors_numpy.save_file({"w": np.ones(2, np.float32)}, str(tmp_path / "other.safetensors"))
    with pytest.raises(ValueError, match="missing: .*params.dense0.b.*not state here: w"):
        ctx.load_state(str(tmp_path / "other.safetensors"))
    for k, v in ctx.state().items():
        np.testing.assert_array_equal(v, before[k])


def test_safetensors_files_of_the_package_and_of_brt_read_each_other(tmp_path):
    import ml_dtypes

    rng = np.random.default_rng(14)
    arrays = {"f64": rng.standard_normal((2, 3)), "f32": rng.standard_normal(5).astype(np.float32),
              "f16": rng.standard_normal((4, 1)).astype(np.float16),
              "bf16": rng.standard_normal(7).astype(ml_dtypes.bfloat16),
              "i64": rng.integers(-9, 9, (3,)), "i32": rng.integers(-9, 9, (2, 2)).astype(np.int32),
              "i8": rng.integers(-9, 9, 6).astype(np.int8), "u8": rng.integers(0, 255, 6).astype(np.uint8),
              "bool": rng.integers(0, 2, 5).astype(bool), "scalar": np.array(3.5, np.float32)}
    theirs, ours = str(tmp_path / "theirs.safetensors"), str(tmp_path / "ours.safetensors")
    safetensors_numpy.save_file(arrays, theirs, metadata={"by": "safetensors"})
    brt.save_safetensors(ours, arrays, {"by": "brt"})
    for read in (brt.load_safetensors(theirs), safetensors_numpy.load_file(ours), brt.load_safetensors(ours)):
        assert read.keys() == arrays.keys()
        for name, value in arrays.items():
            assert read[name].dtype == value.dtype, name
            np.testing.assert_array_equal(read[name], value)
    with pytest.raises(ValueError, match="not a valid .safetensors file: the header length"):
        (tmp_path / "junk.safetensors").write_bytes(b"\xff" * 64)
        brt.load_safetensors(str(tmp_path / "junk.safetensors"))


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_a_thousand_steps_keep_the_state_in_place_and_memory_flat(compiled):
    path, params, opt_state, _ = compiled
    session = brt.Session(path)
    ctx = session.new_request()
    ctx.bind_state(flat_state(session, params, opt_state))
    x, y = batches(np.random.default_rng(15), 1)[0]
    ctx.bind("x", x)
    ctx.bind("y", y)

    def addresses():
        return {k: v.__array_interface__["data"][0] for k, v in ctx.state().items()}

    for _ in range(100):  # warm-up: caches, arenas, allocator pools
        ctx.run()
    where, rss = addresses(), rss_bytes()
    first = ctx.state()["params.dense2.w"].copy()
    for _ in range(1000):
        ctx.run()
    assert addresses() == where, "a state buffer moved"
    for name, out in zip(state_names(session), ctx.outputs()):
        assert out.__array_interface__["data"][0] == where[name], f"{name} was written elsewhere"
    assert not np.array_equal(ctx.state()["params.dense2.w"], first), "the steps did not train"
    growth = (rss_bytes() - rss) / rss
    assert growth <= 0.01, f"RSS grew {growth:.2%} over 1000 steps"


def cnn_params(rng):
    return {"conv1": (rng.standard_normal((3, 3, 3, 8)) * 0.3).astype(np.float32),
            "bn1": {"scale": np.ones(8, np.float32), "shift": np.zeros(8, np.float32)},
            "conv2": (rng.standard_normal((3, 3, 8, 16)) * 0.15).astype(np.float32),
            "dense": (rng.standard_normal((4 * 4 * 16, 10)) * 0.05).astype(np.float32)}


def cnn_loss(params, x, labels, key):
    """conv -> batch norm (batch statistics) -> relu -> 2x2 max pool, twice
    (the second without norm), then dropout (rate 0.2, bits from `key`), a
    dense layer and softmax cross-entropy."""
    dn = ("NHWC", "HWIO", "NHWC")

    def pool(h):
        return jax.lax.reduce_window(h, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")

    h = jax.lax.conv_general_dilated(x, params["conv1"], (1, 1), "SAME", dimension_numbers=dn)
    mean, var = h.mean(axis=(0, 1, 2)), h.var(axis=(0, 1, 2))
    h = (h - mean) / jnp.sqrt(var + 1e-5) * params["bn1"]["scale"] + params["bn1"]["shift"]
    h = pool(jax.nn.relu(h))
    h = jax.lax.conv_general_dilated(h, params["conv2"], (1, 1), "SAME", dimension_numbers=dn)
    h = pool(jax.nn.relu(h)).reshape(x.shape[0], -1)
    h = jnp.where(jax.random.bernoulli(key, 0.8, h.shape), h / 0.8, 0.0)
    return optax.softmax_cross_entropy_with_integer_labels(h @ params["dense"], labels).mean()


def test_a_cnn_with_batch_norm_max_pool_and_dropout_trains_50_steps_like_jax(tmp_path):
    # The backward pass has the convolutions' input and filter gradients and
    # select_and_scatter (the max pool's gradient); dropout draws its mask
    # with JAX's threefry from a key per step. Labels follow from the images
    # (a fixed projection of their channel means), so the loss falls.
    rng = np.random.default_rng(5)
    params = cnn_params(rng)
    sgd = optax.sgd(0.05, momentum=0.9)
    opt_state = jax.tree_util.tree_map(np.asarray, sgd.init(params))

    def cnn_step(params, opt_state, x, labels, key):
        loss, grads = jax.value_and_grad(cnn_loss)(params, x, labels, key)
        updates, opt_state = sgd.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    jitted = jax.jit(cnn_step, donate_argnums=(0, 1))
    projection = rng.standard_normal((3, 10))
    data = []
    for step in range(50):
        x = rng.standard_normal((8, 16, 16, 3)).astype(np.float32)
        key = np.asarray(jax.random.key_data(jax.random.fold_in(jax.random.key(11), step)))
        data.append((x, np.argmax(x.mean(axis=(1, 2)) @ projection, axis=1).astype(np.int32), key))
    path = str(tmp_path / "cnn.brtx")
    brt.compile(jitted, params, opt_state, *data[0], path=path)
    session = brt.Session(path)
    ctx = session.new_request()
    names = state_names(session)
    ctx.bind_state(flat_state(session, params, opt_state))
    p, o = params, opt_state
    losses, worst = [], 0.0
    for x, labels, key in data:
        ctx.bind("x", x)
        ctx.bind("labels", labels)
        ctx.bind("key", key)
        ctx.run()
        p, o, loss = jitted(p, o, x, labels, key)
        got = float(np.asarray(ctx.outputs()[-1]))
        losses.append(got)
        worst = max(worst, abs(got - float(loss)) / float(loss))
    assert worst <= 1e-5, worst
    assert np.mean(losses[-10:]) < 0.8 * np.mean(losses[:10]), losses
    state = ctx.state()
    final = max(rel(state[n], want) for n, want in zip(names, jax.tree_util.tree_leaves((p, o))))
    assert final <= 1e-4, final


def mixed_precision_step(compute_dtype):
    """The MLP step computing in compute_dtype from f32 master weights, with
    dynamic loss scaling: the loss is scaled before the backward pass and the
    gradients unscaled; a step whose gradients are not all finite is skipped
    and halves the scale (a donated f32 scalar, like the rest of the state)."""
    def scaled_loss(params, x, y, scale):
        p = jax.tree_util.tree_map(lambda a: a.astype(compute_dtype), params)
        h = x.astype(compute_dtype)
        for i in range(len(SIZES) - 1):
            h = h @ p[f"dense{i}"]["w"] + p[f"dense{i}"]["b"]
            if i < len(SIZES) - 2:
                h = jax.nn.gelu(h)
        loss = jnp.mean((h.astype(jnp.float32) - y) ** 2)
        return (loss * scale).astype(compute_dtype), loss

    def mp_step(params, opt_state, scale, x, y):
        (_, loss), grads = jax.value_and_grad(scaled_loss, has_aux=True)(params, x, y, scale)
        grads = jax.tree_util.tree_map(lambda g: g / scale, grads)
        finite = jnp.all(jnp.array([jnp.all(jnp.isfinite(g)) for g in jax.tree_util.tree_leaves(grads)]))
        updates, new_opt_state = OPTIMIZER.update(grads, opt_state, params)
        new_params = optax.apply_updates(params, updates)
        def keep(new, old):
            return jax.tree_util.tree_map(lambda a, b: jnp.where(finite, a, b), new, old)
        return keep(new_params, params), keep(new_opt_state, opt_state), jnp.where(finite, scale, scale / 2), loss

    return jax.jit(mp_step, donate_argnums=(0, 1, 2))


@pytest.mark.parametrize("compute_dtype,initial_scale", [("bfloat16", 2.0 ** 10), ("float16", 2.0 ** 20)])
def test_mixed_precision_with_loss_scaling_trains_like_jax(tmp_path, compute_dtype, initial_scale):
    # f16 starts with a scale whose scaled gradients overflow: the first steps
    # are skipped, on brt exactly as on JAX.
    rng = np.random.default_rng(11)
    params = init_params(rng)
    opt_state = jax.tree_util.tree_map(np.asarray, OPTIMIZER.init(params))
    scale = np.float32(initial_scale)
    data = batches(rng, 50)
    mixed, full = mixed_precision_step(getattr(jnp, compute_dtype)), mixed_precision_step(jnp.float32)
    path = str(tmp_path / "mixed.brtx")
    brt.compile(mixed, params, opt_state, scale, *data[0], path=path)
    session = brt.Session(path)
    names = state_names(session)
    ctx = session.new_request()
    ctx.bind_state(dict(zip(names, jax.tree_util.tree_leaves((params, opt_state, scale)))))
    m, f = (params, opt_state, scale), (params, opt_state, np.float32(1.0))
    worst_loss, scales = 0.0, []
    for x, y in data:
        ctx.bind("x", x)
        ctx.bind("y", y)
        ctx.run()
        *m, loss = mixed(*m, x, y)
        *f, _ = full(*f, x, y)
        worst_loss = max(worst_loss, abs(float(np.asarray(ctx.outputs()[-1])) - float(loss)) / float(loss))
        scales.append((float(np.asarray(ctx.state()["scale"])), float(m[2])))
    # The same steps are skipped: the scale is the same after every step.
    assert all(got == want for got, want in scales), scales
    assert compute_dtype != "float16" or scales[-1][1] < initial_scale
    assert worst_loss <= 2e-3, worst_loss
    # Final state: brt's distance from the all-f32 run is no more than 1.5x
    # JAX's own (reduced precision rounds at other points in the two).
    state = ctx.state()
    brt_off = max(rel(state[n], want) for n, want in zip(names, jax.tree_util.tree_leaves(f[:2])))
    jax_off = max(rel(a, b) for a, b in zip(jax.tree_util.tree_leaves(m[:2]), jax.tree_util.tree_leaves(f[:2])))
    assert brt_off <= 1.5 * jax_off, (brt_off, jax_off)


def test_a_transformer_lm_trains_50_steps_as_accurately_as_jax(tmp_path):
    import pathlib
    import sys

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "examples"))
    import tiny_lm

    config = tiny_lm.Config()
    step = tiny_lm.train_step(config)
    params, opt_state = tiny_lm.initial_state(config, seed=3)
    rng = np.random.default_rng(16)
    data = [rng.integers(0, config.vocab, (config.batch, config.context + 1)).astype(np.int32)
            for _ in range(50)]
    path = brt.compile(step, params, opt_state, data[0][:, :-1], data[0][:, 1:], path=str(tmp_path / "lm.brtx"))
    session = brt.Session(path)
    ctx = session.new_request()
    ctx.bind_state(flat_state(session, params, opt_state))

    pj, oj = params, opt_state
    with jax.enable_x64(True):  # the float64 reference: the same steps in float64
        p64, o64 = jax.tree_util.tree_map(lambda a: np.asarray(a, np.float64 if a.dtype == np.float32 else a.dtype),
                                          (params, opt_state))
    for batch in data:
        tokens, targets = np.ascontiguousarray(batch[:, :-1]), np.ascontiguousarray(batch[:, 1:])
        ctx.bind("tokens", tokens)
        ctx.bind("targets", targets)
        ctx.run()
        pj, oj, loss = step(pj, oj, tokens, targets)
        assert rel(ctx.outputs()[-1], loss) <= 1e-4
        with jax.enable_x64(True):
            p64, o64, _ = step(p64, o64, tokens, targets)

    state = ctx.state()
    names = [n for n in state_names(session) if n.startswith("params.")]
    got = np.concatenate([state[n].ravel() for n in names])
    want = np.concatenate([np.asarray(v).ravel() for v in jax.tree_util.tree_leaves(pj)])
    assert rel(got, want) <= 1e-4
    # Per tensor, brt is as close to float64 as JAX in float32 is: a tensor
    # that starts at zero (a layer norm bias) is off by ~2e-4 in both.
    exact = dict(zip(state_names(session), jax.tree_util.tree_leaves((p64, o64))))
    jax32 = dict(zip(state_names(session), jax.tree_util.tree_leaves((pj, oj))))
    for name in names:
        assert rel(state[name], exact[name]) <= 2 * rel(jax32[name], exact[name]) + 1e-6, name
