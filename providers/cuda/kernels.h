// Launchers for brt's own CUDA kernels (kernels_*.cu), callable from host C++.
// Each takes the layout a plan from providers/common computed, in elements,
// and enqueues one or two kernels on `stream`; none allocates or synchronizes.
#pragma once

#include <cuda_runtime.h>

#include "brt/provider_abi.h"
#include "ops/op_plans.h"

namespace brt::cuda {

constexpr int kMaxRank = ops::kMaxRank;
constexpr int kMaxOperands = ops::kMaxFusedInputs;  // elementwise and fused inputs

// Row-major iteration over `dims`; operand k is read at
// sum(i_d * strides[k][d]) (0 on broadcast dims), the result is contiguous.
struct Space {
  int rank = 1;
  long long n = 0;
  long long dims[kMaxRank] = {};
  long long strides[kMaxOperands][kMaxRank] = {};
};

// From a BroadcastPlan over `num_operands` inputs.
Space MakeSpace(const ops::BroadcastPlan& plan, int num_operands, long long n);

// kActivation: an ops::Activation on a float type, after a matmul.
enum class Elementwise { kUnary, kBinary, kCompare, kSelect, kClamp, kConvert, kActivation };

// out = f(in...) for the scalar ops of ops/scalar_ops.h; `op` is a Unary,
// Binary or Cmp code. Operand dtypes: compare and convert read in_dtype and
// write out_dtype; select reads i1, then out_dtype twice.
struct ElementwiseParams {
  Elementwise kind = Elementwise::kUnary;
  int op = 0;
  Space space;
};
cudaError_t LaunchElementwise(const ElementwiseParams& p, int32_t in_dtype, int32_t out_dtype,
                              const void* const* in, void* out, cudaStream_t stream);

// real, imag, abs (the magnitude, by hypot) of a complex operand, out of
// its part type; complex of two parts `a` and `b`. n elements, contiguous.
enum class ComplexPart { kReal, kImag, kAbs, kMake };
cudaError_t LaunchComplexPart(ComplexPart part, int32_t complex_dtype, long long n, const void* a,
                              const void* b, void* out, cudaStream_t stream);

// brt.fused_elementwise: the program of ops/op_plans.h run per element in
// f32 registers.
constexpr int kMaxFusedInstructions = 256;
constexpr int kMaxFusedRegisters = 96;
struct FusedParams {
  int num_inputs = 0, num_constants = 0, num_instructions = 0;
  int32_t in_dtypes[kMaxOperands] = {};
  float constants[64] = {};
  // Per instruction: kind (Elementwise), op code, sources, destination.
  signed char kind[kMaxFusedInstructions] = {}, op[kMaxFusedInstructions] = {};
  unsigned char src[kMaxFusedInstructions][3] = {}, dst[kMaxFusedInstructions] = {};
  Space space;
};
cudaError_t LaunchFused(const FusedParams& p, int32_t out_dtype, const void* const* in, void* out,
                        cudaStream_t stream);

// dst[sum(i_d * dst_strides_d)] = src[sum(i_d * src_strides_d)] for a
// StridedCopy; with num_starts > 0 the clamped start indices read from
// device scalars (dynamic_slice / dynamic_update_slice) offset the source, or
// the destination when starts_offset_dst.
struct CopyParams {
  int rank = 1;
  long long n = 0;
  long long dims[kMaxRank] = {}, src_strides[kMaxRank] = {}, dst_strides[kMaxRank] = {};
  int num_starts = 0;
  bool starts_offset_dst = false;
  const void* starts[kMaxRank] = {};
  int32_t start_dtypes[kMaxRank] = {};  // BRT_DTYPE_*: any integer type
  long long start_max[kMaxRank] = {}, start_strides[kMaxRank] = {};
};
CopyParams MakeCopy(const ops::StridedCopy& c);
cudaError_t LaunchStridedCopy(const CopyParams& p, size_t elem_size, const void* src, void* dst,
                              cudaStream_t stream);

// dst[i] = *value for i < n (value: one element in device memory).
cudaError_t LaunchFill(long long n, size_t elem_size, const void* value, void* dst,
                       cudaStream_t stream);

// sort (ops/op_plans.h: SortPlan) of up to kMaxSortOperands operands, by
// rank: each element goes where the number of its line's elements ordered
// before it (by the keys in turn) says (quadratic in the line's length;
// stable).
inline constexpr int kMaxSortOperands = 8;
struct SortParams {
  long long outer = 1, size = 1, inner = 1;
  int operands = 0, keys = 0;
  int key[kMaxSortOperands] = {};
  bool descending[kMaxSortOperands] = {}, total_order[kMaxSortOperands] = {};
  int32_t key_dtype[kMaxSortOperands] = {};
  const void* in[kMaxSortOperands] = {};
  void* out[kMaxSortOperands] = {};
  int element_bytes[kMaxSortOperands] = {};
};
cudaError_t LaunchSort(const SortParams& p, cudaStream_t stream);

// iota: out[i] = (i / stride) % size.
cudaError_t LaunchIota(long long n, long long size, long long stride, int32_t dtype, void* out,
                       cudaStream_t stream);

// rng_bit_generator (ops/rng_bits.h): the bits of the plan's blocks, then
// the new state (state and next may be one buffer).
cudaError_t LaunchRngBitGenerator(const ops::RngBitGeneratorPlan& p, const uint64_t* state,
                                  void* bits, uint64_t* next, cudaStream_t stream);

// gather / scatter from an IndexPlan (see ops/op_plans.h).
struct IndexingParams {
  int rank = 0, num_starts = 0;
  long long n = 0, vector_stride = 0;
  long long dims[kMaxRank] = {}, batch_strides[kMaxRank] = {}, window_strides[kMaxRank] = {};
  long long start_strides[kMaxRank] = {}, start_max[kMaxRank] = {};
  int32_t index_dtype = BRT_DTYPE_I32;  // any integer type (ops::IndexValue)
};
IndexingParams MakeIndexing(const ops::IndexPlan& plan);
cudaError_t LaunchGather(const IndexingParams& p, size_t elem_size, const void* operand,
                         const void* indices, void* out, cudaStream_t stream);
// `out` (out_bytes) already holds the operand; updates are stored
// (`replace`) or combined into it atomically by `reducer` (add, mul, max or
// min, as ops::Combine; complex max and min lexicographic); complex values
// are stored whole where duplicates race. A 1-byte type's combining and a
// c128's combining or store need `scratch` of AtomicScratchBytes(dtype), per
// context: a 1-byte one so that no access leaves `out` (kernels_data.cu,
// AtomicCombineByte), a c128 one for its spin locks (WideUpdate).
cudaError_t LaunchScatter(const IndexingParams& p, int32_t dtype, bool replace,
                          ops::Reducer reducer, const void* indices, const void* updates, void* out,
                          size_t out_bytes, void* scratch, cudaStream_t stream);
// The scratch an atomic update of a 1-byte or 16-byte type (scatter's
// combiners, select_and_scatter) needs; 0 for other dtypes.
size_t AtomicScratchBytes(int32_t dtype);

// reduce: the operand seen as kept dims (the result, row-major) x reduced
// dims, each with its operand stride. With splits > 1 each output's reduced
// range is cut into `splits` chunks combined through `partials`
// (out_n * splits compute-type values) by a second kernel.
struct ReduceParams {
  ops::Reducer reducer = ops::Reducer::kAdd;
  int kept_rank = 0, reduced_rank = 0;
  long long out_n = 0, reduced_n = 0;
  long long kept_dims[kMaxRank] = {}, kept_strides[kMaxRank] = {};
  long long reduced_dims[kMaxRank] = {}, reduced_strides[kMaxRank] = {};
  bool rows = false;  // the innermost operand dim is reduced: a block per output
  int splits = 1;
};
ReduceParams MakeReduce(const ops::ReducePlan& plan);
// Bytes of `partials` the launch needs (0 without splits).
size_t ReduceScratchBytes(const ReduceParams& p, int32_t dtype);
cudaError_t LaunchReduce(const ReduceParams& p, int32_t dtype, const void* in, const void* init,
                         void* out, void* partials, cudaStream_t stream);

// reduce_window: a thread per result element walks its window.
struct ReduceWindowParams {
  ops::Reducer reducer = ops::Reducer::kAdd;
  int rank = 0;
  long long out_n = 0, window_n = 1;
  long long window[kMaxRank] = {}, strides[kMaxRank] = {}, base_dil[kMaxRank] = {},
            win_dil[kMaxRank] = {}, pad_lo[kMaxRank] = {}, in_dims[kMaxRank] = {},
            in_strides[kMaxRank] = {}, out_dims[kMaxRank] = {};
};
ReduceWindowParams MakeReduceWindow(const ops::ReduceWindowPlan& plan);
cudaError_t LaunchReduceWindow(const ReduceWindowParams& p, int32_t dtype, const void* in,
                               const void* init, void* out, cudaStream_t stream);

// select_and_scatter: the result filled with init, then a thread per source
// element walks its window (as reduce_window's), picks as
// ops::SelectAndScatterPlan says and adds its source value there atomically
// (1-byte types with `scratch` of AtomicScratchBytes, as scatter's).
struct SelectAndScatterParams {
  ReduceWindowParams windows;
  ops::Cmp select = ops::Cmp::kGe;
  long long operand_n = 0;
};
SelectAndScatterParams MakeSelectAndScatter(const ops::SelectAndScatterPlan& plan);
cudaError_t LaunchSelectAndScatter(const SelectAndScatterParams& p, int32_t dtype,
                                   const void* operand, const void* source, const void* init,
                                   void* out, void* scratch, cudaStream_t stream);

// dot_general / brt.matmul for any layout: a thread per result element sums
// over the contracting dims; with bias, result element o adds bias[o % n_free]
// (the rhs free dims are the result's last), then the activation.
struct DotParams {
  int out_rank = 0, k_rank = 0;
  long long out_n = 0, n_free = 1;
  long long out_dims[kMaxRank] = {}, lhs_out_strides[kMaxRank] = {}, rhs_out_strides[kMaxRank] = {};
  long long k_dims[kMaxRank] = {}, lhs_k_strides[kMaxRank] = {}, rhs_k_strides[kMaxRank] = {};
  bool bias = false;
  ops::Activation activation = ops::Activation::kNone;
};
cudaError_t LaunchDot(const DotParams& p, int32_t dtype, const void* lhs, const void* rhs,
                      const void* bias, void* out, cudaStream_t stream);

// IRFFT's input made one of a real array (library_plans.h, FftLaunchPlan):
// of each batch's half spectrum [outer..., half], the planes of frequency 0
// and (n even) n/2 of the innermost dim written to `out` Hermitian over the
// outer dims, (z[k] + conj(z[-k])) / 2; the other elements are not touched.
struct HermitianPlanesParams {
  long long batches = 0, half = 1, n = 1;  // n: the innermost fft length
  long long outer[2] = {1, 1};             // the outer fft dims, 1 where fewer than 2
};
cudaError_t LaunchHermitianPlanes(const HermitianPlanesParams& p, int32_t complex_dtype,
                                  const void* in, void* out, cudaStream_t stream);
// data[i] *= scale for n values of a float dtype (f32 or f64; a complex
// tensor as its parts), the product rounded once from double.
cudaError_t LaunchScale(long long n, int32_t dtype, double scale, void* data, cudaStream_t stream);

// brt.softmax over the middle dim of [outer, size, inner].
cudaError_t LaunchSoftmax(const ops::SoftmaxPlan& p, int32_t dtype, const void* in, void* out,
                          cudaStream_t stream);

// brt.layer_norm over rows of `cols` (scale and shift are f32).
cudaError_t LaunchLayerNorm(const ops::LayerNormPlan& p, int32_t dtype, const void* x,
                            const float* scale, const float* shift, void* out, cudaStream_t stream);

}  // namespace brt::cuda
