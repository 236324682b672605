// Typed attributes of the op registry's kinds (brt/ops.def): one struct per
// BRT_OP row, <Name>Attrs, with a field per attribute entry and the kind it
// belongs to. The builder writes ops from them (FunctionBuilder::Op(attrs,
// ...)), providers read them (Decode in the repository's ops/op_attrs.h), so
// an attribute renamed in ops.def breaks the build of each.
//   BRT_REQUIRED(name, T)    -> T name
//   BRT_OPTIONAL(name, T)    -> std::optional<T> name (absent: the row says)
//   BRT_DEFAULT(name, T, v)  -> T name = v
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace brt {

// The C++ type of each attribute type of ops.def.
namespace attr_value {
using Int = int64_t;
using Ints = std::vector<int64_t>;
using Float = double;
using Floats = std::vector<double>;
using String = std::string;
using Bytes = std::vector<uint8_t>;
}  // namespace attr_value

#define BRT_REQUIRED(name, type) attr_value::type name{};
#define BRT_OPTIONAL(name, type) std::optional<attr_value::type> name;
#define BRT_DEFAULT(name, type, value) attr_value::type name = value;
#define BRT_OP(Name, kind_name, min_operands, max_operands, cls, flags, attrs) \
  struct Name##Attrs {                                                         \
    static constexpr const char* kKind = kind_name;                            \
    attrs                                                                      \
  };
#include "brt/ops.def"

}  // namespace brt
