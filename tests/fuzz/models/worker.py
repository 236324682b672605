"""A fuzzing worker: a process of its own (fuzz.py starts it), so that a
crash in brt takes down the worker and not the run. It reads requests, one
JSON line each ({"frontend", "seeds", "save_dir", "seed"}), and answers a
JSON line per program, then {"done": true, "seconds": {...}}. Before it
minimizes a failure it says {"minimizing": seed}, so the driver allows the
time."""
import json
import os
import sys
import time
import warnings

MODELS = os.path.dirname(os.path.abspath(__file__))

# Per program seed, a recipe; a mismatch found in a batch is minimized alone.
MINIMIZE_SECONDS = 150.0
MAX_MINIMIZED_PER_BATCH = 3


def setup_environment():
    """sys.path for brt and these modules; XLA's quick compile settings (the
    reference is compiled once per batch: LLVM's optimizations cost more
    than they save here)."""
    build = os.environ.get("BRT_BUILD_DIR", os.path.join(MODELS, "..", "..", "..", "build"))
    sys.path[:0] = [MODELS, os.path.join(build, "python")]
    os.environ.setdefault("BRT_BIN_DIR", os.path.join(build, "bin"))
    os.environ.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true "
                                       "--xla_cpu_use_fusion_emitters=false")
    warnings.filterwarnings("ignore")


def found_by(frontend, seed, program_seed):
    return (f"`python3 tests/fuzz/models/fuzz.py --frontend {frontend} --seed {seed}` "
            f"(program {program_seed}: `fuzz.py --frontend {frontend} --show {program_seed}`)")


class Worker:
    def __init__(self, say):
        self.say = say
        self.frontends = {}
        self.pipelines = {}

    def pipeline(self, name):
        from frontends import make_frontend
        from runner import Pipeline
        if name not in self.frontends:
            self.frontends[name] = make_frontend(name)
            if name == "torch":
                self.frontends[name].torch.set_num_threads(1)
            self.pipelines[name] = Pipeline(self.frontends[name])
        return self.frontends[name], self.pipelines[name]

    def run_batch(self, request):
        from generator import generate
        from program import BuildError, build
        from runner import FAILURES, reason_of

        frontend, pipeline = self.pipeline(request["frontend"])
        before, before_shadow_failures = dict(pipeline.seconds), pipeline.shadow_failures
        clock = time.perf_counter()
        programs, answers = [], []
        for program_seed in request["seeds"]:
            try:
                programs.append((program_seed, build(generate(program_seed, frontend), frontend)))
            except BuildError as e:
                answers.append({"seed": program_seed, "status": "not_generated", "reason": reason_of(e)})
            except Exception as e:  # noqa: BLE001: a bug of the fuzzer's
                answers.append({"seed": program_seed, "status": "fuzzer_error",
                                "reason": reason_of(f"{type(e).__name__}: {e}")})
        generate_seconds = time.perf_counter() - clock
        seeds = [seed for seed, _ in programs]
        results = pipeline.run([p for _, p in programs], on_phase=lambda phase, i: self.say(
            {"phase": phase, "seed": None if i is None else seeds[i]}))
        minimized = 0
        for (program_seed, program), result in zip(programs, results):
            answer = {"seed": program_seed, "status": result.status, "reason": result.reason}
            if result.status in FAILURES:
                if minimized < MAX_MINIMIZED_PER_BATCH:
                    minimized += 1
                    self.say({"minimizing": program_seed})
                    answer.update(self.handle_failure(request, program_seed, program, result))
                else:
                    answer["note"] = "not minimized: enough failures in this batch already"
            answers.append(answer)
        seconds = {k: v - before[k] for k, v in pipeline.seconds.items()}
        seconds["shadow_failures"] = pipeline.shadow_failures - before_shadow_failures
        seconds["generate"] = generate_seconds
        return answers, seconds

    def handle_failure(self, request, program_seed, program, result):
        """Minimizes the failure and saves it, unless a saved case that still
        fails has the same op kinds (then it is that one, known)."""
        from cases import case_text, known_failure, same_failure, save_case
        from minimize import Minimizer
        from program import build
        from runner import Result

        frontend, pipeline = self.pipeline(request["frontend"])
        save_dir = request["save_dir"]
        where = found_by(request["frontend"], request["seed"], program_seed)
        alone = pipeline.run([program])[0]
        if same_failure(alone.status, alone.reason) != same_failure(result.status, result.reason):
            # Fails only among other programs in one executable.
            batch_only = Result(result.status, f"only when compiled with other programs: {result.reason}")
            path = save_case(case_text(program, frontend, batch_only, where), program.recipe.frontend,
                             program.recipe.kinds() + ["batch_only"], save_dir)
            return {"saved": str(path), "unexplained": True, "note": "fails only in a batch"}
        minimizer = Minimizer(frontend, pipeline, budget_seconds=MINIMIZE_SECONDS)
        small = build(minimizer.minimize(program.recipe, result), frontend)
        again = pipeline.run([small])[0]
        if same_failure(again.status, again.reason) != same_failure(result.status, result.reason):
            small, again = program, result  # (the budget ran out mid-way): the original
        kinds = small.recipe.kinds()
        known = known_failure(small.recipe.frontend, kinds, again, save_dir)
        answer = {"minimized_steps": len(kinds), "attempts": minimizer.attempts, "reason": again.reason,
                  "source": small.source}
        if known is not None:
            answer.update(known=known.path.name, unexplained=False)
            return answer
        text = case_text(small, frontend, again, where)
        path = save_case(text, small.recipe.frontend, kinds, save_dir)
        answer.update(saved=str(path), unexplained=True)
        return answer


def main():
    import faulthandler
    faulthandler.enable()  # a crash in native code leaves its Python stack on stderr
    setup_environment()
    out = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # what libraries print goes to stderr; stdout carries answers only

    def say(message):
        out.write(json.dumps(message) + "\n")
        out.flush()

    worker = Worker(say)
    for line in sys.stdin:
        request = json.loads(line)
        answers, seconds = worker.run_batch(request)
        for answer in answers:
            say(answer)
        say({"done": True, "seconds": seconds})


if __name__ == "__main__":
    main()
