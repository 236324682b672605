// The CPU provider's host pool entries (host_pool.cc).
#pragma once

#include "brt/provider_abi.h"

namespace brt::cpu {

void SetHostPool(BrtProviderApi& api);

// Called as each op of a request starts and ends (provider.cc's RunKernel):
// in a pool that lingers, workers wait for the next op's work in a task of
// brt's own from an op's end to the next op's start (host_pool.cc says why).
void OpStarting();
void OpEnded() noexcept;

}  // namespace brt::cpu
