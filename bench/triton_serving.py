"""MiniLM served by Triton Inference Server: brt's backend against ONNX
Runtime in the same server (Triton's Python backend running an onnxruntime
session: the wheel's server has no ONNX Runtime backend), measured by
perf_analyzer at several concurrencies, dynamic batching on and off.

    python3 bench/triton_serving.py [--out bench/results/DATE-triton-serving.md]

Needs scripts/bootstrap.sh --peers (onnxruntime, perf_analyzer) and the
triton_brt target built. Both models are all-MiniLM-L6-v2 (real weights) at
sequence 128 with max_batch_size 16: brt's executable has a function per
batch of 1, 2, 4, 8 and 16 (a batch in between is padded up), ONNX
Runtime's model takes any batch (exported with a dynamic batch, then its
BERT fusions). Each runtime gets the same threads and one instance. Every
configuration is measured --reps times, interleaved; the tables give
medians and brt/ORT ratios of medians.
"""
import argparse
import csv
import datetime
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
BUILD = pathlib.Path(os.environ.get("BRT_BUILD_DIR", ROOT / "build"))
sys.path.insert(0, str(BUILD / "python"))
sys.path.insert(0, str(ROOT / "tests" / "serving"))
sys.path.insert(0, str(ROOT / "examples"))
sys.path.insert(0, str(HERE))

import machine  # noqa: E402
import serving_models  # noqa: E402
from triton_server import TritonServer, wait_until  # noqa: E402

SEQ = 128
BATCHES = (1, 2, 4, 8, 16)
INPUTS = ("input_ids", "attention_mask", "token_type_ids")


def perf_analyzer_binary():
    prefix = pathlib.Path(sys.prefix) / "share" / "brt-triton" / "perf_analyzer-2.51"
    binary = prefix / "bin" / "perf_analyzer"
    if not binary.is_file():
        sys.exit(f"{binary} is missing: run scripts/bootstrap.sh --peers")
    return binary, prefix / "lib"


def export_onnx(path):
    """MiniLM's embedding module in ONNX with a dynamic batch, after ONNX
    Runtime's BERT fusions (its best on this model, as bench/load_bench.py)."""
    import torch
    from onnxruntime.transformers import optimizer

    import minilm_embeddings

    module = minilm_embeddings.embedding_module(minilm_embeddings.load_sentence_transformer())
    ids = torch.full((2, SEQ), 101, dtype=torch.int64)
    axes = {n: {0: "batch"} for n in INPUTS} | {"result0": {0: "batch"}}
    torch.onnx.export(module, (ids, torch.ones_like(ids), torch.zeros_like(ids)), str(path),
                      input_names=list(INPUTS), output_names=["result0"], dynamic_axes=axes,
                      opset_version=17, dynamo=False)
    optimizer.optimize_model(str(path), model_type="bert", num_heads=12,
                             hidden_size=384).save_model_to_file(str(path))


def config(batching, threads, backend):
    """brt with batching: what the backend auto-completes (max_batch_size 16,
    dynamic batching preferring batches 1, 2, 4, 8 and 16); ORT with
    batching: Triton's default dynamic batcher (any batch size suits it)."""
    lines = [f'backend: "{backend}"',
             f'parameters {{ key: "threads" value: {{ string_value: "{threads}" }} }}',
             "instance_group [{ kind: KIND_CPU, count: 1 }]"]
    if backend == "python":
        lines += [f'input [{{ name: "{n}", data_type: TYPE_INT64, dims: [{SEQ}] }}]' for n in INPUTS]
        lines += ['output [{ name: "result0", data_type: TYPE_FP32, dims: [384] }]']
    if backend == "python" or not batching:
        lines.append(f"max_batch_size: {BATCHES[-1]}")
    if backend == "python" and batching:
        lines.append("dynamic_batching { }")
    return "\n".join(lines) + "\n"


def make_repository(repo, brtx, onnx, threads):
    for batching in (True, False):
        suffix = "batched" if batching else "single"
        serving_models.write_model(repo, f"brt_{suffix}", 1, brtx, config(batching, threads, "brt")
                                   .replace('backend: "brt"\n', ""))
        directory = repo / f"ort_{suffix}"
        (directory / "1").mkdir(parents=True)
        shutil.copy(HERE / "triton_ort_model" / "model.py", directory / "1" / "model.py")
        os.link(onnx, directory / "1" / "model.onnx")
        (directory / "config.pbtxt").write_text(config(batching, threads, "python"))


