// PackedGemm (packed_gemm.h), built with -mavx2 -mfma.
#include <omp.h>

#include <algorithm>
#include <vector>

#include "gemm_tiles_avx2.h"
#include "packed_gemm.h"
#include "vector_math.h"

namespace brt::cpu {
namespace {

using ops::Activation;
using namespace avx2_tiles;  // NOLINT: the tile and its packing

constexpr int64_t kDepth = 256;      // rows of a panel per pass: 16 KiB, kept in L1
constexpr int64_t kBlockRows = 192;  // rows of `a` per pass over the panels: kept in L2

// tanh or GELU over a finished tile (rows x cols of c), still in L1; the
// loops vectorize over vector_math.h's functions.
void ActivateTile(Activation activation, float* c, int64_t ldc, int rows, int cols) {
  for (int r = 0; r < rows; ++r) {
    float* out = c + r * ldc;
    if (activation == Activation::kGelu) {
      for (int j = 0; j < cols; ++j)
        out[j] = 0.5f * out[j] * (1.0f + vmath::Erf(out[j] * 0.70710678118654752f));
    } else {
      for (int j = 0; j < cols; ++j) out[j] = vmath::Tanh(out[j]);
    }
  }
}

}  // namespace

PackedWeights PackWeights(const float* b, int64_t K, int64_t N, int64_t rsk, int64_t rsn) {
  PackedWeights w;
  w.K = K, w.N = N;
  w.panels.resize(PanelFloats(K, N));
  PackPanels(b, K, N, rsk, rsn, w.panels.data());
  return w;
}

void PackedGemm(const float* a, int64_t lda, int64_t M, const PackedWeights& w, const float* bias,
                Activation activation, float* c, int64_t ldc) {
  const bool relu = activation == Activation::kRelu,
             in_l1 = activation == Activation::kGelu || activation == Activation::kTanh;
  const int64_t K = w.K, N = w.N, panels = (N + kCols - 1) / kCols;
  const int64_t blocks = (M + kBlockRows - 1) / kBlockRows;
#pragma omp parallel
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    // Enough panels: each thread takes a share of them and every row block;
    // else a share of the row blocks and every panel.
    const bool split_panels = panels >= 4 * nt || blocks < nt;
    const int64_t p_begin = split_panels ? panels * t / nt : 0,
                  p_end = split_panels ? panels * (t + 1) / nt : panels;
    thread_local std::vector<float> packed;
    packed.resize(((kBlockRows + kRows - 1) / kRows) * kRows * kDepth);
    for (int64_t b = split_panels ? 0 : t; b < blocks; b += split_panels ? 1 : nt) {
      const int64_t m0 = b * kBlockRows, block_rows = std::min(kBlockRows, M - m0);
      for (int64_t k0 = 0; k0 < K; k0 += kDepth) {
        const int64_t depth = std::min(kDepth, K - k0);
        const bool first = k0 == 0, last = k0 + depth == K;
        PackRows(a + m0 * lda + k0, lda, block_rows, depth, packed.data());
        for (int64_t p = p_begin; p < p_end; ++p) {
          const int cols = static_cast<int>(std::min<int64_t>(kCols, N - p * kCols));
          const float* panel = w.panels.data() + (p * K + k0) * kCols;
          for (int64_t r0 = 0; r0 < block_rows; r0 += kRows) {
            const int rows = static_cast<int>(std::min<int64_t>(kRows, block_rows - r0));
            float* tile = c + (m0 + r0) * ldc + p * kCols;
            kTiles[rows](packed.data() + r0 * depth, 0, panel, depth, tile, ldc, cols, first,
                         bias ? bias + p * kCols : nullptr, relu && last);
            if (in_l1 && last) ActivateTile(activation, tile, ldc, rows, cols);
          }
        }
      }
    }
  }
}

}  // namespace brt::cpu
