"""PyTorch module -> StableHLO through torch.export and torch-mlir's FX
importer -> .brtx; and `backend`, a torch.compile backend."""
from .check import refuse_device, removing_on_error
from .compiler import _name_arguments, compile_stablehlo
from .torch_semantics import keep_pytorch_meaning


def _torch_mlir():
    try:
        from torch_mlir import fx, ir
        from torch_mlir.extras.fx_decomp_util import get_decomposition_table
    except ImportError as e:
        raise ImportError(
            "brt.compile_torch needs the torch-mlir package (pip install torch-mlir; "
            "scripts/bootstrap.sh installs it with the torch it was tested with)") from e
    return fx, ir, get_decomposition_table


def export_torch_stablehlo(module, *example_args, dynamic_shapes=None):
    """StableHLO of `module(*example_args)` in the generic op form brt-compile
    reads. The module is exported as it is (call `.eval()` first for
    inference: dropout and batch-norm statistics follow its mode). Its
    parameters and buffers become constants, which brt-compile stores as
    weights; the arguments keep the names of `forward`'s parameters."""
    import torch

    fx, ir, get_decomposition_table = _torch_mlir()
    program = torch.export.export(module, tuple(example_args), dynamic_shapes=dynamic_shapes)
    names = [
        spec.arg.name for spec in program.graph_signature.input_specs
        if spec.kind == torch.export.graph_signature.InputKind.USER_INPUT
    ]
    # Functional first (in-place ops and their aliasing gone), so that each
    # view can become a reshape of the same value.
    program = program.run_decompositions({})
    _views_as_reshapes(program)
    program = program.run_decompositions(get_decomposition_table())
    keep_pytorch_meaning(program)
    # torch-mlir freezes buffers from the state dict, where torch.export
    # leaves out the non-persistent ones (BERT's position_ids).
    for spec in program.graph_signature.input_specs:
        if spec.kind == torch.export.graph_signature.InputKind.BUFFER and not spec.persistent:
            program.state_dict[spec.target] = program.constants[spec.target]
    mlir_module = fx.export_and_import(program, output_type="stablehlo", decomposition_table={})
    dims, dim_bounds = _dim_names(example_args, dynamic_shapes) if dynamic_shapes is not None else (None, None)
    _name_arguments(mlir_module, names, ir, dims, dim_bounds)
    return mlir_module.operation.get_asm(print_generic_op_form=True, large_elements_limit=None, enable_debug_info=True)


def _dim_names(example_args, dynamic_shapes):
    """Per example argument, the names of the torch.export Dims its dimensions
    take ("" where static) and their (smallest, largest) sizes (0 where
    unbounded), from `dynamic_shapes` given per argument in order (a dict
    {dim: Dim} or a sequence of Dim/None each)."""
    specs = list(dynamic_shapes.values()) if isinstance(dynamic_shapes, dict) else list(dynamic_shapes)
    names, bounds = [], []
    for arg, spec in zip(example_args, specs + [None] * (len(example_args) - len(specs))):
        per_dim, least, most = [""] * arg.dim(), [0] * arg.dim(), [0] * arg.dim()
        items = spec.items() if isinstance(spec, dict) else enumerate(spec or ())
        for d, dim in items:
            if dim is not None:
                per_dim[d] = getattr(dim, "__name__", "")
                lo, hi = getattr(dim, "min", None), getattr(dim, "max", None)
                least[d] = int(lo) if isinstance(lo, int) and 0 < lo < 2**62 else 0
                most[d] = int(hi) if isinstance(hi, int) and 0 < hi < 2**62 else 0
        names.append(per_dim)
        bounds.append((least, most))
    return names, bounds


def _views_as_reshapes(program):
    """Makes each `view` of a functional exported graph a `reshape`, in
    place. A view was traced on the strides of eager kernels; a decomposition
    can give its operand other strides (scaled_dot_product_attention's
    math, under GPT-2's `x.view(-1, x.size(-1))`), where the view fails with
    "Cannot view a tensor with shape ... and strides ...". A reshape copies
    there instead; with no in-place op left, the value is the same, and
    torch-mlir lowers both alike."""
    import torch

    for node in program.graph.nodes:
        if node.op == "call_function" and node.target == torch.ops.aten.view.default:
            node.target = torch.ops.aten.reshape.default
    program.graph_module.recompile()


