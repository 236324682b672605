#include "inputs.h"

#include <algorithm>
#include <type_traits>

namespace brt::tools {
namespace {

template <typename T>
void FillRandom(T* p, int64_t n, std::mt19937_64& rng) {
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<T> dist(-1, 1);
    for (int64_t i = 0; i < n; ++i) p[i] = dist(rng);
  } else {
    std::uniform_int_distribution<int64_t> dist(0, 9);
    for (int64_t i = 0; i < n; ++i) p[i] = static_cast<T>(dist(rng));
  }
}

}  // namespace

Expected<Tensor> RandomTensor(const ArgumentInfo& arg, std::mt19937_64& rng,
                              const std::map<std::string, int64_t>& symbols) {
  std::vector<int64_t> shape;
  for (const Dim& d : arg.shape) {
    auto size = DimSize(d, symbols);
    if (!size.ok())
      return Status(StatusCode::kInvalidArgument,
                    "input '" + arg.name + "': " + size.status().message() +
                        " (give it with --symbols NAME=SIZE, or the input as a .npy file)");
    if (*size < 0)
      return Status(StatusCode::kInvalidArgument, "input '" + arg.name + "': dimension '" +
                                                      d.symbol + "' is " + std::to_string(*size));
    shape.push_back(*size);
  }
  Tensor t = Tensor::Allocate(arg.dtype, shape);
  const int64_t n = t.num_elements();
  switch (arg.dtype) {
    case DType::kF32:
      FillRandom(t.data_as<float>(), n, rng);
      break;
    case DType::kF64:
      FillRandom(t.data_as<double>(), n, rng);
      break;
    case DType::kI32:
      FillRandom(t.data_as<int32_t>(), n, rng);
      break;
    case DType::kI64:
      FillRandom(t.data_as<int64_t>(), n, rng);
      break;
    case DType::kI8:
      FillRandom(t.data_as<int8_t>(), n, rng);
      break;
    case DType::kI16:
      FillRandom(t.data_as<int16_t>(), n, rng);
      break;
    case DType::kU8:
      FillRandom(t.data_as<uint8_t>(), n, rng);
      break;
    case DType::kU16:
      FillRandom(t.data_as<uint16_t>(), n, rng);
      break;
    case DType::kU32:
      FillRandom(t.data_as<uint32_t>(), n, rng);
      break;
    case DType::kU64:
      FillRandom(t.data_as<uint64_t>(), n, rng);
      break;
    case DType::kI1:
      for (int64_t i = 0; i < n; ++i) t.data_as<uint8_t>()[i] = rng() & 1;
      break;
    case DType::kC64:  // real and imaginary parts alike
      FillRandom(t.data_as<float>(), 2 * n, rng);
      break;
    case DType::kC128:
      FillRandom(t.data_as<double>(), 2 * n, rng);
      break;
    default:
      return Status(StatusCode::kUnsupported, std::string("--random-inputs cannot make ") +
                                                  DTypeName(arg.dtype) + " input '" + arg.name +
                                                  "'");
  }
  return t;
}

Expected<std::map<std::string, int64_t>> ParseSymbols(const std::string& text) {
  std::map<std::string, int64_t> symbols;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find(',', start), text.size());
    const std::string entry = text.substr(start, end - start);
    const size_t eq = entry.find('=');
    int64_t value = -1;
    try {
      size_t used = 0;
      if (eq != std::string::npos) value = std::stoll(entry.substr(eq + 1), &used);
      if (eq == std::string::npos || eq == 0 || used != entry.size() - eq - 1 || value < 0)
        value = -1;
    } catch (...) {
      value = -1;
    }
    if (value < 0)
      return Status(
          StatusCode::kInvalidArgument,
          "--symbols takes NAME=SIZE[,NAME=SIZE...] with sizes >= 0, got '" + entry + "'");
    symbols[entry.substr(0, eq)] = value;
    start = end + 1;
  }
  return symbols;
}

std::string ForRank(std::string path, int rank) {
  for (size_t at = path.find("{rank}"); at != std::string::npos; at = path.find("{rank}", at))
    path.replace(at, 6, std::to_string(rank));
  return path;
}

std::string RankSuffixed(const std::string& path, int rank, int world_size) {
  if (world_size <= 1) return path;
  const size_t slash = path.rfind('/');
  size_t dot = path.rfind('.');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash)) dot = path.size();
  return path.substr(0, dot) + ".rank" + std::to_string(rank) + path.substr(dot);
}

}  // namespace brt::tools
