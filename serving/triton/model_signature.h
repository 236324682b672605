// What a .brtx offers Triton: the functions the backend may run, their
// inputs and outputs as Triton tensors, and whether the leading dimension is
// a batch dimension that requests can be stacked along.
#pragma once

#include <brt/session.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "triton_api.h"

namespace brt::triton {

// A dimension Triton cannot fix: symbolic, or different between functions.
inline constexpr int64_t kVariableDim = -1;

struct TensorSignature {
  std::string name;
  DType dtype = DType::kInvalid;
  // Every dimension, the leading one included; kVariableDim where the
  // functions differ or the dimension is symbolic.
  std::vector<int64_t> dims;
};

// One function the backend can run a request on.
struct FunctionChoice {
  std::string name;
  // The leading size shared by all its arguments (kVariableDim when
  // symbolic); meaningful only when the signature is batch capable.
  int64_t batch = 0;
  // Per signature input / output, in the signature's order: its dims.
  std::vector<std::vector<Dim>> inputs;
  std::vector<std::vector<Dim>> outputs;
};

struct ModelSignature {
  std::vector<TensorSignature> inputs;
  std::vector<TensorSignature> outputs;
  std::vector<FunctionChoice> functions;  // by ascending batch
  // Every argument of every function leads with the function's batch size:
  // requests can be stacked along dimension 0 (and padded up to a function).
  bool batch_capable = false;
  // Functions of several batch sizes, or a symbolic one: the executable was
  // made for batching, so the auto-completed config turns it on.
  bool made_for_batching = false;
  int64_t largest_batch = 0;  // kVariableDim: no limit (a symbolic batch)
  Device device;              // where the functions' inputs live
};

// The signature of `function` (empty: every function; they must agree in
// names, dtypes and ranks, as the functions of one model compiled for
// several shapes do).
Expected<ModelSignature> ReadSignature(const Session& session, std::string_view function);

// The input's or output's dims as the model configuration gives them:
// without the batch dimension when batching.
std::vector<int64_t> ConfigDims(const TensorSignature& tensor, bool batching);

// The smallest function that takes `rows` stacked rows (batching; ignored
// otherwise) of inputs with these shapes (per signature input; without the
// batch dimension when batching). nullptr when none does.
const FunctionChoice* PickFunction(const ModelSignature& signature, bool batching, int64_t rows,
                                   const std::vector<std::vector<int64_t>>& shapes);
// The most rows one run can take for inputs of these shapes (0: none fits).
int64_t MostRows(const ModelSignature& signature, const std::vector<std::vector<int64_t>>& shapes);

// "[1,16], [8,16]": the shapes the functions take for input `index`.
std::string DescribeInputShapes(const ModelSignature& signature, size_t index);

// Triton's names for brt's dtypes: "TYPE_FP32" in a config, FP32 on the wire.
std::optional<std::string> ConfigTypeName(DType dtype);
TRITONSERVER_DataType WireType(DType dtype);
const char* WireTypeName(TRITONSERVER_DataType type);  // "FP32", as clients write it

}  // namespace brt::triton
