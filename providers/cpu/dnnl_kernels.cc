// Kernels built on oneDNN primitives: dot_general (matmul), convolution,
// brt.softmax and brt.layer_norm, with an f32 fallback for 16-bit floats where
// the CPU has no 16-bit primitive. Layouts are passed to oneDNN as strides, so
// transposed operands need no copy. Primitives are created once in Prepare();
// each request gets its own memory objects, stream and scratchpad. Over 500
// lines: the four share the 16-bit fallback, the relu pass that keeps NaN
// and the ISA rule for the packed GEMM, which one file keeps in one place.
#include <numeric>
#include <type_traits>

#include "dnnl_kernel.h"
#include "fused_blocks.h"
#include "ops/op_plans.h"
#include "packed_gemm.h"

namespace brt::cpu {
namespace {

using dnnl::memory;

// --- dot_general ----------------------------------------------------------------

// tanh and GELU as a oneDNN post-op appended to `post`. relu is none:
// oneDNN's is max(x, 0) on vmaxps, which makes NaN 0 where StableHLO's
// maximum keeps it, so the kernel's instance applies it after the primitive
// (ReluAfter).
void AppendActivation(Activation a, dnnl::post_ops& post) {
  if (a != Activation::kTanh && a != Activation::kGelu) return;
  post.append_eltwise(
      a == Activation::kTanh ? dnnl::algorithm::eltwise_tanh : dnnl::algorithm::eltwise_gelu_erf,
      0.f, 0.f);
}

bool IsRelu(Activation a) { return a == Activation::kRelu || a == Activation::kReluSelect; }

// Stride of a group of dims viewed as one dimension, if they collapse.
bool GroupStride(const TensorInfo& t, const std::vector<int64_t>& group, int64_t* stride) {
  const std::vector<int64_t> s = t.Strides();
  std::vector<int64_t> g;
  for (int64_t d : group)
    if (t.dims[d] != 1) g.push_back(d);
  if (g.empty()) {
    *stride = std::max<int64_t>(t.numel, 1);  // size-1 group: any stride; use the outermost
    return true;
  }
  for (size_t i = 0; i + 1 < g.size(); ++i)
    if (s[g[i]] != s[g[i + 1]] * t.dims[g[i + 1]]) return false;
  *stride = s[g.back()];
  return true;
}

// Offsets of every multi-index of a dim group, in row-major order of the group.
std::vector<int64_t> GroupOffsets(const TensorInfo& t, const std::vector<int64_t>& group) {
  const std::vector<int64_t> s = t.Strides();
  std::vector<int64_t> offs = {0};
  for (int64_t d : group) {
    std::vector<int64_t> next;
    next.reserve(offs.size() * t.dims[d]);
    for (int64_t o : offs)
      for (int64_t i = 0; i < t.dims[d]; ++i) next.push_back(o + i * s[d]);
    offs.swap(next);
  }
  return offs;
}

class MatmulKernel final : public DnnlKernel {
 public:
  void Prepare(const OpInfo& op) override {
    const DotDims d = PlanDot(op);
    const Epilogue e = PlanEpilogue(op, d);
    op.RequireSameDTypes();
    if (d.B * d.M * d.N == 0) return SetTrivial(e.result, 0);
    if (d.K == 0) {
      if (e.any())
        throw UnsupportedError("brt.matmul: empty contraction with an epilogue");  // loop kernel
      return SetTrivial(e.result, op.out[0].bytes());
    }
    // Batch dims go to oneDNN one by one, each with its own stride (they need
    // not be adjacent in memory, e.g. attention heads); rows and the
    // contraction must each collapse to one strided dimension.
    int64_t lsm, lsk, rsk, rsn;
    if (!GroupStride(op.in[0], d.lf, &lsm) || !GroupStride(op.in[0], d.lc, &lsk) ||
        !GroupStride(op.in[1], d.rc, &rsk) || !GroupStride(op.in[1], d.rf, &rsn) ||
        d.lb.size() + 2 > DNNL_MAX_NDIMS)
      throw UnsupportedError("dot_general: operand layout does not collapse to strided matrices");
    const auto lstr = op.in[0].Strides(), rstr = op.in[1].Strides();
    memory::dims src_dims, src_str, wei_dims, wei_str, dst_dims, bias_dims;
    for (size_t i = 0; i < d.lb.size(); ++i) {
      src_dims.push_back(op.in[0].dims[d.lb[i]]), src_str.push_back(lstr[d.lb[i]]);
      wei_dims.push_back(op.in[1].dims[d.rb[i]]), wei_str.push_back(rstr[d.rb[i]]);
      dst_dims.push_back(op.in[0].dims[d.lb[i]]), bias_dims.push_back(1);
    }
    src_dims.insert(src_dims.end(), {d.M, d.K}), src_str.insert(src_str.end(), {lsm, lsk});
    wei_dims.insert(wei_dims.end(), {d.K, d.N}), wei_str.insert(wei_str.end(), {rsk, rsn});
    dst_dims.insert(dst_dims.end(), {d.M, d.N}), bias_dims.insert(bias_dims.end(), {1, d.N});
    const memory::data_type t = DnnlType(op, op.out[0].dtype);
    memory::desc src(src_dims, t, src_str), wei(wei_dims, t, wei_str);
    memory::desc dst(dst_dims, t, RowMajor(dst_dims));
    memory::desc bias(bias_dims, t, RowMajor(bias_dims));
    dnnl::primitive_attr attr = UserScratchpad();
    dnnl::post_ops post;
    AppendActivation(e.activation, post);
    attr.set_post_ops(post);
    // Constant weights are reordered once into the blocked layout oneDNN
    // prefers (about 25% faster for small batches than reading them plain).
    const void* constant_weights = op.Constant(1);
    memory::desc wei_choice =
        constant_weights ? memory::desc(wei_dims, t, memory::format_tag::any) : wei;
    auto pd = e.bias ? dnnl::matmul::primitive_desc(Engine(), src, wei_choice, bias, dst, attr)
                     : dnnl::matmul::primitive_desc(Engine(), src, wei_choice, dst, attr);
    // oneDNN 3.2's gemm:jit bf16 kernel (taken for some batched layouts)
    // makes NaN of an infinite operand where K = 1 (found by the model
    // fuzzer; not traced inside oneDNN): the loop kernel runs those.
    if (d.K == 1 && t == memory::data_type::bf16 &&
        std::string(pd.impl_info_str()).rfind("gemm:jit", 0) == 0)
      throw UnsupportedError("dot_general: oneDNN's bf16 gemm:jit with K = 1");
    SetPrimitive(dnnl::matmul(pd), pd.scratchpad_desc());
    Bind(DNNL_ARG_SRC, src, 0);
    BindWeights(DNNL_ARG_WEIGHTS, wei, pd.weights_desc(), constant_weights, 1);
    if (e.bias) Bind(DNNL_ARG_BIAS, bias, 2);
    Bind(DNNL_ARG_DST, dst, e.result);
    if (IsRelu(e.activation))
      ReluAfter(e.result, op.out[0], e.activation == Activation::kReluSelect);
  }
};

template <typename C, bool = std::is_integral_v<C>>
struct AccumulatorType {
  using type = C;
};
// At least unsigned int: narrower unsigned types would multiply as (signed,
// overflowing) int.
template <typename C>
struct AccumulatorType<C, true> {
  using type = std::make_unsigned_t<decltype(C{} + 0u)>;
};

// Any dtype and any layout: out[b,m,n] = sum_k lhs[b,m,k] * rhs[b,k,n].
class NaiveDotKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    const DotDims d = PlanDot(op);
    epilogue_ = PlanEpilogue(op, d);
    op.RequireSameDTypes();
    B_ = d.B, M_ = d.M, N_ = d.N, K_ = d.K;
    // The loop kernel keeps one offset per index of each group.
    for (int64_t n : {B_, M_, N_, K_})
      if (n > (int64_t{1} << 28))
        throw UnsupportedError("dot_general: too large for the loop kernel");
    lb_ = GroupOffsets(op.in[0], d.lb), lm_ = GroupOffsets(op.in[0], d.lf),
    lk_ = GroupOffsets(op.in[0], d.lc);
    rb_ = GroupOffsets(op.in[1], d.rb), rk_ = GroupOffsets(op.in[1], d.rc),
    rn_ = GroupOffsets(op.in[1], d.rf);
    DispatchTypeOrComplex(op.out[0].dtype, [&](auto v) {
      using T = decltype(v);
      if constexpr (!std::is_same_v<T, Bool8>) fn_ = &Dot<T>;
    });
    if (!fn_) throw UnsupportedError("dot_general: not defined for i1");
    if (epilogue_.any() && !IsFloat(op.out[0].dtype))
      throw UnsupportedError("brt.matmul: bias and activation need a float result");
  }
  void Run(void* const* b) override {
    fn_(*this, b[0], b[1], epilogue_.bias ? b[2] : nullptr, b[epilogue_.result]);
  }

