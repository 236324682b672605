"""brt and ONNX Runtime latency on a machine doing other work.

Each model runs in four conditions, brt and ONNX Runtime taking turns in
blocks so that a slow phase of the machine hits both:
  quiet       nothing else runs;
  nice19      a build-like job at nice 19 beside it: on every core, short
              processes started one after another (a compiler, a test
              suite), the load under which brt's former libgomp barriers
              waited a scheduler tick for a descheduled partner thread;
  nice0       the same job at nice 0;
  nice19-here the nice-19 job in this process's session. The two above run
              in a session of their own, and where the kernel groups
              processes by session (autogroup, /proc/sys/kernel/
              sched_autogroup_enabled) nice ranks a process only within its
              group: they then take an equal share, as a job in another
              cgroup does, and only here does nice 19 yield to the benchmark;
  concurrent  two brt Sessions and one ONNX Runtime session serving at once
              from three threads of this process.
Per runtime and condition it records the p50, p99 and max of single-request
latencies, and the slowdown from quiet (p50 / quiet p50).

    PYTHONPATH=build/python:python:examples:bench python3 bench/load_bench.py \
        [--models mlp,cnn,transformer_encoder_block,minilm] [--seconds S] [--linger [US]] [--markdown OUT]
"""
import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

import machine
import peer_compare
from peer_compare import MODELS, THREADS, onnx_model, ort_session_for, rel

import brt  # noqa: E402

# A short busy process, as a compiler or a test is: about 20 ms of work.
_SHORT_JOB = "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done"


class BuildLikeLoad:
    """One loop per core starting short busy processes one after another,
    at a given niceness, until stopped."""

    def __init__(self, niceness, own_session=True):
        script = f"while true; do sh -c '{_SHORT_JOB}'; done"
        group = {"start_new_session": True} if own_session else {"process_group": 0}
        self.loops = [subprocess.Popen(["nice", "-n", str(niceness), "sh", "-c", script], **group)
                      for _ in range(os.cpu_count())]
        time.sleep(0.5)

    def stop(self):
        for p in self.loops:
            os.killpg(p.pid, 9)
            p.wait()


def latencies_ms(run, seconds, warmup=5):
    time.sleep(peer_compare.REST_S)  # the other runtime's workers stop spinning
    for _ in range(warmup):
        run()
    samples = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        t0 = time.perf_counter()
        run()
        samples.append((time.perf_counter() - t0) * 1e3)
    return samples


def summary(samples):
    a = np.asarray(samples)
    return {"p50": float(np.percentile(a, 50)), "p99": float(np.percentile(a, 99)), "max": float(a.max()),
            "n": len(a)}


def jax_model(name, tmp, linger_us):
    """(brt run, ONNX Runtime run) of one of peer_compare's JAX models, both
    checked against JAX first."""
    import jax.numpy as jnp

    fn, make_args, make_onnx = MODELS[name]
    args = make_args()
    ref = np.asarray(fn(*[jnp.asarray(a) for a in args]))
    weights = [jnp.asarray(w) for w in args[1:]]
    path = brt.compile(lambda x: fn(x, *weights), args[0], path=f"{tmp}/{name}.brtx")
    ort_session = ort_session_for(onnx_model(name, make_onnx, args))
    feeds = {"x": args[0]}
    return checked(name, path, [args[0]], lambda: ort_session.run(None, feeds)[0], ref, linger_us)


def minilm_model(tmp, linger_us):
    import torch
    from onnxruntime.transformers import optimizer

    name, module, inputs, input_names, _ = peer_compare.torch_models()[0]
    arrays = [t.numpy() for t in inputs]
    with torch.inference_mode():
        ref = module(*inputs).numpy()
    path = brt.compile_torch(module, *inputs, path=f"{tmp}/minilm.brtx")
    onnx_path = f"{tmp}/minilm.onnx"
    torch.onnx.export(module, inputs, onnx_path, input_names=list(input_names), output_names=["y"],
                      opset_version=17, dynamo=False)
    # ONNX Runtime at its best on BERT: after its attention, layer norm and GELU fusions.
    optimizer.optimize_model(onnx_path, model_type="bert", num_heads=12, hidden_size=384).save_model_to_file(onnx_path)
    ort_session = ort_session_for(open(onnx_path, "rb").read())
    feeds = dict(zip(input_names, arrays))
    return checked(name, path, arrays, lambda: ort_session.run(None, feeds)[0], ref, linger_us)


