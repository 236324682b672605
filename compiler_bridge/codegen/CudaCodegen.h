// CUDA C for the kernels the compiler generates (--target=cuda), compiled to
// PTX with NVRTC (no GPU needed). Shapes are static, so sizes and strides are
// baked into the source.
//
// The source also compiles as host C++ under tests/codegen/host_shim.h (one
// thread), which is how the tests check its numerics without a GPU.
#pragma once

#include <string>

#include "BrtDialect.h"

namespace brt::bridge {

struct CudaKernel {
  std::string name;    // the extern "C" entry point
  std::string source;  // CUDA C
  int block_size = 256;
};

// brt.fused_elementwise with f32/f16/bf16 result -> one grid-stride kernel.
// Returns false (no kernel) for configurations it does not generate.
bool GenerateFusedElementwise(KernelOp op, const std::string& name, CudaKernel* out);
// reduce over trailing dimensions (rows) of an f32 tensor: one block per row.
bool GenerateRowReduce(KernelOp op, const std::string& name, CudaKernel* out);

// NVRTC: CUDA C -> PTX for `arch` (e.g. "compute_80").
bool CompileToPtx(const CudaKernel& kernel, const std::string& arch, std::string* ptx,
                  std::string* error);

}  // namespace brt::bridge