 private:
  template <typename T>
  static void Dot(const NaiveDotKernel& k, const void* lv, const void* rv, const void* biasv,
                  void* ov) {
    using C = Compute<T>;
    // Integers accumulate unsigned so overflow wraps instead of being undefined.
    using Acc = typename AccumulatorType<C>::type;
    const T* l = static_cast<const T*>(lv);
    const T* r = static_cast<const T*>(rv);
    T* o = static_cast<T*>(ov);
    for (int64_t bi = 0; bi < k.B_; ++bi)
      for (int64_t m = 0; m < k.M_; ++m)
        for (int64_t n = 0; n < k.N_; ++n) {
          Acc acc = 0;
          const int64_t lo = k.lb_[bi] + k.lm_[m], ro = k.rb_[bi] + k.rn_[n];
          for (int64_t kk = 0; kk < k.K_; ++kk)
            acc += static_cast<Acc>(C(l[lo + k.lk_[kk]])) * static_cast<Acc>(C(r[ro + k.rk_[kk]]));
          C value = static_cast<C>(acc);
          if constexpr (std::is_floating_point_v<C>) {
            if (biasv) value += C(static_cast<const T*>(biasv)[n]);
            value = Activate(k.epilogue_.activation, value);
          }
          o[(bi * k.M_ + m) * k.N_ + n] = T(value);
        }
  }
  int64_t B_ = 1, M_ = 1, N_ = 1, K_ = 1;
  std::vector<int64_t> lb_, lm_, lk_, rb_, rk_, rn_;
  Epilogue epilogue_;
  void (*fn_)(const NaiveDotKernel&, const void*, const void*, const void*, void*) = nullptr;
};

