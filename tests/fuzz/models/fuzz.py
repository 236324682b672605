#!/usr/bin/env python3
"""Model-level fuzzing of brt: random small JAX functions and PyTorch modules
(generator.py, ops*.py), each compiled by brt and compared with the
framework's own result (runner.py, compare.py). A failure is minimized and
saved under regressions/ (worker.py, minimize.py, cases.py).

  python3 tests/fuzz/models/fuzz.py --budget-seconds 600 --seed 1 [--frontend jax|torch|both]
  python3 tests/fuzz/models/fuzz.py --frontend jax --show 1000042   # one program's source

Prints progress every few seconds and a summary; exits 1 when a failure is
not one of the saved cases still marked XFAIL (a new mismatch, an error at
run time, a crash of brt-compile or of the runtime).
"""
import argparse
import collections
import json
import os
import pathlib
import selectors
import shutil
import subprocess
import sys
import tempfile
import time

MODELS = pathlib.Path(__file__).resolve().parent
ROOT = MODELS.parents[2]
SEEDS_PER_RUN = 1_000_000  # program seeds of run --seed S: S * SEEDS_PER_RUN + index
BATCH = {"jax": 40, "torch": 10}
BATCH_TIMEOUT = 300.0
# Statuses that are not brt's failures: refusals, and the frameworks' own
# (torch.export or torch-mlir refusing a program, or crashing on it).
PASS_LIKE = ("passed", "refused", "export_error", "export_crash", "framework_error", "framework_crash",
             "jit_differs", "not_generated")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--budget-seconds", type=float, default=60.0, help="stop starting batches after this")
    p.add_argument("--seed", type=int, default=0, help="the run's seed; programs are numbered from it")
    p.add_argument("--frontend", choices=["jax", "torch", "both"], default="both")
    p.add_argument("--torch-share", type=float, default=0.3, help="share of the time for PyTorch with 'both'")
    p.add_argument("--programs", type=int, default=None,
                   help="run exactly this many programs per frontend (a reproducible CI run), then stop")
    p.add_argument("--torch-programs", type=int, default=None, help="with --programs: PyTorch's count instead")
    p.add_argument("--jobs", type=int, default=1, help="worker processes")
    p.add_argument("--build", default=os.environ.get("BRT_BUILD_DIR", str(ROOT / "build")))
    p.add_argument("--snapshot-build", action="store_true",
                   help="run a private copy of the build's tools, libraries and package, so that a rebuild "
                        "meanwhile does not disturb the run")
    p.add_argument("--save-dir", default=str(MODELS / "regressions"), help="where new failures are saved")
    p.add_argument("--progress-seconds", type=float, default=10.0)
    p.add_argument("--summary-json", help="write the final counts here")
    p.add_argument("--show", type=int, metavar="PROGRAM_SEED", help="print one program's source and exit")
    return p.parse_args()


def snapshot_build(build):
    """Copies brt-compile, the libraries the CPU runs need and the Python
    package to a temporary directory; its path."""
    target = pathlib.Path(tempfile.mkdtemp(prefix="brt-fuzz-build-"))
    (target / "bin").mkdir()
    (target / "lib").mkdir()
    shutil.copy2(pathlib.Path(build) / "bin" / "brt-compile", target / "bin")
    for lib in (pathlib.Path(build) / "lib").iterdir():
        if lib.name.startswith("libbrt.so") or lib.name == "libbrt_provider_cpu.so":
            shutil.copy2(lib, target / "lib", follow_symlinks=False)
    shutil.copytree(pathlib.Path(build) / "python", target / "python")
    return target


def worker_environment(build):
    env = dict(os.environ)
    env["BRT_BUILD_DIR"] = str(build)
    env["BRT_BIN_DIR"] = str(pathlib.Path(build) / "bin")
    env["LD_LIBRARY_PATH"] = str(pathlib.Path(build) / "lib") + (":" + env["LD_LIBRARY_PATH"]
                                                                  if env.get("LD_LIBRARY_PATH") else "")
    env.setdefault("BRT_NUM_THREADS", "1")  # programs are small; workers share the cores
    return env


