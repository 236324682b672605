// The one place where a provider's C++ exceptions become plugin-ABI errors:
// every entry point a provider hands the core (prepare, create_instance, run,
// queue and memory calls) runs its body through AbiGuard, so no exception
// ever crosses the C boundary and every failure reaches the caller as a code
// with a message.
#pragma once

#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>

#include "brt/provider_abi.h"
#include "ops/op_info.h"

namespace brt::ops {

// An error that carries its ABI code (a CUDA call that failed, say).
struct AbiError : std::runtime_error {
  int32_t code;
  AbiError(int32_t c, const std::string& m) : std::runtime_error(m), code(c) {}
};

inline int32_t ReportAbiError(BrtErrorBuffer* error, int32_t code, const std::string& message) {
  if (error) std::snprintf(error->message, sizeof(error->message), "%s", message.c_str());
  return code;
}

// Runs f(); returns BRT_OK, or the code for what it threw with its message in
// `error`: AbiError -> its code, UnsupportedError -> BRT_ERROR_UNSUPPORTED, KernelError ->
// BRT_ERROR_INVALID_ARGUMENT, std::bad_alloc -> BRT_ERROR_RESOURCE_EXHAUSTED,
// any other std::exception -> `other` (BRT_ERROR_INTERNAL unless the caller
// knows better), anything else -> BRT_ERROR_INTERNAL.
template <typename F>
int32_t AbiGuard(BrtErrorBuffer* error, F&& f, int32_t other = BRT_ERROR_INTERNAL) {
  try {
    f();
    return BRT_OK;
  } catch (const AbiError& e) {
    return ReportAbiError(error, e.code, e.what());
  } catch (const UnsupportedError& e) {
    return ReportAbiError(error, BRT_ERROR_UNSUPPORTED, e.what());
  } catch (const KernelError& e) {
    return ReportAbiError(error, BRT_ERROR_INVALID_ARGUMENT, e.what());
  } catch (const std::bad_alloc&) {
    return ReportAbiError(error, BRT_ERROR_RESOURCE_EXHAUSTED, "out of host memory");
  } catch (const std::exception& e) {
    return ReportAbiError(error, other, e.what());
  } catch (...) {
    return ReportAbiError(error, BRT_ERROR_INTERNAL, "a non-standard C++ exception");
  }
}

}  // namespace brt::ops
