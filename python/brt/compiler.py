"""JAX function -> StableHLO (generic MLIR text) -> .brtx via brt-compile."""
import os
import pathlib
import shutil
import subprocess
import tempfile


class CompileError(RuntimeError):
    """brt-compile rejected the program; the message is its one-line error."""


def export_stablehlo(fn, *example_args):
    """StableHLO of `jax.jit(fn)` for arguments shaped like `example_args`, in
    the generic op form that brt-compile reads. A function already jitted is
    lowered as it is, so `jax.jit(step, donate_argnums=...)` keeps its donated
    arguments (brt makes them state, updated in place)."""
    import jax

    lowered = (fn if hasattr(fn, "lower") else jax.jit(fn)).lower(*example_args)
    module = lowered.compiler_ir("stablehlo")
    return module.operation.get_asm(print_generic_op_form=True, large_elements_limit=None)


def find_tool(name="brt-compile"):
    """Path of a brt tool: $BRT_BIN_DIR, then the build tree next to this
    package, then PATH."""
    candidates = []
    if os.environ.get("BRT_BIN_DIR"):
        candidates.append(pathlib.Path(os.environ["BRT_BIN_DIR"]) / name)
    here = pathlib.Path(__file__).resolve().parents[2]
    candidates.append(here / "bin" / name)  # the package as assembled in build/python
    candidates.append(here / "build" / "bin" / name)  # the package in the source tree
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    found = shutil.which(name)
    if found:
        return found
    raise FileNotFoundError(f"{name} not found: build brt (scripts/build.sh) or set BRT_BIN_DIR")


def compile(fn, *example_args, target="cpu", path=None, stats=False):
    """Compiles `fn` for arguments shaped like `example_args`; returns the path
    of the .brtx (a temporary file unless `path` is given)."""
    text = export_stablehlo(fn, *example_args)
    if path is None:
        fd, path = tempfile.mkstemp(suffix=".brtx")
        os.close(fd)
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(text)
        mlir_path = f.name
    try:
        cmd = [find_tool(), mlir_path, "-o", str(path), f"--target={target}"] + (["--stats"] if stats else [])
        r = subprocess.run(cmd, capture_output=True, text=True)
    finally:
        os.unlink(mlir_path)
    if r.returncode != 0:
        raise CompileError(r.stderr.strip())
    if stats:
        print(r.stdout, end="")
    return str(path)
