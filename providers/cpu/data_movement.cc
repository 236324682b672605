// Data movement kernels. They only move bytes, so one implementation per
// kernel serves every dtype; most are a single StridedCopy.
#include <algorithm>

#include "kernel.h"
#include "ops/op_plans.h"

namespace brt::cpu {
namespace {

// broadcast_in_dim, transpose, slice, reverse: one strided copy.
class StridedViewKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    view_ = PlanStridedView(op);
    offset_bytes_ = view_.src_offset * static_cast<int64_t>(view_.copy.elem_size);
  }
  void Run(void* const* b) override {
    view_.copy.Run(static_cast<char*>(b[1]), static_cast<const char*>(b[0]) + offset_bytes_);
  }

 private:
  StridedView view_;
  int64_t offset_bytes_ = 0;
};

// reshape and bitcast_convert: the bytes as they are, planned by kPlan.
template <size_t (*kPlan)(const OpInfo&)>
class ByteCopyKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override { bytes_ = kPlan(op); }
  void Run(void* const* b) override {
    if (bytes_ && b[0] != b[1]) std::memcpy(b[1], b[0], bytes_);
  }

 private:
  size_t bytes_ = 0;
};

class ConcatenateKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override { pieces_ = PlanConcatenate(op); }
  void Run(void* const* b) override {
    char* out = static_cast<char*>(b[pieces_.size()]);
    for (size_t i = 0; i < pieces_.size(); ++i) {
      const int64_t es = static_cast<int64_t>(pieces_[i].copy.elem_size);
      pieces_[i].copy.Run(out + pieces_[i].dst_offset * es, static_cast<const char*>(b[i]));
    }
  }

 private:
  std::vector<ConcatPiece> pieces_;
};

// Fills the result with the padding value, then copies the part of the
// operand that lands inside it.
class PadKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    pad_ = PlanPad(op);
    numel_ = op.out[0].numel;
    es_ = static_cast<int64_t>(pad_.copy.elem_size);
  }
  void Run(void* const* b) override {
    char* out = static_cast<char*>(b[2]);
    const char* value = static_cast<const char*>(b[1]);
    for (int64_t i = 0; i < numel_; ++i)
      std::memcpy(out + i * es_, value, static_cast<size_t>(es_));
    pad_.copy.Run(out + pad_.dst_offset * es_,
                  static_cast<const char*>(b[0]) + pad_.src_offset * es_);
  }

 private:
  PadPlan pad_;
  int64_t numel_ = 0, es_ = 0;
};

class IotaKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    const IotaPlan plan = PlanIota(op);
    const TensorInfo& out = op.out[0];
    numel_ = out.numel;
    size_ = plan.size;
    stride_ = plan.stride;
    DispatchTypeOrComplex(out.dtype, [&](auto t) {
      using T = decltype(t);
      if constexpr (!std::is_same_v<T, Bool8>) fill_ = &Fill<T>;
    });
    if (!fill_) throw UnsupportedError("iota: not defined for i1");
  }
  void Run(void* const* b) override { fill_(b[0], numel_, size_, stride_); }

 private:
  template <typename T>
  static void Fill(void* out, int64_t numel, int64_t size, int64_t stride) {
    T* o = static_cast<T*>(out);
    for (int64_t i = 0; i < numel; ++i) o[i] = T(static_cast<Compute<T>>((i / stride) % size));
  }
  void (*fill_)(void*, int64_t, int64_t, int64_t) = nullptr;
  int64_t numel_ = 0, size_ = 1, stride_ = 1;
};

class ConstantKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    op.Require(op.in.empty() && op.out.size() == 1, "expects no operands and one result");
    bytes_ = Decode<ConstantAttrs>(op).value;
    op.Require(bytes_.size() == op.out[0].bytes(), "value holds " + std::to_string(bytes_.size()) +
                                                       " bytes, the result needs " +
                                                       std::to_string(op.out[0].bytes()));
  }
  void Run(void* const* b) override {
    if (!bytes_.empty()) std::memcpy(b[0], bytes_.data(), bytes_.size());
  }

 private:
  std::vector<uint8_t> bytes_;
};

// dynamic_slice and dynamic_update_slice: start indices are scalars, clamped
// so the window stays inside the operand (StableHLO semantics).
class DynamicSliceKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override { p_ = PlanDynamicSlice(op); }
  void Run(void* const* b) override {
    int64_t offset = 0;
    for (int d = 0; d < p_.rank; ++d) {
      offset += ClampedStart(b[p_.first_index + d], p_.index_dtypes[d], p_.max_start[d]) *
                p_.operand_strides[d];
    }
    const int64_t es = static_cast<int64_t>(p_.copy.elem_size);
    char* out = static_cast<char*>(b[p_.first_index + p_.rank]);
    if (p_.update) {
      if (p_.operand_bytes && out != b[0]) std::memcpy(out, b[0], p_.operand_bytes);
      p_.copy.Run(out + offset * es, static_cast<const char*>(b[1]));
    } else {
      p_.copy.Run(out, static_cast<const char*>(b[0]) + offset * es);
    }
  }

 private:
  DynamicSlicePlan p_;
};

}  // namespace

void RegisterDataMovement(std::vector<KernelDef>& defs) {
  for (const char* kind : {"broadcast_in_dim", "transpose", "slice", "reverse"})
    defs.push_back({kind, kEveryType, &Make<StridedViewKernel>});
  defs.push_back({"reshape", kEveryType, &Make<ByteCopyKernel<PlanReshape>>});
  defs.push_back({"bitcast_convert", kEveryType, &Make<ByteCopyKernel<PlanBitcastConvert>>});
  defs.push_back({"concatenate", kEveryType, &Make<ConcatenateKernel>});
  defs.push_back({"pad", kEveryType, &Make<PadKernel>});
  defs.push_back({"iota", WithComplex(kNumericTypes), &Make<IotaKernel>});
  defs.push_back({"constant", kEveryType, &Make<ConstantKernel>});
  defs.push_back({"dynamic_slice", kEveryType, &Make<DynamicSliceKernel>});
  defs.push_back({"dynamic_update_slice", kEveryType, &Make<DynamicSliceKernel>});
}

}  // namespace brt::cpu
