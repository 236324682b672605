"""StableHLO's own interpreter tests (stablehlo/tests/interpret/*.mlir in an
openxla/stablehlo checkout or bare git directory) run through brt, as a
yardstick. A tool run by hand, not a test: the files stay in that repository.

    python3 tests/conformance/stablehlo_interpret.py --stablehlo-git PATH [--only add,while] [--verbose]
        [--markdown OUT] [--dump-dir DIR]

Each file holds functions (between `// -----` lines) that compute values with
StableHLO ops and assert on them with the `check` dialect. Each function
that checks something is one test:

1. its check ops become results: the checked values are returned from the
   function (its signature updated), what they are compared with (a constant,
   or a second returned value) and how (exactly, or within the interpreter's
   tolerance) kept aside;
2. the function, named @main (public) in a module with the rest of its
   section, is parsed by jaxlib's MLIR and printed in the generic form,
   compiled by brt-compile --target=cpu, loaded and run with no inputs;
3. each result is compared with what the interpreter expects.

Outcomes: PASS; REFUSED (brt-compile or the loader refused it: the first
line of the message); MISMATCH (a wrong answer: the important finding);
ERROR (loaded, then failed running); SKIPPED (nothing brt could be given:
element types that are not brt's dtypes, tokens, tuples, the interpreter's
own ops, no check op, or jaxlib's MLIR does not parse it); CRASH (the process
died or ran past --timeout). Files run in worker processes (--jobs, at most
2), so one crash loses one test; a worker that dies is started again after
the test that killed it.
"""
import argparse
import collections
import concurrent.futures
import json
import os
import queue
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("BRT_BUILD_DIR", os.path.join(ROOT, "build"))
sys.path[:0] = [os.path.join(BUILD, "python"), os.path.join(ROOT, "python")]
os.environ.setdefault("BRT_BIN_DIR", os.path.join(BUILD, "bin"))
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import ml_dtypes  # noqa: E402
import numpy as np  # noqa: E402
from jax._src.interpreters import mlir  # noqa: E402
from jax._src.lib.mlir import ir  # noqa: E402

import brt  # noqa: E402

INTERPRET_DIR = "stablehlo/tests/interpret"
STATUSES = ["PASS", "MISMATCH", "ERROR", "REFUSED", "CRASH", "SKIPPED"]

# MLIR element type -> NumPy dtype name, for the 15 dtypes of brt's own
# conformance run (README.md). A test with any other element type is skipped;
# on these brt-compile decides (it refuses complex today).
DTYPES = {"i1": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64", "ui8": "uint8",
          "ui16": "uint16", "ui32": "uint32", "ui64": "uint64", "f16": "float16", "bf16": "bfloat16",
          "f32": "float32", "f64": "float64", "complex<f32>": "complex64", "complex<f64>": "complex128"}

# check op -> how the interpreter compares (stablehlo/tests/CheckOps.cpp).
CHECK_KINDS = {"expect_eq": "eq", "expect_eq_const": "eq", "expect_almost_eq": "almost_eq",
               "expect_almost_eq_const": "almost_eq", "expect_close": "close"}
DEFAULT_TOLERANCE = 1e-4  # CheckOps.td: expect_almost_eq(_const)'s tolerance
OPERAND = r"%[\w.$-]+(?:#\d+)?"


class Skip(Exception):
    """A test brt cannot be given; the message says why."""


# --- Reading the test files ---------------------------------------------------------------------

def git(repo, *args):
    return subprocess.run(["git", "-C", repo, *args], capture_output=True, text=True, check=True).stdout


def test_files(repo, rev, only):
    """Paths of the interpreter test files; `only`: names without .mlir
    (`add`, `chlo/mulhi`, or just `mulhi`)."""
    paths = [p for p in git(repo, "ls-tree", "-r", "--name-only", rev, INTERPRET_DIR).split() if p.endswith(".mlir")]
    if only:
        wanted = set(only.split(","))
        paths = [p for p in paths if {short(p), os.path.basename(p)[:-5]} & wanted]
    return paths


