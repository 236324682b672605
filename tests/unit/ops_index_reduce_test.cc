// gather, scatter and reduce against loop references (reduce_window and
// select_and_scatter: ops_window_test.cc). Over 500 lines: one file per op
// family, so its _cuda run covers the whole family.
#include <cstring>
#include <limits>
#include <map>
#include <type_traits>

#include "test_util.h"

namespace brt::test {
namespace {

TEST(Gather, EmbeddingLookupClampsIndices) {
  // jnp.take(table, ids, axis=0) as JAX lowers it.
  HostTensor table = Random(DType::kF32, {10, 4}, Rng());
  HostTensor ids = HostTensor::FromDouble(DType::kI32, {2, 3, 1}, {0, 9, 3, 12, -2, 5});
  auto out = MustRunOp({"gather",
                        {table, ids},
                        {{DType::kF32, {2, 3, 4}}},
                        {{"offset_dims", std::vector<int64_t>{2}},
                         {"collapsed_slice_dims", std::vector<int64_t>{0}},
                         {"start_index_map", std::vector<int64_t>{0}},
                         {"index_vector_dim", 2},
                         {"slice_sizes", std::vector<int64_t>{1, 4}}}});
  const int64_t clamped[] = {0, 9, 3, 9, 0, 5};
  for (int64_t i = 0; i < 24; ++i) EXPECT_EQ(out[0].Get(i), table.Get(clamped[i / 4] * 4 + i % 4));
}

TEST(Gather, WindowsWithIndexVectorFirst) {
  // Operand [5,6]; indices [2, 3] with index_vector_dim 0 -> 3 start points (r, c);
  // windows of [2, 3], no collapsed dims: result [3, 2, 3] with offset dims 1, 2.
  HostTensor x = Random(DType::kF32, {5, 6}, Rng());
  HostTensor idx = HostTensor::FromDouble(DType::kI64, {2, 3}, {0, 3, 4, 1, 5, 2});
  auto out = MustRunOp({"gather",
                        {x, idx},
                        {{DType::kF32, {3, 2, 3}}},
                        {{"offset_dims", std::vector<int64_t>{1, 2}},
                         {"collapsed_slice_dims", std::vector<int64_t>{}},
                         {"start_index_map", std::vector<int64_t>{0, 1}},
                         {"index_vector_dim", 0},
                         {"slice_sizes", std::vector<int64_t>{2, 3}}}});
  const int64_t starts[3][2] = {{0, 1}, {3, 3}, {3, 2}};  // (4,5) clamps to (3,3)
  for (int64_t i = 0; i < 18; ++i) {
    auto o = Unravel(i, {3, 2, 3});
    EXPECT_EQ(out[0].Get(i), x.Get((starts[o[0]][0] + o[1]) * 6 + starts[o[0]][1] + o[2]));
  }
}

TEST(Scatter, AddAccumulatesDuplicatesAndSkipsOutOfBounds) {
  HostTensor x = Random(DType::kF32, {5, 3}, Rng());
  HostTensor idx = HostTensor::FromDouble(DType::kI32, {4, 1}, {1, 3, 1, 7});
  HostTensor upd = Random(DType::kF32, {4, 3}, Rng());
  std::vector<Attribute> attrs = {{"update_window_dims", std::vector<int64_t>{1}},
                                  {"inserted_window_dims", std::vector<int64_t>{0}},
                                  {"scatter_dims_to_operand_dims", std::vector<int64_t>{0}},
                                  {"index_vector_dim", 1},
                                  {"mode", "add"}};
  auto out = MustRunOp({"scatter", {x, idx, upd}, {{DType::kF32, {5, 3}}}, attrs});
  std::vector<double> ref = x.ToDouble();
  for (int r = 0; r < 3; ++r)  // row 3 (index 7) is out of bounds: skipped
    for (int c = 0; c < 3; ++c) ref[static_cast<int>(idx.Get(r)) * 3 + c] += upd.Get(r * 3 + c);
  EXPECT_LE(RelError(out[0].ToDouble(), ref), 1e-6);
  // Replace: StableHLO leaves the order of updates to one element
  // unspecified unless the indices are unique (a GPU races on them). Row 1
  // (indices 0 and 2) holds one of its two updates, element by element; every
  // other row is exact.
  attrs.back() = {"mode", "replace"};
  out = MustRunOp({"scatter", {x, idx, upd}, {{DType::kF32, {5, 3}}}, attrs});
  ref = x.ToDouble();
  ref[1 * 3 + 0] = ref[1 * 3 + 1] = ref[1 * 3 + 2] = NAN;
  for (int c = 0; c < 3; ++c) ref[3 * 3 + c] = upd.Get(1 * 3 + c);
  for (int64_t i = 0; i < 15; ++i) {
    const double got = out[0].Get(i);
    if (i / 3 == 1)
      EXPECT_TRUE(got == upd.Get(0 * 3 + i % 3) || got == upd.Get(2 * 3 + i % 3)) << i;
    else
      EXPECT_EQ(got, ref[i]) << i;
  }
  // Unique indices: exact.
  HostTensor unique_idx = HostTensor::FromDouble(DType::kI32, {4, 1}, {4, 0, 2, 7});
  out = MustRunOp({"scatter", {x, unique_idx, upd}, {{DType::kF32, {5, 3}}}, attrs});
  ref = x.ToDouble();
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      ref[static_cast<int>(unique_idx.Get(r)) * 3 + c] = upd.Get(r * 3 + c);
  EXPECT_EQ(out[0].ToDouble(), ref);
}

// Scatter-add into 1- and 2-byte tensors whose byte size is not a multiple of
// 4, many updates to the last elements among them: integer sums wrap as the
// type does; small integers keep f16 and bf16 sums exact. On CUDA the 1-byte
// adds must stay inside the tensor (kernels_data.cu, AtomicCombineByte) and
// the 2-byte integer ones take a 16-bit CAS (CUDA has no 16-bit integer
// atomicAdd); the emulation runs one thread, so it checks the values, not the
// atomicity.
TEST(Scatter, AddIntoNarrowTensorsOfOddByteSizes) {
  auto wrap = [](DType t, double v) {
    const int64_t i = static_cast<int64_t>(v);
    if (t == DType::kU8) return static_cast<double>(static_cast<uint8_t>(i));
    if (t == DType::kI8) return static_cast<double>(static_cast<int8_t>(static_cast<uint8_t>(i)));
    if (t == DType::kU16) return static_cast<double>(static_cast<uint16_t>(i));
    if (t == DType::kI16)
      return static_cast<double>(static_cast<int16_t>(static_cast<uint16_t>(i)));
    return v;
  };
  const std::vector<Attribute> attrs = {{"update_window_dims", std::vector<int64_t>{}},
                                        {"inserted_window_dims", std::vector<int64_t>{0}},
                                        {"scatter_dims_to_operand_dims", std::vector<int64_t>{0}},
                                        {"index_vector_dim", 1},
                                        {"mode", "add"}};
  for (DType t : {DType::kU8, DType::kI8, DType::kU16, DType::kI16, DType::kF16, DType::kBF16}) {
    for (int64_t n : {1, 2, 3, 5, 6, 7, 13, 66}) {
      const bool small = t == DType::kF16 || t == DType::kBF16;
      // 16-bit integers: sums of about 100 updates of up to 30000 wrap.
      const bool wide = t == DType::kU16 || t == DType::kI16;
      auto ints = [&](int64_t count, int64_t bound) {
        if (wide) bound *= 300;
        std::uniform_int_distribution<int64_t> v(t == DType::kU8 || t == DType::kU16 ? 0 : -bound,
                                                 bound);
        std::vector<double> r(count);
        for (double& e : r) e = static_cast<double>(v(Rng()));
        return HostTensor::FromDouble(t, {count}, r);
      };
      HostTensor x = ints(n, small ? 8 : 100);
      const int64_t m = 4 * n + 40;
      std::vector<double> at(m);
      std::uniform_int_distribution<int64_t> pick(0, n - 1);
      for (int64_t i = 0; i < m; ++i)  // a third at the last element, one in 16 out of bounds
        at[i] = i % 16 == 15 ? n + 1 : (i % 3 == 0 ? n - 1 : pick(Rng()));
      HostTensor idx = HostTensor::FromDouble(DType::kI32, {m, 1}, at);
      HostTensor upd = ints(m, small ? 4 : 90);
      auto out = MustRunOp({"scatter", {x, idx, upd}, {{t, {n}}}, attrs});
      std::vector<double> ref = x.ToDouble();
      for (int64_t i = 0; i < m; ++i)
        if (at[i] < n) ref[static_cast<int64_t>(at[i])] += upd.Get(i);
      for (double& r : ref) r = wrap(t, r);
      EXPECT_EQ(out[0].ToDouble(), ref) << DTypeName(t) << " n " << n;
    }
  }
  // select_and_scatter adds the same way: windows of 3, stride 2, over 9
  // increasing bytes select elements 2, 4, 6 and 8, the last alone in its word.
  for (DType t : {DType::kU8, DType::kI8, DType::kU16, DType::kI16}) {
    HostTensor x = HostTensor::FromDouble(t, {9}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
    const double big = t == DType::kU16 || t == DType::kI16 ? 32700 : 100;
    HostTensor source = HostTensor::FromDouble(t, {4}, {big, big + 1, big + 2, big + 3});
    auto out = MustRunOp({"select_and_scatter",
                          {x, source, HostTensor::FromDouble(t, {}, {60})},
                          {{t, {9}}},
                          {{"window_dimensions", std::vector<int64_t>{3}},
                           {"window_strides", std::vector<int64_t>{2}},
                           {"select", "GE"},
                           {"scatter", "add"}}});
    std::vector<double> ref(9, 60);
    for (int64_t o = 0; o < 4; ++o) ref[2 * o + 2] = wrap(t, 60 + big + o);
    EXPECT_EQ(out[0].ToDouble(), ref) << DTypeName(t);
  }
}

// Scatter attributes for an operand of `rank` 1 (single elements) or 2 (rows,
// the update windows) at index vectors of one component along dim 1.
std::vector<Attribute> ScatterAttrs(int rank, const std::string& mode) {
  return {{"update_window_dims", rank == 2 ? std::vector<int64_t>{1} : std::vector<int64_t>{}},
          {"inserted_window_dims", std::vector<int64_t>{0}},
          {"scatter_dims_to_operand_dims", std::vector<int64_t>{0}},
          {"index_vector_dim", 1},
          {"mode", mode}};
}

// m start indices into n rows: duplicates (a third at the last row), and out
// of bounds below (-1, -2) and above (n, n + 1), as i32.
std::vector<double> ScatterStarts(int64_t n, int64_t m) {
  std::uniform_int_distribution<int64_t> pick(0, n - 1);
  const double outside[] = {-1, static_cast<double>(n), -2, static_cast<double>(n + 1)};
  std::vector<double> at(m);
  for (int64_t i = 0; i < m; ++i)
    at[i] = i % 11 == 10 ? outside[i / 11 % 4] : (i % 3 == 0 ? n - 1 : pick(Rng()));
  return at;
}

// Scatter with every combiner (add, mul, max, min) on integers of each width
// and signedness and on i1 (on i1 add is or, mul and, max or, min and, as
// XLA computes pred): random bits, duplicate indices combining, out-of-bounds
// ones dropped, into single elements and rows of 3 of operands whose byte
// sizes are and are not multiples of 4 (on CUDA the 1-byte updates near the
// ends take the edge counters of kernels_data.cu), against a loop in T.
template <typename T>
void CheckIntegerScatter(DType dtype) {
  constexpr bool kBool = std::is_same_v<T, bool>;
  auto random_value = [] {
    const uint64_t bits = Rng()();
    if constexpr (kBool) return (bits & 1) != 0;
    T v;
    std::memcpy(&v, &bits, sizeof(T));
    return v;
  };
  using U =
      std::conditional_t<kBool, bool, std::make_unsigned_t<std::conditional_t<kBool, int, T>>>;
  const std::pair<const char*, std::function<T(T, T)>> combiners[] = {
      {"add", [](T a, T b) { return kBool ? T(a || b) : T(U(U(a) + U(b))); }},
      {"mul", [](T a, T b) { return kBool ? T(a && b) : T(U(uint64_t(U(a)) * uint64_t(U(b)))); }},
      {"max", [](T a, T b) { return std::max(a, b); }},
      {"min", [](T a, T b) { return std::min(a, b); }},
  };
  for (int rank : {1, 2})
    for (int64_t n : {1, 3, 5, 7, 13}) {
      const int64_t row = rank == 2 ? 3 : 1, m = 3 * n + 11;
      const std::vector<double> at = ScatterStarts(n, m);
      HostTensor idx = HostTensor::FromDouble(DType::kI32, {m, 1}, at);
      std::vector<int64_t> shape = {n}, upd_shape = {m};
      if (rank == 2) shape.push_back(row), upd_shape.push_back(row);
      HostTensor x(dtype, shape), upd(dtype, upd_shape);
      for (int64_t i = 0; i < x.numel(); ++i) x.as<T>()[i] = random_value();
      for (int64_t i = 0; i < upd.numel(); ++i) upd.as<T>()[i] = random_value();
      for (const auto& [mode, f] : combiners) {
        auto out =
            MustRunOp({"scatter", {x, idx, upd}, {{dtype, Dims(shape)}}, ScatterAttrs(rank, mode)});
        ASSERT_EQ(out.size(), 1u);
        std::vector<T> want(x.as<T>(), x.as<T>() + x.numel());
        for (int64_t i = 0; i < m; ++i)
          if (at[i] >= 0 && at[i] < n)
            for (int64_t c = 0; c < row; ++c) {
              const int64_t k = static_cast<int64_t>(at[i]) * row + c;
              want[k] = f(want[k], upd.as<T>()[i * row + c]);
            }
        EXPECT_EQ(std::vector<T>(out[0].template as<T>(), out[0].template as<T>() + x.numel()),
                  want)
            << mode << " on " << DTypeName(dtype) << " " << FormatShape(shape);
      }
    }
}

TEST(Scatter, EveryCombinerOnEveryIntegerTypeAndBoolean) {
  CheckIntegerScatter<int8_t>(DType::kI8);
  CheckIntegerScatter<uint8_t>(DType::kU8);
  CheckIntegerScatter<int16_t>(DType::kI16);
  CheckIntegerScatter<uint16_t>(DType::kU16);
  CheckIntegerScatter<int32_t>(DType::kI32);
  CheckIntegerScatter<uint32_t>(DType::kU32);
  CheckIntegerScatter<int64_t>(DType::kI64);
  CheckIntegerScatter<uint64_t>(DType::kU64);
  CheckIntegerScatter<bool>(DType::kI1);
}

// Scatter max, min and mul in every float type: random values with NaN, -inf,
// +inf, -0 and +0 among the operand and the updates (max and min propagate
// NaN and order -0 below +0, as StableHLO's maximum and minimum, and XLA's
// scatter on the CPU, do), products of powers of two (exact in any order, so
// the reference need not know the order a GPU combines duplicates in),
// duplicate indices and out-of-bounds ones dropped; against a float64 loop,
// zeros' signs included. mode "and" is refused.
TEST(Scatter, MaxMinAndProductInEveryFloatType) {
  auto max = [](double a, double b) -> double {
    if (std::isnan(a) || std::isnan(b)) return NAN;
    return a == b ? (std::signbit(a) ? b : a) : std::max(a, b);
  };
  auto min = [](double a, double b) -> double {
    if (std::isnan(a) || std::isnan(b)) return NAN;
    return a == b ? (std::signbit(a) ? a : b) : std::min(a, b);
  };
  const std::pair<const char*, std::function<double(double, double)>> combiners[] = {
      {"max", max}, {"min", min}, {"mul", [](double a, double b) { return a * b; }}};
  const double factors[] = {-2, -1, -0.5, 0.5, 1, 2, 0.25, -4};
  const double edges[] = {NAN, -INFINITY, INFINITY, -0.0, 0.0, 0.0, -0.0};
  for (DType t : {DType::kF32, DType::kF16, DType::kBF16, DType::kF64})
    for (int rank : {1, 2})
      for (const auto& [mode, f] : combiners) {
        const int64_t n = 7, row = rank == 2 ? 3 : 1, m = 4 * n;
        const std::vector<double> at = ScatterStarts(n, m);
        HostTensor idx = HostTensor::FromDouble(DType::kI32, {m, 1}, at);
        std::vector<int64_t> shape = {n}, upd_shape = {m};
        if (rank == 2) shape.push_back(row), upd_shape.push_back(row);
        const bool product = std::string(mode) == "mul";
        auto values = [&](const std::vector<int64_t>& s) {
          HostTensor v = Random(t, s, Rng(), -4, 4);
          std::uniform_int_distribution<int> pick(0, 7);
          for (int64_t i = 0; i < v.numel(); ++i) {
            if (product) v.Set(i, factors[pick(Rng())]);
            if (!product && i % 5 == 2) v.Set(i, edges[(i / 5) % 7]);
          }
          return v;
        };
        HostTensor x = values(shape), upd = values(upd_shape);
        auto run =
            MustRunOp({"scatter", {x, idx, upd}, {{t, Dims(shape)}}, ScatterAttrs(rank, mode)});
        ASSERT_EQ(run.size(), 1u);
        const std::vector<double> out = run[0].ToDouble();
        std::vector<double> want = x.ToDouble();
        for (int64_t i = 0; i < m; ++i)
          if (at[i] >= 0 && at[i] < n)
            for (int64_t c = 0; c < row; ++c) {
              double& w = want[static_cast<int64_t>(at[i]) * row + c];
              w = f(w, upd.Get(i * row + c));
            }
        for (int64_t i = 0; i < x.numel(); ++i)
          EXPECT_TRUE(std::isnan(want[i])
                          ? std::isnan(out[i])
                          : out[i] == want[i] && std::signbit(out[i]) == std::signbit(want[i]))
              << mode << " on " << DTypeName(t) << " " << FormatShape(shape) << " at " << i << ": "
              << out[i] << ", want " << want[i];
      }
  HostTensor x = Random(DType::kI32, {4}, Rng(), -9, 9);
  auto bad = RunOp({"scatter",
                    {x, HostTensor::FromDouble(DType::kI32, {1, 1}, {0}), x},
                    {{DType::kI32, {4}}},
                    {{"update_window_dims", std::vector<int64_t>{}},
                     {"inserted_window_dims", std::vector<int64_t>{0}},
                     {"scatter_dims_to_operand_dims", std::vector<int64_t>{0}},
                     {"mode", "and"}}});
  ExpectError(bad.status(), {"scatter", "mode 'and' is not replace, add, mul, max or min"});
}

// Indices of every integer type. gather clamps a start index into the
// operand: the largest u8, u16, u32 and u64 (above every i64) clamp to the
// last row, a negative i8 or i16 to the first; scatter drops an update whose
// index is out of range, the largest unsigned values included.
TEST(Scatter, GatherAndScatterTakeIndicesOfEveryIntegerType) {
  const int64_t n = 6;
  HostTensor x = Random(DType::kF32, {n, 4}, Rng());
  for (DType t : {DType::kI8, DType::kU8, DType::kI16, DType::kU16, DType::kI32, DType::kU32,
                  DType::kI64, DType::kU64}) {
    const bool is_unsigned =
        t == DType::kU8 || t == DType::kU16 || t == DType::kU32 || t == DType::kU64;
    HostTensor idx = HostTensor::FromDouble(t, {5, 1}, {2, 5, 0, 2, 6});
    // Element 3: the type's largest value (unsigned) or -3.
    if (t == DType::kU8) idx.as<uint8_t>()[3] = 255;
    if (t == DType::kU16) idx.as<uint16_t>()[3] = 65535;
    if (t == DType::kU32) idx.as<uint32_t>()[3] = 0xffffffffu;
    if (t == DType::kU64) idx.as<uint64_t>()[3] = ~uint64_t{0};
    if (!is_unsigned) idx.Set(3, -3);
    const int64_t clamped[] = {2, 5, 0, is_unsigned ? n - 1 : 0, n - 1};
    auto gathered = MustRunOp({"gather",
                               {x, idx},
                               {{DType::kF32, {5, 4}}},
                               {{"offset_dims", std::vector<int64_t>{1}},
                                {"collapsed_slice_dims", std::vector<int64_t>{0}},
                                {"start_index_map", std::vector<int64_t>{0}},
                                {"index_vector_dim", 1},
                                {"slice_sizes", std::vector<int64_t>{1, 4}}}});
    ASSERT_EQ(gathered.size(), 1u);
    for (int64_t i = 0; i < 20; ++i)
      EXPECT_EQ(gathered[0].Get(i), x.Get(clamped[i / 4] * 4 + i % 4)) << DTypeName(t) << " " << i;
    HostTensor upd = Random(DType::kF32, {5, 4}, Rng());
    for (const char* mode : {"add", "max", "replace"}) {
      auto out =
          MustRunOp({"scatter", {x, idx, upd}, {{DType::kF32, {n, 4}}}, ScatterAttrs(2, mode)});
      ASSERT_EQ(out.size(), 1u);
      std::vector<double> want = x.ToDouble();
      for (int64_t r : {0, 1, 2})  // rows 3 and 4 are out of range: dropped
        for (int c = 0; c < 4; ++c) {
          double& w = want[static_cast<int64_t>(idx.Get(r)) * 4 + c];
          const double v = upd.Get(r * 4 + c);
          w = std::string(mode) == "add" ? static_cast<float>(w + v)
                                         : (std::string(mode) == "max" ? std::max(w, v) : v);
        }
      EXPECT_EQ(out[0].ToDouble(), want) << mode << " with " << DTypeName(t) << " indices";
    }
  }
}

TEST(Reduce, EveryReducerOverSeveralAxes) {
  const std::vector<int64_t> shape = {3, 4, 5, 2};
  HostTensor x = Random(DType::kF32, shape, Rng(), 0.5, 1.5);
  struct Case {
    const char* reducer;
    double init;
    std::function<double(double, double)> f;
  };
  const Case cases[] = {{"add", 0, std::plus<double>()},
                        {"mul", 1, std::multiplies<double>()},
                        {"max", -INFINITY, [](double a, double b) { return std::max(a, b); }},
                        {"min", INFINITY, [](double a, double b) { return std::min(a, b); }}};
  for (auto dims : std::vector<std::vector<int64_t>>{{1, 3}, {0}, {3}, {0, 1, 2, 3}, {}}) {
    std::vector<int64_t> kept;
    for (int d = 0; d < 4; ++d)
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept.push_back(shape[d]);
    for (const Case& c : cases) {
      HostTensor init = HostTensor::FromDouble(DType::kF32, {}, {c.init});
      auto out = MustRunOp({"reduce",
                            {x, init},
                            {{DType::kF32, Dims(kept)}},
                            {{"dimensions", dims}, {"reducer", c.reducer}}});
      std::vector<double> ref(NumElements(kept).value(), c.init);
      for (int64_t i = 0; i < x.numel(); ++i) {
        auto idx = Unravel(i, shape);
        std::vector<int64_t> k;
        for (int d = 0; d < 4; ++d)
          if (std::find(dims.begin(), dims.end(), d) == dims.end()) k.push_back(idx[d]);
        double& r = ref[Ravel(k, kept)];
        r = c.f(r, x.Get(i));
      }
      EXPECT_LE(RelError(out[0].ToDouble(), ref), 1e-6)
          << c.reducer << " dims " << FormatShape(dims);
    }
  }
}

TEST(Reduce, BooleanAndIntegers) {
  HostTensor p = HostTensor::FromDouble(DType::kI1, {2, 3}, {1, 1, 0, 1, 1, 1});
  HostTensor t = HostTensor::FromDouble(DType::kI1, {}, {1}),
             f = HostTensor::FromDouble(DType::kI1, {}, {0});
  EXPECT_EQ(MustRunOp({"reduce",
                       {p, t},
                       {{DType::kI1, {2}}},
                       {{"dimensions", std::vector<int64_t>{1}}, {"reducer", "and"}}})[0]
                .ToDouble(),
            (std::vector<double>{0, 1}));
  EXPECT_EQ(MustRunOp({"reduce",
                       {p, f},
                       {{DType::kI1, {3}}},
                       {{"dimensions", std::vector<int64_t>{0}}, {"reducer", "or"}}})[0]
                .ToDouble(),
            (std::vector<double>{1, 1, 1}));
  HostTensor i = HostTensor::FromDouble(DType::kI64, {4}, {5, -2, 9, 1});
  HostTensor z = HostTensor::FromDouble(DType::kI64, {}, {0});
  EXPECT_EQ(MustRunOp({"reduce",
                       {i, z},
                       {{DType::kI64, {}}},
                       {{"dimensions", std::vector<int64_t>{0}}, {"reducer", "add"}}})[0]
                .ToDouble(),
            (std::vector<double>{13}));
}

// reduce with every reducer on integers of each width and signedness (add
// and mul wrap modulo 2^n), random bits over several sets of axes and an init
// that is no identity, against a loop in T.
template <typename T>
void CheckIntegerReduce(DType dtype) {
  const std::vector<int64_t> shape = {3, 4, 37};
  auto random_value = [] {
    const uint64_t bits = Rng()();
    T v;
    std::memcpy(&v, &bits, sizeof(T));
    return v;
  };
  HostTensor x(dtype, shape), init(dtype, {});
  for (int64_t i = 0; i < x.numel(); ++i) x.as<T>()[i] = random_value();
  using U = std::make_unsigned_t<T>;
  const std::pair<const char*, std::function<T(T, T)>> reducers[] = {
      {"add", [](T a, T b) { return T(U(U(a) + U(b))); }},
      {"mul", [](T a, T b) { return T(U(uint64_t(U(a)) * uint64_t(U(b)))); }},
      {"max", [](T a, T b) { return std::max(a, b); }},
      {"min", [](T a, T b) { return std::min(a, b); }},
      {"and", [](T a, T b) { return T(a & b); }},
      {"or", [](T a, T b) { return T(a | b); }},
  };
  for (auto dims : std::vector<std::vector<int64_t>>{{2}, {0}, {1}, {0, 2}, {0, 1, 2}}) {
    std::vector<int64_t> kept;
    for (int d = 0; d < 3; ++d)
      if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept.push_back(shape[d]);
    for (const auto& [reducer, f] : reducers) {
      // mul of random values is 0 after a few even factors: odd ones keep it alive.
      if (std::string(reducer) == "mul")
        for (int64_t i = 0; i < x.numel(); ++i) x.as<T>()[i] |= T(1);
      init.as<T>()[0] = random_value();
      auto out = MustRunOp({"reduce",
                            {x, init},
                            {{dtype, Dims(kept)}},
                            {{"dimensions", dims}, {"reducer", reducer}}});
      std::vector<T> want(NumElements(kept).value(), init.as<T>()[0]);
      for (int64_t i = 0; i < x.numel(); ++i) {
        auto idx = Unravel(i, shape);
        std::vector<int64_t> k;
        for (int d = 0; d < 3; ++d)
          if (std::find(dims.begin(), dims.end(), d) == dims.end()) k.push_back(idx[d]);
        T& w = want[Ravel(k, kept)];
        w = f(w, x.as<T>()[i]);
      }
      EXPECT_EQ(std::vector<T>(out[0].template as<T>(), out[0].template as<T>() + out[0].numel()),
                want)
          << reducer << " over " << FormatShape(dims) << " on " << DTypeName(dtype);
    }
  }
}

TEST(Reduce, EveryReducerOnEveryIntegerType) {
  CheckIntegerReduce<int8_t>(DType::kI8);
  CheckIntegerReduce<uint8_t>(DType::kU8);
  CheckIntegerReduce<int16_t>(DType::kI16);
  CheckIntegerReduce<uint16_t>(DType::kU16);
  CheckIntegerReduce<int32_t>(DType::kI32);
  CheckIntegerReduce<uint32_t>(DType::kU32);
  CheckIntegerReduce<int64_t>(DType::kI64);
  CheckIntegerReduce<uint64_t>(DType::kU64);
}

// A reduction over an axis of length 0 is its init value at every result
// element: rows (the innermost axis empty), columns (an outer axis empty),
// an empty middle axis, and every reducer, in floats, halves and integers.
TEST(Reduce, EmptyAxisGivesTheInitEverywhere) {
  struct Shape {
    std::vector<int64_t> in, dims, kept;
  };
  const Shape shapes[] = {{{3, 0}, {1}, {3}},
                          {{0, 5}, {0}, {5}},
                          {{2, 0, 3}, {1}, {2, 3}},
                          {{4, 2, 0}, {1, 2}, {4}},
                          {{0}, {0}, {}}};
  const std::pair<const char*, double> reducers[] = {
      {"add", 2.5}, {"mul", -3}, {"max", 7}, {"min", -4}};
  for (DType t : {DType::kF32, DType::kF16, DType::kI32, DType::kI8}) {
    for (const Shape& s : shapes) {
      for (const auto& [reducer, init] : reducers) {
        const double v = t == DType::kI32 || t == DType::kI8 ? std::trunc(init) : init;
        auto out = MustRunOp({"reduce",
                              {HostTensor(t, s.in), HostTensor::FromDouble(t, {}, {v})},
                              {{t, Dims(s.kept)}},
                              {{"dimensions", s.dims}, {"reducer", reducer}}});
        EXPECT_EQ(out[0].ToDouble(), std::vector<double>(NumElements(s.kept).value(), v))
            << DTypeName(t) << " " << reducer << " over " << FormatShape(s.dims) << " of "
            << FormatShape(s.in);
      }
    }
  }
}

// Large f32 sums go to oneDNN's reduction when the init value is 0.
TEST(Reduce, LargeSumWithZeroAndNonZeroInit) {
  const std::vector<int64_t> shape = {64, 33, 40};
  HostTensor x = Random(DType::kF32, shape, Rng());
  for (double init : {0.0, 3.0}) {
    for (auto dims : std::vector<std::vector<int64_t>>{{2}, {0, 2}, {1}}) {
      std::vector<int64_t> kept;
      for (int d = 0; d < 3; ++d)
        if (std::find(dims.begin(), dims.end(), d) == dims.end()) kept.push_back(shape[d]);
      HostTensor init_t = HostTensor::FromDouble(DType::kF32, {}, {init});
      auto out = MustRunOp({"reduce",
                            {x, init_t},
                            {{DType::kF32, Dims(kept)}},
                            {{"dimensions", dims}, {"reducer", "add"}}});
      std::vector<double> ref(NumElements(kept).value(), init);
      for (int64_t i = 0; i < x.numel(); ++i) {
        auto idx = Unravel(i, shape);
        std::vector<int64_t> k;
        for (int d = 0; d < 3; ++d)
          if (std::find(dims.begin(), dims.end(), d) == dims.end()) k.push_back(idx[d]);
        ref[Ravel(k, kept)] += x.Get(i);
      }
      EXPECT_LE(RelError(out[0].ToDouble(), ref), 1e-5)
          << "init " << init << " dims " << FormatShape(dims);
    }
  }
}

// Long reductions over rows (the innermost dim) and over columns: the CUDA
// provider splits them across blocks and combines partials, applying the
// init value once.
TEST(Reduce, LongRowsAndColumns) {
  for (bool rows : {true, false}) {
    const std::vector<int64_t> shape =
        rows ? std::vector<int64_t>{3, 20000} : std::vector<int64_t>{20000, 3};
    const std::vector<int64_t> dims = {rows ? 1 : 0};
    HostTensor x = Random(DType::kF32, shape, Rng(), -1, 1);
    for (const char* reducer : {"add", "max"}) {
      const bool add = std::string(reducer) == "add";
      const double init = add ? 2.0 : 0.5;
      auto out = MustRunOp({"reduce",
                            {x, HostTensor::FromDouble(DType::kF32, {}, {init})},
                            {{DType::kF32, {3}}},
                            {{"dimensions", dims}, {"reducer", reducer}}});
      std::vector<double> ref(3, init);
      for (int64_t i = 0; i < x.numel(); ++i) {
        double& r = ref[rows ? i / 20000 : i % 3];
        r = add ? r + x.Get(i) : std::max(r, x.Get(i));
      }
      EXPECT_LE(RelError(out[0].ToDouble(), ref), 1e-5)
          << reducer << (rows ? " over rows" : " over columns");
    }
  }
}

// f16 and bf16 sums accumulate in f32 and round once: over 600 values a
// 16-bit accumulator would be off by far more than one rounding of the result.
TEST(Reduce, HalfAndBfloat16SumInFloat) {
  for (DType t : {DType::kF16, DType::kBF16}) {
    HostTensor x = Random(t, {600, 3}, Rng(), 0.5, 1.5);
    for (int64_t dim : {0, 1}) {
      const std::vector<int64_t> kept =
          dim == 0 ? std::vector<int64_t>{3} : std::vector<int64_t>{600};
      auto out = MustRunOp({"reduce",
                            {x, HostTensor::FromDouble(t, {}, {0})},
                            {{t, Dims(kept)}},
                            {{"dimensions", std::vector<int64_t>{dim}}, {"reducer", "add"}}});
      std::vector<double> ref(kept[0], 0.0);
      for (int64_t i = 0; i < x.numel(); ++i) ref[dim == 0 ? i % 3 : i / 3] += x.Get(i);
      const double one_rounding = t == DType::kF16 ? std::ldexp(1, -11) : std::ldexp(1, -8);
      EXPECT_LE(RelError(out[0].ToDouble(), ref), one_rounding) << DTypeName(t) << " dim " << dim;
    }
  }
}

// Rows long enough for the lane-parallel loop, with a tail that is not a
// multiple of its 8 lanes: a NaN anywhere in a row makes its max, min and sum
// NaN; integer sums are exact.
TEST(Reduce, RowsWithNaNAndIntegerRows) {
  HostTensor x = Random(DType::kF32, {4, 37}, Rng(), -1, 1);
  x.Set(37 * 1 + 3, NAN);   // row 1, in the first lanes
  x.Set(37 * 2 + 36, NAN);  // row 2, in the tail
  for (const char* reducer : {"add", "max", "min"}) {
    auto out = MustRunOp({"reduce",
                          {x, HostTensor::FromDouble(DType::kF32, {}, {0.25})},
                          {{DType::kF32, {4}}},
                          {{"dimensions", std::vector<int64_t>{1}}, {"reducer", reducer}}});
    for (int64_t row = 0; row < 4; ++row) {
      double want = 0.25;
      for (int64_t i = 0; i < 37; ++i) {
        const double v = x.Get(row * 37 + i);
        want = std::isnan(v) || std::isnan(want) ? NAN
               : reducer[0] == 'a'               ? want + v
               : reducer[1] == 'a'               ? std::max(want, v)
                                                 : std::min(want, v);
      }
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(out[0].Get(row))) << reducer << " row " << row;
      } else {
        EXPECT_NEAR(out[0].Get(row), want, 1e-5) << reducer << " row " << row;
      }
    }
  }
  std::vector<double> ints;
  for (int64_t i = 0; i < 3 * 41; ++i) ints.push_back(static_cast<double>(i * 7919 % 1000 - 500));
  HostTensor n = HostTensor::FromDouble(DType::kI32, {3, 41}, ints);
  auto sums = MustRunOp({"reduce",
                         {n, HostTensor::FromDouble(DType::kI32, {}, {5})},
                         {{DType::kI32, {3}}},
                         {{"dimensions", std::vector<int64_t>{1}}, {"reducer", "add"}}});
  for (int64_t row = 0; row < 3; ++row) {
    double want = 5;
    for (int64_t i = 0; i < 41; ++i) want += ints[row * 41 + i];
    EXPECT_EQ(sums[0].Get(row), want) << "row " << row;
  }
}

// Enough rows or columns (at least 65536 elements) that the CPU splits them
// over its threads: rows by row, columns by blocks of 64 (70 columns: one
// full block and a partial one), each with an init value and NaNs in some
// rows or columns; i32 sums exact.
TEST(Reduce, ManyRowsAndColumnsSplitOverThreads) {
  for (bool rows : {true, false}) {
    const int64_t outer = rows ? 2000 : 1500, inner = rows ? 37 : 70;
    const int64_t results = rows ? outer : inner;
    const std::vector<int64_t> dims = {rows ? 1 : 0};
    HostTensor x = Random(DType::kF32, {outer, inner}, Rng(), -1, 1);
    x.Set(5 * inner + 3, NAN), x.Set((outer - 1) * inner + inner - 1, NAN);
    for (const char* reducer : {"add", "max", "min"}) {
      auto out = MustRunOp({"reduce",
                            {x, HostTensor::FromDouble(DType::kF32, {}, {0.25})},
                            {{DType::kF32, {results}}},
                            {{"dimensions", dims}, {"reducer", reducer}}});
      std::vector<double> want(results, 0.25);
      for (int64_t i = 0; i < x.numel(); ++i) {
        double& w = want[rows ? i / inner : i % inner];
        const double v = x.Get(i);
        w = std::isnan(v) || std::isnan(w) ? NAN
            : reducer[0] == 'a'            ? w + v
            : reducer[1] == 'a'            ? std::max(w, v)
                                           : std::min(w, v);
      }
      for (int64_t r = 0; r < results; ++r) {
        if (std::isnan(want[r])) {
          EXPECT_TRUE(std::isnan(out[0].Get(r))) << reducer << " result " << r;
        } else {
          ASSERT_NEAR(out[0].Get(r), want[r], 1e-4) << reducer << " result " << r;
        }
      }
    }
    HostTensor n = Random(DType::kI32, {outer, inner}, Rng(), -1000, 1000);
    auto sums = MustRunOp({"reduce",
                           {n, HostTensor::FromDouble(DType::kI32, {}, {5})},
                           {{DType::kI32, {results}}},
                           {{"dimensions", dims}, {"reducer", "add"}}});
    std::vector<double> want(results, 5);
    for (int64_t i = 0; i < n.numel(); ++i) want[rows ? i / inner : i % inner] += n.Get(i);
    EXPECT_EQ(sums[0].ToDouble(), want) << (rows ? "rows" : "columns");
  }
}

}  // namespace
}  // namespace brt::test

