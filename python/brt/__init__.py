"""brt's Python package.

`brt.Session`, `brt.RequestContext`, `brt.load_safetensors` and
`brt.save_safetensors` come from the native extension (built with the
project; on PYTHONPATH as build/python). `export_stablehlo` and
`compile` work without it: they turn a JAX function into StableHLO text and
into a .brtx executable (calling the `brt-compile` tool);
`export_torch_stablehlo` and `compile_torch` do the same for a PyTorch
module (through torch-mlir).
"""
from . import distributed
from .check import CheckError
from .compiler import CompileError, compile, compile_stablehlo, export_stablehlo, find_tool
from .torch_frontend import backend as torch_backend
from .torch_frontend import compile_torch, export_torch_stablehlo

try:
    from ._brt import RequestContext, Session, load_safetensors, save_safetensors
except ImportError:  # the pure-Python part still works
    pass

# torch.compile(model, backend="brt") once torch is imported too (importing
# torch here would cost seconds for those who never use it).
if "torch" in __import__("sys").modules:
    from .torch_frontend import register_backend

    register_backend()

__all__ = ["CheckError", "CompileError", "distributed", "RequestContext", "Session", "compile", "compile_stablehlo", "compile_torch",
           "export_stablehlo", "export_torch_stablehlo", "find_tool", "load_safetensors", "save_safetensors",
           "torch_backend"]
