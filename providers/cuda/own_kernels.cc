// brt's own CUDA kernels behind the kernel interface: each reads its op
// through a plan from ops/ and launches kernels_*.cu. They touch the CUDA
// runtime only through runtime.h, so the host emulation runs them too. Over
// 500 lines: its kernel table is one list, and every kernel class it names is
// here, next to it.
#include <algorithm>
#include <cstring>
#include <iterator>
#include <memory>

#include "kernels.h"
#include "ops/complex_parts.h"
#include "runtime.h"

namespace brt::cuda {
namespace {

class ElementwiseKernel final : public Kernel {
 public:
  explicit ElementwiseKernel(const OpInfo& op) {
    const TensorInfo& out = op.out[0];
    in_dtype_ = op.in.empty() ? out.dtype : op.in[0].dtype;
    out_dtype_ = out.dtype;
    num_inputs_ = static_cast<int>(op.in.size());
    for (const ops::UnaryKind& u : ops::kUnaryKinds)
      if (op.kind == u.kind) p_.kind = Elementwise::kUnary, p_.op = static_cast<int>(u.op);
    for (const ops::BinaryKind& b : ops::kBinaryKinds)
      if (op.kind == b.kind) p_.kind = Elementwise::kBinary, p_.op = static_cast<int>(b.op);
    if (op.kind == "compare") {
      op.RequireOperands(2);
      op.Require(op.in[0].dtype == op.in[1].dtype, "operands have different dtypes");
      op.Require(out.dtype == BRT_DTYPE_I1,
                 std::string("result must be i1, got ") + ops::DTypeName(out.dtype));
      const std::string dir = ops::Decode<ops::CompareAttrs>(op).comparison_direction;
      ops::Cmp cmp = ops::Cmp::kEq;
      op.Require(ops::ParseCmp(dir, &cmp),
                 "comparison_direction '" + dir + "' is not one of EQ NE GE GT LE LT");
      p_.kind = Elementwise::kCompare, p_.op = static_cast<int>(cmp);
    } else if (op.kind == "select") {
      op.RequireOperands(3);
      op.Require(op.in[0].dtype == BRT_DTYPE_I1,
                 std::string("predicate must be i1, got ") + ops::DTypeName(op.in[0].dtype));
      op.Require(op.in[1].dtype == out.dtype && op.in[2].dtype == out.dtype,
                 "on_true/on_false dtypes differ from the result");
      p_.kind = Elementwise::kSelect;
    } else if (op.kind == "clamp") {
      op.RequireOperands(3);
      op.RequireSameDTypes();
      p_.kind = Elementwise::kClamp;
    } else if (op.kind == "convert") {
      op.RequireOperands(1);
      op.Require(op.in[0].dims == out.dims, "operand shape " + ops::FormatDims(op.in[0].dims) +
                                                " differs from result shape " +
                                                ops::FormatDims(out.dims));
      p_.kind = Elementwise::kConvert;
    } else if (p_.kind == Elementwise::kUnary) {
      op.RequireOperands(1);
      op.RequireSameDTypes();
      op.Require(op.in[0].dims == out.dims, "operand shape " + ops::FormatDims(op.in[0].dims) +
                                                " differs from result shape " +
                                                ops::FormatDims(out.dims));
    } else {
      op.RequireOperands(2);
      op.RequireSameDTypes();
    }
    std::vector<std::vector<int64_t>> dims;
    for (const TensorInfo& t : op.in) dims.push_back(t.dims);
    ops::BroadcastPlan plan;
    plan.Build(out.dims, dims, op.kind);
    p_.space = MakeSpace(plan, num_inputs_, out.numel);
  }
  void Run(void* const* b, Queue* q) override {
    Check(LaunchElementwise(p_, in_dtype_, out_dtype_, b, b[num_inputs_], q->stream),
          "elementwise kernel");
  }