def short(path):
    return path[len(INTERPRET_DIR) + 1:-len(".mlir")]


def sections(text):
    """The `// -----` sections of a file, comments removed (no test has `//`
    inside a string)."""
    return [re.sub(r"//[^\n]*", "", s) for s in re.split(r"^// -----[^\n]*$", text, flags=re.M)]


def functions(section):
    """(name, text) of each func.func in a section, its text running to the next one."""
    starts = list(re.finditer(r"func\.func\s+(?:(?:public|private|nested)\s+)?@([\w.$-]+)", section))
    return [(m.group(1), section[m.start():(starts[i + 1].start() if i + 1 < len(starts) else len(section))])
            for i, m in enumerate(starts)]


def tests(text):
    """(function name, section, test name) of each test in a file: every
    function with a check op; a section whose functions check nothing gives
    one test (skipped). A name that comes again (`main`) gets `#2`, `#3`, ..."""
    found, seen = [], collections.Counter()
    for section in sections(text):
        funcs = functions(section)
        checking = [name for name, body in funcs if "check." in body]
        for name in checking or [name for name, _ in funcs[:1]]:
            seen[name] += 1
            found.append((name, section, name if seen[name] == 1 else f"{name}#{seen[name]}"))
    return found


def closing(text, start):
    """Index just past the `<...>` group that opens at the first `<` at or after `start`."""
    depth = 0
    for i in range(text.index("<", start), len(text)):
        depth += (text[i] == "<") - (text[i] == ">")
        if depth == 0:
            return i + 1
    raise Skip("unbalanced brackets in a check op")


def statement_end(text, start):
    """End of the op statement at `start`: its line, or more where a bracket is
    still open or the line ends with a comma."""
    depth = 0
    for i in range(start, len(text)):
        c = text[i]
        depth += (c in "<([{") - (c in ">)]}")
        if c == "\n" and depth == 0 and not text[start:i].rstrip().endswith(","):
            return i
    return len(text)


def element_types(text):
    """Element types of every tensor type in the text."""
    types = set()
    for m in re.finditer(r"tensor<", text):
        body = re.sub(r"^(?:(?:\d+|\?)x)*", "", text[m.end():closing(text, m.start())])
        types.add(re.match(r"complex<\w+>|!?[\w.]+", body).group())
    return types


def why_skip(section, name):
    """Why the section cannot be given to brt, or None."""
    body = dict(functions(section))[name]
    interpreter_ops = sorted(set(re.findall(r"\binterpreter\.\w+", section)))
    if interpreter_ops:
        return f"{interpreter_ops[0]}: an op of the interpreter's own"
    unknown = sorted(set(re.findall(r"\bcheck\.(\w+)", body)) - set(CHECK_KINDS))
    if unknown:
        return f"check.{unknown[0]}: a check with no counterpart here"
    if "check." not in body:
        return "no check op (the interpreter test only runs it, or FileChecks its printout)"
    if "!stablehlo.token" in section:
        return "token type"
    if "tuple<" in section:
        return "tuple type"
    foreign = sorted(t for t in element_types(section) if t not in DTYPES)
    if foreign:
        return f"element type {foreign[0]} (not a brt dtype)"
    return None


# --- Turning check ops into results ---------------------------------------------------------------

