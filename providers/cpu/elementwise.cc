// Elementwise kernels: unary, binary (numpy broadcasting), compare, select,
// clamp, convert and brt.fused_elementwise. Integer arithmetic wraps and
// never divides by zero (StableHLO leaves those cases implementation-defined;
// the choices follow XLA). Over 500 lines: the dtype dispatch of every
// elementwise form is one X-macro expansion of brt/ops.def, kept in one file.
#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include <oneapi/tbb/info.h>

#include "fused_blocks.h"
#include "kernel.h"
#include "ops/op_plans.h"
#include "ops/scalar_ops.h"
#include "parallel.h"

namespace brt::cpu {
namespace {

// An f32 op runs on the fused interpreter's loop for it (fused_blocks.h: the
// build for this CPU's ISA), so that it vectorizes as a fused op does and
// computes the same values; nullptr for other dtypes and ops.
BlockFn F32Block(const OpInfo& op, int arity) {
  if (op.out[0].dtype != BRT_DTYPE_F32) return nullptr;
  const FusedOpEntry* e = FusedBlocks().find(op.kind);
  return e && e->arity == arity ? e->fn : nullptr;
}

// --- unary ------------------------------------------------------------------

using UnaryFn = void (*)(const void* in, void* out, int64_t n);

template <Unary OP, typename T>
void UnaryLoop(const void* in, void* out, int64_t n) {
  const T* a = static_cast<const T*>(in);
  T* o = static_cast<T*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = T(CpuUnary<OP, Compute<T>>(Compute<T>(a[i])));
}

template <Unary OP>
UnaryFn PickUnary(int32_t dtype) {
  UnaryFn fn = nullptr;
  DispatchTypeOrComplex(dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (UnarySupports<OP, Compute<T>>()) fn = &UnaryLoop<OP, T>;
  });
  return fn;
}

struct UnaryEntry {
  const char* kind;
  Unary op;
  UnaryFn (*pick)(int32_t);
};
const UnaryEntry kUnaryOps[] = {
#define BRT_UNARY(e, kind, ...) {kind, Unary::e, &PickUnary<Unary::e>},
#include "brt/ops.def"
};

const UnaryEntry* FindUnary(const std::string& kind) {
  for (const auto& e : kUnaryOps)
    if (kind == e.kind) return &e;
  return nullptr;
}

class UnaryKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    op.RequireOperands(1);
    op.RequireSameDTypes();
    op.RequireShapeOfResult(0);
    fn_ = FindUnary(op.kind)->pick(op.out[0].dtype);
    if (!fn_) throw UnsupportedError(op.kind + ": not defined for " + DTypeName(op.out[0].dtype));
    n_ = op.out[0].numel;
    block_ = F32Block(op, 1);
    dnnl_ = MakeDnnlElementwise(op);
  }
  std::unique_ptr<Runnable> CreateInstance() const override {
    return dnnl_ ? dnnl_->CreateInstance() : nullptr;
  }
  void Run(void* const* b) override {
    if (block_) {
      const float* in = static_cast<const float*>(b[0]);
      return block_(static_cast<float*>(b[1]), in, in, in, n_);
    }
    fn_(b[0], b[1], n_);
  }

 private:
  UnaryFn fn_ = nullptr;
  BlockFn block_ = nullptr;  // f32: the fused interpreter's loop for this op
  int64_t n_ = 0;
  std::unique_ptr<CpuKernel> dnnl_;  // large f32 tensors: oneDNN runs through its instances
};

// --- binary -----------------------------------------------------------------

using BinaryRowFn = void (*)(const void* a, int64_t sa, const void* b, int64_t sb, void* out,
                             int64_t n);