 private:
  ElementwiseParams p_;
  int32_t in_dtype_ = 0, out_dtype_ = 0;
  int num_inputs_ = 1;
};

// brt.fused_elementwise without generated code: the program interpreted per
// element in registers (kernels_*.cu).
class FusedKernel final : public Kernel {
 public:
  explicit FusedKernel(const OpInfo& op) {
    auto classify = [](const std::string& name, Elementwise* kind, int* code) {
      for (const ops::UnaryKind& u : ops::kUnaryKinds)
        if (u.on_float && name == u.kind)
          return *kind = Elementwise::kUnary, *code = static_cast<int>(u.op), 1;
      for (const ops::BinaryKind& b : ops::kBinaryKinds)
        if (b.on_float && name == b.kind)
          return *kind = Elementwise::kBinary, *code = static_cast<int>(b.op), 2;
      ops::Cmp cmp = ops::Cmp::kEq;
      if (name.rfind("compare_", 0) == 0 && ops::ParseCmp(name.substr(8), &cmp))
        return *kind = Elementwise::kCompare, *code = static_cast<int>(cmp), 2;
      if (name == "select") return *kind = Elementwise::kSelect, *code = 0, 3;
      if (name == "clamp") return *kind = Elementwise::kClamp, *code = 0, 3;
      return -1;
    };
    const ops::FusedProgram program = ops::PlanFusedElementwise(op, [&](const std::string& name) {
      Elementwise kind;
      int code;
      return classify(name, &kind, &code);
    });
    op.Require(
        program.num_inputs <= kMaxOperands && program.constants.size() <= std::size(p_.constants) &&
            program.instructions.size() <= static_cast<size_t>(kMaxFusedInstructions) &&
            program.num_registers <= kMaxFusedRegisters,
        "the fused program exceeds the CUDA interpreter's limits (" + std::to_string(kMaxOperands) +
            " inputs, " + std::to_string(std::size(p_.constants)) + " constants, " +
            std::to_string(kMaxFusedInstructions) + " instructions)");
    p_.num_inputs = program.num_inputs;
    p_.num_constants = static_cast<int>(program.constants.size());
    p_.num_instructions = static_cast<int>(program.instructions.size());
    for (int k = 0; k < p_.num_inputs; ++k) p_.in_dtypes[k] = op.in[k].dtype;
    for (int c = 0; c < p_.num_constants; ++c) p_.constants[c] = program.constants[c];
    for (int s = 0; s < p_.num_instructions; ++s) {
      const ops::FusedInstruction& in = program.instructions[s];
      Elementwise kind;
      int code = 0;
      classify(in.name, &kind, &code);
      p_.kind[s] = static_cast<signed char>(kind);
      p_.op[s] = static_cast<signed char>(code);
      for (int k = 0; k < 3; ++k) p_.src[s][k] = static_cast<unsigned char>(in.src[k]);
      p_.dst[s] = static_cast<unsigned char>(in.dst);
    }
    std::vector<std::vector<int64_t>> dims;
    for (const TensorInfo& t : op.in) dims.push_back(t.dims);
    ops::BroadcastPlan plan;
    plan.Build(op.out[0].dims, dims, op.kind);
    p_.space = MakeSpace(plan, p_.num_inputs, op.out[0].numel);
    out_dtype_ = op.out[0].dtype;
  }
  void Run(void* const* b, Queue* q) override {
    Check(LaunchFused(p_, out_dtype_, b, b[p_.num_inputs], q->stream), "fused elementwise kernel");
  }

