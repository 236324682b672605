"""Random programs as recipes, and recipes built into Python source.

A recipe is a list of nodes in order: inputs (a dtype, a shape, how to fill
it) and steps (an op kind from ops.KINDS, the ids of its operands, a seed).
A step's seed fixes every choice its op makes (axes, slice bounds, index
values, extra inputs it creates), so building a recipe again gives the same
program, and a recipe edited by the minimizer (a step dropped, an input
shrunk) still builds: each step makes its choices again for its operands'
new shapes.

Building runs each statement through the frontend's type inference as it is
added (jax.eval_shape for JAX, eager PyTorch on the real inputs), so a
statement the framework rejects is never part of a program.
"""
import dataclasses
import random

import numpy as np

FLOAT_DTYPES = ("f32", "f16", "bf16", "f64")
LOOSEST_FIRST = ("bf16", "f16", "f32", "f64")


def loosest_float(dtypes):
    """The least precise float dtype of `dtypes` (f64 where there is none):
    a float output is compared at the precision of the roughest float the
    program computed in, not only its own dtype (an f32 GELU cast to f64)."""
    return next((d for d in LOOSEST_FIRST if d in set(dtypes)), "f64")
INT_DTYPES = ("i32", "i64")
INT_BITS = {"i32": 32, "i64": 64}


@dataclasses.dataclass(frozen=True)
class Input:
    """A program argument: `fill` says what values it holds (see make_array)."""
    dtype: str
    shape: tuple
    fill: tuple
    seed: int


@dataclasses.dataclass(frozen=True)
class Step:
    kind: str
    operands: tuple  # node ids; -1 where an optional operand was not taken
    seed: int


@dataclasses.dataclass
class Recipe:
    frontend: str  # "jax" or "torch"
    x64: bool  # JAX's jax_enable_x64 (i64 and f64 exist only with it)
    nodes: list
    outputs: list  # node ids of steps

    def replace(self, **changes):
        return dataclasses.replace(self, **changes)

    def kinds(self):
        return sorted({n.kind for n in self.nodes if isinstance(n, Step)})

    def pruned(self):
        """Without the nodes no output depends on, ids renumbered."""
        live = set(self.outputs)
        for i in range(len(self.nodes) - 1, -1, -1):
            if i in live and isinstance(self.nodes[i], Step):
                live.update(o for o in self.nodes[i].operands if o >= 0)
        return self._keep(sorted(live))

    def _keep(self, kept_ids):
        new_id = {old: new for new, old in enumerate(kept_ids)}
        nodes = []
        for old in kept_ids:
            n = self.nodes[old]
            if isinstance(n, Step):
                n = dataclasses.replace(n, operands=tuple(new_id[o] if o >= 0 else o for o in n.operands))
            nodes.append(n)
        return self.replace(nodes=nodes, outputs=[new_id[o] for o in self.outputs if o in new_id])

    def with_uses_redirected(self, old_id, new_id):
        """Every reference to node `old_id` (operands and outputs) made to
        `new_id` instead; then pruned."""
        nodes = [dataclasses.replace(n, operands=tuple(new_id if o == old_id else o for o in n.operands))
                 if isinstance(n, Step) else n for n in self.nodes]
        outputs = list(dict.fromkeys(new_id if o == old_id else o for o in self.outputs))
        return self.replace(nodes=nodes, outputs=outputs).pruned()


@dataclasses.dataclass
class Value:
    """A named value of a program being built, with what the generator knows
    of it. `exact`: every correct implementation gives these bits (inputs,
    data movement, integer arithmetic), so ops whose result jumps with a
    rounding difference (comparisons, floor, argmax, float -> int) may read
    it. `special`: may hold NaN or infinity."""
    name: str
    dtype: str
    shape: tuple
    exact: bool = True
    special: bool = False

    @property
    def rank(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def is_float(self):
        return self.dtype in FLOAT_DTYPES

    @property
    def is_int(self):
        return self.dtype in INT_DTYPES

    @property
    def is_bool(self):
        return self.dtype == "bool"


class BuildError(Exception):
    """The frontend rejected a statement, or an op does not apply to its
    operands' types."""


# ---------------------------------------------------------------- input data

def numpy_dtype(dtype):
    if dtype == "bf16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype({"f32": np.float32, "f16": np.float16, "f64": np.float64, "i32": np.int32, "i64": np.int64,
                     "bool": np.bool_}[dtype])


def make_array(dtype, shape, fill, seed):
    """The values of an input. Floats are multiples of 1/8 (exact in every
    float dtype, so inputs mean the same everywhere); fills:
    ('float', special): NaN, +-inf and -0.0 at some places when special;
    ('int', lo, hi), ('nonzero', lo, hi), ('index', lo, hi): integers in
    [lo, hi] (nonzero: 0 replaced; index: the bounds, 0 and -1 favored);
    ('perm', axis, n, negative): per line along `axis` distinct positions
    in [0, n), some written as position - n when `negative`; ('bool',)."""
    rng = np.random.default_rng(seed)
    shape = tuple(shape)
    kind = fill[0]
    if kind == "float":
        values = np.round(rng.normal(0.0, 2.0, shape) * 8) / 8
        if fill[1] and values.size:
            specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0])
            where = rng.random(shape) < 0.2
            where.flat[rng.integers(values.size)] = True
            values = np.where(where, rng.choice(specials, shape), values)
    elif kind in ("int", "nonzero"):
        values = rng.integers(fill[1], fill[2] + 1, shape)
        if kind == "nonzero":
            values = np.where(values == 0, rng.choice([-1, 1], shape), values)
    elif kind == "index":
        lo, hi = fill[1], fill[2]
        values = rng.integers(lo, hi + 1, shape)
        edges = np.array([v for v in (lo, hi, 0, -1) if lo <= v <= hi])
        favored = rng.random(shape) < 0.4
        values = np.where(favored, rng.choice(edges, shape), values)
    elif kind == "perm":
        _, axis, n, negative = fill
        if 0 in shape:
            return np.zeros(shape, numpy_dtype(dtype))
        lines = np.moveaxis(np.zeros(shape, np.int64), axis, -1)
        flat = lines.reshape(-1, lines.shape[-1])
        for row in flat:
            row[:] = rng.permutation(n)[:len(row)]
        if negative:
            flat -= n * (rng.random(flat.shape) < 0.5)
        values = np.moveaxis(flat.reshape(lines.shape), -1, axis)
    elif kind == "bool":
        values = rng.random(shape) < 0.5
    else:
        raise ValueError(f"unknown fill {fill}")
    return np.asarray(values).astype(numpy_dtype(dtype), order="C")  # C order: 'perm' moves axes