def parse_check(kind, stmt):
    """(operands, their type, spec) of a check op; `stmt` is its text after `check.<kind>`.
    spec: how the first operand is compared: with `expected` (literal, type) for
    the _const forms, else with the second operand."""
    spec = {"kind": CHECK_KINDS[kind], "expected": None}
    if kind.endswith("_const"):  # check.expect_eq_const %x, dense<...> : tensor<...> [, tolerance = t] [{...}]
        m = re.match(rf"\s*({OPERAND})\s*,\s*", stmt)
        literal_end = closing(stmt, m.end())
        type_start = literal_end + re.match(r"\s*:\s*", stmt[literal_end:]).end()
        type_ = stmt[type_start:closing(stmt, type_start)]
        operands, rest = [m.group(1)], stmt[type_start + len(type_):]
        spec["expected"] = (stmt[m.end():literal_end], type_)
    else:  # check.expect_eq %x, %y [, key = value]... [{...}] : tensor<...>[, tensor<...>]
        m = re.match(rf"\s*({OPERAND})\s*,\s*({OPERAND})", stmt)
        operands, rest = [m.group(1), m.group(2)], stmt[m.end():]
        type_start = rest.index("tensor<")
        type_ = rest[type_start:closing(rest, type_start)]

    def number(key, default):
        found = re.search(rf"\b{key}\s*=\s*([-+\w.]+)", rest)
        return float(found.group(1)) if found else default

    spec["tolerance"] = number("tolerance", DEFAULT_TOLERANCE)
    spec["ulps"] = (number("min_ulp_difference", 0), number("max_ulp_difference", 1))
    return operands, type_, spec


def replace_checks(section):
    """The section with each check op turned into `"brt_check.keep"(operands) {id}`,
    an op MLIR parses unregistered, and the specs by id."""
    out, specs, pos = [], [], 0
    for m in re.finditer(r"\bcheck\.(\w+)", section):
        if m.start() < pos:
            continue
        end = statement_end(section, m.end())
        stmt = section[m.end():end]
        operands, type_, spec = parse_check(m.group(1), stmt)
        spec["text"] = " ".join(f"check.{m.group(1)}{stmt}".split())
        out.append(section[pos:m.start()])
        out.append(f'"brt_check.keep"({", ".join(operands)}) {{id = {len(specs)} : i64}} : '
                   f'({", ".join([type_] * len(operands))}) -> ()')
        specs.append(spec)
        pos = end
    out.append(section[pos:])
    return "".join(out), specs


def all_ops(op):
    for region in op.regions:
        for block in region.blocks:
            for inner in block.operations:
                yield inner.operation
                yield from all_ops(inner.operation)


def build_module(ctx, text, name):
    """Generic-form text of the module with function `name` as public @main
    returning every value it checks, and [(spec id, operand index)] per result."""
    with ctx, ir.Location.unknown():
        try:
            module = ir.Module.parse(text)
        except ir.MLIRError as e:
            raise Skip("jaxlib's MLIR does not parse it: " + first_line(str(e).split("error:")[-1]))
        funcs = [op for op in all_ops(module.operation) if op.name == "func.func"]
        by_name = {ir.StringAttr(f.attributes["sym_name"]).value: f for f in funcs}
        test = by_name[name]
        fn_type = ir.FunctionType(ir.TypeAttr(test.attributes["function_type"]).value)
        if fn_type.inputs:
            raise Skip("the function takes arguments")
        # The checks of the test function, in order; those of other functions only go.
        outputs, values = [], []
        for f in funcs:
            for op in [op for op in all_ops(f) if op.name == "brt_check.keep"]:
                if f == test:
                    if op.parent.operation != test:
                        raise Skip("a check op inside a region")
                    ident = ir.IntegerAttr(op.attributes["id"]).value
                    outputs += [(ident, i) for i in range(len(op.operands))]
                    values += list(op.operands)
                op.erase()
        ret = list(test.regions[0].blocks[0].operations)[-1].operation
        outputs = [None] * len(ret.operands) + outputs  # what it returned already, if anything
        results = list(ret.operands) + values
        ir.Operation.create("func.return", operands=results, ip=ir.InsertionPoint(ret))
        ret.erase()
        test.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(fn_type.inputs, [v.type for v in results]))
        if name != "main":
            if "main" in by_name:
                ir.SymbolTable.set_symbol_name(by_name["main"], "main_")
                ir.SymbolTable.replace_all_symbol_uses("main", "main_", module.operation)
            ir.SymbolTable.replace_all_symbol_uses(name, "main", module.operation)
            ir.SymbolTable.set_symbol_name(test, "main")
        for f in funcs:
            f.attributes["sym_visibility"] = ir.StringAttr.get("public" if f == test else "private")
        try:
            module.operation.verify()
        except ir.MLIRError as e:
            raise Skip("does not verify once its checks are results: " + first_line(str(e).split("error:")[-1]))
        return module.operation.get_asm(print_generic_op_form=True, large_elements_limit=None), outputs


