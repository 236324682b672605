"""Keeps PyTorch's meaning where torch-mlir's StableHLO would change it.

torch-mlir lowers some ATen ops to StableHLO ops whose semantics differ at the
edges, and the result is a valid program that computes something else:

- Negative indices. StableHLO's gather clamps start indices into range and
  its scatter skips out-of-range updates, so `x[..., [-2], :]` reads
  position 0 and `y[idx] = v` with idx = -1 writes nothing. PyTorch's
  advanced indexing counts a negative index from the end: its index tensors
  are wrapped (idx < 0 ? idx + size : idx) before torch-mlir sees them.
  Indices still out of range then fail the run (brt.compile_torch compiles
  with brt-compile --check-indices), as PyTorch refuses them.
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
        """-extent <= index < 0 ? index + extent : index. An index below
        -extent stays as it is, so that brt.check_indices names the index
        the program gave (for a static extent)."""
        wrap = self.call(aten.lt.Scalar, index, 0)
        if isinstance(extent, int):
            wrap = self.call(aten.logical_and.default, wrap, self.call(aten.ge.Scalar, index, -extent))
        return self.call(aten.where.self, wrap, self.call(aten.add.Tensor, index, extent), index)

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
