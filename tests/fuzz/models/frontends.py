"""JAX and PyTorch as the fuzzer sees them: type inference while a program is
built, program source, the framework's own result (the reference), a float64
run of the same program (the shadow: how far the framework itself is from
exact), and export to StableHLO for brt-compile."""
import contextlib
import os
import re
import tempfile

import numpy as np

from program import BuildError, make_array, numpy_dtype

# How far each rounded op may be off in a wobbled shadow run, in units of
# the program's roughest float (brt's own exp, erf, ... are within a few).
WOBBLE_ULPS = 8
EPSILON = {"bf16": 2.0 ** -8, "f16": 2.0 ** -11, "f32": 2.0 ** -24, "f64": 2.0 ** -53}

JAX_HEADER = """\
import jax
import jax.numpy as jnp
from jax import lax
f32, f16, bf16, f64 = jnp.float32, jnp.float16, jnp.bfloat16, jnp.float64
i32, i64, boolean = jnp.int32, jnp.int64, jnp.bool_
"""

TORCH_HEADER = """\
import torch
import torch.nn.functional as F
f32, f16, bf16, f64 = torch.float32, torch.float16, torch.bfloat16, torch.float64
i32, i64, boolean = torch.int32, torch.int64, torch.bool
"""

_DTYPE_NAMES = {"float32": "f32", "float16": "f16", "bfloat16": "bf16", "float64": "f64", "int32": "i32",
                "int64": "i64", "bool": "bool"}


def dtype_name(dtype):
    """Our name of a JAX, NumPy or PyTorch dtype; None outside the fuzzed set."""
    return _DTYPE_NAMES.get(str(dtype).replace("torch.", ""))


def _namespace(header):
    namespace = {}
    exec(header, namespace)
    return namespace


def _load(base_namespace, source, float64):
    """Runs `source` (a program, or a whole saved case with its imports) in a
    copy of the header's namespace. float64: every float dtype name made
    float64 afterwards, which the program's functions see when they run."""
    namespace = dict(base_namespace)
    exec(compile(source, "<program>", "exec"), namespace)
    if float64:
        namespace.update(f32=namespace["f64"], f16=namespace["f64"], bf16=namespace["f64"])
    return namespace


def wobbled_source(source, names, seed, relative):
    """`source` with every statement that assigns one of `names` followed by
    `vN = _wobble(vN, seed, relative)`: each rounded value moved by up to
    `relative` of itself. Run in float64, the spread of the outputs over a
    few seeds is how much the program amplifies its ops' rounding."""
    lines, out, current, n = source.splitlines(), [], None, 0

    def close(indent):
        nonlocal n
        if current in names:
            out.append(f"{indent}{current} = _wobble({current}, {seed * 1000 + n}, {relative!r})")
            n += 1

    for line in lines:
        m = re.match(r"(\s+)(?:(v\d+)\b(?!_)\s*[=\[]|return\b)", line)
        if m and m.group(2) != current:
            close(m.group(1))
            current = m.group(2)
        out.append(line)
    return "\n".join(out) + "\n"


def _jax_wobble(x, seed, relative):
    import jax
    import jax.numpy as jnp
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return x
    return x * (1 + relative * jax.random.uniform(jax.random.PRNGKey(seed), x.shape, x.dtype, -1.0, 1.0))


def _torch_wobble(x, seed, relative):
    import torch
    if not x.is_floating_point():
        return x
    noise = torch.rand(x.shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 2 - 1
    return x * (1 + relative * noise).to(x.dtype)


class ExportError(Exception):
    """The exporter refused a program; the message is its first diagnostic."""


@contextlib.contextmanager
def _diagnostics_of(what):
    """Runs the body with the process's stderr (fd 2) going to a file: MLIR
    prints its diagnostics there, not in the exception. On an exception,
    the first diagnostic ("error: ...") is added to its message."""
    with tempfile.TemporaryFile() as log:
        saved = os.dup(2)
        os.dup2(log.fileno(), 2)
        try:
            yield
        except Exception as e:
            os.dup2(saved, 2)
            log.seek(0)
            errors = [ln.split("error:", 1)[1].strip() for ln in log.read().decode(errors="replace").splitlines()
                      if "error:" in ln]
            if errors:
                raise ExportError(f"{what}: {errors[0]}") from e
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)


