// No exception crosses the plugin ABI: whatever a provider's code throws
// (providers/common/abi_guard.h, used by the CPU and CUDA providers for
// prepare, run and their queue calls) becomes a code and a message.
#include "common/abi_guard.h"

#include <gtest/gtest.h>

#include <string>

namespace brt::ops {
namespace {

template <typename F>
std::pair<int32_t, std::string> Guarded(F&& f, int32_t other = BRT_ERROR_INTERNAL) {
  BrtErrorBuffer error{};
  const int32_t code = AbiGuard(&error, std::forward<F>(f), other);
  return {code, error.message};
}

TEST(AbiGuard, EveryExceptionBecomesACodeAndAMessage) {
  EXPECT_EQ(Guarded([] {}).first, BRT_OK);
  EXPECT_EQ(Guarded([] { throw KernelError("gather: index 9 out of range"); }),
            std::make_pair(int32_t{BRT_ERROR_INVALID_ARGUMENT},
                           std::string("gather: index 9 out of range")));
  EXPECT_EQ(Guarded([] { throw UnsupportedError("conv: no bf16 primitive"); }),
            std::make_pair(int32_t{BRT_ERROR_UNSUPPORTED}, std::string("conv: no bf16 primitive")));
  EXPECT_EQ(
      Guarded([] { throw AbiError(BRT_ERROR_RESOURCE_EXHAUSTED, "cudaMalloc: out of memory"); }),
      std::make_pair(int32_t{BRT_ERROR_RESOURCE_EXHAUSTED},
                     std::string("cudaMalloc: out of memory")));
  // No C++ library text such as "std::bad_alloc" reaches the user.
  EXPECT_EQ(
      Guarded([] { throw std::bad_alloc(); }),
      std::make_pair(int32_t{BRT_ERROR_RESOURCE_EXHAUSTED}, std::string("out of host memory")));
  EXPECT_EQ(Guarded([] { throw std::runtime_error("oneDNN: could not execute"); }).first,
            BRT_ERROR_INTERNAL);
  EXPECT_EQ(Guarded([] { throw std::out_of_range("attr"); }, BRT_ERROR_INVALID_ARGUMENT).first,
            BRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(Guarded([] { throw 42; }), std::make_pair(int32_t{BRT_ERROR_INTERNAL},
                                                      std::string("a non-standard C++ exception")));
}

TEST(AbiGuard, LongMessagesAreCutNotOverrun) {
  const std::string long_message(4 * sizeof(BrtErrorBuffer{}.message), 'x');
  auto [code, message] = Guarded([&] { throw KernelError(long_message); });
  EXPECT_EQ(code, BRT_ERROR_INVALID_ARGUMENT);
  EXPECT_EQ(message, long_message.substr(0, sizeof(BrtErrorBuffer{}.message) - 1));
}

}  // namespace
}  // namespace brt::ops
