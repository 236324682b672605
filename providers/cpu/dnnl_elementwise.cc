// oneDNN primitives for large f32 elementwise ops, pooling (reduce_window)
// and reductions, where they beat brt's loops; each Make* returns nullptr
// when oneDNN declines the configuration.
#include "dnnl_kernel.h"
#include "ops/op_plans.h"

namespace brt::cpu {
namespace {

using dnnl::memory;

// --- large elementwise ops ------------------------------------------------------------

// Below this size brt's loops win: a oneDNN execution costs microseconds,
// a brt kernel call nanoseconds. Above it oneDNN's threads pay off.
constexpr int64_t kDnnlElementwiseMinElements = int64_t{1} << 16;

class DnnlElementwiseKernel final : public DnnlKernel {
 public:
  void Prepare(const OpInfo& op) override {
    if (!Build(op)) throw UnsupportedError(op.kind + ": not a oneDNN elementwise configuration");
  }
  // Returns false when oneDNN should not take this op.
  bool Build(const OpInfo& op) {
    const TensorInfo& out = op.out[0];
    if (out.dtype != BRT_DTYPE_F32 || out.numel < kDnnlElementwiseMinElements ||
        out.rank() > DNNL_MAX_NDIMS)
      return false;
    const memory::desc dst = Plain(op, out);
    static const std::pair<const char*, dnnl::algorithm> kUnary[] = {
        {"exponential", dnnl::algorithm::eltwise_exp},
        {"log", dnnl::algorithm::eltwise_log},
        {"tanh", dnnl::algorithm::eltwise_tanh},
        {"logistic", dnnl::algorithm::eltwise_logistic},
        {"sqrt", dnnl::algorithm::eltwise_sqrt},
        {"abs", dnnl::algorithm::eltwise_abs},
        {"negate", dnnl::algorithm::eltwise_linear}};
    for (const auto& [kind, alg] : kUnary) {
      if (op.kind != kind) continue;
      const float alpha = alg == dnnl::algorithm::eltwise_linear ? -1.f : 0.f;
      dnnl::eltwise_forward::primitive_desc pd(Engine(), dnnl::prop_kind::forward_inference, alg,
                                               dst, dst, alpha, 0.f, UserScratchpad());
      SetPrimitive(dnnl::eltwise_forward(pd), pd.scratchpad_desc());
      Bind(DNNL_ARG_SRC, dst, 0);
      Bind(DNNL_ARG_DST, dst, 1);
      return true;
    }
    static const std::pair<const char*, dnnl::algorithm> kBinary[] = {
        {"add", dnnl::algorithm::binary_add},
        {"subtract", dnnl::algorithm::binary_sub},
        {"multiply", dnnl::algorithm::binary_mul},
        {"divide", dnnl::algorithm::binary_div}};
    for (const auto& [kind, alg] : kBinary) {
      if (op.kind != kind) continue;
      // oneDNN broadcasts only its second source: the full-shape operand goes
      // first, swapped if the op commutes.
      int full = op.in[0].dims == out.dims ? 0 : op.in[1].dims == out.dims ? 1 : -1;
      const bool commutes =
          alg == dnnl::algorithm::binary_add || alg == dnnl::algorithm::binary_mul;
      if (full < 0 || (full == 1 && !commutes)) return false;
      const TensorInfo& other = op.in[1 - full];
      TensorInfo padded = other;  // numpy right-aligned dims, as oneDNN wants equal ranks
      padded.dims.insert(padded.dims.begin(), out.rank() - other.rank(), 1);
      for (int d = 0; d < out.rank(); ++d)
        if (padded.dims[d] != 1 && padded.dims[d] != out.dims[d]) return false;
      const memory::desc src1 = Plain(op, padded);
      dnnl::binary::primitive_desc pd(Engine(), alg, dst, src1, dst, UserScratchpad());
      SetPrimitive(dnnl::binary(pd), pd.scratchpad_desc());
      Bind(DNNL_ARG_SRC_0, dst, full);
      Bind(DNNL_ARG_SRC_1, src1, 1 - full);
      Bind(DNNL_ARG_DST, dst, 2);
      return true;
    }
    return false;
  }
};

// reduce_window(max|add) as oneDNN pooling: `add` is average-including-padding
// scaled back by the window size. oneDNN's max starts from the lowest finite
// float and drops NaN, so it is exact only for inputs without -inf and NaN,
// which the caller checks at each run (reduce.cc).
class DnnlPoolingKernel final : public DnnlKernel {
 public:
  void Prepare(const OpInfo& op) override {
    if (!Build(op)) throw UnsupportedError("reduce_window: not a oneDNN pooling configuration");
  }
  bool Build(const OpInfo& op) {
    const TensorInfo& in = op.in[0];
    const TensorInfo& out = op.out[0];
    const int r = in.rank();
    if (in.dtype != BRT_DTYPE_F32 || r < 3 || r > 5 || out.numel == 0) return false;
    const ReduceWindowAttrs attrs = Decode<ReduceWindowAttrs>(op);
    const std::string& reducer = attrs.reducer;
    if (reducer != "max" && reducer != "add") return false;
    const std::vector<int64_t> ones(r, 1);
    std::vector<int64_t> window = attrs.window_dimensions;
    const std::vector<int64_t> strides = attrs.window_strides.value_or(ones);
    const std::vector<int64_t> base = attrs.base_dilations.value_or(ones);
    const std::vector<int64_t> dil = attrs.window_dilations.value_or(ones);
    std::vector<int64_t> pad = attrs.padding.value_or(std::vector<int64_t>(2 * r, 0));
    if (static_cast<int>(window.size()) != r || static_cast<int>(pad.size()) != 2 * r) return false;
    ResolveWindowExtents(in, window, pad);
    // The first two dims the window leaves alone act as batch and feature.
    std::vector<int> untouched, pooled;
    for (int d = 0; d < r; ++d) {
      if (base[d] != 1 || pad[2 * d] < 0 || pad[2 * d + 1] < 0) return false;
      const bool identity =
          window[d] == 1 && strides[d] == 1 && pad[2 * d] == 0 && pad[2 * d + 1] == 0;
      (identity && untouched.size() < 2 ? untouched : pooled).push_back(d);
    }
    if (untouched.size() != 2) return false;
    // A max window wholly in the padding is -inf in StableHLO and the lowest
    // float in oneDNN, whose padding is that: those take the loop.
    if (reducer == "max")
      for (int d : pooled)
        for (int64_t o = 0; o < out.dims[d]; ++o) {
          bool reads_input = false;
          for (int64_t w = 0; w < window[d] && !reads_input; ++w) {
            const int64_t pos = o * strides[d] + w * dil[d] - pad[2 * d];
            reads_input = pos >= 0 && pos < in.dims[d];
          }
          if (!reads_input) return false;
        }
    const auto istr = in.Strides(), ostr = out.Strides();
    memory::dims src_dims, src_str, dst_dims, dst_str, kernel, stride, dilation, pad_l, pad_r;
    int64_t window_size = 1;
    for (int d : untouched) {
      src_dims.push_back(in.dims[d]), src_str.push_back(istr[d]);
      dst_dims.push_back(out.dims[d]), dst_str.push_back(ostr[d]);
    }
    for (int d : pooled) {
      src_dims.push_back(in.dims[d]), src_str.push_back(istr[d]);
      dst_dims.push_back(out.dims[d]), dst_str.push_back(ostr[d]);
      kernel.push_back(window[d]), stride.push_back(strides[d]), dilation.push_back(dil[d] - 1);
      pad_l.push_back(pad[2 * d]), pad_r.push_back(pad[2 * d + 1]);
      window_size = op.Mul(window_size, window[d]);
    }
    const memory::desc src(src_dims, memory::data_type::f32, src_str);
    const memory::desc dst(dst_dims, memory::data_type::f32, dst_str);
    dnnl::primitive_attr attr = UserScratchpad();
    dnnl::algorithm alg = dnnl::algorithm::pooling_max;
    if (reducer == "add") {
      alg = dnnl::algorithm::pooling_avg_include_padding;
      dnnl::post_ops post;
      post.append_eltwise(dnnl::algorithm::eltwise_linear, static_cast<float>(window_size), 0.f);
      attr.set_post_ops(post);
    }
    dnnl::pooling_forward::primitive_desc pd(Engine(), dnnl::prop_kind::forward_inference, alg, src,
                                             dst, stride, kernel, dilation, pad_l, pad_r, attr);
    // oneDNN has no vectorized pooling over plain NCHW (PyTorch's layout):
    // its reference one is 30x slower than reordering into channel blocks of
    // 8 and back around the jit one.
    const std::string impl = pd.impl_info_str();
    if (impl.find("simple") != std::string::npos || impl.find("ref") != std::string::npos) {
      static const memory::format_tag kBlocked[] = {
          memory::format_tag::aBc8b, memory::format_tag::aBcd8b, memory::format_tag::aBcde8b};
      const memory::desc src_blocked(src_dims, memory::data_type::f32, kBlocked[r - 3]);
      const memory::desc dst_any(dst_dims, memory::data_type::f32, memory::format_tag::any);
      dnnl::pooling_forward::primitive_desc blocked(Engine(), dnnl::prop_kind::forward_inference,
                                                    alg, src_blocked, dst_any, stride, kernel,
                                                    dilation, pad_l, pad_r, attr);
      SetPrimitive(dnnl::pooling_forward(blocked), blocked.scratchpad_desc());
      BindActivation(DNNL_ARG_SRC, src, src_blocked, 0, /*result=*/false);
      BindActivation(DNNL_ARG_DST, dst, blocked.dst_desc(), 2, /*result=*/true);
      return true;
    }
    SetPrimitive(dnnl::pooling_forward(pd), pd.scratchpad_desc());
    Bind(DNNL_ARG_SRC, src, 0);
    Bind(DNNL_ARG_DST, dst, 2);
    return true;
  }
};

// reduce(add) over large f32 tensors as oneDNN reduction.
class DnnlReductionKernel final : public DnnlKernel {
 public:
  void Prepare(const OpInfo& op) override {
    if (!Build(op)) throw UnsupportedError("reduce: not a oneDNN reduction configuration");
  }
  bool Build(const OpInfo& op) {
    const TensorInfo& in = op.in[0];
    const ReduceAttrs attrs = Decode<ReduceAttrs>(op);
    if (in.dtype != BRT_DTYPE_F32 || in.numel < kDnnlElementwiseMinElements ||
        in.rank() > DNNL_MAX_NDIMS || attrs.reducer != "add" || op.out[0].numel == 0)
      return false;
    TensorInfo kept = in;  // the result with reduced dims kept as size 1
    for (int64_t d : attrs.dimensions) kept.dims[d] = 1;
    const memory::desc src = Plain(op, in), dst = Plain(op, kept);
    dnnl::reduction::primitive_desc pd(Engine(), dnnl::algorithm::reduction_sum, src, dst, 0.f, 0.f,
                                       UserScratchpad());
    // oneDNN 3.2's reference reduction is 100x slower than brt's loop over
    // the middle axis of [32, 128, 384] (19 ms against 0.16).
    if (std::string(pd.impl_info_str()).find("ref") != std::string::npos) return false;
    SetPrimitive(dnnl::reduction(pd), pd.scratchpad_desc());
    Bind(DNNL_ARG_SRC, src, 0);
    Bind(DNNL_ARG_DST, dst, 2);
    return true;
  }
};

template <typename K>
std::unique_ptr<CpuKernel> TryDnnl(const OpInfo& op) {
  auto k = std::make_unique<K>();
  try {
    if (k->Build(op)) return k;
  } catch (const dnnl::error&) {
    // oneDNN declined this configuration: brt's loop runs it.
  }
  return nullptr;
}

}  // namespace

std::unique_ptr<CpuKernel> MakeDnnlPooling(const OpInfo& op) {
  return TryDnnl<DnnlPoolingKernel>(op);
}
std::unique_ptr<CpuKernel> MakeDnnlReduction(const OpInfo& op) {
  return TryDnnl<DnnlReductionKernel>(op);
}

std::unique_ptr<CpuKernel> MakeDnnlElementwise(const OpInfo& op) {
  return TryDnnl<DnnlElementwiseKernel>(op);
}

}  // namespace brt::cpu
