// The CPU provider's plugin entry point, kernel registry and shared helpers.

#include "dnnl_kernel.h"
#include "host_pool.h"
#include "kernel.h"

namespace brt::cpu {

// --- registry and ABI ------------------------------------------------------------

namespace {

const std::vector<KernelDef>& Registry() {
  static const std::vector<KernelDef> defs = [] {
    std::vector<KernelDef> d;
    RegisterComplex(d);  // first: abs of a complex operand is keyed by it
    RegisterElementwise(d);
    RegisterDataMovement(d);
    RegisterIndexing(d);
    RegisterReductions(d);
    RegisterDnnl(d);
    RegisterReferenceConvolution(d);  // after oneDNN's: the types it lacks
    RegisterAttention(d);
    RegisterRandom(d);
    RegisterSort(d);
    RegisterReducePrecision(d);
    RegisterLinalg(d);
    RegisterFft(d);
    return d;
  }();
  return defs;
}

int32_t Prepare(const void* kernel_data, const BrtOpDesc* desc, void** state,
                BrtErrorBuffer* error) {
  const KernelDef& def = *static_cast<const KernelDef*>(kernel_data);
  return AbiGuard(
      error,
      [&] {
        KeepingDnnlStatus([&] {
          OpInfo op(*desc);
          std::unique_ptr<CpuKernel> k = def.make();
          k->Prepare(op);
          *state = k.release();
        });
      },
      BRT_ERROR_INVALID_ARGUMENT);
}

void ReleaseState(void* state) { delete static_cast<CpuKernel*>(state); }

// A null instance (no per-request scratch needed) makes the core run the state.
int32_t CreateInstance(void* state, void** instance, BrtErrorBuffer* error) {
  return AbiGuard(error, [&] {
    KeepingDnnlStatus([&] {
      *instance =
          static_cast<Runnable*>(static_cast<CpuKernel*>(state)->CreateInstance().release());
    });
  });
}

void ReleaseInstance(void* instance) { delete static_cast<Runnable*>(instance); }

// A kernel that fails at run time (oneDNN's execute reporting an error, say)
// throws; the guard turns that into the op's error for the caller.
int32_t RunKernel(void* kernel, void* const* buffers, void*, BrtErrorBuffer* error) {
  OpStarting();
  const int32_t code = AbiGuard(error, [&] { static_cast<Runnable*>(kernel)->Run(buffers); });
  OpEnded();
  return code;
}

int32_t DeviceCount() { return 1; }

const KernelTable<KernelDef> kTable = {
    &Registry,
    {&Prepare, &ReleaseState, &CreateInstance, &ReleaseInstance, &RunKernel},
    BRT_DEVICE_CPU,
    "cpu"};

// Host work runs in order on the calling thread, inside the Session's host
// pool: no queues, no graphs.
BrtProviderApi MakeApi() {
  BrtProviderApi a = ProviderApiHeader("cpu", BRT_DEVICE_CPU);
  a.device_count = &DeviceCount;
  a.allocate = &HostAllocate;
  a.deallocate = &HostDeallocate;
  a.copy = &HostCopy;
  SetKernelTable<kTable>(a);
  SetHostPool(a);
  return a;
}

}  // namespace
}  // namespace brt::cpu

BRT_DEFINE_PROVIDER_ENTRY_POINT(brt::cpu::MakeApi)
