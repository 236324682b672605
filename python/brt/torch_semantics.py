"""Keeps PyTorch's meaning where torch-mlir's StableHLO would change it.

torch-mlir lowers some ATen ops to StableHLO ops whose semantics differ at the
edges, and the result is a valid program that computes something else:

- Negative indices. StableHLO's gather clamps start indices into range and
  its scatter skips out-of-range updates, so `x[..., [-2], :]` reads
  position 0 and `y[idx] = v` with idx = -1 writes nothing. PyTorch's
  advanced indexing counts a negative index from the end: its index tensors
  are wrapped (idx < 0 ? idx + size : idx) before torch-mlir sees them.
  Indices still out of range then fail the run on the CPU (brt.compile_torch
  compiles with brt-compile --check-indices for --target=cpu), as PyTorch
  refuses them.
- `remainder` (`a % b`). PyTorch's result takes the divisor's sign (Python's
  modulo); StableHLO's remainder is C's fmod, which takes the dividend's.
  The fmod result is corrected where the signs differ.
- `fmod`, which torch-mlir writes as a - trunc(a / b) * b (NaN for an
  infinite b), becomes StableHLO's remainder, which is C's fmod.
- Float floor division (`a // b`, both of one float dtype or b a number),
  which torch-mlir writes as floor(a / b), is computed from fmod as PyTorch
  does (they differ where a / b rounds up to an integer, and for an infinite
  b: -2.875 // inf is -1); f16/bf16 round at each step, where PyTorch
  computes in f32.
- `roll` by a shift beyond the dim's size: torch-mlir slices at the shift
  as given, so the shift is taken modulo the size first.
- `trunc`, which torch-mlir writes so that trunc(-0.0) is +0, as ceil
  below zero and floor elsewhere.
- `relu`, which torch-mlir writes as maximum(x, 0) (+0 for -0), as
  where(x < 0, 0, x), which keeps -0 as PyTorch does (brt-compile's
  fuse-epilogues takes this form as the relu_select activation of a matmul
  or convolution).
- `x == x` of floats, which torch-mlir folds to true (false for NaN), is
  written as not (x != x).
- Comparisons of a float tensor with an int scalar, or of an integer tensor
  with a float scalar, are made in floats, as PyTorch promotes: torch-mlir
  folds the first with its result inverted when the tensor is a constant
  (`full_like(x, 2.5) < 0` is true) and crashes on the second.

It also writes a few ops torch-mlir refuses as ops of the same meaning that
it takes: the shift operators (`a << b`, `a >> b`, `1 << s`) as bitwise
shifts of tensors, `7 % x` as a remainder of tensors, `div` with
`rounding_mode=None` as true division, and a slice_scatter's open end
(INT64_MAX, from `y[:, 1:] = v`, on which torch-mlir runs out of memory)
as the dim's size.

The rewrite works on the ATen graph after decomposition, so ops that
decompose into these (`take_along_dim` into gather and remainder, `take`
into index) are covered too. `tests/python/test_torch_semantics.py` checks
each against eager PyTorch at its edges.
"""
import torch

aten = torch.ops.aten


def _indexed_dims(node):
    """The dims of `node`'s operand indexed by a tensor of its index list, for
    the ATen ops whose negative indices count from the end: advanced
    indexing (`x[idx]`, `x[idx] = v`). index_select, gather, scatter and
    embedding refuse negative indices in PyTorch; brt-compile
    --check-indices makes them fail the run here too."""
    if node.target in (aten.index.Tensor, aten.index_put.default, aten.index_put_.default):
        return [k for k, idx in enumerate(node.args[1]) if _is_integer_tensor(idx)]
    return []


