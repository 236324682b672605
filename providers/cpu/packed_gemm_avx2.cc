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

void PackWeights(const float* b, int64_t K, int64_t N, int64_t rsk, int64_t rsn, PackedWeights& w) {
  w.K = K, w.N = N;
  w.panels.resize(PanelFloats(K, N));
  PackPanels(b, K, N, rsk, rsn, w.panels.data());
}

namespace {

// c = activation(a b + bias) over OpenMP's threads, by passes over slabs of
// the depth: each pass multiplies a block of a's rows, packed, by a slab's
// panels. The panels come packed (`prepacked`: PackWeights' layout) or are
// packed from b(k, n) = b[k * rsbk + n * rsbn] a slab at a time, by all
// threads, into a buffer a slab deep.
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
  // Threads that share one block of rows (below) pack it together: into one
  // of two buffers, the other perhaps still read by a thread on the
  // previous pass, then a barrier.
  thread_local std::vector<float> shared_buffers, slab_buffer;
  const bool split_rows = M >= omp_get_max_threads() * kBlockRows;
  if (!split_rows) shared_buffers.resize(2 * packed_floats);
  if (!prepacked) slab_buffer.resize(PanelFloats(std::min(kDepth, K), N));
  float* const shared = shared_buffers.data();
  float* const slab_packed = slab_buffer.data();
#pragma omp parallel
  {
    const int64_t t = omp_get_thread_num(), nt = omp_get_num_threads();
    // A block of rows per thread where there are enough, packed by it alone
    // and run by every panel: no thread waits for another. Else every
    // thread takes each block, and a share of the panels.
    const int64_t begin = split_rows ? M * t / nt / kRows * kRows : 0,
                  end = !split_rows || t + 1 == nt ? M : M * (t + 1) / nt / kRows * kRows;
    const int64_t p_begin = split_rows ? 0 : panels * t / nt,
                  p_end = split_rows ? panels : panels * (t + 1) / nt;
    thread_local std::vector<float> own;
    if (split_rows) own.resize(packed_floats);
    int64_t passes = 0;
    for (int64_t k0 = 0; k0 < K; k0 += kDepth) {
      const int64_t depth = std::min(kDepth, K - k0);
      const float* slab = prepacked;
      int64_t stride = K * kCols;
      if (prepacked) {
        slab += k0 * kCols;
      } else {
        const int64_t q0 = panels * t / nt, q1 = panels * (t + 1) / nt;
        if (q1 > q0)
          PackPanels(b + k0 * rsbk + q0 * kCols * rsbn, depth, std::min(N, q1 * kCols) - q0 * kCols,
                     rsbk, rsbn, slab_packed + q0 * depth * kCols);
        slab = slab_packed, stride = depth * kCols;
#pragma omp barrier
      }
      for (int64_t m0 = begin; m0 < end; m0 += kBlockRows, ++passes) {
        const int64_t rows = std::min(kBlockRows, end - m0);
        const float* a_block = a + m0 * rsm + k0 * rsk;
        if (split_rows) {
          PackRows(a_block, rsm, rsk, rows, depth, own.data());
          pass(own.data(), m0, rows, k0, depth, slab, stride, p_begin, p_end);
          continue;
        }
        float* packed = shared + passes % 2 * packed_floats;
        for (int64_t r0 = 0, n, i = 0; r0 < rows; r0 += n, ++i) {
          n = TileRows(rows - r0);
          if (i % nt == t)
            PackMicroPanel(a_block + r0 * rsm, rsm, rsk, n, depth, packed + r0 * depth);
        }
#pragma omp barrier
        pass(packed, m0, rows, k0, depth, slab, stride, p_begin, p_end);
      }
      if (!prepacked) {
        // Every thread is done with the slab before it is packed again.
#pragma omp barrier
      }
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