template <Binary OP, typename T>
void BinaryRow(const void* av, int64_t sa, const void* bv, int64_t sb, void* ov, int64_t n) {
  using C = Compute<T>;
  const T* a = static_cast<const T*>(av);
  const T* b = static_cast<const T*>(bv);
  T* o = static_cast<T*>(ov);
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i) o[i] = T(ApplyBinary<OP, C>(C(a[i]), C(b[i])));
  } else if (sa == 1 && sb == 0) {
    const C y = C(b[0]);
    for (int64_t i = 0; i < n; ++i) o[i] = T(ApplyBinary<OP, C>(C(a[i]), y));
  } else if (sa == 0 && sb == 1) {
    const C x = C(a[0]);
    for (int64_t i = 0; i < n; ++i) o[i] = T(ApplyBinary<OP, C>(x, C(b[i])));
  } else {
    for (int64_t i = 0; i < n; ++i) o[i] = T(ApplyBinary<OP, C>(C(a[i * sa]), C(b[i * sb])));
  }
}

template <Binary OP>
BinaryRowFn PickBinary(int32_t dtype) {
  BinaryRowFn fn = nullptr;
  DispatchTypeOrComplex(dtype, [&](auto t) {
    using T = decltype(t);
    if constexpr (BinarySupports<OP, Compute<T>>()) fn = &BinaryRow<OP, T>;
  });
  return fn;
}

struct BinaryEntry {
  const char* kind;
  Binary op;
  BinaryRowFn (*pick)(int32_t);
};
const BinaryEntry kBinaryOps[] = {
#define BRT_BINARY(e, kind, ...) {kind, Binary::e, &PickBinary<Binary::e>},
#include "brt/ops.def"
};

const BinaryEntry* FindBinary(const std::string& kind) {
  for (const auto& e : kBinaryOps)
    if (kind == e.kind) return &e;
  return nullptr;
}

class BinaryKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    op.RequireOperands(2);
    op.RequireSameDTypes();
    fn_ = FindBinary(op.kind)->pick(op.out[0].dtype);
    if (!fn_) throw UnsupportedError(op.kind + ": not defined for " + DTypeName(op.out[0].dtype));
    plan_.Build(op.out[0].dims, {op.in[0].dims, op.in[1].dims}, op.kind);
    es_ = static_cast<int64_t>(brt_dtype_size(op.out[0].dtype));
    sa_ = plan_.inner_stride(0), sb_ = plan_.inner_stride(1);
    if (sa_ == 1 && sb_ == 1) block_ = F32Block(op, 2);
    dnnl_ = MakeDnnlElementwise(op);
  }
  // oneDNN's binary primitive may write its result over its first source
  // only; a result written over the second operand (the memory planner's
  // in-place choice) runs brt's loop, which reads each element first.
  std::unique_ptr<Runnable> CreateInstance() const override {
    return DnnlUnless(*this, dnnl_, [](void* const* b) { return b[2] == b[1]; });
  }
  void Run(void* const* b) override {
    const char* x = static_cast<const char*>(b[0]);
    const char* y = static_cast<const char*>(b[1]);
    char* out = static_cast<char*>(b[2]);
    if (block_) {
      return plan_.ForEachRow([&](const int64_t* off, int64_t o, int64_t n) {
        block_(reinterpret_cast<float*>(out) + o, reinterpret_cast<const float*>(x) + off[0],
               reinterpret_cast<const float*>(y) + off[1], nullptr, n);
      });
    }
    plan_.ForEachRow([&](const int64_t* off, int64_t o, int64_t n) {
      fn_(x + off[0] * es_, sa_, y + off[1] * es_, sb_, out + o * es_, n);
    });
  }

 private:
  BinaryRowFn fn_ = nullptr;
  BlockFn block_ = nullptr;  // f32 rows contiguous in both operands: the fused loop
  BroadcastPlan plan_;
  // Kept here, not read from the plan's heap arrays: small ops are bound by
  // cache misses, so Run() touches only this object when there is one row.
  int64_t es_ = 0, sa_ = 0, sb_ = 0;
  std::unique_ptr<CpuKernel> dnnl_;  // large f32 tensors: oneDNN runs through its instances
};

// --- compare ------------------------------------------------------------------

using CmpRowFn = void (*)(Cmp, const void*, int64_t, const void*, int64_t, uint8_t*, int64_t);

