#include "brt/op_registry.h"

namespace brt {
namespace {

using namespace op_flags;
constexpr int ResultCount(unsigned flags) {
  return flags & kResultPerOperand ? -1 : flags & kTwoResults ? 2 : 1;
}
// The registry's classes matter to the compiler, not the loader.
constexpr OpSchema kSchemas[] = {
#define BRT_UNARY(e, kind, domain, flags, ...) {kind, flags | kInPlace, 1, 1, 1, {}},
#define BRT_BINARY(e, kind, domain, flags, ...) {kind, flags | kInPlace, 2, 2, 1, {}},
#define BRT_OP(kind, min_operands, max_operands, cls, flags, ...) \
  {kind, flags, min_operands, max_operands, ResultCount(flags), {__VA_ARGS__}},
#include "brt/ops.def"
};

}  // namespace

const OpSchema* FindOpSchema(std::string_view kind) {
  for (const OpSchema& s : kSchemas)
    if (kind == s.kind) return &s;
  return nullptr;
}

}  // namespace brt
