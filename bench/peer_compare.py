"""brt next to ONNX Runtime, IREE and PyTorch on the CPU, side by side in one
process, thread counts equal for all.

JAX models (--models jax): the MLP, the small CNN and the transformer encoder
block, from the same JAX functions and weights. brt and IREE compile the same
StableHLO; for ONNX Runtime the equivalent graph is built with onnx.helper.
Outputs are checked against JAX before timing.

PyTorch models (--models torch): all-MiniLM-L6-v2 (real weights; sentence
embeddings, batch 1 and 32 x sequence 128) and a torchvision ResNet-18
(random weights; batch 1 and 8, 224x224). brt compiles them with
brt.compile_torch and IREE the same StableHLO; ONNX Runtime runs
torch.onnx.export's graph (the TorchScript exporter: the dynamo one needs
onnxscript) with all graph optimizations, MiniLM after
onnxruntime.transformers' BERT fusions (attention, layer norm, GELU);
PyTorch runs eager under torch.inference_mode. Outputs are checked against
PyTorch before timing.

    PYTHONPATH=build/python:python:examples python3 bench/peer_compare.py [--models jax|torch|both] [--runs N] [--linger [US]] [--markdown OUT]
"""
import argparse
import os
import statistics
import sys
import tempfile
import time

THREADS = int(os.environ.get("BRT_BENCH_THREADS", "0")) or os.cpu_count()

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import onnx  # noqa: E402
import onnxruntime as ort  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import brt  # noqa: E402
import machine  # noqa: E402
from jax_models import cnn, encoder_args, encoder_block, mlp  # noqa: E402

RNG = np.random.default_rng(0)


