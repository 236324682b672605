#include "OpKinds.h"

#include "brt/op_registry.h"

#include "llvm/ADT/StringMap.h"
#include "ops/scalar_ops.h"

namespace brt::bridge {
namespace {

using enum KindClass;
using namespace op_flags;
using ops::Domain;

constexpr KindInfo kKinds[] = {
#define BRT_ELEMENTWISE_KIND(cls, kind, domain, flags, float_expr) \
  {kind,                                                           \
   cls,                                                            \
   ((flags)&kStableHlo) != 0,                                      \
   ((flags)&kChlo) != 0,                                           \
   #float_expr,                                                    \
   ops::TakesFloats(Domain::domain)},
#define BRT_UNARY(e, kind, domain, flags, float_expr, int_expr) \
  BRT_ELEMENTWISE_KIND(kUnary, kind, domain, flags, float_expr)
#define BRT_BINARY(e, kind, domain, flags, float_expr, int_expr) \
  BRT_ELEMENTWISE_KIND(kBinary, kind, domain, flags, float_expr)
#define BRT_OP(name, kind, min_operands, max_operands, cls, flags, attrs) \
  {kind, cls, ((flags)&kStableHlo) != 0, ((flags)&kChlo) != 0, nullptr, false},
#include "brt/ops.def"
#undef BRT_ELEMENTWISE_KIND
};

}  // namespace

llvm::ArrayRef<KindInfo> AllKinds() { return kKinds; }

const KindInfo* FindKind(llvm::StringRef kind) {
  static const llvm::StringMap<const KindInfo*> index = [] {
    llvm::StringMap<const KindInfo*> m;
    for (const KindInfo& k : kKinds) m[k.kind] = &k;
    return m;
  }();
  auto it = index.find(kind);
  return it == index.end() ? nullptr : it->second;
}

}  // namespace brt::bridge