def expected_array(ctx, literal, type_):
    """The expected constant as a NumPy array, parsed by MLIR. jaxlib's
    bindings read neither complex nor bf16 attributes: complex literals are
    read as floats with a last dimension of 2, bf16 ones as f32 (a bf16 bit
    pattern is the top half of an f32 one) and rounded."""
    dims, elem = re.fullmatch(r"tensor<((?:\d+x)*)(.*)>", type_).groups()
    shape = tuple(int(d) for d in dims.split("x")[:-1])
    with ctx:
        if elem.startswith("complex<"):
            part = elem[len("complex<"):-1]
            splat = literal[len("dense<"):].lstrip().startswith("(")
            pairs = literal.replace("(", "[").replace(")", "]")
            floats = np.array(ir.Attribute.parse(f"{pairs} : tensor<{'' if splat else dims}2x{part}>"))
            floats = np.ascontiguousarray(np.broadcast_to(floats, shape + (2,)))
            return floats.view(DTYPES[elem]).reshape(shape)
        if elem == "bf16":
            f32 = re.sub(r"\b(0x[0-9A-Fa-f]{4})\b", r"\g<1>0000", literal)
            return np.array(ir.Attribute.parse(f"{f32} : tensor<{dims}f32>")).astype(ml_dtypes.bfloat16)
        return np.array(ir.Attribute.parse(f"{literal} : {type_}"))


# --- Comparing as the interpreter does -----------------------------------------------------------

def parts(x):
    """The float64 parts of an array: real and imaginary, or itself."""
    return (x.real.astype(np.float64), x.imag.astype(np.float64)) if np.iscomplexobj(x) else (x.astype(np.float64),)


def almost_equal(got, expected, tolerance):
    """CheckOps.cpp's areApproximatelyEqual per element (complex: both parts):
    equal, both NaN, or both finite and |got - expected| <= tolerance."""
    ok = np.ones(got.shape, bool)
    with np.errstate(invalid="ignore", over="ignore"):
        for g, e in zip(parts(got), parts(expected)):
            ok &= (g == e) | (np.isnan(g) & np.isnan(e)) | (np.isfinite(g) & np.isfinite(e) & (abs(g - e) <= tolerance))
    return ok


def ulp_difference(got, expected):
    """CheckOps.cpp's ULPDifference per element (complex: the larger of the
    parts'): 0 when bitwise equal or both NaN, the distance of the bit
    patterns (by magnitude) when both are finite, else infinite."""
    if np.iscomplexobj(got):
        return np.maximum(ulp_difference(got.real, expected.real), ulp_difference(got.imag, expected.imag))
    unsigned = np.dtype(f"uint{8 * got.dtype.itemsize}")
    sign = 1 << (8 * got.dtype.itemsize - 1)
    a, b = got.view(unsigned).astype(object), expected.view(unsigned).astype(object)  # no overflow for f64
    magnitude = np.asarray(np.frompyfunc(lambda x, y: abs((x & ~sign) - (y & ~sign)) if (x ^ y) & sign == 0
                                         else (x & ~sign) + (y & ~sign), 2, 1)(a, b), np.float64)
    g, e = got.astype(np.float64), expected.astype(np.float64)
    finite = np.isfinite(g) & np.isfinite(e)
    return np.where(a == b, 0, np.where(finite, magnitude, np.where(np.isnan(g) & np.isnan(e), 0, np.inf)))


