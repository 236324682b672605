#include "op_schema.h"

namespace brt::core {
namespace {

constexpr int kAny = -1;
#define UNARY(name)   \
  {                   \
    name, 1, 1, 1, {} \
  }
#define BINARY(name)  \
  {                   \
    name, 2, 2, 1, {} \
  }

constexpr OpSchema kSchemas[] = {
    {"constant", 0, 0, 1, {{"value", BRT_ATTR_BYTES}}},
    UNARY("negate"),
    UNARY("abs"),
    UNARY("exponential"),
    UNARY("exponential_minus_one"),
    UNARY("log"),
    UNARY("log_plus_one"),
    UNARY("sqrt"),
    UNARY("rsqrt"),
    UNARY("tanh"),
    UNARY("logistic"),
    UNARY("sine"),
    UNARY("cosine"),
    UNARY("floor"),
    UNARY("ceil"),
    UNARY("round_nearest_even"),
    UNARY("sign"),
    UNARY("erf"),
    UNARY("not"),
    UNARY("convert"),
    UNARY("reshape"),
    BINARY("add"),
    BINARY("subtract"),
    BINARY("multiply"),
    BINARY("divide"),
    BINARY("maximum"),
    BINARY("minimum"),
    BINARY("power"),
    BINARY("remainder"),
    BINARY("and"),
    BINARY("or"),
    {"compare", 2, 2, 1, {{"comparison_direction", BRT_ATTR_STRING}}},
    {"select", 3, 3, 1, {}},
    {"clamp", 3, 3, 1, {}},
    {"broadcast_in_dim", 1, 1, 1, {{"broadcast_dimensions", BRT_ATTR_INTS}}},
    {"transpose", 1, 1, 1, {{"permutation", BRT_ATTR_INTS}}},
    {"slice", 1, 1, 1, {{"start_indices", BRT_ATTR_INTS}, {"limit_indices", BRT_ATTR_INTS}}},
    {"dynamic_slice", 1, kAny, 1, {{"slice_sizes", BRT_ATTR_INTS}}},
    {"dynamic_update_slice", 2, kAny, 1, {}},
    {"concatenate", 1, kAny, 1, {{"dimension", BRT_ATTR_INT}}},
    {"pad", 2, 2, 1, {{"edge_padding_low", BRT_ATTR_INTS}, {"edge_padding_high", BRT_ATTR_INTS}}},
    {"iota", 0, 0, 1, {{"iota_dimension", BRT_ATTR_INT}}},
    {"reverse", 1, 1, 1, {{"dimensions", BRT_ATTR_INTS}}},
    {"gather",
     2,
     2,
     1,
     {{"offset_dims", BRT_ATTR_INTS},
      {"collapsed_slice_dims", BRT_ATTR_INTS},
      {"start_index_map", BRT_ATTR_INTS},
      {"slice_sizes", BRT_ATTR_INTS}}},
    {"scatter",
     3,
     3,
     1,
     {{"update_window_dims", BRT_ATTR_INTS},
      {"inserted_window_dims", BRT_ATTR_INTS},
      {"scatter_dims_to_operand_dims", BRT_ATTR_INTS},
      {"mode", BRT_ATTR_STRING}}},
    {"dot_general",
     2,
     2,
     1,
     {{"lhs_contracting_dimensions", BRT_ATTR_INTS},
      {"rhs_contracting_dimensions", BRT_ATTR_INTS}}},
    {"convolution", 2, 2, 1, {}},
    {"reduce", 2, 2, 1, {{"dimensions", BRT_ATTR_INTS}, {"reducer", BRT_ATTR_STRING}}},
    {"reduce_window",
     2,
     2,
     1,
     {{"window_dimensions", BRT_ATTR_INTS}, {"reducer", BRT_ATTR_STRING}}},
    {"brt.fused_elementwise", 1, kAny, 1, {{"ops", BRT_ATTR_STRING}, {"program", BRT_ATTR_INTS}}},
    {"brt.matmul",
     2,
     3,
     1,
     {{"lhs_contracting_dimensions", BRT_ATTR_INTS},
      {"rhs_contracting_dimensions", BRT_ATTR_INTS}}},
    {"brt.conv", 2, 3, 1, {}},
    {"brt.softmax", 1, 1, 1, {}},
    {"brt.layer_norm", 3, 3, 1, {}},
};
#undef UNARY
#undef BINARY

}  // namespace

const OpSchema* FindOpSchema(std::string_view kind) {
  for (const OpSchema& s : kSchemas)
    if (kind == s.kind) return &s;
  return nullptr;
}

}  // namespace brt::core
