// brt.attention (the CPU's fused softmax(scale * q k^T + mask) v) against a
// float64 loop over its definition in docs/ops.md, in the layouts PyTorch
// ([b, s, h, d]) and JAX ([b, h, s, d]) write, with masks, broadcast masks,
// strided features, row blocks shared between threads and the result
// transposed.
#include <cmath>
#include <limits>
#include <numeric>

#include "test_util.h"

namespace brt::test {
namespace {

struct AttentionSpec {
  std::vector<int64_t> q, k, v, mask;                 // operand shapes (mask empty: none)
  std::vector<int64_t> q_dims, k_dims, v_dims, perm;  // perm empty: identity
  double scale = 1.0;
  bool zero_masked_rows = false;
};

// The result shape: [batch..., Sq, Dv] transposed by perm.
std::vector<int64_t> ResultShape(const AttentionSpec& s) {
  const size_t rank = s.q.size(), nb = rank - 2;
  std::vector<int64_t> logical;
  for (size_t i = 0; i < nb; ++i) logical.push_back(s.q[s.q_dims[i]]);
  logical.push_back(s.q[s.q_dims[nb]]);
  logical.push_back(s.v[s.v_dims[nb + 1]]);
  if (s.perm.empty()) return logical;
  std::vector<int64_t> out;
  for (int64_t p : s.perm) out.push_back(logical[p]);
  return out;
}

std::vector<double> AttentionReference(const HostTensor& q, const HostTensor& k,
                                       const HostTensor& v, const HostTensor* mask,
                                       const AttentionSpec& s) {
  const size_t rank = s.q.size(), nb = rank - 2;
  std::vector<int64_t> batch;
  for (size_t i = 0; i < nb; ++i) batch.push_back(s.q[s.q_dims[i]]);
  const int64_t Sq = s.q[s.q_dims[nb]], D = s.q[s.q_dims[nb + 1]], Sk = s.k[s.k_dims[nb]],
                Dv = s.v[s.v_dims[nb + 1]];
  std::vector<int64_t> perm = s.perm;
  if (perm.empty()) {
    perm.resize(rank);
    std::iota(perm.begin(), perm.end(), 0);
  }
  const std::vector<int64_t> out_shape = ResultShape(s);
  std::vector<double> out(NumElements(out_shape).value());
  const int64_t batches = NumElements(batch).value();
  for (int64_t b = 0; b < batches; ++b) {
    const std::vector<int64_t> bi = Unravel(b, batch);
    auto at = [&](const HostTensor& t, const std::vector<int64_t>& dims, int64_t seq,
                  int64_t feature) {
      std::vector<int64_t> idx(rank);
      for (size_t i = 0; i < nb; ++i) idx[dims[i]] = bi[i];
      idx[dims[nb]] = seq, idx[dims[nb + 1]] = feature;
      return t.Get(Ravel(idx, t.shape));
    };
    for (int64_t i = 0; i < Sq; ++i) {
      std::vector<double> row(Sk);
      for (int64_t j = 0; j < Sk; ++j) {
        double acc = 0;
        for (int64_t d = 0; d < D; ++d) acc += at(q, s.q_dims, i, d) * at(k, s.k_dims, j, d);
        row[j] = s.scale * acc;
        if (mask) {  // NumPy-aligned to the scores [batch..., Sq, Sk]
          std::vector<int64_t> scores_idx = bi, midx;
          scores_idx.push_back(i), scores_idx.push_back(j);
          for (size_t m = 0; m < mask->shape.size(); ++m) {
            const size_t d = rank - mask->shape.size() + m;
            midx.push_back(mask->shape[m] == 1 ? 0 : scores_idx[d]);
          }
          row[j] += mask->Get(Ravel(midx, mask->shape));
        }
      }
      const double max = *std::max_element(row.begin(), row.end());
      double sum = 0;
      for (double& x : row) sum += (x = std::exp(x - max));
      for (int64_t e = 0; e < Dv; ++e) {
        double acc = 0;
        if (s.zero_masked_rows && max == -std::numeric_limits<double>::infinity()) {
          acc = 0;
        } else {
          for (int64_t j = 0; j < Sk; ++j) acc += row[j] / sum * at(v, s.v_dims, j, e);
        }
        std::vector<int64_t> logical = bi, idx(rank);
        logical.push_back(i), logical.push_back(e);
        for (size_t d = 0; d < rank; ++d) idx[d] = logical[perm[d]];
        out[Ravel(idx, out_shape)] = acc;
      }
    }
  }
  return out;
}

std::vector<Attribute> Attrs(const AttentionSpec& s) {
  std::vector<Attribute> a = {
      {"q_dims", s.q_dims}, {"k_dims", s.k_dims}, {"v_dims", s.v_dims}, {"scale", s.scale}};
  if (!s.perm.empty()) a.push_back({"permutation", s.perm});
  if (s.zero_masked_rows) a.push_back({"zero_masked_rows", int64_t{1}});
  return a;
}

Expected<std::vector<HostTensor>> RunAttention(const AttentionSpec& s, const HostTensor& q,
                                               const HostTensor& k, const HostTensor& v,
                                               const HostTensor* mask) {
  std::vector<HostTensor> inputs = {q, k, v};
  if (mask) inputs.push_back(*mask);
  return RunOp({"brt.attention", inputs, {{DType::kF32, Dims(ResultShape(s))}}, Attrs(s)});
}

void ExpectMatches(const AttentionSpec& s, const HostTensor& q, const HostTensor& k,
                   const HostTensor& v, const HostTensor* mask, const std::string& what) {
  auto out = RunAttention(s, q, k, v, mask);
  ASSERT_TRUE(out.ok()) << what << ": " << out.status().message();
  EXPECT_LE(RelError((*out)[0].ToDouble(), AttentionReference(q, k, v, mask, s)), 2e-6) << what;
}

class Attention : public ::testing::Test {
 protected:
  void SetUp() override {
    if (TestDevice().kind == DeviceKind::kCuda) GTEST_SKIP() << "brt.attention runs on the CPU";
  }
};

// PyTorch's layout: heads split from the projections, [b, s, h, d], a
// padding mask per batch entry broadcast over the heads ([b, 1, Sq, Sk]:
// -inf on padded keys), the result transposed back to [b, s, h, d].
// Sq = Sk = 13 and D = 8: partial tiles and panels.
TEST_F(Attention, TorchLayoutWithPaddingMask) {
  AttentionSpec s{{2, 13, 3, 8}, {2, 13, 3, 8}, {2, 13, 3, 8}, {2, 1, 13, 13},
                  {0, 2, 1, 3},  {0, 2, 1, 3},  {0, 2, 1, 3},  {0, 2, 1, 3}};
  s.scale = 0.35;
  HostTensor q = Random(DType::kF32, s.q, Rng(), -2, 2), k = Random(DType::kF32, s.k, Rng(), -2, 2),
             v = Random(DType::kF32, s.v, Rng());
  HostTensor mask = Random(DType::kF32, s.mask, Rng(), -0.5, 0.5);
  for (int64_t i = 0; i < 13; ++i)
    for (int64_t j = 4; j < 13; ++j) mask.Set((13 + i) * 13 + j, -INFINITY);  // entry 1: 4 keys
  ExpectMatches(s, q, k, v, &mask, "torch layout");
}

// JAX's layout [b, h, s, d], no mask; Dv = 20 and Sk = 40 span several
// panels, D = 12 blocks of 8 and a remainder; one batch entry of 50 rows is
// shared out as row blocks.
TEST_F(Attention, JaxLayoutRowBlocksWideValues) {
  AttentionSpec s{{1, 2, 50, 12}, {1, 2, 40, 12}, {1, 2, 40, 20}, {},
                  {0, 1, 2, 3},   {0, 1, 2, 3},   {0, 1, 2, 3}};
  HostTensor q = Random(DType::kF32, s.q, Rng(), -2, 2), k = Random(DType::kF32, s.k, Rng(), -2, 2),
             v = Random(DType::kF32, s.v, Rng());
  ExpectMatches(s, q, k, v, nullptr, "jax layout");
  AttentionSpec one = s;  // a single batch entry: only row blocks to share
  one.q = {1, 1, 50, 12}, one.k = {1, 1, 40, 12}, one.v = {1, 1, 40, 20};
  HostTensor q1 = Random(DType::kF32, one.q, Rng(), -2, 2),
             k1 = Random(DType::kF32, one.k, Rng(), -2, 2), v1 = Random(DType::kF32, one.v, Rng());
  ExpectMatches(one, q1, k1, v1, nullptr, "one batch entry");
}

// Features not innermost (q and v stored [b, d, s]), a rank-2 mask aligned
// to the scores' last dims, and one broadcast along the keys ([Sq, 1]).
TEST_F(Attention, StridedFeaturesAndBroadcastMasks) {
  AttentionSpec s{{3, 7, 11}, {3, 9, 7}, {3, 6, 9}, {11, 9}, {0, 2, 1}, {0, 1, 2}, {0, 2, 1}};
  s.scale = 0.5;
  HostTensor q = Random(DType::kF32, s.q, Rng(), -2, 2), k = Random(DType::kF32, s.k, Rng(), -2, 2),
             v = Random(DType::kF32, s.v, Rng());
  HostTensor mask = Random(DType::kF32, s.mask, Rng(), -1, 1);
  ExpectMatches(s, q, k, v, &mask, "[Sq, Sk] mask");
  s.mask = {11, 1};
  HostTensor per_row = Random(DType::kF32, s.mask, Rng(), -1, 1);
  ExpectMatches(s, q, k, v, &per_row, "[Sq, 1] mask");
}

// A row whose keys are all masked: zeros with zero_masked_rows (PyTorch's
// safe softmax), NaN without; a NaN in a query row makes that row NaN; the
// other rows are unaffected. 11 keys: a vector of 8 and 3 more.
TEST_F(Attention, FullyMaskedAndNaNRows) {
  AttentionSpec s{{1, 4, 6}, {1, 11, 6}, {1, 11, 3}, {1, 4, 11}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}};
  HostTensor q = Random(DType::kF32, s.q, Rng()), k = Random(DType::kF32, s.k, Rng()),
             v = Random(DType::kF32, s.v, Rng());
  HostTensor mask = Random(DType::kF32, s.mask, Rng());
  for (int64_t j = 0; j < 11; ++j) mask.Set(2 * 11 + j, -INFINITY);  // row 2
  q.Set(3 * 6 + 4, std::numeric_limits<double>::quiet_NaN());        // row 3
  for (bool zero : {true, false}) {
    s.zero_masked_rows = zero;
    auto out = RunAttention(s, q, k, v, &mask);
    ASSERT_TRUE(out.ok()) << out.status().message();
    const std::vector<double> y = (*out)[0].ToDouble();
    for (int64_t e = 0; e < 3; ++e) {
      if (zero)
        EXPECT_EQ(y[2 * 3 + e], 0.0) << e;
      else
        EXPECT_TRUE(std::isnan(y[2 * 3 + e])) << e;
      EXPECT_TRUE(std::isnan(y[3 * 3 + e])) << e;
    }
    s.zero_masked_rows = true;  // the reference's other rows are the same either way
    const std::vector<double> ref = AttentionReference(q, k, v, &mask, s);
    for (int64_t i : {0, 1})
      for (int64_t e = 0; e < 3; ++e) EXPECT_NEAR(y[i * 3 + e], ref[i * 3 + e], 1e-6) << i;
    s.zero_masked_rows = zero;
  }
}

TEST_F(Attention, BadShapesAreNamed) {
  AttentionSpec s{{2, 4, 6}, {3, 5, 6}, {2, 5, 3}, {}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}};
  HostTensor q = Random(DType::kF32, s.q, Rng()), k = Random(DType::kF32, s.k, Rng()),
             v = Random(DType::kF32, s.v, Rng());
  s.q = {2, 4, 6};  // result shape from q and v
  ExpectError(RunAttention(s, q, k, v, nullptr).status(),
              {"brt.attention", "batch dim 0 differs: q 2, k 3, v 2"});
  AttentionSpec m{{2, 4, 6}, {2, 5, 6}, {2, 5, 3}, {3, 5}, {0, 1, 2}, {0, 1, 2}, {0, 1, 2}};
  HostTensor k2 = Random(DType::kF32, m.k, Rng()), bad_mask = Random(DType::kF32, m.mask, Rng());
  ExpectError(RunAttention(m, q, k2, v, &bad_mask).status(),
              {"brt.attention", "mask [3,5] does not broadcast to the scores [2,4,5]"});
}

}  // namespace
}  // namespace brt::test