// Batched f32 dot_generals of at most this many multiply-adds run as brt's
// loop: oneDNN's batched matmul costs about 10 us for a decode step's
// attention (per head one query row against 16-128 cached keys or values,
// 4K-32K multiply-adds), the loop 1-2 us.
constexpr int64_t kSmallBatchedDotMaxMacs = int64_t{1} << 15;

// A small batched f32 dot_general whose rows and contraction each collapse
// to one stride and whose rhs is contiguous along its free or its
// contracting dim: out[b, m, :] accumulates lhs[b, m, k] * rhs[b, k, :]
// (rhs rows contiguous), or each out[b, m, n] is a dot product along k in
// eight partial sums (rhs columns contiguous).
class SmallBatchedDotKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    const DotDims d = PlanDot(op);
    const bool f32 = op.in[0].dtype == BRT_DTYPE_F32 && op.in[1].dtype == BRT_DTYPE_F32 &&
                     op.out[0].dtype == BRT_DTYPE_F32;
    const int64_t macs = d.B * d.M * d.N * d.K;
    if (!f32 || PlanEpilogue(op, d).any() || d.B < 2 || macs == 0 ||
        macs > kSmallBatchedDotMaxMacs || !GroupStride(op.in[0], d.lf, &lsm_) ||
        !GroupStride(op.in[0], d.lc, &lsk_) || !GroupStride(op.in[1], d.rc, &rsk_) ||
        !GroupStride(op.in[1], d.rf, &rsn_) || (rsn_ != 1 && rsk_ != 1))
      throw UnsupportedError("not a small batched dot");
    M_ = d.M, N_ = d.N, K_ = d.K;
    lb_ = GroupOffsets(op.in[0], d.lb), rb_ = GroupOffsets(op.in[1], d.rb);
  }
  void Run(void* const* b) override {
    for (size_t bi = 0; bi < lb_.size(); ++bi) {
      const float* l = static_cast<const float*>(b[0]) + lb_[bi];
      const float* r = static_cast<const float*>(b[1]) + rb_[bi];
      float* out = static_cast<float*>(b[2]) + static_cast<int64_t>(bi) * M_ * N_;
      for (int64_t m = 0; m < M_; ++m, out += N_) {
        const float* row = l + m * lsm_;
        if (rsn_ == 1) {
          std::fill(out, out + N_, 0.f);
          for (int64_t k = 0; k < K_; ++k) {
            const float a = row[k * lsk_];
            const float* rk = r + k * rsk_;
            for (int64_t n = 0; n < N_; ++n) out[n] += a * rk[n];
          }
        } else {
          for (int64_t n = 0; n < N_; ++n) out[n] = Dot(row, r + n * rsn_);
        }
      }
    }
  }

 private:
  // row[k * lsk_] * column[k] over k, column contiguous.
  float Dot(const float* row, const float* column) const {
    float partial[8] = {};
    int64_t k = 0;
    for (; k + 8 <= K_; k += 8)
      for (int j = 0; j < 8; ++j) partial[j] += row[(k + j) * lsk_] * column[k + j];
    float sum = 0;
    for (; k < K_; ++k) sum += row[k * lsk_] * column[k];
    for (float p : partial) sum += p;
    return sum;
  }
  int64_t M_ = 0, N_ = 0, K_ = 0, lsm_ = 0, lsk_ = 0, rsk_ = 0, rsn_ = 0;
  std::vector<int64_t> lb_, rb_;
};

