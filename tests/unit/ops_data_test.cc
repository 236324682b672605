// Data movement ops against index-by-index references.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "test_util.h"

namespace brt::test {
namespace {

std::vector<double> Iota(int64_t n) {
  std::vector<double> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<double>(i);
  return v;
}

TEST(Reshape, CopiesInOrder) {
  HostTensor x = Random(DType::kF32, {2, 3, 4}, Rng());
  EXPECT_EQ(MustRunOp({"reshape", {x}, {{DType::kF32, {4, 6}}}})[0].ToDouble(), x.ToDouble());
  ExpectError(RunOp({"reshape", {x}, {{DType::kF32, {5, 5}}}}).status(), {"different sizes"});
}

TEST(BroadcastInDim, MapsOperandDims) {
  for (DType t : {DType::kF32, DType::kI64, DType::kF16, DType::kI1, DType::kI16, DType::kU16}) {
    HostTensor x = Random(t, {3, 1}, Rng(), 0, 1);
    auto out = MustRunOp({"broadcast_in_dim",
                          {x},
                          {{t, {2, 4, 3}}},
                          {{"broadcast_dimensions", std::vector<int64_t>{2, 1}}}});
    for (int64_t i = 0; i < 24; ++i) {
      auto idx = Unravel(i, {2, 4, 3});
      EXPECT_EQ(out[0].Get(i), x.Get(idx[2])) << DTypeName(t);
    }
  }
  HostTensor s = HostTensor::FromDouble(DType::kF32, {}, {3.5});
  EXPECT_EQ(MustRunOp({"broadcast_in_dim",
                       {s},
                       {{DType::kF32, {2, 2}}},
                       {{"broadcast_dimensions", std::vector<int64_t>{}}}})[0]
                .ToDouble(),
            (std::vector<double>{3.5, 3.5, 3.5, 3.5}));
  ExpectError(RunOp({"broadcast_in_dim",
                     {Random(DType::kF32, {3}, Rng())},
                     {{DType::kF32, {4}}},
                     {{"broadcast_dimensions", std::vector<int64_t>{0}}}})
                  .status(),
              {"cannot broadcast"});
}

TEST(Transpose, GeneralPermutation) {
  HostTensor x = Random(DType::kF32, {2, 3, 4, 5}, Rng());
  std::vector<int64_t> perm = {2, 0, 3, 1};
  std::vector<int64_t> os = {4, 2, 5, 3};
  auto out = MustRunOp({"transpose", {x}, {{DType::kF32, Dims(os)}}, {{"permutation", perm}}});
  for (int64_t i = 0; i < 120; ++i) {
    auto o = Unravel(i, os);
    std::vector<int64_t> in(4);
    for (int d = 0; d < 4; ++d) in[perm[d]] = o[d];
    EXPECT_EQ(out[0].Get(i), x.Get(Ravel(in, {2, 3, 4, 5})));
  }
  ExpectError(RunOp({"transpose",
                     {x},
                     {{DType::kF32, Dims(os)}},
                     {{"permutation", std::vector<int64_t>{2, 0, 3, 3}}}})
                  .status(),
              {"repeats dimension 3"});
}

// NCHW -> NHWC with 3 channels: the innermost dimension is shorter than
// the one outside it, so the copy loops over the longer one inside.
TEST(Transpose, ChannelsLastOfEveryElementSize) {
  const std::vector<int64_t> in_dims = {2, 3, 7, 9}, out_dims = {2, 7, 9, 3};
  for (DType t : {DType::kF32, DType::kF16, DType::kI64, DType::kI8, DType::kI16}) {
    HostTensor x = Random(t, in_dims, Rng(), -100, 100);
    auto out = MustRunOp({"transpose",
                          {x},
                          {{t, Dims(out_dims)}},
                          {{"permutation", std::vector<int64_t>{0, 2, 3, 1}}}});
    for (int64_t i = 0; i < 2 * 3 * 7 * 9; ++i) {
      auto o = Unravel(i, out_dims);
      EXPECT_EQ(out[0].Get(i), x.Get(Ravel({o[0], o[3], o[1], o[2]}, in_dims))) << DTypeName(t);
    }
    // And back to NCHW: the channels read out of each pixel's run.
    auto back = MustRunOp({"transpose",
                           {out[0]},
                           {{t, Dims(in_dims)}},
                           {{"permutation", std::vector<int64_t>{0, 3, 1, 2}}}});
    for (int64_t i = 0; i < 2 * 3 * 7 * 9; ++i)
      EXPECT_EQ(back[0].Get(i), x.Get(i)) << DTypeName(t) << " back at " << i;
  }
}

// Whole-matrix transposes, batched, go tile by tile: sizes that leave
// partial tiles on both sides, for every element size.
TEST(Transpose, MatricesTileByTileWithRemainders) {
  const std::vector<int64_t> in_dims = {3, 21, 37}, out_dims = {3, 37, 21};
  for (DType t : {DType::kF32, DType::kBF16, DType::kF64, DType::kU8, DType::kU16}) {
    HostTensor x = Random(t, in_dims, Rng(), 0, 100);
    auto out = MustRunOp({"transpose",
                          {x},
                          {{t, Dims(out_dims)}},
                          {{"permutation", std::vector<int64_t>{0, 2, 1}}}});
    for (int64_t i = 0; i < 3 * 21 * 37; ++i) {
      auto o = Unravel(i, out_dims);
      ASSERT_EQ(out[0].Get(i), x.Get(Ravel({o[0], o[2], o[1]}, in_dims)))
          << DTypeName(t) << " " << i;
    }
  }
}

TEST(Slice, StartLimitStride) {
  for (DType t : {DType::kI32, DType::kI16, DType::kU16}) {
    HostTensor x = Random(t, {7, 9}, Rng(), t == DType::kU16 ? 0 : -30000, 30000);
    auto out = MustRunOp({"slice",
                          {x},
                          {{t, {2, 3}}},
                          {{"start_indices", std::vector<int64_t>{1, 2}},
                           {"limit_indices", std::vector<int64_t>{5, 9}},
                           {"strides", std::vector<int64_t>{3, 3}}}});
    EXPECT_EQ(out[0].ToDouble(),
              (std::vector<double>{x.Get(1 * 9 + 2), x.Get(1 * 9 + 5), x.Get(1 * 9 + 8),
                                   x.Get(4 * 9 + 2), x.Get(4 * 9 + 5), x.Get(4 * 9 + 8)}))
        << DTypeName(t);
  }
  HostTensor x = Random(DType::kI32, {7, 9}, Rng(), -100, 100);
  ExpectError(RunOp({"slice",
                     {x},
                     {{DType::kI32, {4, 8}}},
                     {{"start_indices", std::vector<int64_t>{1, 2}},
                      {"limit_indices", std::vector<int64_t>{5, 10}}}})
                  .status(),
              {"dimension 1", "invalid for size 9"});
}

TEST(Reverse, SelectedDims) {
  HostTensor x = HostTensor::FromDouble(DType::kF32, {2, 3}, Iota(6));
  EXPECT_EQ(
      MustRunOp(
          {"reverse", {x}, {{DType::kF32, {2, 3}}}, {{"dimensions", std::vector<int64_t>{1}}}})[0]
          .ToDouble(),
      (std::vector<double>{2, 1, 0, 5, 4, 3}));
  EXPECT_EQ(MustRunOp({"reverse",
                       {x},
                       {{DType::kF32, {2, 3}}},
                       {{"dimensions", std::vector<int64_t>{0, 1}}}})[0]
                .ToDouble(),
            (std::vector<double>{5, 4, 3, 2, 1, 0}));
}

TEST(Concatenate, MiddleAxisWithEmptyPiece) {
  for (DType t : {DType::kF32, DType::kI16, DType::kU16}) {
    const double lo = t == DType::kI16 ? -32768 : 0, hi = t == DType::kU16 ? 65535 : 32767;
    HostTensor a = Random(t, {2, 1, 3}, Rng(), lo, hi), b = Random(t, {2, 0, 3}, Rng(), lo, hi),
               c = Random(t, {2, 2, 3}, Rng(), lo, hi);
    auto out = MustRunOp({"concatenate", {a, b, c}, {{t, {2, 3, 3}}}, {{"dimension", 1}}});
    for (int64_t i = 0; i < 18; ++i) {
      auto idx = Unravel(i, {2, 3, 3});
      double ref = idx[1] == 0 ? a.Get(Ravel({idx[0], 0, idx[2]}, {2, 1, 3}))
                               : c.Get(Ravel({idx[0], idx[1] - 1, idx[2]}, {2, 2, 3}));
      EXPECT_EQ(out[0].Get(i), ref) << DTypeName(t);
    }
  }
}

TEST(Pad, EdgeInteriorAndNegative) {
  // The padding value: 0, or the type's extreme for 16-bit integers.
  for (auto [t, p] :
       {std::pair<DType, double>{DType::kF32, 0}, {DType::kI16, -32768}, {DType::kU16, 65535}}) {
    HostTensor x = HostTensor::FromDouble(t, {2, 3}, {1, 2, 3, 4, 5, 6});
    HostTensor v = HostTensor::FromDouble(t, {}, {p});
    // dim 0: low 1, high 0, interior 1 -> [pad, r0, pad, r1] (size 4)
    // dim 1: low -1 (crop first column), high 2, interior 0 -> [c1, c2, pad, pad]
    auto out = MustRunOp({"pad",
                          {x, v},
                          {{t, {4, 4}}},
                          {{"edge_padding_low", std::vector<int64_t>{1, -1}},
                           {"edge_padding_high", std::vector<int64_t>{0, 2}},
                           {"interior_padding", std::vector<int64_t>{1, 0}}}});
    EXPECT_EQ(out[0].ToDouble(),
              (std::vector<double>{p, p, p, p, 2, 3, p, p, p, p, p, p, 5, 6, p, p}))
        << DTypeName(t);
  }
}

TEST(Iota, AlongEachDimension) {
  auto out = MustRunOp({"iota", {}, {{DType::kI32, {2, 3}}}, {{"iota_dimension", 1}}});
  EXPECT_EQ(out[0].ToDouble(), (std::vector<double>{0, 1, 2, 0, 1, 2}));
  out = MustRunOp({"iota", {}, {{DType::kF32, {2, 3}}}, {{"iota_dimension", 0}}});
  EXPECT_EQ(out[0].ToDouble(), (std::vector<double>{0, 0, 0, 1, 1, 1}));
  for (DType t : {DType::kI16, DType::kU16}) {
    out = MustRunOp({"iota", {}, {{t, {2, 3}}}, {{"iota_dimension", 1}}});
    EXPECT_EQ(out[0].ToDouble(), (std::vector<double>{0, 1, 2, 0, 1, 2})) << DTypeName(t);
  }
}

TEST(Constant, EmitsItsBytes) {
  std::vector<float> v = {1.5f, -2.f, 3.25f};
  std::vector<uint8_t> bytes(reinterpret_cast<uint8_t*>(v.data()),
                             reinterpret_cast<uint8_t*>(v.data()) + 12);
  EXPECT_EQ(MustRunOp({"constant", {}, {{DType::kF32, {3}}}, {{"value", bytes}}})[0].ToDouble(),
            (std::vector<double>{1.5, -2, 3.25}));
  bytes.pop_back();
  ExpectError(RunOp({"constant", {}, {{DType::kF32, {3}}}, {{"value", bytes}}}).status(),
              {"holds 11 bytes", "needs 12"});
}

TEST(DynamicSlice, ClampsStartIndices) {
  HostTensor x = HostTensor::FromDouble(DType::kF32, {4, 5}, Iota(20));
  for (auto [r, c, er, ec] :
       std::vector<std::array<int64_t, 4>>{{1, 1, 1, 1}, {3, 4, 2, 2}, {-5, -1, 0, 0}}) {
    HostTensor i = HostTensor::FromDouble(DType::kI32, {}, {static_cast<double>(r)});
    HostTensor j = HostTensor::FromDouble(DType::kI64, {}, {static_cast<double>(c)});
    auto out = MustRunOp({"dynamic_slice",
                          {x, i, j},
                          {{DType::kF32, {2, 3}}},
                          {{"slice_sizes", std::vector<int64_t>{2, 3}}}});
    std::vector<double> ref;
    for (int64_t a = 0; a < 2; ++a)
      for (int64_t b = 0; b < 3; ++b) ref.push_back(static_cast<double>((er + a) * 5 + ec + b));
    EXPECT_EQ(out[0].ToDouble(), ref) << r << "," << c;
  }
}

TEST(DynamicUpdateSlice, WritesClampedWindow) {
  HostTensor x = HostTensor::FromDouble(DType::kF32, {3, 4}, Iota(12));
  HostTensor u = HostTensor::FromDouble(DType::kF32, {2, 2}, {-1, -2, -3, -4});
  HostTensor i = HostTensor::FromDouble(DType::kI32, {}, {5});  // clamps to 1
  HostTensor j = HostTensor::FromDouble(DType::kI32, {}, {1});
  auto out = MustRunOp({"dynamic_update_slice", {x, u, i, j}, {{DType::kF32, {3, 4}}}});
  EXPECT_EQ(out[0].ToDouble(), (std::vector<double>{0, 1, 2, 3, 4, -1, -2, 7, 8, -3, -4, 11}));
}

// Start indices of every integer type (StableHLO takes any; JAX passes
// unsigned ones through), clamped into [0, operand - window] as StableHLO
// clamps them: a signed one below 0 to 0, an unsigned one above the largest
// start to it, also where its bits read as signed would be negative (u8 255,
// u64 2^63). The edges, then random bits, against the clamp in the index type.
template <typename I>
HostTensor StartIndex(DType dtype, I value) {
  HostTensor h(dtype, {});
  std::memcpy(h.data(), &value, sizeof(I));
  return h;
}

template <typename I>
int64_t ClampedReference(I value, int64_t max) {
  if constexpr (std::is_signed_v<I>)
    return std::clamp<int64_t>(static_cast<int64_t>(value), 0, max);
  else
    return static_cast<int64_t>(std::min<uint64_t>(static_cast<uint64_t>(value), max));
}

template <typename I>
void CheckStartIndices(DType dtype) {
  // dim 0: 6 rows, window 3 (largest start 3); dim 1: 5 columns, window 2
  // (largest start 3), its start always i32 so the two dtypes mix.
  HostTensor x = Random(DType::kI32, {6, 5}, Rng(), -1000, 1000);
  HostTensor u = Random(DType::kI32, {3, 2}, Rng(), -1000, 1000);
  std::vector<I> rows = {I(0),
                         I(2),
                         I(3),
                         I(4),
                         std::numeric_limits<I>::max(),
                         std::numeric_limits<I>::min(),
                         static_cast<I>(-1),
                         static_cast<I>(std::numeric_limits<I>::max() / 2 + 1)};
  for (int k = 0; k < 8; ++k) rows.push_back(static_cast<I>(Rng()()));
  for (I row : rows) {
    const int32_t col = static_cast<int32_t>(Rng()() % 9) - 2;
    const int64_t r0 = ClampedReference(row, 3), c0 = ClampedReference(col, 3);
    HostTensor i = StartIndex(dtype, row), j = StartIndex(DType::kI32, col);
    auto sliced = MustRunOp({"dynamic_slice",
                             {x, i, j},
                             {{DType::kI32, {3, 2}}},
                             {{"slice_sizes", std::vector<int64_t>{3, 2}}}});
    auto updated = MustRunOp({"dynamic_update_slice", {x, u, i, j}, {{DType::kI32, {6, 5}}}});
    std::vector<double> want_slice, want_update = x.ToDouble();
    for (int64_t a = 0; a < 3; ++a)
      for (int64_t b = 0; b < 2; ++b) {
        want_slice.push_back(x.Get((r0 + a) * 5 + c0 + b));
        want_update[(r0 + a) * 5 + c0 + b] = u.Get(a * 2 + b);
      }
    const std::string what = std::string(DTypeName(dtype)) + " start " + std::to_string(+row) +
                             ", " + std::to_string(col);
    EXPECT_EQ(sliced[0].ToDouble(), want_slice) << what;
    EXPECT_EQ(updated[0].ToDouble(), want_update) << what;
  }
}

TEST(DynamicSlice, StartIndicesOfEveryIntegerTypeClampAsStableHlo) {
  CheckStartIndices<int8_t>(DType::kI8);
  CheckStartIndices<uint8_t>(DType::kU8);
  CheckStartIndices<int16_t>(DType::kI16);
  CheckStartIndices<uint16_t>(DType::kU16);
  CheckStartIndices<int32_t>(DType::kI32);
  CheckStartIndices<uint32_t>(DType::kU32);
  CheckStartIndices<int64_t>(DType::kI64);
  CheckStartIndices<uint64_t>(DType::kU64);
  // i1 is no integer: refused, naming the operand.
  HostTensor x = Random(DType::kF32, {4}, Rng());
  auto bad = RunOp({"dynamic_slice",
                    {x, HostTensor::FromDouble(DType::kI1, {}, {1})},
                    {{DType::kF32, {2}}},
                    {{"slice_sizes", std::vector<int64_t>{2}}}});
  ExpectError(bad.status(), {"start index 0", "integer"});
}

// rng_bit_generator (Philox4x32-10). Random123's known answers for
// Philox4x32-10: counter (x0, x1, x2, x3) under key (k0, k1) gives the words
// below; a state [key, low] (or [key, low, high]) puts them at the counter's
// 32-bit words, low first.
HostTensor RngState(std::vector<uint64_t> words) {
  HostTensor t(DType::kU64, {static_cast<int64_t>(words.size())});
  for (size_t i = 0; i < words.size(); ++i) t.as<uint64_t>()[i] = words[i];
  return t;
}

std::vector<HostTensor> RunRng(const HostTensor& state, DType bits, int64_t n,
                               const char* algorithm = "DEFAULT") {
  return MustRunOp({"rng_bit_generator",
                    {state},
                    {{DType::kU64, {state.shape[0]}}, {bits, {n}}},
                    {{"rng_algorithm", algorithm}}});
}

TEST(RngBitGenerator, PhiloxKnownAnswers) {
  struct Case {
    std::vector<uint64_t> state;
    uint32_t words[4];
  };
  const Case cases[] = {
      {{0, 0, 0}, {0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}},
      {{~0ull, ~0ull, ~0ull}, {0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}},
      {{0x299f31d0a4093822ull, 0x85a308d3243f6a88ull, 0x0370734413198a2eull},
       {0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}},
  };
  for (const Case& c : cases) {
    for (const char* algorithm : {"DEFAULT", "PHILOX"}) {
      auto out = RunRng(RngState(c.state), DType::kU32, 4, algorithm);
      for (int j = 0; j < 4; ++j) EXPECT_EQ(out[1].as<uint32_t>()[j], c.words[j]) << j;
    }
  }
  // u64[2]: the key is also the counter's high word.
  auto two = RunRng(RngState({0x299f31d0a4093822ull, 0x85a308d3243f6a88ull}), DType::kU32, 4);
  auto three =
      RunRng(RngState({0x299f31d0a4093822ull, 0x85a308d3243f6a88ull, 0x299f31d0a4093822ull}),
             DType::kU32, 4);
  for (int j = 0; j < 4; ++j) EXPECT_EQ(two[1].as<uint32_t>()[j], three[1].as<uint32_t>()[j]);
}

// Block i is the counter plus i, carrying into the high word; the new state
// is the counter plus the blocks (3 for 10 u32 words); u64 elements take
// words 2e and 2e + 1, u8 elements each word's low byte.
TEST(RngBitGenerator, BlocksCarryAndElementWidths) {
  const uint64_t key = 0x0123456789abcdefull;
  auto wrapped = RunRng(RngState({key, ~0ull - 1, 5}), DType::kU32, 10);
  const uint64_t* next = wrapped[0].as<uint64_t>();
  EXPECT_EQ(next[0], key);
  EXPECT_EQ(next[1], 1u);
  EXPECT_EQ(next[2], 6u);
  auto after_carry = RunRng(RngState({key, 0, 6}), DType::kU32, 2);
  EXPECT_EQ(wrapped[1].as<uint32_t>()[8], after_carry[1].as<uint32_t>()[0]);
  EXPECT_EQ(wrapped[1].as<uint32_t>()[9], after_carry[1].as<uint32_t>()[1]);
  auto short_state = RunRng(RngState({key, ~0ull}), DType::kU32, 4);
  EXPECT_EQ(short_state[0].as<uint64_t>()[1], 0u);  // the low word wraps; no high word kept

  const HostTensor state = RngState({key, 77, 9});
  auto words = RunRng(state, DType::kU32, 14), wide = RunRng(state, DType::kU64, 7),
       narrow = RunRng(state, DType::kU8, 14);
  for (int64_t e = 0; e < 7; ++e)
    EXPECT_EQ(wide[1].as<uint64_t>()[e],
              words[1].as<uint32_t>()[2 * e] | uint64_t{words[1].as<uint32_t>()[2 * e + 1]} << 32);
  for (int64_t e = 0; e < 14; ++e)
    EXPECT_EQ(narrow[1].as<uint8_t>()[e], static_cast<uint8_t>(words[1].as<uint32_t>()[e]));
  EXPECT_EQ(words[0].as<uint64_t>()[1], 77u + 4);  // ceil(14 / 4) blocks
  EXPECT_EQ(wide[0].as<uint64_t>()[1], 77u + 4);
}

TEST(RngBitGenerator, BadStateAndAlgorithmAreNamed) {
  ExpectError(RunOp({"rng_bit_generator",
                     {RngState({1, 2, 3, 4})},
                     {{DType::kU64, {4}}, {DType::kU32, {8}}},
                     {{"rng_algorithm", "DEFAULT"}}})
                  .status(),
              {"rng_bit_generator", "u64[2] or u64[3]"});
  ExpectError(RunOp({"rng_bit_generator",
                     {RngState({1, 2, 3})},
                     {{DType::kU64, {3}}, {DType::kU32, {8}}},
                     {{"rng_algorithm", "THREE_FRY"}}})
                  .status(),
              {"rng_bit_generator", "ThreeFry state must be u64[2], got u64[3]"});
  ExpectError(RunOp({"rng_bit_generator",
                     {RngState({1, 2})},
                     {{DType::kU64, {2}}, {DType::kU32, {8}}},
                     {{"rng_algorithm", "SQUARES"}}})
                  .status(),
              {"rng_bit_generator", "algorithm SQUARES is not supported"});
}

// THREE_FRY: Random123's known answers for Threefry2x32-20 (counter (x0,
// x1) under key (k0, k1)), read as one u64 element of a state [key,
// counter], low words first; the counter advances by one block.
TEST(RngBitGenerator, ThreeFryKnownAnswers) {
  struct Case {
    uint64_t key, counter, bits;
  };
  const Case cases[] = {
      {0, 0, 0x99ba4efe6b200159ull},
      {~0ull, ~0ull, 0xbb002be71cb996fcull},
      {0x0370734413198a2eull, 0x85a308d3243f6a88ull, 0x483df7a0c4923a9cull},
  };
  for (const Case& c : cases) {
    auto out = RunRng(RngState({c.key, c.counter}), DType::kU64, 1, "THREE_FRY");
    EXPECT_EQ(out[1].as<uint64_t>()[0], c.bits);
    EXPECT_EQ(out[0].as<uint64_t>()[0], c.key);
    EXPECT_EQ(out[0].as<uint64_t>()[1], c.counter + 1);
  }
}

// THREE_FRY below 64 bits makes elements in pairs along the split dimension:
// u32[3, 5] (no even dimension: the largest, 5, is split into 3 pairs) takes
// both words of blocks a * 3 + h at (a, 2h) and (a, 2h + 1), the last pair's
// second dropped; 9 blocks. u16[2, 3] as JAX computes it (split along the
// first dimension; the counter wraps).
TEST(RngBitGenerator, ThreeFryPairsAlongTheSplitDimension) {
  const HostTensor state = RngState({0x0123456789abcdefull, 1000});
  auto words = MustRunOp({"rng_bit_generator",
                          {state},
                          {{DType::kU64, {2}}, {DType::kU32, {3, 5}}},
                          {{"rng_algorithm", "THREE_FRY"}}});
  auto blocks = RunRng(state, DType::kU64, 9, "THREE_FRY");
  for (int64_t a = 0; a < 3; ++a)
    for (int64_t j = 0; j < 5; ++j) {
      const uint64_t block = blocks[1].as<uint64_t>()[a * 3 + j / 2];
      EXPECT_EQ(words[1].as<uint32_t>()[a * 5 + j], static_cast<uint32_t>(block >> (j % 2 * 32)))
          << a << "," << j;
    }
  EXPECT_EQ(words[0].as<uint64_t>()[1], 1009u);

  auto narrow = MustRunOp({"rng_bit_generator",
                           {RngState({0x0123456789abcdefull, ~0ull - 2})},
                           {{DType::kU64, {2}}, {DType::kU16, {2, 3}}},
                           {{"rng_algorithm", "THREE_FRY"}}});
  const uint16_t jax[] = {0x955f, 0x215b, 0x7494, 0xc6dc, 0x60b4, 0xc4dc};
  for (int e = 0; e < 6; ++e) EXPECT_EQ(narrow[1].as<uint16_t>()[e], jax[e]) << e;
  EXPECT_EQ(narrow[0].as<uint64_t>()[1], 0u);
}

// PHILOX to u16: each word's low half, as JAX computes it.
TEST(RngBitGenerator, PhiloxSixteenBits) {
  auto out = RunRng(RngState({0x0123456789abcdefull, ~0ull - 2}), DType::kU16, 6, "PHILOX");
  const uint16_t jax[] = {0x3967, 0x081d, 0x917c, 0x4396, 0x5194, 0xf806};
  for (int e = 0; e < 6; ++e) EXPECT_EQ(out[1].as<uint16_t>()[e], jax[e]) << e;
  EXPECT_EQ(out[0].as<uint64_t>()[1], ~0ull);  // 2 blocks
}

// The positions of line (o, i) of an outer x size x inner array, and the
// same positions stable-sorted by `before`.
template <typename Before>
std::pair<std::vector<int64_t>, std::vector<int64_t>> SortedLine(int64_t o, int64_t i, int64_t size,
                                                                 int64_t inner, Before before) {
  std::vector<int64_t> at(size);
  for (int64_t j = 0; j < size; ++j) at[j] = (o * size + j) * inner + i;
  std::vector<int64_t> sorted = at;
  std::stable_sort(sorted.begin(), sorted.end(), before);
  return {at, sorted};
}

// sort: lines along a middle dimension (outer and inner both above 1) of an
// f32 key with ties, NaNs of both signs, infinities and both zeros, an i32
// payload, against std::stable_sort with the orders written out here.
TEST(Sort, LinesAlongAMiddleDimensionAgainstAStableSort) {
  const std::vector<int64_t> shape = {3, 11, 4};
  const int64_t outer = 3, size = 11, inner = 4;
  HostTensor key = Random(DType::kF32, shape, Rng(), -2, 2), payload(DType::kI32, shape);
  const float special[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 1.0f, 1.0f};
  for (int64_t i = 0; i < key.numel(); ++i) {
    if (i % 3 == 0) key.as<float>()[i] = special[i / 3 % 8];
    payload.as<int32_t>()[i] = static_cast<int32_t>(i);
  }
  // a before b: -0 == +0 and NaN above all, or IEEE totalOrder.
  auto before = [](float a, float b, bool total) {
    auto rank = [&](float x) { return std::isnan(x) ? (std::signbit(x) && total ? 0 : 2) : 1; };
    if (rank(a) != rank(b) || rank(a) != 1) return rank(a) < rank(b);
    if (a == b) return total && std::signbit(a) && !std::signbit(b);
    return a < b;
  };
  for (const char* order : {"ascending", "descending"})
    for (int total : {0, 1}) {
      auto out = MustRunOp({"sort",
                            {key, payload},
                            {{DType::kF32, Dims(shape)}, {DType::kI32, Dims(shape)}},
                            {{"dimension", int64_t{1}},
                             {"key", int64_t{0}},
                             {"order", order},
                             {"total_order", int64_t{total}}}});
      const bool descending = order[0] == 'd';
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          const auto [at, want] = SortedLine(o, i, size, inner, [&](int64_t x, int64_t y) {
            const float a = key.as<float>()[x], b = key.as<float>()[y];
            return descending ? before(b, a, total) : before(a, b, total);
          });
          for (int64_t j = 0; j < size; ++j) {
            EXPECT_EQ(out[1].as<int32_t>()[at[j]], want[j])
                << order << " total " << total << " line " << o << "," << i << " at " << j;
            EXPECT_EQ(std::memcmp(&out[0].as<float>()[at[j]], &key.as<float>()[want[j]], 4), 0);
          }
        }
    }
}

// An integer key (the second operand) orders the first; a rank-1 sort.
TEST(Sort, IntegerKeyDescending) {
  HostTensor values = Random(DType::kF32, {9}, Rng()), keys(DType::kI64, {9});
  const int64_t k[] = {5, -3, 5, 0, -3, 9, 5, -8, 0};
  for (int i = 0; i < 9; ++i) keys.as<int64_t>()[i] = k[i];
  auto out = MustRunOp({"sort",
                        {values, keys},
                        {{DType::kF32, {9}}, {DType::kI64, {9}}},
                        {{"dimension", int64_t{0}}, {"key", int64_t{1}}, {"order", "descending"}}});
  const int want[] = {5, 0, 2, 6, 3, 8, 1, 4, 7};  // stable: equal keys keep their order
  for (int j = 0; j < 9; ++j) {
    EXPECT_EQ(out[1].as<int64_t>()[j], k[want[j]]) << j;
    EXPECT_EQ(out[0].as<float>()[j], values.as<float>()[want[j]]) << j;
  }
}

// i16 and u16 keys (the extremes, duplicates and random bits) order an i32
// payload, both ways, against a stable sort in T.
template <typename T>
void CheckSixteenBitSort(DType dtype) {
  const int64_t n = 200;
  HostTensor keys(dtype, {2, n}), payload(DType::kI32, {2, n});
  const T edges[] = {std::numeric_limits<T>::min(), std::numeric_limits<T>::max(), 0, T(-1), 1};
  for (int64_t i = 0; i < 2 * n; ++i) {
    keys.as<T>()[i] =
        i % 4 == 0 ? edges[i / 4 % 5] : static_cast<T>(Rng()() % 7 == 0 ? 3 : Rng()());
    payload.as<int32_t>()[i] = static_cast<int32_t>(i);
  }
  for (const char* order : {"ascending", "descending"}) {
    auto out = MustRunOp({"sort",
                          {keys, payload},
                          {{dtype, {2, n}}, {DType::kI32, {2, n}}},
                          {{"dimension", int64_t{1}}, {"key", int64_t{0}}, {"order", order}}});
    const bool descending = order[0] == 'd';
    for (int64_t row = 0; row < 2; ++row) {
      std::vector<int32_t> want(n);
      for (int64_t j = 0; j < n; ++j) want[j] = static_cast<int32_t>(row * n + j);
      std::stable_sort(want.begin(), want.end(), [&](int32_t x, int32_t y) {
        const T a = keys.as<T>()[x], b = keys.as<T>()[y];
        return descending ? b < a : a < b;
      });
      for (int64_t j = 0; j < n; ++j) {
        ASSERT_EQ(out[1].as<int32_t>()[row * n + j], want[j])
            << DTypeName(dtype) << " " << order << " row " << row << " at " << j;
        ASSERT_EQ(out[0].as<T>()[row * n + j], keys.as<T>()[want[j]]);
      }
    }
  }
}

TEST(Sort, SixteenBitKeysAgainstAStableSort) {
  CheckSixteenBitSort<int16_t>(DType::kI16);
  CheckSixteenBitSort<uint16_t>(DType::kU16);
}

// A lexicographic sort by three keys of three types (f64 ascending with ties
// and both zeros, i8 descending, u16 ascending) of lines along the middle
// dimension, a payload carried along, against std::stable_sort with the
// order written out here.
TEST(Sort, TieKeysOrderLexicographically) {
  const std::vector<int64_t> shape = {2, 40, 3};
  const int64_t outer = 2, size = 40, inner = 3, n = outer * size * inner;
  HostTensor first(DType::kF64, shape), second(DType::kI8, shape), third(DType::kU16, shape),
      payload(DType::kI32, shape);
  const double values[] = {-1.5, 0.0, -0.0, 2.25};
  for (int64_t i = 0; i < n; ++i) {
    first.as<double>()[i] = values[Rng()() % 4];
    second.as<int8_t>()[i] = static_cast<int8_t>(static_cast<int>(Rng()() % 3) - 1);
    third.as<uint16_t>()[i] = static_cast<uint16_t>(Rng()() % 3 ? Rng()() % 4 : 65535);
    payload.as<int32_t>()[i] = static_cast<int32_t>(i);
  }
  auto out = MustRunOp({"sort",
                        {first, second, third, payload},
                        {{DType::kF64, Dims(shape)},
                         {DType::kI8, Dims(shape)},
                         {DType::kU16, Dims(shape)},
                         {DType::kI32, Dims(shape)}},
                        {{"dimension", int64_t{1}},
                         {"key", int64_t{0}},
                         {"order", "ascending"},
                         {"tie_keys", std::vector<int64_t>{1, 1, 0, 2, 0, 0}}}});
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      const auto [at, want] = SortedLine(o, i, size, inner, [&](int64_t x, int64_t y) {
        const double a = first.as<double>()[x], b = first.as<double>()[y];  // -0 == +0
        if (a != b) return a < b;
        const int8_t c = second.as<int8_t>()[x], d = second.as<int8_t>()[y];
        if (c != d) return c > d;
        return third.as<uint16_t>()[x] < third.as<uint16_t>()[y];
      });
      for (int64_t j = 0; j < size; ++j) {
        ASSERT_EQ(out[3].as<int32_t>()[at[j]], want[j]) << "line " << o << "," << i << " at " << j;
        EXPECT_EQ(out[2].as<uint16_t>()[at[j]], third.as<uint16_t>()[want[j]]);
      }
    }
}

