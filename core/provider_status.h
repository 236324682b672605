// The one mapping from a provider's BRT_ERROR_* code to a StatusCode: every
// place the core turns a provider call's result into a Status goes through
// it, so the cause (out of memory, a bad argument, an unsupported case)
// reaches the caller instead of one catch-all code.
#pragma once

#include <cstdint>
#include <string>

#include "brt/provider_abi.h"
#include "brt/status.h"

namespace brt::core {

// The Status for a provider call that returned `code` (not BRT_OK); `message`
// says what was being done, in the provider's words too. A code this runtime
// does not know (from a newer plugin) is kInternal and is named.
inline Status ProviderError(int32_t code, std::string message) {
  switch (code) {
    case BRT_ERROR_INVALID_ARGUMENT:
      return Status(StatusCode::kInvalidArgument, std::move(message));
    case BRT_ERROR_UNSUPPORTED:
      return Status(StatusCode::kUnsupported, std::move(message));
    case BRT_ERROR_RESOURCE_EXHAUSTED:
      return Status(StatusCode::kResourceExhausted, std::move(message));
    case BRT_ERROR_INTERNAL:
      return Status(StatusCode::kInternal, std::move(message));
  }
  return Status(StatusCode::kInternal,
                std::move(message) + " (provider error code " + std::to_string(code) + ")");
}

}  // namespace brt::core
