"""Programs through brt: export, one brt-compile for many programs (one
function each), load, run, compare with the framework.

A program anything refuses is set aside with the reason and the others go
on: brt-compile names the file of the function it rejects, so that one is
dropped and the rest compiled again; an executable that fails to load is
compiled again one function at a time to find which.
"""
import dataclasses
import os
import re
import time

import numpy as np

import brt
from compare import compare

CRASH_MARKERS = ("Stack dump", "PLEASE submit", "Assertion", "Segmentation", "terminate called", "LLVM ERROR",
                 "Aborted", "core dumped")


WOBBLES = 2


@dataclasses.dataclass
class Result:
    """What happened to one program. status: passed, refused (by
    brt-compile), refused_at_load, export_error, framework_error,
    compile_crash, run_error, mismatch; jit_differs: brt gives what the
    framework gives eagerly, which its jitted result is not."""
    status: str
    reason: str = ""


# brt's failures (the others are refusals): an executable brt-compile wrote
# must load and run, and give the framework's results.
FAILURES = ("mismatch", "run_error", "compile_crash", "refused_at_load")


def reason_of(message):
    """A refusal's kind: its first line without locations, shapes and numbers,
    so that one kind counts once."""
    line = next((ln for ln in str(message).strip().splitlines() if ln.strip()), "(no message)")
    unlowered = re.search(r'failed to legalize operation .*name = "([^"]+)"', line)
    if unlowered:  # torch-mlir's op without a lowering: its name is what matters
        line = f"torch-mlir cannot lower {unlowered.group(1)}"
    line = re.sub(r"^brt-compile:\s*", "", line)
    line = re.sub(r'loc\([^)]*\):?\s*', "", line)
    line = re.sub(r"tensor<[^>]*>", "tensor<...>", line)
    line = re.sub(r"'(p|main)\d*'", "'...'", line)
    line = re.sub(r"'/[^']*'", "PATH", line)
    line = re.sub(r"\b(result|arg|x|v|weight)\d+\b", r"\1N", line)
    line = re.sub(r"\b\d+\b", "N", line)
    return line.strip()[:120]


def _is_crash(message):
    return not str(message).startswith("brt-compile:") or any(m in str(message) for m in CRASH_MARKERS)


def _compile(texts):
    """One executable of `texts` {name: StableHLO}: (path, {name: function
    name}). A single text is compiled as `main` (compile_stablehlo's way)."""
    path = brt.compile_stablehlo(texts)
    return path, ({name: "main" for name in texts} if len(texts) == 1 else {name: name for name in texts})


def compile_isolating(texts, refused):
    """Executables for as many of `texts` as brt-compile takes: a list of
    (path, {name: function}); `refused` gets {name: message} for the rest."""
    pending = dict(texts)
    while pending:
        try:
            return [_compile(pending)]
        except brt.CompileError as e:
            message = str(e)
            named = re.search(r'/(\d+)\.mlir"', message)
            names = list(pending)
            if len(pending) == 1:
                refused[names[0]] = message
                return []
            if named and not _is_crash(message) and int(named.group(1)) < len(names):
                refused[names[int(named.group(1))]] = message
                del pending[names[int(named.group(1))]]
                continue
            half = len(names) // 2  # no file named (or a crash): halves
            return (compile_isolating({n: pending[n] for n in names[:half]}, refused)
                    + compile_isolating({n: pending[n] for n in names[half:]}, refused))
    return []


class Pipeline:
    """Runs programs (program.Program, or saved cases with the same fields)
    of one frontend through brt and says what happened to each."""

    def __init__(self, frontend):
        self.frontend = frontend
        self.seconds = {"reference": 0.0, "export": 0.0, "compile": 0.0, "run": 0.0}
        self.shadow_failures = 0  # float64 runs that raised: plain tolerances decided

    def run(self, programs, on_phase=None):
        """A Result per program. on_phase(phase, index) is told before each
        step that could take the process down: "export" and "run" of
        program `index`, "reference" (the framework) and "load" (brt) of
        them all (index None)."""
        on_phase = on_phase or (lambda phase, index: None)
        results = [None] * len(programs)
        clock = time.perf_counter()
        on_phase("reference", None)
        references = self.frontend.reference(programs)
        self.seconds["reference"] += time.perf_counter() - clock
        clock = time.perf_counter()
        texts = {}
        for i, (program, reference) in enumerate(zip(programs, references)):
            if isinstance(reference, Exception):
                results[i] = Result("framework_error", reason_of(f"{type(reference).__name__}: {reference}"))
                continue
            try:
                on_phase("export", i)
                texts[f"p{i}"] = self.frontend.export(program)
            except Exception as e:  # noqa: BLE001: torch.export or torch-mlir refused it
                results[i] = Result("export_error", reason_of(f"{type(e).__name__}: {e}"))
        self.seconds["export"] += time.perf_counter() - clock
        clock = time.perf_counter()
        refused = {}
        executables = compile_isolating(texts, refused)
        self.seconds["compile"] += time.perf_counter() - clock
        for name, message in refused.items():
            results[int(name[1:])] = Result("compile_crash" if _is_crash(message) else "refused", reason_of(message))
        for path, functions in executables:
            self._run_executable(path, functions, programs, references, texts, results, on_phase)
        return results

    def _run_executable(self, path, functions, programs, references, texts, results, on_phase):
        clock = time.perf_counter()
        try:
            on_phase("load", None)
            session = brt.Session(path)
        except Exception as e:  # noqa: BLE001: a load refusal
            os.remove(path)
            if len(functions) == 1:
                results[int(next(iter(functions))[1:])] = Result("refused_at_load", reason_of(e))
                return
            for name in functions:  # one at a time, to find which
                path_one, one = _compile({name: texts[name]})
                self._run_executable(path_one, one, programs, references, texts, results, on_phase)
            return
        os.remove(path)  # the session maps the file
        signatures = {f["name"]: [a["name"] for a in f["arguments"] if a["role"] == "input"]
                      for f in session.functions}
        for name, function in functions.items():
            i = int(name[1:])
            program = programs[i]
            inputs = dict(zip(program.input_names, program.inputs))
            try:
                args = {a: inputs[a] for a in signatures[function]}
                on_phase("run", i)
                outputs = session.run(function=function, **args)
            except Exception as e:  # noqa: BLE001
                results[i] = Result("run_error", reason_of(f"{type(e).__name__}: {e}"))
                continue
            outputs = [np.asarray(o) for o in outputs]
            shadow = lambda p=program: self._shadow(p)  # noqa: E731
            difference = compare(references[i], outputs, shadow=shadow, precision=program.precision)
            if difference and hasattr(self.frontend, "eager"):
                eager = self.frontend.eager(program)
                if eager is not None and compare(eager, outputs, shadow=shadow, precision=program.precision) is None:
                    results[i] = Result("jit_differs", difference)  # brt is the eager framework's
                    continue
            results[i] = Result("mismatch", difference) if difference else Result("passed")
        self.seconds["run"] += time.perf_counter() - clock

    def _shadow(self, program):
        """The float64 outputs, and those of WOBBLES wobbled runs."""
        try:
            return [self.frontend.shadow(program)] + [self.frontend.shadow(program, seed) for seed in range(WOBBLES)]
        except Exception:  # noqa: BLE001: then the plain tolerances decide
            self.shadow_failures += 1
            return None
