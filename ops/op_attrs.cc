// Decode<NameAttrs> of every registry kind (op_attrs.h), made from
// brt/ops.def.
#include "ops/op_attrs.h"

namespace brt::ops {

#define BRT_REQUIRED(name, type) AttrDecoder::Read(op, #name, &a.name);
#define BRT_OPTIONAL(name, type) \
  if (AttrDecoder::Has(op, #name)) AttrDecoder::Read(op, #name, &a.name.emplace());
#define BRT_DEFAULT(name, type, value) \
  if (AttrDecoder::Has(op, #name)) AttrDecoder::Read(op, #name, &a.name);
#define BRT_OP(Name, kind_name, min_operands, max_operands, cls, flags, attrs) \
  template <>                                                                  \
  Name##Attrs Decode<Name##Attrs>([[maybe_unused]] const OpInfo& op) {         \
    Name##Attrs a;                                                             \
    attrs return a;                                                            \
  }
#include "brt/ops.def"

}  // namespace brt::ops
