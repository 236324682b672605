"""Random recipes from a seed: a few inputs of random dtypes and shapes
(size-1 and size-0 dims, scalars, NaN and infinity in some), then steps of
random op kinds on values already made, each checked by the frontend as it
is added."""
import random

from ops import KINDS
from program import BuildError, Input, ProgramBuilder, Recipe, Step

MAX_ELEMENTS = 512


def _random_dtype(rng, frontend, x64):
    choices = [("f32", 40), ("f16", 7), ("bf16", 7), ("i32", 16), ("bool", 8)]
    if x64 or frontend == "torch":
        choices += [("i64", 10), ("f64", 3)]
    names, weights = zip(*choices)
    return rng.choices(names, weights)[0]


def _random_shape(rng):
    rank = rng.choices(range(5), [8, 22, 32, 26, 12])[0]
    shape = [0 if rng.random() < 0.04 else rng.choice([1, 1, 2, 3, 4, 5, 6, 8, 16]) for _ in range(rank)]
    while shape and max(1, _size(shape)) > MAX_ELEMENTS:
        shape[rng.randrange(rank)] = rng.choice([1, 2, 3])
    return tuple(shape)


def _size(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def random_input(rng, frontend, x64):
    dtype = _random_dtype(rng, frontend, x64)
    if dtype in ("f32", "f16", "bf16", "f64"):
        fill = ("float", rng.random() < 0.25)
    elif dtype == "bool":
        fill = ("bool",)
    else:
        fill = ("int", -20, 20) if rng.random() < 0.8 else ("int", -3000, 3000)
    return Input(dtype, _random_shape(rng), fill, rng.getrandbits(32))


def _choose_operand(rng, candidates):
    """Later values more often, so programs grow chains rather than fans."""
    weights = [1 + i for i in range(len(candidates))]
    return rng.choices(candidates, weights)[0]


def pick_operands(rng, kind, values):
    """Node ids for a step of `kind`, or None where no value fits."""
    firsts = [i for i, v in enumerate(values) if kind.takes(v)]
    if not firsts:
        return None
    first = _choose_operand(rng, firsts)
    operands = [first]
    for accepts in kind.partners:
        fitting = [i for i, v in enumerate(values) if accepts(values[first], v)]
        operands.append(rng.choice(fitting) if fitting and rng.random() < 0.5 else -1)
    return tuple(operands)


def _outputs(rng, steps, nodes):
    """The last step, other steps nothing reads (up to 3 more), sometimes
    one that is read."""
    read = {o for n in nodes if isinstance(n, Step) for o in n.operands}
    sinks = [i for i in steps[:-1] if i not in read]
    outputs = [steps[-1]] + rng.sample(sinks, min(3, len(sinks)))
    inner = [i for i in steps if i not in outputs]
    if inner and rng.random() < 0.1:
        outputs.append(rng.choice(inner))
    return sorted(outputs)


def generate(seed, frontend, max_steps=10):
    """The recipe of program `seed` for `frontend` (a frontends.*Frontend)."""
    rng = random.Random(seed)
    x64 = frontend.name == "jax" and rng.random() < 0.5
    builder = ProgramBuilder(frontend, x64)
    for _ in range(rng.choice([1, 1, 2, 2, 3])):
        builder.add_input(random_input(rng, frontend.name, x64))
    kinds = [k for k in KINDS.values() if frontend.name in k.frontends]
    weights = [k.weight for k in kinds]
    wanted = rng.randint(1, max_steps)
    for _ in range(wanted * 10):
        if builder.step_count >= wanted:
            break
        kind = rng.choices(kinds, weights)[0]
        operands = pick_operands(rng, kind, builder.values)
        if operands is None:
            continue
        try:
            builder.add_step(Step(kind.name, operands, rng.getrandbits(32)))
        except BuildError:
            continue
    steps = [i for i, n in enumerate(builder.nodes) if isinstance(n, Step)]
    if not steps:
        raise BuildError(f"program {seed}: no step applied")
    return Recipe(frontend.name, x64, list(builder.nodes), _outputs(rng, steps, builder.nodes)).pruned()
