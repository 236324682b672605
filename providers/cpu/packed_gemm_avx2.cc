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

constexpr int64_t kDepth = 384;      // rows of a panel per pass: 24 KiB, kept in L1
constexpr int64_t kBlockRows = 192;  // rows of `a` per pass over the panels: kept in L2

// f over each of a finished tile's rows x cols of c, still in L1. A full
// tile's rows are a constant kCols wide, so each becomes two vectors with
// no remainder loop; the loops vectorize over vector_math.h's functions.
template <typename F>
void ApplyToTile(float* c, int64_t ldc, int rows, int cols, F f) {
  if (cols == kCols) {
    for (int r = 0; r < rows; ++r)
      for (int j = 0; j < kCols; ++j) c[r * ldc + j] = f(c[r * ldc + j]);
    return;
  }
  for (int r = 0; r < rows; ++r)
    for (int j = 0; j < cols; ++j) c[r * ldc + j] = f(c[r * ldc + j]);
}

void ActivateTile(Activation activation, float* c, int64_t ldc, int rows, int cols) {
  if (activation == Activation::kGelu)
    ApplyToTile(c, ldc, rows, cols,
                [](float x) { return 0.5f * x * (1.0f + vmath::Erf(x * 0.70710678118654752f)); });
  else
    ApplyToTile(c, ldc, rows, cols, [](float x) { return vmath::Tanh(x); });
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
  const int64_t packed_floats = kBlockRows * kDepth;
  // One pass: the packed rows [m0, m0 + rows) x [k0, k0 + depth) of a by
  // panels [p_begin, p_end).
  auto pass = [&](const float* packed, int64_t m0, int64_t rows, int64_t k0, int64_t depth,
                  int64_t p_begin, int64_t p_end) {
    const bool first = k0 == 0, last = k0 + depth == K;
    // Each tile of a panel asks for its share of the next panel's cache
    // lines (one per step of the depth), so that the next panel's first
    // tile does not wait for memory: weights too big for the caches stream
    // in once a run, and the hardware prefetcher alone left that tile
    // 10-15% of a BERT-sized matmul behind.
    const int64_t lines_per_tile = (depth + kRows - 1) / ((rows + kRows - 1) / kRows);
    for (int64_t p = p_begin; p < p_end; ++p) {
      const int cols = static_cast<int>(std::min<int64_t>(kCols, N - p * kCols));
      const float* panel = w.panels.data() + (p * K + k0) * kCols;
      // The next panel of this pass, else the first of the next pass.
      const float* next =
          p + 1 < p_end ? panel + K * kCols : w.panels.data() + (p_begin * K + k0 + depth) * kCols;
      const int64_t next_lines = p + 1 < p_end ? depth : std::min(kDepth, K - k0 - depth);
      for (int64_t r0 = 0, line = 0, n; r0 < rows; r0 += n) {
        for (const int64_t end = std::min(next_lines, line + lines_per_tile); line < end; ++line)
          _mm_prefetch(reinterpret_cast<const char*>(next + line * kCols), _MM_HINT_T0);
        n = TileRows(rows - r0);
        float* tile = c + (m0 + r0) * ldc + p * kCols;
        kTiles[n](packed + r0 * depth, 0, panel, depth, tile, ldc, cols, first,
                  bias ? bias + p * kCols : nullptr, relu && last);
        if (in_l1 && last) ActivateTile(activation, tile, ldc, n, cols);
      }
    }
  };
  // Threads that share one block of rows (below) pack it together: into one
  // of two buffers, the other perhaps still read by a thread on the
  // previous pass, then a barrier.
  thread_local std::vector<float> shared_buffers;
  const bool split_rows = M >= omp_get_max_threads() * kBlockRows;
  if (!split_rows) shared_buffers.resize(2 * packed_floats);
  float* const shared = shared_buffers.data();
#pragma omp parallel
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    if (split_rows) {
      // A block of rows per thread, packed by it alone and run by every
      // panel: no thread waits for another.
      thread_local std::vector<float> own;
      own.resize(packed_floats);
      const int64_t begin = M * t / nt / kRows * kRows,
                    end = t + 1 == nt ? M : M * (t + 1) / nt / kRows * kRows;
      for (int64_t m0 = begin; m0 < end; m0 += kBlockRows) {
        const int64_t rows = std::min(kBlockRows, end - m0);
        for (int64_t k0 = 0; k0 < K; k0 += kDepth) {
          const int64_t depth = std::min(kDepth, K - k0);
          PackRows(a + m0 * lda + k0, lda, rows, depth, own.data());
          pass(own.data(), m0, rows, k0, depth, 0, panels);
        }
      }
    } else {
      // Few rows: every thread takes each block, and a share of the panels.
      const int64_t p_begin = panels * t / nt, p_end = panels * (t + 1) / nt;
      int64_t passes = 0;
      for (int64_t m0 = 0; m0 < M; m0 += kBlockRows) {
        const int64_t rows = std::min(kBlockRows, M - m0);
        for (int64_t k0 = 0; k0 < K; k0 += kDepth, ++passes) {
          const int64_t depth = std::min(kDepth, K - k0);
          float* packed = shared + passes % 2 * packed_floats;
          for (int64_t r0 = 0, n, i = 0; r0 < rows; r0 += n, ++i) {
            n = TileRows(rows - r0);
            if (i % nt == t)
              PackMicroPanel(a + (m0 + r0) * lda + k0, lda, n, depth, packed + r0 * depth);
          }
#pragma omp barrier
          pass(packed, m0, rows, k0, depth, p_begin, p_end);
        }
      }
    }
  }
}

}  // namespace brt::cpu
