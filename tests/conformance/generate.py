"""brt's op conformance run: every case of op_cases.py on every dtype, exported
from JAX, compiled by brt-compile (--target=cpu), loaded and run on the CPU
provider, and compared with JAX's own result on the CPU (jax_enable_x64).

    python3 tests/conformance/generate.py [--table docs/ops_coverage.md] [--only SUBSTRING] [--verbose]

Prints a summary (cases, passed, refused, mismatches, time) and, with
--table, writes the op x dtype coverage table. Exits 1 when brt gave a wrong
answer, compiled a program it then could not load, failed running one it
loaded, or crashed.

Work is batched to keep the run short: one jitted JAX function computes the
expected outputs of many programs (one XLA compilation), and one brt-compile
run writes an executable with a function per program (a program it refuses
is dropped and the rest compiled again).
"""
import argparse
import collections
import concurrent.futures
import dataclasses
import os
import re
import sys
import tempfile
import time
import warnings
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("BRT_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path[:0] = [HERE, os.path.join(BUILD, "python"), os.path.join(ROOT, "python")]
os.environ.setdefault("BRT_BIN_DIR", os.path.join(BUILD, "bin"))
# XLA's quick compile settings: the reference is compiled once per batch, and
# LLVM's optimizations cost more than they save on these small programs.
os.environ.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true "
                                   "--xla_cpu_use_fusion_emitters=false")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_traceback_filtering", "off")  # filtering costs more than a refused trace itself

import brt  # noqa: E402
from op_cases import CASES  # noqa: E402
from op_inputs import DTYPES, Gen, kind  # noqa: E402

# Relative tolerances by class and dtype: |got - expected| <= rtol * (|expected| + 1)
# (an absolute rtol near zero). "arith": one rounding per op (add, div, ...);
# "accum": sums of a few products (reductions, dot, convolution), whose order
# may differ; "trans": transcendental functions, where two correct libraries
# differ by a few ulps; "special": special functions (lgamma, igamma, zeta,
# ...), series and rational approximations that differ more; "exact": data
# movement, comparisons, rounding, bit manipulation: nothing to round. Integers
# and bools are always exact; complex values use their parts' float width.
TOLERANCES = {
    "exact": {},
    "arith": {"f32": 1e-5, "f64": 1e-12, "f16": 1e-2, "bf16": 1e-2},
    "accum": {"f32": 1e-5, "f64": 1e-12, "f16": 1e-2, "bf16": 2e-2},
    "trans": {"f32": 5e-5, "f64": 1e-11, "f16": 2e-2, "bf16": 3e-2},
    "special": {"f32": 5e-4, "f64": 1e-10, "f16": 3e-2, "bf16": 5e-2},
}
_WIDTH = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64", np.dtype(np.float16): "f16",
          np.dtype(np.complex64): "f32", np.dtype(np.complex128): "f64", DTYPES["bf16"]: "bf16"}

# Programs per brt-compile run. A run costs about 40 ms plus 0.4 ms a function
# here, and a refused function costs a run of its chunk's rest: chunks are small.
COMPILE_CHUNK = 48
REFERENCE_BATCH = 200  # programs per jitted JAX function

# What happened to one program, from best to worst. "skipped": its cell's
# first shape was refused or not taken by JAX; "unsupported": JAX does not
# take it (the op refuses the dtype); "no_reference": JAX lowers it but its CPU
# backend cannot run it.
ORDER = ("skipped", "unsupported", "passed", "no_reference", "refused", "load_refused", "run_error", "crash",
         "mismatch")
FAILURES = ("load_refused", "run_error", "crash", "mismatch")
CRASH_MARKERS = ("Stack dump", "PLEASE submit", "Assertion", "Segmentation", "terminate called", "LLVM ERROR",
                 "Aborted", "core dumped")


