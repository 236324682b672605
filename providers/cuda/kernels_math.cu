// brt's own CUDA kernels for reductions, reduce_window, dot, softmax and
// layer norm.
#include "kernel_support.cuh"

namespace brt::cuda {
namespace {

// --- reductions -----------------------------------------------------------------------

#ifndef BRT_CUDA_EMULATION
// Shuffles move 32-bit or wider values; narrower ones travel as int,
// complex numbers as their two parts.
template <typename C>
__device__ C ShuffleDown(C v, int offset) {
  if constexpr (ops::kIsComplex<C>)
    return C(ShuffleDown(v.real(), offset), ShuffleDown(v.imag(), offset));
  else if constexpr (sizeof(C) < 4)
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
  // Raw bytes: a __shared__ array may not have a constructor (complex numbers do).
  alignas(C) __shared__ unsigned char partial_bytes[32 * sizeof(C)];
  C* partial = reinterpret_cast<C*>(partial_bytes);
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
  } else if constexpr (ops::kIsComplex<C>) {
    // max and min order lexicographically: both parts at the far end.
    using P = typename C::value_type;
    if (r == Reducer::kMul) return C(1);
    if (r == Reducer::kMax) return C(-P(INFINITY), -P(INFINITY));
    if (r == Reducer::kMin) return C(P(INFINITY), P(INFINITY));
    if (r == Reducer::kLogAddExp) return C(-P(INFINITY));
    return C(0);
  } else {
    switch (r) {
      case Reducer::kAdd:
      case Reducer::kOr:
      case Reducer::kXor:
        return C(0);
      case Reducer::kMul:
        return C(1);
      case Reducer::kAnd:
        return C(~0ll);
      case Reducer::kMax:
        return ops::kIsFloat<C> ? C(-INFINITY) : std::numeric_limits<C>::lowest();
      case Reducer::kLogAddExp:  // floats only (ReducerDefinedFor)
        return C(-INFINITY);
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
      long long off;
      if (WindowElement(p, o_idx, w, &off))
        acc = ops::CombineAt<C>(p.reducer, acc, Num<T>::Load(in[off]));
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

// --- fft's steps around cuFFT -----------------------------------------------------------

template <typename P>
__global__ void HermitianPlanesKernel(HermitianPlanesParams p, const ::cuda::std::complex<P>* in,
                                      ::cuda::std::complex<P>* out) {
  const int planes = p.n % 2 == 0 ? 2 : 1;
  const long long outer_n = p.outer[0] * p.outer[1];
  BRT_GRID_STRIDE(e, p.batches * outer_n * planes) {
    const long long column = e % planes == 0 ? 0 : p.n / 2;
    const long long o = e / planes % outer_n, batch = e / planes / outer_n;
    // The outer index negated modulo each outer dim.
    const long long i0 = o / p.outer[1], i1 = o % p.outer[1];
    const long long negated =
        (p.outer[0] - i0) % p.outer[0] * p.outer[1] + (p.outer[1] - i1) % p.outer[1];
    const long long at = (batch * outer_n + o) * p.half + column;
    const ::cuda::std::complex<P> z = in[at], w = in[(batch * outer_n + negated) * p.half + column];
    out[at] = (z + ::cuda::std::conj(w)) * P(0.5);
  }
}

template <typename P>
__global__ void ScaleKernel(long long n, double scale, P* data) {
  BRT_GRID_STRIDE(i, n) { data[i] = static_cast<P>(data[i] * scale); }
}

// --- softmax and layer norm ----------------------------------------------------------------

// Contiguous rows (inner == 1): a block per row, three passes (max, sum, write).
// zero_masked: a row whose inputs are all -inf (its max) gives zeros.
template <typename T>
__global__ void SoftmaxRowsKernel(long long rows, long long size, bool zero_masked, const T* in,
                                  T* out) {
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
    if (zero_masked && m == A(-INFINITY)) {
      for (long long k = threadIdx.x; k < size; k += blockDim.x) y[k] = Num<T>::Store(C(0));
      __syncthreads();
      continue;
    }
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
__global__ void SoftmaxColumnsKernel(long long outer, long long size, long long inner,
                                     bool zero_masked, const T* in, T* out) {
  using C = typename Num<T>::C;
  using A = std::conditional_t<std::is_same_v<C, double>, double, float>;
  BRT_GRID_STRIDE(c, outer * inner) {
    const long long base = (c / inner) * size * inner + c % inner;
    A m = -INFINITY, s = 0;
    for (long long k = 0; k < size; ++k) m = fmax(m, A(Num<T>::Load(in[base + k * inner])));
    if (zero_masked && m == A(-INFINITY)) {
      for (long long k = 0; k < size; ++k) out[base + k * inner] = Num<T>::Store(C(0));
      continue;
    }
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

cudaError_t LaunchReduce(const ReduceParams& p, int32_t dtype, const void* in, const void* init,
                         void* out, void* partials, cudaStream_t stream) {
  if (p.out_n == 0) return cudaSuccess;
  const bool known = DispatchOrComplex(dtype, [&](auto t) {
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
  const bool known = DispatchOrComplex(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    Launch(&ReduceWindowKernel<T>, Blocks(p.out_n), kThreads, stream, p, static_cast<const T*>(in),
           static_cast<const T*>(init), static_cast<T*>(out));
  });
  return known ? LastError() : cudaErrorInvalidValue;
}

cudaError_t LaunchDot(const DotParams& p, int32_t dtype, const void* lhs, const void* rhs,
                      const void* bias, void* out, cudaStream_t stream) {
  if (p.out_n == 0) return cudaSuccess;
  const bool known = DispatchOrComplex(dtype, [&](auto t) {
    using T = typename decltype(t)::type;
    if constexpr (!std::is_same_v<T, Bool8>)
      Launch(&DotKernel<T>, Blocks(p.out_n), kThreads, stream, p, static_cast<const T*>(lhs),
             static_cast<const T*>(rhs), static_cast<const T*>(bias), static_cast<T*>(out));
  });
  return known && dtype != BRT_DTYPE_I1 ? LastError() : cudaErrorInvalidValue;
}

cudaError_t LaunchHermitianPlanes(const HermitianPlanesParams& p, int32_t complex_dtype,
                                  const void* in, void* out, cudaStream_t stream) {
  const long long n = p.batches * p.outer[0] * p.outer[1] * 2;
  if (n == 0) return cudaSuccess;
  if (complex_dtype == BRT_DTYPE_C64)
    Launch(&HermitianPlanesKernel<float>, Blocks(n), kThreads, stream, p,
           static_cast<const ::cuda::std::complex<float>*>(in),
           static_cast<::cuda::std::complex<float>*>(out));
  else if (complex_dtype == BRT_DTYPE_C128)
    Launch(&HermitianPlanesKernel<double>, Blocks(n), kThreads, stream, p,
           static_cast<const ::cuda::std::complex<double>*>(in),
           static_cast<::cuda::std::complex<double>*>(out));
  else
    return cudaErrorInvalidValue;
  return LastError();
}

cudaError_t LaunchScale(long long n, int32_t dtype, double scale, void* data, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (dtype == BRT_DTYPE_F32)
    Launch(&ScaleKernel<float>, Blocks(n), kThreads, stream, n, scale, static_cast<float*>(data));
  else if (dtype == BRT_DTYPE_F64)
    Launch(&ScaleKernel<double>, Blocks(n), kThreads, stream, n, scale, static_cast<double*>(data));
  else
    return cudaErrorInvalidValue;
  return LastError();
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
             p.zero_masked_rows, static_cast<const T*>(in), static_cast<T*>(out));
    else
      Launch(&SoftmaxColumnsKernel<T>, Blocks(p.outer * p.inner), kThreads, stream, p.outer, p.size,
             p.inner, p.zero_masked_rows, static_cast<const T*>(in), static_cast<T*>(out));
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