template <typename T>
void CmpRow(Cmp c, const void* av, int64_t sa, const void* bv, int64_t sb, uint8_t* o, int64_t n) {
  using C = Compute<T>;
  const T* a = static_cast<const T*>(av);
  const T* b = static_cast<const T*>(bv);
  for (int64_t i = 0; i < n; ++i) o[i] = ApplyCmp<C>(c, C(a[i * sa]), C(b[i * sb]));
}

class CompareKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    op.RequireOperands(2);
    op.Require(op.in[0].dtype == op.in[1].dtype, "operands have different dtypes");
    op.Require(op.out[0].dtype == BRT_DTYPE_I1,
               std::string("result must be i1, got ") + DTypeName(op.out[0].dtype));
    const std::string dir = Decode<CompareAttrs>(op).comparison_direction;
    op.Require(ParseCmp(dir, &cmp_),
               "comparison_direction '" + dir + "' is not one of EQ NE GE GT LE LT");
    DispatchTypeOrComplex(op.in[0].dtype, [&](auto t) { fn_ = &CmpRow<decltype(t)>; });
    plan_.Build(op.out[0].dims, {op.in[0].dims, op.in[1].dims}, op.kind);
    es_ = static_cast<int64_t>(brt_dtype_size(op.in[0].dtype));
  }
  void Run(void* const* b) override {
    const char* x = static_cast<const char*>(b[0]);
    const char* y = static_cast<const char*>(b[1]);
    uint8_t* out = static_cast<uint8_t*>(b[2]);
    const int64_t sa = plan_.inner_stride(0), sb = plan_.inner_stride(1);
    plan_.ForEachRow([&](const int64_t* off, int64_t o, int64_t n) {
      fn_(cmp_, x + off[0] * es_, sa, y + off[1] * es_, sb, out + o, n);
    });
  }

 private:
  Cmp cmp_ = Cmp::kEq;
  CmpRowFn fn_ = nullptr;
  BroadcastPlan plan_;
  int64_t es_ = 0;
};

// --- select / clamp -------------------------------------------------------------

using TernaryRowFn = void (*)(const void*, int64_t, const void*, int64_t, const void*, int64_t,
                              void*, int64_t);

template <typename T>
void SelectRow(const void* pv, int64_t sp, const void* av, int64_t sa, const void* bv, int64_t sb,
               void* ov, int64_t n) {
  const uint8_t* p = static_cast<const uint8_t*>(pv);
  const T* a = static_cast<const T*>(av);
  const T* b = static_cast<const T*>(bv);
  T* o = static_cast<T*>(ov);
  for (int64_t i = 0; i < n; ++i) o[i] = p[i * sp] ? a[i * sa] : b[i * sb];
}

template <typename T>
void ClampRow(const void* lv, int64_t sl, const void* xv, int64_t sx, const void* hv, int64_t sh,
              void* ov, int64_t n) {
  using C = Compute<T>;
  const T* lo = static_cast<const T*>(lv);
  const T* x = static_cast<const T*>(xv);
  const T* hi = static_cast<const T*>(hv);
  T* o = static_cast<T*>(ov);
  for (int64_t i = 0; i < n; ++i) {
    C v = ApplyBinary<Binary::kMax, C>(C(x[i * sx]), C(lo[i * sl]));
    o[i] = T(ApplyBinary<Binary::kMin, C>(v, C(hi[i * sh])));
  }
}

class TernaryKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    op.RequireOperands(3);
    const int32_t t = op.out[0].dtype;
    if (op.kind == "select") {
      op.Require(op.in[0].dtype == BRT_DTYPE_I1,
                 std::string("predicate must be i1, got ") + DTypeName(op.in[0].dtype));
      op.Require(op.in[1].dtype == t && op.in[2].dtype == t,
                 "on_true/on_false dtypes differ from the result");
      DispatchTypeOrComplex(t, [&](auto v) { fn_ = &SelectRow<decltype(v)>; });
      es_[0] = 1;
    } else {
      op.RequireSameDTypes();
      DispatchTypeOrComplex(t, [&](auto v) {
        using T = decltype(v);
        if constexpr (!std::is_same_v<T, Bool8>) fn_ = &ClampRow<T>;
      });
      if (!fn_) throw UnsupportedError("clamp: not defined for i1");
      es_[0] = static_cast<int64_t>(brt_dtype_size(t));
    }
    es_[1] = es_[2] = es_[3] = static_cast<int64_t>(brt_dtype_size(t));
    plan_.Build(op.out[0].dims, {op.in[0].dims, op.in[1].dims, op.in[2].dims}, op.kind);
  }
  void Run(void* const* b) override {
    const char* p0 = static_cast<const char*>(b[0]);
    const char* p1 = static_cast<const char*>(b[1]);
    const char* p2 = static_cast<const char*>(b[2]);
    char* out = static_cast<char*>(b[3]);
    const int64_t s0 = plan_.inner_stride(0), s1 = plan_.inner_stride(1),
                  s2 = plan_.inner_stride(2);
    plan_.ForEachRow([&](const int64_t* off, int64_t o, int64_t n) {
      fn_(p0 + off[0] * es_[0], s0, p1 + off[1] * es_[1], s1, p2 + off[2] * es_[2], s2,
          out + o * es_[3], n);
    });
  }

 private:
  TernaryRowFn fn_ = nullptr;
  BroadcastPlan plan_;
  int64_t es_[4] = {};
};

// --- convert ----------------------------------------------------------------------

template <typename To, typename From>
inline To ConvertValue(From x) {
  return To(ConvertScalar<Compute<To>>(Compute<From>(x)));
}

using ConvertFn = void (*)(const void*, void*, int64_t);

template <typename From, typename To>
void ConvertLoop(const void* in, void* out, int64_t n) {
  const From* a = static_cast<const From*>(in);
  To* o = static_cast<To*>(out);
  for (int64_t i = 0; i < n; ++i) o[i] = ConvertValue<To, From>(a[i]);
}

class ConvertKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    op.RequireOperands(1);
    op.RequireShapeOfResult(0);
    DispatchTypeOrComplex(op.in[0].dtype, [&](auto f) {
      DispatchTypeOrComplex(op.out[0].dtype,
                            [&](auto t) { fn_ = &ConvertLoop<decltype(f), decltype(t)>; });
    });
    n_ = op.out[0].numel;
  }
  void Run(void* const* b) override { fn_(b[0], b[1], n_); }

 private:
  ConvertFn fn_ = nullptr;
  int64_t n_ = 0;
};

// --- brt.fused_elementwise ------------------------------------------------------------
// attrs: ops = "multiply,add,tanh" (one op per instruction), program = three
// register indices per instruction (-1 where unused), constants = scalar
// values. Registers: operands, then constants, then one per instruction;
// the last instruction is the result. Computed in f32, block by block.

constexpr int64_t kBlock = 256;

class FusedElementwiseKernel;

// Above this much work (elements x instructions) a fused op is split over
// the Session's threads (parallel.h); below, a fork costs more than it saves.
constexpr int64_t kParallelWork = int64_t{1} << 18;

class FusedInstance final : public Runnable {
 public:
  explicit FusedInstance(const FusedElementwiseKernel& k);
  void Run(void* const* b) override;

 private:
  // One part's register blocks.
  struct Scratch {
    std::vector<float> regs;        // num_registers x kBlock
    std::vector<const float*> src;  // where each register's block is read from
  };
  // Rows [row_begin, row_end), and of each row the elements [begin, end).
  void RunPart(Scratch& s, void* const* b, int64_t row_begin, int64_t row_end, int64_t begin,
               int64_t end) const;
  const FusedElementwiseKernel& k_;
  std::vector<Scratch> scratch_;  // per part
};