#ifdef BRT_CPU_HAVE_AVX2_BLOCKS
// Where oneDNN runs AVX-512 (ONEDNN_MAX_CPU_ISA may cap it), its matmul
// beats brt's AVX2 GEMM: 2.1x on the encoder block's, 2.2x on the MLP's
// (bench/results/2026-11-26-threading-tbb-cpu.md).
bool OneDnnRunsAvx512() {
  static const bool kAvx512 = dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core;
  return kAvx512;
}

constexpr int64_t kMinPackedColumns = 256, kMinPackedResult = 16384;

// f32 [M, K] x [K, N] without batch dims, any epilogue, by brt's GEMM
// (packed_gemm.h), where oneDNN runs AVX2 at best: by constant weights
// (packed here, once; rows of the lhs contiguous), or with a transposed lhs (a^T b, a weight
// gradient: oneDNN 3.2's AVX2 gemm runs it at half the speed of a plain one; b packed at every
// run).
class PackedMatmulKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    if (!UseAvx2()) throw UnsupportedError("no AVX2+FMA");
    if (OneDnnRunsAvx512()) throw UnsupportedError("oneDNN's AVX-512 matmul is faster");
    const DotDims d = PlanDot(op);
    epilogue_ = PlanEpilogue(op, d);
    const void* weights = op.Constant(1);
    int64_t rsk, rsn;
    if (op.out[0].dtype != BRT_DTYPE_F32 || op.in[0].dtype != BRT_DTYPE_F32 ||
        op.in[1].dtype != BRT_DTYPE_F32 || d.B != 1 || d.M * d.N * d.K == 0 ||
        !GroupStride(op.in[0], d.lf, &rsm_) || !GroupStride(op.in[0], d.lc, &rsk_) ||
        !GroupStride(op.in[1], d.rc, &rsk) || !GroupStride(op.in[1], d.rf, &rsn))
      throw UnsupportedError("not a packed-weight matmul");
    const bool transposed_lhs = rsm_ == 1 && rsk_ != 1 && d.M > 1;
    if (!(weights && rsk_ == 1) && !transposed_lhs)
      throw UnsupportedError("not a packed-weight matmul");
    // On a small result, packing the activations costs more than the few
    // weight panels repay: oneDNN's AVX2 matmul ran those 1.4-4.4x faster
    // (bench/results/2026-11-27-avx2-matmul-shapes-cpu.md).
    if (!transposed_lhs && (d.N < kMinPackedColumns || d.M * d.N < kMinPackedResult))
      throw UnsupportedError("small result: oneDNN's matmul is faster");
    M_ = d.M, K_ = d.K, N_ = d.N, rsbk_ = rsk, rsbn_ = rsn;
    // The tiles' relu is maximum(x, 0); PyTorch's, which keeps -0, runs
    // after the GEMM.
    relu_select_ = epilogue_.activation == Activation::kReluSelect;
    if (relu_select_) epilogue_.activation = Activation::kNone;
    if (weights) PackWeights(static_cast<const float*>(weights), d.K, d.N, rsk, rsn, weights_);
  }
  void Run(void* const* b) override {
    const float* a = static_cast<const float*>(b[0]);
    const float* bias = epilogue_.bias ? static_cast<const float*>(b[2]) : nullptr;
    float* c = static_cast<float*>(b[epilogue_.result]);
    if (weights_.panels.empty())
      StridedGemm(a, rsm_, rsk_, M_, static_cast<const float*>(b[1]), rsbk_, rsbn_, K_, N_, bias,
                  epilogue_.activation, c, N_);
    else
      PackedGemm(a, rsm_, rsk_, M_, weights_, bias, epilogue_.activation, c, N_);
    if (relu_select_) ReluInPlace(c, M_ * N_, /*keep_negative_zero=*/true);
  }

 private:
  Epilogue epilogue_;
  bool relu_select_ = false;
  int64_t M_ = 0, K_ = 0, N_ = 0, rsm_ = 0, rsk_ = 0, rsbk_ = 0, rsbn_ = 0;
  PackedWeights weights_;
};
#endif

// K prepared for `op`, or null where K does not take it.
template <typename K>
std::unique_ptr<CpuKernel> PreparedOrNull(const OpInfo& op) {
  auto k = std::make_unique<K>();
  try {
    k->Prepare(op);
  } catch (const UnsupportedError&) {
    return nullptr;
  }
  return k;
}