def normal(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


# --- models: JAX function, example inputs (data first, then weights), ONNX graph ---

def mlp_args():
    return [normal(32, 256), normal(256, 512, scale=0.06), normal(512, scale=0.1), normal(512, 512, scale=0.04),
            normal(512, scale=0.1), normal(512, 10, scale=0.04), normal(10, scale=0.1)]


def mlp_onnx(args):
    x, w1, b1, w2, b2, w3, b3 = args
    inits = [numpy_helper.from_array(a, n) for a, n in zip(args[1:], ["w1", "b1", "w2", "b2", "w3", "b3"])]
    nodes = [helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"]), helper.make_node("Relu", ["h1"], ["r1"]),
             helper.make_node("Gemm", ["r1", "w2", "b2"], ["h2"]), helper.make_node("Relu", ["h2"], ["r2"]),
             helper.make_node("Gemm", ["r2", "w3", "b3"], ["h3"]), helper.make_node("Softmax", ["h3"], ["y"], axis=-1)]
    return nodes, inits, [("x", x.shape)], ("y", (x.shape[0], 10))


def cnn_args():
    return [normal(8, 32, 32, 3), normal(3, 3, 3, 16, scale=0.3), normal(16, scale=0.1), normal(3, 3, 16, 32, scale=0.1),
            normal(32, scale=0.1), normal(8 * 8 * 32, 10, scale=0.03), normal(10, scale=0.1)]


def cnn_onnx(args):
    x, w1, b1, w2, b2, wd, bd = args
    oihw = lambda w: np.ascontiguousarray(w.transpose(3, 2, 0, 1))  # noqa: E731  HWIO -> OIHW
    inits = [numpy_helper.from_array(oihw(w1), "w1"), numpy_helper.from_array(b1, "b1"),
             numpy_helper.from_array(oihw(w2), "w2"), numpy_helper.from_array(b2, "b2"),
             numpy_helper.from_array(wd, "wd"), numpy_helper.from_array(bd, "bd"),
             numpy_helper.from_array(np.array([x.shape[0], -1], np.int64), "flat")]
    nodes = [helper.make_node("Transpose", ["x"], ["xc"], perm=[0, 3, 1, 2]),
             helper.make_node("Conv", ["xc", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Conv", ["p1", "w2", "b2"], ["c2"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c2"], ["r2"]),
             helper.make_node("MaxPool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Transpose", ["p2"], ["p2h"], perm=[0, 2, 3, 1]),  # flatten in NHWC order, as JAX
             helper.make_node("Reshape", ["p2h", "flat"], ["f"]),
             helper.make_node("Gemm", ["f", "wd", "bd"], ["y"])]
    return nodes, inits, [("x", x.shape)], ("y", (x.shape[0], 10))


def encoder_onnx(args, heads=4):
    x = args[0]
    batch, seq, width = x.shape
    names = ["wq", "wk", "wv", "wo", "g1", "b1", "w_up", "b_up", "w_down", "b_down", "g2", "b2"]
    inits = [numpy_helper.from_array(a, n) for a, n in zip(args[1:], names)]
    inits += [numpy_helper.from_array(np.array([batch, seq, heads, width // heads], np.int64), "split"),
              numpy_helper.from_array(np.array([batch, seq, width], np.int64), "merge"),
              numpy_helper.from_array(np.array(np.sqrt(width // heads), np.float32), "scale")]
    n = helper.make_node
    nodes = []
    for t in "qkv":
        nodes += [n("MatMul", ["x", f"w{t}"], [f"{t}0"]), n("Reshape", [f"{t}0", "split"], [f"{t}1"]),
                  n("Transpose", [f"{t}1"], [t], perm=[0, 2, 1, 3])]
    nodes += [n("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]), n("MatMul", ["q", "kt"], ["s0"]),
              n("Div", ["s0", "scale"], ["s1"]), n("Softmax", ["s1"], ["p"], axis=-1), n("MatMul", ["p", "v"], ["a0"]),
              n("Transpose", ["a0"], ["a1"], perm=[0, 2, 1, 3]), n("Reshape", ["a1", "merge"], ["a2"]),
              n("MatMul", ["a2", "wo"], ["a3"]), n("Add", ["x", "a3"], ["r1"]),
              n("LayerNormalization", ["r1", "g1", "b1"], ["h"], axis=-1, epsilon=1e-5),
              n("MatMul", ["h", "w_up"], ["u0"]), n("Add", ["u0", "b_up"], ["u1"]),
              n("Gelu", ["u1"], ["u2"]),  # exact (erf) GELU, opset 20
              n("MatMul", ["u2", "w_down"], ["d0"]), n("Add", ["d0", "b_down"], ["d1"]), n("Add", ["h", "d1"], ["r2"]),
              n("LayerNormalization", ["r2", "g2", "b2"], ["y"], axis=-1, epsilon=1e-5)]
    return nodes, inits, [("x", x.shape)], ("y", x.shape)


MODELS = {"mlp": (mlp, mlp_args, mlp_onnx), "cnn": (cnn, cnn_args, cnn_onnx),
          "transformer_encoder_block": (encoder_block, lambda: encoder_args(RNG), encoder_onnx)}


# Rest before each runtime's timing: the runtime timed before may still have
# workers spinning for its next op (ONNX Runtime's kept the MLP's brt
# requests at one core's speed for 10-100 ms after its last run).
REST_S = 0.2


def median_ms(fn, runs, warmup=10):
    time.sleep(REST_S)
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def rel(a, b):
    b = np.asarray(b, np.float64)
    return float(np.linalg.norm(np.asarray(a, np.float64) - b) / np.linalg.norm(b))


def cpu_isa():
    """The widest vector ISA of this CPU, as the peers' kernels see it."""
    try:
        flags = next(line for line in open("/proc/cpuinfo") if line.startswith("flags")).split()
    except (OSError, StopIteration):
        return "unknown"
    for flag, name in (("amx_tile", "AMX"), ("avx512f", "AVX-512"), ("avx2", "AVX2")):
        if flag in flags:
            return name
    return "SSE"


def iree_runner(text, inputs):
    """IREE's llvm-cpu build of the StableHLO `text`, bound to `inputs`."""
    import iree.compiler as ireec
    import iree.runtime as ireert
    vmfb = ireec.compile_str(text, target_backends=["llvm-cpu"], input_type="stablehlo",
                             extra_args=["--iree-llvmcpu-target-cpu=host"])
    config = ireert.Config("local-task")
    iree_ctx = ireert.SystemContext(config=config)
    module = ireert.VmModule.copy_buffer(iree_ctx.instance, vmfb)
    iree_ctx.add_vm_module(module)
    main_fn = getattr(iree_ctx.modules, module.name)["main"]
    device_args = [ireert.asdevicearray(config.device, a) for a in inputs]
    return lambda: main_fn(*device_args), lambda: np.asarray(main_fn(*device_args).to_host())


def jax_rows(opts, tmp):
    rows = []
    for name, (fn, make_args, make_onnx) in MODELS.items():
        args = make_args()
        ref = np.asarray(fn(*[jnp.asarray(a) for a in args]))
        # Weights are constants of the program for all three runtimes, as
        # ONNX initializers are: each may pre-pack them when it loads.
        weights = [jnp.asarray(w) for w in args[1:]]
        model_fn = lambda x: fn(x, *weights)  # noqa: E731
        text = brt.export_stablehlo(model_fn, args[0])

        session = brt.Session(brt.compile(model_fn, args[0], path=f"{tmp}/{name}.brtx"), threads=THREADS,
                              linger_us=opts.linger)
        ctx = session.new_request()
        ctx.bind(0, args[0])
        ctx.run()
        errors = {"brt": rel(ctx.outputs()[0], ref)}

        # IREE runs both ways, weights as constants and as inputs; the
        # faster one counts (it is slower with large constants here).
        iree_fns = {}
        for mode, (mode_text, mode_args) in {
                "constants": (text, args[:1]),
                "inputs": (brt.export_stablehlo(fn, *args), args)}.items():
            run, output = iree_runner(mode_text, mode_args)
            errors[f"iree ({mode})"] = rel(output(), ref)
            iree_fns[mode] = run

        ort_session = ort_session_for(onnx_model(name, make_onnx, args))
        feeds = {"x": args[0]}
        errors["onnxruntime"] = rel(ort_session.run(None, feeds)[0], ref)
        bad = {k: v for k, v in errors.items() if not v <= 1e-4}
        if bad:
            sys.exit(f"{name}: outputs do not match JAX before timing: {bad}")

        t = {"brt": median_ms(ctx.run, opts.runs),
             "onnxruntime": median_ms(lambda: ort_session.run(None, feeds), opts.runs)}
        iree_times = {mode: median_ms(run, opts.runs) for mode, run in iree_fns.items()}
        iree_mode = min(iree_times, key=iree_times.get)
        t["iree"], t["iree_mode"] = iree_times[iree_mode], iree_mode
        errors["iree"] = errors[f"iree ({iree_mode})"]
        rows.append((name, t, errors))
        print(f"{name}: brt {t['brt']:.3f} ms, onnxruntime {t['onnxruntime']:.3f} ms, iree "
              + ", ".join(f"{v:.3f} ms (weights as {m})" for m, v in iree_times.items()), flush=True)
    lines = [machine.threading_line(THREADS, linger_us=opts.linger), f"median of {opts.runs} runs after 10 warm-up and {REST_S} s of rest; outputs checked against JAX "
             "(relative error in brackets); weights are program constants for brt and ONNX initializers for "
             "onnxruntime; IREE is timed with weights as constants and as inputs and the faster counts", "",
             "| model | brt ms | onnxruntime ms | IREE ms | brt / onnxruntime | brt / IREE | brt <= faster peer |",
             "|---|---|---|---|---|---|---|"]
    for name, t, e in rows:
        lines.append(f"| {name} | {t['brt']:.3f} [{e['brt']:.0e}] | {t['onnxruntime']:.3f} [{e['onnxruntime']:.0e}] | "
                     f"{t['iree']:.3f} [{e['iree']:.0e}] ({t['iree_mode']}) | {t['brt'] / t['onnxruntime']:.2f} | {t['brt'] / t['iree']:.2f} | "
                     f"{'yes' if t['brt'] <= min(t['onnxruntime'], t['iree']) else 'no'} |")
    return lines


def onnx_model(name, make_onnx, args):
    """The serialized ONNX model of a JAX model's graph (MODELS), checked."""
    nodes, inits, inputs, (out_name, out_shape) = make_onnx(args)
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
                              [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, out_shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)], ir_version=10)
    onnx.checker.check_model(model)
    return model.SerializeToString()


def ort_session_for(model_bytes):
    so = ort.SessionOptions()
    so.intra_op_num_threads, so.inter_op_num_threads = THREADS, 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(model_bytes, so, providers=["CPUExecutionProvider"])


def torch_models():
    """(name, module, example inputs as int64/float32 tensors, ONNX input names, is BERT)."""
    import torch
    import torchvision

    import minilm_embeddings
    minilm = minilm_embeddings.embedding_module(minilm_embeddings.load_sentence_transformer())
    models = []
    for batch in (1, 32):
        rng = np.random.default_rng(batch)
        ids = rng.integers(1000, 30000, (batch, 128))
        mask = (np.arange(128)[None, :] < rng.integers(64, 129, (batch, 1))).astype(np.int64)
        mask[0] = 1
        inputs = tuple(torch.from_numpy(a) for a in (ids, mask, np.zeros_like(ids)))
        models.append((f"all-MiniLM-L6-v2 {batch}x128", minilm, inputs, minilm_embeddings.INPUTS, True))
    torch.manual_seed(0)
    resnet = torchvision.models.resnet18().eval()
    for batch in (1, 8):
        models.append((f"ResNet-18 {batch}x3x224x224", resnet, (torch.randn(batch, 3, 224, 224),), ("x",), False))
    return models


def torch_rows(opts, tmp):
    import torch
    from onnxruntime.transformers import optimizer
    torch.set_num_threads(THREADS)
    rows = []
    for name, module, inputs, input_names, bert in torch_models():
        if opts.only and opts.only not in name:
            continue
        arrays = [t.numpy() for t in inputs]
        with torch.inference_mode():
            ref = module(*inputs).numpy()
        slug = name.split()[0] + "_" + name.split()[1]
        text = brt.export_torch_stablehlo(module, *inputs)
        session = brt.Session(brt.compile_stablehlo(text, path=f"{tmp}/{slug}.brtx"), threads=THREADS,
                              linger_us=opts.linger)
        ctx = session.new_request()
        for i, a in enumerate(arrays):
            ctx.bind(i, a)
        ctx.run()
        errors = {"brt": rel(ctx.outputs()[0], ref)}

        onnx_path = f"{tmp}/{slug}.onnx"
        torch.onnx.export(module, inputs, onnx_path, input_names=list(input_names), output_names=["y"],
                          opset_version=17, dynamo=False)
        if bert:
            fused = optimizer.optimize_model(onnx_path, model_type="bert", num_heads=12, hidden_size=384)
            print(f"{name}: onnxruntime BERT fusions {fused.get_fused_operator_statistics()}", flush=True)
            fused.save_model_to_file(onnx_path)
        ort_session = ort_session_for(open(onnx_path, "rb").read())
        feeds = dict(zip(input_names, arrays))
        errors["onnxruntime"] = rel(ort_session.run(None, feeds)[0], ref)

        iree_run, iree_output = iree_runner(text, arrays)
        errors["iree"] = rel(iree_output(), ref)

        def torch_run():
            with torch.inference_mode():
                module(*inputs)
        bad = {k: v for k, v in errors.items() if not v <= 1e-4}
        if bad:
            sys.exit(f"{name}: outputs do not match PyTorch before timing: {bad}")
        # The runtimes take turns, a block of runs each, so that a slow phase
        # of this shared machine hits all of them.
        runs = {"brt": ctx.run, "onnxruntime": lambda: ort_session.run(None, feeds), "iree": iree_run,
                "pytorch": torch_run}
        samples = {k: [] for k in runs}
        blocks = 5
        for _ in range(blocks):
            for k, run in runs.items():
                samples[k].append(median_ms(run, max(1, opts.runs // blocks), warmup=2))
        t = {k: statistics.median(v) for k, v in samples.items()}
        rows.append((name, t, errors))
        print(f"{name}: " + ", ".join(f"{k} {v:.2f} ms" for k, v in t.items()), flush=True)
    lines = [machine.threading_line(THREADS, linger_us=opts.linger), f"{opts.runs} runs each in 5 interleaved blocks after {REST_S} s of rest, the median of the block "
             "medians; outputs checked against PyTorch (relative error in brackets); onnxruntime runs "
             "torch.onnx.export's graph with all graph optimizations (MiniLM after its BERT fusions); IREE runs the "
             "StableHLO brt compiles; PyTorch is eager under torch.inference_mode", "",
             "| model | brt ms | onnxruntime ms | IREE ms | PyTorch ms | brt / fastest peer |", "|---|---|---|---|---|---|"]
    for name, t, e in rows:
        fastest = min(t["onnxruntime"], t["iree"], t["pytorch"])
        lines.append(f"| {name} | {t['brt']:.2f} [{e['brt']:.0e}] | {t['onnxruntime']:.2f} [{e['onnxruntime']:.0e}] | "
                     f"{t['iree']:.2f} [{e['iree']:.0e}] | {t['pytorch']:.2f} | {t['brt'] / fastest:.2f} |")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=100)
    ap.add_argument("--models", default="both", help="jax, torch, jax,torch or both")
    ap.add_argument("--markdown", help="write the tables here too")
    ap.add_argument("--only", help="run only the PyTorch models whose name contains this (e.g. MiniLM)")
    machine.add_linger_option(ap)
    opts = ap.parse_args()
    groups = ["jax", "torch"] if opts.models == "both" else opts.models.split(",")
    unknown = sorted(set(groups) - {"jax", "torch"})
    if unknown:
        ap.error(f"--models: unknown model group {', '.join(map(repr, unknown))} (jax, torch, jax,torch or both)")
    import iree.runtime as ireert
    ireert.flags.parse_flags(f"--task_topology_max_group_count={THREADS}")
    from importlib.metadata import version
    versions = [f"onnxruntime {ort.__version__}", f"iree {version('iree-base-runtime')}"]
    lines = [f"CPU vector ISA: {cpu_isa()}; peers: {', '.join(versions)}", ""]
    with tempfile.TemporaryDirectory() as tmp:
        if "jax" in groups:
            lines += jax_rows(opts, tmp) + [""]
        if "torch" in groups:
            lines[0] += f", torch {version('torch')}"
            lines += torch_rows(opts, tmp)
    machine.publish(lines, opts.markdown)


if __name__ == "__main__":
    main()