class FusedElementwiseKernel final : public CpuKernel {
 public:
  void Prepare(const OpInfo& op) override {
    const FusedBlockSet& blocks = FusedBlocks();
    const FusedProgram program = PlanFusedElementwise(op, [&](const std::string& name) {
      const FusedOpEntry* e = blocks.find(name);
      return e ? e->arity : -1;
    });
    num_inputs_ = program.num_inputs;
    std::vector<std::vector<int64_t>> dims;
    for (const auto& t : op.in) {
      loads_.push_back(blocks.load(t.dtype));
      in_es_.push_back(static_cast<int64_t>(brt_dtype_size(t.dtype)));
      in_f32_.push_back(t.dtype == BRT_DTYPE_F32);
      in_in_place_.push_back(t.dtype == BRT_DTYPE_F32 && t.numel == op.out[0].numel);
      dims.push_back(t.dims);
    }
    store_ = blocks.store(op.out[0].dtype);
    out_f32_ = op.out[0].dtype == BRT_DTYPE_F32;
    out_es_ = static_cast<int64_t>(brt_dtype_size(op.out[0].dtype));
    plan_.Build(op.out[0].dims, dims, op.kind);

    constants_ = program.constants;
    for (const FusedInstruction& f : program.instructions)
      instrs_.push_back({blocks.find(f.name)->fn, {f.src[0], f.src[1], f.src[2]}, f.dst});
    num_registers_ = program.num_registers;
  }

  std::unique_ptr<Runnable> CreateInstance() const override {
    return std::make_unique<FusedInstance>(*this);
  }
  void Run(void* const*) override {}  // runs through its per-request instance

 private:
  friend class FusedInstance;
  struct Instr {
    BlockFn fn;
    int src[3];
    int dst;
  };
  int num_inputs_ = 0;
  int num_registers_ = 0;
  std::vector<LoadFn> loads_;
  std::vector<int64_t> in_es_;
  std::vector<bool> in_f32_;
  std::vector<bool> in_in_place_;  // f32 and of the result's shape: read where it lies
  StoreFn store_ = nullptr;
  bool out_f32_ = false;
  int64_t out_es_ = 0;
  std::vector<float> constants_;
  std::vector<Instr> instrs_;
  BroadcastPlan plan_;
};

// Two parts per CPU: where a thread is taken off its CPU mid-part, another
// waits for that part alone, which is short.
FusedInstance::FusedInstance(const FusedElementwiseKernel& k)
    : k_(k), scratch_(2 * std::max(1, oneapi::tbb::info::default_concurrency())) {
  for (Scratch& s : scratch_) {
    s.regs.resize(static_cast<size_t>(k.num_registers_) * kBlock);
    s.src.resize(k.num_registers_);
    for (int r = 0; r < k.num_registers_; ++r) s.src[r] = s.regs.data() + r * kBlock;
    for (size_t c = 0; c < k.constants_.size(); ++c)
      std::fill_n(s.regs.data() + (k.num_inputs_ + c) * kBlock, kBlock, k.constants_[c]);
  }
}

void FusedInstance::Run(void* const* b) {
  const int64_t rows = k_.plan_.rows(), inner = k_.plan_.inner();
  const int64_t work = rows * inner * static_cast<int64_t>(k_.instrs_.size());
  if (work < kParallelWork || MaxThreads() == 1) return RunPart(scratch_[0], b, 0, rows, 0, inner);
  // One row: its blocks are split; else the rows.
  const int64_t blocks = (inner + kBlock - 1) / kBlock;
  const int64_t n =
      std::min<int64_t>(static_cast<int64_t>(scratch_.size()), rows == 1 ? blocks : rows);
  ParallelParts(n, [&](int64_t t) {
    if (rows == 1) {
      const int64_t first = blocks * t / n, last = blocks * (t + 1) / n;
      RunPart(scratch_[t], b, 0, 1, first * kBlock, std::min(inner, last * kBlock));
    } else {
      RunPart(scratch_[t], b, rows * t / n, rows * (t + 1) / n, 0, inner);
    }
  });
}

