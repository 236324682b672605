// The CPU provider's host pool entries (host_pool.cc).
#pragma once

#include "brt/provider_abi.h"

namespace brt::cpu {

void SetHostPool(BrtProviderApi& api);

// Called as each op of a request starts (provider.cc's RunKernel): workers
// waiting for the next request's work go back to oneTBB's tasks
// (host_pool.cc says why they wait in a task of brt's own).
void OpStarting();

}  // namespace brt::cpu
