// The reducers JAX writes as bodies of several ops or that came late: xor
// (lax.reduce_xor) and logaddexp (lax.cumlogsumexp) in reduce and
// reduce_window, on the CPU provider and the CUDA provider's own kernels (the
// _cuda_emulated run); complex max, min and logaddexp, ordered
// lexicographically, in reduce, reduce_window and scatter, and sort moving
// complex operands by real keys.
#include <algorithm>
#include <complex>
#include <cstring>
#include <limits>

#include "complex_test_util.h"

namespace brt::test {
namespace {

// A cumulative reduce_window along dim 1 of a rows x cols operand: window
// [1, cols], cols - 1 elements of padding before (lax.cummax's form).
std::vector<Attribute> ScanAttrs(int64_t cols, const char* reducer) {
  return {{"window_dimensions", std::vector<int64_t>{1, cols}},
          {"padding", std::vector<int64_t>{0, 0, cols - 1, 0}},
          {"reducer", reducer}};
}

// reduce xor over dim 1 with a non-identity init, and the cumulative xor
// along dim 1, on random bits, against a loop in T.
template <typename T>
void CheckXor(DType dtype) {
  const int64_t rows = 3, cols = 37;
  HostTensor x(dtype, {rows, cols}), init(dtype, {}), zero(dtype, {});
  auto random_value = [] {
    const uint64_t bits = Rng()();
    if constexpr (std::is_same_v<T, bool>) {
      return (bits & 1) != 0;
    } else {
      T v;
      std::memcpy(&v, &bits, sizeof(T));
      return v;
    }
  };
  for (int64_t i = 0; i < x.numel(); ++i) x.as<T>()[i] = random_value();
  init.as<T>()[0] = std::is_same_v<T, bool> ? T(1) : random_value();
  auto xor_of = [](T a, T b) {
    if constexpr (std::is_same_v<T, bool>)
      return a != b;
    else
      return T(a ^ b);
  };
  auto reduced = MustRunOp({"reduce",
                            {x, init},
                            {{dtype, {rows}}},
                            {{"dimensions", std::vector<int64_t>{1}}, {"reducer", "xor"}}});
  auto scanned =
      MustRunOp({"reduce_window", {x, zero}, {{dtype, {rows, cols}}}, ScanAttrs(cols, "xor")});
  for (int64_t r = 0; r < rows; ++r) {
    T all = init.as<T>()[0], prefix = T(0);
    for (int64_t c = 0; c < cols; ++c) {
      all = xor_of(all, x.as<T>()[r * cols + c]);
      prefix = xor_of(prefix, x.as<T>()[r * cols + c]);
      EXPECT_EQ(scanned[0].as<T>()[r * cols + c], prefix)
          << "cumulative xor on " << DTypeName(dtype) << " at " << r << "," << c;
    }
    EXPECT_EQ(reduced[0].as<T>()[r], all) << "xor on " << DTypeName(dtype) << " row " << r;
  }
}

TEST(Reducers, XorOnEveryIntegerTypeAndBoolean) {
  CheckXor<int8_t>(DType::kI8);
  CheckXor<uint8_t>(DType::kU8);
  CheckXor<int16_t>(DType::kI16);
  CheckXor<uint16_t>(DType::kU16);
  CheckXor<int32_t>(DType::kI32);
  CheckXor<uint32_t>(DType::kU32);
  CheckXor<int64_t>(DType::kI64);
  CheckXor<uint64_t>(DType::kU64);
  CheckXor<bool>(DType::kI1);
}

// log(sum(exp(x))) in long double, stable: the largest term factored out.
long double LogSumExp(const std::vector<long double>& x) {
  long double m = -INFINITY;
  for (long double v : x) m = std::max(m, v);
  if (std::isinf(m)) return m;
  long double s = 0;
  for (long double v : x) s += std::exp(v - m);
  return m + std::log(s);
}

// lax.cumlogsumexp's reduce_window and a logsumexp reduce over rows offset
// by up to +-1000 in f32 and f64 (where exp overflows: the reducer must not
// compute it), with -inf elements (a row of them gives -inf), against a
// long double reference; f16 and bf16 (computed in f32) near 0.
TEST(Reducers, LogAddExpIsStableForLargeValues) {
  const int64_t rows = 4, cols = 9;
  for (DType t : {DType::kF32, DType::kF64, DType::kF16, DType::kBF16}) {
    const bool narrow = t == DType::kF16 || t == DType::kBF16;
    HostTensor x = Random(t, {rows, cols}, Rng(), -4, 4);
    const double offsets[] = {1000, -1000, 0, 0};
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        double v = x.Get(r * cols + c) + (narrow ? 0 : offsets[r]);
        if ((r == 2 && c % 4 == 1) || r == 3) v = -INFINITY;
        x.Set(r * cols + c, v);
      }
    HostTensor init = HostTensor::FromDouble(t, {}, {-INFINITY});
    auto scanned =
        MustRunOp({"reduce_window", {x, init}, {{t, {rows, cols}}}, ScanAttrs(cols, "logaddexp")});
    auto reduced = MustRunOp({"reduce",
                              {x, init},
                              {{t, {rows}}},
                              {{"dimensions", std::vector<int64_t>{1}}, {"reducer", "logaddexp"}}});
    const double tol = narrow ? 1e-2 : t == DType::kF32 ? 1e-6 : 1e-14;
    auto expect_near = [&](double got, long double want, const std::string& where) {
      if (std::isinf(want))
        EXPECT_EQ(got, static_cast<double>(want)) << where;
      else
        EXPECT_LE(std::fabs(got - static_cast<double>(want)), tol * std::max(1.0L, std::fabs(want)))
            << where << ": " << got << ", want " << static_cast<double>(want);
    };
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<long double> prefix;
      for (int64_t c = 0; c < cols; ++c) {
        prefix.push_back(x.Get(r * cols + c));
        expect_near(scanned[0].Get(r * cols + c), LogSumExp(prefix),
                    "cumlogsumexp on " + std::string(DTypeName(t)) + " at " + std::to_string(r) +
                        "," + std::to_string(c));
      }
      expect_near(reduced[0].Get(r), LogSumExp(prefix),
                  "logsumexp on " + std::string(DTypeName(t)) + " row " + std::to_string(r));
    }
  }
}