 private:
  FusedParams p_;
  int32_t out_dtype_ = 0;
};

// real, imag and abs of complex numbers, complex of two parts; real and imag
// of real numbers: a copy, and zeros.
class ComplexPartKernel final : public Kernel {
 public:
  explicit ComplexPartKernel(const OpInfo& op) {
    const int32_t dtype = op.in.empty() ? 0 : op.in[0].dtype;
    if (op.kind == "complex") {
      ops::CheckMakeComplex(op);
      part_ = ComplexPart::kMake, complex_dtype_ = op.out[0].dtype;
    } else if (dtype == BRT_DTYPE_C64 || dtype == BRT_DTYPE_C128) {
      ops::CheckComplexToReal(op);
      part_ = op.kind == "real"   ? ComplexPart::kReal
              : op.kind == "imag" ? ComplexPart::kImag
                                  : ComplexPart::kAbs;
      complex_dtype_ = dtype;
    } else {
      ops::CheckRealOfReal(op);
      part_ = op.kind == "imag" ? ComplexPart::kImag : ComplexPart::kReal;
    }
    n_ = op.out[0].numel;
    bytes_ = op.out[0].bytes();
    num_inputs_ = static_cast<int>(op.in.size());
  }
  void Run(void* const* b, Queue* q) override {
    void* out = b[num_inputs_];
    if (complex_dtype_)
      Check(LaunchComplexPart(part_, complex_dtype_, n_, b[0], num_inputs_ > 1 ? b[1] : nullptr,
                              out, q->stream),
            "complex parts");
    else if (part_ == ComplexPart::kImag)
      ZeroAsync(out, bytes_, q->stream);  // +0 in every float format
    else if (bytes_ && out != b[0])
      CopyAsync(out, b[0], bytes_, q->stream);
  }

 private:
  ComplexPart part_ = ComplexPart::kReal;
  int32_t complex_dtype_ = 0;  // 0: a real operand
  int64_t n_ = 0;
  size_t bytes_ = 0;
  int num_inputs_ = 1;
};

// broadcast_in_dim, transpose, slice, reverse: one strided copy.
class StridedViewKernel final : public Kernel {
 public:
  explicit StridedViewKernel(const OpInfo& op) {
    const ops::StridedView v = ops::PlanStridedView(op);
    p_ = MakeCopy(v.copy);
    es_ = v.copy.elem_size;
    offset_ = v.src_offset * static_cast<int64_t>(es_);
  }
  void Run(void* const* b, Queue* q) override {
    Check(LaunchStridedCopy(p_, es_, static_cast<const char*>(b[0]) + offset_, b[1], q->stream),
          "strided copy");
  }

 private:
  CopyParams p_;
  size_t es_ = 4;
  int64_t offset_ = 0;
};

class ConcatenateKernel final : public Kernel {
 public:
  explicit ConcatenateKernel(const OpInfo& op) {
    for (const ops::ConcatPiece& piece : ops::PlanConcatenate(op))
      pieces_.push_back(
          {MakeCopy(piece.copy), piece.dst_offset * static_cast<int64_t>(piece.copy.elem_size)});
    es_ = brt_dtype_size(op.out[0].dtype);
  }
  void Run(void* const* b, Queue* q) override {
    char* out = static_cast<char*>(b[pieces_.size()]);
    for (size_t i = 0; i < pieces_.size(); ++i)
      Check(LaunchStridedCopy(pieces_[i].copy, es_, b[i], out + pieces_[i].dst_offset, q->stream),
            "concatenate");
  }

 private:
  struct Piece {
    CopyParams copy;
    int64_t dst_offset;
  };
  std::vector<Piece> pieces_;
  size_t es_ = 4;
};

class PadKernel final : public Kernel {
 public:
  explicit PadKernel(const OpInfo& op) {
    const ops::PadPlan pad = ops::PlanPad(op);
    p_ = MakeCopy(pad.copy);
    es_ = pad.copy.elem_size;
    src_offset_ = pad.src_offset * static_cast<int64_t>(es_);
    dst_offset_ = pad.dst_offset * static_cast<int64_t>(es_);
    numel_ = op.out[0].numel;
  }
  void Run(void* const* b, Queue* q) override {
    char* out = static_cast<char*>(b[2]);
    Check(LaunchFill(numel_, es_, b[1], out, q->stream), "pad fill");
    Check(LaunchStridedCopy(p_, es_, static_cast<const char*>(b[0]) + src_offset_,
                            out + dst_offset_, q->stream),
          "pad copy");
  }

