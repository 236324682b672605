// brt's own CUDA kernels. The scalar semantics come from
// common/scalar_ops.h and the layouts from common/op_plans.h, so these match
// the CPU provider; 16-bit floats compute in f32, i1 is one byte.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>

#include "kernels.h"

#ifdef BRT_CUDA_EMULATION
#include "emulation.h"
#endif

namespace brt::cuda {

using ops::Activation;
using ops::Binary;
using ops::Cmp;
using ops::Reducer;
using ops::Unary;

namespace {

// i1 storage: one byte, any non-zero byte reads as true.
struct Bool8 {
  unsigned char v;
};

// Storage type -> compute type, and the conversions between them.
template <typename T>
struct Num {
  using C = T;
  __device__ static C Load(T x) { return x; }
  __device__ static T Store(C x) { return x; }
};
template <>
struct Num<__half> {
  using C = float;
  __device__ static C Load(__half x) { return __half2float(x); }
  __device__ static __half Store(C x) { return __float2half_rn(x); }
};
template <>
struct Num<__nv_bfloat16> {
  using C = float;
  __device__ static C Load(__nv_bfloat16 x) { return __bfloat162float(x); }
  __device__ static __nv_bfloat16 Store(C x) { return __float2bfloat16_rn(x); }
};
template <>
struct Num<Bool8> {
  using C = bool;
  __device__ static C Load(Bool8 x) { return x.v != 0; }
  __device__ static Bool8 Store(C x) { return Bool8{static_cast<unsigned char>(x ? 1 : 0)}; }
};

template <typename T>
__device__ typename Num<T>::C LoadAt(const void* p, long long i) {
  return Num<T>::Load(static_cast<const T*>(p)[i]);
}
template <typename T>
__device__ void StoreAt(void* p, long long i, typename Num<T>::C v) {
  static_cast<T*>(p)[i] = Num<T>::Store(v);
}

template <typename T>
struct Tag {
  using type = T;
};

// Calls f(Tag<T>{}) with the storage type of a dtype; false for an unknown one.
template <typename F>
bool Dispatch(int32_t dtype, F&& f) {
  switch (dtype) {
    case BRT_DTYPE_F32:
      return f(Tag<float>{}), true;
    case BRT_DTYPE_F16:
      return f(Tag<__half>{}), true;
    case BRT_DTYPE_BF16:
      return f(Tag<__nv_bfloat16>{}), true;
    case BRT_DTYPE_F64:
      return f(Tag<double>{}), true;
    case BRT_DTYPE_I1:
      return f(Tag<Bool8>{}), true;
    case BRT_DTYPE_I8:
      return f(Tag<int8_t>{}), true;
    case BRT_DTYPE_I32:
      return f(Tag<int32_t>{}), true;
    case BRT_DTYPE_I64:
      return f(Tag<int64_t>{}), true;
    case BRT_DTYPE_U8:
      return f(Tag<uint8_t>{}), true;
  }
  return false;
}

constexpr int kThreads = 256;

// A kernel launch in stream order; the host emulation runs it on the calling
// thread, block after block.
template <typename... P, typename... A>
void Launch(void (*kernel)(P...), dim3 grid, unsigned block, cudaStream_t stream, A&&... args) {
#ifdef BRT_CUDA_EMULATION
  (void)block, (void)stream;
  emulation::Run(grid, [&] { kernel(static_cast<P>(args)...); });
#else
  // clang-format off
  kernel<<<grid, block, 0, stream>>>(static_cast<P>(args)...);
  // clang-format on
#endif
}

cudaError_t LastError() {
#ifdef BRT_CUDA_EMULATION
  return cudaSuccess;
#else
  return cudaGetLastError();
#endif
}

unsigned Blocks(long long n, int per_block = kThreads) {
  const long long blocks = (n + per_block - 1) / per_block;
  return static_cast<unsigned>(std::max<long long>(1, std::min<long long>(blocks, 1 << 20)));
}

#define BRT_GRID_STRIDE(i, n)                                                                \
  for (long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n); \
       i += static_cast<long long>(gridDim.x) * blockDim.x)

// Offsets of element i of a Space for its first `count` operands.
__device__ void Offsets(const Space& s, long long i, int count, long long* off) {
  for (int k = 0; k < count; ++k) off[k] = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    const long long idx = i % s.dims[d];
    i /= s.dims[d];
    for (int k = 0; k < count; ++k) off[k] += idx * s.strides[k][d];
  }
}

// --- elementwise --------------------------------------------------------------

