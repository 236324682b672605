// Inputs for the command-line tools: random tensors for an argument.
#pragma once

#include <random>

#include "brt/session.h"

namespace brt::tools {

// Uniform in [-1, 1] for floats, [0, 10) for integers, 0/1 for i1. Fails for
// symbolic dimensions (the caller must give such inputs as files).
Expected<Tensor> RandomTensor(const ArgumentInfo& arg, std::mt19937_64& rng);

}  // namespace brt::tools
