"""brt's Python package.

Works without the native extension: `export_stablehlo` and `compile` turn a
JAX function into StableHLO text and into a .brtx executable (calling the
`brt-compile` tool).
"""
from .compiler import CompileError, compile, export_stablehlo, find_tool

__all__ = ["CompileError", "compile", "export_stablehlo", "find_tool"]