def _to_float64(array):
    return array.astype(np.float64) if array.dtype.kind == "f" or array.dtype == numpy_dtype("bf16") else array


class _Statements:
    """Runs statements (lines assigning `name`) for type inference."""

    def __init__(self, namespace):
        self.namespace = namespace
        self.env = {}

    def snapshot(self):
        return dict(self.env)

    def restore(self, env):
        self.env = env

    def execute(self, lines, name, env):
        local = dict(env)
        exec(compile("\n".join(lines), "<statement>", "exec"), self.namespace, local)
        return local[name]


# ------------------------------------------------------------------ JAX

class JaxFrontend:
    name = "jax"
    header = JAX_HEADER

    def __init__(self):
        import jax
        self.jax = jax
        self._namespace = dict(_namespace(JAX_HEADER), _wobble=_jax_wobble)

    def new_state(self, x64):
        return _JaxState(self, x64)

    def program_source(self, input_names, lines, outputs):
        body = "".join(f"    {line}\n" for line in lines)
        return f"def program({', '.join(input_names)}):\n{body}    return ({', '.join(outputs)},)\n"

    def load(self, source, float64=False):
        return _load(self._namespace, source, float64)["program"]

    def reference(self, programs):
        """Per program: its outputs (NumPy arrays) or the exception it
        raised. The programs of one x64 mode are jitted together: one XLA
        compilation for the lot."""
        results = [None] * len(programs)
        for x64 in (False, True):
            group = [i for i, p in enumerate(programs) if p.x64 == x64]
            if not group:
                continue
            functions = [self.load(programs[i].source) for i in group]
            try:
                with self.jax.enable_x64(x64):
                    outs = self.jax.jit(lambda args: [f(*a) for f, a in zip(functions, args)])(
                        [programs[i].inputs for i in group])
                for i, out in zip(group, outs):
                    results[i] = [np.asarray(o) for o in out]
            except Exception:  # noqa: BLE001: find the program that fails, alone
                for i, f in zip(group, functions):
                    results[i] = self._run_one(f, programs[i].inputs, x64)
        return results

    def _run_one(self, function, inputs, x64):
        try:
            with self.jax.enable_x64(x64):
                return [np.asarray(o) for o in self.jax.jit(function)(*inputs)]
        except Exception as e:  # noqa: BLE001
            return e

    def eager(self, program):
        """The outputs op by op (jax.disable_jit), or None: asked where brt
        differs from the jitted reference, since XLA's simplifier can change
        a result (abs(x * x) -> x * x on wrapping integers)."""
        try:
            with self.jax.enable_x64(program.x64), self.jax.disable_jit():
                return [np.asarray(o) for o in self.load(program.source)(*program.inputs)]
        except Exception:  # noqa: BLE001
            return None

    def shadow(self, program, wobble_seed=None):
        """The outputs of the program computed in float64 (integers as they
        are); with wobble_seed, its inexact values wobbled (wobbled_source)."""
        source = program.source
        if wobble_seed is not None:
            source = wobbled_source(source, program.inexact, wobble_seed, WOBBLE_ULPS * EPSILON[program.precision])
        out = self._run_one(self.load(source, float64=True), [_to_float64(a) for a in program.inputs], True)
        if isinstance(out, Exception):
            raise out
        return out

    def export(self, program):
        import brt
        with self.jax.enable_x64(program.x64):
            return brt.export_stablehlo(self.load(program.source), *program.inputs)


