// The typed attributes of every registry kind (brt/op_attrs.h) read from an
// op: Decode<NameAttrs>(op) reads and checks them once, when a kernel is
// prepared, so a kernel reads fields, never attribute names.
#pragma once

#include "brt/op_attrs.h"
#include "ops/op_info.h"

namespace brt::ops {

// Throws KernelError naming an absent required attribute or a mistyped one.
template <typename Attrs>
Attrs Decode(const OpInfo& op);

#define BRT_OP(Name, kind_name, min_operands, max_operands, cls, flags, attrs) \
  using ::brt::Name##Attrs;                                                    \
  template <>                                                                  \
  Name##Attrs Decode<Name##Attrs>(const OpInfo& op);
#include "brt/ops.def"

}  // namespace brt::ops