def compare(got, expected, spec):
    """None when `got` passes the check, else what differs."""
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return f"got {got.dtype}{list(got.shape)}, expected {expected.dtype}{list(expected.shape)}"
    if spec["kind"] == "eq":
        ok = got == expected  # IEEE equality, as APFloat's ==: NaN differs from itself, -0 == 0
    elif spec["kind"] == "almost_eq":
        ok = almost_equal(got, expected, spec["tolerance"])
    else:
        low, high = spec["ulps"]
        ulps = ulp_difference(got, expected)
        ok = (ulps >= low) & (ulps <= high)
    if ok.all():
        return None
    bad = np.argwhere(~ok)
    index = tuple(int(i) for i in bad[0])
    if got.dtype == bool:
        error = f"{len(bad)} of {got.size} differ"
    elif spec["kind"] == "close":
        error = f"{len(bad)} of {got.size} differ, max ULP difference = {np.max(ulps[~ok]):.0f}"
    else:
        with np.errstate(invalid="ignore", over="ignore"):
            diff = abs(got.astype(np.complex128) - expected.astype(np.complex128))[~ok]
        error = f"{len(bad)} of {got.size} differ, max |got - expected| = {np.max(diff):.6g}"
    return (f"{error}; first at {list(index)}: got {got[index]!s}, expected {expected[index]!s}\n"
            f"      expected {show(expected)}\n      got      {show(got)}")


def show(a):
    return np.array2string(a, threshold=24, max_line_width=10**6, precision=8, separator=", ")


# --- Running one file (in a worker process) ------------------------------------------------------

def first_line(message):
    return next((line.strip() for line in message.strip().splitlines() if line.strip()), "(no message)")


def refusal(message):
    """brt-compile's first line without the temporary file's name, so that like refusals group."""
    return re.sub(r'^brt-compile:\s*|loc\("[^"]*"(:\d+)*\):\s*', "", first_line(message))


def run_test(ctx, section, name, tmp, dump_dir, test):
    """(status, detail) of the test of function `name`, called `test` (file/name) in dumps."""
    reason = why_skip(section, name)
    if reason:
        return "SKIPPED", reason
    text, specs = replace_checks(section)
    text, outputs = build_module(ctx, text, name)
    if dump_dir:
        with open(os.path.join(dump_dir, test.replace("/", ".").replace("#", ".") + ".mlir"), "w") as f:
            f.write(text)
    try:
        expected = {i: expected_array(ctx, *specs[i]["expected"]) for i, _ in filter(None, outputs)
                    if specs[i]["expected"]}
    except (ir.MLIRError, ValueError) as e:  # a literal expected_array's rewrites do not cover
        return "SKIPPED", f"cannot read an expected constant: {first_line(str(e))}"
    exe = os.path.join(tmp, "test.brtx")
    try:
        brt.compile_stablehlo(text, target="cpu", path=exe)
    except brt.CompileError as e:
        return "REFUSED", refusal(str(e))
    try:
        session = brt.Session(exe, threads=1)
    except Exception as e:
        return "REFUSED", "load: " + first_line(str(e))
    try:
        got = [np.asarray(o) for o in session.run()]
    except Exception as e:
        return "ERROR", "run: " + first_line(str(e))
    problems = []
    for k, output in enumerate(outputs):
        if output is None or output[1] == 1:  # a result of its own, or a check's second operand
            continue
        spec = specs[output[0]]
        reference = expected[output[0]] if spec["expected"] else got[k + 1]
        problem = compare(got[k], reference, spec)
        if problem:
            problems.append(f"{spec['text'][:160]}\n      {problem}")
    return ("MISMATCH", "\n    ".join(problems)) if problems else ("PASS", "")


