#include "model_config.h"

#include <brt/provider_abi.h>  // BRT_HOST_POOL_MAX_LINGER_US

#include <algorithm>
#include <charconv>
#include <limits>

namespace brt::triton {
namespace {

using nlohmann::json;

// Triton writes int64 fields as JSON numbers or, as protobuf's JSON mapping
// does, as strings.
int64_t AsInt(const json& value) {
  if (value.is_number_integer()) return value.get<int64_t>();
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    int64_t out = 0;
    auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), out);
    if (error == std::errc() && end == s.data() + s.size()) return out;
  }
  throw std::invalid_argument("expected an integer, got " + value.dump());
}

std::vector<int64_t> DimsOf(const json& tensor) {
  std::vector<int64_t> dims;
  if (tensor.contains("dims"))
    for (const json& d : tensor["dims"]) dims.push_back(AsInt(d));
  return dims;
}

std::string FormatConfigDims(const std::vector<int64_t>& dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "," : "") + std::to_string(dims[i]);
  return s + "]";
}

Status Disagree(std::string message) {
  return Status(StatusCode::kInvalidArgument, std::move(message));
}

const json* FindByName(const json& list, const std::string& name) {
  for (const json& entry : list)
    if (entry.value("name", "") == name) return &entry;
  return nullptr;
}

json Section(const json& config, const char* key) {
  return config.contains(key) && config[key].is_array() ? config[key] : json::array();
}

// Whether some function has `size` (or a symbolic dim) at position `dim` of
// the tensor's full shape.
bool SomeFunctionTakes(const ModelSignature& sig, bool is_input, size_t index, size_t dim,
                       int64_t size) {
  for (const FunctionChoice& f : sig.functions) {
    const Dim& d = (is_input ? f.inputs : f.outputs)[index][dim];
    if (!d.is_static() || d.size == size) return true;
  }
  return false;
}

Status CheckTensors(const json& config, const ModelSignature& sig, bool is_input, bool batching,
                    const std::string& executable) {
  const char* kind = is_input ? "input" : "output";
  const std::vector<TensorSignature>& tensors = is_input ? sig.inputs : sig.outputs;
  const json entries = Section(config, kind);
  std::string names;
  for (const TensorSignature& t : tensors) names += (names.empty() ? "" : ", ") + t.name;
  for (const json& entry : entries) {
    const std::string name = entry.value("name", "");
    auto it = std::find_if(tensors.begin(), tensors.end(),
                           [&](const TensorSignature& t) { return t.name == name; });
    if (it == tensors.end())
      return Disagree("config.pbtxt " + std::string(kind) + " '" + name + "' is not an " + kind +
                      " of " + executable + " (its " + kind + "s: " + names + ")");
    if (entry.contains("reshape"))
      return Disagree("config.pbtxt " + std::string(kind) + " '" + name +
                      "' has a reshape, which the brt backend does not apply");
    const std::string expected_type = ConfigTypeName(it->dtype).value_or("?");
    const std::string type = entry.value("data_type", "TYPE_INVALID");
    if (type != expected_type)
      return Disagree("config.pbtxt " + std::string(kind) + " '" + name + "' is " + type + ", " +
                      executable + " has " + expected_type + " (" + DTypeName(it->dtype) + ")");
    const std::vector<int64_t> dims = DimsOf(entry);
    const std::vector<int64_t> expected = ConfigDims(*it, batching);
    const std::string both = "config.pbtxt " + std::string(kind) + " '" + name + "' has dims " +
                             FormatConfigDims(dims) + ", " + executable + " has " +
                             FormatConfigDims(expected) +
                             (batching ? " after the batch dimension" : "");
    if (dims.size() != expected.size()) return Disagree(both);
    const size_t index = static_cast<size_t>(it - tensors.begin());
    for (size_t d = 0; d < dims.size(); ++d) {
      if (dims[d] == kVariableDim) continue;
      const size_t full = d + (batching ? 1 : 0);
      if (expected[d] != kVariableDim ? dims[d] != expected[d]
                                      : !SomeFunctionTakes(sig, is_input, index, full, dims[d]))
        return Disagree(both);
    }
  }
  for (const TensorSignature& t : tensors)
    if (!FindByName(entries, t.name))
      return Disagree(executable + " " + kind + " '" + t.name +
                      "' is missing from config.pbtxt's " + kind + "s");
  return Status::Ok();
}

bool CompleteTensors(json& config, const std::vector<TensorSignature>& tensors, const char* key,
                     bool batching) {
  if (!config.contains(key) || !config[key].is_array()) config[key] = json::array();
  bool changed = false;
  for (const TensorSignature& t : tensors) {
    json* entry = nullptr;
    for (json& e : config[key])
      if (e.value("name", "") == t.name) entry = &e;
    if (!entry) {
      config[key].push_back({{"name", t.name}});
      entry = &config[key].back();
      changed = true;
    }
    if (entry->value("data_type", "TYPE_INVALID") == "TYPE_INVALID") {
      (*entry)["data_type"] = ConfigTypeName(t.dtype).value_or("TYPE_INVALID");
      changed = true;
    }
    if (!entry->contains("dims") || (*entry)["dims"].empty()) {
      (*entry)["dims"] = ConfigDims(t, batching);
      changed = true;
    }
  }
  return changed;
}

}  // namespace

