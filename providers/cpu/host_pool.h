// The CPU provider's host pool entries (host_pool.cc).
#pragma once

#include "brt/provider_abi.h"

namespace brt::cpu {

void SetHostPool(BrtProviderApi& api);

}  // namespace brt::cpu
