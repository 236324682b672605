#include "brt/op_registry.h"

namespace brt {
namespace {

using namespace op_flags;
constexpr int ResultCount(unsigned flags) {
  return flags & kAnyResults         ? -2
         : flags & kResultPerOperand ? -1
         : flags & kFourResults      ? 4
         : flags & kThreeResults     ? 3
         : flags & kTwoResults       ? 2
                                     : 1;
}
// Each BRT_OP row's attributes, as k<Name>Attrs.
#define BRT_REQUIRED(name, type) {#name, attr_types::type, true},
#define BRT_OPTIONAL(name, type) {#name, attr_types::type, false},
#define BRT_DEFAULT(name, type, value) {#name, attr_types::type, false},
#define BRT_OP(name, kind, min_operands, max_operands, cls, flags, attrs) \
  constexpr AttrSchema k##name##Attrs[] = {attrs{}};
#include "brt/ops.def"
constexpr AttrSchema kNoAttrs[] = {{}};

// The registry's classes matter to the compiler, not the loader.
constexpr OpSchema kSchemas[] = {
#define BRT_UNARY(e, kind, domain, flags, ...) {kind, flags | kInPlace, 1, 1, 1, kNoAttrs},
#define BRT_BINARY(e, kind, domain, flags, ...) {kind, flags | kInPlace, 2, 2, 1, kNoAttrs},
#define BRT_OP(name, kind, min_operands, max_operands, cls, flags, attrs) \
  {kind, flags, min_operands, max_operands, ResultCount(flags), k##name##Attrs},
#include "brt/ops.def"
};

}  // namespace

const OpSchema* FindOpSchema(std::string_view kind) {
  for (const OpSchema& s : kSchemas)
    if (kind == s.kind) return &s;
  return nullptr;
}

}  // namespace brt
