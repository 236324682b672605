// The CPU provider's base for kernels on a oneDNN primitive (private to
// providers/cpu): the engine, dtype and layout mapping, DnnlKernel (a
// primitive plus which buffer feeds each argument, weights packed once) and
// its per-request instance (memory objects, stream, scratchpad).
#pragma once

#include <dnnl.hpp>

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "kernel.h"
#include "parallel.h"

namespace brt::cpu {

using dnnl::memory;

inline const dnnl::engine& Engine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

// oneDNN's status as the plugin ABI's code: the caller sees out of memory as
// out of memory, not as a failed op.
inline int32_t AbiCode(dnnl_status_t status) {
  switch (status) {
    case dnnl_out_of_memory:
      return BRT_ERROR_RESOURCE_EXHAUSTED;
    case dnnl_invalid_arguments:
      return BRT_ERROR_INVALID_ARGUMENT;
    case dnnl_unimplemented:
      return BRT_ERROR_UNSUPPORTED;
    default:
      return BRT_ERROR_INTERNAL;
  }
}

inline void CheckDnnl(dnnl_status_t status, const std::string& what) {
  if (status != dnnl_success)
    throw AbiError(AbiCode(status),
                   "oneDNN " + what + " (dnnl_status_t " + std::to_string(status) + ")");
}

// Runs f(); a dnnl::error it throws (a primitive or memory object oneDNN
// could not make) leaves with its status's ABI code.
template <typename F>
void KeepingDnnlStatus(F&& f) {
  try {
    f();
  } catch (const dnnl::error& e) {
    throw AbiError(AbiCode(e.status), std::string("oneDNN: ") + e.what());
  }
}

inline memory::data_type DnnlType(const OpInfo& op, int32_t dtype) {
  switch (dtype) {
    case BRT_DTYPE_F32:
      return memory::data_type::f32;
    case BRT_DTYPE_F16:
      return memory::data_type::f16;
    case BRT_DTYPE_BF16:
      return memory::data_type::bf16;
  }
  throw UnsupportedError(op.kind + ": oneDNN path does not take " + std::string(DTypeName(dtype)));
}

inline memory::dims RowMajor(const memory::dims& dims) {
  memory::dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

inline memory::desc Plain(const OpInfo& op, const TensorInfo& t) {
  memory::dims dims(t.dims.begin(), t.dims.end());
  memory::dims strides = t.Strides();
  if (dims.empty()) dims = {1}, strides = {1};
  return memory::desc(dims, DnnlType(op, t.dtype), strides);
}

// relu over x[0, n) in place: maximum(x, 0), where NaN stays NaN and -0
// becomes +0, or (keep_negative_zero) select(x < 0, 0, x), where -0 stays -0.
// A pass over a convolution's whole output: shared out over the Session's
// threads in blocks of 16K elements.
template <typename T>
void ReluInPlace(T* x, int64_t n, bool keep_negative_zero) {
  // Values, not references, in the loop: so it vectorizes to compare and
  // blend (a branch per element mispredicts on half of random data).
  ParallelFor(n, int64_t{1} << 14, [x, keep_negative_zero](int64_t begin, int64_t end) {
    T* __restrict p = x;
    const T zero = T(0.0f);
    if (keep_negative_zero)
      for (int64_t i = begin; i < end; ++i) p[i] = static_cast<float>(p[i]) < 0.f ? zero : p[i];
    else
      for (int64_t i = begin; i < end; ++i) p[i] = static_cast<float>(p[i]) <= 0.f ? zero : p[i];
  });
}

// A oneDNN primitive plus which buffer feeds each of its arguments.
class DnnlKernel : public CpuKernel {
 public:
  std::unique_ptr<Runnable> CreateInstance() const override;
  void Run(void* const* b) override {  // runs only when trivial (no instance)
    if (zero_bytes_) std::memset(b[result_buffer_], 0, zero_bytes_);
  }

 protected:
  // Subclasses call these from Prepare().
  void SetPrimitive(dnnl::primitive p, memory::desc scratchpad) {
    primitive_ = std::move(p);
    scratchpad_ = std::move(scratchpad);
  }
  void Bind(int dnnl_arg, memory::desc md, int buffer) {
    args_.push_back({dnnl_arg, std::move(md), buffer});
  }
  // An argument fixed for the Session (e.g. weights reordered once into the
  // layout the primitive prefers); the kernel keeps the memory.
  void BindFixed(int dnnl_arg, memory m) {
    args_.push_back({dnnl_arg, m.get_desc(), kFixed});
    fixed_.push_back(std::move(m));
  }
  // Weights in the layout the primitive chose (`packed`): constant ones are
  // reordered once here, others into per-request memory before every run.
  void BindWeights(int dnnl_arg, const memory::desc& plain, const memory::desc& packed,
                   const void* constant, int buffer) {
    if (packed == plain) return Bind(dnnl_arg, plain, buffer);
    if (!constant) {
      args_.push_back(
          {dnnl_arg, packed, buffer, dnnl::reorder(plain_reorder(plain, packed)), plain});
      return;
    }
    memory from(plain, Engine(), const_cast<void*>(constant));  // only read
    memory to(packed, Engine());
    dnnl::stream stream(Engine());
    dnnl::reorder(from, to).execute(stream, from, to);
    stream.wait();
    BindFixed(dnnl_arg, std::move(to));
  }
  // An activation in the layout the primitive chose (`chosen`, from a
  // format_tag::any descriptor): reordered per run from the plain buffer
  // before the primitive runs (an operand) or into it after (the result).
  void BindActivation(int dnnl_arg, const memory::desc& plain, const memory::desc& chosen,
                      int buffer, bool result) {
    if (chosen == plain) return Bind(dnnl_arg, plain, buffer);
    args_.push_back({dnnl_arg, chosen, buffer,
                     result ? dnnl::reorder(plain_reorder(chosen, plain))
                            : dnnl::reorder(plain_reorder(plain, chosen)),
                     plain, result});
  }
  // A relu the instance applies to the result after the primitive (oneDNN's
  // relu post-op is max(x, 0) with the NaN dropped; StableHLO's maximum keeps
  // it). `keep_negative_zero`: select(x < 0, 0, x), PyTorch's relu.
  void ReluAfter(int buffer, const TensorInfo& result, bool keep_negative_zero) {
    relu_buffer_ = buffer, relu_dtype_ = result.dtype, relu_numel_ = result.numel;
    relu_keeps_negative_zero_ = keep_negative_zero;
  }
  // When there is nothing to compute (a zero-size dim): zero the result or do nothing.
  void SetTrivial(int result_buffer, size_t zero_bytes) {
    trivial_ = true;
    result_buffer_ = result_buffer;
    zero_bytes_ = zero_bytes;
  }

 private:
  friend class DnnlInstance;
  static constexpr int kFixed = -1;
  static dnnl::reorder::primitive_desc plain_reorder(const memory::desc& from,
                                                     const memory::desc& to) {
    return dnnl::reorder::primitive_desc(Engine(), from, Engine(), to);
  }
  struct Arg {
    int dnnl_arg;
    memory::desc md;
    int buffer;  // kFixed: the next of fixed_
    // Set when the buffer (laid out as `plain`) is reordered into md first,
    // or, for a result (`unpack`), md into the buffer after the primitive.
    dnnl::reorder pack = {};
    memory::desc plain = {};
    bool unpack = false;
  };
  std::vector<memory> fixed_;
  dnnl::primitive primitive_;
  memory::desc scratchpad_;
  std::vector<Arg> args_;
  bool trivial_ = false;
  int relu_buffer_ = 0;
  int32_t relu_dtype_ = 0;
  int64_t relu_numel_ = 0;  // 0: no relu after the primitive
  bool relu_keeps_negative_zero_ = false;
  int result_buffer_ = 0;
  size_t zero_bytes_ = 0;
};

class DnnlInstance final : public Runnable {
 public:
  explicit DnnlInstance(const DnnlKernel& k) : k_(k), stream_(Engine()) {
    size_t fixed = 0;
    plain_.resize(k.args_.size());
    for (size_t i = 0; i < k.args_.size(); ++i) {
      const auto& a = k.args_[i];
      if (a.buffer == DnnlKernel::kFixed)
        memories_.push_back(k.fixed_[fixed++]);
      else if (a.pack) {
        memories_.emplace_back(a.md, Engine());  // this request's packed copy
        plain_[i] = memory(a.plain, Engine(), static_cast<void*>(DNNL_MEMORY_NONE));
      } else
        memories_.emplace_back(a.md, Engine(), static_cast<void*>(DNNL_MEMORY_NONE));
      exec_args_.push_back({a.dnnl_arg, memories_.back().get()});
    }
    if (k.scratchpad_.get_size() > 0) {
      scratch_.resize(k.scratchpad_.get_size() + 64);
      void* p = scratch_.data() + (64 - reinterpret_cast<uintptr_t>(scratch_.data()) % 64) % 64;
      memories_.emplace_back(k.scratchpad_, Engine(), p);
      exec_args_.push_back({DNNL_ARG_SCRATCHPAD, memories_.back().get()});
    }
  }
  void Run(void* const* b) override {
    for (size_t i = 0; i < k_.args_.size(); ++i) {
      const auto& a = k_.args_[i];
      if (a.buffer == DnnlKernel::kFixed) continue;
      if (!a.pack) {
        memories_[i].set_data_handle(b[a.buffer]);
        continue;
      }
      plain_[i].set_data_handle(b[a.buffer]);
      if (!a.unpack) Reorder(a.pack, plain_[i], memories_[i]);
    }
    CheckDnnl(dnnl_primitive_execute(k_.primitive_.get(), stream_.get(),
                                     static_cast<int>(exec_args_.size()), exec_args_.data()),
              "could not execute the primitive");
    for (size_t i = 0; i < k_.args_.size(); ++i)
      if (k_.args_[i].unpack) Reorder(k_.args_[i].pack, memories_[i], plain_[i]);
    CheckDnnl(dnnl_stream_wait(stream_.get()), "failed while running the primitive");
    if (k_.relu_numel_)
      DispatchType(k_.relu_dtype_, [&](auto zero) {
        using T = decltype(zero);
        if constexpr (std::is_floating_point_v<T> || kIs16BitFloat<T>)
          ReluInPlace(static_cast<T*>(b[k_.relu_buffer_]), k_.relu_numel_,
                      k_.relu_keeps_negative_zero_);
      });
  }

 private:
  void Reorder(const dnnl::reorder& r, const memory& from, const memory& to) {
    const dnnl_exec_arg_t io[] = {{DNNL_ARG_FROM, from.get()}, {DNNL_ARG_TO, to.get()}};
    CheckDnnl(dnnl_primitive_execute(r.get(), stream_.get(), 2, io),
              "could not reorder between a buffer and the primitive's layout");
  }
  const DnnlKernel& k_;
  dnnl::stream stream_;
  std::vector<memory> memories_;
  std::vector<memory> plain_;  // per arg: the caller's buffer, where it is packed first
  std::vector<dnnl_exec_arg_t> exec_args_;
  std::vector<uint8_t> scratch_;
};

inline std::unique_ptr<Runnable> DnnlKernel::CreateInstance() const {
  if (trivial_) return nullptr;  // Run() zeroes the result or does nothing
  return std::make_unique<DnnlInstance>(*this);
}

inline dnnl::primitive_attr UserScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

}  // namespace brt::cpu