class _JaxState(_Statements):
    def __init__(self, frontend, x64):
        super().__init__(frontend._namespace)
        self.jax = frontend.jax
        self.x64 = x64

    def add_input(self, name, node):
        self.env[name] = self.jax.ShapeDtypeStruct(tuple(node.shape), numpy_dtype(node.dtype))

    def run(self, lines, name):
        try:
            with self.jax.enable_x64(self.x64):
                out = self.jax.eval_shape(lambda env: self.execute(lines, name, env), self.env)
        except Exception as e:  # noqa: BLE001: whatever JAX rejects
            raise BuildError(f"{type(e).__name__}: {e}") from None
        dtype = dtype_name(getattr(out, "dtype", None))
        if dtype is None or not hasattr(out, "shape"):
            raise BuildError(f"result {out!r} is not an array of a fuzzed dtype")
        self.env[name] = self.jax.ShapeDtypeStruct(out.shape, out.dtype)
        return dtype, tuple(out.shape)


# ------------------------------------------------------------------ PyTorch

class TorchFrontend:
    name = "torch"
    header = TORCH_HEADER

    def __init__(self):
        import torch
        self.torch = torch
        self._namespace = dict(_namespace(TORCH_HEADER), _wobble=_torch_wobble)

    def new_state(self, x64):
        return _TorchState(self)

    def program_source(self, input_names, lines, outputs):
        body = "".join(f"        {line}\n" for line in lines)
        return (f"class Program(torch.nn.Module):\n    def forward(self, {', '.join(input_names)}):\n{body}"
                f"        return ({', '.join(outputs)},)\n")

    def load(self, source, float64=False):
        return _load(self._namespace, source, float64)["Program"]()

    def tensor(self, array):
        if array.dtype == numpy_dtype("bf16"):
            return self.torch.from_numpy(array.astype(np.float32)).to(self.torch.bfloat16)
        return self.torch.from_numpy(np.array(array))

    def array(self, tensor):
        if tensor.dtype == self.torch.bfloat16:
            return tensor.float().numpy().astype(numpy_dtype("bf16"))
        return np.array(tensor.detach().numpy())

    def _run(self, module, inputs):
        try:
            with self.torch.no_grad():
                return [self.array(o) for o in module(*[self.tensor(a) for a in inputs])]
        except Exception as e:  # noqa: BLE001
            return e

    def reference(self, programs):
        return [self._run(self.load(p.source), p.inputs) for p in programs]

    def shadow(self, program, wobble_seed=None):
        source = program.source
        if wobble_seed is not None:
            source = wobbled_source(source, program.inexact, wobble_seed, WOBBLE_ULPS * EPSILON[program.precision])
        out = self._run(self.load(source, float64=True), [_to_float64(a) for a in program.inputs])
        if isinstance(out, Exception):
            raise out
        return out

    def export(self, program):
        import brt
        with _diagnostics_of("torch-mlir"):
            return brt.export_torch_stablehlo(self.load(program.source), *[self.tensor(a) for a in program.inputs])


class _TorchState(_Statements):
    """PyTorch checks a statement by running it on the program's inputs:
    index bounds and the like are checked too."""

    def __init__(self, frontend):
        super().__init__(frontend._namespace)
        self.frontend = frontend

    def add_input(self, name, node):
        self.env[name] = self.frontend.tensor(make_array(node.dtype, node.shape, node.fill, node.seed))

    def run(self, lines, name):
        torch = self.frontend.torch
        try:
            with torch.no_grad():
                out = self.execute(lines, name, self.env)
        except Exception as e:  # noqa: BLE001: whatever PyTorch rejects
            raise BuildError(f"{type(e).__name__}: {e}") from None
        dtype = dtype_name(getattr(out, "dtype", None))
        if not isinstance(out, torch.Tensor) or dtype is None:
            raise BuildError(f"result {type(out).__name__} is not a tensor of a fuzzed dtype")
        self.env[name] = out
        return dtype, tuple(out.shape)


def make_frontend(name):
    return JaxFrontend() if name == "jax" else TorchFrontend()