# ------------------------------------------------------------------ building

@dataclasses.dataclass
class Program:
    """A built recipe: Python source and its inputs, ready to run."""
    recipe: Recipe
    source: str  # the function (JAX) or module class (PyTorch), after the frontend's header
    input_names: list
    inputs: list  # numpy arrays, in input_names' order
    output_names: list
    node_values: list  # Value per recipe node
    precision: str  # loosest_float of every value and input
    inexact: list  # names of the float values that rounding may change (not `exact`)

    @property
    def x64(self):
        return self.recipe.x64


class OpContext:
    """What an op's render function may use: its own random numbers, the
    frontend, and new inputs of its own (index tensors, partners)."""

    def __init__(self, builder, step):
        self.rng = random.Random(step.seed)
        self.frontend = builder.frontend.name
        self.x64 = builder.x64
        self._builder = builder
        self.new_inputs = []

    @property
    def jax(self):
        return self.frontend == "jax"

    def input(self, dtype, shape, fill):
        """A new argument of the program, owned by this step; its name."""
        node = Input(dtype, tuple(shape), fill, self.rng.getrandbits(32))
        value = self._builder.declare_input(node)
        self.new_inputs.append((node, value))
        return value.name

    def int_dtype(self):
        return self.rng.choice(INT_DTYPES if (self.x64 or not self.jax) else ("i32",))


class ProgramBuilder:
    """Adds nodes one at a time, each checked by the frontend."""

    def __init__(self, frontend, x64):
        self.frontend = frontend
        self.x64 = x64
        self.nodes = []
        self.values = []  # Value per node id
        self.input_nodes = []  # (name, Input), primary and those steps made
        self.lines = []
        self.step_count = 0
        self._state = frontend.new_state(x64)

    def declare_input(self, node):
        name = f"x{len(self.input_nodes)}"
        special = node.fill[0] == "float" and node.fill[1]
        value = Value(name, node.dtype, tuple(node.shape), exact=True, special=special)
        self.input_nodes.append((name, node))
        self._state.add_input(name, node)
        return value

    def add_input(self, node):
        self.nodes.append(node)
        self.values.append(self.declare_input(node))

    def add_step(self, step):
        """Adds `step`; raises BuildError (the builder unchanged) when its op
        does not apply or the frontend rejects it."""
        from ops import KINDS

        kind = KINDS[step.kind]
        operands = [self.values[i] if i >= 0 else None for i in step.operands]
        saved = (len(self.input_nodes), self._state.snapshot())
        ctx = OpContext(self, step)
        name = f"v{self.step_count}"
        try:
            if self.frontend.name not in kind.frontends:
                raise BuildError(f"{step.kind} is not a {self.frontend.name} op")
            lines = kind.render(ctx, *operands)
            if lines is None:
                raise BuildError(f"{step.kind} does not apply")
            if isinstance(lines, str):
                lines = [f"{{out}} = {lines}"]
            lines = [line.format(out=name) for line in lines]
            dtype, shape = self._state.run(lines, name)
        except BuildError:
            del self.input_nodes[saved[0]:]
            self._state.restore(saved[1])
            raise
        exact, special = kind.result_flags(operands + [v for _, v in ctx.new_inputs], dtype)
        self.nodes.append(step)
        self.values.append(Value(name, dtype, shape, exact=exact, special=special))
        self.lines.extend(lines)
        self.step_count += 1

    def finish(self, recipe):
        used_inputs = self.input_nodes
        names = [name for name, _ in used_inputs]
        arrays = [make_array(n.dtype, n.shape, n.fill, n.seed) for _, n in used_inputs]
        outputs = [self.values[i].name for i in recipe.outputs]
        source = self.frontend.program_source(names, self.lines, outputs)
        precision = loosest_float([v.dtype for v in self.values] + [n.dtype for _, n in used_inputs])
        inexact = [v.name for v in self.values if v.is_float and not v.exact and v.name.startswith("v")]
        return Program(recipe, source, names, arrays, outputs, list(self.values), precision, inexact)


def build(recipe, frontend):
    """The program of `recipe`; raises BuildError when a step no longer
    applies (after the minimizer changed a shape, say)."""
    if not recipe.outputs:
        raise BuildError("no outputs")
    builder = ProgramBuilder(frontend, recipe.x64)
    for node in recipe.nodes:
        if isinstance(node, Input):
            builder.add_input(node)
        else:
            builder.add_step(node)
    return builder.finish(recipe)
