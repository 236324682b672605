// Op plans (see op_plans.h) for softmax, layer norm, attention,
// reduce_precision, dot_general and brt.matmul (with their epilogues), the
// collective matmuls and convolution.
#include "ops/op_plans.h"

#include "ops/op_attrs.h"

#include <algorithm>
#include <iterator>
#include <numeric>

namespace brt::ops {

SoftmaxPlan PlanSoftmax(const OpInfo& op) {
  op.RequireOperands(1);
  op.RequireSameDTypes();
  op.Require(op.in[0].dims == op.out[0].dims, "result shape differs from operand shape");
  const std::vector<int64_t>& dims = op.in[0].dims;
  const int r = op.in[0].rank();
  const SoftmaxAttrs attrs = Decode<SoftmaxAttrs>(op);
  SoftmaxPlan p;
  p.axis = attrs.axis.value_or(r - 1);
  op.Require(r > 0 && p.axis >= 0 && p.axis < r,
             "axis " + std::to_string(p.axis) + " is outside the rank");
  for (int d = 0; d < r; ++d) (d < p.axis ? p.outer : d == p.axis ? p.size : p.inner) *= dims[d];
  p.zero_masked_rows = attrs.zero_masked_rows != 0;
  return p;
}

LayerNormPlan PlanLayerNorm(const OpInfo& op) {
  op.RequireOperands(3);
  const TensorInfo& x = op.in[0];
  op.Require(x.rank() >= 1 && x.dims == op.out[0].dims && x.dtype == op.out[0].dtype,
             "result must match the operand");
  LayerNormPlan p;
  p.cols = x.dims.back();
  p.rows = p.cols ? x.numel / p.cols : 0;
  for (int i = 1; i <= 2; ++i)
    op.Require(op.in[i].dims == std::vector<int64_t>{p.cols} && op.in[i].dtype == BRT_DTYPE_F32,
               "scale and shift must be f32 of shape [" + std::to_string(p.cols) + "]");
  p.epsilon = Decode<LayerNormAttrs>(op).epsilon;
  op.Require(p.epsilon >= 0, "epsilon must be non-negative");
  return p;
}

AttentionPlan PlanAttention(const OpInfo& op) {
  op.Require((op.in.size() == 3 || op.in.size() == 4) && op.out.size() == 1,
             "expected operands q, k, v and an optional mask, and 1 result");
  for (const TensorInfo& t : op.in)
    op.Require(t.dtype == BRT_DTYPE_F32,
               std::string("operands must be f32, got ") + DTypeName(t.dtype));
  op.Require(op.out[0].dtype == BRT_DTYPE_F32, "the result must be f32");
  const TensorInfo &q = op.in[0], &k = op.in[1], &v = op.in[2], &out = op.out[0];
  const int rank = q.rank(), nb = rank - 2;
  op.Require(rank >= 2 && k.rank() == rank && v.rank() == rank,
             "q, k and v must have one rank, at least 2; got " + FormatDims(q.dims) + ", " +
                 FormatDims(k.dims) + ", " + FormatDims(v.dims));
  const AttentionAttrs attrs = Decode<AttentionAttrs>(op);
  const std::vector<int64_t>&qd = attrs.q_dims, &kd = attrs.k_dims, &vd = attrs.v_dims;
  for (const auto& [dims, name] : {std::pair{&qd, "q_dims"}, {&kd, "k_dims"}, {&vd, "v_dims"}}) {
    op.Require(static_cast<int>(dims->size()) == rank,
               std::string(name) + " must name all " + std::to_string(rank) + " dims");
    op.RequireDims(*dims, rank, name);
  }
  AttentionPlan p;
  std::vector<int64_t> batch_dims, scores(rank), logical(rank);
  for (int i = 0; i < nb; ++i) {
    const int64_t n = q.dims[qd[i]];
    op.Require(k.dims[kd[i]] == n && v.dims[vd[i]] == n,
               "batch dim " + std::to_string(i) + " differs: q " + std::to_string(n) + ", k " +
                   std::to_string(k.dims[kd[i]]) + ", v " + std::to_string(v.dims[vd[i]]));
    batch_dims.push_back(n);
    p.batches = op.Mul(p.batches, n);
    scores[i] = logical[i] = n;
  }
  p.Sq = q.dims[qd[nb]], p.D = q.dims[qd[nb + 1]], p.Sk = k.dims[kd[nb]];
  p.Dv = v.dims[vd[nb + 1]];
  op.Require(k.dims[kd[nb + 1]] == p.D && v.dims[vd[nb]] == p.Sk,
             "k must be [.., Sk, " + std::to_string(p.D) + "] and v [.., " + std::to_string(p.Sk) +
                 ", Dv]; got k " + FormatDims(k.dims) + ", v " + FormatDims(v.dims));
  scores[nb] = logical[nb] = p.Sq, scores[nb + 1] = p.Sk, logical[nb + 1] = p.Dv;
  std::vector<int64_t> perm(rank);
  std::iota(perm.begin(), perm.end(), 0);
  perm = attrs.permutation.value_or(perm);
  op.Require(static_cast<int>(perm.size()) == rank, "permutation must have the result's rank");
  op.RequireDims(perm, rank, "permutation");
  std::vector<int64_t> expected(rank);
  for (int i = 0; i < rank; ++i) expected[i] = logical[perm[i]];
  op.Require(out.dims == expected,
             "result shape " + FormatDims(out.dims) + ", expected " + FormatDims(expected));
  p.scale = static_cast<float>(attrs.scale);
  p.zero_masked_rows = attrs.zero_masked_rows != 0;
  p.has_mask = op.in.size() == 4;

  // Each operand's stride per dim of the scores' (or the result's) index
  // space [batch..., row, column].
  auto strides_by = [](const TensorInfo& t, const std::vector<int64_t>& dims) {
    const std::vector<int64_t> s = t.Strides();
    std::vector<int64_t> by(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) by[i] = s[dims[i]];
    return by;
  };
  std::vector<int64_t> mask_strides(rank, 0), out_strides(rank);
  if (p.has_mask) {
    const TensorInfo& m = op.in[3];
    const std::vector<int64_t> s = m.Strides();
    op.Require(m.rank() <= rank, "the mask's rank exceeds the scores' " + FormatDims(scores));
    for (int i = 0; i < m.rank(); ++i) {
      const int d = rank - m.rank() + i;
      op.Require(
          m.dims[i] == scores[d] || m.dims[i] == 1,
          "mask " + FormatDims(m.dims) + " does not broadcast to the scores " + FormatDims(scores));
      mask_strides[d] = m.dims[i] == 1 ? 0 : s[i];
    }
  }
  const std::vector<int64_t> os = out.Strides();
  for (int i = 0; i < rank; ++i) out_strides[perm[i]] = os[i];
  const std::vector<int64_t> qs = strides_by(q, qd), ks = strides_by(k, kd), vs = strides_by(v, vd);
  const std::pair<AttentionPlan::Operand*, const std::vector<int64_t>*> operands[] = {
      {&p.q, &qs}, {&p.k, &ks}, {&p.v, &vs}, {&p.mask, &mask_strides}, {&p.out, &out_strides}};
  if (p.Sq * p.Dv == 0) p.batches = 0;  // nothing to compute
  for (auto [o, s] : operands) {
    o->seq = (*s)[nb], o->feature = (*s)[nb + 1];
    o->offset.assign(p.batches, 0);
    for (int64_t b = 0; b < p.batches; ++b)
      for (int64_t i = nb - 1, rest = b; i >= 0; --i) {
        o->offset[b] += (rest % batch_dims[i]) * (*s)[i];
        rest /= batch_dims[i];
      }
  }
  return p;
}

Activation ParseActivation(const OpInfo& op, const std::string& act) {
  static const std::pair<const char*, Activation> kActivations[] = {
      {"none", Activation::kNone},
      {"relu", Activation::kRelu},
      {"relu_select", Activation::kReluSelect},
      {"tanh", Activation::kTanh},
      {"gelu", Activation::kGelu}};
  for (auto [name, a] : kActivations)
    if (act == name) return a;
  throw KernelError(op.kind + ": activation '" + act +
                    "' is not none, relu, relu_select, tanh or gelu");
}

ReducePrecisionPlan PlanReducePrecision(const OpInfo& op) {
  op.RequireOperands(1);
  op.RequireSameDTypes();
  op.Require(op.in[0].dims == op.out[0].dims, "result shape differs from operand shape");
  const ReducePrecisionAttrs attrs = Decode<ReducePrecisionAttrs>(op);
  op.Require(attrs.exponent_bits >= 1 && attrs.mantissa_bits >= 0,
             "exponent_bits must be >= 1 and mantissa_bits >= 0, got " +
                 std::to_string(attrs.exponent_bits) + " and " +
                 std::to_string(attrs.mantissa_bits));
  // Each float type's exponent and mantissa widths.
  static constexpr struct {
    int32_t dtype;
    int exponent, mantissa;
  } kWidths[] = {{BRT_DTYPE_F32, 8, 23},
                 {BRT_DTYPE_F64, 11, 52},
                 {BRT_DTYPE_F16, 5, 10},
                 {BRT_DTYPE_BF16, 8, 7}};
  const auto* widths = std::find_if(std::begin(kWidths), std::end(kWidths),
                                    [&](const auto& w) { return w.dtype == op.in[0].dtype; });
  op.Require(widths != std::end(kWidths),
             std::string("takes floats, got ") + DTypeName(op.in[0].dtype));
  ReducePrecisionPlan p;
  p.src_exponent = widths->exponent, p.src_mantissa = widths->mantissa;
  p.exponent_bits = attrs.exponent_bits;
  p.mantissa_bits = attrs.mantissa_bits;
  p.numel = op.in[0].numel;
  return p;
}

namespace {
// Attrs: DotGeneralAttrs or MatmulAttrs.
template <typename Attrs>
void ReadDotDims(const Attrs& attrs, DotDims* d) {
  d->lb = attrs.lhs_batching_dimensions.value_or(std::vector<int64_t>{});
  d->rb = attrs.rhs_batching_dimensions.value_or(std::vector<int64_t>{});
  d->lc = attrs.lhs_contracting_dimensions;
  d->rc = attrs.rhs_contracting_dimensions;
}
}  // namespace

DotDims PlanDot(const OpInfo& op) {
  // brt.matmul: dot_general plus an optional bias operand (see Epilogue).
  const bool fused = op.kind == MatmulAttrs::kKind;
  op.Require(
      (op.in.size() == 2 || (fused && op.in.size() == 3)) && op.out.size() == 1,
      "expected 2 operands" + std::string(fused ? " (3 with a bias)" : "") + " and 1 result");
  const TensorInfo& l = op.in[0];
  const TensorInfo& r = op.in[1];
  DotDims d;
  if (fused)
    ReadDotDims(Decode<MatmulAttrs>(op), &d);
  else
    ReadDotDims(Decode<DotGeneralAttrs>(op), &d);
  op.Require(d.lb.size() == d.rb.size(),
             "lhs and rhs have different numbers of batching dimensions");
  op.Require(d.lc.size() == d.rc.size(),
             "lhs and rhs have different numbers of contracting dimensions");
  std::vector<int64_t> lall = d.lb, rall = d.rb;
  lall.insert(lall.end(), d.lc.begin(), d.lc.end());
  rall.insert(rall.end(), d.rc.begin(), d.rc.end());
  op.RequireDims(lall, l.rank(), "lhs batching+contracting dimensions");
  op.RequireDims(rall, r.rank(), "rhs batching+contracting dimensions");
  for (size_t i = 0; i < d.lb.size(); ++i) {
    op.Require(l.dims[d.lb[i]] == r.dims[d.rb[i]], "batching dimension sizes differ");
    d.B *= l.dims[d.lb[i]];
  }
  for (size_t i = 0; i < d.lc.size(); ++i) {
    op.Require(l.dims[d.lc[i]] == r.dims[d.rc[i]], "contracting dimension sizes differ: lhs " +
                                                       FormatDims(l.dims) + ", rhs " +
                                                       FormatDims(r.dims));
    d.K *= l.dims[d.lc[i]];
  }
  std::vector<int64_t> out_dims;
  for (int64_t b : d.lb) out_dims.push_back(l.dims[b]);
  for (int i = 0; i < l.rank(); ++i)
    if (std::find(lall.begin(), lall.end(), i) == lall.end())
      d.lf.push_back(i), d.M *= l.dims[i], out_dims.push_back(l.dims[i]);
  for (int i = 0; i < r.rank(); ++i)
    if (std::find(rall.begin(), rall.end(), i) == rall.end())
      d.rf.push_back(i), d.N *= r.dims[i], out_dims.push_back(r.dims[i]);
  op.Require(out_dims == op.out[0].dims,
             "result shape " + FormatDims(op.out[0].dims) + " should be " + FormatDims(out_dims));
  return d;
}

Epilogue PlanEpilogue(const OpInfo& op, const DotDims& d) {
  Epilogue e;
  if (op.kind != MatmulAttrs::kKind) return e;
  if (op.in.size() == 3) {
    std::vector<int64_t> free;
    for (int64_t f : d.rf) free.push_back(op.in[1].dims[f]);
    op.Require(op.in[2].dims == free && op.in[2].dtype == op.out[0].dtype,
               "bias must have the rhs free dimensions " + FormatDims(free) +
                   " and the result dtype, got " + FormatDims(op.in[2].dims) + " " +
                   DTypeName(op.in[2].dtype));
    e.bias = true;
    e.result = 3;
  }
  e.activation = ParseActivation(op, Decode<MatmulAttrs>(op).activation);
  return e;
}

CollectiveMatmulPlan PlanCollectiveMatmul(const OpInfo& op, int64_t group_size) {
  op.RequireOperands(2);
  const bool gather = op.kind == AllGatherMatmulAttrs::kKind;
  std::vector<int64_t> lc, rc;
  int64_t dim = 0;
  if (gather) {
    const AllGatherMatmulAttrs attrs = Decode<AllGatherMatmulAttrs>(op);
    dim = attrs.all_gather_dim, lc = attrs.lhs_contracting_dimensions;
    rc = attrs.rhs_contracting_dimensions;
  } else {
    const MatmulReduceScatterAttrs attrs = Decode<MatmulReduceScatterAttrs>(op);
    dim = attrs.scatter_dimension, lc = attrs.lhs_contracting_dimensions;
    rc = attrs.rhs_contracting_dimensions;
  }
  op.Require(dim == 0,
             std::string(gather ? "gathers" : "scatters") + " along a dimension other than 0");
  op.Require(op.in[0].dtype == op.in[1].dtype && op.in[0].dtype == op.out[0].dtype,
             "operands and result must have one dtype");
  const int lrank = op.in[0].rank();
  op.Require(lrank >= 2 && op.in[1].rank() == 2, "lhs must have rank >= 2 and rhs rank 2");
  op.Require(lc.size() == 1 && lc[0] == lrank - 1 && rc.size() == 1 && (rc[0] == 0 || rc[0] == 1),
             "contracts other than the lhs's last dimension with one rhs dimension");
  CollectiveMatmulPlan p;
  p.rhs_transposed = rc[0] == 1;
  p.k = op.in[0].dims.back();
  p.n = op.in[1].dims[p.rhs_transposed ? 0 : 1];
  op.Require(op.in[1].dims[rc[0]] == p.k, "contraction sizes differ");
  for (int d = 0; d < lrank - 1; ++d) p.rows *= op.in[0].dims[d];
  std::vector<int64_t> expect(op.in[0].dims.begin(), op.in[0].dims.end() - 1);
  if (gather) {
    expect[0] *= group_size;
    p.block_rows = p.rows;
  } else {
    op.Require(expect[0] % group_size == 0,
               "dimension 0 does not split over " + std::to_string(group_size) + " ranks");
    expect[0] /= group_size;
    p.block_rows = p.rows / group_size;
  }
  expect.push_back(p.n);
  op.Require(op.out[0].dims == expect,
             "result shape " + FormatDims(op.out[0].dims) + " is not " + FormatDims(expect));
  return p;
}

namespace {
// Attrs: ConvolutionAttrs, or ConvAttrs (fused: a bias and an activation).
template <typename Attrs>
ConvPlan PlanConvolutionWith(const OpInfo& op, const Attrs& attrs, bool fused) {
  op.Require((op.in.size() == 2 || (fused && (op.in.size() == 3 || op.in.size() == 4))) &&
                 op.out.size() == 1,
             fused
                 ? "expected 2 operands (3 with a bias, 4 with a bias and a residual) and 1 result"
                 : "expected 2 operands and 1 result");
  op.RequireSameDTypes();
  ConvPlan p;
  p.activation = Activation::kNone;
  if constexpr (requires { attrs.activation; })
    p.activation = ParseActivation(op, attrs.activation);
  p.has_bias = op.in.size() >= 3;
  p.has_residual = op.in.size() == 4;
  const TensorInfo& in = op.in[0];
  const TensorInfo& k = op.in[1];
  const TensorInfo& out = op.out[0];
  const int r = in.rank();
  op.Require(r >= 3 && r <= 5 && k.rank() == r && out.rank() == r,
             "supports 1 to 3 spatial dimensions with equal ranks");
  const int ns = r - 2;
  p.spatial = ns;
  std::vector<int64_t> spatial_default(ns);  // 2, 3, ...: NCHW and OIHW
  std::iota(spatial_default.begin(), spatial_default.end(), 2);
  const int64_t ib = attrs.input_batch_dimension, ifd = attrs.input_feature_dimension;
  const int64_t ko = attrs.kernel_output_feature_dimension,
                ki = attrs.kernel_input_feature_dimension;
  const int64_t ob = attrs.output_batch_dimension, of = attrs.output_feature_dimension;
  const std::vector<int64_t> is = attrs.input_spatial_dimensions.value_or(spatial_default);
  const std::vector<int64_t> ks = attrs.kernel_spatial_dimensions.value_or(spatial_default);
  const std::vector<int64_t> os = attrs.output_spatial_dimensions.value_or(spatial_default);
  op.Require(static_cast<int>(is.size()) == ns && static_cast<int>(ks.size()) == ns &&
                 static_cast<int>(os.size()) == ns,
             "spatial dimension lists must have rank-2 entries");
  std::vector<int64_t> iall = {ib, ifd}, kall = {ko, ki}, oall = {ob, of};
  iall.insert(iall.end(), is.begin(), is.end());
  kall.insert(kall.end(), ks.begin(), ks.end());
  oall.insert(oall.end(), os.begin(), os.end());
  op.RequireDims(iall, r, "input dimension numbers");
  op.RequireDims(kall, r, "kernel dimension numbers");
  op.RequireDims(oall, r, "output dimension numbers");
  const std::vector<int64_t> ones(ns, 1);
  const std::vector<int64_t> strides = attrs.window_strides.value_or(ones);
  const std::vector<int64_t> padding = attrs.padding.value_or(std::vector<int64_t>(2 * ns, 0));
  const std::vector<int64_t> lhs_dil = attrs.lhs_dilation.value_or(ones);
  const std::vector<int64_t> rhs_dil = attrs.rhs_dilation.value_or(ones);
  p.groups = attrs.feature_group_count;
  const int64_t batch_groups = attrs.batch_group_count;
  op.Require(static_cast<int>(strides.size()) == ns && static_cast<int>(padding.size()) == 2 * ns &&
                 static_cast<int>(lhs_dil.size()) == ns && static_cast<int>(rhs_dil.size()) == ns,
             "window attributes must have one entry per spatial dimension (padding: two)");
  if (batch_groups != 1)
    throw UnsupportedError("convolution: batch_group_count > 1 is not supported yet");
  for (int64_t v : lhs_dil)
    if (v != 1)
      throw UnsupportedError(
          "convolution: lhs_dilation (transposed convolution) is not supported yet");
  for (int64_t v : padding)
    if (v < 0) throw UnsupportedError("convolution: negative padding is not supported yet");
  const int64_t N = in.dims[ib], C = in.dims[ifd], O = k.dims[ko], I = k.dims[ki];
  op.Require(p.groups >= 1 && C == I * p.groups && O % p.groups == 0,
             "feature_group_count " + std::to_string(p.groups) + " does not fit input features " +
                 std::to_string(C) + ", kernel input features " + std::to_string(I) +
                 " and output features " + std::to_string(O));
  op.Require(out.dims[ob] == N && out.dims[of] == O, "result batch/feature sizes do not match");
  const auto istr = in.Strides(), kstr = k.Strides(), ostr = out.Strides();
  p.src_dims = {N, C}, p.src_strides = {istr[ib], istr[ifd]};
  p.wei_dims = {O, I}, p.wei_strides = {kstr[ko], kstr[ki]};
  p.dst_dims = {N, O}, p.dst_strides = {ostr[ob], ostr[of]};
  p.result_feature_dim = of;
  p.empty_result = N == 0 || O == 0;
  for (int s = 0; s < ns; ++s) {
    const int64_t x = in.dims[is[s]], w = k.dims[ks[s]], y = out.dims[os[s]];
    op.Require(strides[s] > 0 && rhs_dil[s] > 0, "strides and dilations must be positive");
    const int64_t span = op.Add(op.Mul(w - 1, rhs_dil[s]), 1);
    const int64_t padded = op.Add(op.Add(x, padding[2 * s]), padding[2 * s + 1]);
    const int64_t expect = padded < span ? 0 : (padded - span) / strides[s] + 1;
    op.Require(y == expect, "output spatial dimension " + std::to_string(s) + " is " +
                                std::to_string(y) + ", the window gives " + std::to_string(expect));
    p.empty_result = p.empty_result || y == 0;
    p.src_dims.push_back(x), p.src_strides.push_back(istr[is[s]]);
    p.wei_dims.push_back(w), p.wei_strides.push_back(kstr[ks[s]]);
    p.dst_dims.push_back(y), p.dst_strides.push_back(ostr[os[s]]);
    p.strides.push_back(strides[s]), p.dilations.push_back(rhs_dil[s]);
    p.pad_lo.push_back(padding[2 * s]), p.pad_hi.push_back(padding[2 * s + 1]);
  }
  if (p.has_bias)
    op.Require(op.in[2].dims == std::vector<int64_t>{O},
               "bias must have shape [" + std::to_string(O) + "] (the output features), got " +
                   FormatDims(op.in[2].dims));
  if (p.has_residual)
    op.Require(op.in[3].dims == out.dims, "residual must have the result's shape " +
                                              FormatDims(out.dims) + ", got " +
                                              FormatDims(op.in[3].dims));
  p.empty_contraction = !p.empty_result && (C == 0 || k.numel == 0);
  if (p.empty_contraction && (p.has_bias || p.activation != Activation::kNone))
    throw UnsupportedError(
        "brt.conv: an empty contraction with a bias, residual or activation is not supported");
  return p;
}

}  // namespace

ConvPlan PlanConvolution(const OpInfo& op) {
  if (op.kind == ConvAttrs::kKind) return PlanConvolutionWith(op, Decode<ConvAttrs>(op), true);
  return PlanConvolutionWith(op, Decode<ConvolutionAttrs>(op), false);
}

}  // namespace brt::ops
