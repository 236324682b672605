"""GPU benchmarks for the CUDA provider (run by scripts/gpu_suite.sh on a
machine with a GPU; needs torch, and jax for its row). Prints a markdown
report; each measurement is the median of --runs timed runs after warm-up,
synchronised with CUDA events.

  1. fused elementwise on 256 MiB f32 tensors vs a device-to-device copy
  2. f16 and bf16 dot_general 8192^3 vs cuBLAS called directly (torch.matmul)
  3. the transformer encoder block (batch 8, seq 512, width 1024, f16): brt
     vs PyTorch eager, torch.compile and JAX/XLA (examples/torch_models.py),
     each output checked against JAX
  4. a 200-op chain of small matmuls: per-op cost, CUDA-graph replay vs stream launches
  5. all-MiniLM-L6-v2's BERT at batch 1 and 32 x sequence 128, f32 and f16: brt vs
     PyTorch eager and torch.compile, brt's output checked against eager's. The
     architecture with random weights (its real 91 MB of weights do not fit the
     GPU machine's 64 MiB transfer): the executables take the parameters as
     inputs after the token ids and the mask, bound once from PyTorch's copy

`--sections 1,3` runs some of them. `--quick` is the form a first contact with
a lent GPU affords (scripts/gpu_suite.sh --budget): 20 timed runs each, and
MiniLM at f32 batch 1 and f16 batch 32 only. Each prints as soon as it ends; one that
fails is reported in its place while the others go on, and the exit status
is then 1.

Where brt-compile cannot run (the GPU machine lacks its MLIR), `--prepare DIR`
compiles the executables elsewhere and `--models DIR` uses them.
"""
import argparse
import os
import statistics
import sys
import tempfile

import numpy as np

import brt

try:  # the benchmarks need it; --prepare (on the build machine) does not
    import torch
except ImportError:
    torch = None

# JAX would take most of the GPU's memory at its first use, leaving too
# little for PyTorch's and brt's sections after it.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
sys.path.insert(0, "examples")
import jax_models as m  # noqa: E402


def median_ms(fn, runs, warmup=5):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def encoder_inputs():
    """The encoder block's input and weights: f16, batch 8, seq 512, width 1024."""
    return [a.astype(np.float16) for a in m.encoder_args(np.random.default_rng(0), batch=8, seq=512, width=1024)]


# The executables the benchmarks run: name -> (function, example arguments).
def models():
    import jax.numpy as jnp
    n, k = 64 << 20, 8192
    w = np.eye(16, dtype=np.float32) * 0.999

    def chain(x):
        for _ in range(200):
            x = x @ w
        return x
    return {
        "fused": (lambda x, y: jnp.maximum(x * 0.5 + y, 0.0), [np.zeros(n, np.float32)] * 2),
        "mm_f16": (lambda p, q: p @ q, [np.zeros((k, k), np.float16)] * 2),
        "mm_bf16": (lambda p, q: p @ q, [jnp.zeros((k, k), jnp.bfloat16)] * 2),
        "encoder": (m.encoder_block, encoder_inputs()),
        "chain": (chain, [np.zeros((16, 16), np.float32)]),
        # tests/python/test_bindings.py's CUDA test, for machines without brt-compile.
        "bindings": (lambda a, b: jnp.tanh(a @ b) + a, [np.zeros((64, 64), np.float32)] * 2),
    }


# all-MiniLM-L6-v2's architecture (sentence-transformers' BERT).
MINILM = dict(vocab_size=30522, hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
              intermediate_size=1536, max_position_embeddings=512)
MINILM_RUNS = [(dtype, batch) for dtype in ("float32", "float16") for batch in (1, 32)]
MINILM_QUICK_RUNS = [("float32", 1), ("float16", 32)]


