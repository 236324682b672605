// PackedGemm (packed_gemm.h), built with -mavx2 -mfma.
#include <algorithm>
#include <vector>

#include "gemm_tiles_avx2.h"
#include "packed_gemm.h"
#include "parallel.h"
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

void PackWeights(const float* b, int64_t K, int64_t N, int64_t rsk, int64_t rsn, PackedWeights& w) {
  w.K = K, w.N = N;
  w.panels.resize(PanelFloats(K, N));
  PackPanels(b, K, N, rsk, rsn, w.panels.data());
}

namespace {

// c = activation(a b + bias) over the Session's threads (parallel.h), by
// passes over slabs of the depth: each pass multiplies a block of a's rows,
// packed, by a slab's panels. The panels come packed (`prepacked`:
// PackWeights' layout) or are packed from b(k, n) = b[k * rsbk + n * rsbn] a
// slab at a time, by the tasks, into a buffer a slab deep.
void Gemm(const float* a, int64_t rsm, int64_t rsk, int64_t M, int64_t K, int64_t N,
          const float* prepacked, const float* b, int64_t rsbk, int64_t rsbn, const float* bias,
          Activation activation, float* c, int64_t ldc) {
  const bool relu = activation == Activation::kRelu,
             in_l1 = activation == Activation::kGelu || activation == Activation::kTanh;
  const int64_t panels = (N + kCols - 1) / kCols;
  const int64_t packed_floats = kBlockRows * kDepth;
  // One pass: the packed rows [m0, m0 + rows) x [k0, k0 + depth) of a by
  // panels [p_begin, p_end) of the slab, panel p at slab + p * stride.
  auto pass = [&](const float* packed, int64_t m0, int64_t rows, int64_t k0, int64_t depth,
                  const float* slab, int64_t stride, int64_t p_begin, int64_t p_end) {
    const bool first = k0 == 0, last = k0 + depth == K;
    // Each tile of a panel asks for its share of the next panel's cache
    // lines (one per step of the depth), so that the next panel's first
    // tile does not wait for memory: weights too big for the caches stream
    // in once a run, and the hardware prefetcher alone left that tile
    // 10-15% of a BERT-sized matmul behind. After the last panel comes the
    // first again, for the next block of rows.
    const int64_t lines_per_tile = (depth + kRows - 1) / ((rows + kRows - 1) / kRows);
    for (int64_t p = p_begin; p < p_end; ++p) {
      const int cols = static_cast<int>(std::min<int64_t>(kCols, N - p * kCols));
      const float* panel = slab + p * stride;
      const float* next = p + 1 < p_end ? panel + stride : slab + p_begin * stride;
      for (int64_t r0 = 0, line = 0, n; r0 < rows; r0 += n) {
        for (const int64_t end = std::min(depth, line + lines_per_tile); line < end; ++line)
          _mm_prefetch(reinterpret_cast<const char*>(next + line * kCols), _MM_HINT_T0);
        n = TileRows(rows - r0);
        float* tile = c + (m0 + r0) * ldc + p * kCols;
        kTiles[n](packed + r0 * depth, 0, panel, depth, tile, ldc, cols, first,
                  bias ? bias + p * kCols : nullptr, relu && last);
        if (in_l1 && last) ActivateTile(activation, tile, ldc, n, cols);
      }
    }
  };
  // The caller's buffers, kept for its next call: a block of a's rows,
  // packed, when tasks share out its panels; b's panels a slab deep.
  thread_local std::vector<float> rows_buffer, slab_buffer;
  const bool split_rows = M >= MaxThreads() * kBlockRows;
  if (!split_rows) rows_buffer.resize(packed_floats);
  if (!prepacked) slab_buffer.resize(PanelFloats(std::min(kDepth, K), N));
  float* const rows_packed = rows_buffer.data();
  float* const slab_packed = slab_buffer.data();
  const int64_t row_blocks = (M + kBlockRows - 1) / kBlockRows;
  for (int64_t k0 = 0; k0 < K; k0 += kDepth) {
    const int64_t depth = std::min(kDepth, K - k0);
    const float* slab = prepacked ? prepacked + k0 * kCols : slab_packed;
    const int64_t stride = prepacked ? K * kCols : depth * kCols;
    auto pack_panels = [&](int64_t q0, int64_t q1) {
      if (!prepacked)
        PackPanels(b + k0 * rsbk + q0 * kCols * rsbn, depth, std::min(N, q1 * kCols) - q0 * kCols,
                   rsbk, rsbn, slab_packed + q0 * depth * kCols);
    };
    if (split_rows) {
      // Blocks of rows for every thread: each block runs every panel, so
      // the slab is packed first; then a task packs its block and runs it.
      if (!prepacked) ParallelFor(panels, 1, pack_panels);
      ParallelFor(row_blocks, 1, [&](int64_t first, int64_t end) {
        thread_local std::vector<float> own;
        own.resize(packed_floats);
        for (int64_t block = first; block < end; ++block) {
          const int64_t m0 = block * kBlockRows, rows = std::min(kBlockRows, M - m0);
          PackRows(a + m0 * rsm + k0 * rsk, rsm, rsk, rows, depth, own.data());
          pass(own.data(), m0, rows, k0, depth, slab, stride, 0, panels);
        }
      });
      continue;
    }
    // Few rows: the caller packs each block of them, and tasks share out
    // its panels (packing them from b with the first block).
    for (int64_t m0 = 0; m0 < M; m0 += kBlockRows) {
      const int64_t rows = std::min(kBlockRows, M - m0);
      PackRows(a + m0 * rsm + k0 * rsk, rsm, rsk, rows, depth, rows_packed);
      ParallelFor(panels, 1, [&](int64_t p_begin, int64_t p_end) {
        if (m0 == 0) pack_panels(p_begin, p_end);
        pass(rows_packed, m0, rows, k0, depth, slab, stride, p_begin, p_end);
      });
    }
  }
}

}  // namespace

void PackedGemm(const float* a, int64_t rsm, int64_t rsk, int64_t M, const PackedWeights& w,
                const float* bias, Activation activation, float* c, int64_t ldc) {
  Gemm(a, rsm, rsk, M, w.K, w.N, w.panels.data(), nullptr, 0, 0, bias, activation, c, ldc);
}

void StridedGemm(const float* a, int64_t rsm, int64_t rsk, int64_t M, const float* b, int64_t rsbk,
                 int64_t rsbn, int64_t K, int64_t N, const float* bias, Activation activation,
                 float* c, int64_t ldc) {
  Gemm(a, rsm, rsk, M, K, N, nullptr, b, rsbk, rsbn, bias, activation, c, ldc);
}

}  // namespace brt::cpu