template <typename T>
__global__ void SameTypeKernel(ElementwiseParams p, const void* a, const void* b, const void* c,
                               void* out) {
  using C = typename Num<T>::C;
  BRT_GRID_STRIDE(i, p.space.n) {
    long long off[3];
    Offsets(p.space, i, 3, off);
    C r;
    switch (p.kind) {
      case Elementwise::kUnary:
        r = ops::ApplyUnaryAt<C>(static_cast<Unary>(p.op), LoadAt<T>(a, off[0]));
        break;
      case Elementwise::kBinary:
        r = ops::ApplyBinaryAt<C>(static_cast<Binary>(p.op), LoadAt<T>(a, off[0]),
                                  LoadAt<T>(b, off[1]));
        break;
      case Elementwise::kSelect:
        r = LoadAt<Bool8>(a, off[0]) ? LoadAt<T>(b, off[1]) : LoadAt<T>(c, off[2]);
        break;
      case Elementwise::kClamp: {
        const C lo = LoadAt<T>(a, off[0]), x = LoadAt<T>(b, off[1]), hi = LoadAt<T>(c, off[2]);
        const C m = x > lo ? x : lo;
        r = m < hi ? m : hi;
        break;
      }
      default:
        if constexpr (ops::kIsFloat<C>)
          r = ops::Activate<C>(static_cast<Activation>(p.op), LoadAt<T>(a, off[0]));
        else
          r = LoadAt<T>(a, off[0]);
        break;
    }
    StoreAt<T>(out, i, r);
  }
}

template <typename T>
__global__ void CompareKernel(ElementwiseParams p, const void* a, const void* b, void* out) {
  BRT_GRID_STRIDE(i, p.space.n) {
    long long off[2];
    Offsets(p.space, i, 2, off);
    StoreAt<Bool8>(
        out, i, ops::ApplyCmp(static_cast<Cmp>(p.op), LoadAt<T>(a, off[0]), LoadAt<T>(b, off[1])));
  }
}

template <typename From, typename To>
__global__ void ConvertKernel(long long n, const void* in, void* out) {
  BRT_GRID_STRIDE(i, n) {
    StoreAt<To>(out, i, ops::ConvertScalar<typename Num<To>::C>(LoadAt<From>(in, i)));
  }
}

// --- fused elementwise ------------------------------------------------------------

__device__ float LoadAsFloat(int32_t dtype, const void* p, long long i) {
  switch (dtype) {
    case BRT_DTYPE_F16:
      return LoadAt<__half>(p, i);
    case BRT_DTYPE_BF16:
      return LoadAt<__nv_bfloat16>(p, i);
    case BRT_DTYPE_F64:
      return static_cast<float>(LoadAt<double>(p, i));
    case BRT_DTYPE_I1:
      return LoadAt<Bool8>(p, i) ? 1.f : 0.f;
    case BRT_DTYPE_I8:
      return LoadAt<int8_t>(p, i);
    case BRT_DTYPE_I32:
      return static_cast<float>(LoadAt<int32_t>(p, i));
    case BRT_DTYPE_I64:
      return static_cast<float>(LoadAt<int64_t>(p, i));
    case BRT_DTYPE_U8:
      return LoadAt<uint8_t>(p, i);
  }
  return LoadAt<float>(p, i);
}

struct FusedInputs {
  const void* ptr[kMaxOperands];
};

template <typename T>
__global__ void FusedKernel(FusedParams p, FusedInputs in, void* out) {
  float reg[kMaxFusedRegisters];
  for (int c = 0; c < p.num_constants; ++c) reg[p.num_inputs + c] = p.constants[c];
  BRT_GRID_STRIDE(i, p.space.n) {
    long long off[kMaxOperands];
    Offsets(p.space, i, p.num_inputs, off);
    for (int k = 0; k < p.num_inputs; ++k) reg[k] = LoadAsFloat(p.in_dtypes[k], in.ptr[k], off[k]);
    int last = 0;
    for (int s = 0; s < p.num_instructions; ++s) {
      const float x = reg[p.src[s][0]], y = reg[p.src[s][1]], z = reg[p.src[s][2]];
      float r = x;
      switch (static_cast<Elementwise>(p.kind[s])) {
        case Elementwise::kUnary:
          r = ops::ApplyUnaryAt<float>(static_cast<Unary>(p.op[s]), x);
          break;
        case Elementwise::kBinary:
          r = ops::ApplyBinaryAt<float>(static_cast<Binary>(p.op[s]), x, y);
          break;
        case Elementwise::kCompare:
          r = ops::ApplyCmp(static_cast<Cmp>(p.op[s]), x, y) ? 1.f : 0.f;
          break;
        case Elementwise::kSelect:
          r = x != 0.f ? y : z;
          break;
        case Elementwise::kClamp:
          r = fminf(fmaxf(y, x), z);
          break;
        default:
          break;
      }
      last = p.dst[s];
      reg[last] = r;
    }
    StoreAt<T>(out, i, reg[last]);
  }
}

// --- data movement ------------------------------------------------------------------

template <typename T>
__global__ void StridedCopyKernel(CopyParams p, const T* src, T* dst) {
  long long start = 0;
  for (int d = 0; d < p.num_starts; ++d) {
    long long s = p.start_is_i64[d] ? *static_cast<const long long*>(p.starts[d])
                                    : *static_cast<const int*>(p.starts[d]);
    s = s < 0 ? 0 : (s > p.start_max[d] ? p.start_max[d] : s);
    start += s * p.start_strides[d];
  }
  if (p.starts_offset_dst)
    dst += start;
  else
    src += start;
  BRT_GRID_STRIDE(i, p.n) {
    long long so = 0, dof = 0, r = i;
    for (int d = p.rank - 1; d >= 0; --d) {
      const long long idx = r % p.dims[d];
      r /= p.dims[d];
      so += idx * p.src_strides[d];
      dof += idx * p.dst_strides[d];
    }
    dst[dof] = src[so];
  }
}

