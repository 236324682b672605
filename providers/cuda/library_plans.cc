// GEMM and convolution launch plans (see library_plans.h).
#include "library_plans.h"

#include <algorithm>

#include "runtime.h"

namespace brt::cuda {
namespace {

using ops::TensorInfo;

// A copy of a strided view (dims, src_strides) into a packed row-major tensor.
CopyParams PackedCopy(const std::vector<int64_t>& dims, const std::vector<int64_t>& src_strides,
                      size_t es) {
  const std::vector<int64_t> dst = TensorInfo{BRT_DTYPE_INVALID, dims, 1}.Strides();
  ops::StridedCopy c;
  c.rank = static_cast<int>(dims.size());
  c.elem_size = es;
  for (int i = 0; i < c.rank; ++i)
    c.dims[i] = dims[i], c.src_strides[i] = src_strides[i], c.dst_strides[i] = dst[i];
  c.Simplify();
  return MakeCopy(c);
}

// In place when the dims are: batch (in order, leading), then `first` and
// `second` as consecutive runs in listed order (transposed when `second`
// comes first); else packed as [batch, first, second].
GemmOperand PlanOperand(const TensorInfo& t, const std::vector<int64_t>& batch,
                        const std::vector<int64_t>& first, const std::vector<int64_t>& second,
                        size_t es) {
  auto run_at = [](const std::vector<int64_t>& g, size_t start) {
    for (size_t i = 0; i < g.size(); ++i)
      if (g[i] != static_cast<int64_t>(start + i)) return false;
    return true;
  };
  GemmOperand side;
  const size_t nb = batch.size();
  if (run_at(batch, 0)) {
    if (run_at(first, nb) && run_at(second, nb + first.size())) return side;
    if (run_at(second, nb) && run_at(first, nb + second.size())) {
      side.transposed = true;
      return side;
    }
  }
  std::vector<int64_t> order = batch;
  order.insert(order.end(), first.begin(), first.end());
  order.insert(order.end(), second.begin(), second.end());
  const std::vector<int64_t> strides = t.Strides();
  std::vector<int64_t> dims, src;
  for (int64_t d : order) dims.push_back(t.dims[d]), src.push_back(strides[d]);
  side.pack = PackedCopy(dims, src, es);
  side.packed_bytes = static_cast<size_t>(t.numel) * es;
  return side;
}

}  // namespace

bool GemmSupports(const ops::OpInfo& op) {
  const int32_t dtype = op.out[0].dtype;
  if (dtype == BRT_DTYPE_C64 || dtype == BRT_DTYPE_C128) {
    const ops::Epilogue e = ops::PlanEpilogue(op, ops::PlanDot(op));
    return !e.bias && e.activation == ops::Activation::kNone;
  }
  return dtype == BRT_DTYPE_F32 || dtype == BRT_DTYPE_F16 || dtype == BRT_DTYPE_BF16;
}

GemmPlan PlanGemm(const ops::OpInfo& op) {
  const ops::DotDims d = ops::PlanDot(op);
  const ops::Epilogue e = ops::PlanEpilogue(op, d);
  GemmPlan g;
  g.dtype = op.out[0].dtype;
  if (!GemmSupports(op))
    throw ops::UnsupportedError(op.kind +
                                ": the GEMM path takes f32, f16, bf16, and c64 and c128 "
                                "without bias or activation");
  const size_t es = brt_dtype_size(g.dtype);
  g.lhs = PlanOperand(op.in[0], d.lb, d.lf, d.lc, es);  // untransposed: [M, K]
  g.rhs = PlanOperand(op.in[1], d.rb, d.rc, d.rf, es);  // untransposed: [K, N]
  const int64_t M = d.M, N = d.N, K = d.K;
  g.batch = d.B, g.m = N, g.n = M, g.k = K;
  // A = rhs: stored [K, N] row-major = column-major N x K (or [N, K] = K x N, transposed).
  g.trans_a = g.rhs.transposed;
  g.a_rows = g.trans_a ? K : N, g.a_cols = g.trans_a ? N : K;
  g.lda = std::max<int64_t>(g.a_rows, 1), g.stride_a = K * N;
  // B = lhs: stored [M, K] row-major = column-major K x M (or [K, M] = M x K, transposed).
  g.trans_b = g.lhs.transposed;
  g.b_rows = g.trans_b ? M : K, g.b_cols = g.trans_b ? K : M;
  g.ldb = std::max<int64_t>(g.b_rows, 1), g.stride_b = M * K;
  g.ldc = std::max<int64_t>(N, 1), g.stride_c = M * N;
  g.bias = e.bias;
  g.activation = e.activation;
  g.result = e.result;
  return g;
}

ConvLaunchPlan PlanConvLaunch(const ops::OpInfo& op) {
  ConvLaunchPlan c;
  c.conv = ops::PlanConvolution(op);
  const ops::ConvPlan& p = c.conv;
  // The compiler fuses a residual into brt.conv for --target=cpu only.
  if (p.has_residual)
    throw ops::UnsupportedError(
        "brt.conv with a residual operand (its fourth) runs on the CPU provider only; compile "
        "for --target=cuda to keep the residual add a separate op");
  c.dtype = op.out[0].dtype;
  c.out_bytes = op.out[0].bytes();
  c.result = p.has_bias ? 3 : 2;
  if (p.empty_result || p.empty_contraction) return c;
  const size_t es = brt_dtype_size(c.dtype);
  c.x_dims = p.src_dims, c.x_strides = p.src_strides, c.w_dims = p.wei_dims;
  c.y_dims = p.dst_dims, c.y_strides = p.dst_strides;
  c.pads = p.pad_lo, c.strides = p.strides, c.dilations = p.dilations;
  // The filter: packed [O, I, spatial...] unless its strides already are.
  const TensorInfo& w = op.in[1];
  if (p.wei_strides != TensorInfo{c.dtype, p.wei_dims, 1}.Strides()) {
    c.weight_copy = PackedCopy(p.wei_dims, p.wei_strides, es);
    c.weight_bytes = static_cast<size_t>(w.numel) * es;
  }
  // Asymmetric padding: pad into a packed [N, C, spatial...] buffer.
  if (p.pad_lo != p.pad_hi) {
    std::vector<int64_t> padded = p.src_dims;
    for (int s = 0; s < p.spatial; ++s) padded[2 + s] += p.pad_lo[s] + p.pad_hi[s];
    const std::vector<int64_t> pstr = TensorInfo{c.dtype, padded, 1}.Strides();
    ops::StridedCopy copy;
    copy.rank = static_cast<int>(padded.size());
    copy.elem_size = es;
    int64_t numel = 1;
    for (int d = 0; d < copy.rank; ++d) {
      copy.dims[d] = p.src_dims[d], copy.src_strides[d] = p.src_strides[d],
      copy.dst_strides[d] = pstr[d];
      if (d >= 2) c.input_offset += p.pad_lo[d - 2] * pstr[d];
      numel *= padded[d];
    }
    copy.Simplify();
    c.input_copy = MakeCopy(copy);
    c.input_offset *= static_cast<int64_t>(es);
    c.input_bytes = static_cast<size_t>(numel) * es;
    c.x_dims = padded, c.x_strides = pstr;
    std::fill(c.pads.begin(), c.pads.end(), 0);
  }
  if (p.spatial == 1) {
    c.x_dims.push_back(1), c.x_strides.push_back(1), c.w_dims.push_back(1);
    c.y_dims.push_back(1), c.y_strides.push_back(1);
    c.pads.push_back(0), c.strides.push_back(1), c.dilations.push_back(1);
  }
  const TensorInfo& out = op.out[0];
  if (p.has_bias) {
    c.bias.kind = Elementwise::kBinary;
    c.bias.op = static_cast<int>(ops::Binary::kAdd);
    const std::vector<int64_t> ostr = out.Strides();
    c.bias.space.rank = out.rank();
    c.bias.space.n = out.numel;
    for (int d = 0; d < out.rank(); ++d) {
      c.bias.space.dims[d] = out.dims[d];
      c.bias.space.strides[0][d] = ostr[d];
      c.bias.space.strides[1][d] = d == p.result_feature_dim ? 1 : 0;
    }
  }
  if (p.activation != ops::Activation::kNone) {
    c.activation.kind = Elementwise::kActivation;
    c.activation.op = static_cast<int>(p.activation);
    c.activation.space.n = c.activation.space.dims[0] = out.numel;
    c.activation.space.strides[0][0] = 1;
  }
  return c;
}

FftLaunchPlan PlanFftLaunch(const ops::OpInfo& op) {
  FftLaunchPlan p;
  p.fft = ops::PlanFft(op);
  const ops::FftPlan& f = p.fft;
  p.part_dtype = f.complex_dtype == BRT_DTYPE_C64 ? BRT_DTYPE_F32 : BRT_DTYPE_F64;
  p.operand_bytes = op.in[0].bytes();
  p.scaled_values = f.inverse() ? op.out[0].numel * (f.real_out() ? 1 : 2) : 0;
  if (f.real_out() && !f.empty) {
    p.scratch_bytes = p.operand_bytes;
    const int rank = static_cast<int>(f.lengths.size());
    p.planes.batches = f.batches;
    p.planes.half = f.spectrum[rank - 1];
    p.planes.n = f.lengths[rank - 1];
    for (int d = 0; d < rank - 1; ++d) p.planes.outer[2 - (rank - 1) + d] = f.spectrum[d];
  }
  return p;
}

void RunFftSteps(const FftLaunchPlan& p, const void* operand, void* result, void* scratch,
                 cudaStream_t stream, const std::function<void(const void*, void*)>& transform) {
  if (p.fft.empty) return;
  const void* in = operand;
  if (p.scratch_bytes) {
    CopyAsync(scratch, operand, p.operand_bytes, stream);
    Check(LaunchHermitianPlanes(p.planes, p.fft.complex_dtype, operand, scratch, stream),
          "fft: the half spectrum's Hermitian planes");
    in = scratch;
  }
  transform(in, result);
  if (p.scaled_values)
    Check(LaunchScale(p.scaled_values, p.part_dtype, p.fft.scale, result, stream), "fft: scale");
}

}  // namespace brt::cuda
