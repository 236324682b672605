#include "brt/op_registry.h"

namespace brt {
namespace {

// The registry's flags and classes matter to the compiler, not the loader.
constexpr OpSchema kSchemas[] = {
#define BRT_UNARY(e, kind, ...) {kind, 1, 1, 1, {}},
#define BRT_BINARY(e, kind, ...) {kind, 2, 2, 1, {}},
#define BRT_OP(kind, min_operands, max_operands, cls, flags, ...) \
  {kind, min_operands, max_operands, 1, {__VA_ARGS__}},
#include "brt/ops.def"
};

}  // namespace

const OpSchema* FindOpSchema(std::string_view kind) {
  for (const OpSchema& s : kSchemas)
    if (kind == s.kind) return &s;
  return nullptr;
}

}  // namespace brt