def checked(name, path, arrays, ort_run, ref, linger_us):
    """A function making a brt Session of the executable at `path` (lingering
    `linger_us`) and a request context of it bound to `arrays` (one per
    serving thread), and ONNX Runtime's run; exits if either is off."""
    def new_brt_run():
        ctx = brt.Session(path, threads=THREADS, linger_us=linger_us).new_request()
        for i, a in enumerate(arrays):
            ctx.bind(i, a)
        return ctx

    ctx = new_brt_run()
    ctx.run()
    errors = {"brt": rel(ctx.outputs()[0], ref), "onnxruntime": rel(ort_run(), ref)}
    if not all(e <= 1e-4 for e in errors.values()):
        sys.exit(f"{name}: outputs do not match the framework before timing: {errors}")
    return lambda: new_brt_run().run, ort_run


def measure(new_brt_run, ort_run, seconds, blocks=4):
    """{condition: {runtime: samples}}."""
    brt_run = new_brt_run()
    results = {}

    def alternate():
        samples = {"brt": [], "onnxruntime": []}
        for _ in range(blocks):
            samples["brt"] += latencies_ms(brt_run, seconds / blocks)
            samples["onnxruntime"] += latencies_ms(ort_run, seconds / blocks)
        return samples

    results["quiet"] = alternate()
    for condition, niceness, own_session in (("nice19", 19, True), ("nice0", 0, True), ("nice19-here", 19, False)):
        load = BuildLikeLoad(niceness, own_session)
        try:
            results[condition] = alternate()
        finally:
            load.stop()
    # Two brt sessions' worth of requests and one ONNX Runtime stream at once.
    concurrent = {"brt": [], "onnxruntime": []}
    runs = [("brt", new_brt_run()), ("brt", new_brt_run()), ("onnxruntime", ort_run)]
    threads = [threading.Thread(target=lambda k=k, r=r: concurrent[k].extend(latencies_ms(r, seconds)))
               for k, r in runs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    results["concurrent"] = concurrent
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--models", default="mlp,cnn,transformer_encoder_block,minilm")
    ap.add_argument("--seconds", type=float, default=4.0, help="per runtime and condition")
    ap.add_argument("--markdown", help="write the table here too")
    machine.add_linger_option(ap)
    opts = ap.parse_args()
    known = list(MODELS) + ["minilm"]
    models = opts.models.split(",")
    if set(models) - set(known):
        ap.error(f"--models: unknown {sorted(set(models) - set(known))}; known: {', '.join(known)}")
    import onnxruntime as ort
    lines = machine.header_lines() + [
        f"- commit {machine.commit()}; onnxruntime {ort.__version__}", machine.threading_line(THREADS, linger_us=opts.linger),
        f"- {opts.seconds:g} s per runtime and condition, in alternating blocks; latencies of single requests", "",
        "| model | condition | brt p50 / p99 / max ms | onnxruntime p50 / p99 / max ms | brt slowdown | "
        "onnxruntime slowdown | brt p99 / p50 |", "|---|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for name in models:
            new_brt_run, ort_run = (minilm_model(tmp, opts.linger) if name == "minilm"
                                    else jax_model(name, tmp, opts.linger))
            results = measure(new_brt_run, ort_run, opts.seconds)
            quiet = {k: summary(v) for k, v in results["quiet"].items()}
            for condition, samples in results.items():
                s = {k: summary(v) for k, v in samples.items()}
                b, o = s["brt"], s["onnxruntime"]
                line = (f"| {name} | {condition} | {b['p50']:.3f} / {b['p99']:.3f} / {b['max']:.2f} | "
                        f"{o['p50']:.3f} / {o['p99']:.3f} / {o['max']:.2f} | "
                        f"{b['p50'] / quiet['brt']['p50']:.2f} | {o['p50'] / quiet['onnxruntime']['p50']:.2f} | "
                        f"{b['p99'] / b['p50']:.2f} |")
                lines.append(line)
                print(line, flush=True)
    machine.publish(lines, opts.markdown)


if __name__ == "__main__":
    main()
