// The model configuration (config.pbtxt, as Triton hands it over in JSON):
// the brt backend's parameters, the auto-completed fields, and the check that
// the configuration agrees with the executable.
#pragma once

#include <brt/status.h>

#include <nlohmann/json.hpp>
#include <string>

#include "model_signature.h"

namespace brt::triton {

// The max_batch_size auto-complete gives an executable whose batch
// dimension is symbolic (it takes any size).
inline constexpr int64_t kSymbolicBatchDefault = 64;

struct BackendParameters {
  std::string function;  // empty: every function of the executable
  int threads = 0;       // SessionOptions::intra_op_threads (0: one per CPU)
  bool spinning = true;  // SessionOptions::allow_spinning
  int linger_us = 0;     // SessionOptions::linger_microseconds (0: off)
  std::string provider;  // "cpu" or "cuda"; empty: where the executable's inputs live
  bool graph_capture = true;
};

Expected<BackendParameters> ReadParameters(const nlohmann::json& config);

// Fills in what the configuration leaves out: max_batch_size, with dynamic
// batching preferring the functions' batch sizes where no scheduler is set,
// when the executable was made for batching and the configuration names no
// inputs; the inputs and outputs. Returns whether anything changed.
bool AutoComplete(nlohmann::json& config, const ModelSignature& signature);

// Refuses a configuration that disagrees with the executable, naming both
// sides (`executable` names the file in messages).
Status CheckConfig(const nlohmann::json& config, const ModelSignature& signature,
                   const std::string& executable);

int64_t MaxBatchSize(const nlohmann::json& config);

}  // namespace brt::triton