 private:
  CopyParams p_;
  size_t es_ = 4;
  int64_t src_offset_ = 0, dst_offset_ = 0, numel_ = 0;
};

class IotaKernel final : public Kernel {
 public:
  explicit IotaKernel(const OpInfo& op) : plan_(ops::PlanIota(op)), dtype_(op.out[0].dtype) {
    numel_ = op.out[0].numel;
  }
  void Run(void* const* b, Queue* q) override {
    Check(LaunchIota(numel_, plan_.size, plan_.stride, dtype_, b[0], q->stream), "iota");
  }

 private:
  ops::IotaPlan plan_;
  int32_t dtype_;
  int64_t numel_ = 0;
};

class SortKernel final : public Kernel {
 public:
  explicit SortKernel(const OpInfo& op) {
    const ops::SortPlan plan = ops::PlanSort(op);
    op.Require(op.in.size() <= static_cast<size_t>(kMaxSortOperands),
               "sorts at most " + std::to_string(kMaxSortOperands) + " operands on CUDA, got " +
                   std::to_string(op.in.size()));
    p_.outer = plan.outer, p_.size = plan.size, p_.inner = plan.inner;
    p_.operands = static_cast<int>(op.in.size());
    op.Require(plan.keys.size() <= static_cast<size_t>(kMaxSortOperands),
               "sorts by at most " + std::to_string(kMaxSortOperands) + " keys on CUDA, got " +
                   std::to_string(plan.keys.size()));
    for (const ops::SortKeyOrder& key : plan.keys) {
      const int k = p_.keys++;
      p_.key[k] = key.operand, p_.descending[k] = key.descending;
      p_.total_order[k] = key.total_order, p_.key_dtype[k] = op.in[key.operand].dtype;
    }
    for (int k = 0; k < p_.operands; ++k)
      p_.element_bytes[k] = static_cast<int>(brt_dtype_size(op.in[k].dtype));
  }
  void Run(void* const* b, Queue* q) override {
    SortParams p = p_;
    for (int k = 0; k < p.operands; ++k) p.in[k] = b[k], p.out[k] = b[p.operands + k];
    Check(LaunchSort(p, q->stream), "sort");
  }

 private:
  SortParams p_;
};

class RngBitGeneratorKernel final : public Kernel {
 public:
  explicit RngBitGeneratorKernel(const OpInfo& op) : p_(ops::PlanRngBitGenerator(op)) {}
  void Run(void* const* b, Queue* q) override {
    Check(LaunchRngBitGenerator(p_, static_cast<const uint64_t*>(b[0]), b[2],
                                static_cast<uint64_t*>(b[1]), q->stream),
          "rng_bit_generator");
  }

 private:
  ops::RngBitGeneratorPlan p_;
};

// dynamic_slice / dynamic_update_slice: the start indices stay on the device;
// the copy kernel reads and clamps them.
class DynamicSliceKernel final : public Kernel {
 public:
  explicit DynamicSliceKernel(const OpInfo& op) : plan_(ops::PlanDynamicSlice(op)) {
    p_ = MakeCopy(plan_.copy);
    p_.num_starts = plan_.rank;
    p_.starts_offset_dst = plan_.update;
    for (int d = 0; d < plan_.rank; ++d) {
      p_.start_dtypes[d] = plan_.index_dtypes[d];
      p_.start_max[d] = plan_.max_start[d];
      p_.start_strides[d] = plan_.operand_strides[d];
    }
  }
  void Run(void* const* b, Queue* q) override {
    CopyParams p = p_;  // the start pointers differ per request
    for (int d = 0; d < plan_.rank; ++d) p.starts[d] = b[plan_.first_index + d];
    void* out = b[plan_.first_index + plan_.rank];
    if (plan_.update) {
      if (plan_.operand_bytes && out != b[0]) CopyAsync(out, b[0], plan_.operand_bytes, q->stream);
      Check(LaunchStridedCopy(p, plan_.copy.elem_size, b[1], out, q->stream),
            "dynamic_update_slice");
    } else {
      Check(LaunchStridedCopy(p, plan_.copy.elem_size, b[0], out, q->stream), "dynamic_slice");
    }
  }

