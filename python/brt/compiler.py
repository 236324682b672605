"""JAX function or PyTorch module -> StableHLO (generic MLIR text) -> .brtx
via brt-compile."""
import atexit
import os
import pathlib
import shutil
import subprocess
import tempfile

from .check import refuse_device, removing_on_error


class CompileError(RuntimeError):
    """brt-compile rejected the program; the message is its one-line error."""


# Executables compiled without a `path`: removed when the interpreter exits.
_temporary_executables = set()


@atexit.register
def _remove_temporary_executables():
    for path in _temporary_executables:
        try:
            os.remove(path)
        except OSError:
            pass


def export_stablehlo(fn, *example_args):
    """StableHLO of `jax.jit(fn)` for arguments shaped like `example_args`, in
    the generic op form that brt-compile reads. A function already jitted is
    lowered as it is, so `jax.jit(step, donate_argnums=...)` keeps its donated
    arguments (brt makes them state, updated in place). Each argument is named
    after its parameter and its place in the pytree (`params.dense.w`,
    `opt_state.0.mu.dense.w`, `x`): the names brt gives the arguments, and
    so the keys of saved state."""
    import jax
    from jax._src.lib.mlir import ir

    jitted = fn if hasattr(fn, "lower") else jax.jit(fn)
    dims = _symbol_names(example_args)
    if dims is False:
        return _export_symbolic(fn, jitted, example_args)
    lowered = jitted.lower(*example_args)
    module = lowered.compiler_ir("stablehlo")
    kept = getattr(getattr(lowered, "_lowering", None), "compile_args", {}).get("kept_var_idx")
    names = _argument_names(fn, kept, example_args)
    if dims is not None and kept is not None:
        dims = [d for i, d in enumerate(dims) if i in kept]
    _name_arguments(module, names, ir, dims, dims and [([0] * len(d), [0] * len(d)) for d in dims])
    return module.operation.get_asm(print_generic_op_form=True, large_elements_limit=None)


def _symbol_names(example_args):
    """Per argument, its dimensions' symbols ("" where static); None when
    every shape is static; False when a dimension is an expression of
    symbols (`t - 1`) or the symbols have constraints (`t <= 15`), which
    only `jax.export`'s module computes and asserts."""
    import jax

    leaves = jax.tree_util.tree_leaves(example_args)
    if not has_symbolic_shapes(example_args):
        return None
    dims = [["" if isinstance(d, int) else str(d) for d in getattr(leaf, "shape", ())] for leaf in leaves]
    if any(d and not d.isidentifier() for per_arg in dims for d in per_arg):
        return False
    scopes = {id(d.scope): d.scope for leaf in leaves for d in getattr(leaf, "shape", ()) if hasattr(d, "scope")}
    if any(getattr(scope, "_explicit_constraints", None) for scope in scopes.values()):
        return False
    return dims


def has_symbolic_shapes(example_args):
    """Whether an argument has a symbolic dimension (`jax.ShapeDtypeStruct`
    with a shape from `jax.export.symbolic_shape`)."""
    import jax

    return any(
        not all(isinstance(d, int) for d in getattr(leaf, "shape", ()))
        for leaf in jax.tree_util.tree_leaves(example_args)
    )


def _export_symbolic(fn, jitted, example_args):
    """`jax.export` of a function with symbolic shapes: its module computes
    the dimension sizes from the arguments and asserts the shapes'
    constraints, which brt-compile turns into the executable's symbols and
    constraints."""
    import jax
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib.mlir import ir

    exported = jax.export.export(jitted)(*example_args)
    with jax_mlir.make_ir_context():
        module = ir.Module.parse(exported.mlir_module())
        _name_arguments(module, _argument_names(fn, exported.module_kept_var_idx, example_args), ir)
        return module.operation.get_asm(print_generic_op_form=True, large_elements_limit=None)


def _argument_names(fn, kept, example_args):
    """Per argument of the lowered `main`: "<parameter>.<pytree path>"."""
    import inspect

    import jax

    try:
        parameters = inspect.signature(fn).parameters.values()
        positional = [p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):  # a callable without a signature
        positional = []
    names = []
    for path, _ in jax.tree_util.tree_flatten_with_path(example_args)[0]:
        index = path[0].idx
        head = positional[index] if index < len(positional) else f"arg{index}"
        rest = jax.tree_util.keystr(path[1:], simple=True, separator=".")
        names.append(f"{head}.{rest}" if rest else head)
    # jax.jit drops the arguments the function never reads.
    if kept is not None:
        names = [n for i, n in enumerate(names) if i in kept]
    return names


