// dot_general, convolution, brt.softmax and brt.layer_norm against float64
// loop references. Over 500 lines: one file per op family, so its _cuda run
// covers the whole family.
#include <cmath>
#include <limits>
#include <tuple>

#include "test_util.h"

namespace brt::test {
namespace {

struct DotSpec {
  std::vector<int64_t> lhs, rhs, lb, rb, lc, rc, out;
};

std::vector<double> DotReference(const HostTensor& l, const HostTensor& r, const DotSpec& s) {
  std::vector<int64_t> lf, rf;
  for (int64_t d = 0; d < static_cast<int64_t>(s.lhs.size()); ++d)
    if (std::count(s.lb.begin(), s.lb.end(), d) + std::count(s.lc.begin(), s.lc.end(), d) == 0)
      lf.push_back(d);
  for (int64_t d = 0; d < static_cast<int64_t>(s.rhs.size()); ++d)
    if (std::count(s.rb.begin(), s.rb.end(), d) + std::count(s.rc.begin(), s.rc.end(), d) == 0)
      rf.push_back(d);
  std::vector<int64_t> kshape;
  for (int64_t d : s.lc) kshape.push_back(s.lhs[d]);
  const int64_t K = NumElements(kshape).value();
  std::vector<double> out(NumElements(s.out).value(), 0);
  std::vector<std::vector<int64_t>> contraction(K);  // unraveled once, not per output
  for (int64_t k = 0; k < K; ++k) contraction[k] = Unravel(k, kshape);
  for (int64_t o = 0; o < static_cast<int64_t>(out.size()); ++o) {
    auto oi = Unravel(o, s.out);
    std::vector<int64_t> li(s.lhs.size()), ri(s.rhs.size());
    size_t p = 0;
    for (size_t b = 0; b < s.lb.size(); ++b, ++p) li[s.lb[b]] = ri[s.rb[b]] = oi[p];
    for (int64_t d : lf) li[d] = oi[p++];
    for (int64_t d : rf) ri[d] = oi[p++];
    double acc = 0;
    for (int64_t k = 0; k < K; ++k) {
      const std::vector<int64_t>& ki = contraction[k];
      for (size_t c = 0; c < s.lc.size(); ++c) li[s.lc[c]] = ri[s.rc[c]] = ki[c];
      acc += l.Get(Ravel(li, s.lhs)) * r.Get(Ravel(ri, s.rhs));
    }
    out[o] = acc;
  }
  return out;
}

// clang-format off
const DotSpec kDots[] = {
    // lhs, rhs, lhs batch, rhs batch, lhs contracting, rhs contracting, result
    {{33, 17}, {17, 9}, {}, {}, {1}, {0}, {33, 9}},                // plain matmul
    {{17, 33}, {17, 9}, {}, {}, {0}, {0}, {33, 9}},                // lhs transposed
    {{33, 17}, {9, 17}, {}, {}, {1}, {1}, {33, 9}},                // rhs transposed
    {{4, 8, 6}, {4, 6, 5}, {0}, {0}, {2}, {1}, {4, 8, 5}},         // batched
    {{6, 4, 8}, {5, 6, 4}, {1}, {2}, {0}, {1}, {4, 8, 5}},         // batched, batch dims not leading
    {{2, 3, 1, 20}, {2, 3, 16, 20}, {0, 1}, {0, 1}, {3}, {3}, {2, 3, 1, 16}},  // decode's q k^T
    {{20, 2, 3}, {2, 16, 20}, {1}, {0}, {0}, {2}, {2, 3, 16}},     // the same, lhs strided along k
    {{6, 40, 48}, {6, 48, 40}, {0}, {0}, {2}, {1}, {6, 40, 40}},   // batched, too big for the small loop
    {{5, 37}, {37, 40}, {}, {}, {1}, {0}, {5, 40}},                // few rows (decode steps)
    {{8, 37}, {19, 37}, {}, {}, {1}, {1}, {8, 19}},                // few rows, rhs transposed
    {{1, 300}, {300, 64}, {}, {}, {1}, {0}, {1, 64}},              // one row
    {{37, 6}, {37, 20}, {}, {}, {0}, {0}, {6, 20}},                // few rows, lhs transposed
    {{2, 3, 4, 5}, {4, 3, 7}, {}, {}, {1, 2}, {1, 0}, {2, 5, 7}},  // two contracting dims, reordered
    {{3, 2, 4}, {4, 5}, {}, {}, {2}, {0}, {3, 2, 5}},              // several free dims
    {{8}, {8}, {}, {}, {0}, {0}, {}},                              // vector dot -> scalar
    {{5, 0}, {0, 3}, {}, {}, {1}, {0}, {5, 3}},                    // K = 0: zeros
};
// clang-format on

TEST(DotGeneral, LayoutsAgainstFloat64) {
  for (const DotSpec& s : kDots) {
    HostTensor l = Random(DType::kF32, s.lhs, Rng()), r = Random(DType::kF32, s.rhs, Rng());
    auto out = MustRunOp({"dot_general",
                          {l, r},
                          {{DType::kF32, Dims(s.out)}},
                          {{"lhs_batching_dimensions", s.lb},
                           {"rhs_batching_dimensions", s.rb},
                           {"lhs_contracting_dimensions", s.lc},
                           {"rhs_contracting_dimensions", s.rc}}});
    EXPECT_LE(RelError(out[0].ToDouble(), DotReference(l, r, s)), 1e-5)
        << FormatShape(s.lhs) << " x " << FormatShape(s.rhs);
  }
}

// A constant rhs (a weight) is reordered once into oneDNN's blocked layout.
TEST(DotGeneral, ConstantRhsIsPrepackedCorrectly) {
  for (const DotSpec& s : kDots) {
    HostTensor l = Random(DType::kF32, s.lhs, Rng()), r = Random(DType::kF32, s.rhs, Rng());
    for (const char* kind : {"dot_general", "brt.matmul"}) {
      auto out = MustRunOp({kind,
                            {l, r},
                            {{DType::kF32, Dims(s.out)}},
                            {{"lhs_batching_dimensions", s.lb},
                             {"rhs_batching_dimensions", s.rb},
                             {"lhs_contracting_dimensions", s.lc},
                             {"rhs_contracting_dimensions", s.rc}},
                            /*weights=*/{1}});
      EXPECT_LE(RelError(out[0].ToDouble(), DotReference(l, r, s)), 1e-5)
          << kind << " " << FormatShape(s.lhs) << " x " << FormatShape(s.rhs);
    }
  }
}

// Constant weights on an AVX2 CPU take brt's packed GEMM where the result has
// 256 columns or more: shapes that span its row blocks (192), depth passes
// (384) and 16-column panels, each with a remainder (the last 8 and 7 rows as tiles of 4 + 4 and 4
// + 3), with threads sharing out the panels (200 and 199 rows) or, on up to 4 threads, the rows
// (803), the bias added once and the activation after the last pass. relu keeps NaN (as maximum
// does); the lhs has one.
TEST(DotGeneral, PackedWeightsAcrossBlocks) {
  for (const auto& [m, n] : {std::pair<int64_t, int64_t>{200, 293}, {199, 386}, {803, 293}}) {
    const DotSpec s = {{m, 605}, {605, n}, {}, {}, {1}, {0}, {m, n}};
    HostTensor l = Random(DType::kF32, s.lhs, Rng()), r = Random(DType::kF32, s.rhs, Rng());
    HostTensor bias = Random(DType::kF32, {n}, Rng());
    l.Set(7 * 605 + 3, std::numeric_limits<double>::quiet_NaN());  // row 7 of the result is NaN
    const std::vector<double> product = DotReference(l, r, s);
    for (const char* activation : {"none", "relu", "gelu", "tanh"}) {
      auto out = MustRunOp({"brt.matmul",
                            {l, r, bias},
                            {{DType::kF32, Dims(s.out)}},
                            {{"lhs_contracting_dimensions", s.lc},
                             {"rhs_contracting_dimensions", s.rc},
                             {"activation", activation}},
                            /*weights=*/{1}});
      std::vector<double> ref = product;
      const std::string a = activation;
      for (size_t i = 0; i < ref.size(); ++i) {
        double& v = ref[i];
        v += bias.Get(static_cast<int64_t>(i) % n);
        if (a == "relu") v = std::isnan(v) ? v : std::max(v, 0.0);
        if (a == "gelu") v = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
        if (a == "tanh") v = std::tanh(v);
      }
      const std::vector<double> got = out[0].ToDouble();
      std::vector<double> finite_got, finite_ref;
      for (size_t i = 0; i < ref.size(); ++i) {
        if (static_cast<int64_t>(i) / n == 7) {
          EXPECT_TRUE(std::isnan(got[i])) << a << " " << m << "x" << n << " at " << i;
        } else {
          finite_got.push_back(got[i]), finite_ref.push_back(ref[i]);
        }
      }
      EXPECT_LE(RelError(finite_got, finite_ref), 1e-5) << a << " " << m << "x" << n;
    }
  }
}

// A weight gradient, a^T b with neither operand constant (the lhs's
// contracting dims lead, as JAX's backward writes them), takes brt's GEMM
// on an AVX2 CPU with b packed a depth slab (384) at a time: shapes across
// its row blocks, slabs and panels as above, the contraction over one dim
// and over two (batch x sequence), with and without an epilogue.
TEST(DotGeneral, WeightGradientsAcrossBlocks) {
  for (const auto& [m, n] : {std::pair<int64_t, int64_t>{200, 37}, {199, 130}, {803, 37}}) {
    for (const DotSpec& s : {DotSpec{{605, m}, {605, n}, {}, {}, {0}, {0}, {m, n}},
                             DotSpec{{5, 121, m}, {5, 121, n}, {}, {}, {0, 1}, {0, 1}, {m, n}}}) {
      HostTensor l = Random(DType::kF32, s.lhs, Rng()), r = Random(DType::kF32, s.rhs, Rng());
      HostTensor bias = Random(DType::kF32, {n}, Rng());
      const std::vector<double> product = DotReference(l, r, s);
      const std::vector<Attribute> attrs = {{"lhs_contracting_dimensions", s.lc},
                                            {"rhs_contracting_dimensions", s.rc}};
      auto plain = MustRunOp({"dot_general", {l, r}, {{DType::kF32, Dims(s.out)}}, attrs});
      EXPECT_LE(RelError(plain[0].ToDouble(), product), 1e-5) << FormatShape(s.lhs) << " x " << n;
      std::vector<Attribute> with_gelu = attrs;
      with_gelu.push_back({"activation", std::string("gelu")});
      auto fused = MustRunOp({"brt.matmul", {l, r, bias}, {{DType::kF32, Dims(s.out)}}, with_gelu});
      std::vector<double> ref = product;
      for (size_t i = 0; i < ref.size(); ++i) {
        const double v = ref[i] + bias.Get(static_cast<int64_t>(i) % n);
        ref[i] = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
      }
      EXPECT_LE(RelError(fused[0].ToDouble(), ref), 1e-5) << FormatShape(s.lhs) << " x " << n;
    }
  }
}

// Integers: i32 on small values, i16 and u16 over their whole range, whose
// sums of products wrap modulo 2^16 (the float64 reference is exact, then
// wrapped by hand).
TEST(DotGeneral, IntegerAndBfloat16) {
  const DotSpec& s = kDots[3];
  std::vector<Attribute> attrs = {{"lhs_batching_dimensions", s.lb},
                                  {"rhs_batching_dimensions", s.rb},
                                  {"lhs_contracting_dimensions", s.lc},
                                  {"rhs_contracting_dimensions", s.rc}};
  for (auto [t, lo, hi] : {std::tuple<DType, double, double>{DType::kI32, -5, 5},
                           {DType::kI16, -32768, 32767},
                           {DType::kU16, 0, 65535}}) {
    HostTensor l = Random(t, s.lhs, Rng(), lo, hi), r = Random(t, s.rhs, Rng(), lo, hi);
    std::vector<double> want = DotReference(l, r, s);
    if (t != DType::kI32)
      for (double& w : want) {
        const uint16_t bits = static_cast<uint16_t>(static_cast<int64_t>(w) & 0xFFFF);
        w = t == DType::kI16 ? static_cast<int16_t>(bits) : bits;
      }
    EXPECT_EQ(MustRunOp({"dot_general", {l, r}, {{t, Dims(s.out)}}, attrs})[0].ToDouble(), want)
        << DTypeName(t);
  }
  HostTensor lb = Random(DType::kBF16, s.lhs, Rng()), rb = Random(DType::kBF16, s.rhs, Rng());
  EXPECT_LE(
      RelError(
          MustRunOp({"dot_general", {lb, rb}, {{DType::kBF16, Dims(s.out)}}, attrs})[0].ToDouble(),
          DotReference(lb, rb, s)),
      1e-2);
}

// Batched bf16 (and f32) products with one contracting element and an
// infinite operand: inf * 2 is inf. oneDNN 3.2's gemm:jit bf16 kernel, which
// it takes for some layouts, made NaN of it where K = 1 (found by the model
// fuzzer). Operands of +-1 and 2 only: every product is exact.
TEST(DotGeneral, UnitContractionOfInfinity) {
  const double kInf = std::numeric_limits<double>::infinity();
  // clang-format off
  const DotSpec specs[] = {
      {{2, 2, 1}, {2, 1, 4}, {0}, {0}, {2}, {1}, {2, 2, 4}},  // the fuzzer's
      {{2, 1, 3}, {2, 1, 4}, {0}, {0}, {1}, {1}, {2, 3, 4}},  // lhs transposed
      {{2, 3, 1}, {4, 2, 1}, {0}, {1}, {2}, {2}, {2, 3, 4}},  // rhs transposed, batch not leading
      {{3, 1, 1}, {3, 1, 5}, {0}, {0}, {2}, {1}, {3, 1, 5}},  // M = 1
      {{2, 3, 3}, {4, 2, 3}, {0}, {1}, {2}, {2}, {2, 3, 4}},  // K = 3, gemm:jit bf16 is right
  };
  // clang-format on
  for (DType t : {DType::kBF16, DType::kF32})
    for (const DotSpec& s : specs) {
      std::vector<double> lv(NumElements(s.lhs).value()), rv(NumElements(s.rhs).value());
      for (size_t i = 0; i < lv.size(); ++i) lv[i] = i % 3 == 1 ? -1.0 : 1.0;
      for (size_t i = 0; i < rv.size(); ++i) rv[i] = i % 2 ? -2.0 : 2.0;
      lv[0] = kInf, rv.back() = -kInf;
      const HostTensor l = HostTensor::FromDouble(t, s.lhs, lv),
                       r = HostTensor::FromDouble(t, s.rhs, rv);
      const std::vector<double> got = MustRunOp({"dot_general",
                                                 {l, r},
                                                 {{t, Dims(s.out)}},
                                                 {{"lhs_batching_dimensions", s.lb},
                                                  {"rhs_batching_dimensions", s.rb},
                                                  {"lhs_contracting_dimensions", s.lc},
                                                  {"rhs_contracting_dimensions", s.rc}}})[0]
                                          .ToDouble();
      const std::vector<double> want = DotReference(l, r, s);
      for (size_t i = 0; i < want.size(); ++i)
        EXPECT_EQ(got[i], want[i]) << DTypeName(t) << " " << FormatShape(s.lhs) << " x "
                                   << FormatShape(s.rhs) << " at " << i;
    }
}

TEST(DotGeneral, MismatchedContractingSizesAreRejected) {
  auto r = RunOp({"dot_general",
                  {Random(DType::kF32, {3, 4}, Rng()), Random(DType::kF32, {5, 2}, Rng())},
                  {{DType::kF32, {3, 2}}},
                  {{"lhs_contracting_dimensions", std::vector<int64_t>{1}},
                   {"rhs_contracting_dimensions", std::vector<int64_t>{0}}}});
  ExpectError(r.status(), {"dot_general", "contracting dimension sizes differ"});
}

// brt.matmul = dot_general + bias over the rhs free dims + activation.
TEST(Matmul, BiasAndActivationEpilogues) {
  struct Case {
    DotSpec spec;
    bool bias;
    const char* activation;
  };
  const Case cases[] = {
      {kDots[0], true, "relu"},   // oneDNN, plain layout
      {kDots[1], true, "tanh"},   // oneDNN, transposed lhs
      {kDots[3], false, "relu"},  // batched, no bias
      {kDots[5], true, "none"},   // two contracting dims
      {kDots[4], true, "gelu"},   // batch dims not leading, exact gelu
      {kDots[8], true, "relu"},   // K = 0: the loop kernel adds the bias
  };
  for (const Case& c : cases) {
    const DotSpec& s = c.spec;
    HostTensor l = Random(DType::kF32, s.lhs, Rng()), r = Random(DType::kF32, s.rhs, Rng());
    std::vector<int64_t> free(s.out.end() - (s.rhs.size() - s.rb.size() - s.rc.size()),
                              s.out.end());
    HostTensor bias = Random(DType::kF32, free, Rng());
    std::vector<HostTensor> inputs = {l, r};
    if (c.bias) inputs.push_back(bias);
    auto out = MustRunOp({"brt.matmul",
                          inputs,
                          {{DType::kF32, Dims(s.out)}},
                          {{"lhs_batching_dimensions", s.lb},
                           {"rhs_batching_dimensions", s.rb},
                           {"lhs_contracting_dimensions", s.lc},
                           {"rhs_contracting_dimensions", s.rc},
                           {"activation", c.activation}}});
    std::vector<double> ref = DotReference(l, r, s);
    const int64_t n = bias.numel();
    for (size_t i = 0; i < ref.size(); ++i) {
      if (c.bias) ref[i] += bias.Get(static_cast<int64_t>(i) % n);
      if (std::string(c.activation) == "relu") ref[i] = std::max(ref[i], 0.0);
      if (std::string(c.activation) == "tanh") ref[i] = std::tanh(ref[i]);
      if (std::string(c.activation) == "gelu")
        ref[i] = 0.5 * ref[i] * (1 + std::erf(ref[i] / std::sqrt(2.0)));
    }
    EXPECT_LE(RelError(out[0].ToDouble(), ref), 1e-5) << FormatShape(s.lhs) << " " << c.activation;
  }
  const DotSpec& s = kDots[0];
  auto bad = RunOp({"brt.matmul",
                    {Random(DType::kF32, s.lhs, Rng()), Random(DType::kF32, s.rhs, Rng()),
                     Random(DType::kF32, {33}, Rng())},
                    {{DType::kF32, Dims(s.out)}},
                    {{"lhs_contracting_dimensions", s.lc}, {"rhs_contracting_dimensions", s.rc}}});
  ExpectError(bad.status(), {"bias must have the rhs free dimensions [9]", "got [33]"});
}

// relu as maximum(x, 0) (NaN stays NaN, -0 becomes +0) and relu_select as
// select(x < 0, 0, x) (PyTorch's: -0 stays too), on each path of brt.matmul
// and brt.conv: checked bit for bit against the same op without an
// activation, the relu applied here. Rows of the lhs hold NaN, -inf, inf and
// -0 (with K = 1 a product of -0 may come out as -0). oneDNN's relu post-op
// made NaN 0.
bool SameBits(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

void ExpectReluEpilogue(const OpRun& plain, const std::string& where) {
  const std::vector<double> none = MustRunOp(plain)[0].ToDouble();
  for (const char* activation : {"relu", "relu_select"}) {
    OpRun fused = plain;
    fused.attrs.emplace_back("activation", activation);
    const std::vector<double> got = MustRunOp(fused)[0].ToDouble();
    const bool select = std::string(activation) == "relu_select";
    size_t nan = 0;
    for (size_t i = 0; i < none.size(); ++i) {
      const double v = none[i];
      const double want = select ? (v < 0 ? 0.0 : v) : (std::isnan(v) ? v : v <= 0 ? 0.0 : v);
      nan += std::isnan(v);
      EXPECT_TRUE(SameBits(got[i], want))
          << where << " " << activation << " at " << i << ": " << got[i] << " for " << v;
    }
    EXPECT_GT(nan, 0u) << where;
  }
}

TEST(Matmul, ReluKeepsNanOnEveryPath) {
  const double kNan = std::numeric_limits<double>::quiet_NaN(),
               kInf = std::numeric_limits<double>::infinity();
  for (DType t : {DType::kF32, DType::kBF16, DType::kF16})
    for (int64_t k : {1, 37})
      for (const std::vector<int>& weights : {std::vector<int>{}, std::vector<int>{1}}) {
        const DotSpec s = {{9, k}, {k, 20}, {}, {}, {1}, {0}, {9, 20}};
        HostTensor l = Random(t, s.lhs, Rng()), r = Random(t, s.rhs, Rng());
        for (int64_t j = 0; j < k; ++j)
          l.Set(0 * k + j, kNan), l.Set(1 * k + j, -kInf), l.Set(2 * k + j, kInf),
              l.Set(3 * k + j, -0.0);
        ExpectReluEpilogue(
            {"brt.matmul",
             {l, r},
             {{t, Dims(s.out)}},
             {{"lhs_contracting_dimensions", s.lc}, {"rhs_contracting_dimensions", s.rc}},
             weights},
            std::string(DTypeName(t)) + " K=" + std::to_string(k) +
                (weights.empty() ? "" : " constant weights"));
      }
  // Batched (oneDNN's batched matmul, not brt's small loop: it has an epilogue).
  const DotSpec& b = kDots[3];
  HostTensor l = Random(DType::kF32, b.lhs, Rng()), r = Random(DType::kF32, b.rhs, Rng());
  l.Set(5, kNan);
  ExpectReluEpilogue({"brt.matmul",
                      {l, r, Random(DType::kF32, {5}, Rng())},
                      {{DType::kF32, Dims(b.out)}},
                      {{"lhs_batching_dimensions", b.lb},
                       {"rhs_batching_dimensions", b.rb},
                       {"lhs_contracting_dimensions", b.lc},
                       {"rhs_contracting_dimensions", b.rc}}},
                     "batched");
}

struct ConvSpec {
  std::vector<int64_t> in, kernel, out;
  int64_t ib, ifd, ko, ki, ob, of;
  std::vector<int64_t> is, ks, os, strides, padding, dilation;
  int64_t groups;
};

std::vector<double> ConvReference(const HostTensor& x, const HostTensor& w, const ConvSpec& s) {
  const int ns = static_cast<int>(s.is.size());
  const int64_t O = s.kernel[s.ko], I = s.kernel[s.ki], og = O / s.groups;
  std::vector<int64_t> kspatial;
  for (int64_t d : s.ks) kspatial.push_back(s.kernel[d]);
  std::vector<double> out(NumElements(s.out).value());
  for (int64_t o = 0; o < static_cast<int64_t>(out.size()); ++o) {
    auto oi = Unravel(o, s.out);
    const int64_t n = oi[s.ob], f = oi[s.of], g = f / og;
    double acc = 0;
    for (int64_t c = 0; c < I; ++c)
      for (int64_t kk = 0; kk < NumElements(kspatial).value(); ++kk) {
        auto kidx = Unravel(kk, kspatial);
        std::vector<int64_t> xi(s.in.size()), wi(s.kernel.size());
        xi[s.ib] = n, xi[s.ifd] = g * I + c, wi[s.ko] = f, wi[s.ki] = c;
        bool inside = true;
        for (int d = 0; d < ns; ++d) {
          const int64_t pos =
              oi[s.os[d]] * s.strides[d] + kidx[d] * s.dilation[d] - s.padding[2 * d];
          inside = inside && pos >= 0 && pos < s.in[s.is[d]];
          xi[s.is[d]] = pos, wi[s.ks[d]] = kidx[d];
        }
        if (inside) acc += x.Get(Ravel(xi, s.in)) * w.Get(Ravel(wi, s.kernel));
      }
    out[o] = acc;
  }
  return out;
}

// The StableHLO attributes of a ConvSpec.
std::vector<Attribute> ConvAttrs(const ConvSpec& c) {
  return {{"input_batch_dimension", c.ib},
          {"input_feature_dimension", c.ifd},
          {"input_spatial_dimensions", c.is},
          {"kernel_output_feature_dimension", c.ko},
          {"kernel_input_feature_dimension", c.ki},
          {"kernel_spatial_dimensions", c.ks},
          {"output_batch_dimension", c.ob},
          {"output_feature_dimension", c.of},
          {"output_spatial_dimensions", c.os},
          {"window_strides", c.strides},
          {"padding", c.padding},
          {"rhs_dilation", c.dilation},
          {"feature_group_count", c.groups}};
}

std::vector<Attribute> WithActivation(std::vector<Attribute> attrs, const char* activation) {
  attrs.emplace_back("activation", activation);
  return attrs;
}

// clang-format off
const ConvSpec kConvs[] = {
    // in, kernel, out, ib, if, ko, ki, ob, of, input/kernel/output spatial dims, strides, padding, dilation, groups
    // NCHW / OIHW, stride 1, no padding
    {{2, 3, 8, 8}, {4, 3, 3, 3}, {2, 4, 6, 6}, 0, 1, 0, 1, 0, 1, {2, 3}, {2, 3}, {2, 3}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1},
    // NHWC / HWIO (JAX's default for flax), stride 2, SAME padding
    {{2, 9, 9, 3}, {3, 3, 3, 5}, {2, 5, 5, 5}, 0, 3, 3, 2, 0, 3, {1, 2}, {0, 1}, {1, 2}, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1},
    // dilation 2, asymmetric padding
    {{1, 2, 10, 7}, {3, 2, 3, 2}, {1, 3, 7, 7}, 0, 1, 0, 1, 0, 1, {2, 3}, {2, 3}, {2, 3}, {1, 1}, {0, 1, 1, 0}, {2, 1}, 1},
    // grouped (depthwise-style) 1-D convolution
    {{2, 4, 11}, {8, 2, 3}, {2, 8, 9}, 0, 1, 0, 1, 0, 1, {2}, {2}, {2}, {1}, {0, 0}, {1}, 2},
    // Channels-last activations with enough features for oneDNN's brgemm
    // kernels, which then read and write them in place (no reorder), with
    // an OIHW filter as the compiler's channels-last pass leaves it: 3x3,
    // 1x1 stride 2, and depthwise.
    {{2, 7, 7, 16}, {24, 16, 3, 3}, {2, 7, 7, 24}, 0, 3, 0, 1, 0, 3, {1, 2}, {2, 3}, {1, 2}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
    {{1, 8, 8, 32}, {16, 32, 1, 1}, {1, 4, 4, 16}, 0, 3, 0, 1, 0, 3, {1, 2}, {2, 3}, {1, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, 1},
    {{1, 6, 6, 8}, {8, 1, 3, 3}, {1, 6, 6, 8}, 0, 3, 0, 1, 0, 3, {1, 2}, {2, 3}, {1, 2}, {1, 1}, {1, 1, 1, 1}, {1, 1}, 8},
};
// clang-format on

TEST(Convolution, LayoutsStridesPaddingDilationGroups) {
  for (const ConvSpec& s : kConvs) {
    HostTensor x = Random(DType::kF32, s.in, Rng()), w = Random(DType::kF32, s.kernel, Rng());
    // The filter bound (packed per run) and as a weight (packed once at load).
    for (const std::vector<int>& weights : {std::vector<int>{}, std::vector<int>{1}}) {
      auto out =
          MustRunOp({"convolution", {x, w}, {{DType::kF32, Dims(s.out)}}, ConvAttrs(s), weights});
      EXPECT_LE(RelError(out[0].ToDouble(), ConvReference(x, w, s)), 1e-5)
          << FormatShape(s.in) << " * " << FormatShape(s.kernel) << " weight: " << !weights.empty();
    }
  }
}

// The types oneDNN has no convolution for run the CPU provider's reference
// loop (the CUDA provider's table has none of them): f64 and f16 against the
// float64 reference; i8, i32 and u64 on small values against it wrapped to
// the type (i8 sums overflow), bit for bit; i1 as the or of ands.
TEST(Convolution, ReferenceLoopOnTheTypesOneDnnLacks) {
  if (TestDevice().kind == DeviceKind::kCuda) GTEST_SKIP() << "the CPU provider's kernel";
  for (const ConvSpec& s : kConvs) {
    for (DType t : {DType::kF64, DType::kF16}) {
      HostTensor x = Random(t, s.in, Rng()), w = Random(t, s.kernel, Rng());
      auto out = MustRunOp({"convolution", {x, w}, {{t, Dims(s.out)}}, ConvAttrs(s)});
      EXPECT_LE(RelError(out[0].ToDouble(), ConvReference(x, w, s)),
                t == DType::kF64 ? 1e-12 : 2e-3)
          << DTypeName(t) << " " << FormatShape(s.in) << " * " << FormatShape(s.kernel);
    }
    for (DType t : {DType::kI8, DType::kI32, DType::kU64, DType::kI1}) {
      const bool logical = t == DType::kI1;
      const double lo = logical || t == DType::kU64 ? 0 : -9, hi = logical ? 1 : 9;
      HostTensor x = Random(t, s.in, Rng(), lo, hi), w = Random(t, s.kernel, Rng(), lo, hi);
      auto out = MustRunOp({"convolution", {x, w}, {{t, Dims(s.out)}}, ConvAttrs(s)});
      const std::vector<double> want = ConvReference(x, w, s), got = out[0].ToDouble();
      for (size_t i = 0; i < want.size(); ++i) {
        const int64_t sum = static_cast<int64_t>(want[i]);
        const double wrapped = logical            ? double(sum != 0)
                               : t == DType::kI8  ? double(static_cast<int8_t>(sum))
                               : t == DType::kU64 ? double(static_cast<uint64_t>(sum))
                                                  : double(static_cast<int32_t>(sum));
        ASSERT_EQ(got[i], wrapped) << DTypeName(t) << " " << FormatShape(s.in) << " at " << i;
      }
    }
  }
}

// brt.conv: convolution + bias over the output features + activation.
TEST(Convolution, BiasAndActivationEpilogues) {
  const std::pair<int, const char*> cases[] = {{1, "relu"}, {0, "gelu"}, {3, "tanh"}};
  for (auto [index, activation] : cases) {
    const ConvSpec& c = kConvs[index];
    HostTensor x = Random(DType::kF32, c.in, Rng()), w = Random(DType::kF32, c.kernel, Rng());
    const int64_t features = c.out[c.of];
    HostTensor bias = Random(DType::kF32, {features}, Rng());
    auto out = MustRunOp({"brt.conv",
                          {x, w, bias},
                          {{DType::kF32, Dims(c.out)}},
                          WithActivation(ConvAttrs(c), activation)});
    std::vector<double> ref = ConvReference(x, w, c);
    for (size_t i = 0; i < ref.size(); ++i) {
      double v = ref[i] + bias.Get(Unravel(static_cast<int64_t>(i), c.out)[c.of]);
      if (std::string(activation) == "relu") v = std::max(v, 0.0);
      if (std::string(activation) == "tanh") v = std::tanh(v);
      if (std::string(activation) == "gelu") v = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
      ref[i] = v;
    }
    EXPECT_LE(RelError(out[0].ToDouble(), ref), 1e-5) << activation;
  }
  const ConvSpec& c = kConvs[0];
  auto bad = RunOp({"brt.conv",
                    {Random(DType::kF32, c.in, Rng()), Random(DType::kF32, c.kernel, Rng()),
                     Random(DType::kF32, {3}, Rng())},
                    {{DType::kF32, Dims(c.out)}},
                    {}});
  ExpectError(bad.status(), {"bias must have shape [4] (the output features), got [3]"});
}

// relu and relu_select on brt.conv (oneDNN's relu post-op made NaN 0), f32
// and bf16 (run in f32 where the CPU has no bf16 convolution).
TEST(Convolution, ReluKeepsNan) {
  for (DType t : {DType::kF32, DType::kBF16})
    for (int index : {0, 4}) {
      const ConvSpec& c = kConvs[index];
      HostTensor x = Random(t, c.in, Rng()), w = Random(t, c.kernel, Rng());
      x.Set(3, std::numeric_limits<double>::quiet_NaN());
      x.Set(x.numel() - 1, -std::numeric_limits<double>::infinity());
      ExpectReluEpilogue({"brt.conv",
                          {x, w, Random(t, {c.out[c.of]}, Rng())},
                          {{t, Dims(c.out)}},
                          ConvAttrs(c),
                          {1}},
                         std::string(DTypeName(t)) + " conv " + std::to_string(index));
    }
}

// brt.conv's residual operand (a residual connection, which the compiler
// fuses for the CPU): convolution + bias + residual, then the activation,
// against the float64 reference, where oneDNN reads the residual in place
// (channels-last) and where it is reordered into oneDNN's layout (NCHW,
// 1-D). A NaN in the residual stays NaN through every activation. The CUDA
// provider refuses the operand, naming it.
TEST(Convolution, ResidualEpilogue) {
  for (DType t : {DType::kF32, DType::kBF16})
    for (int index : {0, 1, 3, 4, 5})
      for (const char* activation : {"none", "relu", "relu_select", "tanh", "gelu"}) {
        const ConvSpec& c = kConvs[index];
        HostTensor x = Random(t, c.in, Rng()), w = Random(t, c.kernel, Rng());
        HostTensor bias = Random(t, {c.out[c.of]}, Rng()), residual = Random(t, c.out, Rng());
        residual.Set(1, std::numeric_limits<double>::quiet_NaN());
        const OpRun run{"brt.conv",
                        {x, w, bias, residual},
                        {{t, Dims(c.out)}},
                        WithActivation(ConvAttrs(c), activation),
                        {1}};
        const std::string where =
            std::string(DTypeName(t)) + " conv " + std::to_string(index) + " " + activation;
        if (TestDevice().kind == DeviceKind::kCuda) {
          ExpectError(RunOp(run).status(), {"residual operand", "CPU provider only"});
          continue;
        }
        std::vector<double> got = MustRunOp(run)[0].ToDouble(), ref = ConvReference(x, w, c);
        const std::string act = activation;
        for (size_t i = 0; i < ref.size(); ++i) {
          const int64_t flat = static_cast<int64_t>(i);
          double v = ref[i] + bias.Get(Unravel(flat, c.out)[c.of]) + residual.Get(flat);
          if (act == "relu" || act == "relu_select") v = v < 0 ? 0.0 : v;
          if (act == "tanh") v = std::tanh(v);
          if (act == "gelu") v = 0.5 * v * (1 + std::erf(v / std::sqrt(2.0)));
          ref[i] = v;
        }
        EXPECT_TRUE(std::isnan(got[1])) << where << ": " << got[1];
        got[1] = ref[1] = 0;
        EXPECT_LE(RelError(got, ref), t == DType::kF32 ? 1e-5 : 2e-2) << where;
      }
  const ConvSpec& c = kConvs[4];
  auto bad = RunOp({"brt.conv",
                    {Random(DType::kF32, c.in, Rng()), Random(DType::kF32, c.kernel, Rng()),
                     Random(DType::kF32, {24}, Rng()), Random(DType::kF32, {2, 7, 7, 1}, Rng())},
                    {{DType::kF32, Dims(c.out)}},
                    ConvAttrs(c)});
  ExpectError(bad.status(), {"residual must have the result's shape [2,7,7,24]", "got [2,7,7,1]"});
}

TEST(Convolution, TransposedConvolutionIsReportedUnsupported) {
  const ConvSpec& s = kConvs[0];
  auto r = RunOp({"convolution",
                  {Random(DType::kF32, s.in, Rng()), Random(DType::kF32, s.kernel, Rng())},
                  {{DType::kF32, {2, 4, 13, 13}}},
                  {{"lhs_dilation", std::vector<int64_t>{2, 2}}}});
  ExpectError(r.status(), {"lhs_dilation"});
  EXPECT_EQ(r.status().code(), StatusCode::kUnsupported);
}

TEST(Softmax, AnyAxis) {
  HostTensor x = Random(DType::kF32, {3, 5, 7}, Rng(), -4, 4);
  for (int64_t axis : {2, 1}) {
    auto out = MustRunOp({"brt.softmax", {x}, {{DType::kF32, {3, 5, 7}}}, {{"axis", axis}}});
    std::vector<double> ref(x.numel());
    for (int64_t i = 0; i < x.numel(); ++i) {
      auto idx = Unravel(i, x.shape);
      double denom = 0;
      for (int64_t k = 0; k < x.shape[axis]; ++k) {
        auto j = idx;
        j[axis] = k;
        denom += std::exp(x.Get(Ravel(j, x.shape)));
      }
      ref[i] = std::exp(x.Get(i)) / denom;
    }
    EXPECT_LE(RelError(out[0].ToDouble(), ref), 1e-6) << "axis " << axis;
  }
}

// zero_masked_rows (PyTorch's safe softmax): a line whose inputs are all -inf
// gives zeros, one with a single finite input a one-hot; without the flag an
// all -inf line gives NaN, as a softmax does.
TEST(Softmax, ZeroMaskedRows) {
  const double inf = std::numeric_limits<double>::infinity();
  for (int64_t axis : {1, 0}) {
    HostTensor x = Random(DType::kF32, {4, 6}, Rng(), -4, 4);
    // Along `axis`: line 0 all -inf, line 1 -inf but for one entry.
    for (int64_t k = 0; k < x.shape[axis]; ++k) {
      const int64_t line0 = axis == 1 ? k : k * 6, line1 = axis == 1 ? 6 + k : k * 6 + 1;
      x.Set(line0, -inf);
      if (k != 2) x.Set(line1, -inf);
    }
    auto out = MustRunOp({"brt.softmax",
                          {x},
                          {{DType::kF32, {4, 6}}},
                          {{"axis", axis}, {"zero_masked_rows", int64_t{1}}}});
    auto plain = MustRunOp({"brt.softmax", {x}, {{DType::kF32, {4, 6}}}, {{"axis", axis}}});
    std::vector<double> y = out[0].ToDouble(), p = plain[0].ToDouble();
    for (int64_t i = 0; i < x.numel(); ++i) {
      const int64_t line = axis == 1 ? i / 6 : i % 6, k = axis == 1 ? i % 6 : i / 6;
      if (line == 0) {
        EXPECT_EQ(y[i], 0.0) << "axis " << axis << " element " << i;
        EXPECT_TRUE(std::isnan(p[i])) << "axis " << axis << " element " << i;
      } else if (line == 1) {
        EXPECT_EQ(y[i], k == 2 ? 1.0 : 0.0) << "axis " << axis << " element " << i;
      } else {
        EXPECT_EQ(y[i], p[i]) << "axis " << axis << " element " << i;
      }
    }
  }
}

// A NaN input makes its whole line NaN (StableHLO's maximum propagates it
// into the line's max), as in PyTorch and JAX; the other lines keep their
// values. oneDNN alone gives NaN at that input only.
TEST(Softmax, NanMakesItsLineNan) {
  for (int64_t axis : {1, 0}) {
    HostTensor x = Random(DType::kF32, {4, 6}, Rng(), -4, 4);
    const std::vector<double> clean = x.ToDouble();
    x.Set(axis == 1 ? 6 + 3 : 3 * 6 + 1, std::numeric_limits<double>::quiet_NaN());
    for (int64_t zero_masked_rows : {0, 1}) {
      auto out = MustRunOp({"brt.softmax",
                            {x},
                            {{DType::kF32, {4, 6}}},
                            {{"axis", axis}, {"zero_masked_rows", zero_masked_rows}}});
      const std::vector<double> y = out[0].ToDouble();
      for (int64_t i = 0; i < x.numel(); ++i) {
        const int64_t line = axis == 1 ? i / 6 : i % 6;
        if (line == 1) {
          EXPECT_TRUE(std::isnan(y[i])) << "axis " << axis << " element " << i;
          continue;
        }
        double denom = 0;
        for (int64_t k = 0; k < x.shape[axis]; ++k)
          denom += std::exp(clean[axis == 1 ? line * 6 + k : k * 6 + line]);
        EXPECT_NEAR(y[i], std::exp(clean[i]) / denom, 1e-6) << "axis " << axis << " element " << i;
      }
    }
  }
}

// Small inputs run brt's loop, large ones oneDNN's primitive
// (kDnnlLayerNormMinElements): both against float64.
TEST(LayerNorm, LastDimensionWithScaleAndShift) {
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{24, 32}, {96, 384}}) {
    HostTensor x = Random(DType::kF32, {rows / 4, 4, cols}, Rng(), -3, 3);
    HostTensor g = Random(DType::kF32, {cols}, Rng()), b = Random(DType::kF32, {cols}, Rng());
    const double eps = 1e-5;
    auto out = MustRunOp(
        {"brt.layer_norm", {x, g, b}, {{DType::kF32, {rows / 4, 4, cols}}}, {{"epsilon", eps}}});
    std::vector<double> ref(x.numel());
    for (int64_t row = 0; row < rows; ++row) {
      double mean = 0, var = 0;
      for (int64_t c = 0; c < cols; ++c) mean += x.Get(row * cols + c) / cols;
      for (int64_t c = 0; c < cols; ++c)
        var += (x.Get(row * cols + c) - mean) * (x.Get(row * cols + c) - mean) / cols;
      for (int64_t c = 0; c < cols; ++c)
        ref[row * cols + c] =
            (x.Get(row * cols + c) - mean) / std::sqrt(var + eps) * g.Get(c) + b.Get(c);
    }
    EXPECT_LE(RelError(out[0].ToDouble(), ref), 1e-5) << rows << "x" << cols;
  }
}

// The bf16 entries of the kernel table: oneDNN runs them on this CPU
// (avx512_bf16); results match float64 references within bf16 precision.
TEST(Bfloat16, ConvolutionSoftmaxLayerNorm) {
  const ConvSpec& c = kConvs[1];
  HostTensor x = Random(DType::kBF16, c.in, Rng()), w = Random(DType::kBF16, c.kernel, Rng());
  for (const std::vector<int>& weights : {std::vector<int>{}, std::vector<int>{1}}) {
    auto conv =
        MustRunOp({"convolution", {x, w}, {{DType::kBF16, Dims(c.out)}}, ConvAttrs(c), weights});
    EXPECT_LE(RelError(conv[0].ToDouble(), ConvReference(x, w, c)), 2e-2);
  }

  HostTensor s = Random(DType::kBF16, {6, 40}, Rng(), -3, 3);
  auto soft = MustRunOp({"brt.softmax", {s}, {{DType::kBF16, {6, 40}}}, {{"axis", 1}}});
  std::vector<double> ref(s.numel());
  for (int64_t r = 0; r < 6; ++r) {
    double sum = 0;
    for (int64_t k = 0; k < 40; ++k) sum += std::exp(s.Get(r * 40 + k));
    for (int64_t k = 0; k < 40; ++k) ref[r * 40 + k] = std::exp(s.Get(r * 40 + k)) / sum;
  }
  EXPECT_LE(RelError(soft[0].ToDouble(), ref), 2e-2);

  HostTensor v = Random(DType::kBF16, {5, 64}, Rng(), -2, 2);
  HostTensor g = Random(DType::kF32, {64}, Rng()), b = Random(DType::kF32, {64}, Rng());
  auto ln =
      MustRunOp({"brt.layer_norm", {v, g, b}, {{DType::kBF16, {5, 64}}}, {{"epsilon", 1e-5}}});
  std::vector<double> lref(v.numel());
  for (int64_t r = 0; r < 5; ++r) {
    double mean = 0, var = 0;
    for (int64_t k = 0; k < 64; ++k) mean += v.Get(r * 64 + k) / 64;
    for (int64_t k = 0; k < 64; ++k)
      var += (v.Get(r * 64 + k) - mean) * (v.Get(r * 64 + k) - mean) / 64;
    for (int64_t k = 0; k < 64; ++k)
      lref[r * 64 + k] = (v.Get(r * 64 + k) - mean) / std::sqrt(var + 1e-5) * g.Get(k) + b.Get(k);
  }
  EXPECT_LE(RelError(ln[0].ToDouble(), lref), 2e-2);
}

}  // namespace
}  // namespace brt::test
