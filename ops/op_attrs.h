// Typed attributes for every op kind of the registry: one struct per BRT_OP
// row of brt/ops.def, <Name>Attrs, with a field per attribute entry.
// Decode(op) reads and checks them once, when a kernel is prepared, so a
// kernel reads fields, never attribute names: renaming an attribute in
// ops.def breaks the build of every kernel that reads it.
//   BRT_REQUIRED(name, T)    -> T name (Decode throws if it is absent)
//   BRT_OPTIONAL(name, T)    -> std::optional<T> name
//   BRT_DEFAULT(name, T, v)  -> T name = v
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ops/op_info.h"

namespace brt::ops {

// The C++ type of each attribute type of ops.def.
namespace attr_type {
using Int = int64_t;
using Ints = std::vector<int64_t>;
using Float = double;
using Floats = std::vector<double>;
using String = std::string;
using Bytes = std::vector<uint8_t>;
}  // namespace attr_type

#define BRT_REQUIRED(name, type) attr_type::type name{};
#define BRT_OPTIONAL(name, type) std::optional<attr_type::type> name;
#define BRT_DEFAULT(name, type, value) attr_type::type name = value;
#define BRT_OP(Name, kind_name, min_operands, max_operands, cls, flags, attrs)      \
  struct Name##Attrs {                                                              \
    static constexpr const char* kKind = kind_name;                                 \
    attrs /* Throws KernelError naming an absent required or mistyped attribute. */ \
        static Name##Attrs                                                          \
        Decode(const OpInfo& op);                                                   \
  };
#include "brt/ops.def"

}  // namespace brt::ops