def _name_arguments(module, names, ir, dims=None, dim_bounds=None):
    """Sets `brt.name` on the arguments of the module's `main`; leaves them
    unnamed (brt-compile then says arg0, arg1, ...) when the names do not
    line up or repeat. `dims`, per argument: the names of its dimensions'
    symbols ("" for a static one), set as `brt.dims`, and `dim_bounds` their
    (smallest, largest) sizes (0 for none), as `brt.dim_min` and
    `brt.dim_max`. Arguments that are
    dimension sizes (`jax.global_constant`) keep their attributes and take no
    name. `ir` is the MLIR Python package the module was made with (JAX's or
    torch-mlir's)."""
    if len(set(names)) != len(names) or (dims is not None and len(dims) != len(names)):
        return
    with module.context:
        for op in module.body.operations:
            if "sym_name" not in op.attributes or ir.StringAttr(op.attributes["sym_name"]).value != "main":
                continue
            inputs = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value).inputs
            old = op.attributes["arg_attrs"] if "arg_attrs" in op.attributes else None
            entries = [ir.DictAttr(old[i]) if old is not None else [] for i in range(len(inputs))]
            merged = [{e[k].name: e[k].attr for k in range(len(e))} for e in entries]
            named = [i for i, m in enumerate(merged) if "jax.global_constant" not in m]
            if len(named) != len(names):
                return
            for j, i in enumerate(named):
                merged[i]["brt.name"] = ir.StringAttr.get(names[j])
                if dims is not None and any(dims[j]):
                    merged[i]["brt.dims"] = ir.ArrayAttr.get([ir.StringAttr.get(d) for d in dims[j]])
                    merged[i]["brt.dim_min"] = ir.DenseI64ArrayAttr.get(dim_bounds[j][0])
                    merged[i]["brt.dim_max"] = ir.DenseI64ArrayAttr.get(dim_bounds[j][1])
            op.attributes["arg_attrs"] = ir.ArrayAttr.get([ir.DictAttr.get(m) for m in merged])


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


def compile(fn, *example_args, target="cpu", path=None, stats=False, check=False, check_seed=0):
    """Compiles `fn` for arguments shaped like `example_args`; returns the path
    of the .brtx (unless `path` is given, a temporary file, removed when the
    interpreter exits).

    `check=True` then runs `jax.jit(fn)` and the executable on the CPU on the
    same random inputs (from `check_seed`) and raises brt.CheckError naming
    the first output that differs, by how much, and the seed."""
    if check:
        refuse_device(target, "brt.compile(check=True)")
        if has_symbolic_shapes(example_args):
            raise ValueError("brt.compile(check=True) needs concrete shapes: check the executable at sizes of your choice")
    made_path = path is None
    path = compile_stablehlo(export_stablehlo(fn, *example_args), target=target, path=path, stats=stats)
    if check:
        removing_on_error(path, made_path, lambda: _check_jax(fn, example_args, path, check_seed))
    return path


def _check_jax(fn, example_args, path, seed):
    import jax

    from .check import check_session

    leaves, tree = jax.tree_util.tree_flatten(example_args)
    jitted = fn if hasattr(fn, "lower") else jax.jit(fn)

    def run_jax(inputs):
        return jax.tree_util.tree_leaves(jitted(*jax.tree_util.tree_unflatten(tree, inputs)))

    check_session(path, "main", run_jax, leaves, seed, "brt.compile(check=True)")


def compile_stablehlo(text, target="cpu", path=None, stats=False, check_indices=False):
    """Compiles StableHLO text (what `export_stablehlo` or
    `export_torch_stablehlo` return) with brt-compile; returns the path of the
    .brtx (unless `path` is given, a temporary file, removed when the
    interpreter exits). `text` may be a dict
    {function name: text}: one executable with a function each, equal
    weights stored once. `stats` prints brt-compile's op counts and memory
    plan. `check_indices`: a run with a gather or scatter index out of range
    fails, naming the op (PyTorch's meaning; StableHLO clamps or drops it)."""
    functions = text if isinstance(text, dict) else {"main": text}
    made_path = path is None
    if made_path:
        fd, path = tempfile.mkstemp(suffix=".brtx")
        os.close(fd)
        _temporary_executables.add(path)
    with tempfile.TemporaryDirectory() as tmp:
        inputs = []
        for i, (name, body) in enumerate(functions.items()):
            mlir_path = os.path.join(tmp, f"{i}.mlir")
            with open(mlir_path, "w") as f:
                f.write(body)
            inputs.append(f"{name}={mlir_path}" if len(functions) > 1 else mlir_path)
        cmd = [find_tool(), *inputs, "-o", str(path), f"--target={target}"] + (["--stats"] if stats else []) + \
            (["--check-indices"] if check_indices else [])
        r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        if made_path and os.path.exists(path):  # brt-compile removes what it refuses to load
            os.remove(path)
        raise CompileError(r.stderr.strip())
    if stats:
        print(r.stdout, end="")
    return str(path)