// Complex max and min reduce over dim 1, their cumulative reduce_window, and
// cumlogsumexp with real parts offset by 500 (exp overflows in c64), against
// lexicographic loops and a long double log of the sum of exponentials
// (principal branch).
TEST(Reducers, ComplexMaxMinAndLogAddExp) {
  const int64_t rows = 3, cols = 8;
  for (DType t : {DType::kC64, DType::kC128}) {
    HostTensor x = RandomComplex(t, {rows, cols});
    for (const char* reducer : {"max", "min"}) {
      const bool max = reducer[1] == 'a';
      HostTensor init(t, {});
      SetAt(init, 0, Z(max ? -INFINITY : INFINITY, 0));
      auto reduced = MustRunOp({"reduce",
                                {x, init},
                                {{t, {rows}}},
                                {{"dimensions", std::vector<int64_t>{1}}, {"reducer", reducer}}});
      auto scanned =
          MustRunOp({"reduce_window", {x, init}, {{t, {rows, cols}}}, ScanAttrs(cols, reducer)});
      for (int64_t r = 0; r < rows; ++r) {
        Z best = At(x, r * cols);
        for (int64_t c = 0; c < cols; ++c) {
          const Z v = At(x, r * cols + c);
          if (max ? Less(best, v) : Less(v, best)) best = v;
          EXPECT_EQ(At(scanned[0], r * cols + c), best)
              << "cum" << reducer << " on " << DTypeName(t) << " at " << r << "," << c;
        }
        EXPECT_EQ(At(reduced[0], r), best) << reducer << " on " << DTypeName(t) << " row " << r;
      }
    }
    HostTensor big = RandomComplex(t, {rows, cols});
    for (int64_t i = 0; i < big.numel(); ++i) SetAt(big, i, At(big, i) + Z(500, 0));
    HostTensor init(t, {});
    SetAt(init, 0, Z(-INFINITY, 0));
    auto scanned = MustRunOp(
        {"reduce_window", {big, init}, {{t, {rows, cols}}}, ScanAttrs(cols, "logaddexp")});
    const long double tol = t == DType::kC64 ? 2e-6L : 1e-13L;
    for (int64_t r = 0; r < rows; ++r) {
      Z sum = 0;
      for (int64_t c = 0; c < cols; ++c) {
        sum += std::exp(At(big, r * cols + c) - Z(500, 0));
        const Z want = std::log(sum) + Z(500, 0), got = At(scanned[0], r * cols + c);
        EXPECT_LE(std::abs(got - want), tol * std::abs(want))
            << "cumlogsumexp on " << DTypeName(t) << " at " << r << "," << c << ": "
            << std::complex<double>(got) << ", want " << std::complex<double>(want);
      }
    }
  }
}