def input_data(path, rng, samples=16):
    """perf_analyzer's --input-data: real-looking token rows (ids in the
    vocabulary, a random-length attention mask)."""
    rows = []
    for _ in range(samples):
        arrays = serving_models.minilm_inputs(rng, 1, SEQ)
        rows.append({n: {"content": arrays[n][0].tolist(), "shape": [SEQ]} for n in INPUTS})
    path.write_text(json.dumps({"data": rows}))


def check_agreement(server, rng):
    """Both models' embeddings of the same batch agree (1e-4)."""
    import tritonclient.grpc as grpcclient

    client = grpcclient.InferenceServerClient(server.grpc_url)
    arrays = serving_models.minilm_inputs(rng, 3, SEQ)
    outs = {}
    for model in ("brt_batched", "ort_batched"):
        inputs = []
        for n in INPUTS:
            i = grpcclient.InferInput(n, list(arrays[n].shape), "INT64")
            i.set_data_from_numpy(arrays[n])
            inputs.append(i)
        outs[model] = client.infer(model, inputs, client_timeout=120).as_numpy("result0")
    client.close()
    diff = float(np.abs(outs["brt_batched"] - outs["ort_batched"]).max())
    if diff > 1e-4:
        sys.exit(f"brt and ONNX Runtime disagree by {diff:.2e}: not the same model")
    return diff


def direct_ms(brtx, onnx, threads, rng, runs=30):
    """Median run time of each runtime in this process, without a server,
    at batch 1 and 16: what serving adds on top."""
    import time

    import onnxruntime as ort

    import brt

    session = brt.Session(str(brtx), threads=threads)
    options = ort.SessionOptions()
    options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
    ort_session = ort.InferenceSession(str(onnx), options, providers=["CPUExecutionProvider"])
    out = {}
    for batch in (1, BATCHES[-1]):
        arrays = serving_models.minilm_inputs(rng, batch, SEQ)
        feeds = [arrays[n] for n in INPUTS]
        for name, run in (("brt", lambda: session.run(*feeds)),
                          ("ORT", lambda: ort_session.run(None, arrays))):
            for _ in range(3):
                run()
            times = []
            for _ in range(runs):
                start = time.perf_counter()
                run()
                times.append((time.perf_counter() - start) * 1e3)
            out[(name, batch)] = statistics.median(times)
    return out


def measure(binary, libdir, server, model, concurrency, data, interval_ms, work):
    out = work / f"{model}-{concurrency}.csv"
    env = dict(os.environ, LD_LIBRARY_PATH=str(libdir))
    args = [str(binary), "-m", model, "-u", server.grpc_url, "-i", "grpc", "-b", "1",
            f"--concurrency-range={concurrency}:{concurrency}", f"--input-data={data}",
            f"--measurement-interval={interval_ms}", "--stability-percentage=100", "--max-trials=10",
            "-f", str(out)]
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:
        sys.exit(f"perf_analyzer failed on {model} at concurrency {concurrency}:\n{r.stdout}\n{r.stderr}")
    with open(out) as f:
        row = next(csv.DictReader(f))
    return {"throughput": float(row["Inferences/Second"]), "p50_ms": float(row["p50 latency"]) / 1e3,
            "p99_ms": float(row["p99 latency"]) / 1e3, "load": os.getloadavg()[0]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", help="the results' markdown file")
    parser.add_argument("--brtx", help="where to keep the compiled MiniLM (reused when there)")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--interval-ms", type=int, default=4000)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--concurrency", default="1,4,16")
    args = parser.parse_args()
    binary, libdir = perf_analyzer_binary()
    concurrencies = [int(c) for c in args.concurrency.split(",")]
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="brt-triton-bench-") as tmp:
        work = pathlib.Path(tmp)
        brtx = pathlib.Path(args.brtx or work / "minilm.brtx")
        if not brtx.exists():
            serving_models.compile_minilm(brtx, BATCHES, (SEQ,))
        export_onnx(work / "minilm.onnx")
        repo = work / "repository"
        make_repository(repo, brtx, work / "minilm.onnx", args.threads)
        data = work / "input.json"
        input_data(data, rng)
        direct = direct_ms(brtx, work / "minilm.onnx", args.threads, rng)
        models = ("brt_batched", "ort_batched", "brt_single", "ort_single")
        samples = {(m, c): [] for m in models for c in concurrencies}
        with TritonServer(repo, BUILD, python_backend=True, start_timeout=120) as server:
            import tritonclient.http as httpclient

            http = httpclient.InferenceServerClient(server.http_url)
            wait_until(lambda: all(http.is_model_ready(m) for m in models), 180,
                       "the models to load:\n" + server.log_tail())
            diff = check_agreement(server, rng)
            load_before = os.getloadavg()
            for rep in range(args.reps):
                for c in concurrencies:
                    for m in models:
                        s = measure(binary, libdir, server, m, c, data, args.interval_ms, work)
                        samples[(m, c)].append(s)
                        print(f"rep {rep} {m} c={c}: {s['throughput']:.1f}/s p50 {s['p50_ms']:.1f} ms "
                              f"p99 {s['p99_ms']:.1f} ms", flush=True)
            load_after = os.getloadavg()
    report(args, samples, concurrencies, diff, load_before, load_after, direct)


