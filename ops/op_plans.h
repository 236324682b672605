// Op plans: each function validates one op kind (shapes and attributes, which
// come from an untrusted executable) and reduces it to the layout arithmetic a
// kernel runs, in elements. The CPU provider runs a plan with host loops, the
// CUDA provider with device kernels, so the two agree by construction.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "ops/op_attrs.h"
#include "ops/op_info.h"
#include "ops/scalar_ops.h"

namespace brt::ops {

// broadcast_in_dim, transpose, slice, reverse: the result is the strided view
// `copy` of the operand, starting at src_offset.
struct StridedView {
  StridedCopy copy;
  int64_t src_offset = 0;
};
StridedView PlanStridedView(const OpInfo& op);

// reshape (and brt.copy): the same elements; returns the bytes to copy.
size_t PlanReshape(const OpInfo& op);
// bitcast_convert: the same bytes; returns how many.
size_t PlanBitcastConvert(const OpInfo& op);

// concatenate: operand i is copied by pieces[i].copy to result + dst_offset.
struct ConcatPiece {
  StridedCopy copy;
  int64_t dst_offset = 0;
};
std::vector<ConcatPiece> PlanConcatenate(const OpInfo& op);

// pad: the result is filled with the padding value, then `copy` moves
// operand + src_offset to result + dst_offset (negative padding crops).
struct PadPlan {
  StridedCopy copy;
  int64_t src_offset = 0, dst_offset = 0;
};
PadPlan PlanPad(const OpInfo& op);

// iota: element i of the result holds (i / stride) % size.
struct IotaPlan {
  int64_t size = 1, stride = 1;
};
IotaPlan PlanIota(const OpInfo& op);

// rng_bit_generator(state) -> (new state, bits), the bits XLA gives on CPUs
// and GPUs (ops/rng_bits.h computes them). DEFAULT and PHILOX:
// Philox4x32-10; state is u64[2] or u64[3]: the key, then the 128-bit
// counter's low word and (u64[3]) its high word, which is the key for
// u64[2]. Block i of 4 u32 words is Philox of counter + i; a result of 8, 16
// or 32 bits per element takes word e (its low bits), one of 64 bits words
// 2e and 2e + 1. The new state's counter is advanced by the number of
// blocks. THREE_FRY: Threefry2x32-20 under the key state[0] (u64[2]) of the
// counter state[1] + i for block i; 64-bit elements take block e (its two
// words, the first low). Narrower ones are made in pairs along the split
// dimension (the first of even size, else the first of the largest): block
// i of the shape with that dimension halved (rounded up) gives elements 2h
// and 2h + 1 along it (the second dropped past an odd end). The new state
// is the key and the counter advanced by the number of blocks.
struct RngBitGeneratorPlan {
  bool three_fry = false;
  int64_t state_size = 2, numel = 0, blocks = 0;
  int element_bytes = 4;
  // THREE_FRY's pairs: the split dimension's size, and the elements after it.
  int64_t split = 1, inner = 1;
};
RngBitGeneratorPlan PlanRngBitGenerator(const OpInfo& op);

// reduce_precision (brt/ops.def): the element type's exponent and mantissa
// widths and the ones to round to.
struct ReducePrecisionPlan {
  int src_exponent = 8, src_mantissa = 23;
  int64_t exponent_bits = 8, mantissa_bits = 23;
  int64_t numel = 0;
};
ReducePrecisionPlan PlanReducePrecision(const OpInfo& op);

// sort (brt/ops.def): every operand is outer x size x inner elements around
// `dimension`, and each of its outer * inner lines of `size` elements (at
// stride inner) is reordered by the stable sort of its keys' lines: `key`,
// then the tie_keys, lexicographically. Keys are real; the other operands
// may be complex.
struct SortKeyOrder {
  int operand = 0;
  bool descending = false, total_order = false;
};
struct SortPlan {
  int64_t outer = 1, size = 1, inner = 1;
  std::vector<SortKeyOrder> keys;
};
SortPlan PlanSort(const OpInfo& op);

// cholesky and triangular_solve (brt/ops.def, op_plans_linalg.cc): `batch`
// row-major problems one after another. cholesky factors n x n matrices;
// triangular_solve solves with a k x k `a` for an m x n `b` (k is m for
// left_side, n otherwise).
struct CholeskyPlan {
  int64_t batch = 1, n = 0;
  bool lower = false;
};
CholeskyPlan PlanCholesky(const OpInfo& op);
struct TriangularSolvePlan {
  int64_t batch = 1, k = 0, m = 0, n = 0;
  bool left_side = true, lower = true, unit_diagonal = false, transpose = false;
  bool conjugate = false;  // ADJOINT: transposed and conjugated (complex operands)
};
TriangularSolvePlan PlanTriangularSolve(const OpInfo& op);
// lu: m x n matrices, min(m, n) pivots each.
struct LuPlan {
  int64_t batch = 1, m = 0, n = 0;
};
LuPlan PlanLu(const OpInfo& op);
// The LAPACK decompositions after lu (brt/ops.def), each over `batch`
// matrices. eigh and tridiagonal: n x n, the triangle `lower` read.
struct SymmetricPlan {
  int64_t batch = 1, n = 0;
  bool lower = true;
};
SymmetricPlan PlanEigh(const OpInfo& op);
SymmetricPlan PlanTridiagonal(const OpInfo& op);
// svd, geqrf: m x n matrices, k = min(m, n); householder_product: k
// reflectors of length m make an m x n matrix.
struct SvdPlan {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool full_matrices = true, compute_uv = true;
};
SvdPlan PlanSvd(const OpInfo& op);
struct QrPlan {
  int64_t batch = 1, m = 0, n = 0, k = 0;
};
QrPlan PlanGeqrf(const OpInfo& op);
QrPlan PlanHouseholderProduct(const OpInfo& op);
// eig and hessenberg: n x n matrices.
struct EigPlan {
  int64_t batch = 1, n = 0;
  bool left = true, right = true;
};
EigPlan PlanEig(const OpInfo& op);
struct HessenbergPlan {
  int64_t batch = 1, n = 0;
};
HessenbergPlan PlanHessenberg(const OpInfo& op);
// tridiagonal_solve: m equations, nrhs right-hand sides.
struct TridiagonalSolvePlan {
  int64_t batch = 1, m = 0, nrhs = 0;
};
TridiagonalSolvePlan PlanTridiagonalSolve(const OpInfo& op);

// dynamic_slice(operand, i0, i1, ...) and dynamic_update_slice(operand,
// update, i0, ...): start index d, a scalar of any integer type, is read
// from operand first_index + d, clamped to [0, max_start[d]] (ClampedStart),
// and offsets by operand_strides[d]. `copy`
// moves the window: operand -> result for a slice, update -> result (a copy
// of the operand) for an update.
struct DynamicSlicePlan {
  bool update = false;
  int rank = 0, first_index = 1;
  int32_t index_dtypes[kMaxRank] = {};
  int64_t max_start[kMaxRank] = {};
  int64_t operand_strides[kMaxRank] = {};
  StridedCopy copy;
  size_t operand_bytes = 0;
};
DynamicSlicePlan PlanDynamicSlice(const OpInfo& op);

// Element `at` of an index tensor of integer dtype `dtype` (BRT_DTYPE_*), as
// a signed value: a u64 above every i64 reads as the largest i64, which is
// beyond every bound an index is checked against or clamped to. Host and
// device.
BRT_HD inline long long IndexValue(const void* indices, int32_t dtype, long long at = 0) {
  switch (dtype) {
    case BRT_DTYPE_I8:
      return static_cast<const int8_t*>(indices)[at];
    case BRT_DTYPE_I16:
      return static_cast<const int16_t*>(indices)[at];
    case BRT_DTYPE_I32:
      return static_cast<const int32_t*>(indices)[at];
    case BRT_DTYPE_I64:
      return static_cast<const int64_t*>(indices)[at];
    case BRT_DTYPE_U8:
      return static_cast<const uint8_t*>(indices)[at];
    case BRT_DTYPE_U16:
      return static_cast<const uint16_t*>(indices)[at];
    case BRT_DTYPE_U32:
      return static_cast<const uint32_t*>(indices)[at];
    case BRT_DTYPE_U64: {
      const uint64_t u = static_cast<const uint64_t*>(indices)[at];
      return u > 0x7fffffffffffffffull ? 0x7fffffffffffffffll : static_cast<long long>(u);
    }
  }
  return 0;
}

// The start index at `index`, a scalar of integer dtype `dtype` (BRT_DTYPE_*),
// clamped to [0, max] as StableHLO clamps dynamic_slice's: an unsigned one
// beyond every signed value clamps to max, not below 0. Host and device.
BRT_HD inline long long ClampedStart(const void* index, int32_t dtype, long long max) {
  const long long s = IndexValue(index, dtype);
  return s < 0 ? 0 : (s > max ? max : s);
}

// gather and scatter iterate a tensor (gather: the result, scatter: the
// updates) of `dims`. For iterated index i, the index vector starts at
// sum(i_d * batch_strides[d]) in the indices, component k at
// k * vector_stride; the operand element is
//   sum_k start_k * start_strides[k] + sum_d i_d * window_strides[d]
// with start_k clamped to [0, start_max[k]] (gather) or the whole window
// skipped when outside it (scatter, as in XLA). Indices of any integer
// dtype (IndexValue).
struct IndexPlan {
  std::vector<int64_t> dims, batch_strides, window_strides, start_strides, start_max;
  int64_t vector_stride = 0, numel = 0;
  int32_t index_dtype = BRT_DTYPE_I32;
  int rank() const { return static_cast<int>(dims.size()); }
};
IndexPlan PlanGather(const OpInfo& op);
// scatter's mode: "replace" stores an update (one of several to an element,
// unspecified which), a reducer (add, mul, max or min; ops::Combine, so on
// i1 add and max are or, mul and min are and) combines each update into the
// element, duplicates included, in an unspecified order.
struct ScatterPlan : IndexPlan {
  bool replace = true;
  Reducer reducer = Reducer::kAdd;  // when !replace
  size_t operand_bytes = 0;
};
ScatterPlan PlanScatter(const OpInfo& op);

bool ParseReducer(const std::string& name, Reducer* r);
// and/or/xor need integers or i1, logaddexp floats or complex numbers; the
// others need a number or i1.
bool ReducerDefinedFor(Reducer r, int32_t dtype);
// Whether scatter combines by r (add, mul, max, min).
constexpr bool IsScatterReducer(Reducer r) {
  return r == Reducer::kAdd || r == Reducer::kMul || r == Reducer::kMax || r == Reducer::kMin;
}

// reduce(operand, init): the operand's dims collapsed into runs that are all
// kept or all reduced; ostr is the result stride of each run (0: reduced).
struct ReducePlan {
  Reducer reducer = Reducer::kAdd;
  int rank = 0;
  int64_t dims[kMaxRank] = {}, ostr[kMaxRank] = {};
  int64_t in_numel = 0, out_numel = 0;
};
ReducePlan PlanReduce(const OpInfo& op);

// reduce_window(operand, init): result element o combines the operand at
// o_d * strides[d] + w_d * win_dil[d] - pad_lo[d] (in the base-dilated
// operand; positions between dilated elements and outside are skipped).
struct ReduceWindowPlan {
  Reducer reducer = Reducer::kAdd;
  std::vector<int64_t> window, strides, base_dil, win_dil, pad_lo, padding, in_dims, in_strides,
      out_dims;
  int64_t out_numel = 0, window_numel = 1;
};
ReduceWindowPlan PlanReduceWindow(const OpInfo& op);
// A window_dimensions entry of -1 spans the operand's extent and, in its
// dimension only, a padding entry of -1 is that extent less 1: a cumulative
// scan over a symbolic dimension (docs/format.md). Resolved here for the
// concrete operand.
void ResolveWindowExtents(const TensorInfo& in, std::vector<int64_t>& window,
                          std::vector<int64_t>& padding);

// select_and_scatter(operand, source, init): the result is init everywhere;
// then for each window over the operand (one per source element, `windows`
// as in reduce_window, out_dims the source's) the source element is added at
// the operand element `select` picks: walking the window in order, a later
// element replaces the pick unless compare(pick, later) holds (GE: the first
// maximum). Padding is never picked.
struct SelectAndScatterPlan {
  ReduceWindowPlan windows;
  Cmp select = Cmp::kGe;
};
SelectAndScatterPlan PlanSelectAndScatter(const OpInfo& op);

// brt.softmax over `axis`, seen as [outer, axis size, inner]. With
// zero_masked_rows, a line whose inputs are all -inf gives zeros (PyTorch's
// safe softmax) instead of NaN.
struct SoftmaxPlan {
  int64_t axis = 0, outer = 1, size = 1, inner = 1;
  bool zero_masked_rows = false;
};
SoftmaxPlan PlanSoftmax(const OpInfo& op);

// brt.layer_norm(x, scale, shift) over the last dimension: rows x cols.
struct LayerNormPlan {
  int64_t rows = 0, cols = 0;
  double epsilon = 1e-5;
};
LayerNormPlan PlanLayerNorm(const OpInfo& op);

// brt.attention(q, k, v[, mask]): for each batch entry (the batch dims, in
// the order q_dims names them), out = softmax(scale * q k^T + mask) v over
// the keys. q_dims, k_dims and v_dims name each operand's batch dims, then
// its sequence and feature dims: q [.., Sq, D], k [.., Sk, D], v [.., Sk, Dv].
// The mask (optional) has the scores' shape [batch..., Sq, Sk] aligned
// NumPy-style (fewer leading dims, any dim 1). The result is [batch..., Sq,
// Dv] transposed by `permutation`. With zero_masked_rows, a row of scores
// that is all -inf gives zeros (PyTorch's safe softmax), else NaN.
struct AttentionPlan {
  // Element strides along the sequence (for the mask: query) and feature
  // (mask: key) dims, and each batch entry's offset.
  struct Operand {
    int64_t seq = 0, feature = 0;
    std::vector<int64_t> offset;
  };
  Operand q, k, v, mask, out;
  int64_t batches = 1, Sq = 0, Sk = 0, D = 0, Dv = 0;
  float scale = 1.0f;
  bool has_mask = false, zero_masked_rows = false;
};
AttentionPlan PlanAttention(const OpInfo& op);

Activation ParseActivation(const OpInfo& op, const std::string& name);

// dot_general / brt.matmul: batch, contracting and free dims of each side;
// the result is [batch..., lhs free..., rhs free...].
struct DotDims {
  std::vector<int64_t> lb, rb, lc, rc, lf, rf;  // batch, contracting, free dims
  int64_t B = 1, M = 1, N = 1, K = 1;
};
DotDims PlanDot(const OpInfo& op);

// brt.matmul's epilogue: bias over the rhs free dims (broadcast over batch
// and lhs rows), then an activation.
struct Epilogue {
  bool bias = false;
  Activation activation = Activation::kNone;
  int result = 2;  // buffer index of the result
  bool any() const { return bias || activation != Activation::kNone; }
};
Epilogue PlanEpilogue(const OpInfo& op, const DotDims& d);

// brt.all_gather_matmul / brt.matmul_reduce_scatter over a group of
// `group_size` ranks: lhs [rows..., K] x rhs [K, N] (or [N, K] when
// rhs_transposed), gathered or scattered along dimension 0. `rows` is the
// lhs's rows on this rank; the all_gather_matmul result has group_size times
// as many, the matmul_reduce_scatter result group_size times fewer.
struct CollectiveMatmulPlan {
  int64_t rows = 1, k = 0, n = 0;
  bool rhs_transposed = false;
  int64_t block_rows = 0;  // rows per rank block of the gathered/scattered dim
};
CollectiveMatmulPlan PlanCollectiveMatmul(const OpInfo& op, int64_t group_size);

// The collectives over a group of `group_size` ranks, shapes as StableHLO
// gives them. `outer` counts the blocks before the gathered, scattered, split
// or concatenated dimension: 1 where each rank's block is contiguous.
// all_reduce: one dtype, the result shaped as the operand; its reducer.
std::string PlanAllReduce(const OpInfo& op);
struct AllGatherPlan {
  int64_t outer = 1;
  size_t local_bytes = 0;  // the operand's
};
AllGatherPlan PlanAllGather(const OpInfo& op, int64_t group_size);
struct ReduceScatterPlan {
  std::string reducer;
  int64_t outer = 1;
};
ReduceScatterPlan PlanReduceScatter(const OpInfo& op, int64_t group_size);
struct AllToAllPlan {
  int64_t split_outer = 1, concat_outer = 1;
  size_t piece_bytes = 0;  // what one rank sends to each
};
AllToAllPlan PlanAllToAll(const OpInfo& op, int64_t group_size);
// collective_permute from this rank's view: the rank it receives from and the
// one it sends to (-1: none; a rank none sends to gets zeros).
struct PermutePlan {
  int from = -1, to = -1;
};
PermutePlan PlanCollectivePermute(const OpInfo& op, int64_t rank, int64_t world_size);
// partition_id: the rank, once the result is checked to be one u32 (or i32).
int32_t PlanPartitionId(const OpInfo& op, int64_t rank);

// convolution / brt.conv with its dimension numbers resolved: dims and
// element strides in (batch, feature, spatial...) order for the input and
// result, (output feature, input feature, spatial...) for the kernel.
struct ConvPlan {
  int spatial = 0;
  int64_t groups = 1;
  bool has_bias = false;
  bool has_residual = false;  // brt.conv's fourth operand, added after the bias
  Activation activation = Activation::kNone;
  std::vector<int64_t> src_dims, src_strides, wei_dims, wei_strides, dst_dims, dst_strides;
  std::vector<int64_t> strides, dilations, pad_lo, pad_hi;  // dilations: 1 = dense
  int64_t result_feature_dim = 1;                           // in the result's own order
  bool empty_result = false;                                // nothing to compute
  bool empty_contraction = false;                           // the result is all zeros
};
ConvPlan PlanConvolution(const OpInfo& op);

// brt.fused_elementwise: registers 0..num_inputs-1 hold the inputs
// (broadcast to the result), then the constants, then the instructions'
// results, each in a register whose value no later instruction reads (an
// instruction never writes a register it reads); the last instruction's
// register is the result. `arity` gives an op name's operand count, or -1 for
// a name the provider does not know.
struct FusedInstruction {
  std::string name;
  int arity = 1;
  int src[3] = {0, 0, 0};  // unused sources repeat src[0]
  int dst = 0;
};
// The most inputs a brt.fused_elementwise may have: what the CUDA
// interpreter holds, the fewest of any provider's (the CPU's takes up to
// kMaxRank). brt-compile fuses no more.
inline constexpr int kMaxFusedInputs = 8;
struct FusedProgram {
  int num_inputs = 0, num_registers = 0;
  std::vector<float> constants;
  std::vector<FusedInstruction> instructions;
};
FusedProgram PlanFusedElementwise(const OpInfo& op,
                                  const std::function<int(const std::string&)>& arity);

// A kernel brt-compile generated (brt.fused_elementwise: a thread per
// element; reduce over rows: a block per row), launched with the executable's
// `block_size`. The row reduction's shared array has kGeneratedReduceMaxBlock
// entries and its tree needs a power of two; brt-compile writes that size.
constexpr int64_t kGeneratedReduceMaxBlock = 256;
struct GeneratedLaunch {
  unsigned block = 256, grid = 1;
};
// Throws KernelError for a block size the kernel cannot run with.
GeneratedLaunch PlanGeneratedLaunch(const OpInfo& op);

// Numpy-style broadcasting of several inputs to one contiguous output,
// iterated row by row over collapsed dimensions.
class BroadcastPlan {
 public:
  // Throws KernelError if an input does not broadcast to out_dims.
  void Build(const std::vector<int64_t>& out_dims, const std::vector<std::vector<int64_t>>& in_dims,
             const std::string& what);
  int64_t inner() const { return inner_; }
  int64_t rows() const { return rows_; }
  // stride of input k along the innermost dimension (0 or more)
  int64_t inner_stride(int k) const { return strides_[k * rank_ + rank_ - 1]; }
  // The collapsed iteration space: rank() dims, and input k's element stride
  // along each (0 where broadcast).
  int rank() const { return rank_; }
  int64_t dim(int d) const { return dims_[d]; }
  int64_t stride(int k, int d) const { return strides_[k * rank_ + d]; }

