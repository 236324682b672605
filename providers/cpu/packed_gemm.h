// brt's own f32 GEMM for AVX2+FMA CPUs (built with fused_blocks_avx2.cc; run
// where UseAvx2()), for matmuls by constant weights:
// the weights are packed once, at prepare, into panels of 16 columns; each
// block of a's rows is packed per pass into 6-row micro-panels (20-30%
// faster than reading a's rows in place); and a 6x16 register-blocked kernel
// runs over them (oneDNN 3.2's AVX2 matmul is an unpacked gemm:jit, about
// 1.4x slower on BERT-sized matmuls).
#pragma once

#include <cstdint>
#include <vector>

#include "common/scalar_ops.h"

namespace brt::cpu {

// Weights w(k, n) = b[k * rsk + n * rsn], k < K, n < N, as panels of 16
// columns (the last zero-padded), each K rows deep.
struct PackedWeights {
  int64_t K = 0, N = 0;
  std::vector<float> panels;
};

PackedWeights PackWeights(const float* b, int64_t K, int64_t N, int64_t rsk, int64_t rsn);

// c[m * ldc + n] = activation(sum_k a[m * lda + k] * w(k, n) + bias[n]),
// bias when given; rows m < M, over OpenMP's threads. tanh and GELU are
// vector_math.h's, applied to each tile while it is in L1.
void PackedGemm(const float* a, int64_t lda, int64_t M, const PackedWeights& w, const float* bias,
                ops::Activation activation, float* c, int64_t ldc);

}  // namespace brt::cpu