class WorkerProcess:
    """A worker of one frontend: JAX's and torch-mlir's MLIR libraries in one
    process have crashed each other."""

    def __init__(self, env, frontend):
        self.frontend = frontend
        self.process = subprocess.Popen([sys.executable, str(MODELS / "worker.py")], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, env=env, text=True, bufsize=1)
        self.request = None
        self.reported = set()
        self.phase = (None, None)  # the last step the worker said it began, and its program seed
        self.pending = b""  # bytes read past the last whole line
        self.deadline = None
        self.started = None

    def send(self, request):
        self.request, self.reported, self.phase = request, set(), (None, None)
        self.started = time.monotonic()
        self.deadline = self.started + BATCH_TIMEOUT
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()

    def read_lines(self):
        """The whole lines readable now; None at end of file (the worker
        died). Reads the pipe itself: a buffered reader would keep lines the
        selector no longer reports."""
        data = os.read(self.process.stdout.fileno(), 1 << 16)
        if not data:
            return None
        self.pending += data
        *lines, self.pending = self.pending.split(b"\n")
        return [json.loads(line) for line in lines if line.strip()]

    def stop(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()


class Tally:
    """Counts per frontend: programs by status, reasons by status, failures."""

    def __init__(self):
        self.status = collections.defaultdict(collections.Counter)
        self.reasons = collections.defaultdict(lambda: collections.defaultdict(collections.Counter))
        self.seconds = collections.defaultdict(collections.Counter)
        self.examples = {}  # (frontend, status, reason) -> the first program seed with it
        self.failures = []

    def add(self, frontend, answer):
        status = answer["status"]
        self.status[frontend][status] += 1
        if status != "passed":
            reason = answer.get("reason", "")
            self.reasons[frontend][status][reason] += 1
            self.examples.setdefault((frontend, status, reason), answer["seed"])
        if status not in PASS_LIKE:
            self.failures.append(dict(answer, frontend=frontend))

    def programs(self, frontend=None):
        frontends = [frontend] if frontend else list(self.status)
        return sum(sum(self.status[f].values()) for f in frontends)

    def unexplained(self):
        return [f for f in self.failures if f.get("unexplained", True)]

    def line(self, elapsed):
        parts = []
        for frontend, counts in sorted(self.status.items()):
            compiled = counts["passed"] + counts["mismatch"] + counts["run_error"]
            refused = counts["refused"] + counts["refused_at_load"]
            parts.append(f"{frontend}: {sum(counts.values())} run, {compiled} compiled, {refused} refused, "
                         f"{counts['export_error']} not exported, {counts['mismatch']} mismatches")
        rate = self.programs() / elapsed if elapsed > 0 else 0.0
        line = f"[{elapsed:6.0f}s] " + "; ".join(parts) + f"; {len(self.unexplained())} unexplained; {rate:.1f}/s"
        for frontend in sorted(self.status):
            refusals = collections.Counter()
            for status in ("refused", "export_error"):
                refusals.update(self.reasons[frontend][status])
            if refusals:
                line += f"\n          {frontend} refusals: " + "; ".join(
                    f"{n}x {reason[:60]}" for reason, n in refusals.most_common(3))
        return line


def print_summary(tally, elapsed, args):
    print(f"\nsummary: {tally.programs()} programs in {elapsed:.0f} s ({tally.programs() / max(elapsed, 1e-9):.1f}/s), "
          f"seed {args.seed}")
    for frontend, counts in sorted(tally.status.items()):
        print(f"  {frontend}: {sum(counts.values())} programs: " + ", ".join(f"{k} {v}" for k, v in counts.most_common()))
        busy = collections.Counter(tally.seconds[frontend])
        shadow_failures = busy.pop("shadow_failures", 0)
        if busy:
            print("    seconds: " + ", ".join(f"{k} {v:.0f}" for k, v in busy.most_common())
                  + f"; float64 shadow runs that failed: {shadow_failures:.0f}")
        for status, reasons in sorted(tally.reasons[frontend].items()):
            for reason, n in reasons.most_common(15):
                example = tally.examples[(frontend, status, reason)]
                print(f"    {status:16s} {n:6d}  {reason}  (e.g. program {example})")
    for failure in tally.failures:
        where = failure.get("saved") or failure.get("known") or failure.get("note", "")
        print(f"  FAILURE {failure['frontend']} program {failure['seed']}: {failure['status']}: "
              f"{failure.get('reason', '')} -> {where}")
        if failure.get("source"):
            print("    " + failure["source"].replace("\n", "\n    "))


def write_summary(tally, elapsed, args):
    """The counts so far as JSON (--summary-json), rewritten as the run goes."""
    if not args.summary_json:
        return
    pathlib.Path(args.summary_json).write_text(json.dumps({
        "seed": args.seed, "seconds": elapsed, "status": tally.status,
        "reasons": {f: {s: dict(r) for s, r in v.items()} for f, v in tally.reasons.items()},
        "examples": {" | ".join(map(str, k)): v for k, v in tally.examples.items()},
        "busy_seconds": tally.seconds, "failures": tally.failures}, indent=1, default=dict))


class Scheduler:
    """Which frontend's batch runs next and with which program seeds."""

    def __init__(self, args):
        self.args = args
        self.frontends = ["jax", "torch"] if args.frontend == "both" else [args.frontend]
        self.next_index = {f: 0 for f in self.frontends}
        self.busy = collections.Counter()
        self.retries = collections.deque()  # single-program requests after a worker died

    def quota(self, frontend):
        if frontend == "torch" and self.args.torch_programs is not None:
            return self.args.torch_programs
        return self.args.programs

    def next_request(self, out_of_time):
        if self.retries:
            return self.retries.popleft()
        if out_of_time:
            return None
        open_frontends = [f for f in self.frontends
                          if self.args.programs is None or self.next_index[f] < self.quota(f)]
        if not open_frontends:
            return None
        share = {"jax": 1.0 - self.args.torch_share, "torch": self.args.torch_share}
        total = sum(self.busy.values()) or 1.0
        frontend = min(open_frontends, key=lambda f: self.busy[f] / total - share[f] if len(open_frontends) > 1 else 0)
        start = self.next_index[frontend]
        count = BATCH[frontend]
        if self.args.programs is not None:
            count = min(count, self.quota(frontend) - start)
        self.next_index[frontend] += count
        seeds = [self.args.seed * SEEDS_PER_RUN + i for i in range(start, start + count)]
        return {"frontend": frontend, "seeds": seeds, "seed": self.args.seed, "save_dir": self.args.save_dir}


class WorkersKeepDying(Exception):
    """Five workers died one after another without answering for a program."""


class Driver:
    """Hands out batches to workers and reads their answers until the budget
    (or the --programs count) is spent and every worker is idle."""

    def __init__(self, args, env):
        self.args, self.env = args, env
        self.scheduler, self.tally = Scheduler(args), Tally()
        self.selector = selectors.DefaultSelector()
        self.workers = []
        self.deaths_in_a_row = 0
        self.start = time.monotonic()

    def start_worker(self, frontend):
        worker = WorkerProcess(self.env, frontend)
        self.selector.register(worker.process.stdout, selectors.EVENT_READ, worker)
        self.workers.append(worker)
        return worker

    def retire(self, worker, status):
        """The worker died or hung: the program it was on is recorded where
        it said which, and the others of its batch go again (one by one
        where it is not known which program it was)."""
        self.selector.unregister(worker.process.stdout)
        worker.stop()
        self.workers.remove(worker)
        self.deaths_in_a_row += 1
        if self.deaths_in_a_row >= 5:
            raise WorkersKeepDying()
        request = worker.request
        if request is None:
            return
        left = [s for s in request["seeds"] if s not in worker.reported]
        phase, seed = worker.phase
        if seed is None and len(left) == 1:
            seed = left[0]
        if seed is None:
            self.scheduler.retries.extend(dict(request, seeds=[s]) for s in left)
            return
        # In torch export the process dies in torch-mlir (brt's part is
        # Python); in the reference, in the framework (XLA).
        name = {"export": "export_crash", "reference": "framework_crash"}.get(phase, status) \
            if status == "crash" else status
        self.tally.add(request["frontend"], {
            "seed": seed, "status": name, "reason": f"the worker's process: {status} in {phase}",
            "note": f"reproduce: fuzz.py --frontend {request['frontend']} --show {seed}"})
        left.remove(seed)
        if left:
            self.scheduler.retries.append(dict(request, seeds=left))

    def handle(self, worker, answer):
        frontend = worker.request["frontend"]
        if "phase" in answer:
            worker.phase = (answer["phase"], answer["seed"])
        elif "minimizing" in answer:
            worker.phase = (None, None)
            worker.deadline = time.monotonic() + BATCH_TIMEOUT + 200
        elif answer.get("done"):
            self.scheduler.busy[frontend] += time.monotonic() - worker.started
            self.tally.seconds[frontend].update(answer["seconds"])
            worker.request = None
        else:
            self.deaths_in_a_row = 0
            worker.reported.add(answer["seed"])
            self.tally.add(frontend, answer)
            if answer["status"] not in PASS_LIKE:
                print(f"FAILURE {frontend} program {answer['seed']}: {answer['status']}: "
                      f"{answer.get('reason', '')} -> {answer.get('saved') or answer.get('known') or ''}", flush=True)

    def loop(self):
        args, last_progress = self.args, self.start
        while True:
            out_of_time = time.monotonic() - self.start > args.budget_seconds
            while sum(w.request is not None for w in self.workers) < max(1, args.jobs):
                request = self.scheduler.next_request(out_of_time)
                if request is None:
                    break
                idle = [w for w in self.workers if w.request is None and w.frontend == request["frontend"]]
                (idle[0] if idle else self.start_worker(request["frontend"])).send(request)
            if all(w.request is None for w in self.workers):
                return
            for key, _ in self.selector.select(timeout=1.0):
                worker = key.data
                answers = worker.read_lines()
                if answers is None:
                    self.retire(worker, "crash")
                    continue
                for answer in answers:
                    self.handle(worker, answer)
            for worker in [w for w in self.workers if w.request is not None and time.monotonic() > w.deadline]:
                self.retire(worker, "timeout")
            if time.monotonic() - last_progress >= args.progress_seconds:
                last_progress = time.monotonic()
                print(self.tally.line(last_progress - self.start), flush=True)
                write_summary(self.tally, last_progress - self.start, args)

    def run(self):
        """The exit status: 0, 1 (a failure no saved case explains) or 2
        (workers cannot start)."""
        gave_up = False
        try:
            self.loop()
        except WorkersKeepDying:
            print("fuzz.py: 5 workers died one after another without answering for a program (see their "
                  "messages above); giving up", file=sys.stderr)
            gave_up = True
        for worker in self.workers:
            worker.stop()
        elapsed = time.monotonic() - self.start
        print(self.tally.line(elapsed))
        print_summary(self.tally, elapsed, self.args)
        write_summary(self.tally, elapsed, self.args)
        return 2 if gave_up else 1 if self.tally.unexplained() else 0


def run(args):
    build = snapshot_build(args.build) if args.snapshot_build else pathlib.Path(args.build)
    try:
        return Driver(args, worker_environment(build)).run()
    finally:
        if args.snapshot_build:
            shutil.rmtree(build, ignore_errors=True)


def show(args):
    sys.path[:0] = [str(MODELS), str(pathlib.Path(args.build) / "python")]
    from frontends import make_frontend
    from generator import generate
    from program import build

    frontend = make_frontend("jax" if args.frontend == "both" else args.frontend)
    program = build(generate(args.show, frontend), frontend)
    print(frontend.header)
    print(program.source)
    for name, array in zip(program.input_names, program.inputs):
        print(f"# {name}: {array.dtype} {array.shape}\n# {array.tolist()}")


def main():
    args = parse_args()
    if args.show is not None:
        show(args)
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
