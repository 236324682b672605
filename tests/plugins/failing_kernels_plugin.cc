// A CPU provider whose kernels fail on purpose, for the error codes that
// must survive from a kernel to the caller. Its ops, each f32 -> f32 of one
// shape:
//   test.out_of_memory_in_prepare: prepare runs out of host memory
//     (std::bad_alloc under the providers' AbiGuard, as a real kernel's would);
//   test.fail_in_run: prepare succeeds; run returns the BRT_ERROR_* code in
//     its int attribute "code".
#include <cstdint>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "brt/provider_abi.h"
#include "common/provider_glue.h"

namespace {

using brt::ops::AbiGuard;
using brt::ops::OpInfo;
using brt::ops::ReportAbiError;

int32_t PrepareOutOfMemory(const void*, const BrtOpDesc*, void**, BrtErrorBuffer* error) {
  return AbiGuard(error, [] { throw std::bad_alloc(); });
}

int32_t PrepareFailInRun(const void*, const BrtOpDesc* desc, void** state, BrtErrorBuffer* error) {
  return AbiGuard(error, [&] {
    int64_t code = 0;
    brt::ops::AttrDecoder::Read(OpInfo(*desc), "code", &code);
    *state = reinterpret_cast<void*>(static_cast<intptr_t>(code));
  });
}

void ReleaseState(void*) {}

int32_t RunFail(void* state, void* const*, void*, BrtErrorBuffer* error) {
  const auto code = static_cast<int32_t>(reinterpret_cast<intptr_t>(state));
  return ReportAbiError(error, code, "the test kernel fails with code " + std::to_string(code));
}

struct Row {
  const char* kind;
  decltype(BrtKernel::prepare) prepare;
};
constexpr Row kRows[] = {{"test.out_of_memory_in_prepare", &PrepareOutOfMemory},
                         {"test.fail_in_run", &PrepareFailInRun}};

int32_t ResolveKernel(const BrtOpSignature* sig, BrtKernel* kernel, BrtErrorBuffer* error) {
  for (const Row& row : kRows)
    if (std::strcmp(sig->kind, row.kind) == 0) {
      *kernel = BrtKernel{sizeof(BrtKernel), nullptr, row.prepare, &ReleaseState,
                          nullptr,           nullptr, &RunFail,    0};
      return BRT_OK;
    }
  return ReportAbiError(error, BRT_ERROR_UNSUPPORTED, std::string("no kernel for ") + sig->kind);
}

int32_t KernelCount() { return static_cast<int32_t>(std::size(kRows)); }

int32_t KernelInfo(int32_t index, BrtKernelInfo* info) {
  if (index < 0 || index >= KernelCount()) return BRT_ERROR_INVALID_ARGUMENT;
  *info = BrtKernelInfo{kRows[index].kind, BRT_DEVICE_CPU, "f32"};
  return BRT_OK;
}

int32_t DeviceCount() { return 1; }

BrtProviderApi MakeApi() {
  BrtProviderApi a = brt::ops::ProviderApiHeader("failing_kernels_test", BRT_DEVICE_CPU);
  a.device_count = &DeviceCount;
  a.allocate = &brt::ops::HostAllocate;
  a.deallocate = &brt::ops::HostDeallocate;
  a.copy = &brt::ops::HostCopy;
  BRT_SET_ENTRIES(a, BRT_KERNEL_TABLE_ENTRIES);
  return a;
}

}  // namespace

BRT_DEFINE_PROVIDER_ENTRY_POINT(MakeApi)