void FusedInstance::RunPart(Scratch& s, void* const* b, int64_t row_begin, int64_t row_end,
                            int64_t begin, int64_t end) const {
  float* regs = s.regs.data();
  char* out = static_cast<char*>(b[k_.num_inputs_]);
  const int num_inputs = k_.num_inputs_;
  const float** src = s.src.data();
  int64_t strides[kMaxRank];
  for (int i = 0; i < num_inputs; ++i) strides[i] = k_.plan_.inner_stride(i);
  const auto& last = k_.instrs_.back();
  // Runs the program over len elements whose operands src[] points at; an
  // f32 result is written where it goes instead of through a block.
  auto compute = [&](int64_t len, char* dst) {
    for (const auto& in : k_.instrs_) {
      if (&in == &last) break;
      in.fn(regs + in.dst * kBlock, src[in.src[0]], src[in.src[1]], src[in.src[2]], len);
    }
    float* result = k_.out_f32_ ? reinterpret_cast<float*>(dst) : regs + last.dst * kBlock;
    last.fn(result, src[last.src[0]], src[last.src[1]], src[last.src[2]], len);
    if (!k_.out_f32_) k_.store_(result, dst, len);
  };
  auto operand = [&](int i, int64_t element) {
    return static_cast<const char*>(b[i]) + element * k_.in_es_[i];
  };

  const int64_t inner = k_.plan_.inner();
  if (k_.plan_.rows() == 1 || inner > kBlock / 2) {
    // Long rows: block by block along each row; a contiguous f32 operand is
    // read where it lies.
    k_.plan_.ForEachRowIn(row_begin, row_end, [&](const int64_t* off, int64_t o, int64_t) {
      for (int64_t start = begin; start < end; start += kBlock) {
        const int64_t len = std::min(kBlock, end - start);
        for (int i = 0; i < num_inputs; ++i) {
          const char* at = operand(i, off[i] + start * strides[i]);
          if (k_.in_f32_[i] && strides[i] == 1) {
            src[i] = reinterpret_cast<const float*>(at);
          } else {
            k_.loads_[i](at, strides[i], regs + i * kBlock, len);
            src[i] = regs + i * kBlock;
          }
        }
        compute(len, out + (o + start) * k_.out_es_);
      }
    });
    return;
  }
  // Short rows (an operand broadcast along a short last dim, e.g. softmax's
  // row max): whole rows are gathered into one block, so each instruction
  // runs over up to kBlock elements rather than one row. Output rows are
  // consecutive; so are those of an f32 operand of the result's shape, which
  // is read in place.
  int64_t filled = 0, block_start = 0;
  auto flush = [&] {
    for (int i = 0; i < num_inputs; ++i)
      if (!k_.in_in_place_[i]) src[i] = regs + i * kBlock;
    compute(filled, out + block_start * k_.out_es_);
    filled = 0;
  };
  k_.plan_.ForEachRowIn(row_begin, row_end, [&](const int64_t* off, int64_t o, int64_t n) {
    if (filled == 0) {
      block_start = o;
      for (int i = 0; i < num_inputs; ++i)
        if (k_.in_in_place_[i]) src[i] = reinterpret_cast<const float*>(operand(i, off[i]));
    }
    for (int i = 0; i < num_inputs; ++i)
      if (!k_.in_in_place_[i])
        k_.loads_[i](operand(i, off[i]), strides[i], regs + i * kBlock + filled, n);
    filled += n;
    if (filled + n > kBlock) flush();
  });
  if (filled > 0) flush();
}

}  // namespace

void RegisterElementwise(std::vector<KernelDef>& defs) {
  for (const UnaryKind& u : kUnaryKinds)
    defs.push_back({u.kind, ElementwiseDTypesWithComplex(u.domain), &Make<UnaryKernel>});
  for (const BinaryKind& b : kBinaryKinds)
    defs.push_back({b.kind, ElementwiseDTypesWithComplex(b.domain), &Make<BinaryKernel>});
  defs.push_back({"compare", kEveryType, &Make<CompareKernel>, true});
  defs.push_back({"select", kEveryType, &Make<TernaryKernel>});
  defs.push_back({"clamp", WithComplex(kNumericTypes), &Make<TernaryKernel>});
  defs.push_back({"convert", kEveryType, &Make<ConvertKernel>});
  defs.push_back({"brt.fused_elementwise",
                  {BRT_DTYPE_F32, BRT_DTYPE_F16, BRT_DTYPE_BF16},
                  &Make<FusedElementwiseKernel>});
}

}  // namespace brt::cpu