class _Rewriter:
    """Inserts ATen nodes into an exported graph with the metadata torch-mlir's
    importer reads (each node's fake value)."""

    def __init__(self, graph):
        from torch._guards import detect_fake_mode

        self.graph = graph
        self.fake_mode = detect_fake_mode([n.meta["val"] for n in graph.nodes if "val" in n.meta])

    def call(self, target, *args, **kwargs):
        node = self.graph.call_function(target, args, kwargs)
        fake_args = [a.meta["val"] if isinstance(a, torch.fx.Node) else a for a in args]
        with self.fake_mode:
            node.meta["val"] = target(*fake_args, **kwargs)
        return node

    def size(self, tensor_node, dim):
        """The extent of `dim`: an int, or a sym_size node for a dynamic one."""
        extent = tensor_node.meta["val"].shape[dim]
        return extent if isinstance(extent, int) else self.call(aten.sym_size.int, tensor_node, dim)

    def wrap_negative(self, index, extent):
        """-extent <= index < 0 ? index + extent : index. An index below
        -extent stays as it is, so that brt.check_indices names the index
        the program gave (for a static extent)."""
        wrap = self.call(aten.lt.Scalar, index, 0)
        if isinstance(extent, int):
            wrap = self.call(aten.logical_and.default, wrap, self.call(aten.ge.Scalar, index, -extent))
        return self.call(aten.where.self, wrap, self.call(aten.add.Tensor, index, extent), index)

    def python_floor_divide(self, a, b):
        """PyTorch's float a // b (div_floor_floating): (a - fmod(a, b)) / b,
        less one where fmod's sign differs from b's, rounded to the nearest
        integer; a signed zero where that is 0; a / b where b is 0. (Float
        comparisons take float scalars: see _compare_as_floats.)"""
        if not isinstance(b, torch.fx.Node):
            b = self.call(aten.full_like.default, a, b)
        quotient = self.call(aten.div.Tensor, a, b)
        mod = self.call(aten.remainder.Tensor, a, b)  # C's fmod in StableHLO
        div = self.call(aten.div.Tensor, self.call(aten.sub.Tensor, a, mod), b)
        signs_differ = self.call(aten.ne.Tensor, self.call(aten.lt.Scalar, b, 0.0),
                                 self.call(aten.lt.Scalar, mod, 0.0))
        correct = self.call(aten.logical_and.default, self.call(aten.ne.Scalar, mod, 0.0), signs_differ)
        div = self.call(aten.where.self, correct, self.call(aten.sub.Tensor, div, 1.0), div)
        floor = self.call(aten.floor.default, div)
        round_up = self.call(aten.gt.Scalar, self.call(aten.sub.Tensor, div, floor), 0.5)
        floor = self.call(aten.where.self, round_up, self.call(aten.add.Tensor, floor, 1.0), floor)
        signed_zero = self.call(aten.mul.Tensor, quotient, 0.0)
        result = self.call(aten.where.self, self.call(aten.ne.Scalar, div, 0.0), floor, signed_zero)
        return self.call(aten.where.self, self.call(aten.eq.Scalar, b, 0.0), quotient, result)

    def python_remainder(self, fmod_result, divisor):
        """fmod's result moved to the divisor's sign: + divisor where it is
        nonzero and its sign differs from the divisor's."""
        r = fmod_result
        zero = 0.0 if r.meta["val"].dtype.is_floating_point else 0
        if isinstance(divisor, torch.fx.Node):
            signs_differ = self.call(aten.ne.Tensor, self.call(aten.lt.Scalar, r, zero),
                                     self.call(aten.lt.Scalar, divisor, 0.0 if divisor.meta["val"].dtype.is_floating_point else 0))
        else:
            signs_differ = self.call(aten.lt.Scalar if divisor > 0 else aten.gt.Scalar, r, zero)
        fix = self.call(aten.logical_and.default, self.call(aten.ne.Scalar, r, zero), signs_differ)
        return self.call(aten.where.self, fix, self.call(aten.add.Tensor, r, divisor), r)


# ATen ops torch-mlir refuses -> ops of the same meaning that it lowers.
_SAME_MEANING = {
    aten.__lshift__.Tensor: aten.bitwise_left_shift.Tensor,
    aten.__rshift__.Tensor: aten.bitwise_right_shift.Tensor,
    aten.__lshift__.Scalar: aten.bitwise_left_shift.Tensor,
    aten.__rshift__.Scalar: aten.bitwise_right_shift.Tensor,
    aten.bitwise_left_shift.Tensor_Scalar: aten.bitwise_left_shift.Tensor,
    aten.bitwise_right_shift.Tensor_Scalar: aten.bitwise_right_shift.Tensor,
    aten.bitwise_left_shift.Scalar_Tensor: aten.bitwise_left_shift.Tensor,
    aten.bitwise_right_shift.Scalar_Tensor: aten.bitwise_right_shift.Tensor,
}


def _rename(node, rewriter):
    """Points `node` at its _SAME_MEANING op; a scalar operand (the shift
    amount, or the shifted value of `1 << s`) becomes a tensor of the other's
    shape and dtype."""
    a, b = _scalars_as_tensors(node, rewriter)
    node.target = _SAME_MEANING[node.target]
    node.args = (a, b)