def report(args, samples, concurrencies, diff, load_before, load_after, direct):
    import onnxruntime

    med = {k: {q: statistics.median(s[q] for s in v) for q in ("throughput", "p50_ms", "p99_ms")}
           for k, v in samples.items()}
    lines = [f"# MiniLM behind Triton Inference Server: brt backend vs ONNX Runtime ({datetime.date.today()})", "",
             f"- commit {machine.commit()}; Triton 2.51 (nvidia-pytriton 0.7.0's tritonserver), "
             f"perf_analyzer 2.51 over gRPC; onnxruntime {onnxruntime.__version__} in Triton's Python backend",
             *machine.header_lines(),
             f"- threads per model: {args.threads} (brt parameter 'threads'; ORT intra_op_num_threads), "
             "one instance each; all four models loaded in one server",
             f"- load average before / after: {load_before[0]:.2f} / {load_after[0]:.2f}",
             f"- model: all-MiniLM-L6-v2, sequence {SEQ}, one row per request, max_batch_size {BATCHES[-1]}; "
             f"brt functions for batch {', '.join(map(str, BATCHES))}; brt and ORT agree to {diff:.1e}",
             f"- {args.reps} runs of each configuration (perf_analyzer, {args.interval_ms} ms windows), "
             "interleaved; medians; ratio = brt / ORT of the medians (throughput: > 1 is brt faster; "
             "latency: < 1 is brt faster)", "",
             "| dynamic batching | concurrency | brt infer/s | ORT infer/s | throughput ratio | "
             "brt p50 / p99 ms | ORT p50 / p99 ms | p50 ratio | p99 ratio |",
             "|---|---|---|---|---|---|---|---|---|"]
    for suffix, label in (("batched", "on"), ("single", "off")):
        for c in concurrencies:
            b, o = med[(f"brt_{suffix}", c)], med[(f"ort_{suffix}", c)]
            lines.append(f"| {label} | {c} | {b['throughput']:.1f} | {o['throughput']:.1f} | "
                         f"{b['throughput'] / o['throughput']:.2f} | {b['p50_ms']:.1f} / {b['p99_ms']:.1f} | "
                         f"{o['p50_ms']:.1f} / {o['p99_ms']:.1f} | {b['p50_ms'] / o['p50_ms']:.2f} | "
                         f"{b['p99_ms'] / o['p99_ms']:.2f} |")
    lines += ["", "The same runtimes in-process, without a server (median ms per run, "
              f"{args.threads} threads): " + "; ".join(
                  f"batch {b}: brt {direct[('brt', b)]:.1f}, ORT {direct[('ORT', b)]:.1f}"
                  for b in (1, BATCHES[-1])) + ".",
              "", "Every run (throughput infer/s, p50 ms, p99 ms, the machine's 1-minute load average "
              "after it: the machine is shared, and a load above 2 means other work took its CPUs):", ""]
    for (m, c), runs in samples.items():
        lines.append(f"- {m} c={c}: " + "; ".join(f"{s['throughput']:.1f}, {s['p50_ms']:.1f}, {s['p99_ms']:.1f}, "
                                                   f"load {s['load']:.1f}" for s in runs))
    machine.publish(lines, args.out)


if __name__ == "__main__":
    main()
