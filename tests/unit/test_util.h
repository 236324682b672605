// Helpers for the unit tests: host tensors, single-op executables run through
// the dlopen'ed CPU provider with poisoned outputs, float64 comparison.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <random>
#include <vector>

#include "brt/builder.h"
#include "brt/session.h"

namespace brt::test {

struct HostTensor {
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  std::vector<uint64_t> storage;  // 8-byte aligned bytes

  HostTensor() = default;
  HostTensor(DType t, std::vector<int64_t> s) : dtype(t), shape(std::move(s)) {
    storage.assign((num_bytes() + 7) / 8 + 1, 0);
  }
  int64_t numel() const { return NumElements(shape).value_or(0); }
  size_t num_bytes() const { return static_cast<size_t>(numel()) * DTypeSize(dtype); }
  void* data() { return storage.data(); }
  const void* data() const { return storage.data(); }
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(storage.data());
  }
  template <typename T>
  const T* as() const {
    return reinterpret_cast<const T*>(storage.data());
  }
  Tensor view() { return Tensor::Borrow(data(), dtype, shape); }

  // Element i as double (f16/bf16 decoded).
  double Get(int64_t i) const;
  void Set(int64_t i, double v);
  std::vector<double> ToDouble() const;
  static HostTensor FromDouble(DType t, std::vector<int64_t> shape, const std::vector<double>& v);
};

// Uniform random values in [lo, hi] (integers for integer dtypes).
HostTensor Random(DType t, std::vector<int64_t> shape, std::mt19937_64& rng, double lo = -1,
                  double hi = 1);
inline std::mt19937_64& Rng() {
  static std::mt19937_64 rng(20261122);
  return rng;
}

// Where the op tests run: the CPU, or the CUDA provider when
// BRT_TEST_DEVICE=cuda (with the options that load only it).
Device TestDevice();
SessionOptions TestOptions();

struct OpRun {
  std::string kind;
  std::vector<HostTensor> inputs;
  std::vector<TensorType> results;
  std::vector<Attribute> attrs = {};
  // Operands stored in the executable as weights (constants) instead of bound.
  std::vector<int> weights = {};
};

// Builds a one-function executable holding just this op, loads it with the
// CPU provider, binds poisoned outputs and runs it.
Expected<std::vector<HostTensor>> RunOp(const OpRun& op);
// Same, asserting success.
std::vector<HostTensor> MustRunOp(const OpRun& op);

// ||out - ref|| / ||ref|| (absolute norm when ref is all zeros).
double RelError(const std::vector<double>& out, const std::vector<double>& ref);

Expected<std::shared_ptr<Session>> LoadBuilt(const ExecutableBuilder& b,
                                             SessionOptions options = {});

// Row-major multi-index helpers for reference implementations.
std::vector<int64_t> Unravel(int64_t flat, const std::vector<int64_t>& shape);
int64_t Ravel(const std::vector<int64_t>& index, const std::vector<int64_t>& shape);

std::vector<Dim> Dims(const std::vector<int64_t>& shape);

// gtest matcher-ish helper: expects the status to fail and its message to
// contain every fragment.
void ExpectError(const Status& s, std::initializer_list<std::string> fragments);

}  // namespace brt::test

namespace brt::test {

// A 3-layer MLP (dense, relu, dense, relu, dense, softmax) with random
// weights: x[batch, in] -> probabilities[batch, out]. `batch` may be symbolic.
struct Mlp {
  int64_t in = 16, hidden = 32, out = 10;
  HostTensor w1, b1, w2, b2, w3, b3;
  explicit Mlp(std::mt19937_64& rng);
  void Build(FunctionBuilder& f, Dim batch) const;
  // float64 reference for x of shape [n, in].
  std::vector<double> Reference(const HostTensor& x) const;
};

}  // namespace brt::test
