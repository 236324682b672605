// A provider built against a future plugin ABI: the core must refuse it.
#include "brt/provider_abi.h"

extern "C" __attribute__((visibility("default"))) const BrtProviderApi* brt_provider_get(uint32_t) {
  static BrtProviderApi api = {};
  api.struct_size = sizeof(BrtProviderApi);
  api.abi_version = 99;
  api.name = "future";
  return &api;
}