def minilm(dtype):
    """MiniLM's BERT with random weights in `dtype`, and a module that takes
    its parameters as arguments after (ids, mask): (module, bert, parameters)."""
    import transformers
    torch.manual_seed(0)
    bert = transformers.BertModel(transformers.BertConfig(**MINILM), add_pooling_layer=False)
    bert = bert.eval().to(getattr(torch, dtype))
    names = [n for n, _ in bert.named_parameters()]

    class WithParameters(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bert = bert

        def forward(self, ids, mask, *parameters):
            return torch.func.functional_call(self.bert, dict(zip(names, parameters)), (ids,),
                                              {"attention_mask": mask}).last_hidden_state
    return WithParameters().eval(), bert, [p.detach() for p in bert.parameters()]


def minilm_inputs(batch):
    """Token ids and a padding mask (rows of 64 to 128 tokens), int64 [batch, 128]."""
    rng = np.random.default_rng(batch)
    ids = torch.from_numpy(rng.integers(1000, 30000, (batch, 128)))
    mask = torch.from_numpy((np.arange(128)[None, :] < rng.integers(64, 129, (batch, 1))).astype(np.int64))
    return ids, mask


def compiled_minilm(dtype, batch, directory):
    path = f"{directory}/minilm_{dtype}_{batch}.brtx"
    if not os.path.exists(path):
        module, _, parameters = minilm(dtype)
        brt.compile_torch(module, *minilm_inputs(batch), *parameters, target="cuda", path=path)
    return path


def compiled(name, opts, tmp):
    """The executable for a model: precompiled in --models, else compiled now."""
    if opts.models and os.path.exists(f"{opts.models}/{name}.brtx"):
        return f"{opts.models}/{name}.brtx"
    fn, args = models()[name]
    return brt.compile(fn, *args, target="cuda", path=f"{tmp}/{name}.brtx")


def brt_runner(path, tensors, graphs=True):
    ctx = brt.Session(path, providers=["cuda"]).new_request()
    ctx.set_stream(torch.cuda.current_stream().cuda_stream)
    ctx.set_graph_capture(graphs)
    for i, t in enumerate(tensors):
        ctx.bind(i, t)
    return ctx


def to_numpy(t):
    return t.float().cpu().numpy() if isinstance(t, torch.Tensor) else np.asarray(t, np.float32)


def brt_output(ctx):
    ctx.run()
    return torch.from_dlpack(ctx.outputs()[0])


def bandwidth(opts, tmp):
    """Fused elementwise (reads 2, writes 1) vs a copy (reads 1, writes 1)."""
    n = 64 << 20  # 256 MiB of f32
    a, b = torch.randn(n, device="cuda"), torch.randn(n, device="cuda")
    ctx = brt_runner(compiled("fused", opts, tmp), [a, b])
    fused_ms = median_ms(ctx.run, opts.runs)
    dst = torch.empty_like(a)
    copy_ms = median_ms(lambda: dst.copy_(a), opts.runs)
    fused_gbs, copy_gbs = 3 * 4 * n / fused_ms / 1e6, 2 * 4 * n / copy_ms / 1e6
    return ["| fused elementwise, 256 MiB | GB/s | share of copy bandwidth |", "|---|---|---|",
            f"| brt fused (2 in, 1 out) | {fused_gbs:.0f} | {fused_gbs / copy_gbs:.2f} (target >= 0.80) |",
            f"| device-to-device copy | {copy_gbs:.0f} | 1.00 |"]


def matmul(opts, tmp):
    """dot_general 8192^3 in f16/bf16 vs cuBLAS (torch.matmul)."""
    lines = ["| dot_general 8192^3 | brt TFLOP/s | cuBLAS TFLOP/s | ratio |", "|---|---|---|---|"]
    for dtype, name in ((torch.float16, "mm_f16"), (torch.bfloat16, "mm_bf16")):
        k = 8192
        x, y = torch.randn(k, k, device="cuda", dtype=dtype), torch.randn(k, k, device="cuda", dtype=dtype)
        ctx = brt_runner(compiled(name, opts, tmp), [x, y])
        brt_ms = median_ms(ctx.run, opts.runs)
        torch_ms = median_ms(lambda: torch.matmul(x, y), opts.runs)
        flops = 2 * k ** 3
        lines.append(f"| {dtype} | {flops / brt_ms / 1e9:.0f} | {flops / torch_ms / 1e9:.0f} | "
                     f"{torch_ms / brt_ms:.2f} (target >= 0.90) |")
    return lines


def encoder(opts, tmp):
    """The encoder block, f16, batch 8, seq 512, width 1024, against the same
    model in PyTorch (eager and torch.compile) and JAX/XLA; every output is
    checked against JAX's in float64 before its time counts."""
    import jax
    import torch_models
    args = encoder_inputs()
    path = compiled("encoder", opts, tmp)
    targs = [torch.from_numpy(a).cuda() for a in args]
    jitted = jax.jit(m.encoder_block)
    jargs = [jax.device_put(a) for a in args]
    reference = np.asarray(jitted(*jargs), np.float64)
    brt_ctx = brt_runner(path, targs)
    torch_compiled = torch.compile(torch_models.encoder_block)
    peers = {"brt": (brt_ctx.run, lambda: brt_output(brt_ctx)),
             "PyTorch eager": (lambda: torch_models.encoder_block(*targs),
                               lambda: torch_models.encoder_block(*targs)),
             "torch.compile": (lambda: torch_compiled(*targs), lambda: torch_compiled(*targs)),
             "JAX/XLA": (lambda: jitted(*jargs).block_until_ready(), lambda: jitted(*jargs))}
    lines = ["| encoder block f16 8x512x1024 | median ms | rel. error vs JAX |", "|---|---|---|"]
    for name, (step, output) in peers.items():
        ms = median_ms(step, opts.runs)
        out = np.asarray(to_numpy(output()), np.float64)
        err = np.linalg.norm(out - reference) / np.linalg.norm(reference)
        lines.append(f"| {name} | {ms:.3f} | {err:.1e} |")
    return lines


def chain(opts, tmp):
    """200 small ops (16x16 matmuls: the compiler fuses elementwise chains
    into one kernel, matmuls stay separate): graph replay vs stream launches."""
    small = torch.randn(16, 16, device="cuda")
    path = compiled("chain", opts, tmp)
    graph_ms = median_ms(brt_runner(path, [small], graphs=True).run, opts.runs)
    stream_ms = median_ms(brt_runner(path, [small], graphs=False).run, opts.runs)
    return ["| 200-op chain of small kernels | per-op us |", "|---|---|",
            f"| CUDA graph replay | {graph_ms * 1e3 / 200:.2f} |",
            f"| stream launches | {stream_ms * 1e3 / 200:.2f} |"]


def bert(opts, tmp):
    """MiniLM's BERT, brt vs PyTorch eager and torch.compile, same weights."""
    lines = ["| MiniLM BERT x128 | brt ms | PyTorch eager ms | torch.compile ms | brt / faster | "
             "brt rel. error vs eager |", "|---|---|---|---|---|---|"]
    for dtype, batch in (MINILM_QUICK_RUNS if opts.quick else MINILM_RUNS):
        _, model, _ = minilm(dtype)
        model = model.cuda()
        ids, mask = (t.cuda() for t in minilm_inputs(batch))
        ctx = brt_runner(compiled_minilm(dtype, batch, opts.models or tmp),
                         [ids, mask, *[p.detach() for p in model.parameters()]])
        fast = torch.compile(model)
        with torch.inference_mode():
            eager_out = model(ids, attention_mask=mask).last_hidden_state.float()
            err = float((brt_output(ctx).float() - eager_out).norm() / eager_out.norm())
            brt_ms = median_ms(ctx.run, opts.runs)
            eager_ms = median_ms(lambda: model(ids, attention_mask=mask), opts.runs)
            compiled_ms = median_ms(lambda: fast(ids, attention_mask=mask), opts.runs)
        lines.append(f"| {dtype} {batch}x128 | {brt_ms:.3f} | {eager_ms:.3f} | {compiled_ms:.3f} | "
                     f"{brt_ms / min(eager_ms, compiled_ms):.2f} | {err:.1e} |")
    return lines


SECTIONS = [bandwidth, matmul, encoder, chain, bert]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--quick", action="store_true",
                    help="20 timed runs each and two MiniLM configurations (a first contact's budget)")
    ap.add_argument("--prepare", metavar="DIR", help="only compile the executables into DIR")
    ap.add_argument("--models", metavar="DIR", help="use the executables --prepare made")
    ap.add_argument("--sections", default=",".join(str(i + 1) for i in range(len(SECTIONS))),
                    help="which benchmarks to run, by number (default: all), e.g. 1,2,5")
    opts = ap.parse_args()
    if opts.quick:
        opts.runs = min(opts.runs, 20)
    if opts.prepare:
        os.makedirs(opts.prepare, exist_ok=True)
        for name, (fn, args) in models().items():
            brt.compile(fn, *args, target="cuda", path=f"{opts.prepare}/{name}.brtx")
        for dtype, batch in MINILM_RUNS:
            compiled_minilm(dtype, batch, opts.prepare)
        print(f"compiled {len(models()) + len(MINILM_RUNS)} executables into {opts.prepare}")
        return
    try:
        chosen = [int(x) for x in opts.sections.split(",")]
    except ValueError:
        chosen = []
    if not chosen or any(not 1 <= i <= len(SECTIONS) for i in chosen):
        sys.exit(f"gpu_bench.py: --sections takes numbers 1 to {len(SECTIONS)}, got {opts.sections!r}")
    if torch is None or not torch.cuda.is_available():
        sys.exit("gpu_bench.py: the benchmarks need PyTorch with a CUDA device")
    print(f"device: {torch.cuda.get_device_name()}\n", flush=True)
    # Everything runs on one stream of its own: PyTorch's default stream is
    # CUDA's legacy stream, which cannot be recorded into a graph, so brt
    # would run op by op on it and the graph rows would not mean what they say.
    torch.cuda.set_stream(torch.cuda.Stream())
    tmp = tempfile.mkdtemp()
    failed = []
    # Each section prints as soon as it ends, and one that fails leaves the
    # others to run: a time limit or a broken section loses only itself.
    for i in chosen:
        section = SECTIONS[i - 1]
        try:
            lines = section(opts, tmp)
        except Exception as e:  # noqa: BLE001 -- reported, and the exit status says so
            failed.append(i)
            lines = [f"section {i} ({section.__name__}) FAILED: {type(e).__name__}: {e}"]
            print(f"gpu_bench.py: section {i} ({section.__name__}) failed", file=sys.stderr)
            import traceback
            traceback.print_exc()
        print("\n".join(lines) + "\n", flush=True)
    if failed:
        sys.exit(f"gpu_bench.py: sections {failed} failed")


if __name__ == "__main__":
    main()
