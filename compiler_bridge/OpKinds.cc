#include "OpKinds.h"

#include "llvm/ADT/StringMap.h"

namespace brt::bridge {
namespace {

using enum KindClass;

constexpr KindInfo kKinds[] = {
    {"abs", kUnary, true, true},
    {"ceil", kUnary, true, true},
    {"cosine", kUnary, true, true},
    {"erf", kUnary, false, true},
    {"exponential", kUnary, true, true},
    {"exponential_minus_one", kUnary, true, true},
    {"floor", kUnary, true, true},
    {"log", kUnary, true, true},
    {"log_plus_one", kUnary, true, true},
    {"logistic", kUnary, true, true},
    {"negate", kUnary, true, true},
    {"not", kUnary, true, true},
    {"round_nearest_even", kUnary, true, true},
    {"rsqrt", kUnary, true, true},
    {"sign", kUnary, true, true},
    {"sine", kUnary, true, true},
    {"sqrt", kUnary, true, true},
    {"tanh", kUnary, true, true},
    {"add", kBinary, true, true},
    {"and", kBinary, true, true},
    {"divide", kBinary, true, true},
    {"maximum", kBinary, true, true},
    {"minimum", kBinary, true, true},
    {"multiply", kBinary, true, true},
    {"or", kBinary, true, true},
    {"power", kBinary, true, true},
    {"remainder", kBinary, true, true},
    {"subtract", kBinary, true, true},
    {"compare", kCompare, true, true},
    {"select", kTernary, true, true},
    {"clamp", kTernary, true, true},
    {"convert", kConvert, true, true},
    {"broadcast_in_dim", kOther, true, true},
    {"concatenate", kOther, true, true},
    {"constant", kOther, true, true},
    {"convolution", kOther, true, true},
    {"dot_general", kOther, true, true},
    {"dynamic_slice", kOther, true, true},
    {"dynamic_update_slice", kOther, true, true},
    {"gather", kOther, true, true},
    {"iota", kOther, true, true},
    {"pad", kOther, true, true},
    {"reduce", kOther, true, true},
    {"reduce_window", kOther, true, true},
    {"reshape", kOther, true, true},
    {"reverse", kOther, true, true},
    {"scatter", kOther, true, true},
    {"slice", kOther, true, true},
    {"transpose", kOther, true, true},
    {"brt.fused_elementwise", kOther, false, true},
    {"brt.matmul", kOther, false, true},
    {"brt.conv", kOther, false, true},
    {"brt.softmax", kOther, false, true},
    {"brt.layer_norm", kOther, false, true},
    {"brt.copy", kOther, false, true},
};

}  // namespace

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
