// The nccl provider's kernels: StableHLO collectives on CUDA device buffers
// (provider.cc) and the overlapped all_gather+matmul / matmul+reduce_scatter
// (overlap.cc). A kernel is an immutable plan made by Prepare; what a run
// needs beyond it (streams, events, scratch) belongs to the request
// context's instance, so contexts run concurrently.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/provider_glue.h"

namespace brt::nccl {

using namespace brt::ops;  // NOLINT: the op view shared with other providers

// NCCL lets one thread at a time issue work on a communicator, and a rank's
// calls on it must come in one order: request contexts of a Session share
// its communicators, so each kernel's whole enqueue (a collective, a
// ncclGroupStart..End group, an overlapped op's ring steps) holds `use`
// (RunKernel, Kernel::LockComm). Across ranks the order is still the
// caller's to keep (docs/distributed.md).
struct Comm {
  ncclComm_t comm = nullptr;
  int rank = 0, size = 1;
  mutable std::mutex use;
};

void CheckNccl(ncclResult_t rc, const std::string& what);
void CheckCuda(cudaError_t rc, const std::string& what);
ncclDataType_t NcclType(int32_t dtype);

// A request context's own part of a kernel.
struct Resources {
  virtual ~Resources() = default;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  virtual void Prepare(const OpInfo& op, const BrtOpDesc& desc) = 0;
  // Made once per request context; nullptr when the kernel needs nothing.
  virtual std::unique_ptr<Resources> NewResources() const { return nullptr; }
  // Enqueues the op on `stream` (the request's nccl queue).
  virtual void Run(void* const* buffers, cudaStream_t stream, Resources* own) const = 0;
  void Attach(const BrtOpDesc& desc) { comm_ = static_cast<const Comm*>(desc.comm); }
  // Held across Run: no other context enqueues on this communicator meanwhile
  // (an empty lock for a kernel without one).
  std::unique_lock<std::mutex> LockComm() const {
    return comm_ ? std::unique_lock<std::mutex>(comm_->use) : std::unique_lock<std::mutex>();
  }

 protected:
  const Comm* comm_ = nullptr;
};

using KernelDef = KernelRow<std::unique_ptr<Kernel> (*)()>;

template <typename K>
std::unique_ptr<Kernel> Make() {
  return std::make_unique<K>();
}

void RegisterOverlapped(std::vector<KernelDef>& defs);

}  // namespace brt::nccl