def worker(args):
    """Reads {"file", "skip"} tasks from stdin; per test writes {"begin": name}
    then {"result": ...}, and {"done": file} at the end, on the original stdout.
    Anything else written to stdout (by brt) goes to stderr."""
    protocol = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)

    ctx = mlir.make_ir_context()
    ctx.allow_unregistered_dialects = True  # brt_check.keep

    def say(**message):
        protocol.write(json.dumps(message) + "\n")
        protocol.flush()

    for line in sys.stdin:
        task = json.loads(line)
        for name, section, test in tests(git(args.stablehlo_git, "show", f"{args.rev}:{task['file']}"))[task["skip"]:]:
            say(begin=test)
            signal.alarm(args.timeout)  # its default action ends the process: a CRASH
            try:
                with tempfile.TemporaryDirectory() as tmp:
                    status, detail = run_test(ctx, section, name, tmp, args.dump_dir, f"{short(task['file'])}/{test}")
            except Skip as e:
                status, detail = "SKIPPED", str(e)
            signal.alarm(0)
            say(result={"name": test, "status": status, "detail": detail})
        say(done=task["file"])


# --- The driver ----------------------------------------------------------------------------------

class Worker:
    """A worker process; started again when it dies."""

    def __init__(self, args):
        self.args, self.process = args, None
        self.log = tempfile.TemporaryFile("w+")

    def start(self):
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", "--stablehlo-git", self.args.stablehlo_git,
               "--rev", self.args.rev, "--timeout", str(self.args.timeout)]
        if self.args.dump_dir:
            cmd += ["--dump-dir", self.args.dump_dir]
        self.log.seek(0)
        self.log.truncate()
        self.process = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True)

    def run_file(self, path, report):
        """Results of one file's tests; `report` is called with each."""
        results, skip = [], 0
        while True:
            if self.process is None:
                self.start()
            self.process.stdin.write(json.dumps({"file": path, "skip": skip}) + "\n")
            self.process.stdin.flush()
            current = None
            for line in self.process.stdout:
                message = json.loads(line)
                if "done" in message:
                    return results
                if "begin" in message:
                    current = message["begin"]
                else:
                    results.append(dict(message["result"], file=short(path)))
                    report(results[-1])
                    current = None
            rc = self.process.wait()  # it died
            self.process = None
            if current is None:
                raise RuntimeError(f"worker died outside a test (exit {rc}): {self.stderr_tail()}")
            why = f"timed out after {self.args.timeout} s" if rc == -signal.SIGALRM else \
                f"{signal.Signals(-rc).name if rc < 0 else f'exit {rc}'}: {self.stderr_tail()}"
            results.append({"file": short(path), "name": current, "status": "CRASH", "detail": why})
            report(results[-1])
            skip = len(results)

    def stderr_tail(self):
        self.log.seek(0)
        lines = [line for line in self.log.read().splitlines() if line.strip()]
        return lines[-1].strip() if lines else "(nothing on stderr)"

    def close(self):
        if self.process:
            self.process.stdin.close()
            self.process.wait()


def run_all(args, paths):
    """Every test's result, files shared out among the workers."""
    todo = queue.Queue()
    for p in paths:
        todo.put(p)
    results, lock = {}, threading.Lock()

    def report(result):
        if args.verbose or result["status"] in ("MISMATCH", "CRASH", "ERROR"):
            with lock:
                detail = f": {result['detail']}" if result["detail"] else ""
                print(f"  {result['file']}/{result['name']}: {result['status']}{detail}", flush=True)

    def serve():
        w = Worker(args)
        try:
            while True:
                try:
                    path = todo.get_nowait()
                except queue.Empty:
                    return
                results[path] = w.run_file(path, report)
                counts = collections.Counter(r["status"] for r in results[path])
                with lock:
                    print(f"{short(path)}: " + ", ".join(f"{counts[s]} {s.lower()}" for s in STATUSES if counts[s]),
                          flush=True)
        finally:
            w.close()

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        for f in [pool.submit(serve) for _ in range(args.jobs)]:
            f.result()
    return [r for p in paths for r in results[p]]


