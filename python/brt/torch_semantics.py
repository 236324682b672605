"""Keeps PyTorch's meaning where torch-mlir's StableHLO would change it.

torch-mlir lowers some ATen ops to StableHLO ops whose semantics differ at the
edges, and the result is a valid program that computes something else:

- Indices. StableHLO's gather clamps start indices into range and its
  scatter skips out-of-range updates, so `x[..., [-2], :]` reads position 0
  and `y[idx] = v` with idx = -1 writes nothing. PyTorch counts a negative
  index from the end. Every index operand of the ATen ops below is wrapped
  (idx < 0 ? idx + size : idx) before torch-mlir sees it.
- `remainder` (`a % b`). PyTorch's result takes the divisor's sign (Python's
  modulo); StableHLO's remainder is C's fmod, which takes the dividend's.
  The fmod result is corrected where the signs differ.

It also writes a few ops torch-mlir refuses as ops of the same meaning that
it takes: the shift operators (`a << b`, `a >> b`) as bitwise shifts, and
`div` with `rounding_mode=None` as true division.

The rewrite works on the ATen graph after decomposition, so ops that
decompose into these (`take_along_dim` into gather and remainder, `take`
into index) are covered too. `tests/python/test_torch_semantics.py` checks
each against eager PyTorch at its edges.
"""
import torch

aten = torch.ops.aten


def _index_operands(node):
    """(argument position, list position or None, indexed dim) of each index
    tensor `node` reads, for the ATen ops whose negative indices count from
    the end. (embedding is not here: PyTorch refuses its negative indices.)"""
    target = node.target
    if target in (aten.index.Tensor, aten.index_put.default, aten.index_put_.default):
        return [(1, k, k) for k, idx in enumerate(node.args[1]) if idx is not None]
    if target in (aten.index_select.default, aten.gather.default, aten.scatter.src, aten.scatter.value,
                  aten.scatter_add.default, aten.scatter_reduce.two):
        return [(2, None, node.args[1])]
    return []


class _Rewriter:
    """Inserts ATen nodes into an exported graph with the metadata torch-mlir's
    importer reads (each node's fake value)."""

    def __init__(self, graph):
        from torch._guards import detect_fake_mode

        self.graph = graph
        self.fake_mode = detect_fake_mode([n.meta["val"] for n in graph.nodes if "val" in n.meta])

    def call(self, target, *args):
        node = self.graph.call_function(target, args)
        fake_args = [a.meta["val"] if isinstance(a, torch.fx.Node) else a for a in args]
        with self.fake_mode:
            node.meta["val"] = target(*fake_args)
        return node

    def size(self, tensor_node, dim):
        """The extent of `dim`: an int, or a sym_size node for a dynamic one."""
        extent = tensor_node.meta["val"].shape[dim]
        return extent if isinstance(extent, int) else self.call(aten.sym_size.int, tensor_node, dim)

    def wrap_negative(self, index, extent):
        """index < 0 ? index + extent : index."""
        negative = self.call(aten.lt.Scalar, index, 0)
        return self.call(aten.where.self, negative, self.call(aten.add.Tensor, index, extent), index)

    def python_remainder(self, fmod_result, divisor):
        """fmod's result moved to the divisor's sign: + divisor where it is
        nonzero and its sign differs from the divisor's."""
        r = fmod_result
        if isinstance(divisor, torch.fx.Node):
            signs_differ = self.call(aten.ne.Tensor, self.call(aten.lt.Scalar, r, 0),
                                     self.call(aten.lt.Scalar, divisor, 0))
        else:
            signs_differ = self.call(aten.lt.Scalar if divisor > 0 else aten.gt.Scalar, r, 0)
        fix = self.call(aten.logical_and.default, self.call(aten.ne.Scalar, r, 0), signs_differ)
        return self.call(aten.where.self, fix, self.call(aten.add.Tensor, r, divisor), r)


# ATen ops torch-mlir refuses -> ops of the same meaning that it lowers.
_SAME_MEANING = {
    aten.__lshift__.Tensor: aten.bitwise_left_shift.Tensor,
    aten.__rshift__.Tensor: aten.bitwise_right_shift.Tensor,
    aten.__lshift__.Scalar: aten.bitwise_left_shift.Tensor,
    aten.__rshift__.Scalar: aten.bitwise_right_shift.Tensor,
    aten.bitwise_left_shift.Tensor_Scalar: aten.bitwise_left_shift.Tensor,
    aten.bitwise_right_shift.Tensor_Scalar: aten.bitwise_right_shift.Tensor,
}


def _rename(node, rewriter):
    """Points `node` at its _SAME_MEANING op; a scalar shift amount becomes a
    tensor of the shifted operand's shape and dtype."""
    a, b = node.args
    if not isinstance(b, torch.fx.Node):
        with rewriter.graph.inserting_before(node):
            b = rewriter.call(aten.full_like.default, a, b)
    node.target = _SAME_MEANING[node.target]
    node.args = (a, b)


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
        operands = _index_operands(node)
        if operands:
            indexed = node.args[0]
            rank = indexed.meta["val"].dim()
            args = list(node.args)
            for position, list_position, dim in operands:
                index = args[position] if list_position is None else args[position][list_position]
                if not _is_integer_tensor(index):
                    continue
                with graph.inserting_before(node):
                    wrapped = rewriter.wrap_negative(index, rewriter.size(indexed, dim % max(rank, 1)))
                if list_position is None:
                    args[position] = wrapped
                else:
                    args[position] = list(args[position])
                    args[position][list_position] = wrapped
            node.args = tuple(args)
            rewritten += 1
        elif node.target in _SAME_MEANING:
            _rename(node, rewriter)
            rewritten += 1
        elif node.target == aten.div.Tensor_mode and node.kwargs.get("rounding_mode") is None:
            node.target = aten.div.Tensor
            node.kwargs = {}
            rewritten += 1
        elif node.target in (aten.remainder.Tensor, aten.remainder.Scalar):
            users = list(node.users)
            with graph.inserting_before(node.next):
                result = rewriter.python_remainder(node, node.args[1])
            for user in users:
                user.replace_input_with(node, result)
            rewritten += 1
    graph.lint()
    program.graph_module.recompile()
    return rewritten