 private:
  ops::DynamicSlicePlan plan_;
  CopyParams p_;
};

class GatherKernel final : public Kernel {
 public:
  explicit GatherKernel(const OpInfo& op)
      : p_(MakeIndexing(ops::PlanGather(op))), es_(brt_dtype_size(op.out[0].dtype)) {}
  void Run(void* const* b, Queue* q) override {
    Check(LaunchGather(p_, es_, b[0], b[1], b[2], q->stream), "gather");
  }

 private:
  IndexingParams p_;
  size_t es_;
};

// A context's scratch for a kernel's 1- and 16-byte atomic updates (LaunchScatter).
template <typename K>
class WithAtomicScratch final : public Runnable {
 public:
  explicit WithAtomicScratch(const K& k) : k_(k), scratch_(k.scratch_bytes_) {}
  void Run(void* const* b, Queue* q) override { k_.Launch(b, q, scratch_.get()); }

 private:
  const K& k_;
  DeviceBuffer scratch_;
};

class ScatterKernel final : public Kernel {
 public:
  explicit ScatterKernel(const OpInfo& op) {
    const ops::ScatterPlan plan = ops::PlanScatter(op);
    p_ = MakeIndexing(plan);
    replace_ = plan.replace;
    reducer_ = plan.reducer;
    operand_bytes_ = plan.operand_bytes;
    dtype_ = op.out[0].dtype;
    // A replace needs scratch only for c128 stores (their locks).
    scratch_bytes_ = replace_ && dtype_ != BRT_DTYPE_C128 ? 0 : AtomicScratchBytes(dtype_);
  }
  Runnable* NewInstance() const override {
    return scratch_bytes_ ? new WithAtomicScratch<ScatterKernel>(*this) : nullptr;
  }
  void Run(void* const* b, Queue* q) override { Launch(b, q, nullptr); }

 private:
  friend class WithAtomicScratch<ScatterKernel>;
  void Launch(void* const* b, Queue* q, void* scratch) const {
    if (operand_bytes_ && b[3] != b[0]) CopyAsync(b[3], b[0], operand_bytes_, q->stream);
    Check(LaunchScatter(p_, dtype_, replace_, reducer_, b[1], b[2], b[3], operand_bytes_, scratch,
                        q->stream),
          "scatter");
  }
  IndexingParams p_;
  bool replace_ = true;
  ops::Reducer reducer_ = ops::Reducer::kAdd;
  size_t operand_bytes_ = 0, scratch_bytes_ = 0;
  int32_t dtype_ = 0;
};

// reduce: long reductions are split across blocks, their partials kept in
// per-context scratch.
class ReduceKernel final : public Kernel {
 public:
  explicit ReduceKernel(const OpInfo& op)
      : p_(MakeReduce(ops::PlanReduce(op))), dtype_(op.out[0].dtype) {
    scratch_bytes_ = ReduceScratchBytes(p_, dtype_);
  }
  Runnable* NewInstance() const override { return scratch_bytes_ ? new Instance(*this) : nullptr; }
  void Run(void* const* b, Queue* q) override { Launch(b, q, nullptr); }

 private:
  class Instance final : public Runnable {
   public:
    explicit Instance(const ReduceKernel& k) : k_(k), partials_(k.scratch_bytes_) {}
    void Run(void* const* b, Queue* q) override { k_.Launch(b, q, partials_.get()); }

