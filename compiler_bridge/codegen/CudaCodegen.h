// CUDA C for the kernels the compiler generates (--target=cuda), compiled to
// PTX with NVRTC (no GPU needed). Static extents are baked into the source;
// a kernel over symbolic shapes reads its extents from parameters after its
// buffers (every operand's, then every result's), which the CUDA provider
// passes for each concrete shape it prepares.
//
// The source also compiles as host C++ under tests/codegen/host_shim.h (one
// thread), which is how the tests check its numerics without a GPU.
#pragma once

#include <string>

#include "BrtDialect.h"
#include "ops/op_plans.h"

namespace brt::bridge {

// The generated row reduction's block: its shared array has this many
// entries and its tree reduction needs a power of two (providers check an
// executable's block_size against both at load: ops::PlanGeneratedLaunch).
constexpr int kMaxReduceBlock = static_cast<int>(ops::kGeneratedReduceMaxBlock);

struct CudaKernel {
  std::string name;    // the extern "C" entry point
  std::string source;  // CUDA C
  int block_size = 256;
};

// brt.fused_elementwise with f32/f16/bf16 result -> one grid-stride kernel.
// Returns false (no kernel) for configurations it does not generate.
bool GenerateFusedElementwise(FusedElementwiseOp op, const std::string& name, CudaKernel* out);
// reduce over trailing dimensions (rows) of an f32 tensor: one block per row.
bool GenerateRowReduce(ReduceOp op, const std::string& name, CudaKernel* out);

// Whether this brt-compile was built with NVRTC (a CUDA toolkit was found at
// configure time); without it --target=cuda is refused with kNoNvrtc.
bool NvrtcBuiltIn();
inline constexpr char kNoNvrtc[] =
    "this brt-compile was built without NVRTC (no CUDA toolkit at configure time), so it cannot "
    "generate CUDA kernels; rebuild brt where the CUDA toolkit is installed";

// NVRTC: CUDA C -> PTX for `arch` (e.g. "compute_80").
bool CompileToPtx(const CudaKernel& kernel, const std::string& arch, std::string* ptx,
                  std::string* error);

}  // namespace brt::bridge
