// The register-blocked f32 tile and the packing it reads, shared by the
// AVX2 GEMMs (packed_gemm_avx2.cc, attention.inc's AVX2 build). Include only
// from files built with -mavx2 -mfma.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace brt::cpu::avx2_tiles {

inline constexpr int kRows = 6, kCols = 16;

// One tile: rows x 16 columns of c from `depth` steps of the panel and of
// a: a micro-panel (PackRows' layout: kRows values per step), or with
// kRowMajor rows of a at stride lda, read in place (small blocks already in
// cache). The first pass of the depth writes (with the bias), later ones
// add; the last applies relu (max(0, x) keeps NaN, as maximum does).
template <int rows, bool kRowMajor = false>
inline void Tile(const float* a, int64_t lda, const float* panel, int64_t depth, float* c,
                 int64_t ldc, int cols, bool first, const float* bias, bool relu) {
  __m256 acc[rows][2];
#pragma GCC unroll 6
  for (int r = 0; r < rows; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_ps();
  for (int64_t k = 0; k < depth; ++k) {
    const __m256 b0 = _mm256_loadu_ps(panel + k * kCols),
                 b1 = _mm256_loadu_ps(panel + k * kCols + 8);
#pragma GCC unroll 6
    for (int r = 0; r < rows; ++r) {
      const __m256 x = _mm256_broadcast_ss(kRowMajor ? a + r * lda + k : a + k * kRows + r);
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

using TileFn = void (*)(const float*, int64_t, const float*, int64_t, float*, int64_t, int, bool,
                        const float*, bool);
// By the number of rows: tiles over micro-panels, and over rows in place.
inline constexpr TileFn kTiles[kRows + 1] = {nullptr,  &Tile<1>, &Tile<2>, &Tile<3>,
                                             &Tile<4>, &Tile<5>, &Tile<6>};
inline constexpr TileFn kRowTiles[kRows + 1] = {nullptr,        &Tile<1, true>, &Tile<2, true>,
                                                &Tile<3, true>, &Tile<4, true>, &Tile<5, true>,
                                                &Tile<6, true>};

// Rows [0, rows) x depth of a (row stride lda) as micro-panels of kRows rows,
// k-major: out[(t * depth + k) * kRows + r] = a[(t * kRows + r) * lda + k].
inline void PackRows(const float* a, int64_t lda, int64_t rows, int64_t depth, float* out) {
  for (int64_t t = 0; t * kRows < rows; ++t) {
    const int64_t n = std::min<int64_t>(kRows, rows - t * kRows);
    float* panel = out + t * depth * kRows;
    for (int64_t r = 0; r < n; ++r) {
      const float* row = a + (t * kRows + r) * lda;
      for (int64_t k = 0; k < depth; ++k) panel[k * kRows + r] = row[k];
    }
  }
}

// Panels of kCols columns of w(k, n) = b[k * rsk + n * rsn], k < K, n < N,
// each K deep, the last zero-padded: out[(p * K + k) * kCols + j] = w(k,
// p * kCols + j). out holds PanelFloats(K, N) floats.
inline int64_t PanelFloats(int64_t K, int64_t N) { return (N + kCols - 1) / kCols * K * kCols; }
inline void PackPanels(const float* b, int64_t K, int64_t N, int64_t rsk, int64_t rsn, float* out) {
  const int64_t panels = (N + kCols - 1) / kCols;
  if (rsn == 1) {  // rows of w contiguous: kCols values at a time
    for (int64_t p = 0; p < panels; ++p) {
      const int64_t cols = std::min<int64_t>(kCols, N - p * kCols);
      for (int64_t k = 0; k < K; ++k) {
        float* row = out + (p * K + k) * kCols;
        std::memcpy(row, b + k * rsk + p * kCols, cols * sizeof(float));
        std::fill(row + cols, row + kCols, 0.0f);
      }
    }
    return;
  }
  // Else column by column, each read in order (contiguous where rsk is 1,
  // as for k^T in attention), and the last panel's padding zeroed.
  for (int64_t n = 0; n < panels * kCols; ++n) {
    float* column = out + (n / kCols) * K * kCols + n % kCols;
    if (n < N) {
      for (int64_t k = 0; k < K; ++k) column[k * kCols] = b[k * rsk + n * rsn];
    } else {
      for (int64_t k = 0; k < K; ++k) column[k * kCols] = 0.0f;
    }
  }
}

}  // namespace brt::cpu::avx2_tiles