   private:
    const ReduceKernel& k_;
    DeviceBuffer partials_;
  };
  void Launch(void* const* b, Queue* q, void* partials) const {
    Check(LaunchReduce(p_, dtype_, b[0], b[1], b[2], partials, q->stream), "reduce");
  }
  ReduceParams p_;
  int32_t dtype_;
  size_t scratch_bytes_ = 0;
};

class ReduceWindowKernel final : public Kernel {
 public:
  explicit ReduceWindowKernel(const OpInfo& op)
      : p_(MakeReduceWindow(ops::PlanReduceWindow(op))), dtype_(op.out[0].dtype) {}
  void Run(void* const* b, Queue* q) override {
    Check(LaunchReduceWindow(p_, dtype_, b[0], b[1], b[2], q->stream), "reduce_window");
  }

 private:
  ReduceWindowParams p_;
  int32_t dtype_;
};

class SelectAndScatterKernel final : public Kernel {
 public:
  explicit SelectAndScatterKernel(const OpInfo& op)
      : p_(MakeSelectAndScatter(ops::PlanSelectAndScatter(op))),
        dtype_(op.out[0].dtype),
        scratch_bytes_(AtomicScratchBytes(dtype_)) {}
  Runnable* NewInstance() const override {
    return scratch_bytes_ ? new WithAtomicScratch<SelectAndScatterKernel>(*this) : nullptr;
  }
  void Run(void* const* b, Queue* q) override { Launch(b, q, nullptr); }

 private:
  friend class WithAtomicScratch<SelectAndScatterKernel>;
  void Launch(void* const* b, Queue* q, void* scratch) const {
    Check(LaunchSelectAndScatter(p_, dtype_, b[0], b[1], b[2], b[3], scratch, q->stream),
          "select_and_scatter");
  }
  SelectAndScatterParams p_;
  int32_t dtype_;
  size_t scratch_bytes_ = 0;
};

class SoftmaxKernel final : public Kernel {
 public:
  explicit SoftmaxKernel(const OpInfo& op) : p_(ops::PlanSoftmax(op)), dtype_(op.out[0].dtype) {}
  void Run(void* const* b, Queue* q) override {
    Check(LaunchSoftmax(p_, dtype_, b[0], b[1], q->stream), "softmax");
  }

 private:
  ops::SoftmaxPlan p_;
  int32_t dtype_;
};

class LayerNormKernel final : public Kernel {
 public:
  explicit LayerNormKernel(const OpInfo& op)
      : p_(ops::PlanLayerNorm(op)), dtype_(op.out[0].dtype) {}
  void Run(void* const* b, Queue* q) override {
    Check(LaunchLayerNorm(p_, dtype_, b[0], static_cast<const float*>(b[1]),
                          static_cast<const float*>(b[2]), b[3], q->stream),
          "layer_norm");
  }

 private:
  ops::LayerNormPlan p_;
  int32_t dtype_;
};

// dot_general / brt.matmul for layouts and dtypes cuBLASLt does not take.
class DotKernel final : public Kernel {
 public:
  explicit DotKernel(const OpInfo& op) {
    const ops::DotDims d = ops::PlanDot(op);
    const ops::Epilogue e = ops::PlanEpilogue(op, d);
    const TensorInfo &l = op.in[0], &r = op.in[1];
    const std::vector<int64_t> ls = l.Strides(), rs = r.Strides();
    op.Require(op.out[0].rank() <= kMaxRank && static_cast<int>(d.lc.size()) <= kMaxRank,
               "rank above 16");
    auto add_out = [&](int64_t size, int64_t lstride, int64_t rstride) {
      p_.out_dims[p_.out_rank] = size;
      p_.lhs_out_strides[p_.out_rank] = lstride;
      p_.rhs_out_strides[p_.out_rank++] = rstride;
    };
    for (size_t i = 0; i < d.lb.size(); ++i) add_out(l.dims[d.lb[i]], ls[d.lb[i]], rs[d.rb[i]]);
    for (int64_t f : d.lf) add_out(l.dims[f], ls[f], 0);
    for (int64_t f : d.rf) add_out(r.dims[f], 0, rs[f]);
    for (size_t i = 0; i < d.lc.size(); ++i) {
      p_.k_dims[p_.k_rank] = l.dims[d.lc[i]];
      p_.lhs_k_strides[p_.k_rank] = ls[d.lc[i]];
      p_.rhs_k_strides[p_.k_rank++] = rs[d.rc[i]];
    }
    p_.out_n = op.out[0].numel;
    p_.n_free = std::max<int64_t>(d.N, 1);
    p_.bias = e.bias;
    p_.activation = e.activation;
    result_ = e.result;
    dtype_ = op.out[0].dtype;
  }
  void Run(void* const* b, Queue* q) override {
    Check(LaunchDot(p_, dtype_, b[0], b[1], p_.bias ? b[2] : nullptr, b[result_], q->stream),
          "dot kernel");
  }