Expected<BackendParameters> ReadParameters(const json& config) {
  BackendParameters p;
  if (!config.contains("parameters")) return p;
  for (const auto& [key, value] : config["parameters"].items()) {
    const std::string text = value.value("string_value", "");
    auto refuse = [&](const std::string& want) {
      return Status(StatusCode::kInvalidArgument,
                    "config.pbtxt parameter '" + key + "' is '" + text + "', expected " + want);
    };
    // The whole text as an integer in [low, high], or -1.
    auto integer = [&](int low, int high) {
      int n = -1;
      auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
      return error == std::errc() && end == text.data() + text.size() && n >= low && n <= high ? n
                                                                                               : -1;
    };
    // "true" or "false" into *out; false (out untouched) for any other text.
    auto boolean = [&](bool* out) {
      if (text != "true" && text != "false") return false;
      *out = text == "true";
      return true;
    };
    if (key == "function") {
      p.function = text;
    } else if (key == "threads") {
      p.threads = integer(0, std::numeric_limits<int>::max());
      if (p.threads < 0) return refuse("a thread count (0: one per CPU)");
    } else if (key == "spinning") {
      if (!boolean(&p.spinning)) return refuse("'true' or 'false'");
    } else if (key == "linger_us") {
      p.linger_us = integer(0, BRT_HOST_POOL_MAX_LINGER_US);
      if (p.linger_us < 0)
        return refuse("microseconds from 0 (off) to " +
                      std::to_string(BRT_HOST_POOL_MAX_LINGER_US));
    } else if (key == "provider") {
      if (text != "cpu" && text != "cuda") return refuse("'cpu' or 'cuda'");
      p.provider = text;
    } else if (key == "graph_capture") {
      if (!boolean(&p.graph_capture)) return refuse("'true' or 'false'");
    } else {
      return Status(StatusCode::kInvalidArgument,
                    "config.pbtxt parameter '" + key +
                        "' is not one the brt backend takes (function, threads, spinning, "
                        "linger_us, provider, graph_capture)");
    }
  }
  return p;
}

int64_t MaxBatchSize(const json& config) {
  return config.contains("max_batch_size") ? AsInt(config["max_batch_size"]) : 0;
}

bool AutoComplete(json& config, const ModelSignature& sig) {
  bool changed = false;
  if (MaxBatchSize(config) == 0 && sig.made_for_batching && Section(config, "input").empty()) {
    config["max_batch_size"] =
        sig.largest_batch == kVariableDim ? kSymbolicBatchDefault : sig.largest_batch;
    // Batching on, as the executable was made for, where no scheduler is
    // configured: preferring the batches it has functions for over ones
    // padded up to the next function. (Triton takes a backend's scheduler
    // only where the configuration has none.)
    if (!config.contains("dynamic_batching") && !config.contains("sequence_batching") &&
        !config.contains("ensemble_scheduling")) {
      std::vector<int64_t> sizes;  // the functions are in ascending batch order
      for (const FunctionChoice& f : sig.functions)
        if (f.batch > 0 && (sizes.empty() || sizes.back() != f.batch)) sizes.push_back(f.batch);
      config["dynamic_batching"] = {{"preferred_batch_size", sizes}};
    }
    changed = true;
  }
  const bool batching = MaxBatchSize(config) > 0 && sig.batch_capable;
  changed |= CompleteTensors(config, sig.inputs, "input", batching);
  changed |= CompleteTensors(config, sig.outputs, "output", batching);
  return changed;
}

Status CheckConfig(const json& config, const ModelSignature& sig, const std::string& executable) {
  const int64_t max_batch = MaxBatchSize(config);
  if (max_batch > 0 && !sig.batch_capable)
    return Disagree("config.pbtxt sets max_batch_size " + std::to_string(max_batch) + ", but " +
                    executable + " has no batch dimension: the arguments of function '" +
                    sig.functions.front().name + "' do not all lead with one size");
  if (max_batch > 0 && sig.largest_batch != kVariableDim && max_batch > sig.largest_batch)
    return Disagree("config.pbtxt sets max_batch_size " + std::to_string(max_batch) + ", but " +
                    executable + "'s largest batch is " + std::to_string(sig.largest_batch) +
                    " (function '" + sig.functions.back().name + "')");
  BRT_RETURN_IF_ERROR(CheckTensors(config, sig, true, max_batch > 0, executable));
  return CheckTensors(config, sig, false, max_batch > 0, executable);
}

}  // namespace brt::triton