@dataclasses.dataclass
class Program:
    """One case on one dtype and shape variant."""
    case: object
    dtype: str
    label: str
    fn: object
    inputs: list
    text: str = ""
    expected: list = None
    status: str = ""
    message: str = ""

    def describe(self):
        shapes = ", ".join(f"{a.dtype}{list(a.shape)}" for a in self.inputs)
        return f"{self.case.name} [{self.dtype}, {self.label}] ({shapes})"


def first_line(message):
    """A message's first line without brt-compile's prefix and MLIR
    locations (they name temporary files)."""
    line = next((ln for ln in str(message).strip().splitlines() if ln.strip()), "(no message)")
    line = re.sub(r"^brt-compile:\s*", "", line)
    line = re.sub(r'loc\((?:[^()]|\([^()]*\))*\):?\s*', "", line)
    temporary = re.escape(tempfile.gettempdir())  # the executable's or the inputs' temporary path
    line = re.sub(rf"'?{temporary}/[^\s']*'?:?\s*", "", line)
    line = re.sub(r"function '(p\d+|main)' ", "", line)  # its name in a batch
    return re.sub(r"\bop #\d+ ", "", line).strip()  # so that one cause is one footnote


def expand(cases, only=None):
    programs = []
    for case in cases:
        if only and only not in case.name:
            continue
        for dtype in case.dtypes:
            for label, variant in case.variants.items():
                gen = Gen(zlib.crc32(f"{case.name}|{dtype}|{label}".encode()))
                inputs = [np.asarray(a) for a in case.inputs(gen, DTYPES[dtype], variant)]
                programs.append(Program(case, dtype, label, case.function(dtype, variant), inputs))
    return programs


def export(programs):
    """StableHLO of each program; a program JAX does not trace or lower is
    unsupported (an op refusing the dtype raises here)."""
    for p in programs:
        try:
            # Through *args, brt names the arguments arg0, arg1, ...: jax.jit drops
            # those a program does not read, and the run binds the others by name.
            p.text = brt.export_stablehlo(lambda *args, fn=p.fn: fn(*args), *p.inputs)
        except Exception as e:  # noqa: BLE001: JAX's refusal, whatever its type
            p.status, p.message = "unsupported", f"{type(e).__name__}: {first_line(e)}"


def reference(programs):
    """JAX's outputs (NumPy arrays), for a batch in one jitted function; a
    program whose part fails is computed alone, and JAX's failure recorded."""
    def batch(*flat):
        outputs, k = [], 0
        for p in programs:
            outputs.append(jax.tree_util.tree_leaves(p.fn(*flat[k:k + len(p.inputs)])))
            k += len(p.inputs)
        return outputs

    try:
        results = jax.jit(batch)(*[a for p in programs for a in p.inputs])
        for p, r in zip(programs, results):
            p.expected = [np.asarray(o) for o in r]
    except Exception:  # noqa: BLE001: one program's failure; find which
        if len(programs) == 1:
            try:
                programs[0].expected = [np.asarray(o) for o in jax.tree_util.tree_leaves(
                    jax.jit(programs[0].fn)(*programs[0].inputs))]
            except Exception as e:  # noqa: BLE001
                programs[0].status, programs[0].message = "no_reference", f"JAX: {first_line(e)}"
            return
        half = len(programs) // 2
        reference(programs[:half])
        reference(programs[half:])


def _is_crash(message):
    return not message.startswith("brt-compile:") or any(m in message for m in CRASH_MARKERS)


def compile_isolating(programs):
    """Executables for the programs brt-compile takes: a list of (path,
    programs, function names); the others get status refused or crash."""
    pending = list(programs)
    while pending:
        names = [f"p{i}" for i in range(len(pending))] if len(pending) > 1 else ["main"]
        try:
            path = brt.compile_stablehlo(dict(zip(names, (p.text for p in pending))) if len(pending) > 1
                                         else pending[0].text)
            return [(path, pending, names)]
        except brt.CompileError as e:
            message = str(e)
            if len(pending) == 1:
                p = pending[0]
                p.status, p.message = ("crash" if _is_crash(message) else "refused"), first_line(message)
                return []
            # The function brt-compile refused: by its source file, or, where
            # the CPU provider cannot run it, by its name (a region's is
            # "<name>.while0.body").
            named = re.search(r'/(\d+)\.mlir"', message) or re.search(r"function 'p(\d+)[.']", message)
            if named and not _is_crash(message) and int(named.group(1)) < len(pending):
                p = pending.pop(int(named.group(1)))
                p.status, p.message = "refused", first_line(message)
                continue
            half = len(pending) // 2  # no function named (or a crash): halves
            return compile_isolating(pending[:half]) + compile_isolating(pending[half:])
    return []