def compile_torch(module, *example_args, target="cpu", path=None, stats=False, specializations=(), check=False,
                  check_seed=0, dynamic_shapes=None):
    """Compiles a torch.nn.Module for arguments shaped like `example_args`
    (tensors); returns the path of the .brtx (a temporary file unless `path`
    is given).

    `specializations`: further tuples of example arguments, other shapes of
    the same inputs (batch 1 and 32, sequence 16 and 128). The executable
    then has one function per shape, named after the shapes ("main_1x16",
    "main_32x128"), sharing the weights, stored once; `Session.run` picks the
    function whose shapes the arrays have.

    `check=True` then runs the module (eagerly, without gradients) and each
    of the executable's functions on the CPU on the same random inputs (from
    `check_seed`) and raises brt.CheckError naming the first output that
    differs, by how much, and the seed.

    `dynamic_shapes`: torch.export's, per argument (`{0: Dim("b"), 1:
    Dim("s")}`): one function for every size of those dimensions, its
    symbols named after the Dims (docs/compiler.md, symbolic shapes)."""
    if check:
        refuse_device(target, "brt.compile_torch(check=True)")
    if dynamic_shapes is not None and specializations:
        raise ValueError("give either dynamic_shapes (one function for every size) or specializations, not both")
    shapes = [tuple(example_args)] + [tuple(s) for s in specializations]
    if len(shapes) == 1:
        texts = export_torch_stablehlo(module, *example_args, dynamic_shapes=dynamic_shapes)
    else:
        texts = {_function_name(args): export_torch_stablehlo(module, *args) for args in shapes}
        if len(texts) != len(shapes):
            raise ValueError("two of the example argument tuples have the same shapes")
    # The index check runs on the host; on CUDA, indices out of range are
    # clamped or dropped as StableHLO defines (docs/compiler.md).
    made_path = path is None
    path = compile_stablehlo(texts, target=target, path=path, stats=stats, check_indices=target == "cpu")
    if check:
        names = texts if isinstance(texts, dict) else ["main"]
        removing_on_error(path, made_path, lambda: [_check_torch(module, args, path, name, check_seed)
                                                     for name, args in zip(names, shapes)])
    return path


def _check_torch(module, example_args, path, function, seed):
    import torch
    import torch.utils._pytree as pytree

    from .check import check_session

    def run_torch(inputs):
        with torch.no_grad():
            outputs = module(*[_from_numpy(i) for i in inputs])
        return [_to_numpy(o) for o in pytree.tree_leaves(outputs)]

    examples = [_to_numpy(a) for a in example_args]
    check_session(path, function, run_torch, examples, seed, f"brt.compile_torch(check=True), function '{function}'")


def _to_numpy(tensor):
    """A tensor as a NumPy array; bfloat16 (which NumPy lacks) as ml_dtypes'."""
    import torch

    tensor = tensor.detach().cpu()
    if tensor.dtype == torch.bfloat16:
        import ml_dtypes

        return tensor.view(torch.int16).numpy().view(ml_dtypes.bfloat16)
    return tensor.numpy()


def _from_numpy(array):
    import torch

    if array.dtype.name == "bfloat16":
        return torch.from_numpy(array.view("int16")).view(torch.bfloat16)
    return torch.from_numpy(array)


def _function_name(args):
    """main_<shape>_<shape>...: the distinct input shapes in order."""
    names = []
    for a in args:
        shape = "x".join(str(d) for d in a.shape) or "scalar"
        if shape not in names:
            names.append(shape)
    return "main_" + "_".join(names)


def backend(graph_module, example_inputs):
    """A torch.compile backend: torch.compile(model, backend="brt") (the name
    is registered when brt is imported after torch, or through the package's
    entry point), or backend=brt.torch_backend. Each graph TorchDynamo
    captures is compiled by brt for its example inputs' shapes and runs on
    the CPU; a graph brt cannot compile runs eagerly, with a one-line warning
    naming what it lacks. For inference: gradients do not flow through brt."""
    import os
    import re
    import warnings

    import torch
    import torch.utils._pytree as pytree

    from . import _brt

    try:
        with torch.no_grad():
            reference = graph_module(*example_inputs)
        outputs, spec = pytree.tree_flatten(reference)
        if not all(isinstance(o, torch.Tensor) for o in outputs):
            raise ValueError("the graph returns something other than tensors")
        path = compile_torch(graph_module, *example_inputs)
        try:
            session = _brt.Session(path)  # the mapping outlives the file
        finally:
            os.unlink(path)
    except Exception as e:  # noqa: BLE001: whatever stops brt, eager still runs the graph
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        unsupported = re.search(r"unsupported op '[^']+'.*", first)
        warnings.warn(f"brt: running a torch.compile graph eagerly: {unsupported[0] if unsupported else first}",
                      stacklevel=2)
        return graph_module.forward
    devices = [o.device for o in outputs]

    def run(*args):
        arrays = [a.detach().cpu().numpy() for a in args]
        results = session.run(*arrays)
        return pytree.tree_unflatten([torch.from_numpy(r).to(d) for r, d in zip(results, devices)], spec)

    return run


def register_backend():
    """Registers `backend` with TorchDynamo as "brt" (once)."""
    import torch._dynamo

    if "brt" not in torch._dynamo.list_backends(exclude_tags=()):
        torch._dynamo.register_backend(name="brt")(backend)
