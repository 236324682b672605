// brt's own f32 GEMM for AVX2+FMA CPUs (built with fused_blocks_avx2.cc; run
// where UseAvx2()), for matmuls by constant weights and for weight
// gradients (a^T b, where oneDNN 3.2's AVX2 gemm reads the transposed lhs
// at half speed): the weights are packed into panels of 16 columns (once,
// at prepare, when constant; else at every run); each
// block of a's rows is packed per pass into 6-row micro-panels (20-30%
// faster than reading a's rows in place); and a 6x16 register-blocked kernel
// runs over them (oneDNN 3.2's AVX2 matmul is an unpacked gemm:jit, about
// 1.4x slower on BERT-sized matmuls).
#pragma once

#include <cstdint>
#include <vector>

#include "ops/scalar_ops.h"

namespace brt::cpu {

// Weights w(k, n) = b[k * rsk + n * rsn], k < K, n < N, as panels of 16
// columns (the last zero-padded), each K rows deep.
struct PackedWeights {
  int64_t K = 0, N = 0;
  std::vector<float> panels;
};

// Packs into `w`, reusing its storage.
void PackWeights(const float* b, int64_t K, int64_t N, int64_t rsk, int64_t rsn, PackedWeights& w);

// c[m * ldc + n] = activation(sum_k a[m * rsm + k * rsk] * w(k, n) + bias[n]),
// bias when given; rows m < M, over the Session's threads. Fast where rsk or rsm
// is 1. tanh and GELU are vector_math.h's, applied to each tile while it is
// in L1.
void PackedGemm(const float* a, int64_t rsm, int64_t rsk, int64_t M, const PackedWeights& w,
                const float* bias, ops::Activation activation, float* c, int64_t ldc);

// The same with b(k, n) = b[k * rsbk + n * rsbn] packed as it goes, a slab
// of the depth at a time (into a buffer of 384 x N floats per calling
// thread, kept for the next call).
void StridedGemm(const float* a, int64_t rsm, int64_t rsk, int64_t M, const float* b, int64_t rsbk,
                 int64_t rsbn, int64_t K, int64_t N, const float* bias, ops::Activation activation,
                 float* c, int64_t ldc);

}  // namespace brt::cpu