template <typename T>
__global__ void FillKernel(long long n, const T* value, T* dst) {
  const T v = *value;
  BRT_GRID_STRIDE(i, n) { dst[i] = v; }
}

template <typename T>
__global__ void IotaKernel(long long n, long long size, long long stride, void* out) {
  using C = typename Num<T>::C;
  BRT_GRID_STRIDE(i, n) { StoreAt<T>(out, i, static_cast<C>((i / stride) % size)); }
}

// Copies of 1, 2, 4 or 8 bytes per element move the same bits for every dtype.
template <typename F>
bool BySize(size_t elem_size, F&& f) {
  switch (elem_size) {
    case 1:
      return f(Tag<uint8_t>{}), true;
    case 2:
      return f(Tag<uint16_t>{}), true;
    case 4:
      return f(Tag<uint32_t>{}), true;
    case 8:
      return f(Tag<unsigned long long>{}), true;
  }
  return false;
}

// --- gather / scatter ------------------------------------------------------------------

__device__ long long ReadIndex(const void* indices, bool i64, long long at) {
  return i64 ? static_cast<const long long*>(indices)[at] : static_cast<const int*>(indices)[at];
}

// The operand offset of iterated element e; false when a scatter window
// falls outside the operand (gather clamps instead).
__device__ bool IndexedOffset(const IndexingParams& p, const void* indices, long long e, bool clamp,
                              long long* offset) {
  long long ioff = 0, woff = 0;
  for (int d = p.rank - 1; d >= 0; --d) {
    const long long idx = e % p.dims[d];
    e /= p.dims[d];
    ioff += idx * p.batch_strides[d];
    woff += idx * p.window_strides[d];
  }
  long long soff = 0;
  for (int k = 0; k < p.num_starts; ++k) {
    long long s = ReadIndex(indices, p.index_i64, ioff + k * p.vector_stride);
    if (clamp)
      s = s < 0 ? 0 : (s > p.start_max[k] ? p.start_max[k] : s);
    else if (s < 0 || s > p.start_max[k])
      return false;
    soff += s * p.start_strides[k];
  }
  *offset = soff + woff;
  return true;
}

template <typename T>
__global__ void GatherKernel(IndexingParams p, const T* operand, const void* indices, T* out) {
  BRT_GRID_STRIDE(e, p.n) {
    long long at = 0;
    IndexedOffset(p, indices, e, true, &at);
    out[e] = operand[at];
  }
}

// Atomic add for types without a native one: compare-and-swap on the aligned
// 32-bit word holding the element.
template <typename T>
__device__ void AtomicAddNarrow(T* address, T value) {
  auto* word =
      reinterpret_cast<unsigned int*>(reinterpret_cast<uintptr_t>(address) & ~uintptr_t{3});
  const unsigned shift = (reinterpret_cast<uintptr_t>(address) & 3) * 8;
  unsigned int old = *word, assumed;
  do {
    assumed = old;
    const T current = static_cast<T>((assumed >> shift) & 0xFFu);
    const unsigned char sum = static_cast<unsigned char>(static_cast<unsigned char>(current) +
                                                         static_cast<unsigned char>(value));
    const unsigned int next =
        (assumed & ~(0xFFu << shift)) | (static_cast<unsigned int>(sum) << shift);
    old = atomicCAS(word, assumed, next);
  } while (assumed != old);
}

template <typename T>
__device__ void AtomicAddTo(T* address, T value) {
  if constexpr (sizeof(T) == 1) {
    AtomicAddNarrow(address, value);
  } else if constexpr (std::is_same_v<T, int64_t>) {
    atomicAdd(reinterpret_cast<unsigned long long*>(address),
              static_cast<unsigned long long>(value));  // wraps, as the CPU's sums do
  } else {
    atomicAdd(address, value);
  }
}

template <typename T>
__global__ void ScatterKernel(IndexingParams p, bool add, const void* indices, const T* updates,
                              T* out) {
  BRT_GRID_STRIDE(e, p.n) {
    long long at = 0;
    if (!IndexedOffset(p, indices, e, false, &at)) continue;
    if (add) {
      if constexpr (!std::is_same_v<T, Bool8>) AtomicAddTo(out + at, updates[e]);
    } else {
      out[at] = updates[e];
    }
  }
}

// --- reductions -----------------------------------------------------------------------

#ifndef BRT_CUDA_EMULATION
// Shuffles move 32-bit or wider values; narrower ones travel as int.
template <typename C>
__device__ C ShuffleDown(C v, int offset) {
  if constexpr (sizeof(C) < 4)
    return static_cast<C>(__shfl_down_sync(0xffffffffu, static_cast<int>(v), offset));
  else
    return __shfl_down_sync(0xffffffffu, v, offset);
}
#endif