_COMPARE_SCALAR = (aten.lt.Scalar, aten.le.Scalar, aten.gt.Scalar, aten.ge.Scalar, aten.eq.Scalar, aten.ne.Scalar)


def _mixes_int_and_float(node):
    """A comparison of a float tensor with an int scalar, or of an integer
    tensor with a float scalar."""
    value = node.args[0].meta.get("val") if isinstance(node.args[0], torch.fx.Node) else None
    other = node.args[1]
    if not isinstance(value, torch.Tensor) or isinstance(other, bool) or value.dtype == torch.bool:
        return False
    return isinstance(other, int) if value.dtype.is_floating_point else isinstance(other, float)


def _compare_as_floats(node, rewriter):
    """Compares in floats, as PyTorch promotes: torch-mlir folds a float
    constant tensor against an int scalar with the result inverted
    (full_like(x, 2.5) < 0 is true), and crashes on an integer constant
    tensor against a float scalar."""
    tensor, other = node.args
    if not tensor.meta["val"].dtype.is_floating_point:
        with rewriter.graph.inserting_before(node):
            tensor = rewriter.call(aten._to_copy.default, tensor, dtype=torch.get_default_dtype())
    node.args = (tensor, float(other))


def _reduce_shifts(node):
    """roll's shifts modulo the sizes of the dims they roll (of all elements
    when it rolls the flattened tensor)."""
    value = node.args[0].meta["val"]
    shifts, dims = list(node.args[1]), list(node.args[2]) if len(node.args) > 2 else []
    sizes = [value.shape[d] for d in dims] if dims else [value.numel()]
    node.args = (node.args[0], [s % n if isinstance(n, int) and n > 0 else s for s, n in zip(shifts, sizes)],
                 *node.args[2:])


def _floor_divides_in_its_own_dtype(node):
    """A float floor division of a tensor by a tensor of its dtype or by a
    Python number: the form python_floor_divide computes. Mixed dtypes (an
    int tensor by 2.5, a scalar dividend) keep torch-mlir's floor(a / b)."""
    a, b = node.args
    out = node.meta["val"].dtype
    if not out.is_floating_point or not isinstance(a, torch.fx.Node) or a.meta["val"].dtype != out:
        return False
    return (isinstance(b, (int, float)) and not isinstance(b, bool)) or \
        (isinstance(b, torch.fx.Node) and b.meta["val"].dtype == out)


def _slice_scatter_args(node):
    """[self, src, dim, start, end, step] of a slice_scatter, defaults filled in."""
    names = ("self", "src", "dim", "start", "end", "step")
    given = dict(zip(names, node.args), **node.kwargs)
    return [given.get(name, default) for name, default in zip(names, (None, None, 0, None, None, 1))]


def _ends_past_its_dim(node):
    """A slice_scatter whose end lies beyond its dim's static size (an open
    end is INT64_MAX): torch-mlir sizes something by the end as given and
    fails with std::bad_alloc after tens of seconds."""
    x, _, dim, _, end, _ = _slice_scatter_args(node)
    extent = x.meta["val"].shape[dim]
    return isinstance(extent, int) and (end is None or end > extent)


def _is_float_tensor(node):
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return isinstance(val, torch.Tensor) and val.dtype.is_floating_point


def _is_scalar_remainder(node):
    """A number % a tensor of the result's dtype (else torch-mlir's refusal stays)."""
    return node.target == aten.remainder.Scalar_Tensor and node.meta["val"].dtype == node.args[1].meta["val"].dtype


def _scalars_as_tensors(node, rewriter):
    """`node`'s two operands, a Python number among them made a tensor shaped
    and typed like the other operand (inserted before `node`)."""
    a, b = node.args
    with rewriter.graph.inserting_before(node):
        if not isinstance(a, torch.fx.Node):
            a = rewriter.call(aten.full_like.default, b, a)
        if not isinstance(b, torch.fx.Node):
            b = rewriter.call(aten.full_like.default, a, b)
    return a, b


def _is_integer_tensor(node):
    val = node.meta.get("val") if isinstance(node, torch.fx.Node) else None
    return isinstance(val, torch.Tensor) and not val.dtype.is_floating_point and val.dtype != torch.bool


