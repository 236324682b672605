"""Saved cases: one readable Python file per minimized failure, under
regressions/. A case file is the program (the frontend's imports, then the
function or module), its inputs as literal values, and what brt got wrong;
XFAIL holds the cause while brt has it (test_regressions.py replays every
case each CI run).
"""
import dataclasses
import inspect
import pathlib
import re

import numpy as np

from program import numpy_dtype

REGRESSIONS = pathlib.Path(__file__).resolve().parent / "regressions"
UNDIAGNOSED = "not yet diagnosed"


@dataclasses.dataclass
class Case:
    """A saved case, with the fields runner.Pipeline reads from a program."""
    path: pathlib.Path
    frontend: str
    x64: bool
    xfail: str
    kinds: list
    status: str
    reason: str
    precision: str
    inexact: list
    source: str
    input_names: list
    inputs: list


def _values_text(array):
    values = array.astype(np.float64) if array.dtype.kind == "f" or array.dtype == numpy_dtype("bf16") else array
    return repr(values.tolist())


def case_text(program, frontend, result, found_by, xfail=UNDIAGNOSED):
    """The file of a saved case for `program` (a program.Program) that
    fails with `result` (a runner.Result)."""
    recipe = program.recipe
    framework = "JAX" if recipe.frontend == "jax" else "PyTorch"
    inputs = "".join(
        f"    ({_dtype_of(a)!r}, {tuple(a.shape)!r}, {_values_text(a)}),  # {name}\n"
        for name, a in zip(program.input_names, program.inputs))
    return (f'"""brt differs from {framework}: {result.status}: {result.reason}\n\n'
            f'Found by {found_by}, then minimized.\n"""\n'
            f"FRONTEND = {recipe.frontend!r}\n"
            f"X64 = {recipe.x64!r}  # jax_enable_x64\n"
            f"KINDS = {recipe.kinds()!r}  # the fuzzer's op kinds: a failure with these and STATUS is this one\n"
            f"STATUS = {result.status!r}\n"
            f"REASON = {result.reason!r}\n"
            f"PRECISION = {program.precision!r}  # the roughest float it computes in: the tolerance\n"
            f"INEXACT = {program.inexact!r}  # the values rounding may change\n"
            f"XFAIL = {xfail!r}  # the cause while brt has it; None once fixed\n\n"
            f"from numpy import inf, nan  # noqa: F401  (in INPUTS)\n"
            f"{frontend.header}\n\n"
            f"{program.source}\n\n"
            f"# (dtype, shape, values) per argument, in order.\n"
            f"INPUTS = [\n{inputs}]\n")


def _dtype_of(array):
    from frontends import dtype_name
    return dtype_name(array.dtype)


def load_case(path):
    text = pathlib.Path(path).read_text()
    namespace = {}
    exec(compile(text, str(path), "exec"), namespace)
    if namespace["FRONTEND"] == "jax":
        names = list(inspect.signature(namespace["program"]).parameters)
    else:
        names = list(inspect.signature(namespace["Program"].forward).parameters)[1:]
    inputs = [np.array(values, dtype=np.float64 if dtype in ("bf16", "f16") else numpy_dtype(dtype))
              .astype(numpy_dtype(dtype)).reshape(shape) for dtype, shape, values in namespace["INPUTS"]]
    return Case(pathlib.Path(path), namespace["FRONTEND"], namespace["X64"], namespace["XFAIL"],
                list(namespace["KINDS"]), namespace["STATUS"], namespace["REASON"], namespace["PRECISION"],
                list(namespace["INEXACT"]), text, names, inputs)


def all_cases(directory=REGRESSIONS):
    return [load_case(p) for p in sorted(pathlib.Path(directory).glob("*.py"))]


def _value_class(text):
    """nan, inf, -inf, 0, number or bool, of a value as compare.py prints it."""
    text = re.sub(r"^np\.\w+\((.*)\)$", r"\1", text.strip())
    if text in ("nan", "inf", "-inf"):
        return text
    if "True" in text or "False" in text:
        return "bool"
    try:
        return "0" if float(text) == 0 else "number"
    except ValueError:
        return "other"


def same_failure(status, reason):
    """A key that two failures of one cause share: the status and reason;
    for a mismatch, whose values differ from case to case, the kinds of
    value the framework and brt gave (framework inf, brt nan: 'inf->nan')."""
    if status != "mismatch":
        return (status, reason)
    values = re.search(r"framework (.+?), brt (.+)$", reason)
    if not values:
        return (status, "")
    return (status, f"{_value_class(values.group(1))}->{_value_class(values.group(2))}")


def known_failure(frontend, kinds, result, save_dir=REGRESSIONS):
    """A saved case (under regressions/, or where this run saves) still
    failing (XFAIL set) in the same frontend, the same way, whose op kinds
    the new failure's program has all of; None."""
    directories = {REGRESSIONS.resolve(), pathlib.Path(save_dir).resolve()}
    for case in [c for d in sorted(directories) if d.is_dir() for c in all_cases(d)]:
        if (case.xfail and case.frontend == frontend and set(case.kinds) <= set(kinds)
                and same_failure(case.status, case.reason) == same_failure(result.status, result.reason)):
            return case
    return None


def save_case(text, frontend, kinds, directory=REGRESSIONS):
    """Writes the case as <frontend>_<kinds>[_N].py; its path."""
    directory = pathlib.Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    stem = re.sub(r"[^a-z0-9_]+", "_", f"{frontend}_{'_'.join(kinds)}")[:80]
    path = directory / f"{stem}.py"
    n = 2
    while path.exists():
        path = directory / f"{stem}_{n}.py"
        n += 1
    path.write_text(text)
    return path