template <typename C>
__device__ C WarpCombine(Reducer r, C v) {
#ifdef BRT_CUDA_EMULATION
  (void)r;  // one thread per block: nothing to combine
#else
  for (int o = 16; o > 0; o >>= 1) v = ops::CombineAt<C>(r, v, ShuffleDown(v, o));
#endif
  return v;
}

// Combines one value per thread of the block; the result is valid in thread 0.
template <typename C>
__device__ C BlockCombine(Reducer r, C v, C identity) {
  __shared__ C partial[32];
  v = WarpCombine(r, v);
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  __syncthreads();  // partial may still be read from a previous call
  if (lane == 0) partial[warp] = v;
  __syncthreads();
  v = threadIdx.x < (blockDim.x + 31) / 32 ? partial[lane] : identity;
  if (warp == 0) v = WarpCombine(r, v);
  return v;
}

__device__ long long KeptOffset(const ReduceParams& p, long long o) {
  long long off = 0;
  for (int d = p.kept_rank - 1; d >= 0; --d) {
    off += (o % p.kept_dims[d]) * p.kept_strides[d];
    o /= p.kept_dims[d];
  }
  return off;
}

__device__ long long ReducedOffset(const ReduceParams& p, long long r) {
  long long off = 0;
  for (int d = p.reduced_rank - 1; d >= 0; --d) {
    off += (r % p.reduced_dims[d]) * p.reduced_strides[d];
    r /= p.reduced_dims[d];
  }
  return off;
}

template <typename C>
__device__ C Identity(Reducer r) {
  if constexpr (std::is_same_v<C, bool>) {
    return r == Reducer::kAnd || r == Reducer::kMin || r == Reducer::kMul;
  } else {
    switch (r) {
      case Reducer::kAdd:
      case Reducer::kOr:
        return C(0);
      case Reducer::kMul:
        return C(1);
      case Reducer::kAnd:
        return C(~0ll);
      case Reducer::kMax:
        return ops::kIsFloat<C> ? C(-INFINITY) : std::numeric_limits<C>::lowest();
      case Reducer::kMin:
        return ops::kIsFloat<C> ? C(INFINITY) : std::numeric_limits<C>::max();
    }
    return C(0);
  }
}

// Rows: a block per (output, split), threads stride the chunk. Columns: a
// thread per output, blockIdx.y the split. A single split writes the result
// (with init); several write partials for FinishReduceKernel.
template <typename T>
__global__ void ReduceKernel(ReduceParams p, const T* in, const T* init, T* out,
                             typename Num<T>::C* partials) {
  using C = typename Num<T>::C;
  const Reducer r = p.reducer;
  const long long chunk = (p.reduced_n + p.splits - 1) / p.splits;
  const int split = blockIdx.y;
  const long long begin = split * chunk;
  const long long end = begin + chunk < p.reduced_n ? begin + chunk : p.reduced_n;
  if (p.rows) {
    for (long long o = blockIdx.x; o < p.out_n; o += gridDim.x) {
      const long long base = KeptOffset(p, o);
      C acc = Identity<C>(r);
      for (long long k = begin + threadIdx.x; k < end; k += blockDim.x)
        acc = ops::CombineAt<C>(r, acc, Num<T>::Load(in[base + ReducedOffset(p, k)]));
      acc = BlockCombine<C>(r, acc, Identity<C>(r));
      if (threadIdx.x == 0) {
        if (p.splits == 1)
          out[o] = Num<T>::Store(ops::CombineAt<C>(r, Num<T>::Load(*init), acc));
        else
          partials[o * p.splits + split] = acc;
      }
    }
  } else {
    BRT_GRID_STRIDE(o, p.out_n) {
      const long long base = KeptOffset(p, o);
      C acc = Identity<C>(r);
      for (long long k = begin; k < end; ++k)
        acc = ops::CombineAt<C>(r, acc, Num<T>::Load(in[base + ReducedOffset(p, k)]));
      if (p.splits == 1)
        out[o] = Num<T>::Store(ops::CombineAt<C>(r, Num<T>::Load(*init), acc));
      else
        partials[o * p.splits + split] = acc;
    }
  }
}

template <typename T>
__global__ void FinishReduceKernel(ReduceParams p, const T* init, T* out,
                                   const typename Num<T>::C* partials) {
  using C = typename Num<T>::C;
  BRT_GRID_STRIDE(o, p.out_n) {
    C acc = Num<T>::Load(*init);
    for (int s = 0; s < p.splits; ++s)
      acc = ops::CombineAt<C>(p.reducer, acc, partials[o * p.splits + s]);
    out[o] = Num<T>::Store(acc);
  }
}