// dot_general: brt's packed-weight GEMM or its small batched loop, else
// oneDNN when the layout and dtype allow, else the plain loop.
class DotGeneralKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
#ifdef BRT_CPU_HAVE_AVX2_BLOCKS
    if ((impl_ = PreparedOrNull<PackedMatmulKernel>(op))) return;
#endif
    if ((impl_ = PreparedOrNull<SmallBatchedDotKernel>(op))) return;
    try {
      impl_ = PreparedOrNull<MatmulKernel>(op);
    } catch (const dnnl::error&) {
      // oneDNN declined this configuration: the plain loop runs it.
    }
    if (!impl_) {
      impl_ = std::make_unique<NaiveDotKernel>();
      impl_->Prepare(op);
    }
  }
  std::unique_ptr<Runnable> CreateInstance() const override { return impl_->CreateInstance(); }
  void Run(void* const* b) override { impl_->Run(b); }

 private:
  std::unique_ptr<CpuKernel> impl_;
};

// --- convolution -------------------------------------------------------------------

// Whether dims [N, C, spatial...] with these strides are dense channels-last
// ([N, spatial..., C] in memory).
bool ChannelsLast(const memory::dims& dims, const memory::dims& strides) {
  memory::dim expected = 1;
  if (strides[1] != expected) return false;
  expected *= dims[1];
  for (size_t d = dims.size() - 1; d >= 2; --d) {
    if (strides[d] != expected && dims[d] != 1) return false;
    expected *= dims[d];
  }
  return strides[0] == expected || dims[0] == 1;
}

class ConvolutionKernel final : public DnnlKernel {
 public:
  // convolution, or brt.conv: convolution + bias over the output features +
  // residual + activation.
  void Prepare(const OpInfo& op) override {
    const ConvPlan p = PlanConvolution(op);
    const int result = static_cast<int>(op.in.size());
    const TensorInfo& out = op.out[0];
    if (p.empty_result) return SetTrivial(result, 0);
    if (p.empty_contraction) return SetTrivial(result, out.bytes());
    const int64_t O = p.wei_dims[0], I = p.wei_dims[1];
    memory::dims src_dims = p.src_dims, src_str = p.src_strides, dst_dims = p.dst_dims,
                 dst_str = p.dst_strides, wei_dims, wei_str;
    if (p.groups > 1) {
      wei_dims = {p.groups, O / p.groups, I};
      wei_str = {(O / p.groups) * p.wei_strides[0], p.wei_strides[0], p.wei_strides[1]};
    } else {
      wei_dims = {O, I};
      wei_str = {p.wei_strides[0], p.wei_strides[1]};
    }
    wei_dims.insert(wei_dims.end(), p.wei_dims.begin() + 2, p.wei_dims.end());
    wei_str.insert(wei_str.end(), p.wei_strides.begin() + 2, p.wei_strides.end());
    memory::dims stride_v = p.strides, pad_l = p.pad_lo, pad_r = p.pad_hi, dil_v;
    for (int64_t d : p.dilations) dil_v.push_back(d - 1);  // oneDNN counts the gaps
    const bool has_bias = p.has_bias;
    const memory::data_type t = DnnlType(op, out.dtype);
    memory::desc src(src_dims, t, src_str), wei(wei_dims, t, wei_str), dst(dst_dims, t, dst_str);
    memory::desc bias({O}, t, memory::dims{1});
    // The residual is added by a binary post-op reading it in the layout of
    // the primitive's result (`residual`, null for none or unknown yet).
    auto attr_for = [&](const memory::desc* residual) {
      dnnl::primitive_attr attr = UserScratchpad();
      dnnl::post_ops post;
      if (residual) post.append_binary(dnnl::algorithm::binary_add, *residual);
      AppendActivation(p.activation, post);
      attr.set_post_ops(post);
      return attr;
    };
    // The filter in oneDNN's own layout, reordered once. Activations
    // channels-last (what the compiler's channels-last pass gives) are taken
    // as they are where oneDNN has a fast kernel for them; otherwise, and
    // for other layouts (plain NCHW makes it fall back to im2col + GEMM on
    // AVX2, 2-5x slower), in the layout it chooses, reordered at the op's
    // edges each run.
    const memory::desc wei_any(wei_dims, t, memory::format_tag::any);
    auto make = [&](const memory::desc& s, const memory::desc& d, const memory::desc* residual) {
      return has_bias ? dnnl::convolution_forward::primitive_desc(
                            Engine(), dnnl::prop_kind::forward_inference,
                            dnnl::algorithm::convolution_direct, s, wei_any, bias, d, stride_v,
                            dil_v, pad_l, pad_r, attr_for(residual))
                      : dnnl::convolution_forward::primitive_desc(
                            Engine(), dnnl::prop_kind::forward_inference,
                            dnnl::algorithm::convolution_direct, s, wei_any, d, stride_v, dil_v,
                            pad_l, pad_r, attr_for(residual));
    };
    dnnl::convolution_forward::primitive_desc pd;
    if (ChannelsLast(src_dims, src_str) && ChannelsLast(dst_dims, dst_str)) {
      try {
        pd = make(src, dst, p.has_residual ? &dst : nullptr);
        const std::string impl = pd.impl_info_str();
        if (impl.rfind("ref", 0) == 0 || impl.find("gemm:") != std::string::npos) pd = {};
      } catch (const dnnl::error&) {  // no implementation for them at all
      }
    }
    if (!pd) {
      const memory::desc src_any(src_dims, t, memory::format_tag::any);
      pd = make(src_any, memory::desc(dst_dims, t, memory::format_tag::any), nullptr);
      // The residual goes in the layout oneDNN chose for the result.
      if (p.has_residual) {
        const memory::desc chosen = pd.dst_desc();
        pd = make(src_any, chosen, &chosen);
      }
    }
    SetPrimitive(dnnl::convolution_forward(pd), pd.scratchpad_desc());
    BindActivation(DNNL_ARG_SRC, src, pd.src_desc(), 0, /*result=*/false);
    BindWeights(DNNL_ARG_WEIGHTS, wei, pd.weights_desc(), op.Constant(1), 1);
    if (has_bias) Bind(DNNL_ARG_BIAS, bias, 2);
    if (p.has_residual)  // same dims and strides as the result (the plan checks)
      BindActivation(DNNL_ARG_ATTR_MULTIPLE_POST_OP(0) | DNNL_ARG_SRC_1, dst, pd.dst_desc(), 3,
                     /*result=*/false);
    BindActivation(DNNL_ARG_DST, dst, pd.dst_desc(), result, /*result=*/true);
    if (IsRelu(p.activation)) ReluAfter(result, out, p.activation == Activation::kReluSelect);
  }
};

