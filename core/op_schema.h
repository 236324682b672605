// Arity and required attributes of the registry's op kinds (brt/ops.def),
// checked when an executable is loaded. A kind not in the registry must be
// declared by a loaded provider's kernel table; that provider checks it.
#pragma once

#include <string_view>

#include "brt/provider_abi.h"

namespace brt::core {

struct RequiredAttr {
  const char* name;
  int32_t kind;  // BRT_ATTR_*
};

struct OpSchema {
  const char* kind;
  int min_operands;
  int max_operands;  // -1: no limit
  int num_results;
  RequiredAttr attrs[6];  // terminated by a null name
};

// nullptr for a kind the core does not know.
const OpSchema* FindOpSchema(std::string_view kind);

}  // namespace brt::core
