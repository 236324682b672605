// brt dialect -> .brtx through the runtime's ExecutableBuilder (which also
// plans memory: liveness, 256-byte aligned offsets, one arena per device).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "brt/builder.h"
#include "mlir/IR/BuiltinOps.h"

namespace brt::bridge {

// Constants larger than this many bytes become weight segments; smaller ones
// stay inline in their op.
inline constexpr size_t kInlineConstantBytes = 256;

struct SerializeOptions {
  std::string target = "cpu";
  std::string kernel_dump_dir;  // if set: each generated kernel as .cu and .ptx
};

// What the serializer did, for brt-compile --stats.
struct SerializeReport {
  int kernels = 0;  // generated CUDA kernels embedded
  size_t ptx_bytes = 0;
  // Donated arguments (state): how many results are written straight into
  // the donor's buffer, and how many through a copy after the last op
  // (the donor was still read after the new value was made).
  int state_in_place = 0;
  int state_copied = 0;
};

// Writes an executable to `path` with one function per (name, module): each
// module's func.func @main of brt ops, placed by brt-place. Equal
// weights are stored once. The kernels brt-generate-cuda-kernels attached to
// ops are embedded in the kernel table (the op names its kernel in the
// `kernel` attribute). On failure returns a message with the location.
Status SerializeModules(const std::vector<std::pair<std::string, mlir::ModuleOp>>& functions,
                        const std::string& producer, const std::string& path,
                        const SerializeOptions& options, BuildReport* report,
                        SerializeReport* serialized);

// The same executable's bytes, in memory (brt-compile --check-passes runs
// them after each pass).
Expected<std::vector<uint8_t>> SerializeModulesToMemory(
    const std::vector<std::pair<std::string, mlir::ModuleOp>>& functions,
    const std::string& producer, const SerializeOptions& options);

}  // namespace brt::bridge