 private:
  DotParams p_;
  int result_ = 2;
  int32_t dtype_ = 0;
};

// brt.copy (host<->device or device<->device), reshape: a byte copy in stream order.
// reshape, brt.copy and bitcast_convert: the bytes as they are, planned by kPlan.
template <size_t (*kPlan)(const OpInfo&)>
class CopyKernel final : public Kernel {
 public:
  explicit CopyKernel(const OpInfo& op) : bytes_(kPlan(op)) {}
  void Run(void* const* b, Queue* q) override {
    if (bytes_ && b[0] != b[1]) CopyAsync(b[1], b[0], bytes_, q->stream);
  }

 private:
  size_t bytes_;
};

// constant: the bytes go to the device once, at prepare.
class ConstantKernel final : public Kernel {
 public:
  explicit ConstantKernel(const OpInfo& op) {
    const std::vector<uint8_t> value = ops::Decode<ops::ConstantAttrs>(op).value;
    bytes_ = op.out[0].bytes();
    op.Require(value.size() == bytes_, "value holds " + std::to_string(value.size()) +
                                           " bytes, the result needs " + std::to_string(bytes_));
    data_ = std::make_unique<DeviceBuffer>(bytes_);
    UploadSync(data_->get(), value.data(), bytes_);
  }
  void Run(void* const* b, Queue* q) override {
    if (bytes_) CopyAsync(b[0], data_->get(), bytes_, q->stream);
  }

