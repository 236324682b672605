// Arity and required attributes of the op kinds the core knows, checked when
// an executable is loaded. Kinds not listed (custom ops of a plugin) are
// checked by the provider that claims them.
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
  RequiredAttr attrs[4];  // terminated by a null name
};

// nullptr for a kind the core does not know.
const OpSchema* FindOpSchema(std::string_view kind);

}  // namespace brt::core
