// A provider whose dependency (libbrt_test_missing_helper.so) cannot be found.
#include "brt/provider_abi.h"

extern "C" int brt_test_missing_helper();

extern "C" __attribute__((visibility("default"))) const BrtProviderApi* brt_provider_get(uint32_t) {
  return brt_test_missing_helper() == 42 ? nullptr : nullptr;
}
