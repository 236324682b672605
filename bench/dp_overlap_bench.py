"""Data-parallel training step of the transformer LM (examples/tiny_lm.py) on
N ranks under mpirun: how much of the gradient all-reduce the backward pass
hides.

Two cores cannot show overlap through a real link (shared-memory MPI burns
the same cores), so the MPI provider's simulated link (BRT_MPI_LINK_DELAY_US
per message, BRT_MPI_LINK_GBPS) stands in for a network: a transfer takes
its latency plus its bytes over the bandwidth while the comm thread sleeps.
Per executable, the median step time over STEPS steps (rank 0's clock; every
rank runs the same, one intra-op thread per rank), the median of REPEATS runs:

  blocking     BRT_MPI_ASYNC=0: each all_reduce runs on the calling thread,
               the step waits for every transfer
  overlapped   the collectives on the MPI provider's queue; the host waits
               for one only where an op reads its result

The link's time per step is known from the model: each all_reduce costs the
latency plus its wire bytes (2 (N-1)/N of its bytes) over the bandwidth, one
after another. hidden = (blocking - overlapped) / that time. Executables:
one all_reduce per gradient, each moved up to where its gradient is made
(--all-reduce-bucket-bytes=0), and the gradients packed into buckets.

  python3 bench/dp_overlap_bench.py [--ranks 2] [--delay-us 100] [--gbps 1]
                                    [--steps 60] [--bucket-bytes 65536] [--batch 32]
                                    [--repeats 5] [--markdown FILE]
"""
import argparse
import json
import os
import re
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time


ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))


def worker(exe, cases, steps):
    import dp_training

    session, ctx, _, bind_batch = dp_training.start(cases, exe)
    times = []
    for i in range(steps + 5):
        bind_batch(i % steps)
        start = time.perf_counter()
        ctx.run()
        if i >= 5:
            times.append(time.perf_counter() - start)
    if session.rank == 0:
        print(json.dumps({"median_ms": statistics.median(times) * 1e3}), flush=True)


def placed(dump_dir):
    """The program after brt-compile's place step (its number moves as passes are added)."""
    (path,) = dump_dir.glob("*-place.mlir")
    return path


def all_reduce_bytes(dump):
    """The bytes of each all_reduce in a brt-compile dump."""
    sizes = []
    for shape, dtype in re.findall(r'"all_reduce"\(.* : \(tensor<([0-9x]*?)x?(f32|f16|bf16|i32)>\)',
                                   dump.read_text()):
        n = 1
        for d in filter(None, shape.split("x")):
            n *= int(d)
        sizes.append(n * (2 if dtype in ("f16", "bf16") else 4))
    return sizes


def run_ranks(ranks, exe, cases, steps, env):
    cmd = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(ranks), sys.executable, __file__,
           "worker", str(exe), str(cases), str(steps)]
    env = dict(os.environ, BRT_NUM_THREADS="1", **env)
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    if r.returncode != 0:
        raise RuntimeError(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])["median_ms"]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--ranks", type=int, default=2)
    p.add_argument("--delay-us", type=float, default=100)
    p.add_argument("--gbps", type=float, default=1)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--bucket-bytes", type=int, default=65536)
    p.add_argument("--batch", type=int, default=32, help="sequences per rank")
    p.add_argument("--repeats", type=int, default=5, help="runs of each configuration, interleaved")
    p.add_argument("--markdown")
    args = p.parse_args()
    import machine

    work = pathlib.Path(tempfile.mkdtemp(prefix="brt-dp-overlap-"))
    subprocess.run([sys.executable, str(ROOT / "tests" / "e2e" / "dp_training.py"), "prepare", "lm",
                    str(args.ranks), str(work), str(args.batch)], check=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(
                        [str(ROOT / "build" / "python"), os.environ.get("PYTHONPATH", "")])))
    import brt

    mlir = work / "step.mlir"
    per_gradient = work / "per_gradient.brtx"
    bucketed = work / "bucketed.brtx"
    link_ms = {}
    for exe, bucket in ((per_gradient, 0), (bucketed, args.bucket_bytes)):
        dump = work / f"dump-{bucket}"
        subprocess.run([brt.find_tool(), str(mlir), "-o", str(exe), f"--all-reduce-bucket-bytes={bucket}",
                        "--dump-after-each", str(dump)], check=True)
        link_ms[exe] = sum(args.delay_us / 1e3 + 2 * n * (args.ranks - 1) / args.ranks / (args.gbps * 1e6)
                           for n in all_reduce_bytes(placed(dump)))
    link = {"BRT_MPI_LINK_DELAY_US": str(args.delay_us), "BRT_MPI_LINK_GBPS": str(args.gbps)}
    rows = []
    for name, exe in (("one all_reduce per gradient", per_gradient),
                      (f"buckets of {args.bucket_bytes // 1024} KiB", bucketed)):
        # Interleaved, so a noisy neighbour hits both alike; the median of the runs.
        runs = [(run_ranks(args.ranks, exe, work, args.steps, dict(link, BRT_MPI_ASYNC="0")),
                 run_ranks(args.ranks, exe, work, args.steps, link)) for _ in range(args.repeats)]
        blocking = statistics.median(b for b, _ in runs)
        overlapped = statistics.median(o for _, o in runs)
        count = len(all_reduce_bytes(placed(work / f"dump-{0 if exe == per_gradient else args.bucket_bytes}")))
        rows.append((name, count, link_ms[exe], blocking, overlapped, (blocking - overlapped) / link_ms[exe]))
    lines = [f"# Data-parallel LM step: all-reduce hidden by the backward pass ({args.ranks} ranks)", ""]
    lines += [f"- date: {time.strftime('%Y-%m-%d')}",
              f"- commit: {machine.commit()}",
              *machine.header_lines(),
              f"- simulated link: {args.delay_us:g} us per message, {args.gbps:g} GB/s; one intra-op thread per rank; "
              f"{args.steps} steps; per run the median of rank 0's step times, then the median of {args.repeats} runs "
              "(blocking and overlapped interleaved)",
              f"- model: examples/tiny_lm.py (61 state tensors, AdamW), {args.batch} sequences of 16 tokens per "
              "rank, its step under jax.shard_map with pmean-ed gradients", "",
              "| executable | all_reduces | link time per step (ms) | blocking (ms) | overlapped (ms) | "
              "link time hidden |",
              "|---|---|---|---|---|---|"]
    for name, count, comm, blocking, overlapped, hidden in rows:
        lines.append(f"| {name} | {count} | {comm:.2f} | {blocking:.2f} | {overlapped:.2f} | {hidden * 100:.0f}% |")
    machine.publish(lines, args.markdown)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "worker":
        worker(sys.argv[2], pathlib.Path(sys.argv[3]), int(sys.argv[4]))
    else:
        main()