  // f(const int64_t* input_offsets, int64_t output_offset, int64_t n)
  template <typename F>
  void ForEachRow(F&& f) const {
    ForEachRowIn(0, rows_, f);
  }
  // The same for rows [begin, end) (threads take a range each).
  template <typename F>
  void ForEachRowIn(int64_t begin, int64_t end, F&& f) const {
    if (begin >= end || inner_ == 0) return;
    static constexpr int64_t kZeros[kMaxRank] = {};
    if (rows_ == 1) return f(kZeros, int64_t{0}, inner_);
    // Only the used entries are set: clearing whole arrays costs more than a
    // small op's kernel.
    int64_t offsets[kMaxRank];
    int64_t index[kMaxRank];
    for (int k = 0; k < num_inputs_; ++k) offsets[k] = 0;
    const int outer = rank_ - 1;
    int64_t rest = begin;
    for (int d = outer - 1; d >= 0; --d) {
      index[d] = rest == 0 ? 0 : rest % dims_[d];  // no division for the first row
      rest = rest == 0 ? 0 : rest / dims_[d];
      for (int k = 0; k < num_inputs_; ++k) offsets[k] += index[d] * strides_[k * rank_ + d];
    }
    for (int64_t row = begin; row < end; ++row) {
      f(static_cast<const int64_t*>(offsets), row * inner_, inner_);
      for (int d = outer - 1; d >= 0; --d) {
        if (++index[d] < dims_[d]) {
          for (int k = 0; k < num_inputs_; ++k) offsets[k] += strides_[k * rank_ + d];
          break;
        }
        index[d] = 0;
        for (int k = 0; k < num_inputs_; ++k)
          offsets[k] -= strides_[k * rank_ + d] * (dims_[d] - 1);
      }
    }
  }

 private:
  int rank_ = 1;
  int num_inputs_ = 0;
  std::vector<int64_t> dims_;
  std::vector<int64_t> strides_;  // num_inputs x rank
  int64_t inner_ = 1, rows_ = 1;
};

}  // namespace brt::ops