def keep_pytorch_meaning(program):
    """Rewrites `program` (a decomposed torch.export.ExportedProgram) in place
    so that torch-mlir's lowering computes what PyTorch computes; returns the
    number of nodes rewritten."""
    graph = program.graph_module.graph
    rewriter = _Rewriter(graph)
    rewritten = 0
    for node in list(graph.nodes):
        if node.op != "call_function":
            continue
        dims = _indexed_dims(node)
        if dims:
            indices = list(node.args[1])
            with graph.inserting_before(node):
                for k in dims:
                    indices[k] = rewriter.wrap_negative(indices[k], rewriter.size(node.args[0], k))
            node.args = (node.args[0], indices, *node.args[2:])
            rewritten += 1
        elif node.target in _SAME_MEANING:
            _rename(node, rewriter)
            rewritten += 1
        elif node.target == aten.div.Tensor_mode and node.kwargs.get("rounding_mode") is None:
            node.target = aten.div.Tensor
            node.kwargs = {}
            rewritten += 1
        elif (node.target == aten.div.Tensor_mode and node.kwargs.get("rounding_mode") == "floor"
              and _floor_divides_in_its_own_dtype(node)):
            with graph.inserting_before(node):
                node.replace_all_uses_with(rewriter.python_floor_divide(*node.args))
            graph.erase_node(node)
            rewritten += 1
        elif node.target == aten.eq.Tensor and node.args[0] is node.args[1] and _is_float_tensor(node.args[0]):
            # torch-mlir folds x == x to true, which NaN is not; x != x it keeps.
            with graph.inserting_before(node):
                same = rewriter.call(aten.logical_not.default, rewriter.call(aten.ne.Tensor, *node.args))
            node.replace_all_uses_with(same)
            graph.erase_node(node)
            rewritten += 1
        elif node.target in _COMPARE_SCALAR and _mixes_int_and_float(node):
            _compare_as_floats(node, rewriter)
            rewritten += 1
        elif node.target == aten.trunc.default and _is_float_tensor(node.args[0]):
            # torch-mlir's trunc, sign(x) * floor(|x|) with a sign of 0 at
            # zero, turns -0 into +0; ceil below zero, floor elsewhere keeps it.
            x = node.args[0]
            with graph.inserting_before(node):
                kept = rewriter.call(aten.where.self, rewriter.call(aten.lt.Scalar, x, 0.0),
                                     rewriter.call(aten.ceil.default, x), rewriter.call(aten.floor.default, x))
            node.replace_all_uses_with(kept)
            graph.erase_node(node)
            rewritten += 1
        elif node.target == aten.relu.default and _is_float_tensor(node.args[0]):
            # torch-mlir's relu, maximum(x, 0), turns -0 into +0; PyTorch's
            # keeps x where it is not below 0 (-0 and NaN). brt-compile fuses
            # this form into a matmul or convolution as it does maximum.
            x = node.args[0]
            with graph.inserting_before(node):
                kept = rewriter.call(aten.where.self, rewriter.call(aten.lt.Scalar, x, 0.0),
                                     rewriter.call(aten.full_like.default, x, 0.0), x)
            node.replace_all_uses_with(kept)
            graph.erase_node(node)
            rewritten += 1
        elif node.target in (aten.fmod.Tensor, aten.fmod.Scalar):
            node.target = aten.remainder.Tensor if node.target == aten.fmod.Tensor else aten.remainder.Scalar
            rewritten += 1
        elif node.target == aten.slice_scatter.default and _ends_past_its_dim(node):
            args = _slice_scatter_args(node)
            args[4] = args[0].meta["val"].shape[args[2]]
            node.args, node.kwargs = tuple(args), {}
            rewritten += 1
        elif node.target == aten.roll.default:
            _reduce_shifts(node)
            rewritten += 1
        elif node.target in (aten.remainder.Tensor, aten.remainder.Scalar) or _is_scalar_remainder(node):
            if node.target == aten.remainder.Scalar_Tensor:  # 7 % x, which torch-mlir refuses
                node.target = aten.remainder.Tensor
                node.args = _scalars_as_tensors(node, rewriter)
            users = list(node.users)
            with graph.inserting_before(node.next):
                result = rewriter.python_remainder(node, node.args[1])
            for user in users:
                user.replace_input_with(node, result)
            rewritten += 1
    graph.lint()
    program.graph_module.recompile()
    return rewritten