template <typename T>
__global__ void ReduceWindowKernel(ReduceWindowParams p, const T* in, const T* init, T* out) {
  using C = typename Num<T>::C;
  BRT_GRID_STRIDE(o, p.out_n) {
    long long o_idx[kMaxRank];
    for (long long d = p.rank - 1, r = o; d >= 0; --d)
      o_idx[d] = r % p.out_dims[d], r /= p.out_dims[d];
    C acc = Num<T>::Load(*init);
    for (long long w = 0; w < p.window_n; ++w) {
      long long off = 0, rest = w;
      bool inside = true;
      for (int d = p.rank - 1; d >= 0; --d) {
        const long long wi = rest % p.window[d];
        rest /= p.window[d];
        long long pos = o_idx[d] * p.strides[d] + wi * p.win_dil[d] - p.pad_lo[d];
        if (pos < 0 || pos % p.base_dil[d] != 0) inside = false;
        pos /= p.base_dil[d];
        if (pos >= p.in_dims[d]) inside = false;
        off += pos * p.in_strides[d];
      }
      if (inside) acc = ops::CombineAt<C>(p.reducer, acc, Num<T>::Load(in[off]));
    }
    out[o] = Num<T>::Store(acc);
  }
}

// --- dot ------------------------------------------------------------------------------------

template <typename T>
__global__ void DotKernel(DotParams p, const T* lhs, const T* rhs, const T* bias, T* out) {
  using C = typename Num<T>::C;
  BRT_GRID_STRIDE(o, p.out_n) {
    long long lo = 0, ro = 0;
    for (long long d = p.out_rank - 1, r = o; d >= 0; --d) {
      const long long idx = r % p.out_dims[d];
      r /= p.out_dims[d];
      lo += idx * p.lhs_out_strides[d];
      ro += idx * p.rhs_out_strides[d];
    }
    long long k_n = 1;
    for (int d = 0; d < p.k_rank; ++d) k_n *= p.k_dims[d];
    C acc = C(0);
    for (long long k = 0; k < k_n; ++k) {
      long long lk = 0, rk = 0;
      for (long long d = p.k_rank - 1, r = k; d >= 0; --d) {
        const long long idx = r % p.k_dims[d];
        r /= p.k_dims[d];
        lk += idx * p.lhs_k_strides[d];
        rk += idx * p.rhs_k_strides[d];
      }
      const C prod =
          ops::ApplyBinary<Binary::kMul, C>(Num<T>::Load(lhs[lo + lk]), Num<T>::Load(rhs[ro + rk]));
      acc = ops::ApplyBinary<Binary::kAdd, C>(acc, prod);
    }
    if (p.bias) acc = ops::ApplyBinary<Binary::kAdd, C>(acc, Num<T>::Load(bias[o % p.n_free]));
    if constexpr (ops::kIsFloat<C>) acc = ops::Activate<C>(p.activation, acc);
    out[o] = Num<T>::Store(acc);
  }
}

// --- softmax and layer norm ----------------------------------------------------------------

// Contiguous rows (inner == 1): a block per row, three passes (max, sum, write).
template <typename T>
__global__ void SoftmaxRowsKernel(long long rows, long long size, const T* in, T* out) {
  using C = typename Num<T>::C;
  using A = std::conditional_t<std::is_same_v<C, double>, double, float>;
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* x = in + row * size;
    T* y = out + row * size;
    A m = -INFINITY;
    for (long long k = threadIdx.x; k < size; k += blockDim.x) m = fmax(m, A(Num<T>::Load(x[k])));
    m = BlockCombine<A>(Reducer::kMax, m, A(-INFINITY));
    __shared__ A shared_max, shared_sum;
    if (threadIdx.x == 0) shared_max = m;
    __syncthreads();
    m = shared_max;
    A s = 0;
    for (long long k = threadIdx.x; k < size; k += blockDim.x) s += exp(A(Num<T>::Load(x[k])) - m);
    s = BlockCombine<A>(Reducer::kAdd, s, A(0));
    if (threadIdx.x == 0) shared_sum = s;
    __syncthreads();
    const A inv = A(1) / shared_sum;
    for (long long k = threadIdx.x; k < size; k += blockDim.x)
      y[k] = Num<T>::Store(static_cast<C>(exp(A(Num<T>::Load(x[k])) - m) * inv));
    __syncthreads();
  }
}

// Strided softmax (inner > 1): a thread per (outer, inner) column.
template <typename T>
__global__ void SoftmaxColumnsKernel(long long outer, long long size, long long inner, const T* in,
                                     T* out) {
  using C = typename Num<T>::C;
  using A = std::conditional_t<std::is_same_v<C, double>, double, float>;
  BRT_GRID_STRIDE(c, outer * inner) {
    const long long base = (c / inner) * size * inner + c % inner;
    A m = -INFINITY, s = 0;
    for (long long k = 0; k < size; ++k) m = fmax(m, A(Num<T>::Load(in[base + k * inner])));
    for (long long k = 0; k < size; ++k) s += exp(A(Num<T>::Load(in[base + k * inner])) - m);
    for (long long k = 0; k < size; ++k)
      out[base + k * inner] =
          Num<T>::Store(static_cast<C>(exp(A(Num<T>::Load(in[base + k * inner])) - m) / s));
  }
}