 private:
  std::unique_ptr<DeviceBuffer> data_;
  size_t bytes_ = 0;
};

void ReleaseKernel(void* state) { delete static_cast<Runnable*>(state); }

int32_t CreateInstance(void* state, void** instance, BrtErrorBuffer* e) {
  return Guard(
      e, [&] { *instance = static_cast<Kernel*>(static_cast<Runnable*>(state))->NewInstance(); });
}

void ReleaseInstance(void* instance) { delete static_cast<Runnable*>(instance); }

int32_t RunKernel(void* runnable, void* const* buffers, void* queue, BrtErrorBuffer* e) {
  if (!queue) return Report(e, BRT_ERROR_INVALID_ARGUMENT, "CUDA kernels need a queue");
  return Guard(e, [&] {
    auto* q = static_cast<Queue*>(queue);
    UseDevice(q->device);
    static_cast<Runnable*>(runnable)->Run(buffers, q);
  });
}

}  // namespace

Kernel* MakeOwnDot(const OpInfo& op) { return new DotKernel(op); }

ops::KernelEntryPoints EntryPoints(PrepareFn prepare) {
  return {prepare, ReleaseKernel, CreateInstance, ReleaseInstance, RunKernel};
}

std::vector<TableRow> KernelRows(MakeFn matmul, MakeFn convolution, MakeFn fft) {
  std::vector<TableRow> t;
  // Before the elementwise rows: abs of a complex operand has a real result,
  // so its row is keyed by the operand.
  const std::vector<int32_t> complex_types = {BRT_DTYPE_C64, BRT_DTYPE_C128};
  for (const char* kind : {"real", "imag", "abs"})
    t.push_back({kind, complex_types, &Make<ComplexPartKernel>, true});
  t.push_back({"complex", complex_types, &Make<ComplexPartKernel>});
  for (const char* kind : {"real", "imag"})
    t.push_back({kind, kFloats, &Make<ComplexPartKernel>, true});
  for (const ops::UnaryKind& u : ops::kUnaryKinds)
    t.push_back({u.kind, ops::ElementwiseDTypesWithComplex(u.domain), &Make<ElementwiseKernel>});
  for (const ops::BinaryKind& b : ops::kBinaryKinds)
    t.push_back({b.kind, ops::ElementwiseDTypesWithComplex(b.domain), &Make<ElementwiseKernel>});
  t.push_back({"compare", kEveryType, &Make<ElementwiseKernel>, true});
  t.push_back({"select", kEveryType, &Make<ElementwiseKernel>});
  t.push_back({"clamp", kNumeric, &Make<ElementwiseKernel>});
  t.push_back({"convert", kEveryType, &Make<ElementwiseKernel>});
  t.push_back({"brt.fused_elementwise", kHalfAndSingle, &Make<FusedKernel>, false, true, true});
  for (const char* kind : {"broadcast_in_dim", "transpose", "slice", "reverse"})
    t.push_back({kind, kEveryType, &Make<StridedViewKernel>});
  t.push_back({"concatenate", kEveryType, &Make<ConcatenateKernel>});
  t.push_back({"pad", kEveryType, &Make<PadKernel>});
  t.push_back({"iota", kNumeric, &Make<IotaKernel>});
  t.push_back({"sort", kEveryType, &Make<SortKernel>});
  t.push_back({"rng_bit_generator", {BRT_DTYPE_U64}, &Make<RngBitGeneratorKernel>});
  t.push_back({"dynamic_slice", kEveryType, &Make<DynamicSliceKernel>});
  t.push_back({"dynamic_update_slice", kEveryType, &Make<DynamicSliceKernel>});
  t.push_back({"gather", kEveryType, &Make<GatherKernel>});
  t.push_back({"scatter", kEveryType, &Make<ScatterKernel>});
  t.push_back({"reduce", kEveryType, &Make<ReduceKernel>, false, true, true});
  t.push_back({"reduce_window", kEveryType, &Make<ReduceWindowKernel>});
  t.push_back({"select_and_scatter", kNumeric, &Make<SelectAndScatterKernel>});
  std::vector<int32_t> dot_types = kNumeric;
  dot_types.insert(dot_types.end(), complex_types.begin(), complex_types.end());
  t.push_back({"dot_general", dot_types, matmul});
  t.push_back({"brt.matmul", dot_types, matmul});
  t.push_back({"convolution", kHalfAndSingle, convolution});
  t.push_back({"brt.conv", kHalfAndSingle, convolution});
  // Keyed by the operand: RFFT's operand is real, IRFFT's result.
  t.push_back({"fft", {BRT_DTYPE_F32, BRT_DTYPE_F64, BRT_DTYPE_C64, BRT_DTYPE_C128}, fft, true});
  t.push_back({"brt.softmax", kFloats, &Make<SoftmaxKernel>});
  t.push_back({"brt.layer_norm", kFloats, &Make<LayerNormKernel>});
  // From pageable host memory a copy is not recordable into a graph.
  t.push_back({"brt.copy", kEveryType, &Make<CopyKernel<ops::PlanReshape>>, false, false});
  t.push_back({"reshape", kEveryType, &Make<CopyKernel<ops::PlanReshape>>});
  t.push_back({"bitcast_convert", kEveryType, &Make<CopyKernel<ops::PlanBitcastConvert>>});
  t.push_back({"constant", kEveryType, &Make<ConstantKernel>});
  return t;
}

}  // namespace brt::cuda