// --- brt.softmax, brt.layer_norm ---------------------------------------------------

class SoftmaxKernel final : public DnnlKernel {
 public:
  void Prepare(const OpInfo& op) override {
    const int64_t axis = PlanSoftmax(op).axis;
    if (op.out[0].numel == 0) return SetTrivial(1, 0);
    memory::desc md = Plain(op, op.in[0]);
    dnnl::softmax_forward::primitive_desc pd(Engine(), dnnl::prop_kind::forward_inference,
                                             dnnl::algorithm::softmax_accurate, md, md,
                                             static_cast<int>(axis), UserScratchpad());
    SetPrimitive(dnnl::softmax_forward(pd), pd.scratchpad_desc());
    Bind(DNNL_ARG_SRC, md, 0);
    Bind(DNNL_ARG_DST, md, 1);
  }
};

// Below this many elements a f32 layer norm runs as brt's loop: a oneDNN
// call costs 2-3 us whatever its size (a decode step's [1, 256] rows), the
// loop well under one.
constexpr int64_t kDnnlLayerNormMinElements = 8192;

// layer_norm(x, scale, shift) over the last dimension.
class LayerNormKernel final : public DnnlKernel {
 public:
  void Prepare(const OpInfo& op) override {
    const LayerNormPlan plan = PlanLayerNorm(op);
    const TensorInfo& x = op.in[0];
    const int64_t c = plan.cols;
    const double eps = plan.epsilon;
    if (x.numel == 0) return SetTrivial(3, 0);
    if (x.dtype == BRT_DTYPE_F32 && x.numel < kDnnlLayerNormMinElements) {
      small_ = plan;
      return;
    }
    memory::desc md = Plain(op, x);
    memory::desc param({c}, memory::data_type::f32, memory::dims{1});
    dnnl::layer_normalization_forward::primitive_desc pd(
        Engine(), dnnl::prop_kind::forward_inference, md, md, static_cast<float>(eps),
        dnnl::normalization_flags::use_scale | dnnl::normalization_flags::use_shift,
        UserScratchpad());
    SetPrimitive(dnnl::layer_normalization_forward(pd), pd.scratchpad_desc());
    Bind(DNNL_ARG_SRC, md, 0);
    Bind(DNNL_ARG_SCALE, param, 1);
    Bind(DNNL_ARG_SHIFT, param, 2);
    Bind(DNNL_ARG_DST, md, 3);
  }
  std::unique_ptr<Runnable> CreateInstance() const override {
    return small_.rows ? nullptr : DnnlKernel::CreateInstance();
  }
  void Run(void* const* b) override {
    if (!small_.rows) return DnnlKernel::Run(b);
    const float* scale = static_cast<const float*>(b[1]);
    const float* shift = static_cast<const float*>(b[2]);
    const int64_t n = small_.cols;
    for (int64_t r = 0; r < small_.rows; ++r) {
      const float* x = static_cast<const float*>(b[0]) + r * n;
      float* y = static_cast<float*>(b[3]) + r * n;
      double sum = 0, squares = 0;
      for (int64_t i = 0; i < n; ++i) sum += x[i];
      const double mean = sum / static_cast<double>(n);
      for (int64_t i = 0; i < n; ++i) squares += (x[i] - mean) * (x[i] - mean);
      const float m = static_cast<float>(mean);
      const float inv =
          static_cast<float>(1 / std::sqrt(squares / static_cast<double>(n) + small_.epsilon));
      for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) * inv * scale[i] + shift[i];
    }
  }

 private:
  LayerNormPlan small_;  // rows > 0: the loop runs it
};

}  // namespace