// A block per row: mean, then variance around it, then the normalized row.
template <typename T>
__global__ void LayerNormKernel(long long rows, long long cols, float epsilon, const T* x,
                                const float* scale, const float* shift, T* y) {
  using C = typename Num<T>::C;
  __shared__ float shared_mean, shared_rstd;
  for (long long row = blockIdx.x; row < rows; row += gridDim.x) {
    const T* xr = x + row * cols;
    float s = 0;
    for (long long k = threadIdx.x; k < cols; k += blockDim.x) s += float(Num<T>::Load(xr[k]));
    s = BlockCombine<float>(Reducer::kAdd, s, 0.f);
    if (threadIdx.x == 0) shared_mean = s / cols;
    __syncthreads();
    const float mean = shared_mean;
    float v = 0;
    for (long long k = threadIdx.x; k < cols; k += blockDim.x) {
      const float d = float(Num<T>::Load(xr[k])) - mean;
      v += d * d;
    }
    v = BlockCombine<float>(Reducer::kAdd, v, 0.f);
    if (threadIdx.x == 0) shared_rstd = rsqrtf(v / cols + epsilon);
    __syncthreads();
    const float rstd = shared_rstd;
    for (long long k = threadIdx.x; k < cols; k += blockDim.x)
      y[row * cols + k] = Num<T>::Store(
          static_cast<C>((float(Num<T>::Load(xr[k])) - mean) * rstd * scale[k] + shift[k]));
    __syncthreads();
  }
}

unsigned RowBlocks(long long rows) {
  return static_cast<unsigned>(std::max<long long>(1, std::min<long long>(rows, 65535)));
}

}  // namespace

// --- launchers -------------------------------------------------------------------------------

Space MakeSpace(const ops::BroadcastPlan& plan, int num_operands, long long n) {
  Space s;
  s.rank = plan.rank();
  s.n = n;
  for (int d = 0; d < s.rank; ++d) {
    s.dims[d] = plan.dim(d);
    for (int k = 0; k < num_operands; ++k) s.strides[k][d] = plan.stride(k, d);
  }
  return s;
}

cudaError_t LaunchElementwise(const ElementwiseParams& p, int32_t in_dtype, int32_t out_dtype,
                              const void* const* in, void* out, cudaStream_t stream) {
  if (p.space.n == 0) return cudaSuccess;
  const unsigned blocks = Blocks(p.space.n);
  bool known = false;
  if (p.kind == Elementwise::kConvert) {
    bool to_known = false;
    known = Dispatch(in_dtype, [&](auto from) {
      to_known = Dispatch(out_dtype, [&](auto to) {
        Launch(&ConvertKernel<typename decltype(from)::type, typename decltype(to)::type>, blocks,
               kThreads, stream, p.space.n, in[0], out);
      });
    });
    known = known && to_known;
  } else if (p.kind == Elementwise::kCompare) {
    known = Dispatch(in_dtype, [&](auto t) {
      Launch(&CompareKernel<typename decltype(t)::type>, blocks, kThreads, stream, p, in[0], in[1],
             out);
    });
  } else {
    const int arity = p.kind == Elementwise::kUnary || p.kind == Elementwise::kActivation ? 1
                      : p.kind == Elementwise::kBinary                                    ? 2
                                                                                          : 3;
    known = Dispatch(out_dtype, [&](auto t) {
      Launch(&SameTypeKernel<typename decltype(t)::type>, blocks, kThreads, stream, p, in[0],
             arity > 1 ? in[1] : nullptr, arity > 2 ? in[2] : nullptr, out);
    });
  }
  return known ? LastError() : cudaErrorInvalidValue;
}

cudaError_t LaunchFused(const FusedParams& p, int32_t out_dtype, const void* const* in, void* out,
                        cudaStream_t stream) {
  if (p.space.n == 0) return cudaSuccess;
  FusedInputs inputs{};
  for (int k = 0; k < p.num_inputs; ++k) inputs.ptr[k] = in[k];
  const unsigned blocks = Blocks(p.space.n);
  switch (out_dtype) {
    case BRT_DTYPE_F32:
      Launch(&FusedKernel<float>, blocks, kThreads, stream, p, inputs, out);
      break;
    case BRT_DTYPE_F16:
      Launch(&FusedKernel<__half>, blocks, kThreads, stream, p, inputs, out);
      break;
    case BRT_DTYPE_BF16:
      Launch(&FusedKernel<__nv_bfloat16>, blocks, kThreads, stream, p, inputs, out);
      break;
    default:
      return cudaErrorInvalidValue;
  }
  return LastError();
}

CopyParams MakeCopy(const ops::StridedCopy& c) {
  CopyParams p;
  p.rank = c.rank;
  p.n = 1;
  for (int d = 0; d < c.rank; ++d) {
    p.dims[d] = c.dims[d], p.src_strides[d] = c.src_strides[d], p.dst_strides[d] = c.dst_strides[d];
    p.n *= c.dims[d];
  }
  return p;
}

