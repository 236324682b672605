// reduce_window (pooling, cumulative ops) and select_and_scatter (a
// pooling's gradient) against loop references, on the CPU provider and, in
// the _cuda and _cuda_emulated runs, the CUDA provider.
#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <type_traits>

#include "test_util.h"

namespace brt::test {
namespace {

TEST(ReduceWindow, MaxPoolWithPaddingAndSumWithDilation) {
  const std::vector<int64_t> shape = {1, 5, 6, 2};  // NHWC
  HostTensor x = Random(DType::kF32, shape, Rng());
  auto reference = [&](bool is_max, std::vector<int64_t> win, std::vector<int64_t> str,
                       std::vector<int64_t> wdil, std::vector<int64_t> pad,
                       std::vector<int64_t> os) {
    std::vector<double> ref;
    for (int64_t o = 0; o < NumElements(os).value(); ++o) {
      auto oi = Unravel(o, os);
      double acc = is_max ? -INFINITY : 0;
      for (int64_t w = 0; w < NumElements(win).value(); ++w) {
        auto wi = Unravel(w, win);
        std::vector<int64_t> ii(4);
        bool inside = true;
        for (int d = 0; d < 4; ++d) {
          ii[d] = oi[d] * str[d] + wi[d] * wdil[d] - pad[2 * d];
          inside = inside && ii[d] >= 0 && ii[d] < shape[d];
        }
        if (inside)
          acc = is_max ? std::max(acc, x.Get(Ravel(ii, shape))) : acc + x.Get(Ravel(ii, shape));
      }
      ref.push_back(acc);
    }
    return ref;
  };
  HostTensor ninf = HostTensor::FromDouble(DType::kF32, {}, {-INFINITY});
  // 3x3 max pool, stride 2, padding 1 on H and (1, 0) on W: H 5 -> 3, W 6 -> 3.
  auto bad = RunOp({"reduce_window",
                    {x, ninf},
                    {{DType::kF32, {1, 3, 3, 2}}},
                    {{"window_dimensions", std::vector<int64_t>{1, 3, 3, 1}},
                     {"padding", std::vector<int64_t>{0, 0, 1, 1, 1, 0}},
                     {"reducer", "max"}}});
  ExpectError(bad.status(), {"padding: 2 per dimension"});
  auto out = MustRunOp({"reduce_window",
                        {x, ninf},
                        {{DType::kF32, {1, 3, 3, 2}}},
                        {{"window_dimensions", std::vector<int64_t>{1, 3, 3, 1}},
                         {"window_strides", std::vector<int64_t>{1, 2, 2, 1}},
                         {"padding", std::vector<int64_t>{0, 0, 1, 1, 1, 0, 0, 0}},
                         {"reducer", "max"}}});
  EXPECT_EQ(out[0].ToDouble(), reference(true, {1, 3, 3, 1}, {1, 2, 2, 1}, {1, 1, 1, 1},
                                         {0, 0, 1, 1, 1, 0, 0, 0}, {1, 3, 3, 2}));
  HostTensor zero = HostTensor::FromDouble(DType::kF32, {}, {0});
  out = MustRunOp({"reduce_window",
                   {x, zero},
                   {{DType::kF32, {1, 3, 4, 2}}},
                   {{"window_dimensions", std::vector<int64_t>{1, 2, 2, 1}},
                    {"window_dilations", std::vector<int64_t>{1, 2, 2, 1}},
                    {"reducer", "add"}}});
  EXPECT_LE(RelError(out[0].ToDouble(), reference(false, {1, 2, 2, 1}, {1, 1, 1, 1}, {1, 2, 2, 1},
                                                  {0, 0, 0, 0, 0, 0, 0, 0}, {1, 3, 4, 2})),
            1e-6);
}

// NCHW pooling (window on the last two dims) and an init value that is not
// the identity: oneDNN pooling assumes the identity, so brt's loop must run.
TEST(ReduceWindow, NchwPoolingAndNonIdentityInit) {
  const std::vector<int64_t> shape = {2, 3, 7, 8};
  HostTensor x = Random(DType::kF32, shape, Rng());
  for (double init : {-static_cast<double>(INFINITY), 0.25}) {
    HostTensor init_t = HostTensor::FromDouble(DType::kF32, {}, {init});
    auto out = MustRunOp({"reduce_window",
                          {x, init_t},
                          {{DType::kF32, {2, 3, 3, 4}}},
                          {{"window_dimensions", std::vector<int64_t>{1, 1, 3, 2}},
                           {"window_strides", std::vector<int64_t>{1, 1, 2, 2}},
                           {"reducer", "max"}}});
    std::vector<double> ref;
    for (int64_t o = 0; o < 2 * 3 * 3 * 4; ++o) {
      auto oi = Unravel(o, {2, 3, 3, 4});
      double acc = init;
      for (int64_t h = 0; h < 3; ++h)
        for (int64_t w = 0; w < 2; ++w)
          acc = std::max(acc, x.Get(Ravel({oi[0], oi[1], oi[2] * 2 + h, oi[3] * 2 + w}, shape)));
      ref.push_back(acc);
    }
    EXPECT_EQ(out[0].ToDouble(), ref) << "init " << init;
  }
}

// reduce_window with every reducer on integers of each width and signedness
// and on i1 (add and mul wrap modulo 2^n; on i1 add is or and mul is and,
// as XLA computes pred), over random bits with strides, padding and both
// dilations and an init that is no identity, against a loop in T.
template <typename T>
void CheckIntegerWindows(DType dtype) {
  const std::vector<int64_t> shape = {5, 6}, window = {2, 3}, strides = {2, 1}, base_dil = {1, 2},
                             win_dil = {2, 1}, pad = {1, 0, 2, 1};
  std::vector<int64_t> out_shape;
  for (int d = 0; d < 2; ++d) {
    const int64_t padded = (shape[d] - 1) * base_dil[d] + 1 + pad[2 * d] + pad[2 * d + 1];
    out_shape.push_back((padded - ((window[d] - 1) * win_dil[d] + 1)) / strides[d] + 1);
  }
  constexpr bool kBool = std::is_same_v<T, bool>;
  auto random_value = [] {
    const uint64_t bits = Rng()();
    if constexpr (kBool) return (bits & 1) != 0;
    T v;
    std::memcpy(&v, &bits, sizeof(T));
    return v;
  };
  HostTensor x(dtype, shape), init(dtype, {});
  for (int64_t i = 0; i < x.numel(); ++i) x.as<T>()[i] = random_value();
  using U =
      std::conditional_t<kBool, bool, std::make_unsigned_t<std::conditional_t<kBool, int, T>>>;
  const std::pair<const char*, std::function<T(T, T)>> reducers[] = {
      {"add", [](T a, T b) { return kBool ? T(a || b) : T(U(U(a) + U(b))); }},
      {"mul", [](T a, T b) { return kBool ? T(a && b) : T(U(uint64_t(U(a)) * uint64_t(U(b)))); }},
      {"max", [](T a, T b) { return std::max(a, b); }},
      {"min", [](T a, T b) { return std::min(a, b); }},
      {"and", [](T a, T b) { return kBool ? T(a && b) : T(a & b); }},
      {"or", [](T a, T b) { return kBool ? T(a || b) : T(a | b); }},
  };
  for (const auto& [reducer, f] : reducers) {
    init.as<T>()[0] = random_value();
    auto out = MustRunOp({"reduce_window",
                          {x, init},
                          {{dtype, Dims(out_shape)}},
                          {{"window_dimensions", window},
                           {"window_strides", strides},
                           {"base_dilations", base_dil},
                           {"window_dilations", win_dil},
                           {"padding", pad},
                           {"reducer", reducer}}});
    std::vector<T> want;
    for (int64_t o = 0; o < NumElements(out_shape).value(); ++o) {
      auto oi = Unravel(o, out_shape);
      T acc = init.as<T>()[0];
      for (int64_t w = 0; w < NumElements(window).value(); ++w) {
        auto wi = Unravel(w, window);
        std::vector<int64_t> ii(2);
        bool inside = true;
        for (int d = 0; d < 2; ++d) {
          const int64_t pos = oi[d] * strides[d] + wi[d] * win_dil[d] - pad[2 * d];
          inside = inside && pos >= 0 && pos % base_dil[d] == 0 && pos / base_dil[d] < shape[d];
          ii[d] = pos / base_dil[d];
        }
        if (inside) acc = f(acc, x.as<T>()[Ravel(ii, shape)]);
      }
      want.push_back(acc);
    }
    EXPECT_EQ(std::vector<T>(out[0].template as<T>(), out[0].template as<T>() + out[0].numel()),
              want)
        << reducer << " on " << DTypeName(dtype);
  }
}

TEST(ReduceWindow, EveryReducerOnEveryIntegerTypeAndBoolean) {
  CheckIntegerWindows<int8_t>(DType::kI8);
  CheckIntegerWindows<uint8_t>(DType::kU8);
  CheckIntegerWindows<int16_t>(DType::kI16);
  CheckIntegerWindows<uint16_t>(DType::kU16);
  CheckIntegerWindows<int32_t>(DType::kI32);
  CheckIntegerWindows<uint32_t>(DType::kU32);
  CheckIntegerWindows<int64_t>(DType::kI64);
  CheckIntegerWindows<uint64_t>(DType::kU64);
  CheckIntegerWindows<bool>(DType::kI1);
}

// A multiply body (lax.reduce_window with lax.mul, a cumulative product) in
// floats, against a float64 loop; and/or are refused on floats by name.
TEST(ReduceWindow, ProductInFloatsAndNoBitwiseReducers) {
  const std::vector<int64_t> shape = {4, 9};
  for (DType t : {DType::kF32, DType::kF64, DType::kBF16}) {
    HostTensor x = Random(t, shape, Rng(), 0.5, 1.5);
    HostTensor init = HostTensor::FromDouble(t, {}, {1});
    auto out = MustRunOp({"reduce_window",
                          {x, init},
                          {{t, {4, 9}}},
                          {{"window_dimensions", std::vector<int64_t>{1, 9}},
                           {"padding", std::vector<int64_t>{0, 0, 8, 0}},
                           {"reducer", "mul"}}});
    std::vector<double> ref;
    for (int64_t r = 0; r < 4; ++r) {
      double acc = 1;
      for (int64_t c = 0; c < 9; ++c) ref.push_back(acc *= x.Get(r * 9 + c));
    }
    EXPECT_LE(RelError(out[0].ToDouble(), ref), t == DType::kBF16 ? 2e-2 : 1e-6) << DTypeName(t);
  }
  HostTensor x = Random(DType::kF32, shape, Rng());
  auto bad = RunOp({"reduce_window",
                    {x, HostTensor::FromDouble(DType::kF32, {}, {0})},
                    {{DType::kF32, {4, 9}}},
                    {{"window_dimensions", std::vector<int64_t>{1, 1}}, {"reducer", "and"}}});
  ExpectError(bad.status(), {"reduce_window", "'and'", "f32"});
}

// Max windows over inputs with -inf and NaN, and windows wholly in the
// padding, as StableHLO defines them: NaN propagates, -inf stays -inf (and
// an empty window is the init, -inf). oneDNN's max pooling, which runs the
// rank 3-5 f32 ones, gave the lowest float for both (lax.cummax, found by the
// model fuzzer). Against a float64 loop, the window along dim 0 (cummax's)
// or the last two (pooling), with each input clean and with the edge values.
TEST(ReduceWindow, MaxOfInfinityAndNan) {
  struct Case {
    std::vector<int64_t> shape, window, padding;
  };
  const Case cases[] = {
      {{5, 3, 4}, {5, 1, 1}, {4, 0, 0, 0, 0, 0}},              // cummax along dim 0
      {{2, 3, 6, 5}, {1, 1, 3, 2}, {0, 0, 0, 0, 1, 1, 0, 1}},  // pooling
      {{2, 2, 3}, {1, 1, 2}, {0, 0, 0, 0, 3, 0}},              // windows wholly in the padding
      // NHWC pooling over more elements than one thread scans
      {{2, 48, 48, 16}, {1, 2, 2, 1}, {0, 0, 0, 0, 0, 0, 0, 0}},
  };
  HostTensor ninf = HostTensor::FromDouble(DType::kF32, {}, {-INFINITY});
  std::mt19937_64 rng(40);  // its own: later tests' data (ties) follow Rng()'s sequence
  for (const Case& c : cases)
    for (int edges : {0, 1, 2}) {
      HostTensor x = Random(DType::kF32, c.shape, rng);
      if (edges == 1) {
        x.Set(0, -INFINITY), x.Set(x.numel() / 2, NAN), x.Set(x.numel() - 1, -INFINITY);
        x.Set(1, -std::numeric_limits<float>::max());
      }
      // Only the last element, which a scan split over threads finds last
      // (oneDNN's pooling would drop it).
      if (edges == 2) x.Set(x.numel() - 1, NAN);
      const int r = static_cast<int>(c.shape.size());
      std::vector<int64_t> out_shape(r);
      for (int d = 0; d < r; ++d)
        out_shape[d] = c.shape[d] + c.padding[2 * d] + c.padding[2 * d + 1] - c.window[d] + 1;
      auto out =
          MustRunOp(
              {"reduce_window",
               {x, ninf},
               {{DType::kF32, Dims(out_shape)}},
               {{"window_dimensions", c.window}, {"padding", c.padding}, {"reducer", "max"}}})[0]
              .ToDouble();
      for (int64_t o = 0; o < NumElements(out_shape).value(); ++o) {
        const std::vector<int64_t> oi = Unravel(o, out_shape);
        double want = -INFINITY;
        for (int64_t w = 0; w < NumElements(c.window).value(); ++w) {
          const std::vector<int64_t> wi = Unravel(w, c.window);
          std::vector<int64_t> ii(r);
          bool inside = true;
          for (int d = 0; d < r; ++d) {
            ii[d] = oi[d] + wi[d] - c.padding[2 * d];
            inside = inside && ii[d] >= 0 && ii[d] < c.shape[d];
          }
          const double v = inside ? x.Get(Ravel(ii, c.shape)) : -INFINITY;
          want = std::isnan(want) || std::isnan(v) ? NAN : std::max(want, v);
        }
        EXPECT_TRUE(std::isnan(want) ? std::isnan(out[o]) : out[o] == want)
            << FormatShape(c.shape) << " edges " << edges << " at " << o << ": " << out[o]
            << ", want " << want;
      }
    }
}

// IEEE maximum and minimum in float64: NaN wins, -0 orders below +0.
double IeeeMax(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return NAN;
  return a == b ? (std::signbit(a) ? b : a) : std::max(a, b);
}
double IeeeMin(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return NAN;
  return a == b ? (std::signbit(a) ? a : b) : std::min(a, b);
}

// reduce_window whose trailing dims the window leaves alone (channels-last
// pooling: the features; or features and width) combines whole rows: max,
// min, add and mul with strides, padding (windows wholly in it give the
// init), window dilations, inits that are no identity and enough output
// lines to split between threads, over data with NaN, -inf, and ties of -0
// and +0 (each window's max must be +0 where it holds one, its min -0), in
// f32, f64, i32 and i64, against float64 loops; bit for bit but for the
// rounding of float sums and products. The _baseline run takes the loops
// built without AVX2.
TEST(ReduceWindow, CombinesRowsTheWindowLeavesAlone) {
  struct Case {
    std::vector<int64_t> shape, window, strides, win_dil, padding;
  };
  const Case cases[] = {
      {{2, 7, 6, 16}, {1, 3, 3, 1}, {1, 2, 2, 1}, {1, 1, 1, 1}, {0, 0, 1, 1, 1, 0, 0, 0}},
      {{3, 9, 4, 4}, {1, 2, 1, 1}, {1, 1, 1, 1}, {1, 3, 1, 1}, {0, 0, 1, 2, 0, 0, 0, 0}},
      {{40, 24}, {5, 1}, {3, 1}, {1, 1}, {2, 2, 0, 0}},
      {{6, 16}, {2, 1}, {1, 1}, {1, 1}, {3, 0, 0, 0}},  // the first two windows in the padding
      {{2, 9, 5, 8}, {1, 2, 2, 1}, {1, 1, 2, 1}, {1, 2, 1, 1}, {0, 0, 1, 0, 0, 1, 0, 0}},
      {{64, 16, 4, 8}, {2, 1, 2, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, {0, 0, 0, 0, 0, 0, 0, 0}},
  };
  const struct {
    const char* reducer;
    double init;
    double (*combine)(double, double);
  } reducers[] = {{"max", -INFINITY, IeeeMax},
                  {"max", 0.25, IeeeMax},
                  {"min", 0.5, IeeeMin},
                  {"add", 0.75, [](double a, double b) { return a + b; }},
                  {"mul", 1, [](double a, double b) { return a * b; }}};
  for (const Case& c : cases)
    for (DType t : {DType::kF32, DType::kF64, DType::kI32, DType::kI64})
      for (const auto& r : reducers)
        for (bool zeros : {false, true}) {
          const bool integer = t == DType::kI32 || t == DType::kI64;
          // Zeros and ones under an init of 0.25 leave max nothing to pick.
          if ((integer || r.init == 0.25) && zeros) continue;
          HostTensor x = Random(t, c.shape, Rng(), -9, 9);
          if (!integer) {
            for (int64_t i = 0; i < x.numel(); ++i) {
              const uint64_t pick = Rng()() % 16;
              if (zeros) x.Set(i, pick < 6 ? 0.0 : pick < 12 ? -0.0 : r.init > 0.4 ? 1 : -1);
              if (!zeros && pick == 0) x.Set(i, Rng()() % 4 ? -INFINITY : NAN);
            }
          }
          // Integers: the lowest value for -inf, a small integer otherwise
          // (products of up to 9 values in [-9, 9] stay inside i32).
          const double init = !integer             ? r.init
                              : std::isinf(r.init) ? std::numeric_limits<int32_t>::min()
                                                   : std::trunc(r.init * 4);
          const int rank = static_cast<int>(c.shape.size());
          std::vector<int64_t> out_shape(rank);
          for (int d = 0; d < rank; ++d) {
            const int64_t span = (c.window[d] - 1) * c.win_dil[d] + 1;
            out_shape[d] =
                (c.shape[d] + c.padding[2 * d] + c.padding[2 * d + 1] - span) / c.strides[d] + 1;
          }
          auto out = MustRunOp({"reduce_window",
                                {x, HostTensor::FromDouble(t, {}, {init})},
                                {{t, Dims(out_shape)}},
                                {{"window_dimensions", c.window},
                                 {"window_strides", c.strides},
                                 {"window_dilations", c.win_dil},
                                 {"padding", c.padding},
                                 {"reducer", r.reducer}}})[0]
                         .ToDouble();
          const std::string what = std::string(r.reducer) + " from " + std::to_string(init) +
                                   " in " + DTypeName(t) + " over " + FormatShape(c.shape) +
                                   (zeros ? " (signed zeros)" : "");
          for (int64_t o = 0; o < NumElements(out_shape).value(); ++o) {
            const std::vector<int64_t> oi = Unravel(o, out_shape);
            double want = init;
            for (int64_t w = 0; w < NumElements(c.window).value(); ++w) {
              const std::vector<int64_t> wi = Unravel(w, c.window);
              std::vector<int64_t> ii(rank);
              bool inside = true;
              for (int d = 0; d < rank; ++d) {
                ii[d] = oi[d] * c.strides[d] + wi[d] * c.win_dil[d] - c.padding[2 * d];
                inside = inside && ii[d] >= 0 && ii[d] < c.shape[d];
              }
              if (inside) want = r.combine(want, x.Get(Ravel(ii, c.shape)));
            }
            const double got = out[o];
            const std::string reducer = r.reducer;
            if ((reducer == "add" || reducer == "mul") && !integer) {
              if (std::isnan(want) || std::isinf(want))
                EXPECT_TRUE(std::isnan(want) ? std::isnan(got) : got == want)
                    << what << " at " << o;
              else
                EXPECT_NEAR(got, want, 1e-5 * (1 + std::abs(want))) << what << " at " << o;
            } else {
              // Integers have no -0 (the float64 product of a negative and 0 has).
              EXPECT_TRUE(std::isnan(want)
                              ? std::isnan(got)
                              : got == want && (integer || std::signbit(got) == std::signbit(want)))
                  << what << " at " << o << ": " << got << " want " << want;
            }
            if (HasFailure()) return;
          }
        }
}

// A window longer than its padded dim gives an empty result, also where the
// window leaves rows alone (their loop divides by the line's length).
TEST(ReduceWindow, WindowLongerThanItsDimGivesAnEmptyResult) {
  for (DType t : {DType::kF32, DType::kI32})
    for (const char* reducer : {"add", "max"}) {
      auto out =
          MustRunOp({"reduce_window",
                     {Random(t, {4, 3, 16}, Rng(), -9, 9), HostTensor::FromDouble(t, {}, {0})},
                     {{t, Dims({4, 0, 16})}},
                     {{"window_dimensions", std::vector<int64_t>{1, 5, 1}}, {"reducer", reducer}}});
      EXPECT_EQ(out[0].numel(), 0) << reducer << " in " << DTypeName(t);
    }
}

// The gradient of a max pool (and of a min pool): each source element is
// added at the element its window selects, padding never selected. Ties: GE
// keeps the first maximum, GT takes the last, LE the first minimum.
TEST(SelectAndScatter, MaxAndMinPoolGradientsWithPaddingStridesAndTies) {
  const std::vector<int64_t> shape = {1, 5, 6, 2};  // NHWC
  HostTensor x = Random(DType::kF32, shape, Rng(), -1, 1);
  for (int64_t i = 0; i < x.numel(); i += 7)
    x.Set(i + 2 < x.numel() ? i + 2 : i, x.Get(i));  // ties
  const std::vector<int64_t> window = {1, 3, 2, 1}, strides = {1, 2, 2, 1};
  const std::vector<int64_t> padding = {0, 0, 1, 1, 0, 1, 0, 0};  // lo, hi per dim
  const std::vector<int64_t> source_shape = {1, 3, 3, 2};
  HostTensor source = Random(DType::kF32, source_shape, Rng(), 0.5, 1.5);
  std::map<std::string, std::vector<double>> results;
  for (const char* select : {"GE", "GT", "LE"}) {
    auto out = MustRunOp({"select_and_scatter",
                          {x, source, HostTensor::FromDouble(DType::kF32, {}, {0.25})},
                          {{DType::kF32, Dims(shape)}},
                          {{"window_dimensions", window},
                           {"window_strides", strides},
                           {"padding", padding},
                           {"select", select},
                           {"scatter", "add"}}});
    std::vector<double> ref(x.numel(), 0.25);
    for (int64_t o = 0; o < source.numel(); ++o) {
      const auto oi = Unravel(o, source_shape);
      int64_t picked = -1;
      for (int64_t w = 0; w < NumElements(window).value(); ++w) {
        const auto wi = Unravel(w, window);
        std::vector<int64_t> pos(4);
        bool inside = true;
        for (int d = 0; d < 4; ++d) {
          pos[d] = oi[d] * strides[d] + wi[d] - padding[2 * d];
          inside = inside && pos[d] >= 0 && pos[d] < shape[d];
        }
        if (!inside) continue;
        const int64_t at = ((pos[0] * 5 + pos[1]) * 6 + pos[2]) * 2 + pos[3];
        const double v = x.Get(at), best = picked < 0 ? 0 : x.Get(picked);
        const bool keep = std::string(select) == "GE"   ? best >= v
                          : std::string(select) == "GT" ? best > v
                                                        : best <= v;
        if (picked < 0 || !keep) picked = at;
      }
      ref[picked] += source.Get(o);
    }
    EXPECT_LE(RelError(out[0].ToDouble(), ref), 1e-6) << select;
    results[select] = out[0].ToDouble();
  }
  EXPECT_NE(results["GE"], results["GT"]) << "no window has a tied maximum";
  ExpectError(RunOp({"select_and_scatter",
                     {x, source, HostTensor::FromDouble(DType::kF32, {}, {0})},
                     {{DType::kF32, Dims(shape)}},
                     {{"window_dimensions", window},
                      {"window_strides", strides},
                      {"select", "GE"},
                      {"scatter", "add"}}})
                  .status(),
              {"source dimension 1 is 3, the window gives 2"});
}

}  // namespace
}  // namespace brt::test