namespace brt::test {
namespace {

// A generated row reduction assumes a power-of-two block of at most 256
// threads; an executable that asks for another is refused when it loads,
// naming the op and the size, instead of corrupting results on the GPU.
TEST(GeneratedKernels, ABlockSizeTheKernelCannotRunIsRefusedAtLoad) {
  if (TestDevice().kind != DeviceKind::kCuda) GTEST_SKIP() << "generated kernels run on CUDA";
  auto load = [](int64_t block) {
    ExecutableBuilder b("brt-unit-test");
    const std::string ptx = ".version 8.0\n.target sm_80\n";
    b.AddKernel("brt_kernel_0", "ptx:compute_80", std::vector<uint8_t>(ptx.begin(), ptx.end()), "");
    FunctionBuilder& f = b.AddFunction("main");
    ValueId x = f.Input("x", DType::kF32, {4, 8}, TestDevice());
    ValueId init = f.Input("init", DType::kF32, {}, TestDevice());
    f.Output("y", f.Op("reduce", {x, init}, {{DType::kF32, {4}}},
                       {{"dimensions", std::vector<int64_t>{1}},
                        {"reducer", "add"},
                        {"kernel", "brt_kernel_0"},
                        {"block_size", block}},
                       TestDevice())[0]);
    return LoadBuilt(b, TestOptions()).status();
  };
  ExpectError(load(300), {"reduce", "block_size 300", "power of two up to 256"});
  ExpectError(load(96), {"block_size 96"});
  ExpectError(load(2048), {"block_size 2048 is outside 1..1024"});
}

}  // namespace
}  // namespace brt::test