def summary(results, seconds, markdown):
    """The report as lines: plain text, or markdown."""
    counts = collections.Counter(r["status"] for r in results)
    total, skipped = len(results), counts["SKIPPED"]
    by_file = collections.defaultdict(collections.Counter)
    for r in results:
        by_file[r["file"]][r["status"]] += 1
    lines = []
    heading = (lambda t: ["", f"## {t}", ""]) if markdown else (lambda t: ["", f"{t}:"])
    lines += ["# StableHLO interpreter tests through brt", ""] if markdown else []
    lines.append(f"{total} tests in {len(by_file)} files, {seconds:.0f} s: " +
                 ", ".join(f"{counts[s]} {s.lower()}" for s in STATUSES))
    lines.append(f"pass rate: {counts['PASS']}/{total} = {counts['PASS'] / max(total, 1):.1%} of all, "
                 f"{counts['PASS']}/{total - skipped} = {counts['PASS'] / max(total - skipped, 1):.1%} of those run")
    lines += heading("Per file")
    row = (lambda cells: "| " + " | ".join(map(str, cells)) + " |") if markdown else \
        (lambda cells: f"  {cells[0]:<28}" + "".join(f"{c:>9}" for c in cells[1:]))
    lines.append(row(["file", *(s.lower() for s in STATUSES)]))
    if markdown:
        lines.append(row(["---"] + ["---:"] * len(STATUSES)))
    lines += [row([f, *(c[s] for s in STATUSES)]) for f, c in sorted(by_file.items())]
    for status, title in (("MISMATCH", "Mismatches"), ("ERROR", "Run errors"), ("CRASH", "Crashes")):
        found = [r for r in results if r["status"] == status]
        if found:
            lines += heading(f"{title} ({len(found)})")
            for r in found:
                lines += ["", f"### {r['file']}/{r['name']}", "", "```", "    " + r["detail"], "```"] if markdown \
                    else [f"- {r['file']}/{r['name']}:", "    " + r["detail"]]
    for status, title in (("REFUSED", "Refusals by message"), ("SKIPPED", "Skipped, by reason")):
        groups = collections.defaultdict(list)
        for r in results:
            if r["status"] == status:
                groups[r["detail"]].append(f"{r['file']}/{r['name']}")
        if groups:
            lines += heading(title)
        for message, names in sorted(groups.items(), key=lambda g: -len(g[1])):
            example = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
            lines.append(f"- {len(names)} x {message}  ({example})")
    return [line for i, line in enumerate(lines) if line or not i or lines[i - 1]]  # no two blank lines in a row


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stablehlo-git", required=True, help="an openxla/stablehlo checkout or bare git directory")
    parser.add_argument("--rev", default="HEAD", help="the revision to read the tests from (default HEAD)")
    parser.add_argument("--only", help="comma-separated file names without .mlir (add,while,chlo/mulhi)")
    parser.add_argument("--verbose", action="store_true", help="every test's outcome as it comes")
    parser.add_argument("--markdown", metavar="OUT", help="also write the report as markdown")
    parser.add_argument("--dump-dir", help="write each test's generic MLIR (what brt-compile reads) here")
    parser.add_argument("--jobs", type=int, default=2, choices=[1, 2], help="worker processes (default 2)")
    parser.add_argument("--timeout", type=int, default=300, help="seconds per test before it counts as a CRASH")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.dump_dir:
        args.dump_dir = os.path.abspath(args.dump_dir)
        os.makedirs(args.dump_dir, exist_ok=True)
    if args.worker:
        return worker(args)
    paths = test_files(args.stablehlo_git, args.rev, args.only)
    if not paths:
        sys.exit(f"no test file under {INTERPRET_DIR} matches")
    start = time.time()
    results = run_all(args, paths)
    seconds = time.time() - start
    print("\n".join(summary(results, seconds, markdown=False)))
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("\n".join(summary(results, seconds, markdown=True)) + "\n")


if __name__ == "__main__":
    main()
