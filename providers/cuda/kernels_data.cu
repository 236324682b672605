// brt's own CUDA kernels for data movement (strided copies, fill, iota) and
// gather / scatter.
#include "kernel_support.cuh"
#include "ops/rng_bits.h"

namespace brt::cuda {
namespace {

// --- data movement ------------------------------------------------------------------

template <typename T>
__global__ void StridedCopyKernel(CopyParams p, const T* src, T* dst) {
  long long start = 0;
  for (int d = 0; d < p.num_starts; ++d) {
    start += ops::ClampedStart(p.starts[d], p.start_dtypes[d], p.start_max[d]) * p.start_strides[d];
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

// Key k of element i (ops::SortKey), complemented when descending.
__device__ uint64_t SortKeyAt(const SortParams& p, int k, long long i) {
  uint64_t key = 0;
  Dispatch(p.key_dtype[k], [&](auto t) {
    using T = typename decltype(t)::type;
    key = ops::SortKey<typename Num<T>::C>(LoadAt<T>(p.in[p.key[k]], i), p.total_order[k]);
  });
  return p.descending[k] ? ~key : key;
}

__global__ void SortKernel(SortParams p) {
  BRT_GRID_STRIDE(e, p.outer * p.size * p.inner) {
    const long long j = e / p.inner % p.size,
                    first = e / (p.inner * p.size) * p.size * p.inner + e % p.inner;
    long long rank = 0;
    for (long long i = 0; i < p.size; ++i) {
      bool before = i < j;  // where every key ties
      for (int k = 0; k < p.keys; ++k) {
        const uint64_t ki = SortKeyAt(p, k, first + i * p.inner),
                       kj = SortKeyAt(p, k, first + j * p.inner);
        if (ki != kj) {
          before = ki < kj;
          break;
        }
      }
      rank += before;
    }
    for (int k = 0; k < p.operands; ++k) {
      const int bytes = p.element_bytes[k];
      const char* src = static_cast<const char*>(p.in[k]) + (first + j * p.inner) * bytes;
      char* dst = static_cast<char*>(p.out[k]) + (first + rank * p.inner) * bytes;
      for (int b = 0; b < bytes; ++b) dst[b] = src[b];
    }
  }
}

__global__ void RngBitsKernel(ops::RngBitGeneratorPlan p, const uint64_t* state, void* bits) {
  BRT_GRID_STRIDE(i, p.blocks) { ops::StoreRngBits(p, state, i, bits); }
}

__global__ void RngStateKernel(const uint64_t* state, int64_t state_size, long long blocks,
                               uint64_t* next) {
  ops::StoreRngNextState(state, state_size, blocks, next);
}

// A c128 element, moved as a whole.
struct Bytes16 {
  unsigned long long part[2];
};

// Copies of 1, 2, 4, 8 or 16 bytes per element move the same bits for every dtype.
template <typename F>
bool BySize(size_t elem_size, F&& f) {
  switch (elem_size) {
    case 16:
      return f(Tag<Bytes16>{}), true;
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
    long long s = ops::IndexValue(indices, p.index_dtype, ioff + k * p.vector_stride);
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

// The bits of a value of T, and T from its bits.
template <typename B, typename T>
__device__ B BitsOf(T x) {
  static_assert(sizeof(B) == sizeof(T));
  B b;
  memcpy(&b, &x, sizeof(T));
  return b;
}
template <typename T, typename B>
__device__ T FromBits(B b) {
  static_assert(sizeof(B) == sizeof(T));
  T x;
  memcpy(static_cast<void*>(&x), &b, sizeof(T));
  return x;
}

// The bits of reducer R combining the 1-byte values with bits a and b
// (ops::Combine: integers wrap; on i1 add is or, mul and, max or, min and).
template <Reducer R, typename T>
__device__ unsigned char CombineBytes(unsigned char a, unsigned char b) {
  using C = typename Num<T>::C;
  const C r = ops::Combine<R, C>(Num<T>::Load(FromBits<T>(a)), Num<T>::Load(FromBits<T>(b)));
  return BitsOf<unsigned char>(Num<T>::Store(r));
}

// 1-byte atomics (add, mul, max, min; i8, u8 and i1). CUDA has no 8-bit
// atomics: a byte is combined by a compare-and-swap on the aligned 32-bit word
// holding it, which writes its three neighbours back unchanged (atomically,
// so a concurrent store to them is not lost). But the word may reach past the
// tensor: a byte in a partial word at either end of [begin, begin + bytes)
// (at most 3 at each end; the end only, for the 64-byte aligned tensors the
// runtime makes) would be read and swapped outside the buffer the kernel was
// given, which compute-sanitizer reports and which may be another
// allocation. Those bytes' updates are combined into 32-bit counters instead
// (`edges`, per-context scratch: bit 8 says the low byte holds the combination
// of the updates so far), zeroed before and combined into their bytes after
// by one thread (FinishEdges), so no access leaves the tensor. Every reducer
// here is associative and commutative on the bytes (sums and products
// modulo 256, max, min, or, and), so the split changes nothing. A 16-bit CAS
// would not do: the last byte at an even offset has no aligned 2- or 4-byte
// window inside the tensor. 2-byte types take a 16-bit CAS or, for floats,
// the native atomicAdd (__half on sm_70+, __nv_bfloat16 on sm_80+; this
// provider builds for sm_80 and up; CUDA has no 16-bit integer atomicAdd).
constexpr int kEdgeSlots = 6;  // 3 bytes at each end of a tensor
constexpr unsigned int kEdgeHeld = 0x100;

struct ByteSpan {
  unsigned char* begin = nullptr;
  long long bytes = 0;
  unsigned int* edges = nullptr;  // kEdgeSlots counters
  unsigned int* locks = nullptr;  // kWideLocks spin locks, for 16-byte types (below)
};

// The counter of a byte whose aligned word leaves the span; -1 for a byte
// whose word lies inside it.
__device__ int EdgeSlot(const ByteSpan& s, uintptr_t a) {
  const uintptr_t b = reinterpret_cast<uintptr_t>(s.begin), e = b + s.bytes;
  const uintptr_t word = a & ~uintptr_t{3};
  if (word >= b && word + 4 <= e) return -1;
  const uintptr_t head_end = (b + 3) & ~uintptr_t{3};
  return a < head_end ? static_cast<int>(a - b) : 3 + static_cast<int>(a - (e & ~uintptr_t{3}));
}

template <Reducer R, typename T>
__device__ void AtomicCombineByte(T* address, T value, const ByteSpan& s) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(address);
  const unsigned char v = BitsOf<unsigned char>(value);
  if (const int slot = EdgeSlot(s, a); slot >= 0) {
    unsigned int* counter = s.edges + slot;
    unsigned int old = *counter, assumed;
    do {
      assumed = old;
      const unsigned char held = static_cast<unsigned char>(assumed & 0xFFu);
      const unsigned int next = kEdgeHeld | (assumed & kEdgeHeld ? CombineBytes<R, T>(held, v) : v);
      old = atomicCAS(counter, assumed, next);
    } while (assumed != old);
    return;
  }
  auto* word = reinterpret_cast<unsigned int*>(a & ~uintptr_t{3});
  const unsigned shift = (a & 3) * 8;
  unsigned int old = *word, assumed;
  do {
    assumed = old;
    const unsigned char now = static_cast<unsigned char>((assumed >> shift) & 0xFFu);
    const unsigned char next_byte = CombineBytes<R, T>(now, v);
    if (next_byte == now) return;  // a max or min that changes nothing
    const unsigned int next =
        (assumed & ~(0xFFu << shift)) | (static_cast<unsigned int>(next_byte) << shift);
    old = atomicCAS(word, assumed, next);
  } while (assumed != old);
}

__global__ void ZeroEdgesKernel(ByteSpan s) {
  if (blockIdx.x == 0 && threadIdx.x == 0)
    for (int k = 0; k < kEdgeSlots; ++k) s.edges[k] = 0;
}

// After the updates, in stream order: each edge byte combined with its
// counter's updates, if it had any.
template <Reducer R, typename T>
__global__ void FinishEdges(ByteSpan s) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  const uintptr_t b = reinterpret_cast<uintptr_t>(s.begin), e = b + s.bytes;
  for (int k = 0; k < kEdgeSlots; ++k) {
    const uintptr_t a = k < 3 ? b + k : (e & ~uintptr_t{3}) + (k - 3);
    if (a < b || a >= e || EdgeSlot(s, a) != k || !(s.edges[k] & kEdgeHeld)) continue;
    unsigned char* byte = reinterpret_cast<unsigned char*>(a);
    *byte = CombineBytes<R, T>(*byte, static_cast<unsigned char>(s.edges[k] & 0xFFu));
  }
}

// The unsigned type of a 2-, 4- or 8-byte T's bits, as atomicCAS takes them.
template <typename T>
using CasBits =
    std::conditional_t<sizeof(T) == 2, unsigned short,
                       std::conditional_t<sizeof(T) == 4, unsigned int, unsigned long long>>;

// 16-byte elements (c128): a product, max or min of one, or a store where
// duplicate indices may race (two 8-byte halves from different updates
// must never mix), is made by a 128-bit compare-and-swap on sm_90 and later
// where the element is 16-byte aligned (a c128 needs only 8), the loop
// started from a value the compare-and-swap itself read (a plain 16-byte
// load may tear, and the loop leaves early when the update changes
// nothing). Elsewhere, without one (sm_80, which this provider also builds
// for, or an element 8 bytes off), under a spin lock, one of kWideLocks words
// in per-context scratch (`locks`, zeroed before the kernel) picked by the
// element's address, so elements sharing a word only wait for each other:
// the fences order the element's accesses after the lock's acquisition and
// before its release, and the accesses are volatile, so no stale cached copy
// is read. Spinning threads of one warp leave the holder room to finish:
// Volta and later schedule a warp's threads independently. An element
// always takes the same path (its address decides), so the two never race.
// On an H100, 1M c128 max updates into 1024 elements take 0.08 ms by
// compare-and-swap, 27 ms under the locks.
constexpr int kWideLocks = 4096;

// *address = update(*address), atomically, for a 16-byte complex Z.
template <typename Z, typename F>
__device__ void WideUpdate(Z* address, F update, unsigned int* locks) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  if (reinterpret_cast<uintptr_t>(address) % 16 == 0) {
    struct alignas(16) Word {
      unsigned long long lo, hi;
    };
    Word* word = reinterpret_cast<Word*>(address);
    Word old = atomicCAS(word, Word{0, 0}, Word{0, 0}), assumed;
    do {
      assumed = old;
      const Word next = BitsOf<Word>(update(FromBits<Z>(assumed)));
      if (next.lo == assumed.lo && next.hi == assumed.hi) return;
      old = atomicCAS(word, assumed, next);
    } while (old.lo != assumed.lo || old.hi != assumed.hi);
    return;
  }
#endif
  using P = typename Z::value_type;
  unsigned int* lock = locks + reinterpret_cast<uintptr_t>(address) / sizeof(Z) % kWideLocks;
  while (atomicCAS(lock, 0u, 1u) != 0u) {
  }
  __threadfence();
  volatile P* parts = reinterpret_cast<volatile P*>(address);
  const P re = parts[0], im = parts[1];
  const Z next = update(Z(re, im));
  parts[0] = next.real();
  parts[1] = next.imag();
  __threadfence();
  atomicExch(lock, 0u);
}

// A scatter's store of `value` where duplicates may race: complex numbers
// whole (c64 by one 8-byte exchange, c128 by WideUpdate), the rest by one
// store of their width.
template <typename T>
__device__ void AtomicStore(T* address, T value, const ByteSpan& bytes) {
  if constexpr (ops::kIsComplex<T> && sizeof(T) == 16)
    WideUpdate(
        address, [&](T) { return value; }, bytes.locks);
  else if constexpr (ops::kIsComplex<T>)
    atomicExch(reinterpret_cast<unsigned long long*>(address), BitsOf<unsigned long long>(value));
  else
    *address = value;
}

__global__ void ZeroLocksKernel(unsigned int* locks) {
  BRT_GRID_STRIDE(i, kWideLocks) { locks[i] = 0; }
}

// *address = Combine<R>(*address, value), atomically. 1-byte types: above;
// complex sums: a native atomicAdd per part (the parts add independently);
// other c128 combinations: WideUpdate;
// add of floats and of 4- and 8-byte integers: the native atomicAdd (64-bit
// integers as unsigned, so sums wrap as the CPU's do); max and min of 4- and
// 8-byte integers: the native atomicMax and atomicMin; the rest (float max
// and min, which must propagate NaN and order -0 below +0, every product,
// every 2-byte integer reducer): a compare-and-swap loop on the element's
// bits, left early when the combination changes nothing.
template <Reducer R, typename T>
__device__ void AtomicCombine(T* address, T value, const ByteSpan& bytes) {
  constexpr bool kWideInteger = std::is_integral_v<T> && sizeof(T) >= 4;
  if constexpr (sizeof(T) == 1) {
    AtomicCombineByte<R>(address, value, bytes);
  } else if constexpr (ops::kIsComplex<T> && R == Reducer::kAdd) {
    auto* parts = reinterpret_cast<typename T::value_type*>(address);
    atomicAdd(parts, value.real());
    atomicAdd(parts + 1, value.imag());
  } else if constexpr (ops::kIsComplex<T> && sizeof(T) == 16) {
    WideUpdate(
        address, [&](T old) { return ops::Combine<R, T>(old, value); }, bytes.locks);
  } else if constexpr (R == Reducer::kAdd && std::is_integral_v<T> && sizeof(T) == 8) {
    atomicAdd(reinterpret_cast<unsigned long long*>(address),
              static_cast<unsigned long long>(value));  // wraps, as the CPU's sums do
  } else if constexpr (R == Reducer::kAdd && (kWideInteger || !std::is_integral_v<T>)) {
    atomicAdd(address, value);
  } else if constexpr ((R == Reducer::kMax || R == Reducer::kMin) && kWideInteger) {
    using A =
        std::conditional_t<sizeof(T) == 4,
                           std::conditional_t<std::is_signed_v<T>, int, unsigned int>,
                           std::conditional_t<std::is_signed_v<T>, long long, unsigned long long>>;
    if constexpr (R == Reducer::kMax)
      atomicMax(reinterpret_cast<A*>(address), static_cast<A>(value));
    else
      atomicMin(reinterpret_cast<A*>(address), static_cast<A>(value));
  } else {
    using B = CasBits<T>;
    using C = typename Num<T>::C;
    B* word = reinterpret_cast<B*>(address);
    const C u = Num<T>::Load(value);
    B old = *word, assumed;
    do {
      assumed = old;
      const B next =
          BitsOf<B>(Num<T>::Store(ops::Combine<R, C>(Num<T>::Load(FromBits<T>(assumed)), u)));
      if (next == assumed) return;
      old = atomicCAS(word, assumed, next);
    } while (assumed != old);
  }
}

template <typename T>
__global__ void ScatterReplaceKernel(IndexingParams p, const void* indices, const T* updates,
                                     T* out, ByteSpan bytes) {
  BRT_GRID_STRIDE(e, p.n) {
    long long at = 0;
    if (IndexedOffset(p, indices, e, false, &at)) AtomicStore(out + at, updates[e], bytes);
  }
}

template <Reducer R, typename T>
__global__ void ScatterCombineKernel(IndexingParams p, const void* indices, const T* updates,
                                     T* out, ByteSpan bytes) {
  BRT_GRID_STRIDE(e, p.n) {
    long long at = 0;
    if (IndexedOffset(p, indices, e, false, &at)) AtomicCombine<R>(out + at, updates[e], bytes);
  }
}

// Runs `updates` (the kernel combining into `out` with reducer R),
// bracketed for 1-byte types by the edge counters' zeroing and finish, and
// for 16-byte ones preceded by the locks' zeroing; they need `scratch`
// (AtomicScratchBytes).
template <Reducer R, typename T, typename F>
cudaError_t WithByteSpan(void* out, long long bytes, void* scratch, cudaStream_t stream,
                         F&& updates) {
  ByteSpan s{static_cast<unsigned char*>(out), bytes};
  if constexpr (sizeof(T) == 1 || sizeof(T) == 16) {
    if (!scratch) return cudaErrorInvalidValue;
  }
  if constexpr (sizeof(T) == 1) {
    s.edges = static_cast<unsigned int*>(scratch);
    Launch(&ZeroEdgesKernel, 1, 1, stream, s);
  }
  if constexpr (sizeof(T) == 16) {
    s.locks = static_cast<unsigned int*>(scratch);
    Launch(&ZeroLocksKernel, Blocks(kWideLocks), kThreads, stream, s.locks);
  }
  updates(s);
  if constexpr (sizeof(T) == 1) Launch(&FinishEdges<R, T>, 1, 1, stream, s);
  return cudaSuccess;
}

template <typename T>
__global__ void SelectAndScatterKernel(SelectAndScatterParams p, const T* operand, const T* source,
                                       T* out, ByteSpan bytes) {
  using C = typename Num<T>::C;
  const ReduceWindowParams& w = p.windows;
  BRT_GRID_STRIDE(o, w.out_n) {
    long long o_idx[kMaxRank];
    for (long long d = w.rank - 1, r = o; d >= 0; --d)
      o_idx[d] = r % w.out_dims[d], r /= w.out_dims[d];
    long long picked = -1;
    C best{};
    for (long long k = 0; k < w.window_n; ++k) {
      long long off;
      if (!WindowElement(w, o_idx, k, &off)) continue;
      const C v = Num<T>::Load(operand[off]);
      if (picked < 0 || !ops::ApplyCmp<C>(p.select, best, v)) picked = off, best = v;
    }
    if (picked >= 0) AtomicCombine<Reducer::kAdd>(out + picked, source[o], bytes);
  }
}

}  // namespace

SelectAndScatterParams MakeSelectAndScatter(const ops::SelectAndScatterPlan& plan) {
  SelectAndScatterParams p;
  p.windows = MakeReduceWindow(plan.windows);
  p.select = plan.select;
  p.operand_n = 1;
  for (int64_t d : plan.windows.in_dims) p.operand_n *= d;
  return p;
}

cudaError_t LaunchSelectAndScatter(const SelectAndScatterParams& p, int32_t dtype,
                                   const void* operand, const void* source, const void* init,
                                   void* out, void* scratch, cudaStream_t stream) {
  const size_t es = brt_dtype_size(dtype);
  if (const cudaError_t e = LaunchFill(p.operand_n, es, init, out, stream); e != cudaSuccess)
    return e;
  if (p.windows.out_n == 0) return cudaSuccess;
  cudaError_t status = cudaSuccess;
  const bool known = Dispatch(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    if constexpr (!std::is_same_v<T, Bool8>)
      status = WithByteSpan<Reducer::kAdd, T>(
          out, p.operand_n * static_cast<long long>(es), scratch, stream, [&](const ByteSpan& s) {
            Launch(&SelectAndScatterKernel<T>, Blocks(p.windows.out_n), kThreads, stream, p,
                   static_cast<const T*>(operand), static_cast<const T*>(source),
                   static_cast<T*>(out), s);
          });
  });
  if (!known) return cudaErrorInvalidValue;
  return status != cudaSuccess ? status : LastError();
}

size_t AtomicScratchBytes(int32_t dtype) {
  const size_t size = brt_dtype_size(dtype);
  if (size == 1) return kEdgeSlots * sizeof(unsigned int);
  return size == 16 ? kWideLocks * sizeof(unsigned int) : 0;
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

cudaError_t LaunchSort(const SortParams& p, cudaStream_t stream) {
  const long long n = p.outer * p.size * p.inner;
  if (n == 0) return cudaSuccess;
  for (int k = 0; k < p.keys; ++k)
    if (!Dispatch(p.key_dtype[k], [](auto) {})) return cudaErrorInvalidValue;
  Launch(&SortKernel, Blocks(n), kThreads, stream, p);
  return LastError();
}

cudaError_t LaunchRngBitGenerator(const ops::RngBitGeneratorPlan& p, const uint64_t* state,
                                  void* bits, uint64_t* next, cudaStream_t stream) {
  if (p.blocks > 0) Launch(&RngBitsKernel, Blocks(p.blocks), kThreads, stream, p, state, bits);
  Launch(&RngStateKernel, 1, 1, stream, state, p.state_size, static_cast<long long>(p.blocks),
         next);
  return LastError();
}

IndexingParams MakeIndexing(const ops::IndexPlan& plan) {
  IndexingParams p;
  p.rank = plan.rank();
  p.n = plan.numel;
  p.vector_stride = plan.vector_stride;
  p.index_dtype = plan.index_dtype;
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

cudaError_t LaunchScatter(const IndexingParams& p, int32_t dtype, bool replace, Reducer reducer,
                          const void* indices, const void* updates, void* out, size_t out_bytes,
                          void* scratch, cudaStream_t stream) {
  if (p.n == 0) return cudaSuccess;
  cudaError_t status = cudaSuccess;
  const bool known = DispatchOrComplex(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    if (replace) {
      auto store = [&](const ByteSpan& s) {
        Launch(&ScatterReplaceKernel<T>, Blocks(p.n), kThreads, stream, p, indices,
               static_cast<const T*>(updates), static_cast<T*>(out), s);
      };
      if constexpr (ops::kIsComplex<T>)  // c128's locks
        status = WithByteSpan<Reducer::kAdd, T>(out, static_cast<long long>(out_bytes), scratch,
                                                stream, store);
      else
        store(ByteSpan{});
      return;
    }
    ops::WithReducer(reducer, [&](auto r) {
      constexpr Reducer R = decltype(r)::value;
      if constexpr (!ops::IsScatterReducer(R)) {
        status = cudaErrorInvalidValue;  // refused by PlanScatter
      } else {
        status = WithByteSpan<R, T>(
            out, static_cast<long long>(out_bytes), scratch, stream, [&](const ByteSpan& s) {
              Launch(&ScatterCombineKernel<R, T>, Blocks(p.n), kThreads, stream, p, indices,
                     static_cast<const T*>(updates), static_cast<T*>(out), s);
            });
      }
    });
  });
  if (!known) return cudaErrorInvalidValue;
  return status != cudaSuccess ? status : LastError();
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
  DispatchOrComplex(
      dtype, [&](auto t) { compute_size = sizeof(typename Num<typename decltype(t)::type>::C); });
  return static_cast<size_t>(p.out_n) * p.splits * compute_size;
}

}  // namespace brt::cuda
