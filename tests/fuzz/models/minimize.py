"""Shrinks a failing recipe while it still fails the same way: one output,
steps dropped (their uses given one of their operands, or the step made an
input of its type), input shapes made smaller (one dim, or every dim of one
size at once, so that dims a matmul or concat ties together shrink
together), inputs without NaN and infinity, narrower integers.

Each candidate is built again from its recipe (steps make their choices
again for the new shapes) and run through brt alone."""
import dataclasses
import time

from cases import same_failure
from program import BuildError, Input, Step, build


class Minimizer:
    def __init__(self, frontend, pipeline, budget_seconds=120.0, max_attempts=400):
        self.frontend = frontend
        self.pipeline = pipeline
        self.deadline = time.monotonic() + budget_seconds
        self.attempts_left = max_attempts
        self.attempts = 0

    def fails(self, recipe, failure):
        """Whether `recipe` builds and fails as `failure` (a
        cases.same_failure key) when run alone."""
        if self.attempts_left <= 0 or time.monotonic() > self.deadline:
            return False
        self.attempts_left -= 1
        self.attempts += 1
        try:
            program = build(recipe, self.frontend)
        except BuildError:
            return False
        result = self.pipeline.run([program])[0]
        return same_failure(result.status, result.reason) == failure

    def minimize(self, recipe, result):
        """The smallest recipe found that still fails as `result` (a
        runner.Result) says."""
        failure = same_failure(result.status, result.reason)
        for output in recipe.outputs:
            candidate = recipe.replace(outputs=[output]).pruned()
            if len(recipe.outputs) > 1 and self.fails(candidate, failure):
                recipe = candidate
                break
        changed = True
        while changed and self.attempts_left > 0 and time.monotonic() < self.deadline:
            changed = False
            for shrink in (self._drop_steps, self._shrink_shapes, self._simplify_values):
                smaller = shrink(recipe, failure)
                if smaller is not None:
                    recipe, changed = smaller, True
        return recipe

    def _first_that_fails(self, candidates, failure):
        for candidate in candidates:
            if self.fails(candidate, failure):
                return candidate
        return None

    def _drop_steps(self, recipe, failure):
        """Each step, last first: its uses given one of its operands, or the
        step replaced by an input of its type."""
        improved = None
        i = len(recipe.nodes) - 1
        while i >= 0:
            node = recipe.nodes[i] if i < len(recipe.nodes) else None
            if isinstance(node, Step):
                try:
                    value = build(recipe, self.frontend).node_values[i]
                except BuildError:
                    return improved
                candidates = [recipe.with_uses_redirected(i, o) for o in node.operands if o >= 0]
                candidates += [self._as_input(recipe, i, value, special) for special in (False, True)]
                smaller = self._first_that_fails(candidates, failure)
                if smaller is not None:
                    recipe = improved = smaller
                    i = min(i, len(recipe.nodes))
            i -= 1
        return improved

    @staticmethod
    def _as_input(recipe, i, value, special):
        if value.is_float:
            fill = ("float", special)
        elif value.is_bool:
            fill = ("bool",)
        else:
            fill = ("int", -20, 20)
        nodes = list(recipe.nodes)
        nodes[i] = Input(value.dtype, value.shape, fill, recipe.nodes[i].seed)
        outputs = [o for o in recipe.outputs if o != i]
        if not outputs:
            return recipe  # an input as the only output: not a program
        return recipe.replace(nodes=nodes, outputs=outputs).pruned()

    def _shrink_shapes(self, recipe, failure):
        improved = None
        for i, node in enumerate(recipe.nodes):
            if not isinstance(node, Input):
                continue
            for d, n in enumerate(node.shape):
                for smaller in sorted({1, n // 2, n - 1} - {n}):
                    if smaller < 0 or (smaller == 0 and n > 1):
                        continue
                    candidate = self._with_input(recipe, i, shape=node.shape[:d] + (smaller,) + node.shape[d + 1:])
                    if self.fails(candidate, failure):
                        recipe = improved = candidate
                        node = recipe.nodes[i]
                        break
            if node.shape and self.fails(self._with_input(recipe, i, shape=node.shape[1:]), failure):
                recipe = improved = self._with_input(recipe, i, shape=node.shape[1:])
        # Every dim of one size at once, in every input.
        sizes = sorted({n for node in recipe.nodes if isinstance(node, Input) for n in node.shape if n > 1},
                       reverse=True)
        for n in sizes:
            for smaller in (1, 2, n // 2, n - 1):
                if not 0 < smaller < n:
                    continue
                candidate = recipe.replace(nodes=[
                    dataclasses.replace(node, shape=tuple(smaller if d == n else d for d in node.shape))
                    if isinstance(node, Input) else node for node in recipe.nodes])
                if self.fails(candidate, failure):
                    recipe = improved = candidate
                    break
        return improved

    def _simplify_values(self, recipe, failure):
        improved = None
        for i, node in enumerate(recipe.nodes):
            simpler = None
            if isinstance(node, Input) and node.fill[0] == "float" and node.fill[1]:
                simpler = ("float", False)
            elif isinstance(node, Input) and node.fill[0] == "int" and node.fill[2] > 20:
                simpler = ("int", -20, 20)
            if simpler is not None:
                candidate = self._with_input(recipe, i, fill=simpler)
                if self.fails(candidate, failure):
                    recipe = improved = candidate
        return improved

    @staticmethod
    def _with_input(recipe, i, **changes):
        nodes = list(recipe.nodes)
        nodes[i] = dataclasses.replace(nodes[i], **changes)
        return recipe.replace(nodes=nodes)
