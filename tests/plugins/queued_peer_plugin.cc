// A second provider on the stand-in device of queued_device_plugin.cc, as the
// nccl provider is to the cuda one: it claims the CUDA device kind, runs one
// op kind the first does not (test.peer_scale: y = 2x, f32) on work queues
// of its own that defer all work until synchronize, and has no memory,
// copies or events (the core stages bindings through the first provider of
// the kind). Work on the first provider's queues and on these is ordered only
// by the host waiting, so a core that copies inputs in or outputs back
// without waiting for the other provider's queue reads stale data.
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "brt/provider_abi.h"
#include "common/provider_glue.h"

namespace {

using Work = std::function<void()>;

struct Queue {
  std::vector<Work> pending;
};

int32_t Prepare(const void*, const BrtOpDesc* op, void** state, BrtErrorBuffer*) {
  int64_t n = 1;
  for (int i = 0; i < op->results[0].rank; ++i) n *= op->results[0].dims[i];
  *state = reinterpret_cast<void*>(static_cast<intptr_t>(n));
  return BRT_OK;
}

void Release(void*) {}

int32_t Run(void* state, void* const* b, void* queue, BrtErrorBuffer* e) {
  if (!queue) return brt::ops::ReportAbiError(e, BRT_ERROR_INVALID_ARGUMENT, "no queue");
  const auto n = static_cast<int64_t>(reinterpret_cast<intptr_t>(state));
  auto* in = static_cast<const float*>(b[0]);
  auto* out = static_cast<float*>(b[1]);
  static_cast<Queue*>(queue)->pending.push_back([=] {
    for (int64_t i = 0; i < n; ++i) out[i] = 2.0f * in[i];
  });
  return BRT_OK;
}

int32_t ResolveKernel(const BrtOpSignature* sig, BrtKernel* k, BrtErrorBuffer* e) {
  if (std::strcmp(sig->kind, "test.peer_scale") != 0)
    return brt::ops::ReportAbiError(e, BRT_ERROR_UNSUPPORTED,
                                    std::string("no kernel for ") + sig->kind);
  *k = {};
  k->struct_size = sizeof(BrtKernel);
  k->prepare = Prepare;
  k->release_state = Release;
  k->run = Run;
  return BRT_OK;
}

int32_t CreateQueue(int32_t, void** q, BrtErrorBuffer*) {
  *q = new Queue;
  return BRT_OK;
}

void DestroyQueue(void* q) { delete static_cast<Queue*>(q); }

int32_t SynchronizeQueue(void* q, BrtErrorBuffer*) {
  auto* queue = static_cast<Queue*>(q);
  for (const Work& w : queue->pending) w();
  queue->pending.clear();
  return BRT_OK;
}

int32_t DeviceCount() { return 1; }
int32_t KernelCount() { return 1; }
int32_t KernelInfo(int32_t i, BrtKernelInfo* info) {
  if (i != 0) return BRT_ERROR_INVALID_ARGUMENT;
  *info = {"test.peer_scale", BRT_DEVICE_CUDA, "f32"};
  return BRT_OK;
}

BrtProviderApi MakeApi() {
  BrtProviderApi a = brt::ops::ProviderApiHeader("queued_test_peer", BRT_DEVICE_CUDA);
  a.device_count = &DeviceCount;
  BRT_SET_ENTRIES(a, BRT_QUEUE_ENTRIES);
  BRT_SET_ENTRIES(a, BRT_KERNEL_TABLE_ENTRIES);
  return a;
}

}  // namespace

BRT_DEFINE_PROVIDER_ENTRY_POINT(MakeApi)