namespace {

bool IsHalfFloat(int32_t dtype) { return dtype == BRT_DTYPE_BF16 || dtype == BRT_DTYPE_F16; }

// oneDNN reports unsupported configurations by throwing dnnl::error. A 16-bit
// float op this CPU has no primitive for (oneDNN 3.2 makes bf16 convolution,
// softmax and layer norm only with AVX-512 or AMX) runs in f32 instead: its
// 16-bit operands are widened into per-request scratch, the f32 primitive
// runs, and the result is rounded back once, within the 16-bit bound.
template <typename K>
class Guarded final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    try {
      return k_.Prepare(op);
    } catch (const dnnl::error& e) {
      auto half = [](const TensorInfo& t) { return IsHalfFloat(t.dtype); };
      if (std::none_of(op.in.begin(), op.in.end(), half) &&
          std::none_of(op.out.begin(), op.out.end(), half))
        Refuse(op, e);
    }
    k_ = K();  // afresh: the failed attempt may have bound arguments
    OpInfo f32 = op;
    for (std::vector<TensorInfo>* side : {&f32.in, &f32.out})
      for (TensorInfo& t : *side) {
        widened_.push_back(IsHalfFloat(t.dtype) ? t.dtype : 0);
        numel_.push_back(t.numel);
        if (IsHalfFloat(t.dtype)) t.dtype = BRT_DTYPE_F32;
      }
    // A widened weight arrives in f32 scratch at run time, not as its
    // 16-bit constant bytes.
    for (size_t i = 0; i < f32.in.size(); ++i)
      if (widened_[i]) f32.ForgetConstant(static_cast<int>(i));
    num_operands_ = op.in.size();
    try {
      k_.Prepare(f32);
    } catch (const dnnl::error& e) {
      Refuse(op, e);
    }
  }
  std::unique_ptr<Runnable> CreateInstance() const override {
    if (widened_.empty()) return k_.CreateInstance();
    return std::make_unique<Widened>(*this);
  }
  void Run(void* const* b) override { k_.Run(b); }

 private:
  [[noreturn]] static void Refuse(const OpInfo& op, const dnnl::error& e) {
    if (e.status == dnnl_out_of_memory)
      throw AbiError(BRT_ERROR_RESOURCE_EXHAUSTED, op.kind + ": oneDNN ran out of memory");
    throw UnsupportedError(op.kind + ": oneDNN cannot run this configuration on this CPU (" +
                           e.what() + ")");
  }

  // Per request: f32 copies of the 16-bit buffers.
  class Widened final : public Runnable {
   public:
    explicit Widened(const Guarded& g) : g_(g), inner_(g.k_.CreateInstance()) {
      for (size_t i = 0; i < g.widened_.size(); ++i)
        f32_.emplace_back(g.widened_[i] ? g.numel_[i] : 0);
      buffers_.resize(g.widened_.size());
    }
    void Run(void* const* b) override {
      for (size_t i = 0; i < buffers_.size(); ++i) {
        buffers_[i] = g_.widened_[i] ? f32_[i].data() : b[i];
        if (g_.widened_[i] && i < g_.num_operands_) Convert(i, b[i], /*widen=*/true);
      }
      inner_ ? inner_->Run(buffers_.data()) : g_.k_.Run(buffers_.data());
      for (size_t i = g_.num_operands_; i < buffers_.size(); ++i)
        if (g_.widened_[i]) Convert(i, b[i], /*widen=*/false);
    }

   private:
    void Convert(size_t i, void* narrow, bool widen) {
      float* wide = f32_[i].data();
      DispatchType(g_.widened_[i], [&](auto zero) {
        using T = decltype(zero);
        if constexpr (kIs16BitFloat<T>) {
          T* n = static_cast<T*>(narrow);
          for (int64_t k = 0; k < g_.numel_[i]; ++k)
            widen ? void(wide[k] = static_cast<float>(n[k])) : void(n[k] = T(wide[k]));
        }
      });
    }
    const Guarded& g_;
    std::unique_ptr<Runnable> inner_;
    std::vector<std::vector<float>> f32_;
    std::vector<void*> buffers_;
  };

  mutable K k_;                   // Run() of a shared kernel mutates nothing (kernel.h)
  std::vector<int32_t> widened_;  // per buffer: its 16-bit dtype, or 0; empty when native
  std::vector<int64_t> numel_;
  size_t num_operands_ = 0;
};

