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
// a: a micro-panel (PackMicroPanel's layout: `rows` values per step), or
// with kRowMajor rows of a at stride lda, read in place (small blocks
// already in cache). The first pass of the depth writes (with the bias), later ones
// add; the last applies relu as maximum(x, 0) does: NaN stays NaN (vmaxps
// returns its second operand then), and -0 becomes +0 (the added zero).
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
      const __m256 x = _mm256_broadcast_ss(kRowMajor ? a + r * lda + k : a + k * rows + r);
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
      const __m256 zero = _mm256_setzero_ps();
      lo = _mm256_add_ps(_mm256_max_ps(zero, lo), zero);
      hi = _mm256_add_ps(_mm256_max_ps(zero, hi), zero);
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

// r[0..7], 8 floats each, transposed in place: r[j] becomes (r[0][j], ...,
// r[7][j]).
[[gnu::always_inline]] inline void Transpose8x8(__m256 r[8]) {
  __m256 t[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
  }
  for (int i = 0; i < 8; i += 4) {
    r[i] = _mm256_shuffle_ps(t[i], t[i + 2], 0x44);
    r[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], 0xee);
    r[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0x44);
    r[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], 0xee);
  }
  for (int i = 0; i < 4; ++i) {
    t[i] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x20);
    t[i + 4] = _mm256_permute2f128_ps(r[i], r[i + 4], 0x31);
  }
  for (int i = 0; i < 8; ++i) r[i] = t[i];
}

// The rows of the tile that starts `left` rows before the end of a block:
// kRows, but 4 + 4 rather than 6 + 2 and 4 + 3 rather than 6 + 1 at the
// end, since a tile of 1 or 2 rows has too few accumulators to keep the
// FMA units busy (MiniLM's 128 rows were 21 tiles of 6 and one of 2).
inline int TileRows(int64_t left) {
  return left == 7 || left == 8 ? 4 : static_cast<int>(std::min<int64_t>(kRows, left));
}

// One micro-panel: rows [0, rows) x depth of a(r, k) = a[r * rsm + k * rsk]
// (rows <= kRows), k-major: out[k * rows + r] = a(r, k). Rows of a
// contiguous (rsk 1): a full one goes 8 steps at a time through a register
// transpose (scalar copies were 13% of a 4096x384x384 GEMM); columns
// contiguous (rsm 1, the lhs of a weight gradient, a^T b): one copy per
// step. It writes nothing outside its depth * rows floats, so threads may
// pack neighbouring micro-panels at once.
inline void PackMicroPanel(const float* a, int64_t rsm, int64_t rsk, int64_t rows, int64_t depth,
                           float* out) {
  if (rsm == 1) {
    for (int64_t k = 0; k < depth; ++k) std::memcpy(out + k * rows, a + k * rsk, rows * 4);
    return;
  }
  int64_t k = 0;
  if (rows == kRows && rsk == 1) {
    for (; k + 8 <= depth; k += 8) {
      __m256 r[8];
      for (int i = 0; i < kRows; ++i) r[i] = _mm256_loadu_ps(a + i * rsm + k);
      r[6] = r[7] = _mm256_setzero_ps();
      Transpose8x8(r);
      // Step j's 6 values; each 8-wide store spills 2 floats that step j + 1
      // overwrites, and the last is stored as 4 + 2.
      float* o = out + k * kRows;
      for (int j = 0; j < 7; ++j) _mm256_storeu_ps(o + j * kRows, r[j]);
      _mm_storeu_ps(o + 7 * kRows, _mm256_castps256_ps128(r[7]));
      _mm_storel_pi(reinterpret_cast<__m64*>(o + 7 * kRows + 4), _mm256_extractf128_ps(r[7], 1));
    }
  }
  for (; k < depth; ++k)
    for (int64_t r = 0; r < rows; ++r) out[k * rows + r] = a[r * rsm + k * rsk];
}

// Rows [0, rows) x depth of a as micro-panels of TileRows() rows: the one
// of rows [r0, r0 + n) at out + r0 * depth.
inline void PackRows(const float* a, int64_t rsm, int64_t rsk, int64_t rows, int64_t depth,
                     float* out) {
  for (int64_t r0 = 0, n; r0 < rows; r0 += n) {
    n = TileRows(rows - r0);
    PackMicroPanel(a + r0 * rsm, rsm, rsk, n, depth, out + r0 * depth);
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
  // Else 8 columns at a time, each read in order. Where the columns are
  // contiguous (rsk 1, as for k^T in attention), 8x8 blocks go through a
  // register transpose; the rest one value at a time.
  for (int64_t n0 = 0; n0 < N; n0 += 8) {
    const int64_t cols = std::min<int64_t>(8, N - n0);
    float* block = out + (n0 / kCols) * K * kCols + n0 % kCols;
    int64_t k = 0;
    if (rsk == 1 && cols == 8) {
      for (; k + 8 <= K; k += 8) {
        __m256 r[8];
        for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(b + (n0 + i) * rsn + k);
        Transpose8x8(r);
        for (int i = 0; i < 8; ++i) _mm256_storeu_ps(block + (k + i) * kCols, r[i]);
      }
    }
    for (; k < K; ++k)
      for (int64_t j = 0; j < cols; ++j) block[k * kCols + j] = b[k * rsk + (n0 + j) * rsn];
  }
  // The last panel's padding.
  if (const int64_t cols = N - (panels - 1) * kCols; panels > 0 && cols < kCols) {
    float* last = out + (panels - 1) * K * kCols;
    for (int64_t k = 0; k < K; ++k)
      std::fill(last + k * kCols + cols, last + (k + 1) * kCols, 0.0f);
  }
}

}  // namespace brt::cpu::avx2_tiles
