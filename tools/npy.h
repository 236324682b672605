// Reading and writing NumPy .npy files (format 1.0-3.0, little-endian,
// C order) as brt tensors.
#pragma once

#include <string>

#include "brt/status.h"
#include "brt/types.h"

namespace brt::tools {

Expected<Tensor> ReadNpy(const std::string& path);
Status WriteNpy(const std::string& path, const Tensor& tensor);

}  // namespace brt::tools
