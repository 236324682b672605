// Generated kernels (brt.fused_elementwise, row reductions) from the
// executable's PTX: loaded with cuModuleLoadData through the driver API the
// runtime hands out (the plugin does not link libcuda) and launched with the
// op's buffers, then its operands' and results' extents, as parameters.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "brt/provider_abi.h"
#include "kernels.h"
#include "library_plans.h"
#include "runtime.h"

namespace brt::cuda {
namespace {

using cuda::Check;  // the runtime's overload, next to the driver's

// The driver API that generated kernels need, through the runtime's entry
// points: the plugin does not link libcuda, so it loads where no driver is
// installed and reports no devices there.
struct DriverApi {
  decltype(&::cuGetErrorString) get_error_string = nullptr;
  decltype(&::cuModuleLoadData) module_load_data = nullptr;
  decltype(&::cuModuleGetFunction) module_get_function = nullptr;
  decltype(&::cuModuleUnload) module_unload = nullptr;
  decltype(&::cuLaunchKernel) launch_kernel = nullptr;
  bool complete() const {
    return get_error_string && module_load_data && module_get_function && module_unload &&
           launch_kernel;
  }
};

const DriverApi& Driver() {
  static const DriverApi api = [] {
    DriverApi a;
    auto get = [](const char* name, auto* fn) {
      void* p = nullptr;
      cudaDriverEntryPointQueryResult found{};
      if (cudaGetDriverEntryPointByVersion(name, &p, 12000, cudaEnableDefault, &found) ==
              cudaSuccess &&
          found == cudaDriverEntryPointSuccess)
        *fn = reinterpret_cast<std::remove_pointer_t<decltype(fn)>>(p);
    };
    get("cuGetErrorString", &a.get_error_string);
    get("cuModuleLoadData", &a.module_load_data);
    get("cuModuleGetFunction", &a.module_get_function);
    get("cuModuleUnload", &a.module_unload);
    get("cuLaunchKernel", &a.launch_kernel);
    return a;
  }();
  return api;
}

void Check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    const char* s = nullptr;
    if (Driver().get_error_string) Driver().get_error_string(r, &s);
    throw Error(BRT_ERROR_INTERNAL, std::string(what) + ": " + (s ? s : "CUDA driver error"));
  }
}

// A generated kernel from the executable: the module is loaded once per
// prepared op (once per Session for static shapes) and launched with the op's
// buffers as its parameters, in order.
class GeneratedKernel final : public Kernel {
 public:
  explicit GeneratedKernel(const BrtOpDesc* op) {
    if (std::strncmp(op->kernel_target, "ptx:", 4))
      throw Error(BRT_ERROR_UNSUPPORTED, std::string("kernel '") + op->kernel_name + "' targets '" +
                                             op->kernel_target + "', not PTX");
    // cuModuleLoadData wants NUL-terminated PTX text.
    std::string ptx(reinterpret_cast<const char*>(op->kernel_image), op->kernel_image_size);
    if (!Driver().complete())
      throw Error(BRT_ERROR_UNSUPPORTED,
                  "generated kernels need the CUDA driver API, which this driver does not offer");
    // The op's own checks come before the module loads: a bad block_size is
    // reported as such whatever the PTX is, as the host emulation does.
    const ops::GeneratedLaunch launch = ops::PlanGeneratedLaunch(OpInfo(*op));
    block_ = launch.block, grid_ = launch.grid;
    num_buffers_ = op->num_operands + op->num_results;
    // A kernel over symbolic shapes reads the concrete extents of this
    // specialization after its buffers; one with static extents declares no
    // such parameters, and cuLaunchKernel reads only the parameters a kernel
    // declares.
    auto append_extents = [&](const BrtTensorDesc* tensors, int32_t count) {
      for (int32_t t = 0; t < count; ++t)
        extents_.insert(extents_.end(), tensors[t].dims, tensors[t].dims + tensors[t].rank);
    };
    append_extents(op->operands, op->num_operands);
    append_extents(op->results, op->num_results);
    if (static_cast<size_t>(num_buffers_) + extents_.size() > kMaxParams)
      throw Error(BRT_ERROR_UNSUPPORTED, std::string("kernel '") + op->kernel_name + "' takes " +
                                             std::to_string(num_buffers_) + " buffers and " +
                                             std::to_string(extents_.size()) +
                                             " extents; at most " + std::to_string(kMaxParams) +
                                             " parameters in all are supported");
    Check(cudaFree(nullptr), "creating the primary context");  // makes it current
    Check(Driver().module_load_data(&module_, ptx.c_str()), "cuModuleLoadData");
    // A throwing constructor runs no destructor: the module goes here.
    if (const CUresult r = Driver().module_get_function(&function_, module_, op->kernel_name);
        r != CUDA_SUCCESS) {
      Driver().module_unload(module_);
      module_ = nullptr;
      Check(r, "cuModuleGetFunction");
    }
  }
  ~GeneratedKernel() override {
    if (module_) Driver().module_unload(module_);
  }
  void Run(void* const* b, Queue* q) override {
    // The kernel's parameters are the buffer pointers, then the extents, in
    // order. Local: the state is shared by concurrent request contexts.
    void* params[kMaxParams];
    for (int i = 0; i < num_buffers_; ++i) params[i] = const_cast<void**>(&b[i]);
    for (size_t i = 0; i < extents_.size(); ++i)
      params[num_buffers_ + i] = const_cast<long long*>(&extents_[i]);
    Check(
        Driver().launch_kernel(function_, grid_, 1, 1, block_, 1, 1, 0, q->stream, params, nullptr),
        "cuLaunchKernel");
  }

 private:
  CUmodule module_ = nullptr;
  CUfunction function_ = nullptr;
  static constexpr size_t kMaxParams = 256;
  unsigned block_ = 256, grid_ = 1;
  int num_buffers_ = 0;
  std::vector<long long> extents_;  // the kernel's 64-bit extent parameters
};

}  // namespace

Kernel* MakeGeneratedKernel(const BrtOpDesc* op) { return new GeneratedKernel(op); }

}  // namespace brt::cuda
