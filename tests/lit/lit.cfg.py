# lit configuration for brt-opt / brt-compile FileCheck tests.
import os

import lit.formats

config.name = "brt"
config.test_format = lit.formats.ShTest(True)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
bin_dir = os.environ.get("BRT_BIN_DIR", os.path.join(os.path.dirname(__file__), "..", "..", "build", "bin"))
tools_dir = os.environ.get("LLVM_TOOLS_DIR", "/usr/lib/llvm-22/bin")
config.environment["PATH"] = os.pathsep.join([bin_dir, tools_dir, os.environ.get("PATH", "")])
# Outputs go to the build tree (ctest sets BRT_LIT_OUTPUT_DIR), never into the sources.
config.test_exec_root = os.environ.get("BRT_LIT_OUTPUT_DIR", os.path.join(bin_dir, "..", "lit"))
# Kernel generation needs NVRTC (ctest says whether brt-compile has it).
if os.environ.get("BRT_HAVE_NVRTC") == "1":
    config.available_features.add("nvrtc")
# The place pass asks the cuda and nccl provider plugins which kinds run on CUDA.
if os.environ.get("BRT_HAVE_CUDA_PROVIDERS") == "1":
    config.available_features.add("cuda-providers")