def load_and_run(path, programs, names):
    """Loads an executable (a program the loader refuses is dropped and the
    rest compiled again) and runs and checks each of its functions that JAX
    gave a reference for."""
    try:
        session = brt.Session(path, threads=1)  # tiny programs; and sums add in one order
    except Exception as e:  # noqa: BLE001: the loader's refusal
        os.remove(path)
        named = re.search(r"function '(p\d+|main)[.']", str(e))
        if len(programs) == 1 or (named and named.group(1) in names):
            p = programs[names.index(named.group(1)) if len(programs) > 1 else 0]
            p.status, p.message = "load_refused", first_line(e)
            parts = [[q for q in programs if q is not p]]
        else:  # no function named: halves
            parts = [programs[:len(programs) // 2], programs[len(programs) // 2:]]
        for part in parts:
            for executable in compile_isolating(part):
                load_and_run(*executable)
        return
    os.remove(path)  # the session has mapped it
    arguments = {f["name"]: [a["name"] for a in f["arguments"] if a["role"] == "input"] for f in session.functions}
    for p, name in zip(programs, names):
        if p.status == "no_reference":  # loaded, but nothing to compare with
            continue
        try:
            inputs = {a: p.inputs[int(a[len("arg"):])] for a in arguments[name]}
            got = [np.asarray(o) for o in session.run(function=name, **inputs)]
        except Exception as e:  # noqa: BLE001
            p.status, p.message = "run_error", f"{type(e).__name__}: {first_line(e)}"
            continue
        difference = compare(p, got)
        p.status, p.message = ("mismatch", difference) if difference else ("passed", "")


def compare(program, got):
    """None where brt's outputs are JAX's within the case's tolerance, else
    what differs: output, dtype or shape, or the largest error with where it
    is, the value and the expected one."""
    expected = program.expected
    if len(got) != len(expected):
        return f"{len(got)} outputs, expected {len(expected)}"
    for i, (g, e) in enumerate(zip(got, expected)):
        if g.dtype != e.dtype or g.shape != e.shape:
            return f"output {i}: {g.dtype}{list(g.shape)}, expected {e.dtype}{list(e.shape)}"
        if not e.size:
            continue
        rtol = TOLERANCES[program.case.tol].get(_WIDTH.get(e.dtype), 0.0)
        if kind(e.dtype) in ("float", "complex"):
            g64, e64 = g.astype(np.complex128), e.astype(np.complex128)
            same = (g64 == e64) | (np.isnan(g64) & np.isnan(e64))  # inf == inf, NaN where NaN
            if not rtol:  # nothing rounded: zeros keep their sign too
                same &= (np.signbit(g64.real) == np.signbit(e64.real)) | np.isnan(e64)
            finite = np.isfinite(g64) & np.isfinite(e64)  # else only `same` will do
            with np.errstate(invalid="ignore"):  # inf - inf
                error = np.where(same, 0.0, np.where(finite, np.abs(g64 - e64), np.inf))
            within = finite & (error <= rtol * (np.abs(np.where(finite, e64, 0)) + 1)) if rtol else False
            bad = ~same & ~within
        else:
            error = np.where(g == e, 0, 1)
            bad = error != 0
        if bad.any():
            at = np.unravel_index(int(np.argmax(np.where(bad, error, -1))), e.shape)
            where = f" at {list(map(int, at))}" if e.ndim else ""
            return (f"output {i}: max error {float(error[at]):.3g}{where}: got {g[at]}, expected {e[at]} "
                    f"({int(bad.sum())} of {e.size} elements off; rtol {rtol:g})")
    return None


def export_and_compile(programs, seconds):
    """Exports the programs a chunk at a time and compiles each chunk
    (compile_isolating) in the background while the next is exported, two
    brt-compile runs at most at a time: the executables."""
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        futures = []
        for start in range(0, len(programs), COMPILE_CHUNK):
            chunk = programs[start:start + COMPILE_CHUNK]
            clock = time.perf_counter()
            export(chunk)
            seconds["export"] += time.perf_counter() - clock
            futures.append(pool.submit(compile_isolating, [p for p in chunk if not p.status]))
        clock = time.perf_counter()
        executables = [e for future in futures for e in future.result()]
        seconds["compile (after the exports)"] += time.perf_counter() - clock
    return executables


def run(programs, say=print):
    """Sets every program's status and message; returns seconds per phase.

    A cell's first shape variant goes first; the other variants are tried
    only where it compiled (a cell whose main shape is refused is refused),
    so that a dtype brt lacks costs one refusal per cell, not one per shape."""
    seconds = collections.Counter()
    first = {}
    for p in programs:
        first.setdefault((p.case.name, p.dtype), p)
    mains = list(first.values())
    for phase, todo in (("first shapes", mains), ("other shapes", None)):
        if todo is None:
            todo = [p for p in programs if p is not first[(p.case.name, p.dtype)]]
            for p in todo:
                if first[(p.case.name, p.dtype)].status in ("unsupported", "refused", "crash"):
                    p.status = "skipped"
            todo = [p for p in todo if not p.status]
        executables = export_and_compile(todo, seconds)
        clock = time.perf_counter()
        compiled = [p for _, programs_of, _ in executables for p in programs_of]
        for start in range(0, len(compiled), REFERENCE_BATCH):
            reference(compiled[start:start + REFERENCE_BATCH])
        seconds["reference"] += time.perf_counter() - clock
        clock = time.perf_counter()
        for executable in executables:
            load_and_run(*executable)
        seconds["load, run, compare"] += time.perf_counter() - clock
        say(f"  {phase}: {len(todo)} programs", file=sys.stderr)
    return seconds


# ---------------------------------------------------------------- the table

SYMBOLS = {"refused": "✗", "no_reference": "JAX ✗", "load_refused": "LOAD ✗", "run_error": "RUN ✗",
           "crash": "CRASH", "mismatch": "MISMATCH"}


@dataclasses.dataclass
class Cell:
    status: str
    message: str = ""


def cells(programs):
    """{(case name, dtype): Cell}: the worst of the case's shape variants.
    Its message names that variant where the others ended otherwise."""
    by_cell = collections.defaultdict(list)
    for p in programs:
        by_cell[(p.case.name, p.dtype)].append(p)
    result = {}
    for key, variants in by_cell.items():
        tried = [p for p in variants if p.status not in ("skipped", "unsupported")] or variants[:1]
        worst = max(tried, key=lambda p: ORDER.index(p.status))
        alone = any(p.status != worst.status for p in tried)
        result[key] = Cell(worst.status, f"{worst.label}: {worst.message}" if alone else worst.message)
    return result


def counts(table):
    c = collections.Counter(cell.status for cell in table.values())
    return {"cases": sum(v for k, v in c.items() if k != "unsupported"), "passed": c["passed"],
            "refused": c["refused"], "no_reference": c["no_reference"], "mismatch": c["mismatch"],
            "load_refused": c["load_refused"], "run_error": c["run_error"], "crash": c["crash"]}


def escape(text):
    """Markdown text with its pipes escaped (they would end a table cell)."""
    return text.replace("|", "\\|")


def render(cases, table):
    """The markdown coverage table: a table per section, footnotes for the messages."""
    notes, uses = {}, collections.Counter()

    def cell_text(cell):
        if cell is None:
            return ""
        if cell.status == "unsupported":
            return "·"
        if cell.status == "passed":
            return "✓"
        n = notes.setdefault(cell.message, len(notes) + 1)
        uses[n] += 1
        return f"{SYMBOLS[cell.status]} [{n}](#n{n})"

    c = counts(table)
    out = ["# Op coverage by dtype", "",
           "Generated by `python3 tests/conformance/generate.py --table docs/ops_coverage.md`; "
           "`tests/conformance/test_conformance.py` fails when this file is not what the generator writes. "
           "Each cell is one `jax.lax` primitive or `jnp`/`jax.nn` function on one dtype, exported from JAX "
           "(`jax_enable_x64`), compiled by `brt-compile --target=cpu`, run on the CPU provider on seeded "
           "random inputs in the op's domain and compared with JAX on the CPU, over the row's shapes "
           "(most rows: a matrix, a scalar and a 0-sized array).", "",
           "✓ compiled, loaded and matched JAX on every shape; · JAX does not take this dtype for the op; "
           "blank: not tried (the op has no inputs of this dtype, or XLA cannot run it); "
           "✗ brt-compile refuses it (the footnote is its message, prefixed by the shape where the other "
           "shapes fared better); LOAD ✗ compiled but did not load; RUN ✗ loaded but failed running; CRASH brt-compile "
           "crashed; MISMATCH a wrong answer (the footnote gives the largest error); JAX ✗ JAX itself "
           "cannot run it on the CPU. Tolerances: `tests/conformance/generate.py`.", "",
           f"{c['cases']} cells: {c['passed']} pass, {c['refused']} refused, {c['mismatch']} mismatch, "
           f"{c['load_refused']} compiled but not loaded, {c['run_error']} failed running, {c['crash']} crashed, "
           f"{c['no_reference']} not run by JAX.", ""]
    dtypes = list(DTYPES)
    for title in dict.fromkeys(case.section for case in cases):
        out += [f"## {title}", "", "| op | " + " | ".join(dtypes) + " |", "|---|" + "---|" * len(dtypes)]
        for case in cases:
            if case.section == title:
                out.append(f"| `{escape(case.name)}` | "
                           + " | ".join(cell_text(table.get((case.name, d))) for d in dtypes) + " |")
        out.append("")
    out += ["## Notes", ""]
    for message, n in notes.items():
        out.append(f'<a id="n{n}"></a>{n}. {escape(message)} ({uses[n]} cell{"s" * (uses[n] > 1)})')
    return "\n".join(out) + "\n"


def conformance(only=None, say=print):
    """Runs every case: (programs, table, seconds)."""
    clock = time.perf_counter()
    programs = expand(CASES, only)
    with warnings.catch_warnings():  # JAX's on the casts some cases make on purpose (complex to real)
        warnings.simplefilter("ignore")
        seconds = run(programs, say)
    seconds["total"] = time.perf_counter() - clock
    return programs, cells(programs), seconds


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--table", help="write the coverage table (markdown) to this file")
    parser.add_argument("--only", help="only the cases whose name contains this")
    parser.add_argument("--verbose", action="store_true", help="every program's outcome, JAX's refusals too")
    args = parser.parse_args()
    programs, table, seconds = conformance(args.only)
    if args.verbose:
        for p in programs:
            print(f"{p.status:12} {p.describe()}: {p.message}")
    if args.table:
        with open(args.table, "w") as f:
            f.write(render(CASES if not args.only else [c for c in CASES if args.only in c.name], table))
    c = counts(table)
    print(f"{c['cases']} cases (op x dtype; {len(programs)} programs over shapes): {c['passed']} passed, "
          f"{c['refused']} refused, {c['mismatch']} mismatch, {c['load_refused']} compiled but not loaded, "
          f"{c['run_error']} failed running, {c['crash']} crashed, {c['no_reference']} not run by JAX")
    print("seconds: " + ", ".join(f"{k} {v:.1f}" for k, v in seconds.items()))
    failures = [p for p in programs if p.status in FAILURES]
    for p in failures:
        print(f"{p.status.upper()}: {p.describe()}: {p.message}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