cudaError_t LaunchStridedCopy(const CopyParams& p, size_t elem_size, const void* src, void* dst,
                              cudaStream_t stream) {
  if (p.n == 0) return cudaSuccess;
  const bool known = BySize(elem_size, [&](auto t) {
    using T = typename decltype(t)::type;
    Launch(&StridedCopyKernel<T>, Blocks(p.n), kThreads, stream, p, static_cast<const T*>(src),
           static_cast<T*>(dst));
  });
  return known ? LastError() : cudaErrorInvalidValue;
}

cudaError_t LaunchFill(long long n, size_t elem_size, const void* value, void* dst,
                       cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const bool known = BySize(elem_size, [&](auto t) {
    using T = typename decltype(t)::type;
    Launch(&FillKernel<T>, Blocks(n), kThreads, stream, n, static_cast<const T*>(value),
           static_cast<T*>(dst));
  });
  return known ? LastError() : cudaErrorInvalidValue;
}

cudaError_t LaunchIota(long long n, long long size, long long stride, int32_t dtype, void* out,
                       cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  const bool known = Dispatch(dtype, [&](auto t) {
    Launch(&IotaKernel<typename decltype(t)::type>, Blocks(n), kThreads, stream, n, size, stride,
           out);
  });
  return known ? LastError() : cudaErrorInvalidValue;
}

IndexingParams MakeIndexing(const ops::IndexPlan& plan) {
  IndexingParams p;
  p.rank = plan.rank();
  p.n = plan.numel;
  p.vector_stride = plan.vector_stride;
  p.index_i64 = plan.index_dtype == BRT_DTYPE_I64;
  for (int d = 0; d < p.rank; ++d)
    p.dims[d] = plan.dims[d], p.batch_strides[d] = plan.batch_strides[d],
    p.window_strides[d] = plan.window_strides[d];
  p.num_starts = static_cast<int>(plan.start_strides.size());
  for (int k = 0; k < p.num_starts; ++k)
    p.start_strides[k] = plan.start_strides[k], p.start_max[k] = plan.start_max[k];
  return p;
}

cudaError_t LaunchGather(const IndexingParams& p, size_t elem_size, const void* operand,
                         const void* indices, void* out, cudaStream_t stream) {
  if (p.n == 0) return cudaSuccess;
  const bool known = BySize(elem_size, [&](auto t) {
    using T = typename decltype(t)::type;
    Launch(&GatherKernel<T>, Blocks(p.n), kThreads, stream, p, static_cast<const T*>(operand),
           indices, static_cast<T*>(out));
  });
  return known ? LastError() : cudaErrorInvalidValue;
}

cudaError_t LaunchScatter(const IndexingParams& p, int32_t dtype, bool add, const void* indices,
                          const void* updates, void* out, cudaStream_t stream) {
  if (p.n == 0) return cudaSuccess;
  const bool known = Dispatch(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    Launch(&ScatterKernel<T>, Blocks(p.n), kThreads, stream, p, add, indices,
           static_cast<const T*>(updates), static_cast<T*>(out));
  });
  return known ? LastError() : cudaErrorInvalidValue;
}

ReduceParams MakeReduce(const ops::ReducePlan& plan) {
  ReduceParams p;
  p.reducer = plan.reducer;
  p.out_n = plan.out_numel;
  p.reduced_n = plan.out_numel ? plan.in_numel / plan.out_numel : 0;
  // Operand strides of the collapsed runs, then split into kept and reduced.
  long long stride = 1;
  long long strides[kMaxRank];
  for (int d = plan.rank - 1; d >= 0; --d) strides[d] = stride, stride *= plan.dims[d];
  for (int d = 0; d < plan.rank; ++d) {
    if (plan.ostr[d] != 0) {
      p.kept_dims[p.kept_rank] = plan.dims[d], p.kept_strides[p.kept_rank++] = strides[d];
    } else {
      p.reduced_dims[p.reduced_rank] = plan.dims[d];
      p.reduced_strides[p.reduced_rank++] = strides[d];
    }
  }
  if (p.kept_rank == 0) p.kept_dims[0] = 1, p.kept_rank = 1;
  if (p.reduced_rank == 0) p.reduced_dims[0] = 1, p.reduced_rank = 1;
  p.rows = plan.ostr[plan.rank - 1] == 0;
  // Split long reductions so the GPU has enough blocks: rows want about 1024
  // blocks of at least 2048 elements, columns 256 blocks of at least 32.
  if (p.rows && p.out_n < 1024 && p.reduced_n >= 4096)
    p.splits =
        static_cast<int>(std::min<long long>((1024 + p.out_n - 1) / p.out_n, p.reduced_n / 2048));
  if (!p.rows && Blocks(p.out_n) < 256 && p.reduced_n >= 64)
    p.splits = static_cast<int>(std::min<long long>(256 / Blocks(p.out_n), p.reduced_n / 32));
  p.splits = std::max(1, std::min(p.splits, 65535));
  return p;
}