// Complex scatter max and min with duplicate indices (each row's updates
// combined one after another, lexicographically), against a loop.
TEST(Reducers, ComplexScatterMaxMinWithDuplicateIndices) {
  const int64_t n = 5, row = 3, m = 9;
  const std::vector<double> at = {0, 3, 0, 4, 3, 0, 1, 3, 0};
  HostTensor idx = HostTensor::FromDouble(DType::kI32, {m, 1}, at);
  for (DType t : {DType::kC64, DType::kC128})
    for (const char* mode : {"max", "min"}) {
      HostTensor x = RandomComplex(t, {n, row}), upd = RandomComplex(t, {m, row});
      auto out = MustRunOp({"scatter",
                            {x, idx, upd},
                            {{t, {n, row}}},
                            {{"update_window_dims", std::vector<int64_t>{1}},
                             {"inserted_window_dims", std::vector<int64_t>{0}},
                             {"scatter_dims_to_operand_dims", std::vector<int64_t>{0}},
                             {"index_vector_dim", int64_t{1}},
                             {"mode", mode}}});
      std::vector<Z> want;
      for (int64_t i = 0; i < x.numel(); ++i) want.push_back(At(x, i));
      for (int64_t i = 0; i < m; ++i)
        for (int64_t c = 0; c < row; ++c) {
          Z& w = want[static_cast<int64_t>(at[i]) * row + c];
          const Z u = At(upd, i * row + c);
          if (mode[1] == 'a' ? Less(w, u) : Less(u, w)) w = u;
        }
      for (int64_t i = 0; i < x.numel(); ++i)
        EXPECT_EQ(At(out[0], i), want[i]) << mode << " on " << DTypeName(t) << " at " << i;
    }
}

// A complex operand sorted by its real and imaginary parts as two keys of
// their own (the importer's form of lax.sort on complex numbers), on the
// CPU and the CUDA provider's rank sort; a complex key is refused.
TEST(Reducers, SortMovesComplexOperandsByTheirParts) {
  const int64_t rows = 3, cols = 11;
  for (DType t : {DType::kC64, DType::kC128}) {
    const DType part = t == DType::kC64 ? DType::kF32 : DType::kF64;
    HostTensor z = RandomComplex(t, {rows, cols}), re(part, {rows, cols}), im(part, {rows, cols});
    for (int64_t i = 0; i < z.numel(); ++i) {
      re.Set(i, static_cast<double>(At(z, i).real()));
      im.Set(i, static_cast<double>(At(z, i).imag()));
    }
    auto out = MustRunOp({"sort",
                          {z, re, im},
                          {{t, {rows, cols}}, {part, {rows, cols}}, {part, {rows, cols}}},
                          {{"dimension", int64_t{1}},
                           {"key", int64_t{1}},
                           {"order", "ascending"},
                           {"tie_keys", std::vector<int64_t>{2, 0, 0}}}});
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<Z> want;
      for (int64_t c = 0; c < cols; ++c) want.push_back(At(z, r * cols + c));
      std::stable_sort(want.begin(), want.end(), Less);
      for (int64_t c = 0; c < cols; ++c)
        EXPECT_EQ(At(out[0], r * cols + c), want[c]) << DTypeName(t) << " at " << r << "," << c;
    }
    auto bad = RunOp({"sort",
                      {z},
                      {{t, {rows, cols}}},
                      {{"dimension", int64_t{1}}, {"key", int64_t{0}}, {"order", "ascending"}}});
    ExpectError(bad.status(), {"sort", "key 0 is " + std::string(DTypeName(t))});
  }
}

// xor takes integers and i1, logaddexp floats and complex numbers; scatter
// combines by neither.
TEST(Reducers, RefusedWhereUndefined) {
  HostTensor f = Random(DType::kF32, {2, 3}, Rng()), i = Random(DType::kI32, {2, 3}, Rng(), -9, 9);
  auto reduce = [](const HostTensor& x, const char* reducer) {
    return RunOp({"reduce",
                  {x, HostTensor(x.dtype, {})},
                  {{x.dtype, {2}}},
                  {{"dimensions", std::vector<int64_t>{1}}, {"reducer", reducer}}});
  };
  ExpectError(reduce(f, "xor").status(), {"reduce", "'xor'", "f32"});
  ExpectError(reduce(i, "logaddexp").status(), {"reduce", "'logaddexp'", "i32"});
  auto scatter = RunOp({"scatter",
                        {i, HostTensor::FromDouble(DType::kI32, {1, 1}, {0}), i},
                        {{DType::kI32, {2, 3}}},
                        {{"update_window_dims", std::vector<int64_t>{1}},
                         {"inserted_window_dims", std::vector<int64_t>{}},
                         {"scatter_dims_to_operand_dims", std::vector<int64_t>{0}},
                         {"mode", "xor"}}});
  ExpectError(scatter.status(), {"scatter", "mode 'xor' is not replace, add, mul, max or min"});
}

}  // namespace
}  // namespace brt::test