// brt.softmax. oneDNN's max and sum skip a NaN input, so a line holding one
// comes out with NaN there and finite values around it; StableHLO's
// maximum (and PyTorch and JAX) make the whole line NaN, and so does this
// kernel. With zero_masked_rows, a line whose inputs are all -inf is then set
// to zeros (oneDNN's softmax gives NaN there). Both look at each line once
// more, right after oneDNN wrote it.
class MaskableSoftmaxKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    plan_ = PlanSoftmax(op);
    dtype_ = op.out[0].dtype;
    k_.Prepare(op);
  }
  std::unique_ptr<Runnable> CreateInstance() const override {
    return std::make_unique<Fixed>(*this, k_.CreateInstance());
  }
  void Run(void* const* b) override {
    k_.Run(b);
    FixLines(b[0], b[1]);
  }

 private:
  void FixLines(const void* in, void* out) const {
    DispatchType(dtype_, [&](auto zero) {
      using T = decltype(zero);
      if constexpr (std::is_floating_point_v<T> || kIs16BitFloat<T>) {
        const T* x = static_cast<const T*>(in);
        T* y = static_cast<T*>(out);
        const float minus_inf = -std::numeric_limits<float>::infinity();
        const T nan = T(std::numeric_limits<float>::quiet_NaN());
        for (int64_t o = 0; o < plan_.outer; ++o)
          for (int64_t i = 0; i < plan_.inner; ++i) {
            const int64_t base = o * plan_.size * plan_.inner + i;
            int64_t k = 0;
            if (plan_.zero_masked_rows)
              while (k < plan_.size && static_cast<float>(x[base + k * plan_.inner]) == minus_inf)
                ++k;
            if (plan_.zero_masked_rows && k == plan_.size) {
              for (k = 0; k < plan_.size; ++k) y[base + k * plan_.inner] = T(0.0f);
              continue;
            }
            bool has_nan = false;
            for (k = 0; k < plan_.size; ++k) {
              const float v = static_cast<float>(y[base + k * plan_.inner]);
              has_nan |= v != v;
            }
            if (has_nan)
              for (k = 0; k < plan_.size; ++k) y[base + k * plan_.inner] = nan;
          }
      }
    });
  }
  class Fixed final : public Runnable {
   public:
    Fixed(const MaskableSoftmaxKernel& k, std::unique_ptr<Runnable> inner)
        : k_(k), inner_(std::move(inner)) {}
    void Run(void* const* b) override {
      inner_ ? inner_->Run(b) : k_.k_.Run(b);
      k_.FixLines(b[0], b[1]);
    }

   private:
    const MaskableSoftmaxKernel& k_;
    std::unique_ptr<Runnable> inner_;
  };

  SoftmaxPlan plan_;
  int32_t dtype_ = 0;
  mutable Guarded<SoftmaxKernel> k_;  // Run() of a shared kernel mutates nothing (kernel.h)
};

}  // namespace

void RegisterDnnl(std::vector<KernelDef>& defs) {
  defs.push_back({"dot_general", WithComplex(kNumericTypes), &Make<DotGeneralKernel>});
  defs.push_back(
      {"brt.matmul", {BRT_DTYPE_F32, BRT_DTYPE_F16, BRT_DTYPE_BF16}, &Make<DotGeneralKernel>});
  defs.push_back(
      {"convolution", {BRT_DTYPE_F32, BRT_DTYPE_BF16}, &Make<Guarded<ConvolutionKernel>>});
  defs.push_back({"brt.conv", {BRT_DTYPE_F32, BRT_DTYPE_BF16}, &Make<Guarded<ConvolutionKernel>>});
  defs.push_back({"brt.softmax", {BRT_DTYPE_F32, BRT_DTYPE_BF16}, &Make<MaskableSoftmaxKernel>});
  defs.push_back(
      {"brt.layer_norm", {BRT_DTYPE_F32, BRT_DTYPE_BF16}, &Make<Guarded<LayerNormKernel>>});
}

}  // namespace brt::cpu