size_t ReduceScratchBytes(const ReduceParams& p, int32_t dtype) {
  if (p.splits == 1) return 0;
  size_t compute_size = 0;
  Dispatch(dtype,
           [&](auto t) { compute_size = sizeof(typename Num<typename decltype(t)::type>::C); });
  return static_cast<size_t>(p.out_n) * p.splits * compute_size;
}

cudaError_t LaunchReduce(const ReduceParams& p, int32_t dtype, const void* in, const void* init,
                         void* out, void* partials, cudaStream_t stream) {
  if (p.out_n == 0) return cudaSuccess;
  const bool known = Dispatch(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    using C = typename Num<T>::C;
    const dim3 grid(p.rows ? RowBlocks(p.out_n) : Blocks(p.out_n), p.splits);
    Launch(&ReduceKernel<T>, grid, kThreads, stream, p, static_cast<const T*>(in),
           static_cast<const T*>(init), static_cast<T*>(out), static_cast<C*>(partials));
    if (p.splits > 1)
      Launch(&FinishReduceKernel<T>, Blocks(p.out_n), kThreads, stream, p,
             static_cast<const T*>(init), static_cast<T*>(out), static_cast<const C*>(partials));
  });
  return known ? LastError() : cudaErrorInvalidValue;
}

ReduceWindowParams MakeReduceWindow(const ops::ReduceWindowPlan& plan) {
  ReduceWindowParams p;
  p.reducer = plan.reducer;
  p.rank = static_cast<int>(plan.in_dims.size());
  p.out_n = plan.out_numel;
  p.window_n = plan.window_numel;
  for (int d = 0; d < p.rank; ++d) {
    p.window[d] = plan.window[d], p.strides[d] = plan.strides[d];
    p.base_dil[d] = plan.base_dil[d], p.win_dil[d] = plan.win_dil[d];
    p.pad_lo[d] = plan.pad_lo[d], p.in_dims[d] = plan.in_dims[d];
    p.in_strides[d] = plan.in_strides[d], p.out_dims[d] = plan.out_dims[d];
  }
  return p;
}

cudaError_t LaunchReduceWindow(const ReduceWindowParams& p, int32_t dtype, const void* in,
                               const void* init, void* out, cudaStream_t stream) {
  if (p.out_n == 0) return cudaSuccess;
  const bool known = Dispatch(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    Launch(&ReduceWindowKernel<T>, Blocks(p.out_n), kThreads, stream, p, static_cast<const T*>(in),
           static_cast<const T*>(init), static_cast<T*>(out));
  });
  return known ? LastError() : cudaErrorInvalidValue;
}

cudaError_t LaunchDot(const DotParams& p, int32_t dtype, const void* lhs, const void* rhs,
                      const void* bias, void* out, cudaStream_t stream) {
  if (p.out_n == 0) return cudaSuccess;
  const bool known = Dispatch(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    if constexpr (!std::is_same_v<T, Bool8>)
      Launch(&DotKernel<T>, Blocks(p.out_n), kThreads, stream, p, static_cast<const T*>(lhs),
             static_cast<const T*>(rhs), static_cast<const T*>(bias), static_cast<T*>(out));
  });
  return known && dtype != BRT_DTYPE_I1 ? LastError() : cudaErrorInvalidValue;
}

// Dispatch over the floating-point dtypes only.
template <typename F>
bool DispatchFloat(int32_t dtype, F&& f) {
  bool is_float = false;
  Dispatch(dtype, [&](auto t) {
    if constexpr (ops::kIsFloat<typename Num<typename decltype(t)::type>::C>) {
      f(t);
      is_float = true;
    }
  });
  return is_float;
}

cudaError_t LaunchSoftmax(const ops::SoftmaxPlan& p, int32_t dtype, const void* in, void* out,
                          cudaStream_t stream) {
  if (p.outer * p.size * p.inner == 0) return cudaSuccess;
  const bool known = DispatchFloat(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    if (p.inner == 1)
      Launch(&SoftmaxRowsKernel<T>, RowBlocks(p.outer), kThreads, stream, p.outer, p.size,
             static_cast<const T*>(in), static_cast<T*>(out));
    else
      Launch(&SoftmaxColumnsKernel<T>, Blocks(p.outer * p.inner), kThreads, stream, p.outer, p.size,
             p.inner, static_cast<const T*>(in), static_cast<T*>(out));
  });
  return known ? LastError() : cudaErrorInvalidValue;
}

cudaError_t LaunchLayerNorm(const ops::LayerNormPlan& p, int32_t dtype, const void* x,
                            const float* scale, const float* shift, void* out,
                            cudaStream_t stream) {
  if (p.rows * p.cols == 0) return cudaSuccess;
  const bool known = DispatchFloat(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    Launch(&LayerNormKernel<T>, RowBlocks(p.rows), kThreads, stream, p.rows, p.cols,
           static_cast<float>(p.epsilon), static_cast<const T*>(x), scale, shift,
           static_cast<T*>(out));
  });
  return known ? LastError() : cudaErrorInvalidValue;
}

}  // namespace brt::cuda
