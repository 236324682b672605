#include "model_signature.h"

#include <algorithm>
#include <set>

namespace brt::triton {
namespace {

struct TypeNames {
  DType dtype;
  const char* config;
  TRITONSERVER_DataType wire;
  const char* wire_name;
};

// Complex numbers have no Triton type.
constexpr TypeNames kTypes[] = {
    {DType::kI1, "TYPE_BOOL", TRITONSERVER_TYPE_BOOL, "BOOL"},
    {DType::kU8, "TYPE_UINT8", TRITONSERVER_TYPE_UINT8, "UINT8"},
    {DType::kU16, "TYPE_UINT16", TRITONSERVER_TYPE_UINT16, "UINT16"},
    {DType::kU32, "TYPE_UINT32", TRITONSERVER_TYPE_UINT32, "UINT32"},
    {DType::kU64, "TYPE_UINT64", TRITONSERVER_TYPE_UINT64, "UINT64"},
    {DType::kI8, "TYPE_INT8", TRITONSERVER_TYPE_INT8, "INT8"},
    {DType::kI16, "TYPE_INT16", TRITONSERVER_TYPE_INT16, "INT16"},
    {DType::kI32, "TYPE_INT32", TRITONSERVER_TYPE_INT32, "INT32"},
    {DType::kI64, "TYPE_INT64", TRITONSERVER_TYPE_INT64, "INT64"},
    {DType::kF16, "TYPE_FP16", TRITONSERVER_TYPE_FP16, "FP16"},
    {DType::kF32, "TYPE_FP32", TRITONSERVER_TYPE_FP32, "FP32"},
    {DType::kF64, "TYPE_FP64", TRITONSERVER_TYPE_FP64, "FP64"},
    {DType::kBF16, "TYPE_BF16", TRITONSERVER_TYPE_BF16, "BF16"},
};

Status Invalid(std::string message) {
  return Status(StatusCode::kInvalidExecutable, std::move(message));
}

std::vector<const ArgumentInfo*> Arguments(const FunctionInfo& f, const std::vector<int>& indices) {
  std::vector<const ArgumentInfo*> out;
  for (int i : indices) out.push_back(&f.arguments[i]);
  return out;
}

// The leading dim every argument shares, or nullopt when they do not all
// have one in common.
std::optional<Dim> SharedLeadingDim(const FunctionInfo& f) {
  std::optional<Dim> lead;
  for (const ArgumentInfo& a : f.arguments) {
    if (a.role == ArgRole::kWeight) continue;
    if (a.shape.empty()) return std::nullopt;
    if (!lead) lead = a.shape[0];
    if (!(a.shape[0] == *lead)) return std::nullopt;
  }
  return lead;
}

Status CheckServable(const FunctionInfo& f) {
  for (const ArgumentInfo& a : f.arguments) {
    if (a.role == ArgRole::kState || a.alias_argument >= 0)
      return Invalid("function '" + f.name + "' updates '" + a.name +
                     "' in place (train state); a served function must be stateless");
    if (a.role != ArgRole::kWeight && !ConfigTypeName(a.dtype))
      return Invalid("function '" + f.name + "' argument '" + a.name + "' is " +
                     DTypeName(a.dtype) + ", which Triton has no type for");
  }
  if (!f.mesh.empty())
    return Invalid("function '" + f.name +
                   "' is a per-rank program of a device mesh; "
                   "Triton serves single-process programs");
  return Status::Ok();
}

// Adds `args` to `tensors` (the first function) or checks they agree with it.
Status Merge(const FunctionInfo& f, const std::vector<const ArgumentInfo*>& args,
             std::vector<TensorSignature>& tensors, const std::string& first, const char* what) {
  if (tensors.empty() && first == f.name) {
    for (const ArgumentInfo* a : args) {
      TensorSignature t{a->name, a->dtype, {}};
      for (const Dim& d : a->shape) t.dims.push_back(d.is_static() ? d.size : kVariableDim);
      tensors.push_back(std::move(t));
    }
    return Status::Ok();
  }
  auto names = [](const auto& list, auto name_of) {
    std::string s;
    for (const auto& x : list) s += (s.empty() ? "" : ", ") + name_of(x);
    return s;
  };
  bool same = args.size() == tensors.size();
  for (size_t i = 0; same && i < args.size(); ++i)
    same = args[i]->name == tensors[i].name && args[i]->dtype == tensors[i].dtype &&
           args[i]->shape.size() == tensors[i].dims.size();
  if (!same)
    return Invalid(
        std::string("functions '") + first + "' and '" + f.name + "' differ in their " + what +
        " (" + names(tensors, [](const TensorSignature& t) { return t.name; }) + " vs " +
        names(args, [](const ArgumentInfo* a) { return a->name; }) +
        ", or their dtypes or ranks): set the model parameter 'function' to one of them");
  for (size_t i = 0; i < args.size(); ++i)
    for (size_t d = 0; d < args[i]->shape.size(); ++d) {
      const Dim& dim = args[i]->shape[d];
      if (!dim.is_static() || dim.size != tensors[i].dims[d]) tensors[i].dims[d] = kVariableDim;
    }
  return Status::Ok();
}

bool Takes(const std::vector<Dim>& dims, const std::vector<int64_t>& shape, size_t skip) {
  if (dims.size() != shape.size() + skip) return false;
  for (size_t d = 0; d < shape.size(); ++d) {
    const Dim& dim = dims[d + skip];
    if (dim.is_static() ? dim.size != shape[d] : shape[d] < 0) return false;
  }
  return true;
}

bool TakesShapes(const FunctionChoice& f, bool batching,
                 const std::vector<std::vector<int64_t>>& shapes) {
  for (size_t i = 0; i < shapes.size(); ++i)
    if (!Takes(f.inputs[i], shapes[i], batching ? 1 : 0)) return false;
  return true;
}

}  // namespace

Expected<ModelSignature> ReadSignature(const Session& session, std::string_view function) {
  std::vector<const FunctionInfo*> functions;
  if (!function.empty()) {
    auto f = session.function(function);
    if (!f.ok()) return f.status();
    functions.push_back(*f);
  } else {
    for (const FunctionInfo& f : session.functions()) functions.push_back(&f);
  }
  ModelSignature sig;
  const std::string& first = functions.front()->name;
  sig.batch_capable = true;
  std::set<int64_t> batches;
  for (const FunctionInfo* f : functions) {
    BRT_RETURN_IF_ERROR(CheckServable(*f));
    BRT_RETURN_IF_ERROR(Merge(*f, Arguments(*f, f->input_indices), sig.inputs, first, "inputs"));
    BRT_RETURN_IF_ERROR(Merge(*f, Arguments(*f, f->output_indices), sig.outputs, first, "outputs"));
    FunctionChoice choice{f->name, 0, {}, {}};
    for (int i : f->input_indices) choice.inputs.push_back(f->arguments[i].shape);
    for (int i : f->output_indices) choice.outputs.push_back(f->arguments[i].shape);
    std::optional<Dim> lead = SharedLeadingDim(*f);
    if (!lead) sig.batch_capable = false;
    choice.batch = lead && lead->is_static() ? lead->size : kVariableDim;
    batches.insert(choice.batch);
    sig.functions.push_back(std::move(choice));
  }
  if (sig.inputs.empty())
    return Invalid("function '" + first + "' takes no inputs: nothing for a request to carry");
  sig.device = functions.front()->arguments[functions.front()->input_indices[0]].device;
  std::stable_sort(sig.functions.begin(), sig.functions.end(),
                   [](const FunctionChoice& a, const FunctionChoice& b) {
                     // A symbolic batch takes any size: try fixed ones first.
                     auto key = [](int64_t b) { return b < 0 ? INT64_MAX : b; };
                     return key(a.batch) < key(b.batch);
                   });
  if (sig.batch_capable) {
    sig.made_for_batching = batches.size() > 1 || batches.count(kVariableDim) > 0;
    sig.largest_batch = batches.count(kVariableDim) ? kVariableDim : *batches.rbegin();
  }
  return sig;
}

std::vector<int64_t> ConfigDims(const TensorSignature& tensor, bool batching) {
  return batching ? std::vector<int64_t>(tensor.dims.begin() + 1, tensor.dims.end()) : tensor.dims;
}

const FunctionChoice* PickFunction(const ModelSignature& signature, bool batching, int64_t rows,
                                   const std::vector<std::vector<int64_t>>& shapes) {
  for (const FunctionChoice& f : signature.functions) {
    if (batching && f.batch >= 0 && f.batch < rows) continue;
    if (TakesShapes(f, batching, shapes)) return &f;
  }
  return nullptr;
}

int64_t MostRows(const ModelSignature& signature, const std::vector<std::vector<int64_t>>& shapes) {
  int64_t most = 0;
  for (const FunctionChoice& f : signature.functions)
    if (TakesShapes(f, true, shapes)) most = f.batch < 0 ? INT64_MAX : std::max(most, f.batch);
  return most;
}

std::string DescribeInputShapes(const ModelSignature& signature, size_t index) {
  std::string out;
  for (const FunctionChoice& f : signature.functions)
    out += (out.empty() ? "" : ", ") + FormatDims(f.inputs[index]);
  return out;
}

std::optional<std::string> ConfigTypeName(DType dtype) {
  for (const TypeNames& t : kTypes)
    if (t.dtype == dtype) return t.config;
  return std::nullopt;
}

TRITONSERVER_DataType WireType(DType dtype) {
  for (const TypeNames& t : kTypes)
    if (t.dtype == dtype) return t.wire;
  return TRITONSERVER_TYPE_INVALID;
}

const char* WireTypeName(TRITONSERVER_DataType type) {
  for (const TypeNames& t : kTypes)
    if (t.wire == type) return t.wire_name;
  return type == TRITONSERVER_TYPE_BYTES ? "BYTES" : "INVALID";
}

}  // namespace brt::triton
