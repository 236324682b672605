// brt's own f32 GEMM for AVX2+FMA CPUs (built with fused_blocks_avx2.cc; run
// where UseAvx2()), for matmuls by constant weights:
// the weights are packed once, at prepare, into panels of 16 columns, and a
// 6x16 register-blocked kernel runs over them (oneDNN 3.2's AVX2 matmul is
// an unpacked gemm:jit, about 1.4x slower on BERT-sized matmuls).
#pragma once

#include <cstdint>
#include <vector>

namespace brt::cpu {

// Weights w(k, n) = b[k * rsk + n * rsn], k < K, n < N, as panels of 16
// columns (the last zero-padded), each K rows deep.
struct PackedWeights {
  int64_t K = 0, N = 0;
  std::vector<float> panels;
};

PackedWeights PackWeights(const float* b, int64_t K, int64_t N, int64_t rsk, int64_t rsn);

// c[m * ldc + n] = sum_k a[m * lda + k] * w(k, n), plus bias[n] when given,
// then max(., 0) with relu; rows m < M, over OpenMP's threads.
void PackedGemm(const float* a, int64_t lda, int64_t M, const PackedWeights& w, const float* bias,
                bool relu, float* c, int64_t ldc);

}  // namespace brt::cpu
