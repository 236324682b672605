// PackedGemm (packed_gemm.h), built with -mavx2 -mfma.
#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "packed_gemm.h"
#include "vector_math.h"

namespace brt::cpu {
namespace {

using ops::Activation;

constexpr int kRows = 6, kCols = 16;
constexpr int64_t kDepth = 256;      // rows of a panel per pass: 16 KiB, kept in L1
constexpr int64_t kBlockRows = 192;  // rows of `a` per pass over the panels: kept in L2

// One tile: rows x 16 columns of c from `depth` steps of the panel and of
// a's micro-panel (PackRows' layout: kRows values per step). The first
// pass of the depth writes (with the bias), later ones add; the last applies
// relu (max(0, x) keeps NaN, as maximum does).
template <int rows>
void Tile(const float* a, const float* panel, int64_t depth, float* c, int64_t ldc, int cols,
          bool first, const float* bias, bool relu) {
  __m256 acc[rows][2];
#pragma GCC unroll 6
  for (int r = 0; r < rows; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (int64_t k = 0; k < depth; ++k) {
    const __m256 b0 = _mm256_loadu_ps(panel + k * kCols),
                 b1 = _mm256_loadu_ps(panel + k * kCols + 8);
#pragma GCC unroll 6
    for (int r = 0; r < rows; ++r) {
      const __m256 x = _mm256_broadcast_ss(a + k * kRows + r);
      acc[r][0] = _mm256_fmadd_ps(x, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(x, b1, acc[r][1]);
    }
  }
  alignas(32) float tmp[kCols];
  // Unrolled, as the loops above, so that acc stays in registers.
#pragma GCC unroll 6
  for (int r = 0; r < rows; ++r) {
    float* out = c + r * ldc;
    __m256 lo = acc[r][0], hi = acc[r][1];
    if (!first) {
      if (cols == kCols) {
        lo = _mm256_add_ps(lo, _mm256_loadu_ps(out)),
        hi = _mm256_add_ps(hi, _mm256_loadu_ps(out + 8));
      } else {
        std::memset(tmp, 0, sizeof(tmp));
        std::memcpy(tmp, out, cols * sizeof(float));
        lo = _mm256_add_ps(lo, _mm256_load_ps(tmp)),
        hi = _mm256_add_ps(hi, _mm256_load_ps(tmp + 8));
      }
    } else if (bias) {
      std::memset(tmp, 0, sizeof(tmp));
      std::memcpy(tmp, bias, cols * sizeof(float));
      lo = _mm256_add_ps(lo, _mm256_load_ps(tmp)), hi = _mm256_add_ps(hi, _mm256_load_ps(tmp + 8));
    }
    if (relu) {
      lo = _mm256_max_ps(_mm256_setzero_ps(), lo), hi = _mm256_max_ps(_mm256_setzero_ps(), hi);
    }
    if (cols == kCols) {
      _mm256_storeu_ps(out, lo), _mm256_storeu_ps(out + 8, hi);
    } else {
      _mm256_store_ps(tmp, lo), _mm256_store_ps(tmp + 8, hi);
      std::memcpy(out, tmp, cols * sizeof(float));
    }
  }
}

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

using TileFn = void (*)(const float*, const float*, int64_t, float*, int64_t, int, bool,
                        const float*, bool);
constexpr TileFn kTiles[kRows + 1] = {nullptr,  &Tile<1>, &Tile<2>, &Tile<3>,
                                      &Tile<4>, &Tile<5>, &Tile<6>};

// Rows [0, rows) x depth of a (row stride lda) as micro-panels of kRows rows,
// k-major: out[(t * depth + k) * kRows + r] = a[(t * kRows + r) * lda + k].
void PackRows(const float* a, int64_t lda, int64_t rows, int64_t depth, float* out) {
  for (int64_t t = 0; t * kRows < rows; ++t) {
    const int64_t n = std::min<int64_t>(kRows, rows - t * kRows);
    float* panel = out + t * depth * kRows;
    for (int64_t r = 0; r < n; ++r) {
      const float* row = a + (t * kRows + r) * lda;
      for (int64_t k = 0; k < depth; ++k) panel[k * kRows + r] = row[k];
    }
  }
}

}  // namespace

PackedWeights PackWeights(const float* b, int64_t K, int64_t N, int64_t rsk, int64_t rsn) {
  PackedWeights w;
  w.K = K, w.N = N;
  const int64_t panels = (N + kCols - 1) / kCols;
  w.panels.assign(panels * K * kCols, 0.0f);
  for (int64_t p = 0; p < panels; ++p)
    for (int64_t k = 0; k < K; ++k)
      for (int64_t j = 0; j < kCols && p * kCols + j < N; ++j)
        w.panels[(p * K + k) * kCols + j] = b[k * rsk + (p * kCols + j) * rsn];
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
            kTiles[rows](packed.data() + r0 * depth, panel, depth, tile, ldc, cols, first,
                         bias ? bias + p * kCols : nullptr, relu && last);
            if (in_l1 && last) ActivateTile(activation, tile, ldc, rows, cols);
          }
        }
      }
    }
  }
}

}  // namespace brt::cpu
