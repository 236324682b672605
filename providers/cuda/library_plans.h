// The host side of the library-backed kernels: what the CUDA provider hands
// cuBLASLt and cuDNN, worked out from an op without calling either.
// provider.cc makes the calls; the host emulation (tests/plugins/) computes
// what those calls compute from the same plans, so the layout mapping is
// tested without a GPU.
#pragma once

#include <functional>
#include <vector>

#include "kernels.h"
#include "ops/fft_plan.h"

namespace brt::cuda {

// An operand on its way to a GEMM: in place (maybe transposed) or packed
// into scratch first.
struct GemmOperand {
  bool transposed = false;
  size_t packed_bytes = 0;  // 0: in place
  CopyParams pack;
};

// dot_general / brt.matmul as a strided batched GEMM in cuBLAS's
// column-major terms, per batch: C[m, n] = op(A)[m, k] op(B)[k, n] (+
// bias[i] for row i, then the activation). Row-major out = lhs rhs is
// column-major out^T = rhs^T lhs^T: A is the dot's rhs, B its lhs, m = N,
// n = M. op(X) is X^T when trans_x; X is stored column-major with x_rows
// rows and leading dimension ldx, batches stride_x elements apart.
struct GemmPlan {
  GemmOperand lhs, rhs;
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  int64_t a_rows = 0, a_cols = 0, lda = 1, stride_a = 0;
  int64_t b_rows = 0, b_cols = 0, ldb = 1, stride_b = 0;
  int64_t ldc = 1, stride_c = 0;
  bool bias = false;
  ops::Activation activation = ops::Activation::kNone;
  int result = 2;  // buffer index of the result
  int32_t dtype = 0;
};
// Whether the GEMM path takes the op: f32, f16 and bf16; c64 and c128
// without bias or activation (cuBLASLt's epilogues are real).
bool GemmSupports(const ops::OpInfo& op);
// Operands go in place when their dims are batch dims first, then free and
// contracting dims as two runs (either order); otherwise they are packed.
GemmPlan PlanGemm(const ops::OpInfo& op);

// convolution / brt.conv as one cuDNN cross-correlation over Nd descriptors
// (at least 4-d: a 1-d convolution gains a unit dim). The filter is packed
// [O, I, spatial...] (copied there unless it already is); asymmetric padding
// pads the input into a packed scratch buffer first. Bias and activation
// follow as elementwise kernels on the result.
struct ConvLaunchPlan {
  ops::ConvPlan conv;
  int32_t dtype = 0;
  int result = 2;
  size_t out_bytes = 0;
  std::vector<int64_t> x_dims, x_strides, w_dims, y_dims, y_strides;
  std::vector<int64_t> pads, strides, dilations;
  size_t weight_bytes = 0;  // 0: the filter goes in place
  CopyParams weight_copy;
  size_t input_bytes = 0;  // 0: the input goes in place
  int64_t input_offset = 0;
  CopyParams input_copy;
  ElementwiseParams bias, activation;
};
ConvLaunchPlan PlanConvLaunch(const ops::OpInfo& op);

// fft (ops/fft_plan.h) as one cuFFT plan of the fft lengths over `batches`
// contiguous batches (cuFFT's basic layout): C2C/Z2Z forward or inverse,
// R2C/D2Z, or C2R/Z2D. cuFFT does not scale: the inverse types are scaled
// after it. An out-of-place C2R overwrites its input (cuFFT documents it),
// so IRFFT's operand is copied into per-context scratch first, where the
// planes of frequency 0 and n/2 of the last dim are made Hermitian over the
// outer dims (HermitianPlanesParams): the half spectrum is then one of a real
// array, which any C2R inverts as ops/fft_host.h does (its imaginary parts of
// those frequencies do not count), whatever cuFFT does with the rest.
struct FftLaunchPlan {
  ops::FftPlan fft;
  size_t operand_bytes = 0;
  size_t scratch_bytes = 0;  // IRFFT: the operand's copy
  HermitianPlanesParams planes;
  long long scaled_values = 0;  // the result's real values (complex ones as two)
  int32_t part_dtype = 0;       // f32 or f64
};
FftLaunchPlan PlanFftLaunch(const ops::OpInfo& op);
// The steps of a run: IRFFT's copy into `scratch`, then `transform(in, out)`
// (cuFFT's exec, or what it computes in the emulation) from the operand (or
// the copy) to the result, then the inverse types' scaling.
void RunFftSteps(const FftLaunchPlan& p, const void* operand, void* result, void* scratch,
                 cudaStream_t stream, const std::function<void(const void*, void*)>& transform);

}  // namespace brt::cuda