TEST(Sort, BadOperandsAndAttributesAreNamed) {
  HostTensor a = Random(DType::kF32, {2, 3}, Rng()), b = Random(DType::kF32, {3, 2}, Rng());
  auto run = [&](std::vector<HostTensor> in, std::vector<Attribute> attrs) {
    std::vector<TensorType> results;
    for (const HostTensor& t : in) results.push_back({t.dtype, Dims(t.shape)});
    return RunOp({"sort", in, results, attrs}).status();
  };
  ExpectError(run({a, b}, {{"dimension", int64_t{1}}, {"key", int64_t{0}}, {"order", "ascending"}}),
              {"sort", "operand 1 is [3,2], operand 0 [2,3]"});
  ExpectError(run({a}, {{"dimension", int64_t{2}}, {"key", int64_t{0}}, {"order", "ascending"}}),
              {"sort", "dimension 2 is outside the rank 2"});
  ExpectError(run({a}, {{"dimension", int64_t{0}}, {"key", int64_t{1}}, {"order", "ascending"}}),
              {"sort", "key 1 names no operand"});
  ExpectError(run({a}, {{"dimension", int64_t{0}}, {"key", int64_t{0}}, {"order", "up"}}),
              {"sort", "order must be ascending or descending, got 'up'"});
  const Attribute dim0 = {"dimension", int64_t{0}}, key0 = {"key", int64_t{0}},
                  ascending = {"order", "ascending"};
  ExpectError(run({a}, {dim0, key0, ascending, {"tie_keys", std::vector<int64_t>{0, 1}}}),
              {"sort", "tie_keys holds (operand, descending, total_order) triples, got 2 values"});
  ExpectError(run({a}, {dim0, key0, ascending, {"tie_keys", std::vector<int64_t>{3, 0, 0}}}),
              {"sort", "key 3 names no operand"});
}

}  // namespace
}  // namespace brt::test
